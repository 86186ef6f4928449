"""El capítulo 6 (aprendizaje federado) en el laboratorio: sus resultados, su evidencia y sus limitaciones.

``run_lab_chapter(census, rng)`` es el paso ``"federated"`` de
``dpdeck.lab.STEPS`` y devuelve ``(resultados, hechos)`` con el contrato de
``dpdeck.lab``: cuatro partes (FedAvg, fugas por gradientes, agregación
segura y DP sobre el agregado), cada una con su propio generador derivado de
``rng``. Los experimentos con figura son los de la clase
(``dpdeck.experiments``), con el generador del laboratorio.

Cada hecho es una medición que una implementación equivocada haría falsa
(tests/py/lab/test_lab.py rompe la implementación y ve caer cada uno); sus textos
siguen la regla de números del mazo (``dpdeck.numbers``).
"""

from __future__ import annotations

import math

import numpy as np

from .. import accounting, experiments, learning
from .._checks import check_rng
from ..data import KAREN_NAME
from ..federated import (
    DEFAULT_UPDATE_CLIP,
    EDUCATION_COLUMN,
    MASK_MODULUS,
    SHARE_PRIME,
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


# ------------------------------------------------------------------ partes --


def measure_fedavg(census, rng) -> tuple:
    """FedAvg = descenso centralizado con C = 1, E = 1; IID frente a no IID; el costo de E."""
    task = split_census_task(census, rng=rng)
    X, y = task["X_train"], task["y_train"]
    hospitals = split_by_group(X[:, EDUCATION_COLUMN])
    rounds = 10
    federated = train_federated(X, y, hospitals, rounds=rounds, client_fraction=1.0, local_epochs=1, rng=rng)
    centralized = learning.train_logistic(X, y, iterations=rounds)
    difference = float(np.max(np.abs(federated["theta"] - centralized)))
    splits = experiments.run_fedavg_rounds(rng=rng)
    worst_iid, worst_non_iid = float(splits["iid"].min()), float(splits["non_iid"].min())
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
        _fact(f"Promediada con otras 99 personas, la misma reconstrucción yerra la edad de Karen en más de 5 años "
              f"(mediana de {format_number(trials)} lotes).",
              leak["batch_error"][-1] > 5, median_age_error=float(leak["batch_error"][-1]), batch_size=100),
        _fact(f"Recortada a norma S = {format_number(leak['clip_norm'])} y con ruido gaussiano de σ = zS, z = 1, "
              f"la edad reconstruida yerra en más de 5 años (mediana de {format_number(trials)} intentos).",
              leak["noisy_error"] > 5, median_age_error=leak["noisy_error"], noise_multiplier=1.0,
              clip_norm=leak["clip_norm"]),
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
    # Una vista sola: la primera componente enmascarada del cliente 0, con dos datos muy distintos.
    means = {}
    for name, value in (("cero", 0.0), ("mil", 1000.0)):
        update = np.array([value])
        draws = [mask_update(update, client=0, setup=setup_secure_aggregation(clients, threshold=threshold, rng=rng))[0]
                 for _ in range(views)]
        means[name] = float(np.mean(draws)) / MASK_MODULUS
    # Uniforme en [0, 1): media 1/2, desviación 1/√12; error estándar de la media 1/√(12·vistas).
    standard_error = 1 / math.sqrt(12 * views)
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
        "view_mean_over_modulus": means,
        "views": views,
    }
    evidence = [
        _fact(f"La suma de las {clients} actualizaciones enmascaradas es exactamente la suma de las "
              "actualizaciones codificadas (enteros módulo 2³²): las máscaras por pares se cancelan.",
              bool(np.array_equal(masked_sum, encoded_sum)),
              max_difference=float(np.max(np.abs(full["secure_sum"] - full["true_sum"])))),
        _fact(f"Una actualización enmascarada sola es uniforme sea cual sea el dato: con el dato 0 y con el dato "
              f"1000, la media de {format_number(views)} vistas queda a menos de 5 errores estándar de la mitad "
              "del rango.",
              all(abs(mean - 0.5) < 5 * standard_error for mean in means.values()),
              means=means, standard_error=standard_error),
        _fact(f"Si un cliente se cae a mitad de ronda, la suma sin quitar sus máscaras se aleja más de 1000 de la "
              f"real; con las partes de Shamir de {threshold} sobrevivientes se recupera exacta (error < 10⁻⁴), y "
              f"con {threshold - 1} partes el secreto no se reconstruye.",
              naive_error > 1000 and recovered_error < 1e-4 and reconstruct_secret(parts[:threshold]) == secret
              and reconstruct_secret(parts[: threshold - 1]) != secret,
              naive_error=naive_error, recovered_error=recovered_error),
    ]
    return results, evidence


def measure_private_aggregate(census, rng, *, epsilon=1.0, delta=learning.DEFAULT_DELTA,
                              rounds=learning.DEFAULT_ITERATIONS) -> tuple:
    """DP sobre el agregado: el libro de las rondas, DP-FedAvg = capítulo 5, la unidad protegida y quién paga."""
    X, _, y, _ = learning.split_census(rng=rng, census=census)  # the partition of split_census_task
    seed = int(rng.integers(2**32))
    phones_ledger, central_ledger = accounting.PrivacyLedger(), accounting.PrivacyLedger()
    phones = train_federated_privately(X, y, np.arange(len(y)), epsilon=epsilon, delta=delta, rounds=rounds,
                                       client_fraction=1.0, local_epochs=1, clip_norm=DEFAULT_UPDATE_CLIP,
                                       rng=np.random.default_rng(seed), ledger=phones_ledger)
    central = learning.noisy_gradient_descent(X, y, epsilon=epsilon, delta=delta, iterations=rounds,
                                              clip_norm=learning.DEFAULT_CLIP_NORM, rng=np.random.default_rng(seed),
                                              ledger=central_ledger)
    same_model = float(np.max(np.abs(phones["theta"] - central)))
    try:
        spent_epsilon, spent_delta = phones_ledger.total()
    except ValueError:  # un σ demasiado chico para el teorema clásico: el libro no puede avalarlo
        spent_epsilon, spent_delta = math.inf, math.inf
    renyi_epsilon, _ = phones_ledger.total(theorem="rdp", delta=delta)
    phones_rows, central_rows = _release_rows(phones_ledger), _release_rows(central_ledger)
    same_ledger = [(r["mechanism"], r["epsilon"], r["delta"], r["count"]) for r in phones_rows] == [
        (r["mechanism"], r["epsilon"], r["delta"], r["count"]) for r in central_rows]
    units = experiments.run_privacy_units(rng=rng, epsilons=(5.0,))
    persons_5, hospitals_5 = float(units["persons"].mean()), float(units["hospitals"].mean())
    groups = measure_subgroup_accuracy(census, epsilon=0.3, rng=rng)
    loss = groups["nonprivate"] - groups["private"]
    loss_total = float(loss[-1])
    top = [groups["groups"].index("licenciatura"), groups["groups"].index("posgrado")]  # ingreso alto: ≥ 50 %
    loss_top = float(np.sum(groups["sizes"][top] * loss[top]) / np.sum(groups["sizes"][top]))
    loss_bottom = float(loss[groups["groups"].index("sin bachillerato")])
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
        "units": units["units"],
        "unit_epsilons": units["epsilons"],
        "accuracy_persons": units["persons"].mean(axis=0),
        "accuracy_clinics": units["clinics"].mean(axis=0),
        "accuracy_hospitals": units["hospitals"].mean(axis=0),
        "subgroup_epsilon": groups["epsilon"],
        "subgroups": groups["groups"],
        "subgroup_sizes": groups["sizes"],
        "subgroup_nonprivate": groups["nonprivate"],
        "subgroup_private": groups["private"],
    }
    evidence = [
        _fact("DP-FedAvg con ε = 1 en 10 rondas anota en el libro el conteo de clientes (Laplace, ε = 0,05) y 10 "
              "sumas de actualizaciones recortadas (Gauss, ε = 0,095 y δ = 10⁻⁶ cada una, deducidos del σ usado): "
              "(ε, δ) = (1, 10⁻⁵) en total; la contabilidad de Rényi del mismo libro da menos de la mitad.",
              abs(spent_epsilon - epsilon) < 1e-9 and abs(spent_delta - delta) < 1e-15
              and renyi_epsilon < 0.5 * epsilon,
              epsilon=spent_epsilon, delta=spent_delta, renyi_epsilon=renyi_epsilon),
        _fact("DP-FedAvg con un teléfono por persona, C = 1, E = 1 y S = η·C = 4 es el descenso privado del "
              "capítulo 5: con la misma semilla, el mismo modelo (diferencia < 10⁻⁹) y las mismas publicaciones "
              "en el libro.",
              same_model < 1e-9 and same_ledger, max_difference=same_model, ledger=phones_rows),
        _fact("Con ε = 5 en 10 rondas, proteger a cada persona deja la exactitud a menos de 2 puntos del modelo sin "
              "privacidad; proteger a cada uno de 16 hospitales deja al modelo en la clase mayoritaria (a menos de "
              "1 punto): 3 modelos de cada uno.",
              persons_5 >= units["nonprivate"] - 0.02 and abs(hospitals_5 - units["majority"]) < 0.01,
              persons=persons_5, hospitals=hospitals_5, nonprivate=units["nonprivate"], majority=units["majority"]),
        _fact("Con ε = 0,3 el modelo privado pierde en total menos de 10 puntos de exactitud; quienes tienen "
              "licenciatura o posgrado (cerca de un cuarto de la base, con ingreso alto la mitad o más) pierden más "
              "que el total, y al menos 1 punto más que quienes no terminaron el bachillerato.",
              loss_total < 0.10 and loss_top > loss_total and loss_top > loss_bottom + 0.01,
              loss_total=loss_total, loss_licenciatura_posgrado=loss_top, loss_sin_bachillerato=loss_bottom,
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


def run_lab_chapter(census, rng) -> tuple:
    """El capítulo 6 en el laboratorio: (resultados, hechos), con el contrato de ``dpdeck.lab``.

    Cada parte de ``PARTS`` recibe su propio generador, derivado de ``rng``
    con ``Generator.spawn``: cambiar una parte no mueve el azar de las demás.
    Las limitaciones del capítulo están en ``LAB_LIMITATIONS``.
    """
    rng = check_rng(rng)
    results, evidence = {}, []
    for (name, part), child in zip(PARTS, rng.spawn(len(PARTS))):
        part_results, part_evidence = part(census, child)
        results[name] = part_results
        evidence.extend(part_evidence)
    return results, evidence
