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
   Differentially Private Recurrent Language Models", ICLR): cada
   actualización se recorta a norma L2 ≤ S, el servidor suma ruido
   N(0, (zS)² I) a la suma y el presupuesto de las T rondas se contabiliza con
   ``dpdeck.accounting`` (composición secuencial, avanzada y Rényi DP).

Capas: este módulo solo llama a ``learning`` (modelo y gradientes),
``mechanisms`` (todo el ruido de privacidad) y ``accounting`` (el
presupuesto). Las máscaras, los coeficientes de Shamir, la elección de
clientes y los repartos usan ``rng`` directamente: son el azar del protocolo,
no ruido de privacidad.

Código de enseñanza: censo sintético (no datos de hospitales), privacidad por
registro o por cliente según el reparto, n y K tratados como públicos, y la
contabilidad no aprovecha la amplificación por submuestreo de clientes (cuenta
cada ronda como si participaran todos: una cota válida, más pesimista).
"""

from __future__ import annotations

import math

import numpy as np

from . import accounting, learning, mechanisms
from ._checks import (
    check_delta,
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
    "ACCOUNTANTS",
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
    "compute_noise_multiplier",
    "account_rounds",
    "train_federated_privately",
    "compare_privacy_units",
    "EDUCATION_BANDS",
    "measure_subgroup_accuracy",
    # laboratorio
    "LAB_LIMITATIONS",
    "run_lab_chapter",
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

ACCOUNTANTS = ("sequential", "rdp")
"""Contabilidades con las que ``compute_noise_multiplier`` calibra z."""


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
    X, y = learning._check_data(X, y)
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


def _local_descent(thetas, X, y, sizes, *, local_epochs, learning_rate):
    """E pasos de descenso de gradiente de lote completo en todos los clientes a la vez.

    Las filas de ``X`` e ``y`` vienen ordenadas por cliente (``sizes[k]`` filas
    del cliente k, una fila de ``thetas`` por cliente). El gradiente del
    cliente k es (1/n_k) Σ_{i ∈ k} (σ(xᵢ·θ_k) − yᵢ) xᵢ, el promedio de las filas
    de ``learning.compute_gradients`` sobre sus datos; ``np.add.reduceat`` suma
    cada bloque sin recorrer los clientes uno por uno (igual cuesta un cliente
    de 4000 filas que 4000 clientes de una fila).
    """
    counts = sizes.astype(np.intp)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    for _ in range(local_epochs):
        residual = learning.sigmoid(np.einsum("ij,ij->i", X, np.repeat(thetas, counts, axis=0))) - y
        gradient = np.add.reduceat(residual[:, None] * X, starts, axis=0)
        thetas = thetas - learning_rate * gradient / sizes[:, None]
    return thetas


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
    start = np.repeat(theta[None, :], selected.size, axis=0)
    trained = _local_descent(start, X, y, sizes, local_epochs=local_epochs, learning_rate=learning_rate)
    return trained - start, sizes


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
    return (sizes / sizes.sum()) @ updates


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
    rng = check_rng(rng)
    clients = int(owner.max()) + 1
    theta = (learning.make_initial_theta(X.shape[1]) if initial_theta is None
             else _check_theta(initial_theta, X.shape[1]).copy())
    X, y, owner = _group_by_client(X, y, owner)
    evaluate = X_test is not None
    if evaluate:
        X_test, y_test = learning._check_data(X_test, y_test)
    elif stop_accuracy is not None:
        raise ValueError("stop_accuracy necesita X_test e y_test para medir la exactitud")
    accuracies = []
    participants = 0
    for _ in range(rounds):
        selected = select_clients(clients, fraction=client_fraction, rng=rng)
        participants = selected.size
        updates, sizes = _train_selected(theta, X, y, owner, selected, local_epochs=local_epochs,
                                         learning_rate=learning_rate)
        theta = theta + average_updates(updates, sizes)
        if evaluate:
            accuracies.append(learning.accuracy(theta, X_test, y_test))
            if stop_accuracy is not None and rounds_to_reach(accuracies[-1:], stop_accuracy) is not None:
                break
    return {
        "theta": theta,
        "accuracy": np.array(accuracies) if evaluate else None,
        "participants": participants,
        "clients": clients,
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

    Usa ``learning.make_dataset`` y ``learning.train_test_split`` (con la misma
    semilla, la misma partición que las celdas del capítulo 5). Devuelve
    ``X_train``, ``X_test``, ``y_train``, ``y_test``, ``nonprivate`` (exactitud
    del modelo centralizado sin privacidad) y ``majority`` (clase mayoritaria).
    """
    X, y = learning.make_dataset(census)
    X_train, X_test, y_train, y_test = learning.train_test_split(X, y, test_fraction=test_fraction, rng=rng)
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
    curves = {"iid": np.empty((repeats, rounds)), "non_iid": np.empty((repeats, rounds))}
    participants = {}
    for repeat in range(repeats):
        owners = {"iid": split_iid(len(y), clients=clients, rng=rng), "non_iid": non_iid}
        selection = rng.integers(2**32)
        for name, owner in owners.items():
            run = train_federated(
                X, y, owner, rounds=rounds, client_fraction=client_fraction, local_epochs=local_epochs,
                rng=np.random.default_rng(selection), X_test=task["X_test"], y_test=task["y_test"],
            )
            curves[name][repeat] = run["accuracy"]
            participants[name] = run["participants"]
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
    owners = {"iid": split_iid(len(y), clients=clients, rng=rng),
              "non_iid": split_by_group(X[:, EDUCATION_COLUMN])}
    selection = rng.integers(2**32)
    found = {name: [] for name in owners}
    for epochs in grid:
        for name, owner in owners.items():
            run = train_federated(
                X, y, owner, rounds=max_rounds, client_fraction=client_fraction, local_epochs=epochs,
                rng=np.random.default_rng(selection), X_test=task["X_test"], y_test=task["y_test"],
                stop_accuracy=target,
            )
            found[name].append(rounds_to_reach(run["accuracy"], target))
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
    Referencia: Zhu, Liu y Han (2019); Phong et al. (2018), sección 3.
    """
    update = check_finite(update, name="update")
    if np.ndim(update) != 1 or np.size(update) < 2:
        raise ValueError(f"update debe ser un vector con el intercepto primero; se recibió {describe(update)}")
    if update[0] == 0:
        raise ValueError("la componente del intercepto de update es 0: no hay nada que dividir")
    return update / update[0]


def decode_features(features) -> dict:
    """Edad y nivel educativo a partir de x = (1, (edad − 40)/15, (educación − 10)/3).

    Invierte ``learning.make_features`` con sus constantes públicas.
    """
    features = check_finite(features, name="features")
    return {
        "age": learning.AGE_CENTER + learning.AGE_SCALE * float(features[AGE_COLUMN]),
        "education_num": learning.EDUCATION_CENTER + learning.EDUCATION_SCALE * float(features[EDUCATION_COLUMN]),
    }


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
    el mecanismo Gaussiano con sensibilidad L2 = S y σ = zS: (α, α/(2z²))-RDP
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
       lotes por B): el error absoluto mediano de la edad reconstruida.
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
    for size in [check_positive_int(b, name="batch_sizes") for b in batch_sizes]:
        errors = []
        for _ in range(trials if size > 1 else 1):
            rows = np.concatenate([[index], rng.choice(others, size=size - 1, replace=False)])
            batch = compute_device_update(theta, X[rows], y[rows], local_epochs=local_epochs)
            errors.append(abs(decode_features(reconstruct_features(batch))["age"] - true["age"]))
        batch_error.append(float(np.median(errors)))

    noisy = privatize_update(np.tile(update, (trials, 1)), clip_norm=clip_norm,
                             noise_multiplier=noise_multiplier, rng=rng)
    noisy_ages = learning.AGE_CENTER + learning.AGE_SCALE * noisy[:, AGE_COLUMN] / noisy[:, 0]
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
    result = []
    for x in range(1, shares + 1):
        value = 0
        for coefficient in reversed(coefficients):  # Horner, en enteros de Python (sin desborde)
            value = (value * x + int(coefficient)) % SHARE_PRIME
        result.append((x, value))
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
    values = rng.integers(0, SHARE_PRIME, size=len(pairs))
    seeds = {pair: int(value) for pair, value in zip(pairs, values)}
    # Los coeficientes de todos los polinomios de una vez (lo mismo que share_secret, par por par).
    coefficients = rng.integers(0, SHARE_PRIME, size=(len(pairs), threshold - 1)).tolist()
    shares = {pair: _evaluate_shares([seeds[pair], *row], clients) for pair, row in zip(pairs, coefficients)}
    return {"clients": clients, "threshold": threshold, "seeds": seeds, "shares": shares}


def expand_mask(seed, *, size) -> np.ndarray:
    """La máscara de una semilla: ``size`` enteros uniformes en [0, 2³²) (una "PRG").

    Los dos clientes del par generan la misma máscara desde la misma semilla.
    Aquí la PRG es el generador PCG64 de numpy: reproducible, no criptográfico.
    """
    size = check_positive_int(size, name="size")
    return np.random.default_rng(int(seed)).integers(0, MASK_MODULUS, size=size, dtype=np.int64)


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


def compute_noise_multiplier(*, epsilon, delta, rounds, accountant="sequential") -> float:
    """z = σ/S que hace (ε, δ)-DP a T rondas Gaussianas de sensibilidad S.

    * ``"sequential"``: Gaussiano clásico con ε/T y δ/T en cada ronda,
      z = √(2 ln(1,25 T/δ)) · T/ε (Dwork y Roth 2014, Teoremas A.1 y 3.16); es la
      calibración de ``learning.compute_noise_sigma`` (capítulo 5) con C = 1.
    * ``"rdp"``: el menor z (bisección, error relativo < 10⁻⁹) con el que la
      contabilidad de Rényi de ``accounting.gaussian_rdp_epsilon`` da ε
      (Mironov 2017).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    rounds = check_positive_int(rounds, name="rounds")
    if accountant == "sequential":
        return learning.compute_noise_sigma(epsilon=epsilon, delta=delta, iterations=rounds, clip_norm=1.0)
    if accountant != "rdp":
        raise ValueError(f"accountant debe ser uno de {ACCOUNTANTS}; se recibió {accountant!r}")

    def spent(z):
        return accounting.gaussian_rdp_epsilon(sigma=z, steps=rounds, delta=delta)[0]

    low, high = 1e-3, 1.0
    while spent(high) > epsilon:
        low, high = high, 2 * high
    while (high - low) > 1e-9 * high:
        middle = 0.5 * (low + high)
        low, high = (middle, high) if spent(middle) > epsilon else (low, middle)
    return high


def account_rounds(*, noise_multiplier, rounds, delta) -> dict:
    """ε de T rondas con ruido N(0, (zS)²) sobre una suma de sensibilidad S, con tres cuentas.

    Cada ronda es el mecanismo Gaussiano con σ/Δ = z; las rondas se componen
    (Dwork y Roth 2014, Teoremas 3.16 y 3.20; Mironov 2017). Devuelve
    ``sequential`` y ``advanced`` (``None`` si el Gaussiano clásico no aplica:
    ε por ronda ≥ 1), ``rdp`` (conversión clásica), ``rdp_tight`` (la de
    dp-accounting) y ``alpha``.
    """
    noise_multiplier = _check_noise_multiplier(noise_multiplier)
    rounds = check_positive_int(rounds, name="rounds")
    delta = check_delta(delta)
    noise = {"sigma": noise_multiplier, "steps": rounds, "delta": delta}
    result = {}
    for name, compute in (("sequential", accounting.gaussian_sequential_epsilon),
                          ("advanced", accounting.gaussian_advanced_epsilon)):
        try:
            result[name] = compute(**noise)
        except ValueError:  # ε por ronda ≥ 1: el Teorema A.1 no da ninguna cota
            result[name] = None
    result["rdp"], result["alpha"] = accounting.gaussian_rdp_epsilon(**noise)
    result["rdp_tight"], _ = accounting.gaussian_rdp_epsilon(**noise, conversion="tight")
    return result


def train_federated_privately(
    X,
    y,
    owner,
    *,
    rounds,
    client_fraction,
    local_epochs,
    clip_norm,
    noise_multiplier,
    rng,
    learning_rate=learning.DEFAULT_LEARNING_RATE,
    noise_radius=learning.DEFAULT_NOISE_RADIUS,
    X_test=None,
    y_test=None,
) -> dict:
    """FedAvg con privacidad diferencial sobre el agregado (DP-FedAvg).

    Fórmula, en cada ronda (McMahan et al. 2018, Algoritmo 1, pesos w_k = 1):
        Δ_k ← E pasos locales (``train_clients``), k ∈ S_t, |S_t| = m;
        θ_{t+1} = θ_t − η_s · (Σ_k clip_S(−Δ_k) + Z) / m,   Z ~ N(0, (zS)² I),
        η_s = min(1, r·m / (zS √(T d)))   (``learning.compute_step_size``).

    Garantía: cada ronda publica una suma de sensibilidad L2 = S (agregar o
    quitar un cliente la mueve a lo sumo S) con el mecanismo Gaussiano de
    σ = zS; las T rondas cuestan lo que ``account_rounds(noise_multiplier=z,
    rounds=T, …)`` dice, para la unidad que es un cliente: una persona si cada
    cliente tiene una fila, un hospital entero si tiene muchas. Los clientes
    pesan igual (con pesos n_k, uno grande movería la suma más que S) y m se
    trata como público. La selección de clientes no se aprovecha en la cuenta
    (cota válida, sin amplificación por submuestreo).

    Con una persona por cliente, C = 1, E = 1 y S = η·C es exactamente el
    descenso privado del capítulo 5 (``learning.noisy_gradient_descent``).

    Devuelve ``theta``, ``accuracy`` (por ronda o ``None``), ``sigma`` (zS),
    ``server_learning_rate`` y ``participants``.
    """
    X, y, owner = _check_task(X, y, owner)
    rounds = check_positive_int(rounds, name="rounds")
    local_epochs = check_positive_int(local_epochs, name="local_epochs")
    learning_rate = check_positive(learning_rate, name="learning_rate")
    clip_norm = check_positive(clip_norm, name="clip_norm")
    noise_multiplier = _check_noise_multiplier(noise_multiplier)
    rng = check_rng(rng)
    clients = int(owner.max()) + 1
    X, y, owner = _group_by_client(X, y, owner)
    participants = _count_participants(clients, client_fraction)
    sigma = noise_multiplier * clip_norm
    server_rate = learning.compute_step_size(sigma=sigma, n=participants, iterations=rounds,
                                             dimension=X.shape[1], learning_rate=1.0, noise_radius=noise_radius)
    theta = learning.make_initial_theta(X.shape[1])
    evaluate = X_test is not None
    if evaluate:
        X_test, y_test = learning._check_data(X_test, y_test)
    accuracies = []
    for _ in range(rounds):
        selected = select_clients(clients, fraction=client_fraction, rng=rng)
        updates, _ = _train_selected(theta, X, y, owner, selected, local_epochs=local_epochs,
                                     learning_rate=learning_rate)
        # El servidor trata −Δ_k como un gradiente (el "pseudo-gradiente" de Reddi et al. 2021):
        # la misma cuenta que sumar Δ_k, y con el signo del descenso privado del capítulo 5.
        clipped_sum = learning.clip_gradients(-updates, clip_norm=clip_norm).sum(axis=0)
        noisy_sum = mechanisms.add_gaussian_noise(clipped_sum, sigma=sigma, rng=rng)
        theta = theta - server_rate * noisy_sum / participants
        if evaluate:
            accuracies.append(learning.accuracy(theta, X_test, y_test))
    return {
        "theta": theta,
        "accuracy": np.array(accuracies) if evaluate else None,
        "sigma": sigma,
        "server_learning_rate": server_rate,
        "participants": participants,
    }


def compare_privacy_units(census, *, epsilons, rng, repeats=3, rounds=learning.DEFAULT_ITERATIONS,
                          delta=learning.DEFAULT_DELTA, clinic_size=10) -> dict:
    """Exactitud contra ε del mismo algoritmo con tres unidades de privacidad.

    Misma partición, mismo δ, las mismas T rondas de un paso local (E = 1,
    C = 1) y la misma contabilidad que el capítulo 5 (composición secuencial,
    z = ``compute_noise_multiplier``); solo cambia qué se recorta y se tapa
    con ruido:

    * ``central``: una persona. Es ``learning.noisy_gradient_descent``, el
      descenso privado del capítulo 5, que es también DP-FedAvg con un
      teléfono por persona;
    * ``clinics``: clínicas de ``clinic_size`` personas al azar
      (``train_federated_privately``, reparto IID): el ruido tapa una clínica;
    * ``hospitals``: un hospital por nivel educativo (16 clientes): el ruido
      tapa un hospital entero.

    Devuelve ``epsilons``; ``central``, ``clinics`` y ``hospitals``
    (repeticiones × ε); ``units`` (cuántas unidades hay en cada caso),
    ``nonprivate``, ``majority`` y ``noise_multipliers`` (z por ε).
    """
    rng = check_rng(rng)
    epsilons = [check_epsilon(float(e)) for e in np.atleast_1d(epsilons)]
    check_nonempty(epsilons, name="epsilons")
    repeats = check_positive_int(repeats, name="repeats")
    clinic_size = check_positive_int(clinic_size, name="clinic_size")
    task = split_census_task(census, rng=rng)
    X, y = task["X_train"], task["y_train"]
    owners = {"clinics": split_iid(len(y), clients=max(1, len(y) // clinic_size), rng=rng),
              "hospitals": split_by_group(X[:, EDUCATION_COLUMN])}
    curves = {name: np.empty((repeats, len(epsilons))) for name in ("central", "clinics", "hospitals")}
    multipliers = []
    for j, epsilon in enumerate(epsilons):
        z = compute_noise_multiplier(epsilon=epsilon, delta=delta, rounds=rounds)
        multipliers.append(z)
        for r in range(repeats):
            theta = learning.noisy_gradient_descent(X, y, epsilon=epsilon, delta=delta, iterations=rounds,
                                                    clip_norm=learning.DEFAULT_CLIP_NORM, rng=rng)
            curves["central"][r, j] = learning.accuracy(theta, task["X_test"], task["y_test"])
            for name, owner in owners.items():
                run = train_federated_privately(X, y, owner, rounds=rounds, client_fraction=1.0, local_epochs=1,
                                                clip_norm=DEFAULT_UPDATE_CLIP, noise_multiplier=z, rng=rng)
                curves[name][r, j] = learning.accuracy(run["theta"], task["X_test"], task["y_test"])
    return {
        "epsilons": np.array(epsilons),
        **curves,
        "units": {"central": len(y), **{name: int(owner.max()) + 1 for name, owner in owners.items()}},
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
    task = split_census_task(census, rng=rng)
    X, y, X_test, y_test = task["X_train"], task["y_train"], task["X_test"], task["y_test"]
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


# ------------------------------------------------------------ laboratorio --

LAB_LIMITATIONS = [
    "Agregación segura como modelo de enseñanza: sin criptografía (las máscaras salen del generador "
    "PCG64 de numpy, no de un cifrador), sin acuerdo de claves (las semillas de cada par se sortean en "
    "vez de acordarse con Diffie–Hellman), sin doble máscara ni autenticación, y con un servidor honesto "
    "pero curioso que sigue el protocolo y no se coluda con ningún cliente (Bonawitz et al. 2017 cubren "
    "todo eso).",
    "Censo sintético, no datos de hospitales: los 'hospitales' son los 16 niveles educativos del censo y "
    "las 'clínicas' grupos de 10 personas al azar; las exactitudes dependen de cómo se generó el censo.",
    "FedAvg con épocas locales de lote completo (B = ∞) sobre una regresión logística de 3 coeficientes: "
    "el daño de los datos no IID y de la deriva de cliente es mucho mayor en redes profundas.",
    "DP sobre el agregado con composición secuencial y sin amplificación por submuestreo de clientes: "
    "una cota válida pero pesimista; K, m y n se tratan como públicos, y cada cliente pesa lo mismo.",
    "La reconstrucción exacta vale para la regresión logística con una sola persona por actualización; "
    "en redes profundas el ataque de Zhu et al. (2019) es una optimización que no siempre recupera los "
    "datos exactos, lo que no vuelve privada a la actualización.",
]


def _fact(fact: str, holds: bool, **values) -> dict:
    """Un hecho del laboratorio con el formato de ``dpdeck.lab``: texto, si se cumple y sus números."""
    return {"result": "federated", "fact": fact, "holds": bool(holds), "values": values}


def _lab_fedavg(census, rng) -> tuple:
    """FedAvg = descenso centralizado con C = 1, E = 1; IID frente a no IID; el costo de E."""
    task = split_census_task(census, rng=rng)
    X, y = task["X_train"], task["y_train"]
    hospitals = split_by_group(X[:, EDUCATION_COLUMN])
    rounds = 10
    federated = train_federated(X, y, hospitals, rounds=rounds, client_fraction=1.0, local_epochs=1, rng=rng)
    centralized = learning.train_logistic(X, y, iterations=rounds)
    difference = float(np.max(np.abs(federated["theta"] - centralized)))
    splits = compare_splits(census, clients=16, client_fraction=0.25, local_epochs=5, rounds=20, rng=rng)
    worst_iid, worst_non_iid = float(splits["iid"].min()), float(splits["non_iid"].min())
    epochs = compare_local_epochs(census, epochs_grid=[1, 5], within=0.005, max_rounds=30, rng=rng)
    (iid_1, iid_5), (_, non_iid_5) = epochs["rounds_iid"], epochs["rounds_non_iid"]
    results = {
        "hospital_sizes": count_examples(hospitals),
        "equivalence_rounds": rounds,
        "equivalence_max_difference": difference,
        "splits_client_fraction": 0.25,
        "splits_local_epochs": 5,
        "splits_first_round_iid": float(splits["iid"][:, 0].mean()),
        "splits_first_round_non_iid": float(splits["non_iid"][:, 0].mean()),
        "splits_worst_round_iid": worst_iid,
        "splits_worst_round_non_iid": worst_non_iid,
        "splits_mean_iid": float(splits["iid"].mean()),
        "splits_mean_non_iid": float(splits["non_iid"].mean()),
        "splits_majority": splits["majority"],
        "epochs_target": epochs["target"],
        "epochs_rounds_iid": epochs["rounds_iid"],
        "epochs_rounds_non_iid": epochs["rounds_non_iid"],
        "nonprivate": task["nonprivate"],
        "majority": task["majority"],
    }
    evidence = [
        _fact("FedAvg con todos los clientes (C = 1), una época local (E = 1) y pesos n_k/n sobre 16 hospitales "
              "de tamaños muy distintos da, tras 10 rondas, el mismo modelo que el descenso de gradiente "
              "centralizado (diferencia máxima < 10⁻¹²).",
              difference < 1e-12, max_difference=difference, hospital_sizes=results["hospital_sizes"]),
        _fact("Con C = 0,25 y E = 5 (5 corridas de 20 rondas), en su peor ronda el reparto con un hospital por "
              "nivel educativo cae a menos de 3 puntos de la clase mayoritaria, y el reparto IID nunca baja de 5 "
              "puntos sobre ella.",
              worst_non_iid < splits["majority"] + 0.03 and worst_iid > splits["majority"] + 0.05,
              worst_round_iid=worst_iid, worst_round_non_iid=worst_non_iid, majority=splits["majority"]),
        _fact("Con datos IID, E = 5 épocas locales llegan a medio punto del modelo centralizado en a lo sumo la "
              "mitad de rondas que E = 1; con un hospital por nivel educativo, E = 5 necesita más rondas que con "
              "datos IID.",
              None not in (iid_1, iid_5, non_iid_5) and 2 * iid_5 <= iid_1 and non_iid_5 > iid_5,
              target=epochs["target"], rounds_iid=epochs["rounds_iid"], rounds_non_iid=epochs["rounds_non_iid"],
              epochs=[1, 5]),
    ]
    return results, evidence


def _lab_leakage(census, rng) -> tuple:
    """La actualización de Karen la delata; promediada o con ruido, ya no."""
    from .data import KAREN_NAME

    leak = measure_leakage(census, person=KAREN_NAME, batch_sizes=[1, 2, 10, 100], noise_multiplier=1.0,
                           trials=200, rng=rng)
    true, alone = leak["true"], leak["alone"]
    results = {
        "person": KAREN_NAME,
        "true": true,
        "reconstructed": alone,
        "reconstruction_error": leak["alone_error"],
        "batch_sizes": leak["batch_sizes"],
        "batch_median_age_error": leak["batch_error"],
        "noise_multiplier": leak["noise_multiplier"],
        "clip_norm": leak["clip_norm"],
        "noisy_median_age_error": leak["noisy_error"],
    }
    evidence = [
        _fact("De la actualización que envía el teléfono de Karen (solo sus datos) el servidor reconstruye su "
              "edad y su nivel educativo (error < 10⁻⁹) y su ingreso alto (el signo de ∇b).",
              leak["alone_error"] < 1e-9 and alone["high_income"] == true["high_income"],
              true=true, reconstructed=alone, error=leak["alone_error"]),
        _fact("Promediada con otras 99 personas, la misma reconstrucción yerra la edad de Karen en más de 5 años "
              "(mediana de 200 lotes).",
              leak["batch_error"][-1] > 5, median_age_error=float(leak["batch_error"][-1]), batch_size=100),
        _fact("Recortada a norma S = 4 y con ruido Gaussiano de σ = zS, z = 1, la edad reconstruida yerra en más "
              "de 5 años (mediana de 200 intentos).",
              leak["noisy_error"] > 5, median_age_error=leak["noisy_error"], noise_multiplier=1.0,
              clip_norm=leak["clip_norm"]),
    ]
    return results, evidence


def _lab_secure_aggregation(census, rng, *, clients=5, threshold=3, rounds=200) -> tuple:
    """Las máscaras se cancelan en la suma, una vista sola es uniforme, y un cliente caído se recupera."""
    task = split_census_task(census, rng=rng)
    owner = split_iid(len(task["y_train"]), clients=clients, rng=rng)
    updates, _ = train_clients(learning.make_initial_theta(), task["X_train"], task["y_train"], owner,
                               selected=np.arange(clients), local_epochs=1)
    full = run_secure_aggregation(updates, threshold=threshold, rng=rng)
    encoded_sum = np.mod(sum(encode_fixed_point(row) for row in updates), MASK_MODULUS)
    masked_sum = np.mod(encode_fixed_point(full["secure_sum"]), MASK_MODULUS)
    dropout = run_secure_aggregation(updates, threshold=threshold, rng=rng, dropped=[clients - 1])
    naive_error = float(np.max(np.abs(dropout["naive_sum"] - dropout["survivors_sum"])))
    recovered_error = float(np.max(np.abs(dropout["recovered_sum"] - dropout["survivors_sum"])))
    # Una vista sola: la primera componente enmascarada del cliente 0, con dos datos muy distintos.
    views = {}
    for name, value in (("cero", 0.0), ("mil", 1000.0)):
        update = np.array([value])
        draws = [mask_update(update, client=0, setup=setup_secure_aggregation(clients, threshold=threshold, rng=rng))[0]
                 for _ in range(rounds)]
        views[name] = float(np.mean(draws)) / MASK_MODULUS
    # Uniforme en [0, 1): media 1/2, desviación 1/√12; error estándar de la media 1/√(12·rondas).
    standard_error = 1 / math.sqrt(12 * rounds)
    secret = int(rng.integers(SHARE_PRIME))
    parts = share_secret(secret, shares=clients, threshold=threshold, rng=rng)
    results = {
        "clients": clients,
        "threshold": threshold,
        "true_sum": full["true_sum"],
        "secure_sum": full["secure_sum"],
        "naive_sum_with_dropout": dropout["naive_sum"],
        "recovered_sum_with_dropout": dropout["recovered_sum"],
        "survivors_sum": dropout["survivors_sum"],
        "view_mean_over_modulus": views,
        "view_rounds": rounds,
    }
    evidence = [
        _fact("La suma de las 5 actualizaciones enmascaradas es exactamente la suma de las actualizaciones "
              "codificadas (enteros módulo 2³²): las máscaras por pares se cancelan.",
              bool(np.array_equal(masked_sum, encoded_sum)),
              max_difference=float(np.max(np.abs(full["secure_sum"] - full["true_sum"])))),
        _fact("Una actualización enmascarada sola es uniforme sea cual sea el dato: con el dato 0 y con el dato "
              "1000, la media de 200 vistas queda a menos de 5 errores estándar de la mitad del rango.",
              all(abs(mean - 0.5) < 5 * standard_error for mean in views.values()),
              means=views, standard_error=standard_error),
        _fact("Si un cliente se cae a mitad de ronda, la suma sin quitar sus máscaras se aleja más de 1000 de la "
              "real; con las partes de Shamir de 3 sobrevivientes se recupera exacta (error < 10⁻⁴), y con 2 "
              "partes el secreto no se reconstruye.",
              naive_error > 1000 and recovered_error < 1e-4 and reconstruct_secret(parts[:threshold]) == secret
              and reconstruct_secret(parts[: threshold - 1]) != secret,
              naive_error=naive_error, recovered_error=recovered_error),
    ]
    return results, evidence


def _lab_private_aggregate(census, rng, *, delta=learning.DEFAULT_DELTA, rounds=learning.DEFAULT_ITERATIONS) -> tuple:
    """DP sobre el agregado: la cuenta de las rondas, la unidad protegida y quién paga el ruido."""
    z = compute_noise_multiplier(epsilon=1.0, delta=delta, rounds=rounds)
    spent = account_rounds(noise_multiplier=z, rounds=rounds, delta=delta)
    z_rdp = compute_noise_multiplier(epsilon=1.0, delta=delta, rounds=rounds, accountant="rdp")
    task = split_census_task(census, rng=rng)
    X, y = task["X_train"], task["y_train"]
    seed = int(rng.integers(2**32))
    phones = train_federated_privately(X, y, np.arange(len(y)), rounds=rounds, client_fraction=1.0, local_epochs=1,
                                       clip_norm=DEFAULT_UPDATE_CLIP, noise_multiplier=z,
                                       rng=np.random.default_rng(seed))
    central = learning.noisy_gradient_descent(X, y, epsilon=1.0, delta=delta, iterations=rounds,
                                              clip_norm=learning.DEFAULT_CLIP_NORM, rng=np.random.default_rng(seed))
    same_model = float(np.max(np.abs(phones["theta"] - central)))
    units = compare_privacy_units(census, epsilons=[5.0], rng=rng, repeats=3, rounds=rounds, delta=delta)
    central_5, hospitals_5 = float(units["central"].mean()), float(units["hospitals"].mean())
    groups = measure_subgroup_accuracy(census, epsilon=0.3, rng=rng)
    loss = groups["nonprivate"] - groups["private"]
    loss_total = float(loss[-1])
    top = [groups["groups"].index("licenciatura"), groups["groups"].index("posgrado")]  # ingreso alto: ≥ 50 %
    loss_top = float(np.sum(groups["sizes"][top] * loss[top]) / np.sum(groups["sizes"][top]))
    results = {
        "delta": delta,
        "rounds": rounds,
        "noise_multiplier_sequential_epsilon_1": z,
        "noise_multiplier_rdp_epsilon_1": z_rdp,
        "epsilon_sequential": spent["sequential"],
        "epsilon_advanced": spent["advanced"],
        "epsilon_rdp": spent["rdp"],
        "epsilon_rdp_tight": spent["rdp_tight"],
        "phones_equal_central_max_difference": same_model,
        "units": units["units"],
        "unit_epsilons": units["epsilons"],
        "accuracy_central": units["central"].mean(axis=0),
        "accuracy_clinics": units["clinics"].mean(axis=0),
        "accuracy_hospitals": units["hospitals"].mean(axis=0),
        "subgroup_epsilon": groups["epsilon"],
        "subgroups": groups["groups"],
        "subgroup_sizes": groups["sizes"],
        "subgroup_nonprivate": groups["nonprivate"],
        "subgroup_private": groups["private"],
    }
    closed_form = rounds / (2 * z**2) + 2 * math.sqrt(rounds / (2 * z**2) * math.log(1 / delta))
    evidence = [
        _fact("Con el ruido que da ε = 1 en 10 rondas por composición secuencial, la contabilidad de Rényi da "
              "menos de la mitad (la fórmula cerrada ρ + 2√(ρ ln(1/δ)), ρ = T/(2z²)), y la composición avanzada, "
              "pensada para miles de pasos, da más que la secuencial.",
              None not in (spent["sequential"], spent["advanced"]) and abs(spent["sequential"] - 1.0) < 1e-9
              and spent["rdp"] < 0.5 < spent["sequential"] < spent["advanced"]
              and abs(spent["rdp"] / closed_form - 1) < 1e-9,
              noise_multiplier=z, sequential=spent["sequential"], advanced=spent["advanced"], rdp=spent["rdp"]),
        _fact("DP-FedAvg con un teléfono por persona, C = 1, E = 1 y S = η·C = 4 es el descenso privado del "
              "capítulo 5: con la misma semilla, el mismo modelo (diferencia < 10⁻⁹).",
              same_model < 1e-9, max_difference=same_model),
        _fact("Con ε = 5 en 10 rondas, proteger a cada persona deja la exactitud a menos de 2 puntos del modelo sin "
              "privacidad; proteger a cada uno de 16 hospitales cuesta más de 5 puntos (3 modelos de cada uno).",
              central_5 >= units["nonprivate"] - 0.02 and hospitals_5 < units["nonprivate"] - 0.05,
              central=central_5, hospitals=hospitals_5, nonprivate=units["nonprivate"], majority=units["majority"]),
        _fact("Con ε = 0,3 el modelo privado pierde en total menos de 7 puntos de exactitud, y quienes tienen "
              "licenciatura o posgrado (cerca de un cuarto de la base, con ingreso alto la mitad o más) pierden al "
              "menos el doble que el total, y más de 1 punto.",
              loss_total < 0.07 and loss_top >= 2 * loss_total and loss_top > 0.01,
              loss_total=loss_total, loss_licenciatura_posgrado=loss_top, sizes=groups["sizes"]),
    ]
    return results, evidence


def run_lab_chapter(census, rng) -> tuple:
    """El capítulo 6 en el laboratorio: (resultados, hechos), con el contrato de ``dpdeck.lab``.

    Cuatro partes, cada una con su propio generador derivado de ``rng``:
    FedAvg, fugas por gradientes, agregación segura y DP sobre el agregado.
    Cada hecho es una medición que una implementación equivocada haría falsa;
    las limitaciones del capítulo están en ``LAB_LIMITATIONS``.
    """
    rng = check_rng(rng)
    parts = (("fedavg", _lab_fedavg), ("leakage", _lab_leakage),
             ("secure_aggregation", _lab_secure_aggregation), ("private_aggregate", _lab_private_aggregate))
    results, evidence = {}, []
    for (name, part), child in zip(parts, rng.spawn(len(parts))):
        part_results, part_evidence = part(census, child)
        results[name] = part_results
        evidence.extend(part_evidence)
    return results, evidence
