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
# (Δ₂, ε, δ); ε = 0,999 sits right below the edge of the classic analysis: a right function answers it.
GAUSS_CASES = ((1.0, 0.5, 1e-5), (4.0, 0.9, 1e-6), (2.5, 0.1, 1e-8), (1.0, 0.999, 1e-5))
# The classic analysis needs ε < 1: ε = 1 itself (the edge) and one beyond it must be refused.
GAUSS_REFUSED_EPSILONS = (1.0, 1.5)
RELATIVE_TOLERANCE = 1e-6


def check_gaussian_sigma(defined: Mapping) -> Verdict:
    """Capítulo 4: `delta_2` = √16 = 4 y `sigma_gaussiano(*, sensibilidad, epsilon, delta)`.

    Una persona mueve en 1 cada una de k = 16 componentes: Δ₂ = √k = 4
    (Δ₁ = 16 es la de Laplace). σ = Δ₂·√(2 ln(1,25/δ))/ε, comparada con
    ``dpdeck.mechanisms.gaussian_sigma`` (error relativo ≤ 10⁻⁶) en cuatro
    casos (uno con ε = 0,999, justo antes del borde), y la función se niega
    (``ValueError``) con ε = 1 y con ε = 1,5: el análisis clásico solo vale
    para ε < 1, así que ε = 1 ya se rechaza.

    Errores que reconoce: Δ₁ en vez de Δ₂ (o la norma L1), ln(1/δ), sin la
    raíz, sin el 2, la escala de Laplace, ×ε en vez de /ε, ε y Δ cambiados,
    devolver σ², negarse solo si ε > 1 (deja pasar ε = 1) o negarse de más,
    otra excepción o ninguna.
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
            findings.fail(f"delta_2 = {_num(delta_2, None)} es Δ₁, la norma L1 (la suma de los cambios, la de "
                          f"Laplace). Δ₂ es la norma L2: √({VECTOR_COMPONENTS}·1²).")
        elif isinstance(delta_2, numbers.Real) and math.isclose(float(delta_2), 1.0):
            findings.fail("delta_2 = 1 es la norma L∞ (el mayor cambio de una componente). Δ₂ es la norma L2 "
                          f"del vector de cambios: √({VECTOR_COMPONENTS}·1²).")
        else:
            findings.fail(f"delta_2 = {describe(delta_2)}; una persona mueve {VECTOR_COMPONENTS} componentes "
                          "en 1 cada una: ¿cuánto mide ese vector de cambios en norma L2?")

        name = "sigma_gaussiano"
        function = _require_function(findings, defined, name, "*, sensibilidad, epsilon, delta")
        for sensitivity, epsilon, delta in GAUSS_CASES:
            case = f"Δ₂ = {_num(sensitivity, None)}, ε = {_num(epsilon, None)}, δ = {format_power_of_ten(delta)}"
            try:
                answer = function(sensibilidad=sensitivity, epsilon=epsilon, delta=delta)
            except ValueError:
                findings.fail(f"Con {case} tu función se niega, pero ε = {_num(epsilon, None)} es menor que 1: "
                              "la fórmula clásica vale ahí. Niégate solo si ε ≥ 1.", stop=True)
            except Exception as error:  # the student's code may raise anything
                findings.fail(f"`{name}` lanzó {type(error).__name__}: {error}", stop=True)
            sigma = _as_real(findings, answer, name)
            expected = gaussian_sigma(sensitivity=sensitivity, epsilon=epsilon, delta=delta)
            if math.isclose(sigma, expected, rel_tol=RELATIVE_TOLERANCE):
                findings.ok(f"Con {case}: σ = {_num(sigma)}.")
            else:
                findings.fail(f"Con {case} tu σ es {_num(sigma)}; la fórmula clásica da {_num(expected)}."
                              + _diagnose_sigma(sigma, sensitivity, epsilon, delta))
        for refused_epsilon in GAUSS_REFUSED_EPSILONS:
            shown = _num(refused_epsilon, None)
            try:
                refused = function(sensibilidad=1.0, epsilon=refused_epsilon, delta=1e-5)
            except ValueError:
                findings.ok(f"Con ε = {shown} tu función se niega (ValueError): la fórmula clásica solo vale "
                            "para ε < 1.")
            except Exception as error:  # the student's code may raise anything
                findings.fail(f"Con ε = {shown} tu función lanza {type(error).__name__}; se espera ValueError "
                              "(la fórmula solo vale para ε < 1).")
            else:
                value = _num(refused) if isinstance(refused, numbers.Real) else describe(refused)
                edge = (" ε = 1 ya está fuera: la condición es ε < 1, así que la negativa es con ε ≥ 1 "
                        "(¿escribiste `epsilon > 1`?)." if refused_epsilon == 1 else "")
                findings.fail(f"Con ε = {shown} tu función devuelve {value}, pero la fórmula clásica solo vale "
                              f"para ε < 1: lanza un ValueError (`raise ValueError(...)`).{edge}")

    return _run("sigma-gaussiano", body)


def _diagnose_sigma(sigma: float, sensitivity: float, epsilon: float, delta: float) -> str:
    candidates = [
        (sensitivity * math.sqrt(2 * math.log(1 / delta)) / epsilon, " ¿Usaste ln(1/δ)? Es ln(1,25/δ)."),
        (sensitivity * 2 * math.log(1.25 / delta) / epsilon, " Falta la raíz cuadrada: √(2 ln(1,25/δ))."),
        (sensitivity * math.sqrt(math.log(1.25 / delta)) / epsilon, " Falta el 2 dentro de la raíz."),
        (sensitivity / epsilon, " Esa es la escala de Laplace, Δ/ε: falta el factor √(2 ln(1,25/δ))."),
        (sensitivity * math.sqrt(2 * math.log(1.25 / delta)) * epsilon, " Se divide por ε, no se multiplica."),
        (epsilon * math.sqrt(2 * math.log(1.25 / delta)) / sensitivity,
         " Parece que cambiaste ε y Δ₂: σ = Δ₂·√(2 ln(1,25/δ))/ε."),
        ((sensitivity * math.sqrt(2 * math.log(1.25 / delta)) / epsilon) ** 2,
         " Es σ², la varianza: la función devuelve la desviación σ."),
    ]
    for value, message in candidates:
        if math.isclose(sigma, value, rel_tol=1e-6):
            return message
    return ""
