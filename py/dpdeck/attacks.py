"""El ataque de punto flotante de Mironov (2012) contra el mecanismo de Laplace.

Mironov, "On Significance of the Least Significant Bits for Differential
Privacy" (CCS 2012): el ruido de Laplace muestreado en punto flotante no toma
todos los dobles. ``laplace_mechanism`` (numpy, inversa de la CDF) calcula

    x − b · ln(2 − 2U)   si U ≥ 1/2,        x + b · ln(2U)   si U < 1/2,

con U = k/2⁵³ un doble uniforme, así que desde cada valor verdadero x solo se
alcanza un conjunto ralo de dobles, y el de x' = x − 1 es otro. Quien conoce
el muestreador y ve la salida y revisa desde cuál de los dos valores vecinos
pudo salir y: si solo pudo salir de uno, lo nombra sin error posible.

Bajo ε-DP ninguna salida puede ser imposible desde una base vecina y posible
desde la otra (P[M(D) ∈ S] ≤ e^ε · P[M(D') ∈ S] = 0), y ningún atacante que
parte de una previa de 1/2 acierta más que e^ε/(1 + e^ε). El Laplace discreto
de ``mechanisms.discrete_laplace_mechanism`` publica cualquier entero desde
cualquier valor verdadero: ahí el atacante no tiene nada que mirar.

Es un ataque de enseñanza: supone que el atacante conoce el muestreador exacto
(el de numpy) y compara dos candidatos, no reconstruye una base entera.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from ._checks import (
    check_epsilon,
    check_finite,
    check_positive,
    check_positive_int,
    check_rng,
)
from .mechanisms import laplace_scale

__all__ = [
    "can_release",
    "guess_true_value",
    "measure_attack_success",
    "attack_success_bound",
]

# numpy's uniform doubles are k / 2**53 for an integer k in [0, 2**53); it redraws U = 0.
_UNIFORM_STEPS = 2**53
_HALF = 2**52


def _float_laplace_release(k: int, true_value: float, scale: float) -> float:
    """Lo que publica el Laplace de numpy con U = k/2⁵³: las mismas operaciones, en el mismo orden."""
    u = k / _UNIFORM_STEPS
    if u >= 0.5:
        return true_value - scale * math.log(2.0 - u - u)
    return true_value + scale * math.log(u + u)


def _first_reaching(output: float, lo: int, hi: int, guess: int, release) -> int:
    """El menor k de [lo, hi] con release(k) ≥ output (release no decrece en k); hi + 1 si no hay.

    Empieza en la estimación ``guess`` (la inversa exacta de la CDF) y galopa
    hasta encerrar el borde: unas decenas de evaluaciones en vez de 52 pasos
    de bisección desde todo el rango.
    """
    if release(lo) >= output:
        return lo
    if release(hi) < output:
        return hi + 1
    below, above = lo, hi  # release(below) < output <= release(above)
    guess = min(max(guess, lo + 1), hi)
    step = 1
    if release(guess) >= output:
        above = guess
        while above - step > below and release(above - step) >= output:
            above -= step
            step *= 2
        below = max(below, above - step)
    else:
        below = guess
        while below + step < above and release(below + step) < output:
            below += step
            step *= 2
        above = min(above, below + step)
    while above - below > 1:
        middle = (below + above) // 2
        if release(middle) >= output:
            above = middle
        else:
            below = middle
    return above


def _float_laplace_can_release(output: float, true_value: float, scale: float) -> bool:
    if output == true_value:
        return True  # U = 1/2 gives ln(1) = 0
    release = lambda k: _float_laplace_release(k, true_value, scale)  # noqa: E731
    noise = output - true_value
    if noise > 0:  # U ≥ 1/2: the noise grows with k
        lo, hi = _HALF, _UNIFORM_STEPS - 1
        u = 1.0 - math.exp(-noise / scale) / 2.0
    else:  # 0 < U < 1/2
        lo, hi = 1, _HALF - 1
        u = math.exp(noise / scale) / 2.0
    first = _first_reaching(output, lo, hi, int(u * _UNIFORM_STEPS), release)
    # ln from the C library is faithful, not provably monotone: look a step either side too.
    return any(release(k) == output for k in range(max(lo, first - 2), min(hi, first + 2) + 1))


def can_release(output, true_value, *, scale) -> bool:
    """¿Puede el mecanismo publicar exactamente ``output`` si el valor verdadero es ``true_value``?

    Un ``float`` se juzga como salida de ``laplace_mechanism`` con escala
    ``scale`` (b = Δ/ε): se busca un doble uniforme U = k/2⁵³ con el que el
    muestreador de numpy (inversa de la CDF, ver el docstring del módulo) da
    exactamente ``output``. La salida crece con k, así que basta una búsqueda
    binaria en k, desde la inversa de la CDF.

    Un entero se juzga como salida de ``discrete_laplace_mechanism``, cuyo
    ruido toma todo ℤ: cualquier entero sale de cualquier valor verdadero entero.
    """
    if isinstance(output, (bool, np.bool_)):
        raise ValueError(f"la salida debe ser un número; se recibió {output!r}")
    if isinstance(output, numbers.Integral):
        return float(check_finite(true_value, name="valor verdadero")).is_integer()
    output = check_finite(output, name="salida")
    true_value = check_finite(true_value, name="valor verdadero")
    if not isinstance(output, float) or not isinstance(true_value, float):
        raise ValueError("la salida y el valor verdadero deben ser números, no arreglos")
    scale = check_positive(scale, name="escala")
    return _float_laplace_can_release(output, true_value, scale)


def guess_true_value(output, candidates, *, scale, rng):
    """El atacante de Mironov: nombra el candidato del que pudo salir ``output``.

    Si ``output`` solo es alcanzable desde uno de los ``candidates``, lo nombra
    (y no puede equivocarse); si lo es desde varios (o desde ninguno), elige uno
    al azar con ``rng``.
    """
    rng = check_rng(rng)
    candidates = list(candidates)
    possible = [value for value in candidates if can_release(output, value, scale=scale)]
    if len(possible) == 1:
        return possible[0]
    return candidates[int(rng.integers(len(candidates)))]


def measure_attack_success(mechanism, true_values, *, epsilon, trials, rng) -> float:
    """Fracción de ensayos en que el atacante adivina cuál de dos valores vecinos era el verdadero.

    En cada ensayo se elige al azar (previa 1/2) uno de ``true_values`` = (a, b),
    ``mechanism(valor, sensitivity=|a − b|, epsilon=epsilon, rng=rng)`` lo
    publica y ``guess_true_value`` adivina. ``mechanism`` es
    ``laplace_mechanism`` o ``discrete_laplace_mechanism``; los valores, enteros.

    Bajo ε-DP el acierto esperado no pasa de ``attack_success_bound(epsilon=ε)``;
    con n ensayos, el acierto medido se aparta del esperado en más de
    √(ln(2/β)/(2n)) con probabilidad menor que β (Hoeffding).
    """
    first, second = (check_finite(value, name="valor verdadero") for value in true_values)
    if not (float(first).is_integer() and float(second).is_integer()) or first == second:
        raise ValueError(
            f"true_values deben ser dos enteros distintos (dos conteos vecinos); se recibió {true_values!r}"
        )
    candidates = (int(first), int(second))
    sensitivity = abs(candidates[0] - candidates[1])
    epsilon = check_epsilon(epsilon)
    trials = check_positive_int(trials, name="ensayos")
    rng = check_rng(rng)
    scale = laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    secrets = rng.integers(2, size=trials)
    outputs = mechanism(np.array(candidates)[secrets], sensitivity=sensitivity, epsilon=epsilon, rng=rng)
    hits = sum(
        guess_true_value(output, candidates, scale=scale, rng=rng) == candidates[secret]
        for output, secret in zip(np.asarray(outputs).tolist(), secrets.tolist())
    )
    return hits / trials


def attack_success_bound(*, epsilon) -> float:
    """Mayor acierto de cualquier atacante contra un mecanismo ε-DP, con previa 1/2: e^ε/(1 + e^ε).

    Para cualquier regla que diga «D» en un conjunto S de salidas, ε-DP exige
    P_D(S) ≤ e^ε P_D'(S) y P_D'(Sᶜ) ≤ e^ε P_D(Sᶜ); el acierto
    ½ P_D(S) + ½ P_D'(Sᶜ) es máximo cuando las dos valen con igualdad:
    e^ε/(1 + e^ε). Con ε = 0,5: ≈ 0,622.
    Referencia: Kairouz, Oh y Viswanath (2015), "The Composition Theorem for
    Differential Privacy", ICML 2015 (la región de pruebas de hipótesis).
    """
    epsilon = check_epsilon(epsilon)
    return 1.0 / (1.0 + math.exp(-epsilon))
