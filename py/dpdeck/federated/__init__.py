"""Aprendizaje federado: FedAvg, fugas por gradientes, agregación segura y DP sobre el agregado.

Capítulo 6 de la clase. El censo se reparte entre K clientes (hospitales,
teléfonos) que entrenan la regresión logística del capítulo 5 sin que sus
datos salgan de casa; el servidor solo recibe actualizaciones del modelo. Cuatro
piezas, cada una con su referencia:

1. **FedAvg** (McMahan, Moore, Ramage, Hampson y Agüera y Arcas 2017,
   "Communication-Efficient Learning of Deep Networks from Decentralized
   Data", AISTATS, Algoritmo 1): en cada ronda una fracción C de los clientes
   entrena E épocas locales y el servidor promedia los modelos con pesos
   n_k/n. Aquí cada época local es un paso de descenso de gradiente de lote
   completo (B = ∞ en la notación del artículo).
2. **Fugas por gradientes** (Zhu, Liu y Han 2019, "Deep Leakage from
   Gradients", NeurIPS): en la regresión logística el gradiente de una sola
   persona es (σ(x·θ) − y)·x, un múltiplo de sus datos; dividirlo por su
   componente del intercepto devuelve x exacto (Phong et al. 2018 lo
   observaron para este modelo).
3. **Agregación segura** (Bonawitz et al. 2017, "Practical Secure Aggregation
   for Privacy-Preserving Machine Learning", CCS): máscaras por pares que se
   cancelan en la suma, y semillas repartidas con el esquema de Shamir (1979)
   para recuperar la suma cuando un cliente se cae a mitad de ronda. Es un
   MODELO DE ENSEÑANZA: sin criptografía (la "PRG" es numpy, no un cifrador),
   sin acuerdo de claves (las semillas se sortean como si los pares las
   hubieran acordado), sin doble máscara, y con un servidor honesto pero
   curioso.
4. **DP sobre el agregado** (McMahan, Ramage, Talwar y Zhang 2018, "Learning
   Differentially Private Recurrent Language Models", ICLR): con la misma
   historia que el capítulo 5. Bases vecinas agregan o quitan un cliente, así
   que el número de clientes K también es un dato y se estima en privado con
   el 5 % de ε; cada actualización se recorta a norma L2 ≤ S, el servidor
   suma ruido N(0, (zS)² I) a la suma y divide por un denominador fijo, los
   clientes esperados por ronda C·K̂; el libro de cuentas
   (``accounting.PrivacyLedger``) anota el conteo y las T sumas.

Capas: este módulo solo llama a ``learning`` (modelo, gradientes y la
calibración del descenso privado) y ``mechanisms`` (todo el ruido de
privacidad). Las máscaras, los coeficientes de Shamir, la elección de
clientes y los repartos usan ``rng`` directamente: son el azar del protocolo,
no ruido de privacidad. El laboratorio del capítulo está en
``dpdeck.lab.federated``.

Código de enseñanza: censo sintético (no datos de hospitales), privacidad por
cliente (una persona si cada cliente tiene una fila), y la contabilidad no
aprovecha la amplificación por submuestreo de clientes (cuenta cada ronda
como si participaran todos: una cota válida, más pesimista).
"""

from __future__ import annotations

import numpy as np

from .. import learning, mechanisms
from .._checks import (
    check_dataset,
    check_epsilon,
    check_finite,
    check_fraction,
    check_nonempty,
    check_positive,
    check_positive_int,
    check_rng,
    describe,
)

__all__ = [
    "AGE_COLUMN",
    "EDUCATION_COLUMN",
    "DEFAULT_UPDATE_CLIP",
    "MASK_MODULUS",
    "FIXED_POINT_SCALE",
    "SHARE_PRIME",
    # reparto de los datos
    "split_iid",
    "split_by_group",
    "count_examples",
    # FedAvg
    "select_clients",
    "train_clients",
    "average_updates",
    "train_federated",
    "rounds_to_reach",
    "split_census_task",
    "compare_splits",
    "compare_local_epochs",
    # fugas por gradientes
    "compute_device_update",
    "reconstruct_features",
    "decode_features",
    "infer_high_income",
    "privatize_update",
    "measure_leakage",
    # agregación segura
    "encode_fixed_point",
    "decode_fixed_point",
    "share_secret",
    "reconstruct_secret",
    "setup_secure_aggregation",
    "expand_mask",
    "mask_update",
    "sum_masked",
    "unmask_sum",
    "run_secure_aggregation",
    # DP sobre el agregado
    "calibrate_rounds",
    "train_federated_privately",
    "compare_privacy_units",
    "EDUCATION_BANDS",
    "measure_subgroup_accuracy",
]

# Columnas de ``learning.make_features``: (1, (edad − 40)/15, (educación − 10)/3).
AGE_COLUMN = 1
EDUCATION_COLUMN = 2

DEFAULT_UPDATE_CLIP = learning.DEFAULT_LEARNING_RATE * learning.DEFAULT_CLIP_NORM
"""Cota S de la norma de una actualización: η · C = 4.

Con ella, un paso local sobre una sola persona recorta exactamente como el
descenso privado del capítulo 5 (gradiente recortado a C = 1, paso η = 4).
"""

MASK_MODULUS = 2**32
"""Las máscaras y las actualizaciones codificadas viven en los enteros módulo 2³²."""

FIXED_POINT_SCALE = 2**16
"""Un real x se codifica como round(x · 2¹⁶) mod 2³²: resolución 2⁻¹⁶ ≈ 1,5·10⁻⁵, |suma| < 2¹⁵."""

SHARE_PRIME = 2**61 - 1
"""Primo de Mersenne del esquema de Shamir: las semillas y sus partes son enteros módulo p."""

# ----------------------------------------------------------- validadores --
# Los índices (cliente de cada fila, tamaños, posiciones) son np.intp: en Pyodide
# (wasm32) intp tiene 32 bits, y np.bincount, np.repeat y np.add.reduceat se niegan a
# convertir índices int64. Las máscaras y lo codificado sí son int64: llegan a 2³².


def _check_owner(owner) -> np.ndarray:
    """Exige un arreglo de enteros ≥ 0 (el cliente de cada fila) sin clientes vacíos."""
    array = np.asarray(owner)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu":
        raise ValueError(
            f"owner debe ser un arreglo unidimensional no vacío de enteros (el cliente de cada "
            f"fila); se recibió {describe(owner)}"
        )
    if array.min() < 0:
        raise ValueError(f"owner no puede tener clientes negativos; se recibió {describe(int(array.min()))}")
    array = array.astype(np.intp)
    sizes = np.bincount(array)
    if (sizes == 0).any():
        empty = int(np.argmax(sizes == 0))
        raise ValueError(f"cada cliente debe tener al menos una fila; el cliente {empty} no tiene ninguna")
    return array


def _check_task(X, y, owner) -> tuple:
    X, y = check_dataset(X, y)
    owner = _check_owner(owner)
    if owner.shape[0] != X.shape[0]:
        raise ValueError(
            f"owner debe tener un cliente por fila de X ({X.shape[0]}); tiene {owner.shape[0]}"
        )
    return X, y, owner


def _check_theta(theta, dimension: int) -> np.ndarray:
    theta = check_finite(theta, name="theta")
    if np.ndim(theta) != 1 or np.shape(theta)[0] != dimension:
        raise ValueError(f"theta debe tener {dimension} coeficientes; tiene forma {np.shape(theta)}")
    return np.asarray(theta, dtype=float)


def _check_noise_multiplier(noise_multiplier) -> float:
    return check_positive(noise_multiplier, name="noise_multiplier")


# ---------------------------------------------------- reparto de los datos --


def split_iid(size, *, clients, rng) -> np.ndarray:
    """Reparto IID: una permutación al azar cortada en K partes casi iguales.

    Devuelve ``owner``, el cliente (0 … K − 1) de cada fila. Cada cliente
    recibe ⌊n/K⌋ o ⌈n/K⌉ filas, una muestra al azar de toda la base: su
    distribución es la de la población (McMahan et al. 2017, sección 3).
    """
    size = check_positive_int(size, name="size")
    clients = check_positive_int(clients, name="clients")
    if clients > size:
        raise ValueError(f"clients ({clients}) no puede superar el número de filas ({size})")
    rng = check_rng(rng)
    owner = np.empty(size, dtype=np.intp)
    owner[rng.permutation(size)] = np.arange(size) % clients
    return owner


def split_by_group(groups) -> np.ndarray:
    """Reparto no IID: un cliente por cada valor distinto de ``groups``.

    Con ``groups`` = nivel educativo, cada hospital atiende a un solo nivel: los
    clientes tienen tamaños muy distintos y distribuciones que no se parecen a
    la de la población (el caso "no IID" de McMahan et al. 2017). Los clientes
    se numeran en el orden de los valores.
    """
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.size == 0:
        raise ValueError(f"groups debe ser un arreglo unidimensional no vacío; se recibió {describe(groups)}")
    _, owner = np.unique(groups, return_inverse=True)
    return owner.reshape(-1).astype(np.intp)


def count_examples(owner) -> np.ndarray:
    """Tamaño n_k de cada cliente (filas por cliente)."""
    return np.bincount(_check_owner(owner)).astype(float)


# ------------------------------------------------------------------ FedAvg --


def _count_participants(clients, fraction) -> int:
    """m = max(1, ⌊C·K + ½⌋): C·K redondeado (0,1·30 no se vuelve 4 por el punto flotante)."""
    clients = check_positive_int(clients, name="clients")
    fraction = check_fraction(fraction, name="client_fraction")
    return max(1, int(fraction * clients + 0.5))


def select_clients(clients, *, fraction, rng) -> np.ndarray:
    """Los m = max(1, ⌊C·K + ½⌋) clientes de una ronda, al azar y sin repetir, en orden.

    McMahan et al. (2017), Algoritmo 1: "m ← max(C·K, 1); S_t ← conjunto
    aleatorio de m clientes".
    """
    rng = check_rng(rng)
    chosen = _count_participants(clients, fraction)
    if chosen == clients:
        return np.arange(clients)
    return np.sort(rng.choice(clients, size=chosen, replace=False))


def _block_starts(sizes) -> np.ndarray:
    """Primera fila de cada cliente cuando las filas vienen agrupadas por cliente."""
    counts = np.asarray(sizes).astype(np.intp)
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.intp)


def _sum_by_client(rows, sizes, starts):
    """Σ por bloques de filas consecutivas (un bloque por cliente) en la penúltima dimensión."""
    if starts.size == rows.shape[-2]:  # un dato por cliente: no hay nada que sumar
        return rows
    return np.add.reduceat(rows, starts, axis=-2)


def _local_descent(thetas, X, y, sizes, *, local_epochs, learning_rate):
    """E pasos de descenso de gradiente de lote completo en todos los clientes a la vez.

    Las filas de ``X`` e ``y`` vienen ordenadas por cliente (``sizes[k]`` filas
    del cliente k) y ``thetas`` tiene una fila por cliente en su penúltima
    dimensión (antes puede haber una de corridas independientes). El
    gradiente del cliente k es (1/n_k) Σ_{i ∈ k} (σ(xᵢ·θ_k) − yᵢ) xᵢ, el
    promedio de las filas de ``learning.compute_gradients`` sobre sus datos;
    ``np.add.reduceat`` suma cada bloque sin recorrer los clientes uno por uno
    (igual cuesta un cliente de 4000 filas que 4000 clientes de una fila).
    """
    counts = sizes.astype(np.intp)
    starts = _block_starts(sizes)
    for _ in range(local_epochs):
        margins = np.einsum("...ij,ij->...i", np.repeat(thetas, counts, axis=-2), X)
        residual = learning.sigmoid(margins) - y
        gradient = _sum_by_client(residual[..., None] * X, sizes, starts)
        thetas = thetas - learning_rate * gradient / sizes[:, None]
    return thetas


def _client_updates(theta, X, y, sizes, *, local_epochs, learning_rate):
    """Δ_k = θ_k − θ de cada cliente tras E pasos locales desde el mismo modelo global θ.

    ``theta`` es un modelo (d) o uno por corrida (corridas × d); devuelve
    (…, clientes, d). La primera época parte del mismo θ para todos, así que
    sus márgenes salen de un solo producto θ·Xᵀ y el paso −η/n_k entra fila
    por fila antes de sumar cada bloque; las demás épocas siguen a cada
    cliente por su cuenta (``_local_descent``).
    """
    starts = _block_starts(sizes)
    residual = learning.sigmoid(np.matmul(theta, X.T)) - y
    row_step = np.repeat(-learning_rate / sizes, sizes.astype(np.intp))
    step = _sum_by_client((residual * row_step)[..., None] * X, sizes, starts)
    if local_epochs == 1:
        return step
    start = theta[..., None, :]
    trained = _local_descent(start + step, X, y, sizes, local_epochs=local_epochs - 1,
                             learning_rate=learning_rate)
    return trained - start


def _group_by_client(X, y, owner):
    """Las filas ordenadas por cliente (orden estable dentro de cada uno), una sola vez."""
    order = np.argsort(owner, kind="stable")
    return X[order], y[order], owner[order]


def _train_selected(theta, X, y, owner, selected, *, local_epochs, learning_rate):
    """``train_clients`` sobre datos ya validados y agrupados por cliente (``_group_by_client``)."""
    clients = int(owner[-1]) + 1
    if selected.size == clients:  # todos participan: sin copiar filas
        sizes = np.bincount(owner, minlength=clients).astype(float)
    else:
        position = np.full(clients, -1, dtype=np.intp)
        position[selected] = np.arange(selected.size)
        rows = position[owner] >= 0
        X, y = X[rows], y[rows]
        sizes = np.bincount(position[owner[rows]], minlength=selected.size).astype(float)
    updates = _client_updates(theta, X, y, sizes, local_epochs=local_epochs, learning_rate=learning_rate)
    return updates, sizes


def _check_selected(selected, clients: int) -> np.ndarray:
    selected = np.sort(np.asarray(selected, dtype=np.intp).reshape(-1))
    if selected.size == 0 or selected[0] < 0 or selected[-1] >= clients or np.any(np.diff(selected) == 0):
        raise ValueError(
            f"selected debe ser una lista no vacía de clientes distintos entre 0 y {clients - 1}; "
            f"se recibió {describe(selected)}"
        )
    return selected


def train_clients(theta, X, y, owner, *, selected, local_epochs, learning_rate=learning.DEFAULT_LEARNING_RATE):
    """Entrenamiento local de los clientes ``selected``: (actualizaciones Δ_k, tamaños n_k).

    Fórmula: cada cliente parte del modelo global θ, da E pasos
    θ_k ← θ_k − η (1/n_k) Σ_{i ∈ k} (σ(xᵢ·θ_k) − yᵢ) xᵢ sobre sus propios
    datos y devuelve Δ_k = θ_k − θ (una fila por cliente, en orden creciente
    de cliente). Es el ClientUpdate de McMahan et al. (2017) con B = ∞.

    Garantía: ninguna. Los datos no salen del cliente, pero Δ_k depende de
    ellos, y con una sola persona los revela exactos (``reconstruct_features``).
    """
    X, y, owner = _check_task(X, y, owner)
    theta = _check_theta(theta, X.shape[1])
    local_epochs = check_positive_int(local_epochs, name="local_epochs")
    learning_rate = check_positive(learning_rate, name="learning_rate")
    selected = _check_selected(selected, int(owner.max()) + 1)
    X, y, owner = _group_by_client(X, y, owner)
    return _train_selected(theta, X, y, owner, selected, local_epochs=local_epochs, learning_rate=learning_rate)


def average_updates(updates, sizes) -> np.ndarray:
    """Promedio de FedAvg: Σ_k (n_k / n) Δ_k, con n = Σ_k n_k sobre los clientes de la ronda.

    Pesar por n_k hace que, con E = 1 y todos los clientes, el paso sea
    exactamente el del gradiente de toda la base: Σ_k (n_k/n)·(1/n_k) Σ_{i∈k} gᵢ
    = (1/n) Σᵢ gᵢ. Un promedio sin pesos daría a un hospital de 7 pacientes la
    misma voz que a uno de 1274.
    """
    updates = check_finite(updates, name="updates")
    sizes = check_finite(sizes, name="sizes")
    if updates.ndim != 2 or sizes.shape != (updates.shape[0],):
        raise ValueError(
            f"updates debe ser una matriz (clientes × coeficientes) y sizes tener un tamaño por "
            f"cliente; se recibieron formas {updates.shape} y {sizes.shape}"
        )
    if (sizes <= 0).any():
        raise ValueError(f"cada tamaño n_k debe ser positivo; se recibió {describe(sizes)}")
    return _average_by_run(updates, sizes, np.zeros(1, dtype=np.intp))[0]


def _average_by_run(updates, sizes, run_starts):
    """El promedio de FedAvg de varias corridas a la vez: Σ_k (n_k / n) Δ_k dentro de cada bloque de clientes.

    ``run_starts`` es la primera fila de cada corrida en ``updates`` (las filas
    vienen agrupadas por corrida); devuelve una fila por corrida.
    """
    totals = np.add.reduceat(sizes, run_starts)
    run_of_row = np.repeat(np.arange(run_starts.size), np.diff(np.append(run_starts, sizes.size)))
    return np.add.reduceat(updates * (sizes / totals[run_of_row])[:, None], run_starts, axis=0)


def train_federated(
    X,
    y,
    owner,
    *,
    rounds,
    client_fraction,
    local_epochs,
    rng,
    learning_rate=learning.DEFAULT_LEARNING_RATE,
    initial_theta=None,
    X_test=None,
    y_test=None,
    stop_accuracy=None,
) -> dict:
    """FedAvg (McMahan et al. 2017, Algoritmo 1) sobre la regresión logística del capítulo 5.

    Fórmula, en cada ronda t = 1 … T:
        S_t ← m = max(1, ⌊C·K + ½⌋) clientes al azar (``select_clients``);
        Δ_k ← E pasos locales desde θ_t (``train_clients``), k ∈ S_t;
        θ_{t+1} = θ_t + Σ_{k∈S_t} (n_k / n_{S_t}) Δ_k (``average_updates``).

    Con C = 1 y E = 1 es exactamente el descenso de gradiente centralizado
    (``learning.train_logistic``), reparta como se reparta la base.

    Garantía de privacidad: ninguna (ver ``train_federated_privately``).

    Con ``stop_accuracy`` se detiene en la primera ronda cuya exactitud de
    prueba la alcanza: así se cuentan rondas de comunicación.

    Devuelve ``theta`` (modelo final), ``accuracy`` (exactitud en
    ``X_test``/``y_test`` tras cada ronda, o ``None``), ``participants`` (m) y
    ``clients`` (K).
    """
    X, y, owner = _check_task(X, y, owner)
    rounds = check_positive_int(rounds, name="rounds")
    local_epochs = check_positive_int(local_epochs, name="local_epochs")
    learning_rate = check_positive(learning_rate, name="learning_rate")
    client_fraction = check_fraction(client_fraction, name="client_fraction")
    rng = check_rng(rng)
    theta = (learning.make_initial_theta(X.shape[1]) if initial_theta is None
             else _check_theta(initial_theta, X.shape[1]).copy())
    evaluate = X_test is not None
    if evaluate:
        X_test, y_test = check_dataset(X_test, y_test, names=("X_test", "y_test"))
    elif stop_accuracy is not None:
        raise ValueError("stop_accuracy necesita X_test e y_test para medir la exactitud")
    run = _run_fedavg(X, y, [owner], [rng], theta, rounds=rounds, client_fraction=client_fraction,
                      local_epochs=local_epochs, learning_rate=learning_rate, X_test=X_test, y_test=y_test,
                      stop_accuracy=stop_accuracy)
    return {
        "theta": run["thetas"][0],
        "accuracy": run["accuracy"][0] if evaluate else None,
        "participants": int(run["participants"][0]),
        "clients": int(owner.max()) + 1,
    }


def _run_fedavg(X, y, owners, rngs, theta, *, rounds, client_fraction, local_epochs, learning_rate,
                X_test=None, y_test=None, stop_accuracy=None) -> dict:
    """Varias corridas de FedAvg a la vez sobre los mismos datos: una por reparto de ``owners``.

    Cada corrida tiene su reparto (``owners[r]``, ya validado) y su generador
    para elegir clientes (``rngs[r]``); todas parten de ``theta``. Las filas de
    todas las corridas se apilan agrupadas por corrida y por cliente, así que
    cada época local es una sola cuenta para todas: en el navegador, cada
    llamada a numpy cuesta, y diez corridas de veinte rondas serían miles.

    Con ``stop_accuracy`` se detiene en la primera ronda en que todas las
    corridas ya la alcanzaron alguna vez. Devuelve ``thetas`` (corridas × d), ``accuracy``
    (corridas × rondas, o ``None``) y ``participants`` (m de cada corrida).
    """
    runs = len(owners)
    clients = np.array([int(owner.max()) + 1 for owner in owners])
    offsets = np.concatenate([[0], np.cumsum(clients)[:-1]]).astype(np.intp)
    client_of_row = np.concatenate([owner + offset for owner, offset in zip(owners, offsets)])
    order = np.argsort(client_of_row, kind="stable")
    rows_X, rows_y = np.tile(X, (runs, 1))[order], np.tile(y, runs)[order]
    client_of_row = client_of_row[order]
    all_sizes = np.bincount(client_of_row, minlength=int(clients.sum())).astype(float)
    run_of_client = np.repeat(np.arange(runs), clients)
    thetas = np.repeat(np.asarray(theta, dtype=float)[None, :], runs, axis=0)
    evaluate = X_test is not None
    accuracies = []
    participants = np.zeros(runs, dtype=np.intp)
    for _ in range(rounds):
        chosen = [select_clients(int(k), fraction=client_fraction, rng=generator) for k, generator in zip(clients, rngs)]
        participants = np.array([selected.size for selected in chosen])
        chosen = np.concatenate([selected + offset for selected, offset in zip(chosen, offsets)])
        if chosen.size == all_sizes.size:  # todos participan: sin copiar filas
            X_round, y_round, sizes = rows_X, rows_y, all_sizes
        else:
            keep = np.zeros(all_sizes.size, dtype=bool)
            keep[chosen] = True
            rows = keep[client_of_row]
            X_round, y_round, sizes = rows_X[rows], rows_y[rows], all_sizes[chosen]
        start = thetas[run_of_client[chosen]]
        updates = _local_descent(start, X_round, y_round, sizes, local_epochs=local_epochs,
                                 learning_rate=learning_rate) - start
        run_starts = np.concatenate([[0], np.cumsum(participants)[:-1]]).astype(np.intp)
        thetas = thetas + _average_by_run(updates, sizes, run_starts)
        if evaluate:
            accuracies.append(np.mean((X_test @ thetas.T > 0) == (y_test[:, None] == 1), axis=0))
            reached = np.array(accuracies).max(axis=0) >= (stop_accuracy or 0) - _TARGET_TOLERANCE
            if stop_accuracy is not None and reached.all():
                break
    return {
        "thetas": thetas,
        "accuracy": np.array(accuracies).T if evaluate else None,
        "participants": participants,
    }


# Una exactitud es k/n; el objetivo (otra exactitud menos medio punto) no siempre es
# representable: una exactitud igual al objetivo salvo el redondeo cuenta como alcanzada.
_TARGET_TOLERANCE = 1e-9


def rounds_to_reach(accuracies, target) -> int | None:
    """Primera ronda (desde 1) cuya exactitud llega a ``target`` (± 10⁻⁹); ``None`` si ninguna llega."""
    accuracies = check_finite(accuracies, name="accuracies")
    target = check_finite(target, name="target")
    reached = np.flatnonzero(np.atleast_1d(accuracies) >= target - _TARGET_TOLERANCE)
    return int(reached[0]) + 1 if reached.size else None


def split_census_task(census, *, rng, test_fraction=0.2) -> dict:
    """La tarea del capítulo 5: entrenamiento y prueba del censo, y sus dos referencias.

    Usa ``learning.split_census`` (con la misma semilla, la misma partición
    que las celdas del capítulo 5); quien solo necesita la partición la pide
    ahí y no entrena la referencia. Devuelve
    ``X_train``, ``X_test``, ``y_train``, ``y_test``, ``nonprivate`` (exactitud
    del modelo centralizado sin privacidad) y ``majority`` (clase mayoritaria).
    """
    X_train, X_test, y_train, y_test = learning.split_census(rng=rng, census=census, test_fraction=test_fraction)
    reference = learning.train_logistic(X_train, y_train)
    return {
        "X_train": X_train,
        "X_test": X_test,
        "y_train": y_train,
        "y_test": y_test,
        "nonprivate": learning.accuracy(reference, X_test, y_test),
        "majority": learning.majority_baseline(y_test),
    }


def compare_splits(census, *, clients, client_fraction, local_epochs, rounds, rng, repeats=5) -> dict:
    """FedAvg con reparto IID y no IID (un cliente por nivel educativo), ronda a ronda.

    Misma partición entrenamiento/prueba para todo. Cada una de las
    ``repeats`` corridas sortea otro reparto IID y otra secuencia de clientes
    por ronda, la misma para los dos repartos. El reparto IID tiene
    ``clients`` clientes; el no IID, uno por nivel educativo (16 hospitales de
    tamaños muy distintos). Devuelve ``rounds``, ``iid`` y ``non_iid``
    (exactitud, repeticiones × rondas), ``participants``, ``sizes_non_iid``,
    ``nonprivate`` y ``majority``.
    """
    rng = check_rng(rng)
    rounds = check_positive_int(rounds, name="rounds")
    repeats = check_positive_int(repeats, name="repeats")
    task = split_census_task(census, rng=rng)
    X, y = task["X_train"], task["y_train"]
    non_iid = split_by_group(X[:, EDUCATION_COLUMN])
    owners, rngs = [], []
    for _ in range(repeats):
        owners += [split_iid(len(y), clients=clients, rng=rng), non_iid]
        selection = rng.integers(2**32)
        # La misma secuencia de elecciones para los dos repartos de esta corrida.
        rngs += [np.random.default_rng(selection), np.random.default_rng(selection)]
    run = _run_fedavg(X, y, owners, rngs, learning.make_initial_theta(X.shape[1]), rounds=rounds,
                      client_fraction=check_fraction(client_fraction, name="client_fraction"),
                      local_epochs=check_positive_int(local_epochs, name="local_epochs"),
                      learning_rate=learning.DEFAULT_LEARNING_RATE, X_test=task["X_test"], y_test=task["y_test"])
    curves = {"iid": run["accuracy"][0::2], "non_iid": run["accuracy"][1::2]}
    participants = {"iid": int(run["participants"][0]), "non_iid": int(run["participants"][1])}
    return {
        "rounds": np.arange(1, rounds + 1),
        "iid": curves["iid"],
        "non_iid": curves["non_iid"],
        "participants": participants,
        "sizes_non_iid": count_examples(non_iid),
        "nonprivate": task["nonprivate"],
        "majority": task["majority"],
    }


def compare_local_epochs(census, *, epochs_grid, max_rounds, rng, target=None, within=None, clients=16,
                         client_fraction=1.0) -> dict:
    """Rondas de comunicación hasta una exactitud objetivo para cada E, IID y no IID.

    El objetivo es ``target`` (una exactitud) o, con ``within``, el modelo
    centralizado sin privacidad menos ``within`` (por ejemplo 0.005: medio
    punto por debajo).

    Más épocas locales E hacen más trabajo entre dos comunicaciones: con datos
    IID las rondas caen casi como 1/E; con un cliente por nivel educativo cada
    hospital se aleja hacia su propio óptimo (deriva de cliente) y las rondas
    dejan de bajar.

    Devuelve ``epochs``, ``rounds_iid`` y ``rounds_non_iid`` (``None`` si no
    llega en ``max_rounds``), ``target``, ``max_rounds``, ``nonprivate`` y
    ``majority``.
    """
    rng = check_rng(rng)
    grid = [check_positive_int(e, name="epochs_grid") for e in np.atleast_1d(epochs_grid).tolist()]
    check_nonempty(grid, name="epochs_grid")
    max_rounds = check_positive_int(max_rounds, name="max_rounds")
    if (target is None) == (within is None):
        raise ValueError("indique target (una exactitud) o within (puntos bajo el modelo centralizado), no ambos")
    task = split_census_task(census, rng=rng)
    if within is not None:
        target = task["nonprivate"] - check_fraction(within, name="within")
    target = check_fraction(target, name="target")
    X, y = task["X_train"], task["y_train"]
    owners = [split_iid(len(y), clients=clients, rng=rng), split_by_group(X[:, EDUCATION_COLUMN])]
    selection = rng.integers(2**32)
    client_fraction = check_fraction(client_fraction, name="client_fraction")
    found = {"iid": [], "non_iid": []}
    for epochs in grid:
        # Cada reparto por su lado (se detiene apenas llega), con la misma secuencia de elecciones.
        for name, owner in zip(found, owners):
            run = _run_fedavg(X, y, [owner], [np.random.default_rng(selection)],
                              learning.make_initial_theta(X.shape[1]), rounds=max_rounds,
                              client_fraction=client_fraction, local_epochs=epochs,
                              learning_rate=learning.DEFAULT_LEARNING_RATE, X_test=task["X_test"],
                              y_test=task["y_test"], stop_accuracy=target)
            found[name].append(rounds_to_reach(run["accuracy"][0], target))
    return {
        "epochs": grid,
        "rounds_iid": found["iid"],
        "rounds_non_iid": found["non_iid"],
        "target": target,
        "max_rounds": max_rounds,
        "nonprivate": task["nonprivate"],
        "majority": task["majority"],
    }


# ---------------------------------------------------- fugas por gradientes --


def compute_device_update(theta, X, y, *, local_epochs=1, learning_rate=learning.DEFAULT_LEARNING_RATE):
    """La actualización Δ que envía un dispositivo con las filas ``X``, ``y`` (un cliente).

    Fórmula: E pasos locales desde θ (``train_clients`` con un solo cliente);
    con una persona, Δ = −η Σ_e (σ(x·θ_e) − y) x: un múltiplo de x.
    """
    X = check_finite(X, name="X")
    X = X[None, :] if X.ndim == 1 else X
    y = np.atleast_1d(check_finite(y, name="y"))
    updates, _ = train_clients(theta, X, y, np.zeros(X.shape[0], dtype=np.intp), selected=[0],
                               local_epochs=local_epochs, learning_rate=learning_rate)
    return updates[0]


def reconstruct_features(update) -> np.ndarray:
    """Reconstruye las variables x de quien envió ``update``: x̂ = Δ / Δ₀.

    Fórmula: con una sola persona, Δ = c·x con c = −η Σ_e (σ(x·θ_e) − y) ≠ 0, y
    x₀ = 1 (el intercepto), así que Δ/Δ₀ = x exacto: ∇w/∇b revela los datos.
    Con un lote de varias personas devuelve Σ cᵢxᵢ / Σ cᵢ, un promedio
    ponderado de todos (pesos que pueden ser negativos), no los datos de nadie.
    ``update`` puede ser una actualización (d) o varias (una por fila).
    Referencia: Zhu, Liu y Han (2019); Phong et al. (2018), sección 3.
    """
    update = check_finite(update, name="update")
    if np.ndim(update) not in (1, 2) or np.shape(update)[-1] < 2:
        raise ValueError(f"update debe ser un vector con el intercepto primero; se recibió {describe(update)}")
    intercept = update[..., :1]
    if np.any(intercept == 0):
        raise ValueError("la componente del intercepto de update es 0: no hay nada que dividir")
    return update / intercept


def decode_features(features) -> dict:
    """Edad y nivel educativo a partir de x = (1, (edad − 40)/15, (educación − 10)/3).

    Invierte ``learning.make_features`` con sus constantes públicas. Con una
    fila devuelve números; con varias, arreglos.
    """
    features = check_finite(features, name="features")
    age = learning.AGE_CENTER + learning.AGE_SCALE * features[..., AGE_COLUMN]
    education = learning.EDUCATION_CENTER + learning.EDUCATION_SCALE * features[..., EDUCATION_COLUMN]
    if np.ndim(features) == 1:
        return {"age": float(age), "education_num": float(education)}
    return {"age": age, "education_num": education}


def infer_high_income(update) -> bool:
    """La etiqueta de una sola persona: ingreso alto si Δ₀ > 0.

    Δ₀ = −η Σ_e (σ(x·θ_e) − y): con y = 1 cada término σ − 1 es negativo y Δ₀ > 0;
    con y = 0, Δ₀ < 0. El signo del gradiente del intercepto delata la etiqueta.
    """
    update = check_finite(update, name="update")
    return bool(update[0] > 0)


def privatize_update(update, *, clip_norm, noise_multiplier, rng):
    """Recorta ``update`` (o cada fila) a norma L2 ≤ S y suma ruido N(0, (zS)²).

    Fórmula: Δ ↦ Δ · min(1, S/‖Δ‖₂) + Z, Z ~ N(0, z²S² I).

    Garantía: sobre una sola actualización (la de una persona o un cliente),
    el mecanismo gaussiano con sensibilidad L2 = S y σ = zS: (α, α/(2z²))-RDP
    (Mironov 2017). Es lo que publica el servidor en una ronda de
    ``train_federated_privately`` con un solo participante.
    """
    update = check_finite(update, name="update")
    clip_norm = check_positive(clip_norm, name="clip_norm")
    noise_multiplier = _check_noise_multiplier(noise_multiplier)
    rows = np.atleast_2d(update)
    clipped = learning.clip_gradients(rows, clip_norm=clip_norm)
    noisy = mechanisms.add_gaussian_noise(clipped, sigma=noise_multiplier * clip_norm, rng=rng)
    return noisy.reshape(np.shape(update))


def measure_leakage(census, *, person, batch_sizes, noise_multiplier, trials, rng,
                    clip_norm=DEFAULT_UPDATE_CLIP, local_epochs=1, theta=None) -> dict:
    """Reconstruye a ``person`` desde la actualización de su dispositivo, sola, en lote y con ruido.

    1. Sola: Δ de su dispositivo (solo sus datos) → x̂ = Δ/Δ₀: edad, educación e
       ingreso alto exactos.
    2. En lote: su fila junto a B − 1 personas al azar del censo (``trials``
       lotes por B, todos a la vez): el error absoluto mediano de la edad
       reconstruida.
    3. Recortada y con ruido (``privatize_update``, ``trials`` veces): el error
       mediano de la edad.

    Todo parte del modelo global ``theta`` que el servidor envía (por defecto,
    la regresión logística sin privacidad entrenada sobre el censo: un modelo
    avanzado del entrenamiento).
    Devuelve ``true`` (edad, educación, ingreso), ``alone`` (lo reconstruido),
    ``alone_error`` (máximo error absoluto de edad y educación), ``batch_sizes``,
    ``batch_error`` (mediana del error de edad por B) y ``noisy_error``.
    """
    rng = check_rng(rng)
    trials = check_positive_int(trials, name="trials")
    local_epochs = check_positive_int(local_epochs, name="local_epochs")
    batch_sizes = [check_positive_int(b, name="batch_sizes") for b in batch_sizes]
    X, y = learning.make_dataset(census)
    index = int(np.flatnonzero(census.name == person)[0]) if isinstance(person, str) else int(person)
    theta = learning.train_logistic(X, y) if theta is None else _check_theta(theta, X.shape[1])
    true = {"age": float(census.age[index]), "education_num": float(census.education_num[index]),
            "high_income": bool(census.high_income[index])}

    update = compute_device_update(theta, X[index], y[index], local_epochs=local_epochs)
    alone = decode_features(reconstruct_features(update))
    alone["high_income"] = infer_high_income(update)
    alone_error = max(abs(alone["age"] - true["age"]), abs(alone["education_num"] - true["education_num"]))

    others = np.delete(np.arange(len(y)), index)
    batch_error = []
    for size in batch_sizes:
        lots = trials if size > 1 else 1
        rows = np.empty((lots, size), dtype=np.intp)
        rows[:, 0] = index
        for lot in range(lots):
            rows[lot, 1:] = rng.choice(others, size=size - 1, replace=False)
        # Cada lote es un dispositivo: sus filas juntas, un cliente por lote.
        updates = _client_updates(theta, X[rows.ravel()], y[rows.ravel()], np.full(lots, float(size)),
                                  local_epochs=local_epochs, learning_rate=learning.DEFAULT_LEARNING_RATE)
        ages = decode_features(reconstruct_features(updates))["age"]
        batch_error.append(float(np.median(np.abs(ages - true["age"]))))

    noisy = privatize_update(np.tile(update, (trials, 1)), clip_norm=clip_norm,
                             noise_multiplier=noise_multiplier, rng=rng)
    noisy_ages = decode_features(reconstruct_features(noisy))["age"]
    return {
        "person": index,
        "true": true,
        "alone": alone,
        "alone_error": alone_error,
        "update": update,
        "batch_sizes": list(batch_sizes),
        "batch_error": np.array(batch_error),
        "noise_multiplier": float(noise_multiplier),
        "clip_norm": float(clip_norm),
        "noisy_error": float(np.median(np.abs(noisy_ages - true["age"]))),
    }


# ------------------------------------------------------ agregación segura --


def encode_fixed_point(values) -> np.ndarray:
    """Codifica reales como enteros módulo 2³²: q = round(x · 2¹⁶) mod 2³².

    Las máscaras solo se cancelan exactamente en aritmética entera; la suma se
    decodifica bien mientras |Σ x| < 2¹⁵ (``decode_fixed_point``).
    """
    values = check_finite(values, name="values")
    scaled = np.rint(np.asarray(values, dtype=float) * FIXED_POINT_SCALE)
    if np.any(np.abs(scaled) >= MASK_MODULUS // 2):
        raise ValueError(f"values debe estar en (−2¹⁵, 2¹⁵) para codificarse; se recibió {describe(values)}")
    return np.mod(scaled.astype(np.int64), MASK_MODULUS)


def decode_fixed_point(encoded) -> np.ndarray:
    """Inverso de ``encode_fixed_point``: de [0, 2³²) a reales, con la mitad superior negativa."""
    encoded = np.mod(np.asarray(encoded, dtype=np.int64), MASK_MODULUS)
    centered = np.where(encoded >= MASK_MODULUS // 2, encoded - MASK_MODULUS, encoded)
    return centered / FIXED_POINT_SCALE


def share_secret(secret, *, shares, threshold, rng) -> list:
    """Reparte ``secret`` en ``shares`` partes de Shamir: cualquier ``threshold`` lo reconstruyen.

    Fórmula: f(x) = s + a₁x + … + a_{t−1}x^{t−1} mod p con aᵢ al azar; la parte j
    es (j, f(j)), j = 1 … n. Garantía: t − 1 partes no dicen nada de s (todo
    valor de s es igual de compatible con ellas). Referencia: Shamir (1979),
    "How to Share a Secret", CACM. Devuelve una lista de pares (x, y).
    """
    shares = check_positive_int(shares, name="shares")
    threshold = check_positive_int(threshold, name="threshold")
    if threshold > shares:
        raise ValueError(f"threshold ({threshold}) no puede superar shares ({shares})")
    rng = check_rng(rng)
    secret = int(secret)
    if not 0 <= secret < SHARE_PRIME:
        raise ValueError(f"secret debe estar en [0, 2⁶¹ − 1); se recibió {describe(secret)}")
    return _evaluate_shares([secret, *rng.integers(0, SHARE_PRIME, size=threshold - 1).tolist()], shares)


def _evaluate_shares(coefficients, shares: int) -> list:
    """Las partes (x, f(x)), x = 1 … n, del polinomio f de coeficientes [s, a₁, …] módulo p."""
    # Horner in exact Python integers, reduced modulo p once at the end (the same value as reducing
    # at every step). A round's setup evaluates one polynomial per pair of clients, so the
    # coefficients are converted once and the few large reductions are left for last.
    highest_first = [int(coefficient) for coefficient in reversed(coefficients)]
    result = []
    for x in range(1, shares + 1):
        value = 0
        for coefficient in highest_first:
            value = value * x + coefficient
        result.append((x, value % SHARE_PRIME))
    return result


def reconstruct_secret(parts) -> int:
    """Reconstruye el secreto desde partes de Shamir: interpolación de Lagrange en 0.

    Fórmula: s = Σⱼ yⱼ Π_{m≠j} x_m / (x_m − xⱼ) mod p. Con al menos ``threshold``
    partes devuelve el secreto; con menos, un número sin relación con él.
    """
    parts = [(int(x), int(y)) for x, y in parts]
    if not parts or len({x for x, _ in parts}) != len(parts):
        raise ValueError(f"parts debe ser una lista no vacía de partes (x, y) con x distintos; se recibió {describe(parts)}")
    secret = 0
    for j, (xj, yj) in enumerate(parts):
        numerator, denominator = 1, 1
        for m, (xm, _) in enumerate(parts):
            if m != j:
                numerator = numerator * xm % SHARE_PRIME
                denominator = denominator * (xm - xj) % SHARE_PRIME
        secret = (secret + yj * numerator * pow(denominator, -1, SHARE_PRIME)) % SHARE_PRIME
    return secret


def setup_secure_aggregation(clients, *, threshold, rng) -> dict:
    """Preparación de la ronda: una semilla por par de clientes y sus partes de Shamir.

    Modelo simplificado de Bonawitz et al. (2017), rondas 0 y 1: cada par
    {i, j} comparte una semilla s_ij (en el protocolo real sale de un acuerdo de
    claves Diffie–Hellman; aquí se sortea), y el cliente i reparte cada una de
    sus semillas en K partes de Shamir, una por cliente, de las que bastan
    ``threshold``. Devuelve ``clients``, ``threshold``, ``seeds`` {(i, j): s_ij}
    con i < j y ``shares`` {(i, j): [(x, y), …]} (la parte x la guarda el
    cliente x − 1).
    """
    clients = check_positive_int(clients, name="clients")
    if clients < 2:
        raise ValueError(f"la agregación segura necesita al menos 2 clientes; se recibió {clients}")
    threshold = check_positive_int(threshold, name="threshold")
    if threshold > clients:
        raise ValueError(f"threshold ({threshold}) no puede superar el número de clientes ({clients})")
    rng = check_rng(rng)
    pairs = [(i, j) for i in range(clients) for j in range(i + 1, clients)]
    values = rng.integers(0, SHARE_PRIME, size=len(pairs)).tolist()
    seeds = dict(zip(pairs, values))
    # Los coeficientes de todos los polinomios de una vez (lo mismo que share_secret, par por par).
    coefficients = rng.integers(0, SHARE_PRIME, size=(len(pairs), threshold - 1)).tolist()
    shares = {pair: _evaluate_shares([seeds[pair], *row], clients) for pair, row in zip(pairs, coefficients)}
    return {"clients": clients, "threshold": threshold, "seeds": seeds, "shares": shares}


def expand_mask(seed, *, size) -> np.ndarray:
    """La máscara de una semilla: ``size`` enteros uniformes en [0, 2³²) (una "PRG").

    Los dos clientes del par generan la misma máscara desde la misma semilla.
    Aquí la PRG es el generador PCG64 de numpy: las palabras de 32 bits de su
    salida, de cada número de 64 bits primero la mitad baja y después la alta
    (los mismos enteros que ``numpy.random.default_rng(seed).integers(0, 2**32,
    size)``). Reproducible, no criptográfica.
    """
    size = check_positive_int(size, name="size")
    # The raw stream, split by hand: a round of secure aggregation expands one mask per pair of
    # clients, and a Generator's integers costs more to set up than the words it returns. Read as
    # little-endian 32-bit words, each 64-bit output gives its low half first, then its high half.
    raw = np.random.PCG64(int(seed)).random_raw((size + 1) // 2)
    return raw.astype("<u8", copy=False).view("<u4")[:size].astype(np.int64)


def _pair_masks(client, setup, *, size, others) -> np.ndarray:
    """Σ_{j>i} PRG(s_ij) − Σ_{j<i} PRG(s_ji) mod 2³² sobre los j de ``others``."""
    total = np.zeros(size, dtype=np.int64)
    for other in others:
        if other == client:
            continue
        pair = (min(client, other), max(client, other))
        mask = expand_mask(setup["seeds"][pair], size=size)
        total = total + mask if client < other else total - mask
    return np.mod(total, MASK_MODULUS)


def mask_update(update, *, client, setup) -> np.ndarray:
    """Lo que el cliente envía: y_i = q_i + Σ_{j>i} PRG(s_ij) − Σ_{j<i} PRG(s_ji) mod 2³².

    Garantía (servidor honesto pero curioso, sin colusión): con al menos una
    máscara uniforme e independiente, y_i es uniforme en [0, 2³²)^d sea cual sea
    la actualización: un solo y_i no dice nada del cliente. En la suma de todos
    los clientes cada máscara aparece una vez con + y otra con −, y se cancela.
    Referencia: Bonawitz et al. (2017), sección 3.
    """
    encoded = encode_fixed_point(np.atleast_1d(update))
    client = int(client)
    if not 0 <= client < setup["clients"]:
        raise ValueError(f"client debe estar entre 0 y {setup['clients'] - 1}; se recibió {describe(client)}")
    masks = _pair_masks(client, setup, size=encoded.size, others=range(setup["clients"]))
    return np.mod(encoded + masks, MASK_MODULUS)


def sum_masked(masked) -> np.ndarray:
    """Suma (módulo 2³²) de las actualizaciones enmascaradas recibidas: {cliente: y_i}."""
    if not masked:
        raise ValueError("masked no puede estar vacío: el servidor no recibió ninguna actualización")
    total = np.zeros_like(next(iter(masked.values())))
    for value in masked.values():
        total = np.mod(total + value, MASK_MODULUS)
    return total


def unmask_sum(masked, *, setup) -> np.ndarray:
    """Suma real de los sobrevivientes, quitando las máscaras que dejaron los caídos.

    Modelo simplificado de la ronda 3 de Bonawitz et al. (2017): si el cliente
    j se cayó después de repartir sus semillas y antes de enviar y_j, en la
    suma quedan sin pareja las máscaras ±PRG(s_ij) de cada sobreviviente i. Los
    sobrevivientes entregan sus partes de Shamir de esas semillas; con
    ``threshold`` partes el servidor reconstruye s_ij, regenera las máscaras y
    las resta. Con menos sobrevivientes que ``threshold`` no hay suma.

    Lo que este modelo omite: la doble máscara del protocolo real (sin ella,
    un cliente lento declarado caído quedaría expuesto al llegar tarde).
    """
    survivors = sorted(int(client) for client in masked)
    dropped = [client for client in range(setup["clients"]) if client not in survivors]
    if len(survivors) < setup["threshold"]:
        raise ValueError(
            f"solo quedan {len(survivors)} clientes y hacen falta {setup['threshold']} partes para "
            "recuperar las semillas de los caídos: la ronda se descarta"
        )
    total = sum_masked(masked)
    size = total.size
    for gone in dropped:
        recovered = {}
        for survivor in survivors:
            pair = (min(survivor, gone), max(survivor, gone))
            parts = [setup["shares"][pair][holder] for holder in survivors[: setup["threshold"]]]
            recovered[pair] = reconstruct_secret(parts)
        dangling = {"clients": setup["clients"], "seeds": recovered}
        for survivor in survivors:
            total = np.mod(total - _pair_masks(survivor, dangling, size=size, others=[gone]), MASK_MODULUS)
    return decode_fixed_point(total)


def run_secure_aggregation(updates, *, threshold, rng, dropped=()) -> dict:
    """Una ronda de agregación segura de punta a punta, con clientes que se caen.

    ``updates`` tiene una fila por cliente. Devuelve ``true_sum`` (Σ de todas
    las actualizaciones), ``views`` (lo que el servidor ve de cada cliente,
    decodificado como si fuera un número: ruido), ``secure_sum`` (suma
    desenmascarada si nadie se cae), ``survivors_sum`` (Σ real de los que
    enviaron), ``naive_sum`` (suma de lo recibido sin quitar las máscaras
    huérfanas) y ``recovered_sum`` (con las semillas recuperadas).
    """
    updates = check_finite(updates, name="updates")
    if updates.ndim != 2:
        raise ValueError(f"updates debe ser una matriz (clientes × coeficientes); tiene forma {updates.shape}")
    clients = updates.shape[0]
    setup = setup_secure_aggregation(clients, threshold=threshold, rng=rng)
    masked = {client: mask_update(updates[client], client=client, setup=setup) for client in range(clients)}
    dropped = sorted({int(client) for client in dropped})
    received = {client: value for client, value in masked.items() if client not in dropped}
    survivors = sorted(received)
    return {
        "clients": clients,
        "threshold": setup["threshold"],
        "dropped": dropped,
        "true_sum": updates.sum(axis=0),
        "views": np.array([decode_fixed_point(masked[client]) for client in range(clients)]),
        "secure_sum": decode_fixed_point(sum_masked(masked)),
        "survivors_sum": updates[survivors].sum(axis=0),
        "naive_sum": decode_fixed_point(sum_masked(received)),
        "recovered_sum": unmask_sum(received, setup=setup),
    }


# --------------------------------------------------- DP sobre el agregado --


def _clip_rows(updates, clip_norm):
    """Recorta cada vector de la última dimensión a norma L2 ≤ S (``learning.clip_gradients``, en lote)."""
    norms = np.sqrt(np.einsum("...i,...i->...", updates, updates))[..., None]
    return updates * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))


def _select_poisson(rng, shape, fraction) -> np.ndarray:
    """Muestreo de Poisson: cada cliente entra a la ronda con probabilidad C, sin mirar a los demás.

    Así, agregar o quitar un cliente mueve la suma de la ronda en a lo sumo S.
    Con un número fijo m de elegidos (``select_clients``), un cliente nuevo
    desplazaría a otro y la suma se movería hasta 2S.
    """
    return rng.random(shape) < fraction


def calibrate_rounds(clients, dimension, *, epsilon, delta, rounds, clip_norm, rng, client_fraction=1.0,
                     count_share=learning.DEFAULT_COUNT_SHARE, noise_radius=learning.DEFAULT_NOISE_RADIUS,
                     repeats=None, ledger=None) -> tuple:
    """Lo que DP-FedAvg fija antes de su primera ronda: (K̂, σ, η_s), como ``learning.calibrate_training``.

    Con ε_K = ``count_share``·ε y ε_g = ε − ε_K:

    * K̂ = max(1, K + Lap(1/ε_K)): el número de clientes, publicado en
      privado. Con bases vecinas que agregan o quitan un cliente, K también
      es un dato (capítulo 5: el n exacto delataría a alguien);
    * σ = z·S, con z = √(2 ln(1,25 T/δ)) · T/ε_g (gaussiano clásico con ε_g/T
      y δ/T en cada ronda, ``accounting.compute_noise_multiplier``);
    * el denominador de cada ronda es fijo y público: m̄ = C·K̂, los clientes
      que se esperan por ronda. Es el estimador de denominador fijo de
      McMahan et al. (2018), sección 3, con el total de clientes estimado en
      privado; dividir por los que de verdad respondieron sería publicar
      otro conteo;
    * η_s = min(1, r·m̄/(σ √(T d))): el paso del servidor
      (``learning.compute_step_size`` con η_max = 1).

    Con ``repeats`` devuelve K̂ y η_s como arreglos, uno por corrida. Con
    ``ledger`` anota el conteo y las T sumas (sensibilidad S cada una).
    """
    clients = check_positive_int(clients, name="clients")
    dimension = check_positive_int(dimension, name="dimension")
    client_fraction = check_fraction(client_fraction, name="client_fraction")
    estimated, sigma, _ = learning.calibrate_training(
        (clients, dimension), epsilon=epsilon, delta=delta, iterations=rounds, clip_norm=clip_norm, rng=rng,
        count_share=count_share, learning_rate=1.0, noise_radius=noise_radius, repeats=repeats,
    )
    denominator = client_fraction * np.asarray(estimated, dtype=float)
    step = learning.compute_step_size(sigma=sigma, n=denominator, iterations=rounds, dimension=dimension,
                                      learning_rate=1.0, noise_radius=noise_radius)
    if ledger is not None:
        epsilon_count, _ = learning.split_budget(epsilon=epsilon, count_share=count_share)
        ledger.record_laplace("conteo de clientes", sensitivity=1.0,
                              scale=mechanisms.laplace_scale(sensitivity=1.0, epsilon=epsilon_count))
        ledger.record_gaussian("suma de actualizaciones recortadas", sensitivity=float(clip_norm), sigma=sigma,
                               delta=delta / rounds, count=int(rounds))
    return estimated, sigma, step


def _train_privately(task, *, epsilons, delta, rounds, client_fraction, local_epochs, clip_norm, rng,
                     learning_rate, count_share, noise_radius, repeats, ledger=None):
    """DP-FedAvg con varios ε y ``repeats`` corridas por ε, todas a la vez, sobre datos agrupados por cliente.

    ``task`` es ``(X, y, owner)`` ya validado y agrupado (``_group_by_client``).
    Devuelve ``(thetas, sigmas, estimated, steps)``: modelos (ε × corridas × d),
    σ por ε y K̂ y η_s (ε × corridas). Las corridas de todos los ε avanzan juntas
    (una cuenta por ronda para todas: en el navegador cada llamada a numpy
    cuesta) y cada ε suma su propio ruido.

    El orden del azar es el del descenso privado del capítulo 5: primero K̂
    (de cada ε, en orden), después, en cada ronda y para cada ε, la selección
    (solo si C < 1) y el ruido. Con un solo ε, una corrida, una persona por
    cliente, C = 1, E = 1 y S = η·C, cada ronda es un paso de
    ``learning.noisy_gradient_descent`` con el mismo azar.
    """
    X, y, owner = task
    clients, dimension = int(owner[-1]) + 1, X.shape[1]
    calibrations = [calibrate_rounds(clients, dimension, epsilon=epsilon, delta=delta, rounds=rounds,
                                     clip_norm=clip_norm, rng=rng, client_fraction=client_fraction,
                                     count_share=count_share, noise_radius=noise_radius, repeats=repeats,
                                     ledger=ledger)
                    for epsilon in epsilons]
    estimated = np.array([np.atleast_1d(c[0]) for c in calibrations])
    sigmas = np.array([c[1] for c in calibrations])
    steps = np.array([np.atleast_1d(c[2]) for c in calibrations])
    runs = len(epsilons) * repeats
    sizes = np.bincount(owner, minlength=clients).astype(float)
    thetas = np.repeat(learning.make_initial_theta(dimension)[None, :], runs, axis=0)
    scale = (steps / (client_fraction * estimated)).reshape(runs, 1)
    one_row_each = local_epochs == 1 and clients == X.shape[0]
    row_norms = np.linalg.norm(X, axis=1)
    for _ in range(rounds):
        # El servidor trata −Δ_k como un gradiente (el «pseudogradiente» de Reddi et al. 2021): el
        # signo del descenso privado del capítulo 5.
        if one_row_each:
            # Una persona por cliente y un paso local: −Δ_k = η(σ(x_k·θ) − y_k)·x_k, un número por x_k.
            # Su norma es ese número por ‖x_k‖ y el recorte es un factor, como en el capítulo 5: la
            # suma recortada sale de un producto, sin formar una matriz por cliente.
            weights = learning_rate * (learning.sigmoid(thetas @ X.T) - y)
            weights = weights * np.minimum(1.0, clip_norm / np.maximum(np.abs(weights) * row_norms, 1e-300))
            clipped = weights.reshape(len(epsilons), repeats, clients)
        else:
            updates = _client_updates(thetas, X, y, sizes, local_epochs=local_epochs, learning_rate=learning_rate)
            clipped = _clip_rows(-updates, clip_norm).reshape(len(epsilons), repeats, clients, dimension)
        noisy_sums = []
        for index, sigma in enumerate(sigmas):
            chosen = clipped[index]
            if client_fraction < 1:
                mask = _select_poisson(rng, (repeats, clients), client_fraction)
                chosen = chosen * (mask if one_row_each else mask[:, :, None])
            total = chosen @ X if one_row_each else np.einsum("rkd->rd", chosen)
            noisy_sums.append(mechanisms.add_gaussian_noise(total, sigma=float(sigma), rng=rng))
        thetas = thetas - scale * np.concatenate(noisy_sums)
    return thetas.reshape(len(epsilons), repeats, dimension), sigmas, estimated, steps


def train_federated_privately(
    X,
    y,
    owner,
    *,
    epsilon,
    delta,
    rounds,
    client_fraction,
    local_epochs,
    clip_norm,
    rng,
    learning_rate=learning.DEFAULT_LEARNING_RATE,
    count_share=learning.DEFAULT_COUNT_SHARE,
    noise_radius=learning.DEFAULT_NOISE_RADIUS,
    ledger=None,
) -> dict:
    """FedAvg con privacidad diferencial sobre el agregado (DP-FedAvg), por cliente.

    Fórmula (McMahan et al. 2018, Algoritmo 1, con pesos w_k = 1 y el
    estimador de denominador fijo), con K̂, σ, m̄ = C·K̂ y η_s de
    ``calibrate_rounds``; en cada ronda:
        S_t ← cada cliente con probabilidad C, por separado (Poisson);
        Δ_k ← E pasos locales desde θ_t (``train_clients``), k ∈ S_t;
        θ_{t+1} = θ_t − η_s · (Σ_{k∈S_t} clip_S(−Δ_k) + Z) / m̄,   Z ~ N(0, σ² I).

    Garantía: (ε, δ)-DP del θ publicado para bases vecinas que agregan o
    quitan un cliente entero (una persona si cada cliente tiene una fila; un
    hospital si tiene muchas). K̂ es (ε_K, 0)-DP; cada ronda publica una suma
    de sensibilidad L2 = S (un cliente, esté o no en la muestra, mueve la suma
    en a lo sumo S; con muestreo de Poisson los demás no cambian), con σ para
    (ε_g/T, δ/T); la composición secuencial suma (ε, δ). m̄ y η_s solo usan
    números ya publicados. Los clientes pesan igual: con pesos n_k uno grande
    movería la suma más que S. La selección no se aprovecha en la cuenta (cota
    válida, sin amplificación por submuestreo).

    Con una persona por cliente, C = 1, E = 1 y S = η·C es exactamente el
    descenso privado del capítulo 5 (``learning.noisy_gradient_descent``):
    el mismo azar, el mismo modelo y las mismas publicaciones en el libro.

    Devuelve ``theta``, ``sigma`` (σ = zS), ``noise_multiplier`` (z),
    ``estimated_clients`` (K̂), ``server_learning_rate`` (η_s) y
    ``clients`` (K).
    """
    X, y, owner = _check_task(X, y, owner)
    rounds = check_positive_int(rounds, name="rounds")
    local_epochs = check_positive_int(local_epochs, name="local_epochs")
    learning_rate = check_positive(learning_rate, name="learning_rate")
    clip_norm = check_positive(clip_norm, name="clip_norm")
    client_fraction = check_fraction(client_fraction, name="client_fraction")
    rng = check_rng(rng)
    thetas, sigmas, estimated, steps = _train_privately(
        _group_by_client(X, y, owner), epsilons=[epsilon], delta=delta, rounds=rounds,
        client_fraction=client_fraction, local_epochs=local_epochs, clip_norm=clip_norm, rng=rng,
        learning_rate=learning_rate, count_share=count_share, noise_radius=noise_radius, repeats=1, ledger=ledger,
    )
    return {
        "theta": thetas[0, 0],
        "sigma": float(sigmas[0]),
        "noise_multiplier": float(sigmas[0]) / clip_norm,
        "estimated_clients": float(estimated[0, 0]),
        "server_learning_rate": float(steps[0, 0]),
        "clients": int(owner.max()) + 1,
    }


def compare_privacy_units(census, *, epsilons, rng, repeats=3, rounds=learning.DEFAULT_ITERATIONS,
                          delta=learning.DEFAULT_DELTA, clinic_size=10, task=None) -> dict:
    """Exactitud contra ε de DP-FedAvg con tres unidades de privacidad: persona, clínica, hospital.

    El mismo algoritmo (``train_federated_privately`` con C = 1, E = 1 y
    S = η·C), la misma partición, el mismo δ, las mismas T rondas y la misma
    contabilidad que el capítulo 5; solo cambia qué es un cliente, y con eso
    qué tapa el ruido:

    * ``persons``: un teléfono por persona. Es exactamente el descenso
      privado del capítulo 5 (``learning.noisy_gradient_descent``);
    * ``clinics``: clínicas de ``clinic_size`` personas al azar: el ruido tapa
      una clínica entera;
    * ``hospitals``: un hospital por nivel educativo (16 clientes): el ruido
      tapa un hospital entero.

    ``task`` (opcional) es la partición de ``split_census_task`` ya hecha.
    Devuelve ``epsilons``; ``persons``, ``clinics`` y ``hospitals``
    (repeticiones × ε); ``units`` (cuántos clientes hay en cada caso),
    ``nonprivate``, ``majority``, ``noise_multipliers`` (z por ε), ``rounds``
    y ``delta``.
    """
    rng = check_rng(rng)
    epsilons = [check_epsilon(float(e)) for e in np.atleast_1d(epsilons)]
    check_nonempty(epsilons, name="epsilons")
    repeats = check_positive_int(repeats, name="repeats")
    clinic_size = check_positive_int(clinic_size, name="clinic_size")
    task = split_census_task(census, rng=rng) if task is None else task
    X, y = task["X_train"], task["y_train"]
    owners = {"persons": np.arange(len(y), dtype=np.intp),
              "clinics": split_iid(len(y), clients=max(1, len(y) // clinic_size), rng=rng),
              "hospitals": split_by_group(X[:, EDUCATION_COLUMN])}
    curves = {}
    for name, owner in owners.items():
        thetas, sigmas, _, _ = _train_privately(
            _group_by_client(X, y, owner), epsilons=epsilons, delta=delta, rounds=rounds, client_fraction=1.0,
            local_epochs=1, clip_norm=DEFAULT_UPDATE_CLIP, rng=rng, learning_rate=learning.DEFAULT_LEARNING_RATE,
            count_share=learning.DEFAULT_COUNT_SHARE, noise_radius=learning.DEFAULT_NOISE_RADIUS, repeats=repeats,
        )
        correct = (task["X_test"] @ thetas.reshape(-1, X.shape[1]).T > 0) == (task["y_test"][:, None] == 1)
        curves[name] = correct.mean(axis=0).reshape(len(epsilons), repeats).T
    multipliers = sigmas / DEFAULT_UPDATE_CLIP
    return {
        "epsilons": np.array(epsilons),
        **curves,
        "units": {name: int(owner.max()) + 1 for name, owner in owners.items()},
        "nonprivate": task["nonprivate"],
        "majority": task["majority"],
        "noise_multipliers": np.array(multipliers),
        "rounds": rounds,
        "delta": delta,
    }


EDUCATION_BANDS = (
    ("sin bachillerato", 1, 8),
    ("bachillerato", 9, 9),
    ("algo de universidad o técnico", 10, 12),
    ("licenciatura", 13, 13),
    ("posgrado", 14, 16),
)
"""Grupos de nivel educativo (nombre, ``education_num`` mínimo y máximo) para medir la utilidad por grupo."""


def measure_subgroup_accuracy(census, *, epsilon, rng, repeats=20, delta=learning.DEFAULT_DELTA,
                              iterations=learning.DEFAULT_ITERATIONS, bands=EDUCATION_BANDS) -> dict:
    """Exactitud por grupo educativo del modelo sin privacidad y del privado (capítulo 5).

    El ruido empuja al modelo privado hacia la respuesta de la mayoría
    ("ingreso bajo"): la exactitud total apenas baja, pero los grupos chicos
    cuya respuesta típica es otra (posgrados, licenciados) pagan casi todo el
    costo. Es el impacto dispar de Bagdasaryan, Poursaeed y Shmatikov (2019),
    "Differential Privacy Has Disparate Impact on Model Accuracy", NeurIPS.

    Misma partición que el capítulo 5 (``split_census_task``); ``repeats``
    modelos privados con ``learning.noisy_gradient_descent``. Devuelve una
    tabla con una fila por grupo y una última fila ``"total"``: ``groups``
    (nombres), ``sizes`` (personas de prueba), ``high_income_rate``,
    ``nonprivate`` y ``private`` (exactitud; la privada, media de las
    repeticiones).
    """
    epsilon = check_epsilon(epsilon)
    repeats = check_positive_int(repeats, name="repeats")
    rng = check_rng(rng)
    # The partition of split_census_task; its reference model is trained below, once.
    X, X_test, y, y_test = learning.split_census(rng=rng, census=census)
    education = np.rint(learning.EDUCATION_CENTER + learning.EDUCATION_SCALE * X_test[:, EDUCATION_COLUMN])
    members = [(education >= low) & (education <= high) for _, low, high in bands]
    members.append(np.ones(len(y_test), dtype=bool))
    reference = learning.train_logistic(X, y)
    correct = (X_test @ reference > 0) == (y_test == 1)
    private_correct = np.zeros(len(y_test))
    for _ in range(repeats):
        theta = learning.noisy_gradient_descent(X, y, epsilon=epsilon, delta=delta, iterations=iterations,
                                                clip_norm=learning.DEFAULT_CLIP_NORM, rng=rng)
        private_correct += (X_test @ theta > 0) == (y_test == 1)
    private_correct /= repeats
    return {
        "groups": [name for name, _, _ in bands] + ["total"],
        "sizes": np.array([int(member.sum()) for member in members]),
        "high_income_rate": np.array([float(y_test[member].mean()) for member in members]),
        "nonprivate": np.array([float(correct[member].mean()) for member in members]),
        "private": np.array([float(private_correct[member].mean()) for member in members]),
        "epsilon": epsilon,
    }
