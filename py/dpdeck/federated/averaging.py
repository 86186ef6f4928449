"""FedAvg: cada ronda, una fracción C de los clientes entrena E épocas locales y el servidor promedia.

McMahan, Moore, Ramage, Hampson y Agüera y Arcas (2017), "Communication-Efficient
Learning of Deep Networks from Decentralized Data", AISTATS, Algoritmo 1. El
servidor promedia los modelos con pesos n_k/n; cada época local es un paso de
descenso de gradiente de lote completo (B = ∞ en la notación del artículo).
También los experimentos del capítulo: IID contra no IID (``compare_splits``) y
las épocas locales (``compare_local_epochs``).
"""

from __future__ import annotations

import numpy as np

from .. import learning
from .._checks import (
    check_dataset,
    check_finite,
    check_fraction,
    check_nonempty,
    check_positive,
    check_positive_int,
    check_rng,
    describe,
)
from .clients import EDUCATION_COLUMN, _check_task, _check_theta, count_examples, split_by_group, split_iid


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
        return np.arange(clients, dtype=np.intp)
    # Índices np.intp (clients.py dice por qué): Generator.choice los da int64 siempre, y en
    # Pyodide (wasm32) np.bincount se niega a contar int64.
    return np.sort(rng.choice(clients, size=chosen, replace=False)).astype(np.intp)


def _block_starts(sizes) -> np.ndarray:
    """Primera fila de cada cliente cuando las filas vienen agrupadas por cliente."""
    counts = np.asarray(sizes).astype(np.intp)
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.intp)


def _sum_by_client(rows, sizes, starts):
    """Σ por bloques de filas consecutivas (un bloque por cliente) en la penúltima dimensión."""
    if starts.size == rows.shape[-2]:  # un dato por cliente: no hay nada que sumar
        return rows
    return np.add.reduceat(rows, starts, axis=-2)


def _local_descent(thetas, X, y, sizes, *, local_epochs, learning_rate, distinct=None):
    """E pasos de descenso de gradiente de lote completo en todos los clientes a la vez.

    Las filas de ``X`` e ``y`` vienen ordenadas por cliente (``sizes[k]`` filas
    del cliente k) y ``thetas`` tiene una fila por cliente en su penúltima
    dimensión (antes puede haber una de corridas independientes). El
    gradiente del cliente k es (1/n_k) Σ_{i ∈ k} (σ(xᵢ·θ_k) − yᵢ) xᵢ, el
    promedio de las filas de ``learning.compute_gradients`` sobre sus datos;
    ``np.add.reduceat`` suma cada bloque sin recorrer los clientes uno por uno
    (igual cuesta un cliente de 4000 filas que 4000 clientes de una fila).

    ``distinct`` (opcional) es (las filas distintas de cada cliente, en orden
    de cliente; cuántas tiene cada uno; cuál es cada fila de ``X``): los
    márgenes xᵢ·θ_k y σ se calculan una vez por fila distinta de cada cliente,
    con los mismos números (``_client_entries``).
    """
    counts = sizes.astype(np.intp)
    starts = _block_starts(sizes)
    rows, row_counts, where = (X, counts, None) if distinct is None else distinct
    for _ in range(local_epochs):
        margins = np.einsum("...ij,ij->...i", np.repeat(thetas, row_counts, axis=-2), rows)
        residual = (learning.sigmoid(margins) if where is None else learning.sigmoid(margins).take(where, axis=-1)) - y
        gradient = _sum_by_client(residual[..., None] * X, sizes, starts)
        thetas = thetas - learning_rate * gradient / sizes[:, None]
    return thetas


def _client_updates(theta, X, y, sizes, *, local_epochs, learning_rate, distinct=None):
    """Δ_k = θ_k − θ de cada cliente tras E pasos locales desde el mismo modelo global θ.

    ``theta`` es un modelo (d) o uno por corrida (corridas × d); devuelve
    (…, clientes, d). La primera época parte del mismo θ para todos, así que
    sus márgenes salen de un solo producto θ·Xᵀ y el paso −η/n_k entra fila
    por fila antes de sumar cada bloque; las demás épocas siguen a cada
    cliente por su cuenta (``_local_descent``). Quien llama ronda tras ronda
    con las mismas filas pasa ``distinct = learning._distinct_rows(X)``: σ se
    calcula una vez por fila distinta (en el censo, un sexto de las filas), con
    los mismos números.
    """
    starts = _block_starts(sizes)
    if distinct is None:  # a single call: finding the distinct rows would cost more than it saves
        residual = learning.sigmoid(np.matmul(theta, X.T)) - y
    else:
        rows, where = distinct
        residual = learning.sigmoid(np.matmul(theta, rows.T)).take(where, axis=-1) - y
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
    return X.take(order, axis=0), y.take(order), owner.take(order)   # take: a fourth of fancy indexing's time


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
    misma voz que a uno de 1274 (los extremos de la partición de
    entrenamiento del censo, un hospital por nivel educativo).
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


def _client_entries(X, row_of, client_of_row, clients) -> dict:
    """Las filas distintas de cada cliente: lo que ``_local_descent`` calcula una vez por fila.

    ``row_of`` dice qué fila de ``X`` es cada una de las filas apiladas y
    ``client_of_row`` de qué cliente es (en orden de cliente). Devuelve
    ``rows`` (cada fila distinta de cada cliente, en orden de cliente),
    ``client`` (su cliente), ``counts`` (cuántas tiene cada cliente) y
    ``of_row`` (cuál es cada fila apilada). Con un hospital por nivel
    educativo, las 4000 filas del censo son 639 por cliente; con 16 clientes
    al azar, unas 2600.
    """
    distinct, where = learning._distinct_rows(X)
    keys, of_row = np.unique(client_of_row * len(distinct) + where.take(row_of), return_inverse=True)
    client = keys // len(distinct)
    return {"rows": distinct.take(keys % len(distinct), axis=0), "client": client,
            "counts": np.bincount(client, minlength=clients), "of_row": of_row.reshape(-1)}


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
    (corridas × rondas, o ``None``), ``participants`` (m de cada corrida) y
    ``selections`` (por corrida, la lista de los clientes elegidos en cada ronda).
    """
    runs = len(owners)
    clients = np.array([int(owner.max()) + 1 for owner in owners])
    offsets = np.concatenate([[0], np.cumsum(clients)[:-1]]).astype(np.intp)
    client_of_row = np.concatenate([owner + offset for owner, offset in zip(owners, offsets)])
    order = np.argsort(client_of_row, kind="stable")
    # take, not fancy or boolean indexing: the same rows, in a fraction of the time (every round).
    rows_X, rows_y = np.tile(X, (runs, 1)).take(order, axis=0), np.tile(y, runs).take(order)
    client_of_row = client_of_row.take(order)
    all_sizes = np.bincount(client_of_row, minlength=int(clients.sum())).astype(float)
    entries = _client_entries(X, order % len(X), client_of_row, all_sizes.size)
    run_of_client = np.repeat(np.arange(runs), clients)
    thetas = np.repeat(np.asarray(theta, dtype=float)[None, :], runs, axis=0)
    evaluate = X_test is not None
    accuracies = []
    participants = np.zeros(runs, dtype=np.intp)
    selections = [[] for _ in range(runs)]
    for _ in range(rounds):
        chosen = [select_clients(int(k), fraction=client_fraction, rng=generator) for k, generator in zip(clients, rngs)]
        participants = np.array([selected.size for selected in chosen])
        for run, selected in zip(selections, chosen):
            run.append(selected)
        chosen = np.concatenate([selected + offset for selected, offset in zip(chosen, offsets)])
        if chosen.size == all_sizes.size:  # todos participan: sin copiar filas
            X_round, y_round, sizes = rows_X, rows_y, all_sizes
            distinct = entries["rows"], entries["counts"], entries["of_row"]
        else:
            keep = np.zeros(all_sizes.size, dtype=bool)
            keep[chosen] = True
            rows = np.flatnonzero(keep.take(client_of_row))
            X_round, y_round, sizes = rows_X.take(rows, axis=0), rows_y.take(rows), all_sizes[chosen]
            kept = keep.take(entries["client"])
            distinct = (entries["rows"].take(np.flatnonzero(kept), axis=0), entries["counts"][chosen],
                        (np.cumsum(kept) - 1).take(entries["of_row"].take(rows)))
        start = thetas[run_of_client[chosen]]
        updates = _local_descent(start, X_round, y_round, sizes, local_epochs=local_epochs,
                                 learning_rate=learning_rate, distinct=distinct) - start
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
        "selections": selections,
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
    ``selections`` (los clientes de cada ronda, repeticiones × rondas × m:
    los mismos en los dos repartos), ``nonprivate`` y ``majority``.
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
        "selections": np.array(run["selections"][1::2]),
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
