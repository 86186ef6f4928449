"""Mecanismos de punto flotante: se niegan cuando el ruido no cabe en un doble.

Dos criterios, uno por validador (``dpdeck._checks``):

* resolución: ulp(max(máx |x|, b)) ≤ b/64, o el redondeo de x + Z se traga el ruido;
* rango: máx |x| + 64·b ≤ el mayor doble, o la publicación puede ser ``inf``.

Cada uno se prueba en su borde, de los dos lados, en escalares y arreglos, en
Laplace y en Gauss; y un barrido de valores y escalas extremos comprueba que
ninguna publicación es ``inf`` ni ``nan``: o sale finita, o hay un ValueError.
"""

import math
import sys

import numpy as np
import pytest

from dpdeck import _checks as checks
from dpdeck import mechanisms as m

MAX = sys.float_info.max
SMALLEST_SUBNORMAL = math.ulp(0.0)


def hoeffding_halfwidth(n, failure):
    """Hoeffding bilateral para una proporción: P(|p̂ − p| > t) ≤ 2 exp(−2 n t²)."""
    return math.sqrt(math.log(2.0 / failure) / (2.0 * n))


def laplace(value, scale, seed=0):
    return m.add_laplace_noise(value, scale=scale, rng=np.random.default_rng(seed))


def gauss(value, sigma, seed=0):
    return m.add_gaussian_noise(value, sigma=sigma, rng=np.random.default_rng(seed))


# --------------------------------------------------------- the reported case --


def test_raw_float_noise_at_2_to_60_is_swallowed_by_rounding():
    """El problema: cerca de 2⁶⁰ los dobles distan 256 y Lap(2) nunca llega a 128."""
    rng = np.random.default_rng(1)
    releases = float(2**60) + rng.laplace(0.0, 2.0, size=1000)
    assert np.all(releases == 2.0**60)


def test_laplace_mechanism_refuses_2_to_60_naming_the_value():
    with pytest.raises(ValueError) as info:
        m.laplace_mechanism(2**60, sensitivity=1, epsilon=0.5, rng=np.random.default_rng(0))
    message = str(info.value)
    assert message.startswith("valor demasiado grande para la escala del ruido")
    assert "1152921504606846976" in message and "distan 256" in message and "b = 2" in message


def test_gaussian_mechanism_refuses_2_to_60_naming_sigma():
    with pytest.raises(ValueError, match=r"valor demasiado grande .* σ/64"):
        m.gaussian_mechanism(2**60, sensitivity=1, epsilon=0.5, delta=1e-5, rng=np.random.default_rng(0))


# --------------------------------------------------- resolution: the boundary --

# With b = 2 the limit is ulp ≤ 2/64 = 2⁻⁵: doubles in [2⁴⁷, 2⁴⁸) are 2⁻⁵ apart, from 2⁴⁸ on 2⁻⁴.
LAST_ACCEPTED = 2.0**48 - 2.0**-5
FIRST_REFUSED = 2.0**48


def test_resolution_boundary_values_are_adjacent_doubles():
    assert math.nextafter(LAST_ACCEPTED, math.inf) == FIRST_REFUSED
    assert math.ulp(LAST_ACCEPTED) == 2.0 / 64 and math.ulp(FIRST_REFUSED) == 2.0 / 32


@pytest.mark.parametrize("sign", [1.0, -1.0])
@pytest.mark.parametrize("add_noise", [laplace, gauss], ids=["laplace", "gauss"])
def test_resolution_boundary_scalar_both_sides(add_noise, sign):
    assert math.isfinite(add_noise(sign * LAST_ACCEPTED, 2.0))
    with pytest.raises(ValueError, match="demasiado grande para la escala del ruido"):
        add_noise(sign * FIRST_REFUSED, 2.0)


@pytest.mark.parametrize("add_noise", [laplace, gauss], ids=["laplace", "gauss"])
def test_resolution_boundary_arrays_both_sides(add_noise):
    """En un arreglo manda el componente más grande en valor absoluto, esté donde esté."""
    accepted = np.array([[0.0, 1.0], [-LAST_ACCEPTED, 5.0]])
    assert np.all(np.isfinite(add_noise(accepted, 2.0)))
    refused = np.array([[0.0, 1.0], [5.0, -FIRST_REFUSED]])
    with pytest.raises(ValueError, match=r"se recibió -281474976710656 \(en la posición \(1, 1\)\)"):
        add_noise(refused, 2.0)


def test_resolution_boundary_moves_with_the_scale():
    """ulp ≤ b/64 escala con b: con b = 2¹⁰ el borde pasa a 2⁵⁷ (ulp = 2⁴ = b/64 justo antes)."""
    assert math.isfinite(laplace(2.0**57 - 2.0**4, 2.0**10))
    with pytest.raises(ValueError):
        laplace(2.0**57, 2.0**10)


def test_at_the_accepted_boundary_the_noise_survives_rounding():
    """En el último valor aceptado, la publicación es x exacto solo si |Z| < ulp/2 = 1/64:
    P = 1 − e^{−1/128} ≈ 0,0078. Con n = 20 000, Hoeffding (falla < 1e-6) acota la
    fracción observada por 0,0078 + 0,0172; en 2⁶⁰ era 1."""
    n = 20_000
    releases = laplace(np.full(n, LAST_ACCEPTED), 2.0, seed=3)
    unchanged = np.mean(releases == LAST_ACCEPTED)
    assert unchanged <= (1 - math.exp(-1 / 128)) + hoeffding_halfwidth(n, 1e-6)


def test_subnormal_scale_boundary():
    """Con x = 0 manda la escala misma: una b subnormal no tiene bits para el ruido.
    b = 64 · 2⁻¹⁰⁷⁴ es la menor aceptada (ulp(b) = 2⁻¹⁰⁷⁴ = b/64); 63 · 2⁻¹⁰⁷⁴ no."""
    assert math.isfinite(laplace(0.0, 64 * SMALLEST_SUBNORMAL))
    with pytest.raises(ValueError, match=r"^escala del ruido demasiado pequeña: b = 3.1e-322 es subnormal"):
        laplace(0.0, 63 * SMALLEST_SUBNORMAL)
    with pytest.raises(ValueError, match="σ = 1e-323"):
        gauss(0.0, 1e-323)


def test_ordinary_deck_values_pass():
    """Los valores de la clase quedan lejos del borde: conteos, sumas del censo, gradientes."""
    assert math.isfinite(m.laplace_mechanism(42, sensitivity=1, epsilon=0.5, rng=np.random.default_rng(0)))
    assert math.isfinite(m.laplace_mechanism(4_588_248, sensitivity=10_000, epsilon=0.1, rng=np.random.default_rng(0)))
    assert math.isfinite(m.laplace_mechanism(1e9, sensitivity=1, epsilon=10, rng=np.random.default_rng(0)))
    assert math.isfinite(gauss(670.0, 1e-3))


# ---------------------------------------------------------- range: the boundary --


def test_raw_float_noise_can_overflow_to_inf():
    """El problema: de x = 1,79·10³⁰⁸ al mayor doble (≈ 1,797·10³⁰⁸) faltan 0,7·10³⁰⁶;
    Lap(10³⁰⁶) los supera con probabilidad e^{−0,7}/2 ≈ 0,25, así que en 1000
    publicaciones aparece ``inf`` salvo con probabilidad 0,75¹⁰⁰⁰ < 10⁻¹²⁴."""
    rng = np.random.default_rng(2)
    with np.errstate(over="ignore"):
        releases = 1.79e308 + rng.laplace(0.0, 1e306, size=1000)
    assert np.isinf(releases).any()


@pytest.mark.parametrize("add_noise", [laplace, gauss], ids=["laplace", "gauss"])
def test_range_refuses_what_could_overflow(add_noise):
    with pytest.raises(ValueError) as info:
        add_noise(1.79e308, 1e306)
    message = str(info.value)
    assert message.startswith("valor y escala demasiado grandes")
    assert "1.79e+308" in message and "infinita" in message


@pytest.mark.parametrize("add_noise", [laplace, gauss], ids=["laplace", "gauss"])
def test_range_boundary_both_sides(add_noise):
    """64·b = mayor doble se acepta (y 10⁵ publicaciones son finitas); el doble siguiente de b, no."""
    largest_scale = MAX / 64
    releases = add_noise(np.zeros(100_000), largest_scale)
    assert np.all(np.isfinite(releases))
    with pytest.raises(ValueError, match="demasiado grandes"):
        add_noise(0.0, math.nextafter(largest_scale, math.inf))


def test_range_boundary_with_a_large_value():
    """|x| + 64·b ≤ máx: con b = 2⁹⁷⁷ (la menor b que admite la resolución cerca del
    mayor doble, cuyo ulp es 2⁹⁷¹), x = máx − 64·b pasa y el doble siguiente no."""
    scale = 2.0**977
    edge = MAX - 64 * scale
    assert edge + 64 * scale == MAX
    assert np.all(np.isfinite(laplace(np.full(1000, edge), scale)))
    with pytest.raises(ValueError, match="demasiado grandes"):
        laplace(math.nextafter(edge, math.inf), scale)


def test_range_factor_bounds_numpy_laplace_noise():
    """NOISE_RANGE_FACTOR cubre el mayor ruido de numpy: |ln(U')| ≤ 52 ln 2 con U' ≥ 2⁻⁵²."""
    assert 52 * math.log(2) < checks.NOISE_RANGE_FACTOR
    assert -math.log(2.0**-52) == pytest.approx(52 * math.log(2))


# ------------------------------------------------------------- never inf/nan --


MAGNITUDES = [0.0] + [10.0**k for k in range(-320, 309, 16)] + [MAX]


def test_sweep_of_extreme_values_and_scales_never_publishes_inf_or_nan():
    """Para cada par (x, b) de un barrido de −320 a 308 órdenes de magnitud, con ambos
    signos de x y en Laplace y Gauss: o la publicación es finita, o un ValueError en
    español la rechaza. Nunca ``inf``, ``nan``, un OverflowError ni una advertencia."""
    scales = [b for b in MAGNITUDES if b > 0]
    published = refused = 0
    with np.errstate(all="raise"):
        for x in MAGNITUDES:
            for b in scales:
                for add_noise in (laplace, gauss):
                    values = np.array([x, -x, x / 2])
                    try:
                        out = add_noise(values, b)
                    except ValueError as error:
                        assert "demasiado grande" in str(error) or "demasiado pequeña" in str(error)
                        refused += 1
                        continue
                    assert np.all(np.isfinite(out)), (x, b)
                    published += 1
    assert published > 1000 and refused > 1000


@pytest.mark.parametrize("value", [10**400, [1.0, 10**400], -(10**309)])
def test_integers_beyond_the_largest_double_are_refused_in_spanish(value):
    with pytest.raises(ValueError, match="no cabe en un número de punto flotante"):
        m.laplace_mechanism(value, sensitivity=1, epsilon=0.5, rng=np.random.default_rng(0))


# ----------------------------------------------------------- the validators --


def test_noise_resolution_validator_criterion_is_ulp_over_64():
    for exponent in range(-60, 60, 7):
        scale = 2.0**exponent
        checks.check_noise_resolution(scale * 2.0**47 - math.ulp(scale * 2.0**47), scale=scale)
        with pytest.raises(ValueError):
            checks.check_noise_resolution(scale * 2.0**47, scale=scale)


def test_noise_validators_leave_empty_and_nan_to_their_own_messages():
    checks.check_noise_resolution(np.array([]), scale=1.0)
    checks.check_noise_range(np.array([]), scale=1.0)
    with pytest.raises(ValueError, match="no finitos"):
        checks.check_noise_resolution([1.0, math.nan], scale=1.0)


@pytest.mark.parametrize("value, scale", [
    (2.0**60, 2.0),                     # the resolution criterion
    ([1.0, 1e308], 1e307),              # the range criterion
    (np.array([[3.0, -2.0**60]]), 2.0),  # resolution, naming the position of the largest
    ([1.0, math.inf], 1.0),             # not finite
    (5e-324, 1.0),                      # fine: returned as validated
    ([[1, -2], [3, 4]], 0.5),
])
def test_noise_fits_is_both_validators_in_one_pass(value, scale):
    # One pass over the value, the two criteria in order, and what check_finite returns.
    def both():
        checks.check_noise_resolution(value, scale=scale, scale_name="σ")
        checks.check_noise_range(value, scale=scale, scale_name="σ")
        return checks.check_finite(value, name="valor")
    try:
        expected = both()
    except ValueError as error:
        with pytest.raises(ValueError) as raised:
            checks.check_noise_fits(value, scale=scale, scale_name="σ")
        assert str(raised.value) == str(error)
        return
    fitted = checks.check_noise_fits(value, scale=scale, scale_name="σ")
    assert type(fitted) is type(expected) and np.array_equal(fitted, expected)
