"""Calibration and accounting helpers at the edge of floating point: never ``inf``, always Spanish.

Inputs each valid on its own can give a result no double holds (b = Δ/ε with
ε = 1e-320, e^ε with ε = 1000, 1,25/δ with δ subnormal) or an array no memory
holds (k = 10¹² releases). Each such call must end in a ``ValueError`` in
Spanish that names the inputs it was given (the derived ``inf`` says nothing
to whoever called), never in ``inf``, a Python ``OverflowError``,
``ZeroDivisionError`` or ``MemoryError``, or a numpy warning. Values at the
edge that do fit still give a finite answer, checked against the formula.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpdeck import accounting as a
from dpdeck import learning as l
from dpdeck import mechanisms as m
from dpdeck import queries as q


def rng():
    return np.random.default_rng(0)


# label → (call, the inputs the message must name)
OVERFLOWS = {
    "escala-epsilon-subnormal": (lambda: m.laplace_scale(sensitivity=1, epsilon=1e-320), ["epsilon = 1e-320"]),
    "escala-cociente-enorme": (lambda: m.laplace_scale(sensitivity=1e308, epsilon=1e-308),
                               ["sensibilidad = 1e+308", "epsilon = 1e-308"]),
    "mecanismo-epsilon-subnormal": (lambda: m.laplace_mechanism(42, sensitivity=1, epsilon=1e-320, rng=rng()),
                                    ["epsilon = 1e-320"]),
    "sigma-delta-subnormal": (lambda: m.gaussian_sigma(sensitivity=1, epsilon=0.5, delta=1e-320), ["delta = 1e-320"]),
    "sigma-delta-minimo": (lambda: m.gaussian_sigma(sensitivity=1, epsilon=0.5, delta=5e-324), ["delta = 5e-324"]),
    "sigma-enorme": (lambda: m.gaussian_sigma(sensitivity=1e308, epsilon=1e-10, delta=1e-5),
                     ["sensibilidad (L2) = 1e+308", "epsilon = 1e-10"]),
    "densidad-sigma-subnormal": (lambda: m.gaussian_density(0.0, sigma=1e-320), ["sigma = 1e-320"]),
    "razon-epsilon-1000": (lambda: m.laplace_density_ratio_bound(epsilon=1000), ["epsilon = 1000"]),
    "secuencial-desborda": (lambda: a.sequential_composition([1e308, 1e308]), ["epsilons = [1e+308, 1e+308]"]),
    "avanzada-epsilon-1000": (lambda: a.advanced_composition(epsilon=1000, k=10, delta_prime=1e-5),
                              ["epsilon = 1000", "k = 10"]),
    "avanzada-k-gigante": (lambda: a.advanced_composition(epsilon=0.1, k=10**400, delta_prime=1e-5),
                           ["k = un entero de 401 cifras"]),
    "avanzada-simplificada-k-gigante": (
        lambda: a.advanced_composition_simplified(epsilon=0.1, k=10**400, delta_prime=1e-5),
        ["k = un entero de 401 cifras"]),
    "delta-exacta-sigma-minima": (lambda: a.gaussian_exact_delta(epsilon=1, sigma=1e-300), ["sigma = 1e-300"]),
    "rdp-sigma-minima": (lambda: a.gaussian_rdp_epsilon(sigma=1e-300, steps=1, delta=1e-5), ["sigma = 1e-300"]),
    "promedio-k-enorme": (lambda: q.average_releases(1.0, k=10**12, epsilon=1, rng=rng()), ["k = 1000000000000"]),
    "error-de-promediar-k-enorme": (lambda: q.measure_averaging_error(1.0, ks=[10**9], epsilon=1, rng=rng()),
                                    ["k = 1000000000", "trials = 2000"]),
    "sigmoide-texto": (lambda: l.sigmoid("a"), ["'a'"]),
}


@pytest.mark.parametrize("label", sorted(OVERFLOWS))
def test_a_result_no_double_or_memory_holds_is_refused_in_spanish_naming_the_inputs(label):
    call, named = OVERFLOWS[label]
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # no numpy warning on the way either
        with pytest.raises(ValueError) as raised:
            call()
    message = str(raised.value)
    assert all(part in message for part in named), message
    assert "se recibió" in message or "no es un número finito" in message or "no caben en la memoria" in message
    assert "inf" not in message.split(":")[0], message


def test_values_at_the_edge_that_fit_still_give_the_formulas_answer():
    assert m.laplace_scale(sensitivity=1e308, epsilon=1.0) == 1e308
    assert m.laplace_density_ratio_bound(epsilon=700) == math.exp(700)
    assert m.gaussian_sigma(sensitivity=1, epsilon=0.5, delta=1e-300) == pytest.approx(
        math.sqrt(2 * math.log(1.25 / 1e-300)) / 0.5)
    assert a.sequential_composition([1e307, 1e307]) == 2e307
    assert a.advanced_composition(epsilon=0.1, k=10**6, delta_prime=1e-5) == pytest.approx(
        0.1 * math.sqrt(2 * 10**6 * math.log(1e5)) + 10**6 * 0.1 * math.expm1(0.1))
    assert np.isfinite(m.gaussian_density(np.array([0.0, 1.0]), sigma=1e-150)).all()
    assert q.average_releases(1.0, k=1000, epsilon=1, rng=rng()) == pytest.approx(1.0, abs=0.5)
    assert l.sigmoid(0.0) == 0.5 and l.sigmoid(np.array([0.0]))[0] == 0.5
