"""Capítulo 1: el mecanismo de Laplace con escala b = Δf/ε (``laplace-escala``)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from ...numbers import format_percent
from .toolkit import (
    Z_TOLERANCE,
    _Findings,
    Verdict,
    _as_real,
    _call,
    _check_uses_rng,
    _mean_absolute_error_band,
    _num,
    _require_function,
    _run,
    seeded_rng,
)


# ----------------------------------------------------- capítulo 1: Laplace --

LAPLACE_CASES = ((42.0, 1.0, 0.5), (1000.0, 10.0, 2.0))   # (f(D), Δf, ε)
LAPLACE_SAMPLES = 2000
# P(|Lap(b)| > 3b) = e^{-3}; a Gaussian with the same E|X| puts 1,7 % there.
LAPLACE_TAIL = 3.0


def check_laplace_scale(defined: Mapping) -> Verdict:
    """Capítulo 1: `mecanismo_laplace(valor, *, sensibilidad, epsilon, rng)` publica valor + Lap(Δf/ε).

    Para dos casos, (f(D), Δf, ε) = (42, 1, 0,5) y (1000, 10, 2), publica
    ``LAPLACE_SAMPLES`` veces y mide la escala como E|M(D) − f(D)|, que para
    Lap(b) vale b (desviación estándar b: error relativo 1/√n). Acepta
    |b̂/b − 1| ≤ 5/√n (11 % con n = 2000). Con los mismos datos comprueba que el
    ruido está centrado (|media − f(D)| ≤ 5·√2·b/√n) y que su cola es la de
    Laplace: P(|Z| > 3·E|Z|) = e⁻³ ≈ 0,050 (una gaussiana da 0,017, a más de
    9 errores estándar con los 4000 valores de los dos casos).

    Errores que reconoce: ε/Δf en vez de Δf/ε, 1/ε (sin sensibilidad), Δf·ε,
    ruido gaussiano, ruido que no sale de ``rng``, olvidar sumar ``valor``.
    Referencia: Dwork, McSherry, Nissim y Smith (2006); Dwork y Roth (2014), Teorema 3.6.
    """
    name = "mecanismo_laplace"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "valor, *, sensibilidad, epsilon, rng")
        value, sensitivity, epsilon = LAPLACE_CASES[0]

        def release(rng, value=value, sensitivity=sensitivity, epsilon=epsilon):
            return _as_real(findings, _call(findings, function, name, value, sensibilidad=sensitivity,
                                            epsilon=epsilon, rng=rng), name)

        _check_uses_rng(findings, release, name)
        band = _mean_absolute_error_band(LAPLACE_SAMPLES)
        normalized = []
        for index, (value, sensitivity, epsilon) in enumerate(LAPLACE_CASES):
            rng = seeded_rng(10 + index)
            outputs = np.array([release(rng, value, sensitivity, epsilon) for _ in range(LAPLACE_SAMPLES)])
            expected = sensitivity / epsilon
            case = f"Δf = {_num(sensitivity, None)}, ε = {_num(epsilon, None)}"
            offset = outputs.mean() - value
            if abs(offset) > 4 * expected:
                findings.fail(f"Con {case} tus publicaciones se alejan en promedio {_num(offset)} de "
                              f"valor = {_num(value, None)}: se publica valor + ruido, con el ruido centrado "
                              "en 0 (¿devuelves solo el ruido?).", stop=True)
            measured = np.abs(outputs - value).mean()
            findings.expect(abs(measured / expected - 1) <= band,
                            f"Con {case} la escala medida es {_num(measured)}: la esperada, "
                            f"b = Δf/ε = {_num(expected, None)}.",
                            f"Con {case} la escala medida es {_num(measured)}, pero debería ser "
                            f"b = Δf/ε = {_num(expected, None)}." + _diagnose_scale(measured, sensitivity, epsilon,
                                                                              band))
            limit = Z_TOLERANCE * math.sqrt(2.0) * expected / math.sqrt(LAPLACE_SAMPLES)
            findings.expect(abs(offset) <= limit,
                            f"Con {case} el ruido está centrado en el valor verdadero.",
                            f"Con {case} el ruido no está centrado: en promedio te alejas "
                            f"{_num(offset)} del valor verdadero (se espera 0).")
            # The shape, apart from the scale: deviations in units of the measured scale.
            normalized.append(np.abs(outputs - value) / measured)
        pooled = np.concatenate(normalized)
        tail = float(np.mean(pooled > LAPLACE_TAIL))
        theory = math.exp(-LAPLACE_TAIL)
        margin = Z_TOLERANCE * math.sqrt(theory * (1 - theory) / pooled.size)
        findings.expect(abs(tail - theory) <= margin,
                        f"La cola es la de Laplace: {format_percent(tail, 1)} de las publicaciones "
                        f"se alejan más de tres escalas (teoría: {format_percent(theory, 1)}).",
                        f"La forma del ruido no es la de Laplace: {format_percent(tail, 1)} de las "
                        f"publicaciones se alejan más de tres escalas, y Laplace pone ahí {format_percent(theory, 1)}. "
                        "¿Usaste otra distribución (por ejemplo `rng.normal`)? Usa `rng.laplace`.")

    return _run("laplace-escala", body)


def _diagnose_scale(measured: float, sensitivity: float, epsilon: float, band: float) -> str:
    """The typical mistake a measured scale matches, if any."""
    candidates = [
        (epsilon / sensitivity, " Parece ε/Δf: la escala es Δf/ε (más privacidad, ε chico, es más ruido)."),
        (1.0 / epsilon, " Parece 1/ε: falta la sensibilidad, b = Δf/ε."),
        (sensitivity * epsilon, " Parece Δf·ε: se divide por ε, no se multiplica."),
        (sensitivity / epsilon * math.sqrt(2.0 / math.pi),
         " Parece ruido gaussiano de desviación Δf/ε: el mecanismo usa `rng.laplace`, con escala b."),
    ]
    for scale, message in candidates:
        if abs(measured / scale - 1) <= band:
            return message
    return ""
