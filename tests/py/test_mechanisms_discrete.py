"""Laplace y Gaussiano discretos exactos (Canonne, Kamath y Steinke 2020).

* Distribución: una prueba χ² de Pearson, con semilla fija, contra la pmf exacta
  escrita aquí en forma cerrada (independiente del muestreador). Los intervalos
  esperan al menos 50 muestras cada uno (las colas se juntan), y con d grados de
  libertad el umbral es d + 2√(d·x) + 2x con x = ln(10⁶): por la cota de Laurent
  y Massart (2000, Lema 1), P(χ²_d ≥ umbral) ≤ e^{−x} = 10⁻⁶. Control negativo:
  la misma muestra frente a la pmf con la escala × 1,1 queda por encima.
* Privacidad: la pérdida ln(P[M(D) = y] / P[M(D') = y]) es un racional para el
  Laplace discreto; se calcula con ``Fraction`` en cada salida entera y se
  compara con ε sin redondeo; con ``decimal`` a 60 cifras se comparan además
  las pmf normalizadas con e^ε. Para el Gaussiano discreto se calcula la
  divergencia de Rényi a 60 cifras y se compara con αρ.
* El camino de muestreo no toca un solo número de punto flotante.
"""

import decimal
import math
import sys
from decimal import Decimal
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pytest

from dpdeck import mechanisms as m

CHI2_FAILURE = 1e-6
MIN_EXPECTED = 50

# First releases with seed 0 (Δ = 1; ε = 1/2 and ρ = 1/8): integer arithmetic on the
# generator's 64-bit words only, so every platform and numpy version gives these.
KNOWN_LAPLACE_STREAM = [-1, -1, -3, -1, 3, 1, 0, 3]
KNOWN_GAUSSIAN_STREAM = [4, 2, 0, 0, 1, -2, 0, 3]


def chi2_threshold(dof, failure=CHI2_FAILURE):
    """Laurent y Massart (2000): P(χ²_d − d ≥ 2√(d x) + 2x) ≤ e^{−x}."""
    x = math.log(1 / failure)
    return dof + 2 * math.sqrt(dof * x) + 2 * x


def discrete_laplace_pmf(k, scale):
    """P(Z = k) = tanh(1/(2t)) · e^{−|k|/t}: la constante es (1 − e^{−1/t})/(1 + e^{−1/t})."""
    t = float(scale)
    return math.tanh(1 / (2 * t)) * math.exp(-abs(k) / t)


def discrete_gaussian_pmf_table(sigma_squared):
    """P(Z = k) ∝ e^{−k²/(2σ²)}, normalizada sumando |k| ≤ 40σ + 10 (el resto pesa < e^{−800})."""
    s2 = float(sigma_squared)
    reach = int(40 * math.sqrt(s2)) + 10
    weights = {k: math.exp(-k * k / (2 * s2)) for k in range(-reach, reach + 1)}
    total = math.fsum(weights.values())
    return {k: w / total for k, w in weights.items()}


def pearson_statistic(sample, pmf, *, reach=10_000):
    """X² de Pearson y sus grados de libertad.

    Un intervalo por salida k con esperado n·P(k) ≥ 50; los extremos se
    quedan con sus colas (k ≤ mín y k ≥ máx), así que todos esperan ≥ 50.
    La masa más allá de ±``reach`` es despreciable para las escalas probadas.
    """
    n = len(sample)
    values, counts = np.unique(sample, return_counts=True)
    observed = dict(zip(values.tolist(), counts.tolist()))
    center = [k for k in range(-reach, reach + 1) if n * pmf(k) >= MIN_EXPECTED]
    low, high = center[0], center[-1]
    expected = {k: n * pmf(k) for k in center}
    expected[low] += n * math.fsum(pmf(k) for k in range(-reach, low))
    expected[high] += n * math.fsum(pmf(k) for k in range(high + 1, reach + 1))
    counted = {k: observed.get(k, 0) for k in center}
    counted[low] += sum(c for k, c in observed.items() if k < low)
    counted[high] += sum(c for k, c in observed.items() if k > high)
    statistic = math.fsum((counted[k] - expected[k]) ** 2 / expected[k] for k in center)
    return statistic, len(center) - 1


# ------------------------------------------------------------ distributions --


@pytest.mark.parametrize(
    "scale, n, seed",
    [(2, 60_000, 101), (Fraction(10, 3), 40_000, 102), (Fraction(1, 3), 40_000, 103)],
    ids=["t=2", "t=10/3", "t=1/3"],
)
def test_discrete_laplace_matches_its_pmf_by_chi_square(scale, n, seed):
    sample = m.add_discrete_laplace_noise(np.zeros(n, dtype=np.int64), scale=scale, rng=np.random.default_rng(seed))
    statistic, dof = pearson_statistic(sample, lambda k: discrete_laplace_pmf(k, scale))
    assert statistic < chi2_threshold(dof), (statistic, dof)
    wrong, wrong_dof = pearson_statistic(sample, lambda k: discrete_laplace_pmf(k, 1.1 * scale))
    assert wrong > chi2_threshold(wrong_dof)


@pytest.mark.parametrize(
    "sigma_squared, n, seed",
    [(4, 60_000, 201), (Fraction(7, 3), 40_000, 202), (Fraction(1, 5), 30_000, 203)],
    ids=["σ²=4", "σ²=7/3", "σ²=1/5"],
)
def test_discrete_gaussian_matches_its_pmf_by_chi_square(sigma_squared, n, seed):
    sample = m.add_discrete_gaussian_noise(np.zeros(n, dtype=np.int64), sigma_squared=sigma_squared,
                                           rng=np.random.default_rng(seed))
    table = discrete_gaussian_pmf_table(sigma_squared)
    statistic, dof = pearson_statistic(sample, lambda k: table.get(k, 0.0))
    assert statistic < chi2_threshold(dof), (statistic, dof)
    wrong_table = discrete_gaussian_pmf_table(1.1 * float(sigma_squared))
    wrong, wrong_dof = pearson_statistic(sample, lambda k: wrong_table.get(k, 0.0))
    assert wrong > chi2_threshold(wrong_dof)


def moments(pmf, reach=2_000):
    variance = math.fsum(k * k * pmf(k) for k in range(-reach, reach + 1))
    fourth = math.fsum(k**4 * pmf(k) for k in range(-reach, reach + 1))
    return variance, fourth


def test_discrete_laplace_mean_and_variance_match_closed_form():
    """Var Lap_ℤ(t) = 2q/(1 − q)² con q = e^{−1/t}; con t = 2, ≈ 7,83 (y coincide con
    la suma de la pmf). Media 0. Tolerancia: 6 errores estándar de la media, √(Var/n),
    y de la varianza muestral, √((μ₄ − Var²)/n): falla < 1e-8 por el TLC."""
    n = 50_000
    q = math.exp(-0.5)
    variance = 2 * q / (1 - q) ** 2
    summed, fourth = moments(lambda k: discrete_laplace_pmf(k, 2))
    assert summed == pytest.approx(variance, rel=1e-12)
    sample = m.discrete_laplace_mechanism(np.zeros(n, dtype=np.int64), sensitivity=1, epsilon=0.5,
                                          rng=np.random.default_rng(7))
    assert abs(sample.mean()) < 6 * math.sqrt(variance / n)
    assert abs(sample.var() - variance) < 6 * math.sqrt((fourth - variance**2) / n)


def test_discrete_gaussian_variance_is_at_most_sigma_squared():
    """Con σ² = 4 la varianza exacta (suma de la pmf) es < σ² y casi igual; la muestral la sigue."""
    table = discrete_gaussian_pmf_table(4)
    exact, fourth = moments(lambda k: table.get(k, 0.0))
    assert exact < 4 and exact == pytest.approx(4, rel=1e-6)
    n = 40_000
    sample = m.add_discrete_gaussian_noise(np.zeros(n, dtype=np.int64), sigma_squared=4,
                                           rng=np.random.default_rng(8))
    assert abs(sample.var() - exact) < 6 * math.sqrt((fourth - exact**2) / n)


# --------------------------------------------------------------- privacy --


@pytest.mark.parametrize(
    "sensitivity, epsilon, exact_epsilon",
    [(1, 0.5, Fraction(1, 2)), (3, Fraction(2, 7), Fraction(2, 7)), (2, 0.1, Fraction(1, 10)),
     (1, Decimal("1.25"), Fraction(5, 4))],
)
def test_discrete_laplace_privacy_loss_is_at_most_epsilon_exactly(sensitivity, epsilon, exact_epsilon):
    """ln(P[M(x) = y]/P[M(x') = y]) = (|y − x'| − |y − x|)/t para cada entero y y
    |x − x'| ≤ Δ: racional, sin redondeo. Nunca pasa de ε y lo alcanza con |x − x'| = Δ.
    Fuera de [mín, máx] de x, x' la pérdida es constante, así que la ventana cubre todo."""
    scale = m.discrete_laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    assert isinstance(scale, Fraction) and scale == Fraction(sensitivity) / exact_epsilon
    worst = Fraction(-10**9)
    for shift in range(-sensitivity, sensitivity + 1):
        for y in range(-4 * sensitivity - 5, 4 * sensitivity + 6):
            loss = Fraction(abs(y - shift) - abs(y), 1) / scale
            assert loss <= exact_epsilon
            worst = max(worst, loss)
    assert worst == exact_epsilon


def test_discrete_laplace_pmf_ratio_is_at_most_e_to_epsilon_at_60_digits():
    """Las pmf normalizadas, P(y − x) con la constante tanh(1/(2t)), a 60 cifras:
    la razón entre salidas de bases vecinas nunca supera e^ε (ε = 1/2, Δ = 1) y lo alcanza."""
    decimal.getcontext().prec = 60
    scale = m.discrete_laplace_scale(sensitivity=1, epsilon=0.5)
    t = Decimal(scale.numerator) / Decimal(scale.denominator)
    q = (-1 / t).exp()
    constant = (1 - q) / (1 + q)

    def pmf(k):
        return constant * q ** abs(k)

    bound = Decimal("0.5").exp()
    slack = Decimal(10) ** -55
    ratios = [pmf(y - 42) / pmf(y - 41) for y in range(0, 85)]
    assert max(ratios) <= bound * (1 + slack) and min(ratios) >= (1 - slack) / bound
    assert abs(max(ratios) - bound) < slack
    assert math.fsum(float(pmf(k)) for k in range(-400, 401)) == pytest.approx(1.0, abs=1e-15)


def test_privacy_check_detects_undercalibrated_scale():
    """Control negativo: con t = Δ/(2ε) la pérdida llega a 2ε > ε."""
    scale = Fraction(1, 2) / Fraction(1, 2)  # Δ = 1, ε = 1/2, half the scale
    losses = [Fraction(abs(y - 1) - abs(y)) / scale for y in range(-5, 6)]
    assert max(losses) == 1 > Fraction(1, 2)


def renyi_divergence_discrete_gaussian(alpha, sigma_squared, shift):
    """D_α(N_ℤ(0, σ²) ‖ N_ℤ(shift, σ²)) a 60 cifras, sumando |k| ≤ 60σ + 20."""
    decimal.getcontext().prec = 60
    s2 = Decimal(sigma_squared.numerator) / Decimal(sigma_squared.denominator)
    reach = int(60 * math.sqrt(float(s2))) + 20
    ks = range(-reach, reach + 1)
    weight = {k: (-(Decimal(k) ** 2) / (2 * s2)).exp() for k in range(-reach - shift, reach + shift + 1)}
    total = sum(weight[k] for k in ks)
    alpha = Decimal(alpha)
    acc = Decimal(0)
    for k in ks:
        p = weight[k] / total
        q = weight.get(k - shift, Decimal(0)) / total
        if q == 0:
            continue
        acc += p**alpha * q ** (1 - alpha)
    return acc.ln() / (alpha - 1)


@pytest.mark.parametrize("alpha", [2, 3, "1.5", "4.5"])
def test_discrete_gaussian_renyi_divergence_is_at_most_alpha_rho(alpha):
    """ρ-zCDP: D_α ≤ αρ con ρ = Δ²/(2σ²). Con Δ = 1, ρ = 1/8 → σ² = 4. Para α entero
    y un corrimiento entero vale la igualdad (la suma de Jacobi se cancela), así que la
    cota es justa; para α no entero, la suma desplazada es menor y D_α < αρ."""
    sigma_squared = m.discrete_gaussian_sigma_squared(sensitivity=1, rho=Fraction(1, 8))
    assert sigma_squared == 4
    divergence = renyi_divergence_discrete_gaussian(alpha, sigma_squared, shift=1)
    bound = Decimal(alpha) / 8
    assert divergence <= bound + Decimal(10) ** -45
    if float(alpha).is_integer():
        assert abs(divergence - bound) < Decimal(10) ** -45
    else:
        assert divergence < bound


# ------------------------------------------------------ exact arithmetic only --

SAMPLING_FUNCTIONS = {"_sample_discrete_laplace", "_sample_discrete_gaussian", "_bernoulli",
                      "_bernoulli_exp_minus", "_bernoulli_exp_minus_at_most_one", "take", "below"}


def test_sampling_path_holds_no_float_and_calls_no_float_function(monkeypatch):
    """Cada variable local del camino de muestreo, en cada línea, es un entero (o una
    ``Fraction``, el generador o la fuente de bits): ningún ``float``. Y el módulo ``math``
    que ven los muestreadores solo ofrece ``isqrt``: una exp o un log romperían la prueba."""
    monkeypatch.setattr(m, "math", SimpleNamespace(isqrt=math.isqrt))
    seen, floats = set(), []

    def tracer(frame, event, arg):
        if frame.f_code.co_filename != m.__file__ or frame.f_code.co_name not in SAMPLING_FUNCTIONS:
            return None
        seen.add(frame.f_code.co_name)

        def local_tracer(frame, event, arg):
            for name, value in frame.f_locals.items():
                if isinstance(value, (float, np.floating, complex, Decimal)):
                    floats.append((frame.f_code.co_name, name, value))
            return local_tracer

        return local_tracer

    rng = np.random.default_rng(0)
    sys.settrace(tracer)
    try:
        laplace = m.add_discrete_laplace_noise(np.zeros(300, dtype=np.int64), scale=Fraction(10, 3), rng=rng)
        gauss = m.add_discrete_gaussian_noise(np.zeros(300, dtype=np.int64), sigma_squared=Fraction(7, 3), rng=rng)
        scalar = m.discrete_laplace_mechanism(5, sensitivity=1, epsilon=0.5, rng=rng)
    finally:
        sys.settrace(None)
    assert floats == []
    assert seen == SAMPLING_FUNCTIONS
    assert laplace.dtype == np.int64 and gauss.dtype == np.int64 and type(scalar) is int


def test_same_seed_same_release_other_seed_other_release():
    first = m.add_discrete_laplace_noise(np.arange(50), scale=2, rng=np.random.default_rng(3))
    second = m.add_discrete_laplace_noise(np.arange(50), scale=2, rng=np.random.default_rng(3))
    third = m.add_discrete_laplace_noise(np.arange(50), scale=2, rng=np.random.default_rng(4))
    np.testing.assert_array_equal(first, second)
    assert not np.array_equal(first, third)


def test_known_stream_for_a_fixed_seed():
    """Las salidas con la semilla 0 están fijadas: solo dependen de los enteros de 64 bits
    del generador (los mismos en numpy 2.0 de Pyodide y en el nativo) y de aritmética entera."""
    out = m.discrete_laplace_mechanism(np.zeros(8, dtype=np.int64), sensitivity=1, epsilon=0.5,
                                       rng=np.random.default_rng(0))
    assert out.tolist() == KNOWN_LAPLACE_STREAM
    out = m.discrete_gaussian_mechanism(np.zeros(8, dtype=np.int64), sensitivity=1, rho=Fraction(1, 8),
                                        rng=np.random.default_rng(0))
    assert out.tolist() == KNOWN_GAUSSIAN_STREAM


# --------------------------------------------------------------- edge cases --


def test_types_scalar_int_in_int_out_array_shape_kept():
    rng = np.random.default_rng(0)
    assert type(m.discrete_laplace_mechanism(42, sensitivity=1, epsilon=0.5, rng=rng)) is int
    assert type(m.discrete_laplace_mechanism(np.int32(42), sensitivity=1, epsilon=0.5, rng=rng)) is int
    assert type(m.discrete_laplace_mechanism(42.0, sensitivity=1, epsilon=0.5, rng=rng)) is int
    assert type(m.discrete_gaussian_mechanism(42, sensitivity=1, rho=0.5, rng=rng)) is int
    matrix = m.discrete_laplace_mechanism(np.zeros((3, 4)), sensitivity=1, epsilon=0.5, rng=rng)
    assert matrix.shape == (3, 4) and matrix.dtype == np.int64
    values = np.array([1, 2, 3])
    noisy = m.discrete_gaussian_mechanism(values, sensitivity=1, rho=0.5, rng=rng)
    assert noisy.shape == (3,) and np.array_equal(values, [1, 2, 3])


def test_float_parameters_mean_what_was_written():
    """0.1 es 1/10 (no el doble 0,1000000000000000055…): t = Δ/ε = 10 exacto."""
    assert m.discrete_laplace_scale(sensitivity=1, epsilon=0.1) == 10
    assert m.discrete_laplace_scale(sensitivity=1, epsilon=0.5) == 2
    assert m.discrete_laplace_scale(sensitivity=2, epsilon=Fraction(1, 3)) == 6
    assert m.discrete_laplace_scale(sensitivity=1, epsilon=Decimal("0.25")) == 4
    assert m.discrete_laplace_scale(sensitivity=1, epsilon=np.float64(0.3)) == Fraction(10, 3)
    assert m.discrete_gaussian_sigma_squared(sensitivity=2, rho=0.5) == 4


def test_python_integers_beyond_64_bits_stay_exact():
    huge = 2**100 + 1
    out = m.discrete_laplace_mechanism(huge, sensitivity=1, epsilon=0.5, rng=np.random.default_rng(0))
    assert type(out) is int and abs(out - huge) < 200


def test_huge_scale_gives_exact_huge_integers_never_floats():
    out = m.add_discrete_laplace_noise(0, scale=10**30, rng=np.random.default_rng(1))
    assert type(out) is int and abs(out) < 10**33
    out = m.add_discrete_gaussian_noise(0, sigma_squared=10**40, rng=np.random.default_rng(1))
    assert type(out) is int and abs(out) < 10**22


def test_tiny_scale_publishes_the_value():
    """Con t = 10⁻⁶, P(Z ≠ 0) = 2q/(1 + q) con q = e^{−10⁶}: ninguna de 2000 muestras se mueve."""
    out = m.add_discrete_laplace_noise(np.full(2000, 7), scale=Fraction(1, 10**6), rng=np.random.default_rng(2))
    assert np.all(out == 7)
    out = m.add_discrete_gaussian_noise(np.full(2000, 7), sigma_squared=Fraction(1, 10**6), rng=np.random.default_rng(2))
    assert np.all(out == 7)


def test_array_result_beyond_64_bits_is_refused_in_spanish():
    """Con t = 10³⁰, |Z| < 2⁶³ ≈ 9,2·10¹⁸ tiene probabilidad < 10⁻¹¹: el resultado no cabe."""
    with pytest.raises(ValueError, match="no cabe en enteros de 64 bits"):
        m.add_discrete_laplace_noise(np.zeros(3, dtype=np.int64), scale=10**30, rng=np.random.default_rng(0))


BAD_VALUES = [
    (41.5, "valor debe ser un entero"),
    ([1, 2.5], "el primero que no lo es: 2.5"),
    (True, "valor debe ser un entero; se recibió True"),
    (None, "valor debe ser un entero; se recibió None"),
    ("3", "valor debe ser un entero; se recibió '3'"),
    (math.nan, "se recibió nan"),
    (math.inf, "se recibió inf"),
    ([1, math.inf], "no finitos"),
    ([], "vacío"),
    ([[1], [2, 3]], "solo enteros"),
    (np.array([True, False]), "solo enteros"),
    ([1, 2**70], "no cabe en enteros de 64 bits"),
    (np.array([2**63], dtype=np.uint64), "no cabe en enteros de 64 bits"),
    ([1e300], "no cabe en enteros de 64 bits"),
]


@pytest.mark.parametrize("value, fragment", BAD_VALUES, ids=[repr(v)[:20] for v, _ in BAD_VALUES])
@pytest.mark.parametrize("mechanism", ["laplace", "gauss"])
def test_bad_values_are_refused_in_spanish(mechanism, value, fragment):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=fragment.replace("(", r"\(").replace(")", r"\)")):
        if mechanism == "laplace":
            m.discrete_laplace_mechanism(value, sensitivity=1, epsilon=0.5, rng=rng)
        else:
            m.discrete_gaussian_mechanism(value, sensitivity=1, rho=0.5, rng=rng)


BAD_RATIONALS = [0, -1, -0.5, math.nan, math.inf, -math.inf, None, "0.5", True, [0.5], Decimal("NaN"), Fraction(0)]


@pytest.mark.parametrize("bad", BAD_RATIONALS, ids=[repr(b) for b in BAD_RATIONALS])
def test_bad_epsilon_rho_and_scales_are_refused_naming_them(bad):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"^epsilon debe ser un número racional positivo"):
        m.discrete_laplace_mechanism(1, sensitivity=1, epsilon=bad, rng=rng)
    with pytest.raises(ValueError, match=r"^rho debe ser un número racional positivo"):
        m.discrete_gaussian_mechanism(1, sensitivity=1, rho=bad, rng=rng)
    with pytest.raises(ValueError, match=r"^escala debe ser un número racional positivo"):
        m.add_discrete_laplace_noise(1, scale=bad, rng=rng)
    with pytest.raises(ValueError, match=r"^sigma_squared debe ser un número racional positivo"):
        m.add_discrete_gaussian_noise(1, sigma_squared=bad, rng=rng)


@pytest.mark.parametrize("bad", [0, -1, 1.5, True, None, math.inf, "1"])
def test_bad_sensitivities_are_refused(bad):
    rng = np.random.default_rng(0)
    with pytest.raises(ValueError, match=r"^sensibilidad debe ser un entero positivo"):
        m.discrete_laplace_mechanism(1, sensitivity=bad, epsilon=0.5, rng=rng)
    with pytest.raises(ValueError, match=r"^sensibilidad \(L2\) debe ser un entero positivo"):
        m.discrete_gaussian_mechanism(1, sensitivity=bad, rho=0.5, rng=rng)


@pytest.mark.parametrize("bad", [None, 0, np.random.RandomState(0), np.random.default_rng(0).bit_generator])
def test_discrete_mechanisms_demand_a_generator(bad):
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        m.discrete_laplace_mechanism(1, sensitivity=1, epsilon=0.5, rng=bad)
    with pytest.raises(ValueError, match="numpy.random.Generator"):
        m.discrete_gaussian_mechanism(1, sensitivity=1, rho=0.5, rng=bad)


def test_privacy_parameters_are_keyword_only():
    with pytest.raises(TypeError):
        m.discrete_laplace_mechanism(1, 1, 0.5, np.random.default_rng(0))
    with pytest.raises(TypeError):
        m.discrete_laplace_scale(1, 0.5)
