"""Los pasos del laboratorio de los capítulos 1 a 5, cada uno con los números de su diapositiva.

Cada paso recibe el censo y su propio generador y devuelve (resultados, lista
de hechos); ``dpdeck.lab.STEPS`` los ordena y ``dpdeck.lab.federated`` agrega
el del capítulo 6.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from .. import accounting, experiments, learning, mechanisms, queries
from ..data import CENSUS_SEED, EDUCATION_LEVELS, KAREN_NAME, MAX_AGE, find_census_csv
from ..numbers import format_number, format_percent
from .contract import DELTA, _fact


def _standard_error_of_std(samples: np.ndarray, kurtosis: float) -> float:
    """Error estándar relativo de una desviación estándar muestral: √((κ − 1)/(4n))."""
    return math.sqrt((kurtosis - 1.0) / (4.0 * samples.size))


def _release_epsilon(release) -> float:
    """ε de una publicación del libro, o infinito si su ruido no alcanza para el teorema clásico."""
    try:
        return release.epsilon
    except ValueError:
        return math.inf


def _laplace_privacy_loss(outputs, *, here, there, scale) -> np.ndarray:
    """Pérdida de privacidad ln(p_D(s)/p_D'(s)) de salidas de Laplace, sumada sobre la última dimensión."""
    loss = (np.abs(outputs - there) - np.abs(outputs - here)) / scale
    return loss.sum(axis=-1) if np.ndim(loss) > 1 else loss


# ------------------------------------------------------------------ pasos --
# Cada paso recibe el censo y su propio generador y devuelve
# (resultados, lista de hechos). El orden y los nombres forman el contrato.
# Cada hecho es una medición que una implementación equivocada haría falsa;
# tests/py/lab/test_sabotage.py rompe la implementación y ve caer cada uno.


def describe_census(census, rng):
    """Capítulo 0: el dato de partida (descripción, sin hechos: el censo es una entrada)."""
    rich = census.high_income
    results = {
        "people": len(census),
        "columns": list(census.columns),
        "high_income_count": int(rich.sum()),
        "high_income_rate": float(rich.mean()),
        "census_seed": CENSUS_SEED,
        "csv_sha256": hashlib.sha256(find_census_csv().read_bytes()).hexdigest(),
    }
    return results, []


def measure_differencing_attack(census, rng, *, epsilon=0.5, releases=2000):
    """Capítulo 0–1: dos conteos exactos restados revelan a Karen; con ruido, no."""
    karen = census.name == KAREN_NAME
    everyone = queries.count(census.high_income)
    without_karen = queries.count(census.high_income & ~karen)
    attack = experiments.run_attack_through_noise(rng=rng, epsilon=epsilon, releases=releases)
    # Cada conteo lleva Lap(b) con b = 1/ε (varianza 2b²): la resta tiene desviación 2b.
    expected_std = 2.0 / epsilon
    measured_std = attack["std"]
    # La resta de dos Laplace tiene curtosis 4,5: error estándar relativo de la desviación ≈ 2 %.
    tolerance = 5 * _standard_error_of_std(attack["differences"], 4.5)
    results = {
        "karen_found": int(karen.sum()),
        "count_everyone": everyone,
        "count_without_karen": without_karen,
        "difference": everyone - without_karen,
        "karen_high_income_revealed": everyone - without_karen == 1,
        "epsilon_per_query": epsilon,
        "noisy_difference_std": measured_std,
        "noisy_difference_std_expected": expected_std,
        "first_noisy_difference": float(attack["differences"][0]),
    }
    evidence = [
        _fact(
            "differencing_attack",
            "Restar dos conteos exactos (todos y todos menos Karen) da exactamente 1: revela que Karen "
            "tiene ingreso alto.",
            results["difference"] == 1,
            count_everyone=everyone,
            count_without_karen=without_karen,
        ),
        _fact(
            "differencing_attack",
            f"Con ruido de Laplace en cada conteo (ε = 0,5) la resta medida en {format_number(releases)} "
            "ataques tiene desviación estándar ≈ 2/ε = 4 (±5 errores estándar): cuatro veces la señal "
            "de 1 que busca el atacante.",
            abs(measured_std / expected_std - 1) <= tolerance,
            measured_std=measured_std,
            expected_std=expected_std,
            relative_tolerance=tolerance,
        ),
    ]
    return results, evidence


def work_hospital_example(census, rng, *, count=42, epsilon=0.5, samples=100_000):
    """Capítulo 1–2: el conteo del hospital (Δ = 1, ε = 0,5), su error y su garantía, medidos."""
    scale = 1.0 / epsilon  # independiente de la biblioteca: b = Δ/ε con Δ = 1
    here = mechanisms.laplace_mechanism(np.full(samples, float(count)), sensitivity=1, epsilon=epsilon, rng=rng)
    there = mechanisms.laplace_mechanism(np.full(samples, float(count - 1)), sensitivity=1, epsilon=epsilon,
                                         rng=rng)
    mean_abs = float(np.mean(np.abs(here - count)))
    # |Lap(b)| es exponencial de media b y desviación b: error estándar b/√muestras.
    standard_error = scale / math.sqrt(samples)
    # La definición aplicada al conjunto S = {s > 43}: Pr_D[S]/Pr_D'[S] ≤ e^ε, y con Laplace
    # la razón de esa cola es exactamente e^ε. Error estándar del logaritmo de la razón de
    # dos frecuencias: √((1 − p)/(N p) + (1 − p')/(N p')).
    threshold = count + 1
    p_here = float(np.mean(here > threshold))
    p_there = float(np.mean(there > threshold))
    # A tail that never happens (no noise at all) leaves the ratio undefined: the fact is false.
    measurable = 0 < p_here < 1 and 0 < p_there < 1
    log_ratio = math.log(p_here / p_there) if measurable else math.inf
    log_se = (math.sqrt((1 - p_here) / (samples * p_here) + (1 - p_there) / (samples * p_there)) if measurable
              else math.inf)
    # Tres publicaciones: la pérdida de privacidad Σ ln(p_D/p_D') de cada trío publicado.
    triples = here[: 3 * (samples // 3)].reshape(-1, 3)
    losses = _laplace_privacy_loss(triples, here=count, there=count - 1, scale=scale)
    ledger = accounting.PrivacyLedger()
    ledger.record_laplace("conteo del hospital", sensitivity=1, scale=scale, count=3)
    three, _ = ledger.total()
    results = {
        "count": count,
        "sensitivity": 1,
        "epsilon": epsilon,
        "expected_abs_error": scale,
        "measured_abs_error": mean_abs,
        "relative_error": scale / count,
        "tail_probability_D": p_here,
        "tail_probability_D_prime": p_there,
        "tail_ratio": math.exp(log_ratio),
        "e_epsilon": math.exp(epsilon),
        "epsilon_three_queries": three,
        "max_privacy_loss_three_queries": float(losses.max()),
        "share_of_triples_at_max_loss": float(np.mean(losses >= 3 * epsilon - 1e-9)),
        "one_release": float(here[0]),
    }
    evidence = [
        _fact("hospital",
              f"El error medio |ruido| medido en {format_number(samples)} publicaciones es ≈ b = Δf/ε = 2 "
              "(±5 errores estándar).",
              abs(mean_abs - scale) <= 5 * standard_error, measured=mean_abs, expected=scale,
              standard_error=standard_error),
        _fact("hospital",
              "La definición, medida: la salida supera 43 con probabilidad 0,30 si el conteo es 42 y 0,18 "
              "si es 41; la razón medida es e^ε ≈ 1,65 (±5 errores estándar): el mecanismo gasta su ε, "
              "ni más ni menos.",
              measurable and abs(log_ratio - epsilon) <= 5 * log_se, ratio=math.exp(log_ratio), bound=math.exp(epsilon),
              log_standard_error=log_se),
        _fact("hospital",
              "Tres publicaciones con ε = 0,5: la pérdida de privacidad medida llega a 1,5 (en un 12,5 % "
              "de los tríos) y el libro de cuentas anota ε = 1,5, no 0,5.",
              three >= losses.max() - 1e-9 and losses.max() > epsilon + 1e-9,
              ledger_epsilon=three, max_privacy_loss=float(losses.max()),
              share_at_max=results["share_of_triples_at_max_loss"]),
    ]
    return results, evidence


def measure_averaging(census, rng, *, epsilon=0.5, trials=400):
    """Capítulo 2: promediar k publicaciones ruidosas; el error cae como 1/√k."""
    measured = experiments.run_averaging_error(rng=rng, epsilon=epsilon, trials=trials)
    slope, _ = np.polyfit(np.log(measured["ks"]), np.log(measured["error"]), 1)
    results = {
        "epsilon": epsilon,
        "ks": measured["ks"],
        "error": measured["error"],
        "expected": measured["expected"],
        "loglog_slope": float(slope),
        "epsilon_spent": measured["epsilon_spent"],
    }
    # 400 ensayos por k: la raíz del error cuadrático medio tiene error relativo ≈ 3,5 % y la
    # pendiente por mínimos cuadrados sobre ln k ∈ [0; 6,9] (10 puntos), ≈ 0,006; 0,05 son 8.
    evidence = [
        _fact("averaging",
              "El error de promediar k publicaciones cae como 1/√k: pendiente log-log medida ≈ −0,5 "
              "(±0,05; 1 ≤ k ≤ 1000, 400 ensayos por k), y con k = 1000 el promedio se equivoca en menos "
              "de 0,5: distingue 42 de 41.",
              abs(slope + 0.5) < 0.05 and measured["error"][-1] < 0.5, slope=float(slope),
              error_k1=float(measured["error"][0]), error_k1000=float(measured["error"][-1])),
    ]
    return results, evidence


def measure_histogram(census, rng, *, epsilon=0.5, repeats=100):
    """Capítulo 2: histograma educativo privado; composición paralela, medida."""
    release = experiments.run_private_histogram(rng=rng, epsilon=epsilon)
    counts = release["true_counts"]
    many = queries.private_histogram(census.education, categories=EDUCATION_LEVELS, epsilon=epsilon, rng=rng,
                                     size=repeats)
    mean_abs = float(np.mean(np.abs(many - counts)))
    standard_error = (1 / epsilon) / math.sqrt(many.size)
    # Vecina: la misma base sin una persona con doctorado. Solo su barra cambia, en 1.
    doctor = int(np.flatnonzero(census.education == "Doctorado")[0])
    neighbour = queries.histogram_counts(np.delete(census.education, doctor), categories=EDUCATION_LEVELS)
    losses = _laplace_privacy_loss(many, here=counts, there=neighbour, scale=1 / epsilon)
    ledger = accounting.PrivacyLedger()
    queries.private_histogram(census.education, categories=EDUCATION_LEVELS, epsilon=epsilon, rng=rng,
                              ledger=ledger)
    ledger_epsilon, _ = ledger.total()
    results = {
        "epsilon": epsilon,
        "epsilon_total": ledger_epsilon,
        "categories": list(EDUCATION_LEVELS),
        "true_counts": counts,
        "private_counts": release["private_counts"],
        "mean_abs_error_per_bar": mean_abs,
        "expected_abs_error_per_bar": 1 / epsilon,
        "smallest_bar": int(counts.min()),
        "largest_bar": int(counts.max()),
        "bars_under_100": int(np.sum(counts < 100)),
        "max_privacy_loss": float(losses.max()),
    }
    evidence = [
        _fact("histogram",
              "El histograma privado de educación con ε = 0,5 se equivoca en ≈ 2 personas por barra "
              "(E|Lap(2)| = 2, ±5 errores estándar), tenga la barra 7 personas o 1594.",
              abs(mean_abs - 2.0) <= 5 * standard_error, mean_abs_error=mean_abs, expected=2.0,
              smallest_bar=results["smallest_bar"], largest_bar=results["largest_bar"]),
        _fact("histogram",
              "Composición paralela, medida: quitar a una persona mueve una sola barra, y la pérdida de "
              "privacidad de las 16 barras juntas nunca pasa de 0,5, el ε que anota el libro (no 16 × 0,5).",
              losses.max() <= ledger_epsilon + 1e-9 and ledger_epsilon == epsilon,
              max_privacy_loss=float(losses.max()), ledger_epsilon=ledger_epsilon),
    ]
    return results, evidence


def find_clipping_elbow(census, rng, *, epsilon=0.01, trials=300, low_noise_epsilon=0.1):
    """Capítulo 3: el codo del recorte de la suma de ganancias de capital, esperado y medido."""
    gains = census.capital_gain.astype(float)
    expected = experiments.run_clipping_elbow(epsilon=epsilon)
    bounds = expected["bounds"]
    measured = queries.measure_clipping_error(gains, bounds=bounds, epsilon=epsilon, rng=rng, trials=trials)
    total = measured["total"]
    best = int(np.argmin(total))
    no_clipping = bounds >= gains.max()
    error_without_clipping = float(total[no_clipping].min())
    # Cada total medido es el promedio de `trials` errores |Z − B|, de desviación ≤ √2·b/ε:
    # error estándar ≤ √2·b/(ε√trials); se exige coincidencia a 5 de ellos en cada cota.
    standard_error = math.sqrt(2.0) * bounds / (epsilon * math.sqrt(trials))
    gap = np.abs(total - expected["total"]) / standard_error
    wider = experiments.run_clipping_elbow(epsilon=low_noise_epsilon)
    results = {
        "epsilon": epsilon,
        "bounds_min": float(bounds[0]),
        "bounds_max": float(bounds[-1]),
        "bounds_count": int(bounds.size),
        "true_sum": int(gains.sum()),
        "max_value": float(gains.max()),
        "best_bound_measured": float(bounds[best]),
        "best_bound_expected": expected["best_bound"],
        "min_total_error": float(total[best]),
        "total_error_without_clipping": error_without_clipping,
        "people_above_best_bound": int(np.sum(gains > bounds[best])),
        "largest_gap_in_standard_errors": float(gap.max()),
        "epsilon_0_1_best_bound": wider["best_bound"],
        "epsilon_0_1_saving": 1 - float(wider["total"].min()) / wider["no_clipping_error"],
    }
    evidence = [
        _fact("clipping",
              "Suma de ganancias de capital con ε = 0,01: el error medido (300 ensayos por cota) tiene un "
              "mínimo interior, en una cota por debajo del máximo de los datos (99 999) que sí recorta a "
              "alguien, y recortar ahí cuesta menos de la mitad del error de no recortar.",
              0 < best < bounds.size - 1 and bounds[best] < gains.max()
              and total[best] < 0.5 * error_without_clipping,
              best_bound=float(bounds[best]), max_value=float(gains.max()),
              min_total_error=float(total[best]), error_without_clipping=error_without_clipping),
        _fact("clipping",
              "El error medido coincide en cada una de las 41 cotas con el esperado exacto, "
              "E|Z − B| = B + s·e^(−B/s) (±5 errores estándar).",
              gap.max() <= 5.0, largest_gap_in_standard_errors=float(gap.max())),
    ]
    return results, evidence


def choose_bound_privately(census, rng, *, search_epsilon=0.2, sum_epsilon=0.8, searches=200):
    """Capítulo 3: elegir b en privado, declarar lo que costó en el libro y medir qué tan buena es."""
    gains = census.capital_gain.astype(float)
    ledger = accounting.PrivacyLedger()
    choice = queries.choose_clipping_bound(gains, epsilon=search_epsilon, final_epsilon=sum_epsilon, rng=rng,
                                           ledger=ledger)
    released = queries.private_clipped_sum(gains, bound=choice.bound, epsilon=sum_epsilon, rng=rng,
                                           ledger=ledger)
    total, _ = ledger.total()
    candidates = np.unique(queries.DEFAULT_CLIPPING_CANDIDATES)
    expected = queries.expected_clipping_error(gains, bounds=candidates, epsilon=sum_epsilon)
    best_error = float(expected["total"].min())
    error_of = dict(zip(candidates.tolist(), expected["total"].tolist()))
    chosen = [choice.bound for choice in queries.choose_clipping_bound(
        gains, epsilon=search_epsilon, final_epsilon=sum_epsilon, rng=rng, size=searches)]
    mean_ratio = float(np.mean([error_of[bound] for bound in chosen])) / best_error
    never_clip_ratio = error_of[float(candidates[-1])] / best_error
    results = {
        "search_epsilon": choice.epsilon_spent,
        "sum_epsilon": sum_epsilon,
        "epsilon_total": total,
        "releases_recorded": len(ledger.releases),
        "chosen_bound": choice.bound,
        "private_sum": released,
        "true_sum": int(gains.sum()),
        "best_candidate": float(candidates[int(np.argmin(expected["total"]))]),
        "median_chosen_bound": float(np.median(chosen)),
        "share_choosing_best": float(np.mean(np.isclose(chosen, candidates[int(np.argmin(expected["total"]))]))),
        "mean_error_ratio": mean_ratio,
        "never_clip_error_ratio": never_clip_ratio,
    }
    evidence = [
        _fact("private_bound",
              "Buscar b en privado cuesta: el libro de cuentas anota el histograma de la búsqueda "
              "(ε = 0,2) y la suma (ε = 0,8) y suma ε = 1.",
              len(ledger.releases) == 2 and abs(total - (search_epsilon + sum_epsilon)) < 1e-12,
              epsilon_total=total, releases=len(ledger.releases)),
        _fact("private_bound",
              f"En {searches} búsquedas privadas (ε = 0,2) la mediana de b es la mejor cota candidata "
              "para una suma con ε = 0,8 (100 000, justo por encima del máximo de los datos), y el error "
              "esperado medio de la suma con la b elegida es menos de un tercio del de no recortar nunca.",
              results["median_chosen_bound"] == results["best_candidate"]
              and mean_ratio < never_clip_ratio / 3,
              median_chosen_bound=results["median_chosen_bound"], best_candidate=results["best_candidate"],
              mean_error_ratio=mean_ratio, never_clip_error_ratio=never_clip_ratio),
    ]
    return results, evidence


def compute_private_mean(census, rng, *, epsilon=1.0, repeats=1000):
    """Capítulo 3: promedio de edad = suma (ε/2, Δ = 90) / conteo (ε/2, Δ = 1), con su libro."""
    ages = census.age.astype(float)
    ledger = accounting.PrivacyLedger()
    private = queries.private_mean(ages, upper=MAX_AGE, epsilon=epsilon, rng=rng, ledger=ledger)
    spent, _ = ledger.total()
    spread = float(np.std(queries.private_mean(ages, upper=MAX_AGE, epsilon=epsilon, rng=rng, size=repeats)))
    # Suma con Lap(90/(ε/2)) de desviación √2·180 sobre n = 5000; el ruido del conteo mueve el
    # cociente en media·√2·2/n, cien veces menos. Desviación esperada ≈ √2·180/n ≈ 0,051 años.
    n = ages.size
    expected_spread = math.hypot(math.sqrt(2) * 2 * MAX_AGE / epsilon, ages.mean() * math.sqrt(2) * 2 / epsilon) / n
    tolerance = 5 * math.sqrt(5.0 / (4 * repeats))  # curtosis de Laplace 6
    results = {
        "epsilon": epsilon,
        "releases": [release.what for release in ledger.releases],
        "epsilon_by_release": [release.epsilon for release in ledger.releases],
        "epsilon_total": spent,
        "sum_sensitivity": MAX_AGE,
        "count_sensitivity": 1,
        "private_mean_age": private,
        "true_mean_age": float(ages.mean()),
        "spread_measured": spread,
        "spread_expected": expected_spread,
    }
    evidence = [
        _fact("mean",
              "El promedio privado de edad anota dos publicaciones: la suma (sensibilidad 90, ε/2) y el "
              "conteo (sensibilidad 1, ε/2), ε = 1 en total; medido en 1000 corridas, se mueve ≈ 0,05 "
              "años, lo que predicen esos dos ruidos (±5 errores estándar).",
              [round(r.epsilon, 12) for r in ledger.releases] == [epsilon / 2, epsilon / 2]
              and abs(spent - epsilon) < 1e-12 and abs(spread / expected_spread - 1) <= tolerance,
              epsilon_total=spent, spread_measured=spread, spread_expected=expected_spread),
    ]
    return results, evidence


def measure_local_sensitivity(census, rng, *, epsilon=1.0, extreme=99_999):
    """Capítulo 3: calibrar a la sensibilidad local rompe la garantía, y se mide."""
    leak = experiments.run_local_sensitivity_leak(rng=rng, epsilon=epsilon, extreme_value=extreme)
    results = {"epsilon": epsilon, **leak}
    evidence = [
        _fact("local_sensitivity",
              "Con ruido calibrado a la sensibilidad local, un atacante que mira la resta de dos "
              "publicaciones (solo la escala del ruido) detecta al extremo de 99 999 mucho más de lo que "
              "dos publicaciones ε-DP permiten (e^{2ε} × su tasa de falsas alarmas, 1 %).",
              leak["true_positive_rate"] > leak["dp_limit"],
              true_positive_rate=leak["true_positive_rate"], dp_limit=leak["dp_limit"],
              false_positive_rate=leak["false_positive_rate"]),
    ]
    return results, evidence


def compute_gaussian_price(census, rng, *, epsilon=0.5, samples=100_000):
    """Capítulo 4: el precio del gaussiano en una consulta escalar, medido sobre sus muestras."""
    # Independiente de la biblioteca: σ = Δ√(2 ln(1,25/δ))/ε y desviación de Laplace √2·Δ/ε.
    sigma = math.sqrt(2 * math.log(1.25 / DELTA)) / epsilon
    laplace_std = math.sqrt(2) / epsilon
    gauss = mechanisms.gaussian_mechanism(np.zeros(samples), sensitivity=1, epsilon=epsilon, delta=DELTA, rng=rng)
    laplace = mechanisms.laplace_mechanism(np.zeros(samples), sensitivity=1, epsilon=epsilon, rng=rng)
    gauss_std, measured_laplace_std = float(gauss.std()), float(laplace.std())
    tolerance = 5 * _standard_error_of_std(gauss, 3.0)
    results = {
        "delta": DELTA,
        "sigma_factor": math.sqrt(2 * math.log(1.25 / DELTA)),
        "sigma_expected": sigma,
        "sigma_measured": gauss_std,
        "laplace_std_expected": laplace_std,
        "laplace_std_measured": measured_laplace_std,
    }
    evidence = [
        _fact("gaussian",
              f"Con δ = 10⁻⁵ y ε = 0,5 el ruido gaussiano medido en {format_number(samples)} muestras tiene "
              "σ ≈ 4,84/ε = 9,69 (±5 errores estándar), y el de Laplace, 2,83: en una consulta escalar "
              "Laplace gana.",
              abs(gauss_std / sigma - 1) <= tolerance and measured_laplace_std < gauss_std,
              sigma_measured=gauss_std, sigma_expected=sigma, laplace_std_measured=measured_laplace_std),
    ]
    return results, evidence


def check_delta_rule(census, rng, *, releases=200_000):
    """Capítulo 4: «publicar una persona al azar» expone a Karen con probabilidad 1/n ≫ 10⁻⁵."""
    n = len(census)
    published = queries.publish_random_person(census.name, rng=rng, size=releases)
    exposed = float(np.mean(published == KAREN_NAME))
    # Frecuencia binomial: error estándar √(p(1 − p)/N) con p = 1/n.
    standard_error = math.sqrt((1 / n) * (1 - 1 / n) / releases)
    results = {"n": n, "delta_random_person": 1 / n, "delta_used": DELTA, "releases": releases,
               "karen_exposed_rate": exposed}
    evidence = [
        _fact("delta_rule",
              f"Publicar una persona al azar expone a Karen en ≈ 1/n = 2·10⁻⁴ de las "
              f"{format_number(releases)} ejecuciones medidas (±5 errores estándar), y nunca sin ella: "
              "el mecanismo es (0, 1/n)-DP, y 1/n es 20 veces el δ = 10⁻⁵ de la clase.",
              abs(exposed - 1 / n) <= 5 * standard_error and exposed > 10 * DELTA,
              karen_exposed_rate=exposed, one_over_n=1 / n, delta=DELTA),
    ]
    return results, evidence


def find_vector_crossing(census, rng, *, epsilon=0.5, samples=20_000):
    """Capítulo 4: con k componentes movidas en 1, Gauss le gana a Laplace desde k = 12 (medido)."""
    predicted = experiments.run_vector_noise(epsilon=epsilon, delta=DELTA)
    results = {"epsilon": epsilon, "delta": DELTA, "crossing_k": predicted["crossing"]}
    measured = {}
    for k in (11, 12):
        laplace = mechanisms.laplace_mechanism(np.zeros((samples, k)), sensitivity=k, epsilon=epsilon, rng=rng)
        gauss = mechanisms.gaussian_mechanism(np.zeros((samples, k)), sensitivity=math.sqrt(k), epsilon=epsilon,
                                              delta=DELTA, rng=rng)
        measured[k] = (float(laplace.std()), float(gauss.std()))
        results[f"laplace_std_k{k}"] = measured[k][0]
        results[f"gauss_std_k{k}"] = measured[k][1]
        results[f"laplace_std_k{k}_predicted"] = float(predicted["laplace"][k - 1])
        results[f"gauss_std_k{k}_predicted"] = float(predicted["gauss"][k - 1])
    # Desviación muestral de 20 000 × k valores: error relativo ≤ √(5/(4·220 000)) ≈ 0,24 %.
    tolerance = 5 * math.sqrt(5.0 / (4 * samples * 11))
    agree = all(abs(measured[k][0] / results[f"laplace_std_k{k}_predicted"] - 1) <= tolerance
                and abs(measured[k][1] / results[f"gauss_std_k{k}_predicted"] - 1) <= tolerance for k in (11, 12))
    evidence = [
        _fact("vector",
              "Consulta de k componentes movidas en 1 (Δ₁ = k, Δ₂ = √k), medido en 20 000 publicaciones: "
              "con k = 11 Laplace tiene menos ruido por componente y con k = 12 ya lo tiene Gauss, como "
              "predicen las fórmulas (±5 errores estándar).",
              measured[11][0] < measured[11][1] and measured[12][1] < measured[12][0] and agree
              and predicted["crossing"] == 12,
              laplace_k11=measured[11][0], gauss_k11=measured[11][1], laplace_k12=measured[12][0],
              gauss_k12=measured[12][1], crossing_k=predicted["crossing"]),
    ]
    return results, evidence


def compare_accountants(census, rng, *, sigma=20.0, steps=10_000):
    """Capítulo 4: el mismo gaussiano repetido 10⁴ veces, tres contabilidades y el ε exacto."""
    compared = accounting.compare_gaussian_accountants(sigma=sigma, steps=steps, delta=DELTA)
    exact = accounting.gaussian_exact_epsilon(delta=DELTA, sigma=sigma, steps=steps)
    # δ verdadero del mecanismo en el ε de cada contabilidad: una cota correcta da δ ≤ 10⁻⁵.
    true_delta = {name: accounting.gaussian_exact_delta(epsilon=compared[name], sigma=sigma, steps=steps)
                  for name in ("sequential", "advanced", "rdp")}
    results = {"sigma": sigma, "steps": steps, "delta": DELTA, "sensitivity": 1.0, **compared,
               "exact": exact, "true_delta_at": true_delta}
    evidence = [
        _fact("composition",
              "σ = 20, Δ = 1, δ = 10⁻⁵, k = 10⁴: el ε exacto del mecanismo (Balle y Wang 2018) es ≈ 33,1; "
              "las tres contabilidades son cotas válidas por encima (en su ε el δ verdadero no pasa de "
              "10⁻⁵) y Rényi DP (≈ 36,5) queda a menos de un 15 % del exacto, contra ≈ 1444 y ≈ 3236.",
              all(value <= DELTA for value in true_delta.values())
              and exact <= compared["rdp"] <= 1.15 * exact
              and compared["rdp"] < compared["advanced"] < compared["sequential"],
              exact=exact, rdp=compared["rdp"], advanced=compared["advanced"],
              sequential=compared["sequential"], true_delta_at_rdp=true_delta["rdp"]),
    ]
    return results, evidence


def train_private_models(census, rng, *, repeats=10):
    """Capítulo 5: descenso de gradiente privado: su libro, su recorte y su exactitud contra ε y T."""
    X, y = learning.make_dataset(census)
    ledger = accounting.PrivacyLedger()
    learning.noisy_gradient_descent(X, y, epsilon=1.0, delta=DELTA, iterations=learning.DEFAULT_ITERATIONS,
                                    clip_norm=learning.DEFAULT_CLIP_NORM, rng=rng, ledger=ledger)
    try:
        spent_epsilon, spent_delta = ledger.total()
    except ValueError:  # a σ too small for the classic theorem: the ledger cannot vouch for it
        spent_epsilon, spent_delta = math.inf, math.inf
    renyi_epsilon, _ = ledger.total(theorem="rdp", delta=DELTA)
    gradients = learning.compute_gradients(learning.make_initial_theta(), X, y)
    clipped = learning.clip_gradients(gradients, clip_norm=learning.DEFAULT_CLIP_NORM)
    norms = np.linalg.norm(clipped, axis=1)
    was_clipped = np.linalg.norm(gradients, axis=1) > learning.DEFAULT_CLIP_NORM
    epsilons = [0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
    curve = learning.privacy_utility_curve(X, y, epsilons=epsilons, rng=rng, repeats=repeats)
    grid = [1, 2, 3, 5, 8, 12, 20, 35, 60, 100]
    fixed_epsilon = 0.5
    by_t = learning.iterations_curve(X, y, epsilon=fixed_epsilon, iterations_grid=grid, rng=rng, repeats=repeats)
    mean = curve["mean"]
    results = {
        "features": ["intercepto", "(edad − 40)/15", "(educación − 10)/3"],
        "delta": DELTA,
        "iterations": learning.DEFAULT_ITERATIONS,
        "clip_norm": learning.DEFAULT_CLIP_NORM,
        "learning_rate": learning.DEFAULT_LEARNING_RATE,
        "noise_radius": learning.DEFAULT_NOISE_RADIUS,
        "count_share": learning.DEFAULT_COUNT_SHARE,
        "repeats": repeats,
        "ledger": [{"what": r.what, "mechanism": r.mechanism, "sensitivity": r.sensitivity, "noise": r.noise,
                    "epsilon": _release_epsilon(r), "delta": r.delta, "count": r.count} for r in ledger.releases],
        "ledger_sequential": [spent_epsilon, spent_delta],
        "ledger_renyi_epsilon": renyi_epsilon,
        "clipped_fraction": float(was_clipped.mean()),
        "high_income_share_of_clipped": float(y[was_clipped].mean()),
        "nonprivate_accuracy": curve["nonprivate"],
        "majority_baseline": curve["majority"],
        "epsilons": epsilons,
        "accuracy_mean": mean,
        "accuracy_std": curve["std"],
        "iterations_epsilon": fixed_epsilon,
        "iterations_grid": grid,
        "iterations_accuracy_mean": by_t["mean"],
        "best_iterations": by_t["best_iterations"],
    }
    high = {f"{e:g}": m for e, m in zip(epsilons, mean) if e >= 2}
    low = {f"{e:g}": m for e, m in zip(epsilons, mean) if e <= 0.1}
    best = int(np.argmax(by_t["mean"]))
    evidence = [
        _fact("learning",
              "El descenso privado con ε = 1 anota en el libro el conteo de n (Laplace, ε = 0,05) y 10 "
              "sumas de gradientes (Gauss, ε = 0,095 y δ = 10⁻⁶ cada una, deducidos del σ usado): "
              "(ε, δ) = (1, 10⁻⁵) en total.",
              abs(spent_epsilon - 1.0) < 1e-9 and abs(spent_delta - DELTA) < 1e-15,
              epsilon=spent_epsilon, delta=spent_delta, renyi_epsilon=renyi_epsilon),
        _fact("learning",
              "El recorte deja cada gradiente con norma ≤ C = 1 (máximo medido) y recorta a "
              f"{format_percent(was_clipped.mean())} de las personas en el punto de partida, casi todas de "
              "ingreso alto: el modelo inicial predice ingreso bajo para todos y con ellas se equivoca.",
              norms.max() <= learning.DEFAULT_CLIP_NORM * (1 + 1e-12) and was_clipped.any()
              and y[was_clipped].mean() > 0.9,
              max_norm=float(norms.max()), clipped_fraction=float(was_clipped.mean()),
              high_income_share_of_clipped=float(y[was_clipped].mean())),
        _fact("learning",
              "Con ε ≥ 2 la exactitud privada media (10 modelos) queda a menos de un punto del modelo sin "
              "privacidad.",
              min(high.values()) > curve["nonprivate"] - 0.01, nonprivate=curve["nonprivate"],
              private=high),
        _fact("learning",
              "Con ε ≤ 0,1 el modelo no se mueve de la clase mayoritaria (exactitud = línea base "
              "± 1 punto): el ruido obliga a pasos tan cortos que no aprende nada.",
              max(abs(m - curve["majority"]) for m in low.values()) <= 0.01, majority=curve["majority"],
              private=low),
        _fact("learning",
              f"Con ε = 0,5 fijo la exactitud contra el número de iteraciones tiene un óptimo interior "
              f"(T = {by_t['best_iterations']}) y con T = 100 pierde más de 2 puntos: cada iteración gasta "
              "ε/T, y el ruido de cada paso crece con T.",
              0 < best < len(grid) - 1 and by_t["mean"][best] - by_t["mean"][-1] > 0.02
              and by_t["mean"][best] - by_t["mean"][0] > 0.02, best_iterations=by_t["best_iterations"],
              accuracy_best=float(by_t["mean"][best]), accuracy_t1=float(by_t["mean"][0]),
              accuracy_t100=float(by_t["mean"][-1])),
    ]
    return results, evidence
