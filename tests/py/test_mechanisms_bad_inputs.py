"""Entradas hostiles o descuidadas a los mecanismos: cada una termina bien.

«Bien» es una de dos cosas: un ``ValueError`` con un mensaje en español que
nombra lo que falla, o una publicación finita en la que el ruido sobrevivió
(no todas iguales al valor verdadero). Nunca ``inf``, ``nan``, el valor
verdadero intacto, un ``OverflowError``/``TypeError`` de Python ni una
advertencia de numpy. La lista reúne los casos de cada mecanismo público; la
misma lista, corrida contra una versión anterior, cuenta cuántos se manejaban.
"""

from __future__ import annotations

import math
import sys
import warnings
from fractions import Fraction

import numpy as np
import pytest

from dpdeck import mechanisms as m

MAX = sys.float_info.max
SPANISH = ("se recibió", "debe ", "demasiado", "no cabe", "vacío", "no finitos")


def rng():
    return np.random.default_rng(0)


def laplace(value, **kw):
    return m.laplace_mechanism(value, **({"sensitivity": 1, "epsilon": 0.5, "rng": rng()} | kw))


def add_laplace(value, **kw):
    return m.add_laplace_noise(value, **({"scale": 2.0, "rng": rng()} | kw))


def gauss(value, **kw):
    return m.gaussian_mechanism(value, **({"sensitivity": 1, "epsilon": 0.5, "delta": 1e-5, "rng": rng()} | kw))


def add_gauss(value, **kw):
    return m.add_gaussian_noise(value, **({"sigma": 2.0, "rng": rng()} | kw))


def discrete_laplace(value, **kw):
    return m.discrete_laplace_mechanism(value, **({"sensitivity": 1, "epsilon": 0.5, "rng": rng()} | kw))


def discrete_gauss(value, **kw):
    return m.discrete_gaussian_mechanism(value, **({"sensitivity": 1, "rho": 0.5, "rng": rng()} | kw))


FLOAT_MECHANISMS = [laplace, add_laplace, gauss, add_gauss]

# (label, value, keyword overrides) tried on each floating-point mechanism.
FLOAT_CASES = [
    ("2**60 (the reported case)", 2**60, {}),
    ("-2**60", -(2**60), {}),
    ("2**53", 2**53, {}),
    ("1e17", 1e17, {}),
    ("1e300", 1e300, {}),
    ("array with 2**60 last", [0.0, 1.0, 2.0**60], {}),
    ("2-D array with -1e20", np.array([[1.0, 2.0], [-1e20, 0.0]]), {}),
    ("largest double", MAX, {}),
    ("-largest double", -MAX, {}),
    ("1.79e308", 1.79e308, {}),
    ("10**400 (int beyond doubles)", 10**400, {}),
    ("-(10**309)", -(10**309), {}),
    ("[1, 10**400]", [1, 10**400], {}),
    ("nan", math.nan, {}),
    ("inf", math.inf, {}),
    ("[1, nan]", [1.0, math.nan], {}),
    ("empty list", [], {}),
    ("empty 2-D array", np.zeros((0, 3)), {}),
    ("None", None, {}),
    ("'42'", "42", {}),
    ("True", True, {}),
    ("complex 1+2j", 1 + 2j, {}),
    ("complex array", np.array([1 + 2j]), {}),
    ("ragged list", [[1.0], [1.0, 2.0]], {}),
    ("dict", {"a": 1}, {}),
    ("object array of strings", np.array(["a", "b"], dtype=object), {}),
]

# Parameter abuse, with a harmless value of 42.
PARAMETER_CASES = [
    ("epsilon=0", laplace, {"epsilon": 0}),
    ("epsilon=-1", laplace, {"epsilon": -1}),
    ("epsilon=nan", laplace, {"epsilon": math.nan}),
    ("epsilon=inf", laplace, {"epsilon": math.inf}),
    ("epsilon='0.5'", laplace, {"epsilon": "0.5"}),
    ("epsilon=None", laplace, {"epsilon": None}),
    ("epsilon=True", laplace, {"epsilon": True}),
    ("epsilon=1e-320 (scale overflows)", laplace, {"epsilon": 1e-320}),
    ("epsilon=1e300 (scale underflows to subnormal)", laplace, {"epsilon": 1e300}),
    ("sensitivity=1e308, epsilon=1e-10", laplace, {"sensitivity": 1e308, "epsilon": 1e-10}),
    ("sensitivity=0", laplace, {"sensitivity": 0}),
    ("sensitivity=-1", laplace, {"sensitivity": -1}),
    ("sensitivity=nan", laplace, {"sensitivity": math.nan}),
    ("rng=None", laplace, {"rng": None}),
    ("rng=0", laplace, {"rng": 0}),
    ("rng=RandomState", laplace, {"rng": np.random.RandomState(0)}),
    ("scale=0", add_laplace, {"scale": 0}),
    ("scale=-2", add_laplace, {"scale": -2.0}),
    ("scale=inf", add_laplace, {"scale": math.inf}),
    ("scale=1e-323 (subnormal)", add_laplace, {"scale": 1e-323}),
    ("scale=1e308", add_laplace, {"scale": 1e308}),
    ("scale=MAX", add_laplace, {"scale": MAX}),
    ("sigma=5e-324", add_gauss, {"sigma": 5e-324}),
    ("sigma=1e308", add_gauss, {"sigma": 1e308}),
    ("sigma=-1", add_gauss, {"sigma": -1.0}),
    ("delta=0", gauss, {"delta": 0}),
    ("delta=1", gauss, {"delta": 1}),
    ("delta=nan", gauss, {"delta": math.nan}),
    ("gauss epsilon=1", gauss, {"epsilon": 1}),
    ("gauss epsilon=1e-300 (sigma overflows)", gauss, {"epsilon": 1e-300}),
]

DISCRETE_CASES = [
    ("41.5", discrete_laplace, 41.5, {}),
    ("[1, 2.5]", discrete_laplace, [1, 2.5], {}),
    ("True", discrete_laplace, True, {}),
    ("nan", discrete_laplace, math.nan, {}),
    ("inf", discrete_gauss, math.inf, {}),
    ("'3'", discrete_gauss, "3", {}),
    ("[]", discrete_gauss, [], {}),
    ("ragged", discrete_laplace, [[1], [2, 3]], {}),
    ("[1, 2**70]", discrete_laplace, [1, 2**70], {}),
    ("uint64 2**63", discrete_laplace, np.array([2**63], dtype=np.uint64), {}),
    ("complex", discrete_laplace, 1 + 1j, {}),
    ("epsilon=0", discrete_laplace, 1, {"epsilon": 0}),
    ("epsilon=nan", discrete_laplace, 1, {"epsilon": math.nan}),
    ("epsilon=Fraction(-1, 2)", discrete_laplace, 1, {"epsilon": Fraction(-1, 2)}),
    ("epsilon='1/2'", discrete_laplace, 1, {"epsilon": "1/2"}),
    ("sensitivity=1.5", discrete_laplace, 1, {"sensitivity": 1.5}),
    ("sensitivity=0", discrete_gauss, 1, {"sensitivity": 0}),
    ("rho=-1", discrete_gauss, 1, {"rho": -1}),
    ("rho=inf", discrete_gauss, 1, {"rho": math.inf}),
    ("rng=None", discrete_gauss, 1, {"rng": None}),
    ("array overflow with scale 10**30", lambda v, **kw: m.add_discrete_laplace_noise(v, scale=10**30, rng=rng()),
     np.zeros(3, dtype=np.int64), {}),
]

CASES = (
    [(f"{mechanism.__name__}({label})", mechanism, value, kw)
     for mechanism in FLOAT_MECHANISMS for label, value, kw in FLOAT_CASES]
    + [(f"{mechanism.__name__}({label})", mechanism, 42.0, kw) for label, mechanism, kw in PARAMETER_CASES]
    + [(f"{mechanism.__name__}({label})", mechanism, value, kw) for label, mechanism, value, kw in DISCRETE_CASES]
)


def outcome(mechanism, value, kw) -> str:
    """'ok' si terminó bien; si no, una frase corta que dice qué pasó."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with np.errstate(all="raise"):
                result = mechanism(value, **kw)
    except ValueError as error:
        message = str(error)
        return "ok" if any(word in message for word in SPANISH) else f"ValueError sin explicar: {message[:80]}"
    except Exception as error:  # noqa: BLE001 - any other exception is the finding
        return f"{type(error).__name__}: {str(error)[:80]}"
    released = np.asarray(result, dtype=float)
    if not np.all(np.isfinite(released)):
        return "publicó inf o nan"
    try:
        truth = np.asarray(value, dtype=float)
    except (TypeError, ValueError, OverflowError):
        return f"aceptó {type(value).__name__} y publicó {result!r:.60}"
    # A component left exactly as it was lost its noise (an honest draw does that with
    # probability below 10⁻¹⁵ for these values).
    if truth.shape == released.shape and np.any(released == truth):
        return "publicó el valor verdadero intacto (el ruido se perdió)"
    return "ok"


@pytest.mark.parametrize("label, mechanism, value, kw", CASES, ids=[case[0] for case in CASES])
def test_bad_input_is_handled_well(label, mechanism, value, kw):
    assert outcome(mechanism, value, kw) == "ok"


def count_handled(cases=CASES) -> tuple[int, int, list]:
    """(manejadas bien, total, [(caso, qué pasó)]) para esta versión de dpdeck."""
    failures = []
    for label, mechanism, value, kw in cases:
        result = outcome(mechanism, value, kw)
        if result != "ok":
            failures.append((label, result))
    return len(cases) - len(failures), len(cases), failures


if __name__ == "__main__":
    handled, total, failures = count_handled()
    for label, result in failures:
        print(f"  {label}: {result}")
    print(f"{handled} de {total} entradas manejadas bien")
