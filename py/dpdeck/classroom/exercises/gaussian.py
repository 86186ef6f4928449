"""Capítulo 4: la σ del mecanismo gaussiano clásico para (ε, δ) (``sigma-gaussiano``)."""

from __future__ import annotations

import math
import numbers
from typing import Mapping

from ..._checks import describe
from ...mechanisms import gaussian_sigma
from ...numbers import format_power_of_ten
from .toolkit import _Findings, Verdict, _as_real, _call, _num, _require_function, _require_value, _run


# ------------------------------------------------ capítulo 4: el gaussiano --

VECTOR_COMPONENTS = 16
GAUSS_CASES = ((1.0, 0.5, 1e-5), (4.0, 0.9, 1e-6), (2.5, 0.1, 1e-8))   # (Δ₂, ε, δ)
GAUSS_REFUSED_EPSILON = 1.5
RELATIVE_TOLERANCE = 1e-6


def check_gaussian_sigma(defined: Mapping) -> Verdict:
    """Capítulo 4: `delta_2` = √16 = 4 y `sigma_gaussiano(*, sensibilidad, epsilon, delta)`.

    Una persona mueve en 1 cada una de k = 16 componentes: Δ₂ = √k = 4
    (Δ₁ = 16 es la de Laplace). σ = Δ₂·√(2 ln(1,25/δ))/ε, comparada con
    ``dpdeck.mechanisms.gaussian_sigma`` (error relativo ≤ 10⁻⁶) en tres casos,
    y la función se niega (``ValueError``) con ε = 1,5: el análisis clásico
    solo vale para ε < 1.
    Referencia: Dwork y Roth (2014), Teorema A.1.
    """
    def body(findings: _Findings) -> None:
        delta_2 = _require_value(findings, defined, "delta_2", f"la sensibilidad L2 del vector de "
                                                               f"{VECTOR_COMPONENTS} conteos")
        expected_l2 = math.sqrt(VECTOR_COMPONENTS)
        if isinstance(delta_2, numbers.Real) and not isinstance(delta_2, bool) and \
                math.isclose(float(delta_2), expected_l2, rel_tol=RELATIVE_TOLERANCE):
            findings.ok(f"Δ₂ = √{VECTOR_COMPONENTS} = {_num(expected_l2, None)}: la norma L2 del cambio.")
        elif isinstance(delta_2, numbers.Real) and math.isclose(float(delta_2), VECTOR_COMPONENTS):
            findings.fail(f"delta_2 = {_num(delta_2, None)} es Δ₁, la suma de los cambios (la de Laplace). "
                          f"Δ₂ es la norma L2: √({VECTOR_COMPONENTS}·1²).")
        else:
            findings.fail(f"delta_2 = {describe(delta_2)}; una persona mueve {VECTOR_COMPONENTS} componentes "
                          "en 1 cada una: ¿cuánto mide ese vector de cambios en norma L2?")

        name = "sigma_gaussiano"
        function = _require_function(findings, defined, name, "*, sensibilidad, epsilon, delta")
        for sensitivity, epsilon, delta in GAUSS_CASES:
            sigma = _as_real(findings, _call(findings, function, name, sensibilidad=sensitivity,
                                             epsilon=epsilon, delta=delta), name)
            expected = gaussian_sigma(sensitivity=sensitivity, epsilon=epsilon, delta=delta)
            case = f"Δ₂ = {_num(sensitivity, None)}, ε = {_num(epsilon, None)}, δ = {format_power_of_ten(delta)}"
            if math.isclose(sigma, expected, rel_tol=RELATIVE_TOLERANCE):
                findings.ok(f"Con {case}: σ = {_num(sigma)}.")
            else:
                findings.fail(f"Con {case} tu σ es {_num(sigma)}; la fórmula clásica da {_num(expected)}."
                              + _diagnose_sigma(sigma, sensitivity, epsilon, delta))
        try:
            refused = function(sensibilidad=1.0, epsilon=GAUSS_REFUSED_EPSILON, delta=1e-5)
        except ValueError:
            findings.ok(f"Con ε = {_num(GAUSS_REFUSED_EPSILON, None)} tu función se niega (ValueError): "
                        "la fórmula clásica solo vale para ε < 1.")
        except Exception as error:  # the student's code may raise anything
            findings.fail(f"Con ε = {_num(GAUSS_REFUSED_EPSILON, None)} tu función lanza "
                          f"{type(error).__name__}; se espera ValueError (la fórmula solo vale para ε < 1).")
        else:
            shown = _num(refused) if isinstance(refused, numbers.Real) else describe(refused)
            findings.fail(f"Con ε = {_num(GAUSS_REFUSED_EPSILON, None)} tu función devuelve {shown}, "
                          "pero la fórmula clásica solo vale para ε < 1: lanza un ValueError "
                          "(`raise ValueError(...)`).")

    return _run("sigma-gaussiano", body)


def _diagnose_sigma(sigma: float, sensitivity: float, epsilon: float, delta: float) -> str:
    candidates = [
        (sensitivity * math.sqrt(2 * math.log(1 / delta)) / epsilon, " ¿Usaste ln(1/δ)? Es ln(1,25/δ)."),
        (sensitivity * 2 * math.log(1.25 / delta) / epsilon, " Falta la raíz cuadrada: √(2 ln(1,25/δ))."),
        (sensitivity * math.sqrt(math.log(1.25 / delta)) / epsilon, " Falta el 2 dentro de la raíz."),
        (sensitivity / epsilon, " Esa es la escala de Laplace, Δ/ε: falta el factor √(2 ln(1,25/δ))."),
        (sensitivity * math.sqrt(2 * math.log(1.25 / delta)) * epsilon, " Se divide por ε, no se multiplica."),
    ]
    for value, message in candidates:
        if math.isclose(sigma, value, rel_tol=1e-6):
            return message
    return ""
