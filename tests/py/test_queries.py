"""Consultas de la clase: conteos, recorte, promedios, histogramas, repetición, δ y vectores.

Las pruebas estadísticas usan semillas fijas y tolerancias de una cota explícita
(indicada en cada docstring). Donde se usa "k errores estándar" la cota es la
aproximación normal del TLC: |Z| > 6 ocurre con probabilidad < 2e-9.
"""

import math
from collections import Counter

import numpy as np
import pytest

from dpdeck import queries as q
from dpdeck.accounting import PrivacyLedger, sequential_composition
from dpdeck.data import load_census


def hoeffding(n, failure):
    """Hoeffding bilateral para una proporción: P(|p̂ − p| > t) ≤ 2 exp(−2 n t²)."""
    return math.sqrt(math.log(2.0 / failure) / (2.0 * n))


@pytest.fixture(scope="module")
def census():
    return load_census()


@pytest.fixture(scope="module")
def heavy_tail():
    """Ganancias de capital sintéticas, independientes del censo: 92 % ceros, cola lognormal, 25 topes."""
    rng = np.random.default_rng(1)
    values = np.where(rng.random(5000) < 0.92, 0.0, np.minimum(np.exp(rng.normal(8.5, 1.1, 5000)), 99_999.0))
    values[:25] = 99_999.0
    return values


def expected_total(values, bound, epsilon):
    """g(b) = sesgo + E|Lap(b/ε)|, la cantidad que minimiza la elección de b."""
    return float(np.sum(np.maximum(values - bound, 0.0)) + bound / epsilon)


# ------------------------------------------------------------------ conteos --


def test_count_and_private_count_error_is_one_over_epsilon():
    """E|conteo privado − conteo| = 1/ε; |Lap(b)| tiene desviación b: tolerancia 6 b/√n."""
    condition = np.arange(1000) % 3 == 0
    assert q.count(condition) == 334
    rng = np.random.default_rng(3)
    releases = np.array([q.private_count(condition, epsilon=0.5, rng=rng) for _ in range(20_000)])
    assert abs(np.mean(np.abs(releases - 334)) - 2.0) < 6 * 2.0 / math.sqrt(20_000)


def test_private_count_replays_the_laplace_draw():
    condition = np.array([True, False, True])
    released = q.private_count(condition, epsilon=0.25, rng=np.random.default_rng(9))
    assert released == 2 + np.random.default_rng(9).laplace(0.0, 4.0)


def test_count_requires_a_boolean_condition():
    with pytest.raises(ValueError, match="debe ser un arreglo booleano"):
        q.count(np.array([1, 0, 1]))


# ------------------------------------------------------------------ recorte --


def test_clip_bounds_values_into_zero_b():
    np.testing.assert_array_equal(q.clip([-3.0, 5.0, 50.0], bound=10), [0.0, 5.0, 10.0])


def test_private_clipped_sum_uses_bound_over_epsilon_noise():
    values = np.array([1.0, 20.0, 300.0])
    released = q.private_clipped_sum(values, bound=100, epsilon=0.5, rng=np.random.default_rng(4))
    assert released == 121.0 + np.random.default_rng(4).laplace(0.0, 200.0)


def test_ideal_clipping_bound_minimises_bias_plus_noise(heavy_tail):
    """Contraste por fuerza bruta: el óptimo de g(b) sobre todos los valores de la base."""
    for epsilon in (1.0, 0.05, 0.02, 0.005):
        ideal = q.ideal_clipping_bound(heavy_tail, epsilon=epsilon)
        candidates = np.unique(np.concatenate(([0.0], heavy_tail)))
        brute = min(expected_total(heavy_tail, b, epsilon) for b in candidates)
        assert expected_total(heavy_tail, ideal, epsilon) == pytest.approx(brute, rel=1e-12)


def test_clipping_error_has_interior_minimum_on_synthetic_tail(heavy_tail):
    bounds = np.geomspace(100, 1e6, 41)
    result = q.measure_clipping_error(heavy_tail, bounds=bounds, epsilon=0.02, rng=np.random.default_rng(5), trials=400)
    best = int(np.argmin(result["total"]))
    assert 0 < best < bounds.size - 1
    assert result["total"][best] < 0.5 * min(result["total"][0], result["total"][-1])
    assert np.all(np.diff(result["bias"]) <= 0) and result["bias"][-1] == 0
    # The measured noise is the mean of |Lap(b/ε)| over 400 trials: 6 standard errors of b/ε/√400.
    np.testing.assert_array_less(np.abs(result["noise"] / (bounds / 0.02) - 1), 6 / math.sqrt(400))
    ideal = q.ideal_clipping_bound(heavy_tail, epsilon=0.02)
    assert ideal / 2 < result["best_bound"] < ideal * 2


@pytest.mark.parametrize(
    "column, epsilon, bounds",
    [("capital_gain", 0.01, np.geomspace(100, 1e6, 41)), ("age", 0.02, np.arange(20.0, 151.0, 2.0))],
)
def test_clipping_error_has_interior_minimum_on_census(census, column, epsilon, bounds):
    """El codo de la clase, en el censo: mínimo interior y estrictamente por debajo del máximo de la columna."""
    values = np.asarray(census[column], dtype=float)
    result = q.measure_clipping_error(values, bounds=bounds, epsilon=epsilon, rng=np.random.default_rng(6), trials=400)
    best = int(np.argmin(result["total"]))
    assert 0 < best < bounds.size - 1
    assert result["best_bound"] < values.max()
    assert result["total"][best] < 0.7 * min(result["total"][0], result["total"][-1])


def test_choose_clipping_bound_reports_its_budget_for_sequential_composition(heavy_tail):
    choice = q.choose_clipping_bound(heavy_tail, epsilon=0.3, rng=np.random.default_rng(0), final_epsilon=0.02)
    bound, spent = choice
    assert spent == 0.3 and bound == choice.bound
    released = q.private_clipped_sum(heavy_tail, bound=bound, epsilon=0.02, rng=np.random.default_rng(1))
    assert np.isfinite(released)
    assert sequential_composition([spent, 0.02]) == pytest.approx(0.32)


def test_choose_clipping_bound_finds_the_elbow(heavy_tail):
    """En el régimen del codo (1/ε_final = 50 personas) la b elegida en privado cuesta,
    en error esperado, a lo sumo 25 % más que la mejor de los candidatos, en 20 semillas."""
    candidates = np.logspace(0, 6, 25)
    best = min(expected_total(heavy_tail, b, 0.02) for b in candidates)
    for seed in range(20):
        bound, _ = q.choose_clipping_bound(heavy_tail, epsilon=0.5, rng=np.random.default_rng(seed), final_epsilon=0.02)
        assert expected_total(heavy_tail, bound, 0.02) <= 1.25 * best


def test_choose_clipping_bound_with_the_slides_budgets_finds_the_top_of_the_data(census):
    """ε = 0,2 para buscar, 0,8 para la suma: el codo exacto de la suma es 100 000, el primer
    candidato por encima del máximo (99 999). En 200 búsquedas la mediana es 100 000 y el error
    esperado medio es menos del triple del mejor (no recortar nunca cuesta diez veces)."""
    values = np.asarray(census["capital_gain"], dtype=float)
    candidates = np.unique(q.DEFAULT_CLIPPING_CANDIDATES)
    exact = q.expected_clipping_error(values, bounds=candidates, epsilon=0.8)
    error_of = dict(zip(candidates.tolist(), exact["total"].tolist()))
    rng = np.random.default_rng(21)
    chosen = [q.choose_clipping_bound(values, epsilon=0.2, final_epsilon=0.8, rng=rng).bound for _ in range(200)]
    assert exact["best_bound"] == 100_000 and np.median(chosen) == 100_000
    assert np.mean([error_of[b] for b in chosen]) < 3 * exact["total"].min()
    assert error_of[1e6] > 9 * exact["total"].min()


@pytest.mark.parametrize("epsilon", [0.5, 0.002])  # the second is blind to the tail in some searches
def test_choose_clipping_bound_with_size_is_that_many_calls_in_a_row(heavy_tail, epsilon):
    ledger = PrivacyLedger()
    choices = q.choose_clipping_bound(heavy_tail, epsilon=epsilon, final_epsilon=0.02,
                                      rng=np.random.default_rng(5), size=60, ledger=ledger)
    replay = np.random.default_rng(5)
    one_by_one = [q.choose_clipping_bound(heavy_tail, epsilon=epsilon, final_epsilon=0.02, rng=replay)
                  for _ in range(60)]
    assert choices == one_by_one and len({choice.bound for choice in choices}) > 1
    assert [(r.what, r.count) for r in ledger.releases] == [("histograma para elegir b", 60)]


def test_choose_clipping_bound_does_not_clip_when_it_sees_no_tail(heavy_tail):
    """Con ε = 0,001 el ruido de cada barra (±1414) tapa la cola. Si ninguna barra por encima del
    primer tramo supera las dos desviaciones (2√2/ε), la búsqueda no sabe dónde terminan los datos
    y no recorta (el mayor candidato) en vez de recortarlo todo. Se replica el sorteo de cada
    semilla para saber qué vio la búsqueda."""
    edges = np.unique(q.DEFAULT_CLIPPING_CANDIDATES)
    counts = np.bincount(np.searchsorted(edges, heavy_tail), minlength=edges.size + 1)
    blind = 0
    for seed in range(60):
        noisy = counts + np.random.default_rng(seed).laplace(0.0, 1000.0, size=counts.size)
        choice = q.choose_clipping_bound(heavy_tail, epsilon=0.001, final_epsilon=0.5,
                                         rng=np.random.default_rng(seed))
        if not np.any(noisy[1:] > 2 * math.sqrt(2) / 0.001):
            blind += 1
            assert choice.bound == edges[-1]
    assert blind >= 10


def test_queries_record_what_they_release_in_a_ledger(census):
    from dpdeck.accounting import PrivacyLedger

    ledger = PrivacyLedger()
    values = np.asarray(census["capital_gain"], dtype=float)
    rng = np.random.default_rng(0)
    choice = q.choose_clipping_bound(values, epsilon=0.2, final_epsilon=0.8, rng=rng, ledger=ledger)
    q.private_clipped_sum(values, bound=choice.bound, epsilon=0.8, rng=rng, ledger=ledger)
    q.private_mean(np.asarray(census["age"], dtype=float), upper=90, epsilon=1.0, rng=rng, ledger=ledger)
    q.private_histogram(census["education"], categories=sorted(set(census["education"])), epsilon=0.5,
                        rng=rng, ledger=ledger)
    q.private_count(np.asarray(census["high_income"]), epsilon=0.1, rng=rng, ledger=ledger)
    described = [(r.what, r.sensitivity, r.noise) for r in ledger.releases]
    assert described == [
        ("histograma para elegir b", 1.0, 5.0),
        ("suma recortada", choice.bound, choice.bound / 0.8),
        ("suma recortada", 90.0, 180.0),
        ("conteo de personas", 1.0, 2.0),
        ("histograma", 1.0, 2.0),
        ("conteo", 1.0, 10.0),
    ]
    assert ledger.total()[0] == pytest.approx(0.2 + 0.8 + 1.0 + 0.5 + 0.1)


def test_expected_clipping_error_is_the_exact_mean_of_the_measured_error(census):
    """E|Lap(s) − B| = B + s·e^{−B/s}, comprobado contra la integral numérica (scipy) y contra
    300 000 sorteos de la medición: 6 errores estándar, con desviación ≤ √2·s."""
    from scipy import integrate

    for bias, scale in [(0.0, 3.0), (5.0, 2.0), (40.0, 10.0)]:
        numeric, _ = integrate.quad(lambda z: abs(z - bias) * math.exp(-abs(z) / scale) / (2 * scale),
                                    -np.inf, np.inf)
        assert bias + scale * math.exp(-bias / scale) == pytest.approx(numeric, rel=1e-9)
    values = np.asarray(census["capital_gain"], dtype=float)
    bounds = np.geomspace(1_000, 200_000, 7)
    exact = q.expected_clipping_error(values, bounds=bounds, epsilon=0.01)
    measured = q.measure_clipping_error(values, bounds=bounds, epsilon=0.01, rng=np.random.default_rng(3),
                                        trials=300_000)
    np.testing.assert_allclose(measured["bias"], exact["bias"])
    assert np.all(np.abs(measured["total"] - exact["total"]) <= 6 * np.sqrt(2) * exact["noise"] / math.sqrt(300_000))
    assert exact["best_bound"] == bounds[int(np.argmin(exact["total"]))]


def test_publish_random_person_many_times_exposes_each_about_one_over_n():
    records = np.arange(50)
    published = q.publish_random_person(records, rng=np.random.default_rng(4), size=100_000)
    frequencies = np.bincount(published, minlength=50) / 100_000
    # binomial standard error √(p(1 − p)/N) with p = 1/50: 6 of them
    assert np.all(np.abs(frequencies - 1 / 50) <= 6 * math.sqrt(0.02 * 0.98 / 100_000))


def test_choose_clipping_bound_on_census_lands_near_the_ideal(census):
    values = np.asarray(census["capital_gain"], dtype=float)
    ideal = q.ideal_clipping_bound(values, epsilon=0.01)
    chosen = [q.choose_clipping_bound(values, epsilon=0.5, rng=np.random.default_rng(s), final_epsilon=0.01).bound for s in range(10)]
    best = expected_total(values, ideal, 0.01)
    assert max(expected_total(values, b, 0.01) for b in chosen) <= 1.3 * best


def _choice_frequencies(values, epsilon, runs, seed):
    rng = np.random.default_rng(seed)
    candidates = np.logspace(0, 3, 13)
    picks = [q.choose_clipping_bound(values, epsilon=epsilon, rng=rng, candidates=candidates, final_epsilon=0.1).bound for _ in range(runs)]
    return np.array([np.mean(np.isclose(picks, c)) for c in candidates])


def _max_violation(epsilon_used, epsilon_claimed, *, tail, runs=4000):
    base = np.concatenate([np.full(80, 5.0), np.full(tail, 200.0)])
    neighbour = np.append(base, 200.0)  # one more person in the tail moves one bucket by 1
    p = _choice_frequencies(base, epsilon_used, runs, 1)
    p_prime = _choice_frequencies(neighbour, epsilon_used, runs, 2)
    t = hoeffding(runs, 1e-6 / (4 * p.size))
    bound = math.exp(epsilon_claimed)
    return max(np.max(p - bound * p_prime - t * (1 + bound)), np.max(p_prime - bound * p - t * (1 + bound)))


def test_choose_clipping_bound_satisfies_dp_inequality_empirically():
    """Bases vecinas (una persona más en la cola): para cada candidato b,
    P[elige b | D] ≤ e^ε P[elige b | D'] + t(1 + e^ε), con t de Hoeffding y unión sobre
    2 bases × candidatos × 2 direcciones (falla total < 1e-6). Con 10 personas en la cola y
    1/ε_final = 10, el conteo ruidoso de la cola (10 ± 2,8) queda justo en el umbral: la
    elección es de verdad aleatoria."""
    frequencies = _choice_frequencies(np.concatenate([np.full(80, 5.0), np.full(10, 200.0)]), 0.5, 4000, 1)
    assert np.sort(frequencies)[-2] > 0.2   # at least two candidates are chosen often
    assert _max_violation(epsilon_used=0.5, epsilon_claimed=0.5, tail=10) <= 0


def test_dp_inequality_check_on_search_detects_too_little_noise():
    """Control negativo: con ε = 20 (casi sin ruido) y 10 personas en la cola, el umbral
    (≈ 10,4) separa D (10 por encima) de D' (11): la elección cambia entre vecinas y viola e^0,5."""
    assert _max_violation(epsilon_used=20.0, epsilon_claimed=0.5, tail=10) > 0


# ---------------------------------------------------------------- promedio --


def test_private_mean_splits_budget_half_sum_half_count():
    """Réplica exacta de los sorteos: ε/2 para la suma (sensibilidad 90) y ε/2 para el conteo."""
    ages = np.array([20.0, 35.0, 95.0, 60.0])
    released = q.private_mean(ages, upper=90, epsilon=1.0, rng=np.random.default_rng(12))
    replay = np.random.default_rng(12)
    noisy_sum = (20 + 35 + 90 + 60) + replay.laplace(0.0, 90 / 0.5)
    noisy_count = 4 + replay.laplace(0.0, 1 / 0.5)
    assert released == noisy_sum / max(noisy_count, 1.0)


def test_private_mean_with_size_is_that_many_calls_in_a_row():
    """size=k da, número por número, lo que dan k llamadas seguidas con el mismo generador, y anota k + k."""
    ages = np.array([20.0, 35.0, 95.0, 60.0, 41.0])
    ledger = PrivacyLedger()
    released = q.private_mean(ages, upper=90, epsilon=0.5, rng=np.random.default_rng(7), size=50, ledger=ledger)
    replay = np.random.default_rng(7)
    one_by_one = [q.private_mean(ages, upper=90, epsilon=0.5, rng=replay) for _ in range(50)]
    assert released.shape == (50,) and released.tolist() == one_by_one
    assert [(r.what, r.count) for r in ledger.releases] == [("suma recortada", 50), ("conteo de personas", 50)]
    assert ledger.total() == pytest.approx((50 * 0.5, 0.0))
    with pytest.raises(ValueError, match="size debe ser un entero positivo; se recibió 0"):
        q.private_mean(ages, upper=90, epsilon=0.5, rng=replay, size=0)


def test_private_mean_on_census_age_is_close(census):
    """Con n = 5000 y ε = 1, el error de la suma es de orden 180 y el del conteo 2: error ≪ 1 año."""
    ages = np.asarray(census["age"], dtype=float)
    estimates = [q.private_mean(ages, upper=90, epsilon=1.0, rng=np.random.default_rng(s)) for s in range(200)]
    assert abs(np.mean(estimates) - ages.mean()) < 0.1
    assert np.max(np.abs(np.array(estimates) - ages.mean())) < 1.0


# --------------------------------------------------------------- histograma --


def test_histogram_counts_match_counter_in_category_order():
    labels = np.array(["b", "a", "c", "a", "b", "a"])
    counts = q.histogram_counts(labels, categories=["c", "a", "b", "d"])
    reference = Counter(labels.tolist())
    np.testing.assert_array_equal(counts, [reference[c] for c in ["c", "a", "b", "d"]])


def test_histogram_rejects_unknown_category():
    with pytest.raises(ValueError, match="no está en categories: 'z'"):
        q.histogram_counts(np.array(["a", "z"]), categories=["a", "b"])


def test_private_histogram_with_size_is_that_many_calls_in_a_row():
    labels = np.array(["b", "a", "c", "a", "b", "a"])
    ledger = PrivacyLedger()
    released = q.private_histogram(labels, categories=["c", "a", "b"], epsilon=0.5, rng=np.random.default_rng(3),
                                   size=40, ledger=ledger)
    replay = np.random.default_rng(3)
    one_by_one = np.array([q.private_histogram(labels, categories=["c", "a", "b"], epsilon=0.5, rng=replay)
                           for _ in range(40)])
    assert released.shape == (40, 3) and np.array_equal(released, one_by_one)
    assert [(r.what, r.count) for r in ledger.releases] == [("histograma", 40)]
    with pytest.raises(ValueError, match="size debe ser un entero positivo; se recibió 2.5"):
        q.private_histogram(labels, categories=["c", "a", "b"], epsilon=0.5, rng=replay, size=2.5)


def test_private_histogram_on_census_is_off_by_about_two(census):
    """Composición paralela, ε = 0,5: el error absoluto medio por barra es E|Lap(2)| = 2.
    16 barras × 1000 histogramas = 16 000 muestras de |Lap(2)| (desviación 2): 6 errores
    estándar = 0,095."""
    labels = np.asarray(census["education"])
    categories = np.unique(labels)
    true_counts = q.histogram_counts(labels, categories=categories)
    rng = np.random.default_rng(13)
    noisy = np.array([q.private_histogram(labels, categories=categories, epsilon=0.5, rng=rng) for _ in range(1000)])
    error = np.mean(np.abs(noisy - true_counts))
    assert abs(error - 2.0) < 6 * 2.0 / math.sqrt(noisy.size)
    assert round(error) == 2
    assert np.median(true_counts) > 100  # bars of hundreds


# ------------------------------------------------------------- repetición --


def test_average_releases_error_falls_as_one_over_sqrt_k():
    """Para cada k, la RMSE medida con T = 4000 repeticiones debe estar a menos de 6 errores
    estándar de √2·b/√k. Para la media de k Laplace, Var(X²)/E[X²]² ≤ 5 (el peor caso es
    k = 1: E X⁴ = 24b⁴, E X² = 2b²), así que el error relativo del MSE es ≤ √(5/T) y el de
    su raíz ≤ √5/(2√T) ≈ 0,018; 6 errores estándar ≈ 0,11. La pendiente log-log ajustada
    debe ser −1/2 ± 0,03."""
    ks = np.array([1, 4, 16, 64, 256])
    result = q.measure_averaging_error(42.0, ks=ks, epsilon=0.5, rng=np.random.default_rng(14), trials=4000)
    np.testing.assert_allclose(result["expected"], 2 * math.sqrt(2) / np.sqrt(ks))
    relative = result["error"] / result["expected"] - 1
    assert np.all(np.abs(relative) < 6 * math.sqrt(5) / (2 * math.sqrt(4000)))
    slope = np.polyfit(np.log(ks), np.log(result["error"]), 1)[0]
    assert abs(slope + 0.5) < 0.03
    np.testing.assert_allclose(result["epsilon_spent"], 0.5 * ks)


def test_average_releases_replays_k_draws():
    value = q.average_releases(42, k=5, epsilon=0.5, rng=np.random.default_rng(15))
    assert value == 42 + np.mean(np.random.default_rng(15).laplace(0.0, 2.0, size=5))


# ------------------------------------------------------- sensibilidad local --


def test_local_sensitivity_noise_scale_depends_on_the_data():
    values = np.array([10.0, 20.0, 30.0])
    assert q.local_sensitivity_of_sum(values) == 30.0
    _, scale = q.unsafe_sum_with_local_sensitivity(values, epsilon=0.5, rng=np.random.default_rng(0))
    _, scale_neighbour = q.unsafe_sum_with_local_sensitivity(np.append(values, 1000.0), epsilon=0.5, rng=np.random.default_rng(0))
    assert scale == 60.0 and scale_neighbour == 2000.0


def test_local_sensitivity_leak_breaks_the_dp_inequality(census):
    """Dos publicaciones: el atacante que mira su resta acierta casi siempre, con falsas alarmas
    ≈ 1 %, muy por encima del límite e^{2ε}·1 % de dos publicaciones ε-DP. Tolerancia de
    Hoeffding con 4000 pares (falla < 10⁻⁶)."""
    ages = np.asarray(census["age"], dtype=float)[:200]
    leak = q.measure_local_sensitivity_leak(ages, extreme_value=5000.0, epsilon=0.5, rng=np.random.default_rng(16),
                                            releases=4000)
    t = hoeffding(4000, 1e-6)
    assert leak["scale_with"] > 50 * leak["scale_without"]
    assert abs(leak["false_positive_rate"] - 0.01) < t
    assert leak["dp_limit"] == pytest.approx(math.exp(1.0) * 0.01)
    assert leak["true_positive_rate"] > leak["dp_limit"] + t + 0.5


def test_local_sensitivity_leak_comes_from_the_scale_not_from_the_sum(census):
    """El contrafáctico: con la escala de D en las dos bases la prueba acierta lo que se equivoca
    (≈ 1 %), aunque la suma de D′ sea otra; y un extremo que no cambia la escala (menor que el
    máximo de D) tampoco se detecta. Lo que delata es la escala."""
    ages = np.asarray(census["age"], dtype=float)[:200]
    t = hoeffding(4000, 1e-6)
    leak = q.measure_local_sensitivity_leak(ages, extreme_value=5000.0, epsilon=0.5, rng=np.random.default_rng(3),
                                            releases=4000)
    assert abs(leak["same_scale_rate"] - 0.01) < t and leak["same_scale_rate"] < leak["dp_limit"]
    hidden = q.measure_local_sensitivity_leak(ages, extreme_value=float(ages.max()), epsilon=0.5,
                                              rng=np.random.default_rng(4), releases=4000)
    assert hidden["scale_with"] == hidden["scale_without"]
    assert abs(hidden["true_positive_rate"] - 0.01) < t


def test_the_attackers_threshold_gives_the_false_alarm_rate_it_was_set_for():
    # P(|X₁ − X₂| > τ) for two Lap(s): e^{−τ/s}(1 + τ/(2s)); at the threshold it is exactly the target.
    for target in (0.01, 0.05, 0.2):
        u = q._laplace_difference_threshold(target)
        assert math.exp(-u) * (1 + u / 2) == pytest.approx(target, rel=1e-9)
    draws = np.random.default_rng(5).laplace(0.0, 1.0, (400_000, 2))
    u = q._laplace_difference_threshold(0.01)
    assert np.mean(np.abs(draws[:, 0] - draws[:, 1]) > u) == pytest.approx(0.01, abs=5 * math.sqrt(0.01 / 400_000))


def test_same_attack_respects_the_limit_with_global_sensitivity():
    """Control: calibrado a la cota global (recorte en b = 5000), el mismo test de hipótesis
    cumple TPR ≤ e^ε FPR salvo la tolerancia de Hoeffding (falla < 1e-6)."""
    values = np.full(200, 40.0)
    epsilon, releases, bound = 0.5, 20_000, 5000.0
    rng = np.random.default_rng(17)
    without = np.array([q.private_clipped_sum(values, bound=bound, epsilon=epsilon, rng=rng) for _ in range(releases)])
    with_extreme = np.array([q.private_clipped_sum(np.append(values, 5000.0), bound=bound, epsilon=epsilon, rng=rng) for _ in range(releases)])
    threshold = bound / epsilon * math.log(100)  # 1 % false positives
    fpr = np.mean(np.abs(without - values.sum()) > threshold)
    tpr = np.mean(np.abs(with_extreme - values.sum()) > threshold)
    t = hoeffding(releases, 1e-6 / 2)
    assert tpr <= math.exp(epsilon) * fpr + t * (1 + math.exp(epsilon))


# ----------------------------------------------------------- regla δ ≪ 1/n --


def _output_distribution(records):
    values, counts = np.unique(records, return_counts=True)
    return dict(zip(values.tolist(), (counts / len(records)).tolist()))


def _total_variation(p, q_):
    keys = set(p) | set(q_)
    return 0.5 * sum(abs(p.get(k, 0.0) - q_.get(k, 0.0)) for k in keys)


def test_random_person_is_zero_delta_dp_with_delta_one_over_n():
    """Con ε = 0 el menor δ válido es la variación total entre las salidas en bases vecinas;
    se calcula exacta para cada vecina (quitar a cualquiera, agregar a alguien nuevo o repetido)."""
    records = np.array([1, 1, 2, 3, 5, 8, 8, 8, 13, 21])
    n = records.size
    base = _output_distribution(records)
    neighbours = [np.delete(records, i) for i in range(n)] + [np.append(records, v) for v in (1, 99)]
    worst = max(_total_variation(base, _output_distribution(d)) for d in neighbours)
    assert worst == pytest.approx(q.random_person_delta(n=n)) and q.random_person_delta(n=n) == 0.1


def test_publish_random_person_is_uniform():
    """Frecuencia de cada persona en 50 000 sorteos a menos de t de Hoeffding de 1/n (unión sobre n)."""
    names = np.array(["Ana", "Beto", "Karen", "Luis", "Sofía"])
    rng = np.random.default_rng(18)
    picks = np.array([q.publish_random_person(names, rng=rng) for _ in range(50_000)])
    frequencies = np.array([np.mean(picks == name) for name in names])
    assert np.all(np.abs(frequencies - 0.2) < hoeffding(50_000, 1e-6 / names.size))


# ---------------------------------------------------- Laplace contra Gauss --


@pytest.mark.parametrize("epsilon", [0.1, 0.5, 0.9])
def test_gauss_beats_laplace_from_k_12_for_any_epsilon(epsilon):
    result = q.laplace_vs_gaussian_vector_error(np.arange(1, 41), epsilon=epsilon, delta=1e-5)
    gauss_wins = result["gauss"] < result["laplace"]
    assert not gauss_wins[:11].any() and gauss_wins[11:].all()
    assert q.vector_crossover_k(delta=1e-5) == 12


def test_crossover_by_mean_absolute_error_is_15():
    result = q.laplace_vs_gaussian_vector_error(np.arange(1, 41), epsilon=0.5, delta=1e-5, measure="mean_abs")
    first = int(np.argmax(result["gauss"] < result["laplace"])) + 1
    assert first == 15 == q.vector_crossover_k(delta=1e-5, measure="mean_abs")


def test_vector_crossover_against_sampled_noise():
    """Con 10⁶ muestras la desviación medida tiene error relativo ≈ 0,1 % (≤ √(Var X²)/(2σ²√n)
    = √5/(2·1000) = 0,0011 para Laplace); la brecha entre Gauss y Laplace es 3 % en k = 11 y
    1 % en k = 12, bien por encima de 6 errores estándar combinados (≈ 0,8 %)."""
    rng = np.random.default_rng(19)
    n, epsilon = 1_000_000, 0.5
    for k, gauss_should_win in ((11, False), (12, True)):
        predicted = q.laplace_vs_gaussian_vector_error(k, epsilon=epsilon, delta=1e-5)
        laplace_sd = np.std(rng.laplace(0.0, k / epsilon, size=n))
        gauss_sd = np.std(rng.normal(0.0, predicted["gauss"], size=n))
        assert laplace_sd == pytest.approx(predicted["laplace"], rel=0.007)
        assert bool(gauss_sd < laplace_sd) == gauss_should_win


# ----------------------------------------------------------- entradas malas --


@pytest.mark.parametrize(
    "call, fragment",
    [
        (lambda rng: q.private_count(np.array([], dtype=bool), epsilon=1, rng=rng), "condicion no puede estar vacío"),
        (lambda rng: q.private_count(np.array([True]), epsilon=0, rng=rng), "epsilon debe ser positivo y finito; se recibió 0"),
        (lambda rng: q.private_clipped_sum([], bound=1, epsilon=1, rng=rng), "valores no puede estar vacío"),
        (lambda rng: q.private_clipped_sum([1.0, float("nan")], bound=1, epsilon=1, rng=rng), "valores contiene valores no finitos"),
        (lambda rng: q.private_clipped_sum([1.0], bound=0, epsilon=1, rng=rng), "bound debe ser positivo y finito; se recibió 0"),
        (lambda rng: q.private_clipped_sum([1.0], bound=1, epsilon=-1, rng=rng), "se recibió -1"),
        (lambda rng: q.private_mean([], upper=90, epsilon=1, rng=rng), "valores no puede estar vacío"),
        (lambda rng: q.private_mean([30.0, np.inf], upper=90, epsilon=1, rng=rng), "no finitos"),
        (lambda rng: q.private_mean([30.0], upper=-90, epsilon=1, rng=rng), "upper debe ser positivo y finito; se recibió -90"),
        (lambda rng: q.private_histogram([], categories=["a"], epsilon=1, rng=rng), "labels no puede estar vacío"),
        (lambda rng: q.private_histogram(["a"], categories=["a"], epsilon=float("nan"), rng=rng), "se recibió nan"),
        (lambda rng: q.private_histogram(["a"], categories=["a", "a"], epsilon=1, rng=rng), "no puede repetir"),
        (lambda rng: q.measure_clipping_error([1.0], bounds=[0.0, 1.0], epsilon=1, rng=rng), "cada bound debe ser positivo"),
        (lambda rng: q.choose_clipping_bound([1.0], epsilon=0, rng=rng), "epsilon debe ser positivo"),
        (lambda rng: q.choose_clipping_bound([1.0], epsilon=1, rng=rng, final_epsilon=-2), "final_epsilon debe ser positivo y finito; se recibió -2"),
        (lambda rng: q.average_releases(42, k=0, epsilon=1, rng=rng), "k debe ser un entero positivo; se recibió 0"),
        (lambda rng: q.average_releases(float("inf"), k=3, epsilon=1, rng=rng), "valor debe ser finito; se recibió inf"),
        (lambda rng: q.publish_random_person([], rng=rng), "records no puede estar vacío"),
        (lambda rng: q.random_person_delta(n=0), "n debe ser un entero positivo"),
        (lambda rng: q.laplace_vs_gaussian_vector_error(12, epsilon=0.5, delta=1.0), r"delta debe estar en el intervalo abierto \(0, 1\); se recibió 1"),
        (lambda rng: q.laplace_vs_gaussian_vector_error(12, epsilon=1.5, delta=1e-5), "menor que 1"),
        (lambda rng: q.vector_crossover_k(delta=1e-5, measure="median"), "measure debe ser"),
        (lambda rng: q.private_count(np.array([True]), epsilon=1, rng=None), "numpy.random.Generator"),
    ],
)
def test_bad_input_raises_spanish_value_error(call, fragment):
    with pytest.raises(ValueError, match=fragment):
        call(np.random.default_rng(0))
