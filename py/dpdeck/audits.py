"""Pruebas estadísticas con falsa alarma acotada: lo que usan el laboratorio y los ejercicios para medir ruido.

Una prueba compara una medición con lo que da una implementación correcta y
falla, si la implementación es correcta, con probabilidad a lo sumo
``false_alarm`` (la tasa de falsa alarma, α). Cada cota es una desigualdad
demostrada, no una aproximación normal, salvo donde se dice:

* ``uniform_distance`` y ``distance_bound``: la distancia de Kolmogorov–
  Smirnov entre una muestra y una distribución continua, y su cota de
  Dvoretzky–Kiefer–Wolfowitz con la constante de Massart (1990):
  P(sup |F̂ₙ − F| > t) ≤ 2 e^{−2nt²};
* ``chi_square_bounds``: el intervalo de una χ² con ν grados de libertad,
  de Laurent y Massart (2000), Lema 1: P(X − ν ≥ 2√(νx) + 2x) ≤ e^{−x} y
  P(ν − X ≥ 2√(νx)) ≤ e^{−x};
* ``binomial_bounds``: el intervalo de una binomial, sumando sus
  probabilidades exactas;
* ``normal_bound``: el umbral de |Z| para una normal estándar, exacto
  (``math.erfc``);
* ``occupancy_bound``: el mínimo de valores distintos entre n sorteos
  uniformes de N valores posibles, con su distribución exacta;
* ``exponential_mean_bounds``: el intervalo de la media de n exponenciales
  (|ruido de Laplace|/b), con la cota de Chernoff de la gamma.

Todo es fórmula: ninguna función sortea nada, así que la misma muestra da
siempre el mismo veredicto.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import check_positive, check_positive_int, describe

__all__ = [
    "DEFAULT_FALSE_ALARM",
    "check_false_alarm",
    "uniform_distance",
    "distance_bound",
    "chi_square_bounds",
    "binomial_bounds",
    "normal_bound",
    "occupancy_bound",
    "exponential_mean_bounds",
]

DEFAULT_FALSE_ALARM = 1e-6
"""La tasa de falsa alarma de las pruebas del laboratorio y de los ejercicios: una en un millón."""


def check_false_alarm(false_alarm) -> float:
    """Una tasa de falsa alarma: un número en (0, 1)."""
    value = check_positive(false_alarm, name="false_alarm")
    if not value < 1:
        raise ValueError(f"false_alarm debe estar en (0, 1); se recibió {describe(false_alarm)}")
    return value


def uniform_distance(samples) -> float:
    """Distancia de Kolmogorov–Smirnov entre la muestra y la uniforme en [0, 1): sup |F̂ₙ(x) − x|.

    Fórmula, con la muestra ordenada x₍₁₎ ≤ … ≤ x₍ₙ₎:
    max over i of max(i/n − x₍ᵢ₎, x₍ᵢ₎ − (i − 1)/n). Para comparar con otra
    distribución continua F, se le pasa F(muestra) (la transformada integral).
    """
    values = np.sort(np.asarray(samples, dtype=float).reshape(-1))
    if values.size == 0:
        raise ValueError("samples no puede estar vacía")
    n = values.size
    above = np.arange(1, n + 1) / n - values
    below = values - np.arange(n) / n
    return float(max(above.max(), below.max()))


def distance_bound(samples, *, false_alarm) -> float:
    """Cota de la distancia de Kolmogorov–Smirnov con ``samples`` valores: √(ln(2/α)/(2n)).

    Garantía (Dvoretzky, Kiefer y Wolfowitz 1956; constante de Massart 1990):
    con una muestra de la distribución correcta, la distancia la supera con
    probabilidad a lo sumo α.
    """
    samples = check_positive_int(samples, name="samples")
    alpha = check_false_alarm(false_alarm)
    return math.sqrt(math.log(2 / alpha) / (2 * samples))


def chi_square_bounds(degrees, *, false_alarm) -> tuple[float, float]:
    """(mínimo, máximo) aceptables de una χ² con ν = ``degrees`` grados de libertad.

    Fórmula, con x = ln(2/α): ν − 2√(νx) y ν + 2√(νx) + 2x. Garantía
    (Laurent y Massart 2000, Lema 1): una χ²_ν cae fuera con probabilidad a
    lo sumo α (α/2 por cada lado). Con ν < 4x el mínimo es negativo: la
    muestra es demasiado pequeña para detectar una varianza pequeña.
    """
    degrees = check_positive_int(degrees, name="degrees")
    x = math.log(2 / check_false_alarm(false_alarm))
    spread = 2 * math.sqrt(degrees * x)
    return degrees - spread, degrees + spread + 2 * x


def binomial_bounds(trials, probability, *, false_alarm) -> tuple[int, int]:
    """(mínimo, máximo) aceptables del número de éxitos de una binomial(n, p).

    El mayor k_min y el menor k_max con P(X < k_min) ≤ α/2 y P(X > k_max) ≤ α/2,
    sumando las probabilidades exactas (en logaritmos, con ``math.lgamma``).
    """
    trials = check_positive_int(trials, name="trials")
    p = float(probability)
    if not 0 < p < 1:
        raise ValueError(f"probability debe estar en (0, 1); se recibió {describe(probability)}")
    half = check_false_alarm(false_alarm) / 2
    log_head = math.lgamma(trials + 1)
    pmf = [math.exp(log_head - math.lgamma(k + 1) - math.lgamma(trials - k + 1)
                    + k * math.log(p) + (trials - k) * math.log1p(-p)) for k in range(trials + 1)]
    low, below = 0, 0.0
    while below + pmf[low] <= half:
        below += pmf[low]
        low += 1
    high, above = trials, 0.0
    while above + pmf[high] <= half:
        above += pmf[high]
        high -= 1
    return low, high


def normal_bound(*, false_alarm) -> float:
    """El t con P(|Z| > t) = α para Z normal estándar (por bisección sobre ``math.erfc``)."""
    alpha = check_false_alarm(false_alarm)
    low, high = 0.0, 40.0
    for _ in range(200):
        middle = (low + high) / 2
        if math.erfc(middle / math.sqrt(2)) > alpha:
            low = middle
        else:
            high = middle
    return high


def occupancy_bound(draws, outcomes, *, false_alarm) -> int:
    """El menor número de valores distintos aceptable entre ``draws`` sorteos uniformes de ``outcomes`` valores.

    Fórmula: con pᵣ(d) la probabilidad de ver d valores distintos tras r
    sorteos, p_{r+1}(d) = pᵣ(d)·d/N + pᵣ(d − 1)·(N − d + 1)/N (un sorteo nuevo
    repite uno visto o no). Devuelve el mayor d_min con P(D < d_min) ≤ α:
    exacto, sin aproximaciones. Una rotación fija o un sorteo sesgado repiten
    mucho más.
    """
    draws = check_positive_int(draws, name="draws")
    outcomes = check_positive_int(outcomes, name="outcomes")
    alpha = check_false_alarm(false_alarm)
    probability = np.zeros(draws + 1)
    probability[0] = 1.0
    for _ in range(draws):
        seen = np.arange(draws + 1)
        following = probability * seen / outcomes
        following[1:] += probability[:-1] * (outcomes - seen[:-1]) / outcomes
        probability = following
    below, minimum = 0.0, 0
    while below + probability[minimum] <= alpha:
        below += probability[minimum]
        minimum += 1
    return minimum


def exponential_mean_bounds(samples, *, false_alarm) -> tuple[float, float]:
    """(mínimo, máximo) de la media de ``samples`` exponenciales de media 1: |Lap(b)|/b promediado.

    La suma S de n exponenciales es una gamma(n, 1), y la cota de Chernoff da
    P(S ≥ n(1 + t)) ≤ e^{−n(t − ln(1 + t))} y P(S ≤ n(1 − t)) ≤ e^{−n(−t − ln(1 − t))}.
    Devuelve 1 − t₋ y 1 + t₊ con cada cota igual a α/2 (por bisección): una
    media fuera del intervalo tiene probabilidad a lo sumo α.
    """
    samples = check_positive_int(samples, name="samples")
    target = math.log(2 / check_false_alarm(false_alarm)) / samples

    def solve(exponent, high):
        low = 0.0
        for _ in range(200):
            middle = (low + high) / 2
            if exponent(middle) < target:
                low = middle
            else:
                high = middle
        return high

    above = solve(lambda t: t - math.log1p(t), 1e6)
    below = solve(lambda t: -t - math.log1p(-t), 1 - 1e-15)
    return 1 - below, 1 + above
