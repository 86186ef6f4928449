"""El ataque de punto flotante (Mironov 2012): gana contra Laplace en punto flotante, no contra el discreto.

Cotas: con n ensayos, el acierto medido se aparta del esperado en más de
t = √(ln(2/β)/(2n)) con probabilidad menor que β (Hoeffding); aquí β = 10⁻⁶.
Bajo ε-DP el acierto esperado de cualquier atacante con previa 1/2 es a lo sumo
e^ε/(1 + e^ε) (``attack_success_bound``).
"""

import math

import numpy as np
import pytest

from dpdeck import attacks
from dpdeck import mechanisms as m

FAILURE = 1e-6


def hoeffding_halfwidth(n, failure=FAILURE):
    return math.sqrt(math.log(2.0 / failure) / (2.0 * n))


# ------------------------------------------------ the model of numpy's sampler --


@pytest.mark.parametrize("true_value, scale", [(0.0, 2.0), (1.0, 2.0), (42.0, 2.0), (-3.5, 0.7),
                                               (1e6, 10.0), (0.0, 1e-3), (5.0, 1e3)])
def test_every_release_of_the_float_mechanism_is_found_reachable(true_value, scale):
    """Sin falsos negativos: el atacante jamás descarta el valor verdadero. Si numpy
    cambiara su muestreador, esta prueba lo diría antes que la diapositiva."""
    releases = m.add_laplace_noise(np.full(1500, true_value), scale=scale, rng=np.random.default_rng(11))
    assert all(attacks.can_release(y, true_value=true_value, scale=scale) for y in releases.tolist())


def first_reaching_by_bisection(output, true_value, scale, lo, hi):
    """Otra búsqueda, independiente: bisección pura sobre todo el rango de k."""
    release = lambda k: attacks._float_laplace_release(k, true_value, scale)  # noqa: E731
    while hi - lo > 1:
        middle = (lo + hi) // 2
        if release(middle) >= output:
            hi = middle
        else:
            lo = middle
    return hi


def test_unreachable_verdicts_agree_with_an_independent_bisection():
    """Cada «no pudo salir de 0» se confirma con una bisección desde todo el rango de U:
    ningún k cerca del borde da exactamente la salida."""
    releases = m.add_laplace_noise(np.ones(400), scale=2.0, rng=np.random.default_rng(12)).tolist()
    refuted = 0
    for y in releases:
        if attacks.can_release(y, true_value=0.0, scale=2.0):
            continue
        lo, hi = (2**52 - 1, 2**53 - 1) if y > 0 else (0, 2**52 - 1)
        edge = first_reaching_by_bisection(y, 0.0, 2.0, lo, hi)
        assert all(attacks._float_laplace_release(k, 0.0, 2.0) != y for k in range(edge - 3, edge + 4)
                   if 0 < k < 2**53)
        refuted += 1
    assert refuted > 250  # most releases from 1 are impossible from 0


def test_model_reproduces_numpy_bit_for_bit():
    """La fórmula del módulo, con los mismos uniformes, da los mismos dobles que numpy."""
    uniforms = np.random.default_rng(5).random(2000)
    releases = np.random.default_rng(5).laplace(3.0, 2.0, size=2000)
    model = [attacks._float_laplace_release(int(u * 2**53), 3.0, 2.0) for u in uniforms.tolist()]
    assert model == releases.tolist()


# ------------------------------------------------------------ the attack --


def test_attack_beats_the_dp_bound_on_the_float_mechanism():
    """Con conteos 1 y 0 y ε = 0,5, el acierto supera e^ε/(1 + e^ε) ≈ 0,622 por mucho más
    que la tolerancia de Hoeffding: la garantía de ε-DP no se cumple."""
    trials = 2000
    success = attacks.measure_attack_success(m.laplace_mechanism, true_values=(1, 0), epsilon=0.5,
                                             trials=trials, rng=np.random.default_rng(2012))
    bound = attacks.attack_success_bound(epsilon=0.5)
    assert success - hoeffding_halfwidth(trials) > bound + 0.15


def test_attack_with_the_hospital_counts_and_more_noise_still_beats_the_bound():
    """Con 42 y 41 el ataque se debilita, pero con ε = 0,1 (más ruido) sigue por encima
    de la cota, que baja a ≈ 0,525: más ruido no cura el problema."""
    trials = 4000
    success = attacks.measure_attack_success(m.laplace_mechanism, true_values=(42, 41), epsilon=0.1,
                                             trials=trials, rng=np.random.default_rng(41))
    assert success - hoeffding_halfwidth(trials) > attacks.attack_success_bound(epsilon=0.1)


@pytest.mark.parametrize("true_values, epsilon", [((1, 0), 0.5), ((42, 41), 0.1), ((3, 0), 1.0)])
def test_attack_fails_on_the_discrete_mechanism(true_values, epsilon):
    """Contra el Laplace discreto el atacante nunca descarta un candidato y adivina: su
    acierto está a menos de t de 1/2, y a menos de t de la cota de ε-DP."""
    trials = 2000
    success = attacks.measure_attack_success(m.discrete_laplace_mechanism, true_values=true_values,
                                             epsilon=epsilon, trials=trials, rng=np.random.default_rng(7))
    t = hoeffding_halfwidth(trials)
    assert abs(success - 0.5) < t
    assert success < attacks.attack_success_bound(epsilon=epsilon) + t


def test_every_integer_can_come_from_every_integer_under_the_discrete_mechanism():
    releases = m.discrete_laplace_mechanism(np.ones(300, dtype=np.int64), sensitivity=1, epsilon=0.5,
                                            rng=np.random.default_rng(3)).tolist()
    assert all(attacks.can_release(y, true_value=x, scale=2.0) for y in releases for x in (0, 1, 42))
    assert not attacks.can_release(3, true_value=0.5, scale=2.0)


def test_the_bound_is_attained_by_the_best_test_on_the_discrete_laplace():
    """Comprobación independiente de e^ε/(1 + e^ε): contra Lap_ℤ(1/ε) con Δ = 1, la mejor
    prueba («f = 1 si y ≥ 1») acierta P(Z ≥ 0) = 1/(1 + e^{−ε}) exacto, en forma cerrada."""
    for epsilon in (0.1, 0.5, 1.0, 3.0):
        q = math.exp(-epsilon)
        p_zero = (1 - q) / (1 + q)
        best = (1 + p_zero) / 2
        assert attacks.attack_success_bound(epsilon=epsilon) == pytest.approx(best, rel=1e-14)
    assert attacks.attack_success_bound(epsilon=0.5) == pytest.approx(0.6225, abs=1e-4)


def test_guess_names_the_only_possible_candidate_and_is_never_wrong_then():
    rng = np.random.default_rng(9)
    for secret in (0, 1):
        releases = m.laplace_mechanism(np.full(300, secret), sensitivity=1, epsilon=0.5, rng=rng).tolist()
        for y in releases:
            possible = [x for x in (1, 0) if attacks.can_release(y, true_value=x, scale=2.0)]
            if len(possible) == 1:
                assert attacks.guess_true_value(y, candidates=(1, 0), scale=2.0, rng=rng) == secret


# ------------------------------------------------------------- validation --


@pytest.mark.parametrize("output, fragment", [(True, "debe ser un número"), (math.nan, "salida debe ser finito"),
                                              ([1.0, 2.0], "no arreglos"), ("1", "salida debe ser un número")])
def test_can_release_refuses_bad_outputs(output, fragment):
    with pytest.raises(ValueError, match=fragment):
        attacks.can_release(output, true_value=0.0, scale=2.0)


@pytest.mark.parametrize("kwargs, fragment", [
    (dict(true_values=(1, 1)), "dos enteros distintos"),
    (dict(true_values=(1.5, 0)), "dos enteros distintos"),
    (dict(trials=0), "ensayos debe ser un entero positivo"),
    (dict(epsilon=-1), "epsilon debe ser positivo"),
    (dict(rng=None), "numpy.random.Generator"),
])
def test_measure_attack_success_refuses_bad_parameters(kwargs, fragment):
    arguments = dict(true_values=(1, 0), epsilon=0.5, trials=10, rng=np.random.default_rng(0)) | kwargs
    with pytest.raises(ValueError, match=fragment):
        attacks.measure_attack_success(m.laplace_mechanism, **arguments)
