"""El capítulo 6 (aprendizaje federado) en el laboratorio: sus resultados, su evidencia y sus limitaciones.

``run_lab_chapter(census, rng)`` es el paso ``"federated"`` de
``dpdeck.lab.STEPS`` y devuelve ``(resultados, hechos)`` con el contrato de
``dpdeck.lab``: cuatro partes (FedAvg, fugas por gradientes, agregación
segura y DP sobre el agregado), cada una con su propio generador derivado de
``rng``. Los experimentos con figura son los de la clase
(``dpdeck.experiments``), con el generador del laboratorio.

Cada hecho es una medición que una implementación equivocada haría falsa
(tests/py/lab/test_sabotage.py rompe la implementación y ve caer cada uno; la
tabla de README.md dice qué rotura atrapa cada hecho). Los que miden ruido lo
comparan con una cuenta sin ruido recalculada aparte, con pruebas de
``dpdeck.audits`` de falsa alarma ≤ 10⁻⁶; los resultados que dependen del paso
del servidor se contrastan con un contrafactual sin ruido. Sus textos siguen
la regla de números del mazo (``dpdeck.numbers``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import accounting, experiments, learning
from .._checks import check_rng
from ..audits import (
    DEFAULT_FALSE_ALARM,
    binomial_bounds,
    chi_square_bounds,
    distance_bound,
    normal_bound,
    occupancy_bound,
    uniform_distance,
)
from ..data import KAREN_NAME
from ..federated import (
    DEFAULT_UPDATE_CLIP,
    EDUCATION_COLUMN,
    MASK_MODULUS,
    SHARE_PRIME,
    compare_noise_and_step,
    count_examples,
    encode_fixed_point,
    mask_update,
    measure_leakage,
    measure_subgroup_accuracy,
    reconstruct_secret,
    run_secure_aggregation,
    setup_secure_aggregation,
    share_secret,
    split_by_group,
    split_census_task,
    split_iid,
    train_clients,
    train_federated,
    train_federated_privately,
)
from ..numbers import format_number

__all__ = ["STEP", "LAB_LIMITATIONS", "run_lab_chapter"]

STEP = "federated"
"""El nombre del paso en ``dpdeck.lab.STEPS`` y en el campo ``result`` de sus hechos."""

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
    "DP sobre el agregado por cliente, con composición secuencial y sin amplificación por submuestreo de "
    "clientes: una cota válida pero pesimista. El número de clientes se estima en privado con el 5 % de ε "
    "y cada ronda divide por un denominador fijo (los clientes esperados); cada cliente pesa lo mismo. La "
    "garantía es para agregar o quitar un cliente entero: cambiar a una persona dentro de una clínica o de "
    "un hospital es reemplazar ese cliente, dos pasos que cuestan como un grupo de dos.",
    "La reconstrucción exacta vale para la regresión logística con una sola persona por actualización; "
    "en redes profundas el ataque de Zhu et al. (2019) es una optimización que no siempre recupera los "
    "datos exactos, lo que no vuelve privada a la actualización.",
]


def _fact(fact: str, holds: bool, **values) -> dict:
    """Un hecho con el formato de ``dpdeck.lab``: su paso, el texto, si se cumple y sus números."""
    return {"result": STEP, "fact": fact, "holds": bool(holds), "values": values}


def _release_epsilon(release) -> float:
    """ε de una publicación del libro, o infinito si su ruido no alcanza para el teorema clásico."""
    try:
        return release.epsilon
    except ValueError:
        return math.inf


def _release_rows(ledger) -> list:
    return [{"what": r.what, "mechanism": r.mechanism, "sensitivity": r.sensitivity, "noise": r.noise,
             "epsilon": _release_epsilon(r), "delta": r.delta, "count": r.count} for r in ledger.releases]


# ------------------------------------------------------- pruebas de la evidencia --

FALSE_ALARM = DEFAULT_FALSE_ALARM
"""Cada prueba estadística de este capítulo falla con una implementación correcta con probabilidad ≤ 10⁻⁶."""


def _noise_matches(residuals, sigma) -> dict:
    """¿Es ``residuals`` ruido N(0, σ²) independiente? La χ² de Σ r²/σ² y la media de cada coordenada.

    Con n residuos de N(0, σ²), Σ r²/σ² es una χ² con n grados de libertad
    (``chi_square_bounds``) y la media de cada coordenada, por √m/σ, una
    normal estándar (``normal_bound``, repartiendo la falsa alarma entre las
    coordenadas). Devuelve si pasa y sus números.
    """
    residuals = np.asarray(residuals, dtype=float).reshape(-1, np.shape(residuals)[-1])
    rows, columns = residuals.shape
    low, high = chi_square_bounds(residuals.size, false_alarm=FALSE_ALARM)
    chi_square = float(np.sum((residuals / sigma) ** 2))
    worst_mean = float(np.max(np.abs(residuals.mean(axis=0))) * math.sqrt(rows) / sigma)
    limit = normal_bound(false_alarm=FALSE_ALARM / columns)
    return {"holds": low <= chi_square <= high and worst_mean <= limit,
            "variance_ratio": chi_square / residuals.size, "variance_ratio_bounds": [low / residuals.size,
                                                                                  high / residuals.size],
            "worst_mean_in_standard_errors": worst_mean, "mean_limit": limit, "values": int(residuals.size)}


def _clip(updates, clip_norm):
    """Cada fila llevada a norma L2 ≤ S (recalculado aquí, sin el código que se audita)."""
    norms = np.linalg.norm(updates, axis=-1, keepdims=True)
    return updates * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))


# ------------------------------------------------------------------ partes --


def measure_fedavg(census, rng) -> tuple:
    """FedAvg = descenso centralizado con C = 1, E = 1; IID frente a no IID; la selección; el costo de E."""
    task = split_census_task(census, rng=rng)
    X, y = task["X_train"], task["y_train"]
    hospitals = split_by_group(X[:, EDUCATION_COLUMN])
    rounds = 10
    federated = train_federated(X, y, hospitals, rounds=rounds, client_fraction=1.0, local_epochs=1, rng=rng)
    centralized = learning.train_logistic(X, y, iterations=rounds)
    difference = float(np.max(np.abs(federated["theta"] - centralized)))
    splits = experiments.run_fedavg_rounds(rng=rng)
    worst_iid, worst_non_iid = float(splits["iid"].min()), float(splits["non_iid"].min())
    # The clients each round of those runs chose: 16 hospitals, m = 4 a round.
    chosen = splits["selections"].reshape(-1, splits["selections"].shape[-1])
    clients, picked = len(splits["sizes_non_iid"]), chosen.shape[1]
    # Audited whatever integer type they come in: np.bincount takes only np.intp on wasm32.
    counts = np.bincount(chosen.ravel().astype(np.intp), minlength=clients)
    count_low, count_high = binomial_bounds(len(chosen), picked / clients, false_alarm=FALSE_ALARM / clients)
    distinct = len({tuple(row) for row in chosen.tolist()})
    distinct_low = occupancy_bound(len(chosen), math.comb(clients, picked), false_alarm=FALSE_ALARM)
    epochs = experiments.run_local_epochs(rng=rng, epochs_grid=(1, 5))
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
        "splits_majority": splits["majority"],
        "selection_counts": counts,
        "selection_distinct_sets": distinct,
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
        _fact("Con C = 0,25 y E = 5 (5 corridas de 20 rondas), la peor ronda del reparto con un hospital por "
              "nivel educativo queda más de 2 puntos por debajo de la peor del reparto IID: si en una ronda solo "
              "participan hospitales de poca educación, el promedio se acerca a la clase mayoritaria.",
              worst_iid - worst_non_iid > 0.02,
              worst_round_iid=worst_iid, worst_round_non_iid=worst_non_iid, majority=splits["majority"]),
        _fact(f"En esas {format_number(len(chosen))} rondas los {picked} hospitales de cada ronda salen al azar: "
              f"cada hospital participa entre {count_low} y {count_high} veces, lo que permite una binomial con "
              f"p = {picked}/{clients} (no elegir por tamaño ni siempre a los mismos), y aparecen al menos "
              f"{distinct_low} grupos distintos de los {format_number(math.comb(clients, picked))} posibles (no una "
              "rotación fija); falsa alarma ≤ 10⁻⁶.",
              count_low <= counts.min() and counts.max() <= count_high and distinct >= distinct_low,
              counts=counts, bounds=[count_low, count_high], distinct_sets=distinct, distinct_minimum=distinct_low),
        _fact("Con datos IID, E = 5 épocas locales llegan a medio punto del modelo centralizado en a lo sumo la "
              "mitad de rondas que E = 1; con un hospital por nivel educativo, E = 5 necesita más rondas que con "
              "datos IID.",
              None not in (iid_1, iid_5, non_iid_5) and 2 * iid_5 <= iid_1 and non_iid_5 > iid_5,
              target=epochs["target"], rounds_iid=epochs["rounds_iid"], rounds_non_iid=epochs["rounds_non_iid"],
              epochs=[1, 5]),
    ]
    return results, evidence


def measure_gradient_leakage(census, rng, *, trials=200) -> tuple:
    """La actualización de Karen la delata; promediada con otras 99 personas o con ruido, ya no."""
    leak = measure_leakage(census, person=KAREN_NAME, batch_sizes=[1, 2, 10, 100], noise_multiplier=1.0,
                           trials=trials, rng=rng)
    true, alone = leak["true"], leak["alone"]
    clip_norm, sigma = leak["clip_norm"], leak["noise_multiplier"] * leak["clip_norm"]
    # The noise actually drawn: each noisy update minus Karen's update clipped here.
    audit = _noise_matches(leak["noisy_updates"] - _clip(leak["update"], clip_norm), sigma)
    results = {
        "person": KAREN_NAME,
        "true": true,
        "reconstructed": alone,
        "reconstruction_error": leak["alone_error"],
        "batch_sizes": leak["batch_sizes"],
        "batch_median_age_error": leak["batch_error"],
        "noise_multiplier": leak["noise_multiplier"],
        "clip_norm": clip_norm,
        "noisy_median_age_error": leak["noisy_error"],
        "noise_variance_ratio": audit["variance_ratio"],
    }
    evidence = [
        _fact("De la actualización que envía el teléfono de Karen (solo sus datos) el servidor reconstruye su "
              "edad y su nivel educativo (error < 10⁻⁹) y su ingreso alto (el signo de ∇b).",
              leak["alone_error"] < 1e-9 and alone["high_income"] == true["high_income"],
              true=true, reconstructed=alone, error=leak["alone_error"]),
        _fact(f"Promediada con otras 99 personas, la misma reconstrucción yerra la edad de Karen en más de 5 años "
              f"(mediana de {format_number(trials)} lotes).",
              leak["batch_error"][-1] > 5, median_age_error=float(leak["batch_error"][-1]), batch_size=100),
        _fact(f"Recortada a norma S = {format_number(clip_norm)} y con ruido gaussiano de σ = zS, z = 1, "
              f"la edad reconstruida yerra en más de 5 años (mediana de {format_number(trials)} intentos).",
              leak["noisy_error"] > 5, median_age_error=leak["noisy_error"], noise_multiplier=1.0,
              clip_norm=clip_norm),
        _fact(f"El ruido que llevan esos {format_number(trials)} envíos (cada uno menos la actualización de Karen "
              f"recortada a S, recalculada aparte) es N(0, σ²) con σ = zS = {format_number(sigma)}: su varianza "
              "medida entra en las cotas de una χ² y su media en las de una normal (falsa alarma ≤ 10⁻⁶). Un ruido "
              "calibrado a sensibilidad 1 en vez de S sería 4 veces más pequeño.",
              audit["holds"], sigma=sigma, **{key: value for key, value in audit.items() if key != "holds"}),
    ]
    return results, evidence


def measure_secure_aggregation(census, rng, *, clients=5, threshold=3, views=200) -> tuple:
    """Las máscaras se cancelan en la suma, una vista sola es uniforme, y un cliente caído se recupera."""
    # The partition of split_census_task, without the reference model this part does not use.
    X, _, y, _ = learning.split_census(rng=rng, census=census)
    owner = split_iid(len(y), clients=clients, rng=rng)
    updates, _ = train_clients(learning.make_initial_theta(), X, y, owner, selected=np.arange(clients),
                               local_epochs=1)
    full = run_secure_aggregation(updates, threshold=threshold, rng=rng)
    encoded_sum = np.mod(sum(encode_fixed_point(row) for row in updates), MASK_MODULUS)
    masked_sum = np.mod(encode_fixed_point(full["secure_sum"]), MASK_MODULUS)
    dropout = run_secure_aggregation(updates, threshold=threshold, rng=rng, dropped=[clients - 1])
    naive_error = float(np.max(np.abs(dropout["naive_sum"] - dropout["survivors_sum"])))
    recovered_error = float(np.max(np.abs(dropout["recovered_sum"] - dropout["survivors_sum"])))
    # Una vista sola: la primera componente enmascarada del cliente 0, cada una de una ronda nueva.
    distances = {}
    for name, value in (("cero", 0.0), ("mil", 1000.0)):
        update = np.array([value])
        draws = [mask_update(update, client=0, setup=setup_secure_aggregation(clients, threshold=threshold, rng=rng))[0]
                 for _ in range(views)]
        distances[name] = uniform_distance(np.array(draws, dtype=float) / MASK_MODULUS)
    limit = distance_bound(views, false_alarm=FALSE_ALARM / len(distances))
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
        "view_uniform_distance": distances,
        "views": views,
    }
    evidence = [
        _fact(f"La suma de las {clients} actualizaciones enmascaradas es exactamente la suma de las "
              "actualizaciones codificadas (enteros módulo 2³²): las máscaras por pares se cancelan.",
              bool(np.array_equal(masked_sum, encoded_sum)),
              max_difference=float(np.max(np.abs(full["secure_sum"] - full["true_sum"])))),
        _fact(f"Una actualización enmascarada sola es uniforme sea cual sea el dato: con el dato 0 y con el dato "
              f"1000, {format_number(views)} vistas de rondas distintas pasan la prueba de Kolmogorov–Smirnov contra "
              f"la uniforme en [0, 2³²) (distancia < {format_number(limit, 3)}, falsa alarma ≤ 10⁻⁶). Una máscara "
              "constante, de semilla pública o pequeña no la pasa: el servidor podría quitarla.",
              all(distance < limit for distance in distances.values()),
              distances=distances, limit=limit),
        _fact(f"Si un cliente se cae a mitad de ronda, la suma sin quitar sus máscaras se aleja más de 1000 de la "
              f"real; con las partes de Shamir de {threshold} sobrevivientes se recupera exacta (error < 10⁻⁴), y "
              f"con {threshold - 1} partes el secreto no se reconstruye.",
              naive_error > 1000 and recovered_error < 1e-4 and reconstruct_secret(parts[:threshold]) == secret
              and reconstruct_secret(parts[: threshold - 1]) != secret,
              naive_error=naive_error, recovered_error=recovered_error),
    ]
    return results, evidence


def _owners(y, X, rng) -> dict:
    """Los clientes de cada unidad de privacidad: una persona, una clínica de 10, un hospital por nivel."""
    return {"persons": np.arange(len(y), dtype=np.intp),
            "clinics": split_iid(len(y), clients=len(y) // 10, rng=rng),
            "hospitals": split_by_group(X[:, EDUCATION_COLUMN])}


def _exact_round_sums(thetas, X, y, owner, *, clip_norm, learning_rate):
    """Σ_k clip_S(−Δ_k) desde cada modelo de ``thetas``, sin ruido, con una época local: recalculado aquí.

    −Δ_k = η (1/n_k) Σ_{i∈k} (σ(xᵢ·θ) − yᵢ) xᵢ, escrito de nuevo con numpy (no con
    el código que se audita): una fila por modelo.
    """
    order = np.argsort(owner, kind="stable")
    rows, labels, owners = X.take(order, axis=0), y.take(order), owner.take(order)
    starts = np.flatnonzero(np.r_[True, owners[1:] != owners[:-1]])
    sizes = np.diff(np.r_[starts, len(owners)])
    residual = 1.0 / (1.0 + np.exp(-(np.asarray(thetas) @ rows.T))) - labels
    gradients = residual[..., None] * rows
    if starts.size < len(rows):  # with one row per client the sum and the mean change nothing
        gradients = np.add.reduceat(gradients, starts, axis=-2) / sizes[:, None]
    return _clip(learning_rate * gradients, clip_norm).sum(axis=-2)


def measure_private_aggregate(census, rng, *, epsilon=1.0, delta=learning.DEFAULT_DELTA,
                              rounds=learning.DEFAULT_ITERATIONS, audit_runs=3) -> tuple:
    """DP sobre el agregado: el libro, DP-FedAvg = capítulo 5, el ruido y el recorte auditados, y quién paga."""
    X, _, y, _ = learning.split_census(rng=rng, census=census)  # the partition of split_census_task
    seed = int(rng.integers(2**32))
    phones_ledger, central_ledger = accounting.PrivacyLedger(), accounting.PrivacyLedger()
    training = dict(epsilon=epsilon, delta=delta, rounds=rounds, client_fraction=1.0, local_epochs=1,
                    clip_norm=DEFAULT_UPDATE_CLIP)
    phones = train_federated_privately(X, y, np.arange(len(y)), rng=np.random.default_rng(seed),
                                       ledger=phones_ledger, **training)
    central = learning.noisy_gradient_descent(X, y, epsilon=epsilon, delta=delta, iterations=rounds,
                                              clip_norm=learning.DEFAULT_CLIP_NORM, rng=np.random.default_rng(seed),
                                              ledger=central_ledger)
    same_model = float(np.max(np.abs(phones["theta"] - central)))
    try:
        spent_epsilon, spent_delta = phones_ledger.total()
    except ValueError:  # un σ demasiado pequeño para el teorema clásico: el libro no puede avalarlo
        spent_epsilon, spent_delta = math.inf, math.inf
    renyi_epsilon, _ = phones_ledger.total(theorem="rdp", delta=delta)
    phones_rows, central_rows = _release_rows(phones_ledger), _release_rows(central_ledger)
    same_ledger = [(r["mechanism"], r["epsilon"], r["delta"], r["count"]) for r in phones_rows] == [
        (r["mechanism"], r["epsilon"], r["delta"], r["count"]) for r in central_rows]

    # The audit: every unit, `audit_runs` runs (for persons, the phones run is the first), each with its
    # ledger; the noise is what each round published minus the exact clipped sum recomputed here.
    owners = _owners(y, X, rng)
    drawn = iter(int(value) for value in rng.integers(2**32, size=len(owners) * audit_runs - 1))
    seeds = {unit: [seed if unit == "persons" and index == 0 else next(drawn) for index in range(audit_runs)]
             for unit in owners}
    theta_0 = learning.make_initial_theta(X.shape[1])
    raw = learning.DEFAULT_LEARNING_RATE * np.abs(learning.sigmoid(X @ theta_0) - y) * np.linalg.norm(X, axis=1)
    extreme = int(np.argmax(raw))   # the person whose update is largest at the start
    # Her contribution to the first round's sum: −Δ = η(σ(x·θ₀) − y)·x, clipped to S.
    clipped_extreme = _clip(learning.DEFAULT_LEARNING_RATE * (learning.sigmoid(X[extreme] @ theta_0) - y[extreme])
                            * X[extreme], DEFAULT_UPDATE_CLIP)
    audits, moves = {}, {}
    for unit, owner in owners.items():
        residuals, sigmas, sensitivities = [], [], []
        for index, run_seed in enumerate(seeds[unit]):
            ledger = phones_ledger if unit == "persons" and index == 0 else accounting.PrivacyLedger()
            run = (phones if unit == "persons" and index == 0 else
                   train_federated_privately(X, y, owner, rng=np.random.default_rng(run_seed), ledger=ledger,
                                             **training))
            recorded = ledger.releases[-1]
            exact = _exact_round_sums(run["thetas_by_round"][:-1], X, y, owner, clip_norm=DEFAULT_UPDATE_CLIP,
                                      learning_rate=learning.DEFAULT_LEARNING_RATE)
            residuals.append(run["released_sums"] - exact)
            sigmas.append(recorded.noise)
            sensitivities.append(recorded.sensitivity)
            if index == 0:
                # The neighbouring base: the same clients plus one more, the extreme person alone.
                neighbour = train_federated_privately(np.vstack([X, X[extreme]]), np.append(y, y[extreme]),
                                                      np.append(owner, owner.max() + 1),
                                                      rng=np.random.default_rng(run_seed), **training)
                moved = neighbour["released_sums"][0] - run["released_sums"][0]
                moves[unit] = {"moved": float(np.linalg.norm(moved)),
                               "recorded_sensitivity": recorded.sensitivity,
                               "matches_clipped_update": bool(np.allclose(moved, clipped_extreme, atol=1e-9))}
        audits[unit] = _noise_matches(np.concatenate([r / s for r, s in zip(residuals, sigmas)]), 1.0)
        audits[unit]["sigma"] = sigmas[0]

    units = experiments.run_privacy_units(rng=rng, epsilons=(5.0,))
    persons_5 = float(units["persons"].mean())
    task = split_census_task(census, rng=rng)
    steps = compare_noise_and_step(task, split_by_group(task["X_train"][:, EDUCATION_COLUMN]), epsilon=5.0,
                                   rng=rng, repeats=5, server_step=1.0)
    mean = {name: float(np.mean(steps[name])) for name in ("private", "control", "private_fixed_step",
                                                            "control_fixed_step")}
    groups = measure_subgroup_accuracy(census, epsilon=0.3, rng=rng)
    loss = groups["nonprivate"] - groups["private"]
    control_loss = groups["nonprivate"] - groups["control"]
    loss_total = float(loss[-1])
    top = [groups["groups"].index("licenciatura"), groups["groups"].index("posgrado")]  # ingreso alto: ≥ 50 %
    weights = groups["sizes"][top] / np.sum(groups["sizes"][top])
    loss_top, control_loss_top = float(weights @ loss[top]), float(weights @ control_loss[top])
    loss_bottom = float(loss[groups["groups"].index("sin bachillerato")])
    majority_total = 1.0 - float(groups["high_income_rate"][-1])
    above_majority = float(groups["private"][-1]) - majority_total
    results = {
        "epsilon": epsilon,
        "delta": delta,
        "rounds": rounds,
        "clip_norm": DEFAULT_UPDATE_CLIP,
        "count_share": learning.DEFAULT_COUNT_SHARE,
        "noise_multiplier": phones["noise_multiplier"],
        "noise_multiplier_renyi": accounting.compute_noise_multiplier(
            epsilon=(1 - learning.DEFAULT_COUNT_SHARE) * epsilon, delta=delta, steps=rounds, accountant="rdp"),
        "estimated_clients": phones["estimated_clients"],
        "ledger": phones_rows,
        "ledger_sequential": [spent_epsilon, spent_delta],
        "ledger_renyi_epsilon": renyi_epsilon,
        "phones_equal_central_max_difference": same_model,
        "noise_audit": {unit: audit["variance_ratio"] for unit, audit in audits.items()},
        "extreme_client_moves_sum": {unit: move["moved"] for unit, move in moves.items()},
        "units": units["units"],
        "unit_epsilons": units["epsilons"],
        "accuracy_persons": units["persons"].mean(axis=0),
        "accuracy_clinics": units["clinics"].mean(axis=0),
        "accuracy_hospitals": units["hospitals"].mean(axis=0),
        "hospitals_server_step": steps["steps"],
        "hospitals_accuracy": mean,
        "subgroup_epsilon": groups["epsilon"],
        "subgroups": groups["groups"],
        "subgroup_sizes": groups["sizes"],
        "subgroup_nonprivate": groups["nonprivate"],
        "subgroup_private": groups["private"],
        "subgroup_noise_free_control": groups["control"],
    }
    clip = format_number(DEFAULT_UPDATE_CLIP)
    evidence = [
        _fact("DP-FedAvg con ε = 1 en 10 rondas anota en el libro el conteo de clientes (Laplace, ε = 0,05) y 10 "
              "sumas de actualizaciones recortadas (Gauss, ε = 0,095 y δ = 10⁻⁶ cada una, deducidos del σ usado): "
              "(ε, δ) = (1, 10⁻⁵) en total; la contabilidad de Rényi del mismo libro da menos de la mitad.",
              abs(spent_epsilon - epsilon) < 1e-9 and abs(spent_delta - delta) < 1e-15
              and renyi_epsilon < 0.5 * epsilon,
              epsilon=spent_epsilon, delta=spent_delta, renyi_epsilon=renyi_epsilon),
        _fact(f"DP-FedAvg con un teléfono por persona, C = 1, E = 1 y S = η·C = {clip} es el descenso privado del "
              "capítulo 5: con la misma semilla, el mismo modelo (diferencia < 10⁻⁹) y las mismas publicaciones "
              "en el libro.",
              same_model < 1e-9 and same_ledger, max_difference=same_model, ledger=phones_rows),
        _fact(f"El ruido que DP-FedAvg suma de verdad (lo publicado en cada ronda menos la suma exacta de las "
              f"actualizaciones recortadas, recalculada aparte) tiene el σ que anota el libro, por persona, por "
              f"clínica y por hospital: {audit_runs} corridas de 10 rondas con ε = 1 por unidad, varianza en las "
              "cotas de una χ² y media en las de una normal (falsa alarma ≤ 10⁻⁶ por unidad). Sin ruido, o con "
              "uno más pequeño que el anotado, no pasa.",
              all(audit["holds"] for audit in audits.values()),
              **{unit: {key: value for key, value in audit.items() if key != "holds"}
                 for unit, audit in audits.items()}),
        _fact(f"Agregar un cliente (una persona extrema: su actualización mide {format_number(float(raw[extreme]), 1)} "
              f"sin recortar) mueve la suma publicada de la primera ronda, con la misma semilla, exactamente en su "
              f"actualización recortada: norma S = {clip}, la sensibilidad que anota el libro, con personas, "
              "clínicas u hospitales como clientes.",
              all(move["moved"] <= move["recorded_sensitivity"] * (1 + 1e-9) and move["matches_clipped_update"]
                  for move in moves.values()),
              unclipped_norm=float(raw[extreme]), **moves),
        _fact("Con ε = 5 en 10 rondas, proteger a cada persona deja la exactitud a menos de 2 puntos del modelo sin "
              "privacidad (3 modelos).",
              persons_5 >= units["nonprivate"] - 0.02, persons=persons_5, nonprivate=units["nonprivate"]),
        _fact("Con ε = 5 y un cliente por hospital (16), la regla del paso da η_s < 0,05 y el modelo se queda en la "
              "clase mayoritaria (a menos de 1 punto), igual que el control sin ruido con el mismo paso: lo frena "
              "el paso, no el ruido. Con un paso público de 1, el control sin ruido aprende (3 puntos o más sobre "
              "la mayoritaria) y el ruido lo deja al menos 1 punto por debajo del control (5 modelos de cada uno).",
              float(np.max(steps["steps"])) < 0.05 and abs(mean["private"] - steps["majority"]) < 0.01
              and abs(mean["control"] - steps["majority"]) < 0.01
              and mean["control_fixed_step"] >= steps["majority"] + 0.03
              and mean["private_fixed_step"] <= mean["control_fixed_step"] - 0.01,
              largest_step=float(np.max(steps["steps"])), majority=steps["majority"], **mean),
        _fact("Con ε = 0,3 el modelo privado (20 modelos del capítulo 5) pierde en total menos de 10 puntos de "
              "exactitud y supera a la clase mayoritaria por 2 puntos o más; quienes tienen licenciatura o posgrado "
              "(cerca de un cuarto de la base, con ingreso alto la mitad o más) pierden más que el total, y al menos "
              "1 punto más que quienes no terminaron el bachillerato. El control sin ruido, con el mismo paso, "
              "pierde en esos grupos al menos la mitad: la brecha la causa sobre todo el paso corto, no el ruido.",
              loss_total < 0.10 and above_majority >= 0.02 and loss_top > loss_total
              and loss_top > loss_bottom + 0.01 and control_loss_top >= 0.5 * loss_top,
              loss_total=loss_total, above_majority=above_majority, loss_licenciatura_posgrado=loss_top,
              loss_sin_bachillerato=loss_bottom, control_loss_licenciatura_posgrado=control_loss_top,
              sizes=groups["sizes"]),
    ]
    return results, evidence


PARTS = (
    ("fedavg", measure_fedavg),
    ("leakage", measure_gradient_leakage),
    ("secure_aggregation", measure_secure_aggregation),
    ("private_aggregate", measure_private_aggregate),
)
"""Las partes del capítulo, en el orden de la clase: (nombre, función(censo, rng))."""


def run_lab_chapter(census, rng, *, parts=None) -> tuple:
    """El capítulo 6 en el laboratorio: (resultados, hechos), con el contrato de ``dpdeck.lab``.

    Cada parte de ``PARTS`` recibe su propio generador, derivado de ``rng``
    con ``Generator.spawn``: cambiar una parte no mueve el azar de las demás.
    Con ``parts`` (nombres de ``PARTS``) corre solo esas, en su orden: cada
    una con el mismo generador que en el capítulo entero, así que sus
    resultados y sus hechos son los mismos. Las limitaciones del capítulo
    están en ``LAB_LIMITATIONS``.
    """
    rng = check_rng(rng)
    names = [name for name, _ in PARTS]
    if parts is not None:
        parts = set(parts)
        if not parts <= set(names):
            raise ValueError(f"parts debe nombrar partes de {names}; se recibió {sorted(parts)}")
    results, evidence = {}, []
    for (name, part), child in zip(PARTS, rng.spawn(len(PARTS))):
        if parts is not None and name not in parts:
            continue  # its generator is spawned all the same: the others' do not move
        part_results, part_evidence = part(census, child)
        results[name] = part_results
        evidence.extend(part_evidence)
    return results, evidence
