"""Capítulo 1: el mecanismo de Laplace con escala b = Δf/ε (``laplace-escala``)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from .toolkit import (
    _Findings,
    Verdict,
    _as_real,
    _call,
    _num,
    _require_function,
    _run,
    check_draws_from_rng,
    check_laplace_noise,
    scale_bounds,
    seeded_rng,
)


# ----------------------------------------------------- capítulo 1: Laplace --

LAPLACE_CASES = ((42.0, 1.0, 0.5), (1000.0, 10.0, 2.0))   # (f(D), Δf, ε)
LAPLACE_SAMPLES = 4000


def check_laplace_scale(defined: Mapping) -> Verdict:
    """Capítulo 1: `mecanismo_laplace(valor, *, sensibilidad, epsilon, rng)` publica valor + Lap(Δf/ε).

    Para dos casos, (f(D), Δf, ε) = (42, 1, 0,5) y (1000, 10, 2), publica
    ``LAPLACE_SAMPLES`` veces y mide el ruido con
    ``toolkit.check_laplace_noise``: centrado (prueba de signos), de escala
    b = Δf/ε, la mínima que da ε-DP (la media de |ruido|, con su cota de
    gamma), y con la cola lejana de Laplace (cuántas publicaciones pasan de 3,
    4 y 5 escalas). Cada prueba falla con una respuesta correcta con
    probabilidad ≤ 10⁻⁶. Redondear lo publicado es posprocesamiento y pasa.

    Errores que reconoce: ε/Δf en vez de Δf/ε, 1/ε (sin sensibilidad), Δf·ε,
    más ruido del necesario, ruido gaussiano, ruido recortado o truncado,
    ruido que no sale de ``rng`` (otro generador, una semilla fija), olvidar
    el ruido o sumar ``valor``.
    Referencia: Dwork, McSherry, Nissim y Smith (2006); Dwork y Roth (2014), Teorema 3.6.
    """
    name = "mecanismo_laplace"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "valor, *, sensibilidad, epsilon, rng")
        value, sensitivity, epsilon = LAPLACE_CASES[0]

        def release(rng, value=value, sensitivity=sensitivity, epsilon=epsilon):
            return _as_real(findings, _call(findings, function, name, value, sensibilidad=sensitivity,
                                            epsilon=epsilon, rng=rng), name)

        check_draws_from_rng(findings, release, name, truth=value)
        for index, (value, sensitivity, epsilon) in enumerate(LAPLACE_CASES):
            rng = seeded_rng(10 + index)
            outputs = np.array([release(rng, value, sensitivity, epsilon) for _ in range(LAPLACE_SAMPLES)])
            expected = sensitivity / epsilon
            case = f"Δf = {_num(sensitivity, None)}, ε = {_num(epsilon, None)}"
            check_laplace_noise(findings, outputs - value, scales=expected, case=case, truth=value,
                                diagnose=lambda measured, s=sensitivity, e=epsilon: _diagnose_scale(measured, s, e))

    return _run("laplace-escala", body)


def _diagnose_scale(measured: float, sensitivity: float, epsilon: float) -> str:
    """The typical mistake a measured scale (in units of b = Δf/ε) matches, if any."""
    low, high = scale_bounds(LAPLACE_SAMPLES)
    expected = sensitivity / epsilon
    candidates = [
        (epsilon / sensitivity, " Parece ε/Δf: la escala es Δf/ε (más privacidad, ε pequeño, es más ruido)."),
        (1.0 / epsilon, " Parece 1/ε: falta la sensibilidad, b = Δf/ε."),
        (sensitivity * epsilon, " Parece Δf·ε: se divide por ε, no se multiplica."),
        (expected * math.sqrt(2.0 / math.pi),
         " Parece ruido gaussiano de desviación Δf/ε: el mecanismo usa `rng.laplace`, con escala b."),
    ]
    for scale, message in candidates:
        if low <= measured * expected / scale <= high:
            return message
    if measured > high:
        return (" Tu ruido es más grande que el necesario: sigue siendo ε-DP, pero la tarea pide la escala "
                "mínima, b = Δf/ε (más ruido es menos utilidad, sin ganar nada que la tarea pida).")
    return ""
