"""Mecanismos de Laplace y Gaussiano: calibración, muestreo y la desigualdad de DP.

Las pruebas estadísticas usan una semilla fija y una tolerancia derivada de una
cota explícita (indicada en cada docstring): un muestreador correcto falla con
probabilidad menor que la indicada para cualquier semilla, y uno mal calibrado
(escala equivocada por un factor 1,1 o más) queda fuera de la tolerancia.
"""

import math

import numpy as np
import pytest

from dpdeck import mechanisms as m

N = 200_000


def dkw_halfwidth(n, failure):
    """Dvoretzky–Kiefer–Wolfowitz (Massart 1990): P(sup|F_n − F| > t) ≤ 2 exp(−2 n t²)."""
    return math.sqrt(math.log(2.0 / failure) / (2.0 * n))


def hoeffding_halfwidth(n, failure):
    """Hoeffding bilateral para una proporción: P(|p̂ − p| > t) ≤ 2 exp(−2 n t²)."""
    return math.sqrt(math.log(2.0 / failure) / (2.0 * n))


# ------------------------------------------------------------------ hospital --


def test_hospital_count_scale_is_two():
    assert m.laplace_scale(sensitivity=1, epsilon=0.5) == 2.0


def test_hospital_density_ratio_bound_is_e_to_half():
    assert m.laplace_density_ratio_bound(epsilon=0.5) == pytest.approx(1.6487, abs=1e-4)
    assert round(m.laplace_density_ratio_bound(epsilon=0.5), 2) == 1.65


def test_hospital_density_ratio_over_grid_never_exceeds_e_to_epsilon():
    """p_D(s)/p_D'(s) = exp((|s−41| − |s−42|)/2) ∈ [e^−0,5, e^0,5] y alcanza ambos extremos."""
    outputs = np.linspace(0.0, 84.0, 100_001)
    ratio = m.laplace_density(outputs, loc=42, scale=2) / m.laplace_density(outputs, loc=41, scale=2)
    bound = math.exp(0.5)
    assert ratio.max() <= bound * (1 + 1e-12)
    assert ratio.min() >= (1 / bound) * (1 - 1e-12)
    assert ratio.max() == pytest.approx(bound, rel=1e-12)  # attained for s ≥ 42
    assert ratio.min() == pytest.approx(1 / bound, rel=1e-12)  # attained for s ≤ 41
    closed_form = np.exp((np.abs(outputs - 41) - np.abs(outputs - 42)) / 2)
    np.testing.assert_allclose(ratio, closed_form, rtol=1e-9)


def test_laplace_density_integrates_to_one():
    x = np.linspace(-80, 80, 400_001)
    integral = np.sum(m.laplace_density(x, scale=2)) * (x[1] - x[0])
    assert integral == pytest.approx(1.0, abs=1e-4)


def test_expected_absolute_laplace_noise_equals_scale():
    """E|Lap(2)| = 2. |Lap(b)| ~ Exp(b) tiene desviación b, así que el error estándar
    de la media de n muestras es b/√n; la tolerancia de 6 errores estándar falla con
    probabilidad < 1e-8 (cola normal del TLC) para un muestreador correcto."""
    rng = np.random.default_rng(20260924)
    noise = m.laplace_mechanism(np.full(N, 42.0), sensitivity=1, epsilon=0.5, rng=rng) - 42.0
    standard_error = 2.0 / math.sqrt(N)
    assert abs(np.mean(np.abs(noise)) - 2.0) < 6 * standard_error


# ----------------------------------------------------------------- samplers --


def test_laplace_sampler_matches_cdf_by_dkw():
    """El CDF empírico de Lap(2) está a menos de t del teórico con t de DKW (falla < 1e-6).
    Una escala errónea de 2,2 se aleja del CDF en ≈ 0,02 > t ≈ 0,0059."""
    rng = np.random.default_rng(7)
    sample = np.sort(m.add_laplace_noise(np.zeros(N), scale=2.0, rng=rng))
    empirical = np.arange(1, N + 1) / N
    theoretical = np.where(sample < 0, 0.5 * np.exp(sample / 2.0), 1 - 0.5 * np.exp(-sample / 2.0))
    gap = max(np.max(np.abs(empirical - theoretical)), np.max(np.abs(empirical - 1 / N - theoretical)))
    assert gap < dkw_halfwidth(N, 1e-6)
    wrong = np.where(sample < 0, 0.5 * np.exp(sample / 2.2), 1 - 0.5 * np.exp(-sample / 2.2))
    assert np.max(np.abs(empirical - wrong)) > dkw_halfwidth(N, 1e-6)


def test_gaussian_sampler_matches_cdf_by_dkw():
    """Misma prueba DKW para N(0, σ²) con σ calibrado (ε = 0,5, δ = 10⁻⁵)."""
    sigma = m.gaussian_sigma(sensitivity=1, epsilon=0.5, delta=1e-5)
    rng = np.random.default_rng(8)
    sample = np.sort(m.gaussian_mechanism(np.zeros(N), sensitivity=1, epsilon=0.5, delta=1e-5, rng=rng))
    grid_positions = np.linspace(0, N - 1, 2001).astype(int)
    points = sample[grid_positions]
    theoretical = np.array([0.5 * (1 + math.erf(x / (sigma * math.sqrt(2)))) for x in points])
    empirical_hi = (grid_positions + 1) / N
    empirical_lo = grid_positions / N
    gap = max(np.max(np.abs(empirical_hi - theoretical)), np.max(np.abs(empirical_lo - theoretical)))
    assert gap < dkw_halfwidth(N, 1e-6)
    wrong = np.array([0.5 * (1 + math.erf(x / (1.1 * sigma * math.sqrt(2)))) for x in points])
    assert np.max(np.abs(empirical_hi - wrong)) > dkw_halfwidth(N, 1e-6)


def test_gaussian_sample_std_matches_sigma():
    """Desviación muestral frente a σ: el error estándar de s² es σ²√(2/(n−1)); 6 errores
    estándar dan probabilidad de falla < 1e-8 (TLC)."""
    sigma = m.gaussian_sigma(sensitivity=3, epsilon=0.9, delta=1e-6)
    rng = np.random.default_rng(9)
    noise = m.add_gaussian_noise(np.zeros(N), sigma=sigma, rng=rng)
    relative_se_var = math.sqrt(2 / (N - 1))
    assert abs(np.var(noise, ddof=1) / sigma**2 - 1) < 6 * relative_se_var


# ------------------------------------------------ empirical DP inequality --


def _dp_violation(scale, *, epsilon, n, seed):
    """Máximo, sobre intervalos de salida, de p̂_D(S) − e^ε p̂_D'(S) − tolerancia de Hoeffding."""
    rng = np.random.default_rng(seed)
    out_d = m.add_laplace_noise(np.full(n, 42.0), scale=scale, rng=rng)
    out_d_prime = m.add_laplace_noise(np.full(n, 41.0), scale=scale, rng=rng)
    edges = np.concatenate(([-np.inf], np.arange(25.0, 59.0, 1.0), [np.inf]))
    bins = len(edges) - 1
    p_d = np.histogram(out_d, bins=edges)[0] / n
    p_d_prime = np.histogram(out_d_prime, bins=edges)[0] / n
    # Union bound over 2 datasets × bins × 2 directions at total failure 1e-6.
    t = hoeffding_halfwidth(n, 1e-6 / (4 * bins))
    bound = math.exp(epsilon)
    forward = p_d - bound * p_d_prime - t * (1 + bound)
    backward = p_d_prime - bound * p_d - t * (1 + bound)
    return max(forward.max(), backward.max())


def test_count_mechanism_satisfies_dp_inequality_empirically():
    """Conteo del hospital (f(D)=42, f(D')=41, ε = 0,5): para cada intervalo S de un
    histograma de salidas, P[M(D)∈S] ≤ e^ε P[M(D')∈S] y al revés. Con n muestras por base,
    Hoeffding da |p̂ − p| ≤ t con t = √(ln(2/β)/(2n)), y una cota de unión sobre 2 bases,
    todos los intervalos y ambas direcciones fija β para una falla total < 1e-6. Se exige
    p̂_D − e^ε p̂_D' ≤ t (1 + e^ε), que vale con esa probabilidad si M es ε-DP."""
    scale = m.laplace_scale(sensitivity=1, epsilon=0.5)
    assert _dp_violation(scale, epsilon=0.5, n=400_000, seed=11) <= 0


def test_dp_inequality_check_detects_undercalibrated_noise():
    """Control negativo: la misma prueba con escala 1 (que solo da ε = 1) debe fallar para ε = 0,5."""
    assert _dp_violation(1.0, epsilon=0.5, n=400_000, seed=12) > 0


# ----------------------------------------------------------------- Gaussiano --


def test_gaussian_factor_is_4_84_for_delta_1e_5():
    assert m.gaussian_sigma_factor(delta=1e-5) == pytest.approx(4.8448, abs=1e-4)
    assert round(m.gaussian_sigma_factor(delta=1e-5), 2) == 4.84


def test_gaussian_sigma_formula():
    sigma = m.gaussian_sigma(sensitivity=2, epsilon=0.5, delta=1e-5)
    assert sigma == pytest.approx(2 * math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-15)


@pytest.mark.parametrize("epsilon", [1, 1.0, 2.5])
def test_gaussian_sigma_refuses_epsilon_at_least_one(epsilon):
    with pytest.raises(ValueError) as info:
        m.gaussian_sigma(sensitivity=1, epsilon=epsilon, delta=1e-5)
    message = str(info.value)
    assert "menor que 1" in message and "Dwork y Roth (2014, Teorema A.1)" in message
    assert f"se recibió {epsilon:g}" in message


def test_gaussian_density_matches_formula():
    x = np.array([-1.0, 0.0, 2.0])
    expected = np.exp(-x**2 / 8) / (2 * math.sqrt(2 * math.pi))
    np.testing.assert_allclose(m.gaussian_density(x, sigma=2), expected, rtol=1e-14)


def test_laplace_std_is_sqrt2_times_scale():
    assert m.laplace_std(sensitivity=1, epsilon=0.5) == pytest.approx(2 * math.sqrt(2))


# ----------------------------------------------------------- shapes & rng --


def test_scalar_in_float_out_and_array_shape_kept():
    rng = np.random.default_rng(0)
    assert isinstance(m.laplace_mechanism(42, sensitivity=1, epsilon=0.5, rng=rng), float)
    assert isinstance(m.gaussian_mechanism(42, sensitivity=1, epsilon=0.5, delta=1e-5, rng=rng), float)
    vector = m.laplace_mechanism(np.zeros((3, 4)), sensitivity=1, epsilon=0.5, rng=rng)
    assert vector.shape == (3, 4)
    assert m.gaussian_mechanism([1, 2, 3], sensitivity=1, epsilon=0.5, delta=1e-5, rng=rng).shape == (3,)


def test_same_seed_same_output_and_input_untouched():
    values = np.array([1.0, 2.0, 3.0])
    first = m.laplace_mechanism(values, sensitivity=1, epsilon=1, rng=np.random.default_rng(5))
    second = m.laplace_mechanism(values, sensitivity=1, epsilon=1, rng=np.random.default_rng(5))
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(values, [1.0, 2.0, 3.0])
    assert not np.array_equal(first, values)


@pytest.mark.parametrize(
    "kwargs, fragment",
    [
        (dict(sensitivity=1, epsilon=0), "epsilon debe ser positivo y finito; se recibió 0"),
        (dict(sensitivity=1, epsilon=-1), "epsilon debe ser positivo y finito; se recibió -1"),
        (dict(sensitivity=0, epsilon=1), "sensibilidad debe ser positivo y finito; se recibió 0"),
        (dict(sensitivity=-2, epsilon=1), "sensibilidad debe ser positivo y finito; se recibió -2"),
        (dict(sensitivity=math.inf, epsilon=1), "se recibió inf"),
    ],
)
def test_laplace_mechanism_rejects_bad_parameters(kwargs, fragment):
    with pytest.raises(ValueError, match=fragment):
        m.laplace_mechanism(1.0, rng=np.random.default_rng(0), **kwargs)


@pytest.mark.parametrize(
    "value, fragment",
    [(float("nan"), "valor debe ser finito; se recibió nan"), ([1.0, math.inf], "no finitos"), ([], "vacío")],
)
def test_mechanisms_reject_bad_values(value, fragment):
    with pytest.raises(ValueError, match=fragment):
        m.laplace_mechanism(value, sensitivity=1, epsilon=1, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match=fragment):
        m.gaussian_mechanism(value, sensitivity=1, epsilon=0.5, delta=1e-5, rng=np.random.default_rng(0))


@pytest.mark.parametrize("delta, shown", [(0, "0"), (1, "1"), (2, "2"), (-0.1, "-0.1")])
def test_gaussian_mechanism_rejects_bad_delta(delta, shown):
    with pytest.raises(ValueError, match=rf"delta debe estar en el intervalo abierto \(0, 1\); se recibió {shown}"):
        m.gaussian_mechanism(1.0, sensitivity=1, epsilon=0.5, delta=delta, rng=np.random.default_rng(0))


def test_mechanisms_demand_generator():
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        m.laplace_mechanism(1.0, sensitivity=1, epsilon=1, rng=None)
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        m.gaussian_mechanism(1.0, sensitivity=1, epsilon=0.5, delta=1e-5, rng=0)
