"""DP-FedAvg: privacidad diferencial sobre el agregado, por cliente.

McMahan, Ramage, Talwar y Zhang (2018), "Learning Differentially Private
Recurrent Language Models", ICLR. Bases vecinas agregan o quitan un cliente, así
que el número de clientes K también es un dato y se estima en privado con el
5 % de ε; cada actualización se recorta a norma L2 ≤ S, el servidor suma ruido
N(0, (zS)² I) a la suma y divide por un denominador fijo, los clientes
esperados por ronda C·K̂; el libro de cuentas (``accounting.PrivacyLedger``)
anota el conteo y las T sumas. Todo el ruido lo muestrea ``dpdeck.mechanisms``.

La contabilidad no aprovecha la amplificación por submuestreo de clientes:
cuenta cada ronda como si participaran todos (una cota válida, más pesimista).
"""

from __future__ import annotations

import copy

import numpy as np

from .. import learning, mechanisms
from .._checks import (
    check_epsilon,
    check_fraction,
    check_nonempty,
    check_positive,
    check_positive_int,
    check_rng,
)
from .averaging import _client_updates, _group_by_client, split_census_task
from .clients import DEFAULT_UPDATE_CLIP, EDUCATION_COLUMN, _check_task, split_by_group, split_iid


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
                     learning_rate, count_share, noise_radius, repeats, ledger=None, server_step=None,
                     add_noise=True, trace=None):
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

    ``server_step`` (un número) reemplaza la regla del paso por un paso
    público fijo. ``add_noise=False`` es el contrafactual sin ruido: el ruido
    se sortea igual (el azar de K̂, de la selección y de las rondas no se
    mueve) pero no se suma; lo que sale no es privado. Con ``trace`` (un
    diccionario) deja ahí lo que publicó cada ronda: ``released`` (la suma
    con ruido, ε × corridas × T × d) y ``thetas`` (el modelo antes de cada
    ronda y el final, ε × corridas × (T + 1) × d).
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
    if server_step is not None:
        steps = np.full_like(steps, check_positive(server_step, name="server_step"))
    runs = len(epsilons) * repeats
    sizes = np.bincount(owner, minlength=clients).astype(float)
    thetas = np.repeat(learning.make_initial_theta(dimension)[None, :], runs, axis=0)
    scale = (steps / (client_fraction * estimated)).reshape(runs, 1)
    one_row_each = local_epochs == 1 and clients == X.shape[0]
    row_norms = np.linalg.norm(X, axis=1)
    distinct = features, where = learning._distinct_rows(X)  # σ once per distinct row: the same numbers
    released, history = [], [thetas]
    for _ in range(rounds):
        # El servidor trata −Δ_k como un gradiente (el «pseudogradiente» de Reddi et al. 2021): el
        # signo del descenso privado del capítulo 5.
        if one_row_each:
            # Una persona por cliente y un paso local: −Δ_k = η(σ(x_k·θ) − y_k)·x_k, un número por x_k.
            # Su norma es ese número por ‖x_k‖ y el recorte es un factor, como en el capítulo 5: la
            # suma recortada sale de un producto, sin formar una matriz por cliente.
            weights = learning_rate * (learning.sigmoid(thetas @ features.T).take(where, axis=1) - y)
            weights = weights * np.minimum(1.0, clip_norm / np.maximum(np.abs(weights) * row_norms, 1e-300))
            clipped = weights.reshape(len(epsilons), repeats, clients)
        else:
            updates = _client_updates(thetas, X, y, sizes, local_epochs=local_epochs, learning_rate=learning_rate,
                                      distinct=distinct)
            clipped = _clip_rows(-updates, clip_norm).reshape(len(epsilons), repeats, clients, dimension)
        noisy_sums = []
        for index, sigma in enumerate(sigmas):
            chosen = clipped[index]
            if client_fraction < 1:
                mask = _select_poisson(rng, (repeats, clients), client_fraction)
                chosen = chosen * (mask if one_row_each else mask[:, :, None])
            total = chosen @ X if one_row_each else np.einsum("rkd->rd", chosen)
            noisy = mechanisms.add_gaussian_noise(total, sigma=float(sigma), rng=rng)
            noisy_sums.append(noisy if add_noise else total)
        released.append(np.concatenate(noisy_sums))
        thetas = thetas - scale * released[-1]
        history.append(thetas)
    if trace is not None:
        shape = (len(epsilons), repeats, rounds + 1, dimension)
        trace["released"] = np.stack(released, axis=1).reshape(shape[0], shape[1], rounds, dimension)
        trace["thetas"] = np.stack(history, axis=1).reshape(shape)
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
    server_step=None,
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

    ``server_step`` (opcional) es un paso del servidor público y fijo en vez
    de la regla de ``calibrate_rounds``: no mira los datos, así que la
    garantía no cambia.

    Devuelve ``theta``, ``sigma`` (σ = zS), ``noise_multiplier`` (z),
    ``estimated_clients`` (K̂), ``server_learning_rate`` (η_s), ``clients``
    (K) y, ronda a ronda, ``released_sums`` (lo que publica cada ronda: la
    suma recortada con su ruido, T × d) y ``thetas_by_round`` (el modelo que
    recibe cada ronda y el final, (T + 1) × d).
    """
    X, y, owner = _check_task(X, y, owner)
    rounds = check_positive_int(rounds, name="rounds")
    local_epochs = check_positive_int(local_epochs, name="local_epochs")
    learning_rate = check_positive(learning_rate, name="learning_rate")
    clip_norm = check_positive(clip_norm, name="clip_norm")
    client_fraction = check_fraction(client_fraction, name="client_fraction")
    rng = check_rng(rng)
    trace = {}
    thetas, sigmas, estimated, steps = _train_privately(
        _group_by_client(X, y, owner), epsilons=[epsilon], delta=delta, rounds=rounds,
        client_fraction=client_fraction, local_epochs=local_epochs, clip_norm=clip_norm, rng=rng,
        learning_rate=learning_rate, count_share=count_share, noise_radius=noise_radius, repeats=1, ledger=ledger,
        server_step=server_step, trace=trace,
    )
    return {
        "theta": thetas[0, 0],
        "sigma": float(sigmas[0]),
        "noise_multiplier": float(sigmas[0]) / clip_norm,
        "estimated_clients": float(estimated[0, 0]),
        "server_learning_rate": float(steps[0, 0]),
        "clients": int(owner.max()) + 1,
        "released_sums": trace["released"][0, 0],
        "thetas_by_round": trace["thetas"][0, 0],
    }


def compare_noise_and_step(task, owner, *, epsilon, rng, repeats=5, server_step=1.0,
                           rounds=learning.DEFAULT_ITERATIONS, delta=learning.DEFAULT_DELTA) -> dict:
    """¿El ruido o el paso? DP-FedAvg contra su contrafactual sin ruido, con la regla del paso y con un paso fijo.

    Cuatro entrenamientos de ``repeats`` corridas cada uno, con C = 1, E = 1 y
    S = η·C sobre los clientes de ``owner`` (la partición de
    ``split_census_task`` en ``task``):

    * ``private``: DP-FedAvg tal cual (``train_federated_privately``);
    * ``control``: las mismas corridas, con el mismo azar (K̂, paso), sin
      sumar el ruido. No es privado: mide qué hace el paso solo;
    * ``private_fixed_step`` y ``control_fixed_step``: lo mismo con un paso
      del servidor público ``server_step`` en vez de la regla.

    Con pocos clientes (16 hospitales) la regla η_s = min(1, r·K̂/(σ√(Td)))
    da un paso tan corto que el modelo no sale de la clase mayoritaria, con
    ruido o sin él; con un paso de 1, el control aprende y el ruido se lo
    impide. Devuelve la exactitud de prueba de cada corrida (cuatro arreglos),
    ``steps`` (η_s de la regla, por corrida), ``sigma``, ``server_step``,
    ``nonprivate``, ``majority`` y, de las corridas privadas, ``released``
    y ``thetas`` (la traza de ``_train_privately``: regla y paso fijo, en ese orden).
    """
    rng = check_rng(rng)
    repeats = check_positive_int(repeats, name="repeats")
    X, y = task["X_train"], task["y_train"]
    grouped = _group_by_client(X, y, check_nonempty(np.asarray(owner), name="owner"))
    seed = int(rng.integers(2**32))
    runs, traces = {}, []
    for name, step, noise in (("private", None, True), ("control", None, False),
                              ("private_fixed_step", server_step, True), ("control_fixed_step", server_step, False)):
        trace = {}
        thetas, sigmas, _, steps = _train_privately(
            grouped, epsilons=[epsilon], delta=delta, rounds=rounds, client_fraction=1.0, local_epochs=1,
            clip_norm=DEFAULT_UPDATE_CLIP, rng=np.random.default_rng(seed), learning_rate=learning.DEFAULT_LEARNING_RATE,
            count_share=learning.DEFAULT_COUNT_SHARE, noise_radius=learning.DEFAULT_NOISE_RADIUS, repeats=repeats,
            server_step=step, add_noise=noise, trace=trace,
        )
        runs[name] = np.mean((task["X_test"] @ thetas[0].T > 0) == (task["y_test"][:, None] == 1), axis=0)
        if noise:
            traces.append(trace)
        if name == "private":
            rule_steps = steps[0]
    return {
        **runs,
        "steps": rule_steps,
        "sigma": float(sigmas[0]),
        "server_step": float(server_step),
        "nonprivate": task["nonprivate"],
        "majority": task["majority"],
        "released": np.concatenate([trace["released"][0] for trace in traces]),
        "thetas": np.concatenate([trace["thetas"][0] for trace in traces]),
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

    Con poco presupuesto el paso del descenso privado, que se achica con σ
    (``learning.compute_step_size``), deja al modelo cerca de su punto de
    partida, la respuesta de la mayoría ("ingreso bajo"): la exactitud total
    apenas baja, pero los grupos pequeños cuya respuesta típica es otra
    (posgrados, licenciados) pagan casi todo el costo. Es el impacto dispar de
    Bagdasaryan, Poursaeed y Shmatikov (2019), "Differential Privacy Has
    Disparate Impact on Model Accuracy", NeurIPS; aquí lo produce sobre todo
    el paso corto, no el ruido de media cero: sin ruido y con el mismo paso la
    brecha es casi la misma. Su tamaño depende de la partición.

    Misma partición que el capítulo 5 (``split_census_task``); ``repeats``
    modelos privados con ``learning.noisy_gradient_descent``. Devuelve una
    tabla con una fila por grupo y una última fila ``"total"``: ``groups``
    (nombres), ``sizes`` (personas de prueba), ``high_income_rate``,
    ``nonprivate``, ``private`` (exactitud; la privada, media de las
    repeticiones) y ``control``: la de las mismas corridas sin ruido, con el
    mismo n̂ y el mismo paso (``learning.train_noise_free_control``), que
    separa lo que hace el paso de lo que hace el ruido.
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
    private_correct, control_correct = np.zeros(len(y_test)), np.zeros(len(y_test))
    for _ in range(repeats):
        # The control replays this run's draws (n̂, σ, η) from a copy of the generator, without the noise.
        control = learning.train_noise_free_control(X, y, epsilon=epsilon, delta=delta, iterations=iterations,
                                                    clip_norm=learning.DEFAULT_CLIP_NORM, rng=copy.deepcopy(rng))
        theta = learning.noisy_gradient_descent(X, y, epsilon=epsilon, delta=delta, iterations=iterations,
                                                clip_norm=learning.DEFAULT_CLIP_NORM, rng=rng)
        private_correct += (X_test @ theta > 0) == (y_test == 1)
        control_correct += (X_test @ control > 0) == (y_test == 1)
    private_correct /= repeats
    control_correct /= repeats
    return {
        "groups": [name for name, _, _ in bands] + ["total"],
        "sizes": np.array([int(member.sum()) for member in members]),
        "high_income_rate": np.array([float(y_test[member].mean()) for member in members]),
        "nonprivate": np.array([float(correct[member].mean()) for member in members]),
        "private": np.array([float(private_correct[member].mean()) for member in members]),
        "control": np.array([float(control_correct[member].mean()) for member in members]),
        "epsilon": epsilon,
    }
