"""Los ejercicios de la clase: una comprobación por ejercicio, con veredicto en español.

Cada ejercicio de las diapositivas es una celda con código de partida que el
estudiante completa (``check=NOMBRE`` en la diapositiva). Al pulsar
«Comprobar», la celda se ejecuta y la comprobación de ``CHECKS[NOMBRE]``
recibe lo que la celda definió (su espacio de nombres) y devuelve un
``Verdict``: una lista de hallazgos, cada uno bien o mal, con una frase en
español que dice qué está bien, qué falta y, si reconoce el error típico
(ε/Δ en vez de Δ/ε, una suma sin recortar, recortar la suma en lugar de cada
persona…), cuál es.

Las comprobaciones estadísticas llaman a la función del estudiante miles de
veces con un generador de semilla fija (el veredicto es reproducible) y
aceptan una medida si está a menos de ``Z_TOLERANCE`` errores estándar de la
teórica: una implementación correcta falla con probabilidad menor que 10⁻⁶
(aproximación normal), y cada error típico queda a más de 15 errores estándar.

En el navegador, el *worker* llama a ``run_check(código, check=…)``, que
ejecuta la celda con ``dpdeck.cellrun.run_cell`` y aplica la comprobación a su
espacio de nombres. En un cuaderno Jupyter::

    from dpdeck.exercises import check
    check("laplace-escala", globals())

El reto del laboratorio (``reto-laboratorio``) comprueba la extensión
``student_extension`` contra un laboratorio corrido con la semilla elegida;
``export_lab`` produce el JSON de ``python -m dpdeck.lab`` con la extensión.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import io
import math
import numbers
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from ... import lab
from ..._checks import describe
from ...mechanisms import gaussian_sigma
from ...numbers import PERCENT_SIGN, format_number, format_percent, format_power_of_ten
from ..cellrun import run_cell
from ..protocol import MAX_FIGURES, MAX_OUTPUT_CHARS, RUN_STATUS

__all__ = [
    "Z_TOLERANCE",
    "Finding",
    "Verdict",
    "CHECKS",
    "check",
    "run_check",
    "export_lab",
    "check_laplace_scale",
    "check_budget_split",
    "check_clipped_sum",
    "check_gaussian_sigma",
    "check_per_person_clipping",
    "check_fedavg_average",
    "check_pairwise_masks",
    "check_lab_extension",
]

# A correct implementation lands within this many standard errors of the theory.
Z_TOLERANCE = 5.0
# Every statistical check draws from generators seeded here: the same code, the same verdict.
SEED = 20_240_924

PASSED_SUMMARY = "¡Correcto! Todo lo que se comprueba está bien."
FAILED_SUMMARY = "Todavía no: revisa lo que está marcado con ✗."


# ------------------------------------------------------------------ veredicto --


@dataclass(frozen=True)
class Finding:
    """Un hallazgo de una comprobación: si está bien y qué se dice de él."""

    ok: bool
    text: str


@dataclass(frozen=True)
class Verdict:
    """El resultado de comprobar un ejercicio: sus hallazgos, en orden.

    Pasa si tiene hallazgos y todos están bien. ``as_dict()`` es lo que viaja
    a la página; ``str()`` (y el ``repr``, para un cuaderno) lo escribe en
    líneas con ✓ y ✗.
    """

    exercise: str
    findings: tuple[Finding, ...]

    @property
    def passed(self) -> bool:
        return bool(self.findings) and all(finding.ok for finding in self.findings)

    @property
    def summary(self) -> str:
        return PASSED_SUMMARY if self.passed else FAILED_SUMMARY

    def as_dict(self) -> dict:
        return {
            "exercise": self.exercise,
            "passed": self.passed,
            "summary": self.summary,
            "findings": [{"ok": finding.ok, "text": finding.text} for finding in self.findings],
        }

    def __str__(self) -> str:
        lines = [("✓ " if self.passed else "✗ ") + self.summary]
        lines += [("  ✓ " if finding.ok else "  ✗ ") + finding.text for finding in self.findings]
        return "\n".join(lines)

    __repr__ = __str__


class _Stop(Exception):
    """Ends a check early: the finding that explains why is already recorded."""


class _Findings:
    """Collects findings; `fail(..., stop=True)` ends the check after recording."""

    def __init__(self):
        self.items: list[Finding] = []

    def ok(self, text: str) -> None:
        self.items.append(Finding(True, text))

    def fail(self, text: str, *, stop: bool = False) -> None:
        self.items.append(Finding(False, text))
        if stop:
            raise _Stop

    def expect(self, condition: bool, good: str, bad: str, *, stop: bool = False) -> bool:
        if condition:
            self.ok(good)
        else:
            self.fail(bad, stop=stop)
        return bool(condition)


def _run(name: str, body: Callable[[_Findings], None]) -> Verdict:
    findings = _Findings()
    try:
        body(findings)
    except _Stop:
        pass
    return Verdict(name, tuple(findings.items))


# ------------------------------------------------------- lo que definió la celda --


def _require_function(findings: _Findings, defined: Mapping, name: str, signature: str) -> Callable:
    function = defined.get(name)
    if function is None:
        findings.fail(f"No encuentro la función `{name}`: la celda tiene que definirla "
                      f"(`def {name}({signature}):`).", stop=True)
    if not callable(function):
        findings.fail(f"`{name}` existe pero no es una función: es {describe(function)}.", stop=True)
    return function


def _require_value(findings: _Findings, defined: Mapping, name: str, what: str):
    if name not in defined:
        findings.fail(f"No encuentro `{name}`: la celda tiene que definirla ({what}).", stop=True)
    return defined[name]


def _call(findings: _Findings, function: Callable, name: str, *args, **kwargs):
    """Calls the student's function; an exception becomes a finding that ends the check."""
    try:
        return function(*args, **kwargs)
    except Exception as error:  # the student's code may raise anything
        findings.fail(f"`{name}` lanzó {type(error).__name__}: {error}", stop=True)


def _as_real(findings: _Findings, value, name: str) -> float:
    if isinstance(value, np.ndarray) and value.shape == ():
        value = value.item()
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        findings.fail(f"`{name}` devuelve {describe(value)}; se espera un número.", stop=True)
    number = float(value)
    if not math.isfinite(number):
        findings.fail(f"`{name}` devuelve {describe(value)}; se espera un número finito.", stop=True)
    return number


def _as_vector(findings: _Findings, value, name: str, length: int) -> np.ndarray:
    try:
        array = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        findings.fail(f"`{name}` devuelve {describe(value)}; se esperan {length} números.", stop=True)
    if array.shape != (length,):
        findings.fail(f"`{name}` devuelve forma {array.shape}; se espera una publicación por consulta "
                      f"({length} números).", stop=True)
    if not np.all(np.isfinite(array)):
        findings.fail(f"`{name}` devuelve valores no finitos: {describe(array)}.", stop=True)
    return array


def _num(value, decimals: int = 2) -> str:
    return format_number(value, decimals)


def _mean_absolute_error_band(samples: int) -> float:
    """Relative half-width of the acceptance band for a measured Laplace scale.

    |X − f(D)| of a Lap(b) release is exponential with mean b and standard
    deviation b, so the mean of ``samples`` of them has relative standard
    error 1/√samples; the band is ``Z_TOLERANCE`` of those.
    """
    return Z_TOLERANCE / math.sqrt(samples)


def _check_uses_rng(findings: _Findings, draw: Callable[[np.random.Generator], Any], name: str) -> None:
    """Same seed, same release; another seed, another release: the noise comes from `rng`."""
    first = draw(np.random.default_rng(SEED))
    again = draw(np.random.default_rng(SEED))
    other = draw(np.random.default_rng(SEED + 1))
    if not np.array_equal(first, again):
        findings.fail(f"`{name}` no saca su azar del `rng` que recibe: con la misma semilla publica otra "
                      "cosa. Toma el ruido de `rng` (no de `np.random` ni de `random`).", stop=True)
    if np.array_equal(first, other):
        findings.fail(f"`{name}` publica siempre lo mismo, con cualquier semilla: falta el ruido, "
                      "que sale del `rng` que recibe.", stop=True)
    findings.ok(f"`{name}` saca su azar del `rng` que recibe: con la misma semilla publica lo mismo.")


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
            rng = np.random.default_rng(SEED + 10 + index)
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


# ------------------------------------------------ capítulo 2: el presupuesto --

BUDGET_CASES = (((42, 17, 99, 5), 1.0), ((300, 120, 7), 0.3))   # (conteos, ε total)
BUDGET_SAMPLES = 1000


def check_budget_split(defined: Mapping) -> Verdict:
    """Capítulo 2: `publicar(conteos, *, epsilon_total, rng)` reparte ε en partes iguales.

    Los k conteos son sobre las mismas personas: por composición secuencial
    sus ε se suman, así que cada uno recibe ε_total/k y ruido Lap(k/ε_total)
    (sensibilidad 1). Para dos casos publica ``BUDGET_SAMPLES`` veces, mide la
    escala b̂ᵢ de cada conteo como E|Mᵢ − cᵢ| (error relativo 1/√n: acepta
    ±5/√n, 16 % con n = 1000) y suma lo gastado, Σ 1/b̂ᵢ.

    Los ruidos de los conteos deben ser independientes (correlación muestral
    ≤ 5/√n): uno solo sumado a todos publica exactas sus diferencias.

    Errores que reconoce: gastar ε_total en cada conteo (k veces el
    presupuesto), dividir la escala en vez de ε, un reparto desigual, un mismo
    ruido para todos, una salida que no es un número por conteo.
    Referencia: Dwork y Roth (2014), Teorema 3.14 (composición secuencial).
    """
    name = "publicar"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "conteos, *, epsilon_total, rng")
        counts, budget = BUDGET_CASES[0]

        def release(rng, counts=counts, budget=budget):
            output = _call(findings, function, name, np.array(counts), epsilon_total=budget, rng=rng)
            return _as_vector(findings, output, name, len(counts))

        _check_uses_rng(findings, release, name)
        band = _mean_absolute_error_band(BUDGET_SAMPLES)
        for index, (counts, budget) in enumerate(BUDGET_CASES):
            rng = np.random.default_rng(SEED + 20 + index)
            outputs = np.array([release(rng, counts, budget) for _ in range(BUDGET_SAMPLES)])
            scales = np.abs(outputs - np.array(counts)).mean(axis=0)
            k = len(counts)
            case = f"{k} conteos y ε total = {_num(budget, None)}"
            if np.any(scales == 0):
                findings.fail(f"Con {case} algún conteo sale sin ruido: cada publicación necesita su ruido.",
                              stop=True)
            spent = float(np.sum(1.0 / scales))
            wanted = k / budget
            # Σ 1/b̂ᵢ has relative error about 1/√(k·n) around the truth: the band covers it.
            spent_band = Z_TOLERANCE / math.sqrt(k * BUDGET_SAMPLES)
            if spent > budget * (1 + spent_band):
                hint = (" Cada conteo gasta el presupuesto entero: las consultas sobre las mismas personas "
                        "se suman (composición secuencial), así que a cada una le toca ε_total/k."
                        if abs(spent / (k * budget) - 1) <= spent_band + band else "")
                findings.fail(f"Con {case} gastas ε ≈ {_num(spent)}: más que el presupuesto.{hint}")
            else:
                findings.ok(f"Con {case} gastas ε ≈ {_num(spent)}: no te pasas del presupuesto.")
            noise = outputs - np.array(counts)
            # Independent noises have sample correlation about N(0, 1/n): the band is 5/√n.
            correlation = np.corrcoef(noise, rowvar=False)[np.triu_indices(k, 1)]
            findings.expect(np.all(np.abs(correlation) <= Z_TOLERANCE / math.sqrt(BUDGET_SAMPLES)),
                            f"Con {case} cada conteo lleva su propio ruido, independiente de los demás.",
                            f"Con {case} los conteos comparten el ruido (correlación "
                            f"{_num(float(np.max(np.abs(correlation))))}): así las diferencias entre conteos "
                            "se publican exactas. Saca un ruido para cada conteo.")
            equal = np.all(np.abs(scales / wanted - 1) <= band)
            findings.expect(equal,
                            f"Con {case} cada conteo lleva ruido de escala ≈ k/ε = {_num(wanted, None)}.",
                            f"Con {case} las escalas medidas son {', '.join(_num(s) for s in scales)}; "
                            f"repartiendo en partes iguales cada una es k/ε_total = {_num(wanted, None)}.")

    return _run("presupuesto", body)


# --------------------------------------------- capítulo 3: la suma recortada --

# Clipping: one huge value and one negative one; ε so large that noise is about 10⁻³.
CLIP_VALUES = (5.0, 3.0, 2_000_000_000.0, -7.0, 9.5)
CLIP_BOUND = 10.0
CLIP_EPSILON = 10_000.0
# Scale: values well below the bound, so a data-dependent scale (max |x|) shows.
SCALE_VALUES = tuple(float(v) for v in (1, 4, 2, 0, 3, 2.5, 1.5, 4, 0.5, 3))
SCALE_BOUND = 10.0
SCALE_EPSILON = 0.5
SUM_SAMPLES = 2000


def check_clipped_sum(defined: Mapping) -> Verdict:
    """Capítulo 3: `suma_privada(valores, *, cota, epsilon, rng)` = Σ clip(xᵢ, 0, cota) + Lap(cota/ε).

    Con valores entre 0 y 4, cota 10 y ε = 0,5 mide la escala como E|M − Σ|
    sobre ``SUM_SAMPLES`` publicaciones y acepta ±5/√n (11 %) alrededor de
    b = cota/ε = 20: la sensibilidad de la suma recortada es la cota, no 1
    (un conteo) ni max|xᵢ| (la sensibilidad local, que depende de los
    datos). Después, con ε = 10⁴ (ruido de escala 10⁻³) y valores
    (5, 3, 2·10⁹, −7, 9,5) recortados a [0, 10], la suma debe ser 27,5: sin
    recortar sale 2·10⁹; recortando la suma, 10; recortando solo por arriba, 20,5.
    Referencia: Near y Abuah (2021), cap. 5; Dwork y Roth (2014), Teorema 3.6.
    """
    name = "suma_privada"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "valores, *, cota, epsilon, rng")

        def release(rng, values, bound, epsilon):
            output = _call(findings, function, name, np.array(values), cota=bound, epsilon=epsilon, rng=rng)
            return _as_real(findings, output, name)

        _check_uses_rng(findings, lambda rng: release(rng, SCALE_VALUES, SCALE_BOUND, SCALE_EPSILON), name)
        rng = np.random.default_rng(SEED + 31)
        true_sum = float(np.clip(SCALE_VALUES, 0.0, SCALE_BOUND).sum())
        outputs = np.array([release(rng, SCALE_VALUES, SCALE_BOUND, SCALE_EPSILON) for _ in range(SUM_SAMPLES)])
        expected = SCALE_BOUND / SCALE_EPSILON
        measured = float(np.abs(outputs - true_sum).mean())
        band = _mean_absolute_error_band(SUM_SAMPLES)
        case = f"cota {_num(SCALE_BOUND, None)} y ε = {_num(SCALE_EPSILON, None)}"
        if abs(measured / expected - 1) <= band:
            findings.ok(f"Con {case} la escala del ruido es {_num(measured)} ≈ cota/ε = {_num(expected, None)}: "
                        "la sensibilidad de la suma recortada es la cota.")
        else:
            hints = [
                (1.0 / SCALE_EPSILON, "Parece 1/ε: esa es la sensibilidad de un conteo; la de la suma "
                                      "recortada es la cota."),
                (max(SCALE_VALUES) / SCALE_EPSILON, "Parece max(valores)/ε: es la sensibilidad local, "
                                                    "depende de los datos y filtra; usa la cota."),
                (SCALE_EPSILON / SCALE_BOUND, "Parece ε/cota: la escala es cota/ε."),
            ]
            hint = next((text for scale, text in hints if abs(measured / scale - 1) <= band), "")
            findings.fail(f"Con {case} la escala medida es {_num(measured)}, pero debería ser "
                          f"cota/ε = {_num(expected, None)}. {hint}".rstrip())
        offset = float(outputs.mean() - true_sum)
        limit = Z_TOLERANCE * math.sqrt(2.0) * expected / math.sqrt(SUM_SAMPLES)
        findings.expect(abs(offset) <= limit,
                        "El ruido está centrado en la suma recortada.",
                        f"En promedio te alejas {_num(offset)} de la suma recortada: el ruido debe estar "
                        "centrado en 0.")
        clipped = float(np.clip(CLIP_VALUES, 0.0, CLIP_BOUND).sum())
        total = release(np.random.default_rng(SEED + 30), CLIP_VALUES, CLIP_BOUND, CLIP_EPSILON)
        tolerance = 0.05   # 50 noise scales: a correct sum misses it with probability e⁻⁵⁰
        if abs(total - clipped) <= tolerance:
            findings.ok(f"Cada persona se recorta a [0, cota]: con valores {_values_text(CLIP_VALUES)} y "
                        f"cota {_num(CLIP_BOUND, None)} la suma (casi sin ruido) es {_num(clipped, None)}.")
        else:
            diagnosis = {
                float(np.sum(CLIP_VALUES)): "no recortas: una sola persona mueve la suma tanto como quiera "
                                            "(la sensibilidad sería infinita).",
                min(float(np.sum(CLIP_VALUES)), CLIP_BOUND): "recortas la suma, no a cada persona: "
                                                             "recorta cada valor y después suma.",
                float(np.minimum(CLIP_VALUES, CLIP_BOUND).sum()): "recortas solo por arriba: un valor "
                                                                  "negativo también mueve la suma; recorta a [0, cota].",
            }
            reason = next((text for value, text in diagnosis.items() if abs(total - value) <= tolerance),
                          f"debería ser {_num(clipped, None)}, la suma de los valores recortados a [0, cota].")
            findings.fail(f"Con valores {_values_text(CLIP_VALUES)}, cota {_num(CLIP_BOUND, None)} y ε enorme "
                          f"tu suma es {_num(total)}: {reason}")

    return _run("suma-recortada", body)


def _values_text(values) -> str:
    return "(" + "; ".join(format_number(value) for value in values) + ")"


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


# ----------------------------------------- capítulo 5: recortar por persona --

CLIP_NORMS = (1.0, 2.5)


def _gradient_fixture() -> np.ndarray:
    """Per-person gradients: large, small, zero, opposite signs, and 24 seeded ones (uniform, not noise)."""
    fixed = np.array([[3.0, 4.0, 0.0], [0.3, 0.4, 0.0], [0.0, 0.0, 0.0], [-6.0, 8.0, 0.0],
                      [0.5, -0.5, 0.5], [3.0, 0.5, -0.2], [0.0, -9.0, 0.0]])
    seeded = np.random.default_rng(SEED + 50).uniform(-3.0, 3.0, size=(24, 3))
    return np.vstack([fixed, seeded])


def check_per_person_clipping(defined: Mapping) -> Verdict:
    """Capítulo 5: `recortar(gradientes, *, C)` lleva cada fila a norma L2 ≤ C: gᵢ·min(1, C/‖gᵢ‖₂).

    Con 31 gradientes de 3 componentes (grandes, chicos, uno cero) y C = 1 y
    2,5 comprueba, fila por fila y con error ≤ 10⁻⁹: una fila por persona;
    ninguna norma pasa de C; las filas con norma ≤ C no cambian; las demás
    conservan la dirección y quedan con norma C; un gradiente cero sigue cero
    (sin NaN). Así la suma tiene sensibilidad L2 igual a C.

    Errores que reconoce: recortar la suma (una sola fila), recortar cada
    coordenada (`np.clip`), llevar todas las filas a norma C (agranda las
    chicas), dividir por cero.
    Referencia: Abadi et al. (2016), Algoritmo 1; Near y Abuah (2021), cap. 11.
    """
    name = "recortar"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "gradientes, *, C")
        gradients = _gradient_fixture()
        norms = np.linalg.norm(gradients, axis=1)
        for clip_norm in CLIP_NORMS:
            given = gradients.copy()
            output = _call(findings, function, name, given, C=clip_norm)
            case = f"C = {_num(clip_norm, None)}"
            try:
                clipped = np.asarray(output, dtype=float)
            except (TypeError, ValueError):
                findings.fail(f"`{name}` devuelve {describe(output)}; se espera una matriz como `gradientes`.",
                              stop=True)
            if clipped.shape != gradients.shape:
                if clipped.shape in ((gradients.shape[1],), (1, gradients.shape[1])):
                    findings.fail(f"Con {case} devuelves un solo vector: recortas la suma. Recorta el "
                                  "gradiente de cada persona (cada fila) y deja la suma para después.", stop=True)
                findings.fail(f"Con {case} devuelves forma {clipped.shape}; se espera {gradients.shape}, "
                              "una fila por persona.", stop=True)
            if not np.all(np.isfinite(clipped)):
                rows = [int(i) for i in np.flatnonzero(~np.all(np.isfinite(clipped), axis=1))]
                zero = any(norms[i] == 0 for i in rows)
                findings.fail(f"Con {case} aparecen NaN o infinitos" +
                              (" en la persona con gradiente cero: divides por ‖g‖ = 0. Usa min(1, C/‖g‖) "
                               "con cuidado (por ejemplo, divide por max(‖g‖, C))." if zero else "."), stop=True)
            out_norms = np.linalg.norm(clipped, axis=1)
            small = norms <= clip_norm
            over = out_norms > clip_norm * (1 + 1e-9)
            if np.any(over):
                index = int(np.argmax(out_norms))
                coordinate = np.allclose(clipped, np.clip(gradients, -clip_norm, clip_norm))
                findings.fail(f"Con {case} la fila {index} queda con norma {_num(out_norms[index])} > C." +
                              (" Recortas cada coordenada por separado: el recorte es de la norma L2 "
                               "de la fila entera, gᵢ·min(1, C/‖gᵢ‖₂)." if coordinate else ""), stop=True)
            findings.ok(f"Con {case} ninguna persona queda con norma mayor que C.")
            if not np.allclose(clipped[small], gradients[small], rtol=1e-9, atol=1e-12):
                grown = np.allclose(out_norms[norms > 0], clip_norm, rtol=1e-9)
                fixed = [bound for bound in CLIP_NORMS if bound != clip_norm and np.allclose(
                    clipped, gradients * np.minimum(1.0, bound / np.maximum(norms, 1e-300))[:, None])]
                reason = (" Llevas todas las filas a norma C: el recorte solo achica, min(1, C/‖gᵢ‖)." if grown
                          else f" Recortas a {_num(fixed[0], None)}: usa el C que recibe la función." if fixed
                          else "")
                findings.fail(f"Con {case} cambias gradientes que ya tenían norma ≤ C.{reason}", stop=True)
            findings.ok(f"Con {case} los gradientes chicos (norma ≤ C) no cambian.")
            big = ~small
            directions = np.einsum("ij,ij->i", clipped[big], gradients[big]) / (out_norms[big] * norms[big])
            kept = np.allclose(directions, 1.0, atol=1e-9) and np.allclose(out_norms[big], clip_norm, rtol=1e-9)
            findings.expect(kept,
                            f"Con {case} los gradientes grandes conservan su dirección y quedan con norma C.",
                            f"Con {case} algún gradiente grande cambia de dirección o no queda con norma C: "
                            "reescala la fila entera, gᵢ·C/‖gᵢ‖₂.", stop=True)
        if not np.array_equal(given, gradients):
            findings.ok("(Ojo: tu función modifica el arreglo que recibe; no cambia la privacidad, "
                        "pero es más seguro devolver uno nuevo.)")

    return _run("recorte-por-persona", body)


# --------------------------------------------- capítulo 6: el promedio de FedAvg --

FEDAVG_SIZES = ((10, 2000, 350, 40), (7, 7, 7), (1200,))   # n_k of each round's clients


def _updates_fixture(clients: int, seed_offset: int) -> np.ndarray:
    """Client updates Δ_k of 3 coefficients, seeded (uniform: these are not noise)."""
    return np.random.default_rng(SEED + 60 + seed_offset).uniform(-1.0, 1.0, size=(clients, 3))


def check_fedavg_average(defined: Mapping) -> Verdict:
    """Capítulo 6: `promediar(actualizaciones, tamanos)` = Σ_k (n_k/n) Δ_k, con n = Σ_k n_k.

    Tres rondas (tamaños 10, 2000, 350 y 40; tres clientes iguales; un solo
    cliente), comparadas con la fórmula (error ≤ 10⁻⁹): una sola
    actualización de salida, ponderada por los ejemplos de cada cliente.

    Errores que reconoce: el promedio simple (un cliente con 10 ejemplos pesa
    como uno con 2000), la suma ponderada sin dividir por n, devolver una fila
    por cliente.
    Referencia: McMahan et al. (2017), Algoritmo 1 (FederatedAveraging).
    """
    name = "promediar"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "actualizaciones, tamanos")
        for index, sizes in enumerate(FEDAVG_SIZES):
            updates = _updates_fixture(len(sizes), index)
            weights = np.array(sizes, dtype=float)
            expected = (weights[:, None] * updates).sum(axis=0) / weights.sum()
            given = updates.copy()
            output = _call(findings, function, name, given, np.array(sizes))
            case = f"tamaños {', '.join(str(size) for size in sizes)}"
            try:
                average = np.asarray(output, dtype=float)
            except (TypeError, ValueError):
                findings.fail(f"`{name}` devuelve {describe(output)}; se espera un vector de "
                              f"{updates.shape[1]} coeficientes.", stop=True)
            if average.shape == updates.shape and len(sizes) > 1:
                findings.fail(f"Con {case} devuelves una fila por cliente: el servidor las combina en una sola "
                              "actualización.", stop=True)
            if average.shape != expected.shape:
                findings.fail(f"Con {case} devuelves forma {average.shape}; se espera ({updates.shape[1]},), "
                              "una sola actualización.", stop=True)
            if np.allclose(average, expected, rtol=1e-9, atol=1e-12):
                findings.ok(f"Con {case} el promedio pondera cada cliente por n_k/n.")
                continue
            diagnosis = [
                (updates.mean(axis=0), " Es el promedio simple: todos los clientes pesan igual, y uno con "
                                       "10 ejemplos cuenta como uno con 2000. Pondera por n_k/n."),
                ((weights[:, None] * updates).sum(axis=0), " Es la suma ponderada: falta dividir por "
                                                            "n = Σ n_k (los pesos n_k/n suman 1)."),
                ((weights[:, None] * updates).sum(axis=0) / len(sizes),
                 " Divides por el número de clientes; se divide por n = Σ n_k."),
            ]
            hint = next((text for value, text in diagnosis if np.allclose(average, value, rtol=1e-9)), "")
            findings.fail(f"Con {case} tu promedio no es Σ (n_k/n)·Δ_k.{hint}", stop=True)
        if not np.array_equal(given, _updates_fixture(len(FEDAVG_SIZES[-1]), len(FEDAVG_SIZES) - 1)):
            findings.ok("(Ojo: tu función modifica las actualizaciones que recibe; no cambia el promedio, "
                        "pero es más seguro no tocarlas.)")

    return _run("promedio-fedavg", body)


# ------------------------------------------ capítulo 6: la agregación segura --

MASK_CASES = ((4, 3), (2, 5), (7, 3))   # (clientes, coeficientes) de cada ronda
# A masked update hides its data when its mask moves it this many times the largest datum.
MASK_COVER = 100.0
# The masks cancel when the masked sum is the true one up to rounding of masks near 10³.
MASK_SUM_TOLERANCE = 1e-6


def _deltas_fixture(clients: int, coefficients: int, seed_offset: int) -> np.ndarray:
    """Client updates Δ_k of size below ½, seeded (uniform: these are data, not masks)."""
    return np.random.default_rng(SEED + 70 + seed_offset).uniform(-0.5, 0.5, size=(clients, coefficients))


def check_pairwise_masks(defined: Mapping) -> Verdict:
    """Capítulo 6: `enmascarar(deltas, *, rng)` suma a cada actualización máscaras por pares que se cancelan.

    Para cada par i < j se sortea una máscara m_ij (de ``rng``) que el cliente
    i suma y el j resta: el envío de i es Δ_i + Σ_{j>i} m_ij − Σ_{j<i} m_ji y la
    suma de los envíos es Σ_i Δ_i, exacta. Tres rondas (4 clientes × 3
    coeficientes, 2 × 5, 7 × 3): la forma, el azar de ``rng``, la suma igual a
    la real (error ≤ 10⁻⁶) y cada envío lejos de su dato (algún coeficiente a
    más de ``MASK_COVER`` veces el mayor |Δ|). Es la idea de Bonawitz et al.
    (2017), sección 4, sin la aritmética módulo 2³² que hace uniforme a cada
    envío (aquí, máscaras grandes bastan para la clase).

    Errores que reconoce: no enmascarar, olvidar restar la máscara al otro del
    par, sumarla a los dos, una misma máscara para todos, máscaras tan chicas
    que dejan ver el dato, azar que no sale de ``rng``.
    """
    name = "enmascarar"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "deltas, *, rng")

        def mask(deltas, rng):
            output = _call(findings, function, name, deltas.copy(), rng=rng)
            try:
                sent = np.asarray(output, dtype=float)
            except (TypeError, ValueError):
                findings.fail(f"`{name}` devuelve {describe(output)}; se espera un envío por cliente, "
                              f"una matriz de forma {deltas.shape}.", stop=True)
            if sent.shape != deltas.shape:
                findings.fail(f"`{name}` devuelve forma {sent.shape}; se espera un envío por cliente, "
                              f"de forma {deltas.shape}.", stop=True)
            if not np.all(np.isfinite(sent)):
                findings.fail(f"`{name}` devuelve valores no finitos: {describe(sent)}.", stop=True)
            return sent

        explained = False   # the typical mistake is said once, not in every round
        for index, (clients, coefficients) in enumerate(MASK_CASES):
            deltas = _deltas_fixture(clients, coefficients, index)
            sent = mask(deltas, np.random.default_rng(SEED + 80 + index))
            case = f"{clients} clientes"
            added = sent - deltas
            excess = float(np.max(np.abs(sent.sum(axis=0) - deltas.sum(axis=0))))
            if excess <= MASK_SUM_TOLERANCE:
                findings.ok(f"Con {case} las máscaras se cancelan: la suma de los envíos es la suma real.")
            else:
                same = np.allclose(added, added[0], rtol=1e-9, atol=1e-12)
                hint = "" if explained else (
                    " Todos llevan la misma máscara: en la suma aparece una vez por cliente. Cada máscara "
                    "es de un par: uno la suma y el otro la resta." if same else
                    " Cada máscara m_ij la suma un cliente del par y la resta el otro: así se anula en la "
                    "suma. ¿Falta restarla, o se la sumas a los dos?")
                explained = True
                findings.fail(f"Con {case} la suma de los envíos se aleja {_num(excess)} de la suma real: las "
                              f"máscaras no se cancelan.{hint}")
            cover = MASK_COVER * float(np.max(np.abs(deltas)))
            moved = np.max(np.abs(added), axis=1)
            bare = [k for k in range(clients) if moved[k] == 0]
            weak = [k for k in range(clients) if 0 < moved[k] < cover]
            if bare:
                findings.fail(f"Con {case} el cliente {bare[0]} envía su actualización tal cual: el servidor "
                              "la ve." + ("" if len(bare) == clients else
                                          " Cada cliente lleva las máscaras de todos sus pares."))
            elif weak:
                findings.fail(f"Con {case} el envío del cliente {weak[0]} se aleja a lo sumo "
                              f"{_num(float(moved[weak[0]]))} de su actualización, y los datos miden hasta "
                              f"{_num(float(np.max(np.abs(deltas))))}: el servidor casi los ve. Las máscaras "
                              "tienen que ser mucho más grandes que los datos.")
            else:
                findings.ok(f"Con {case} cada envío, solo, queda lejos de su actualización: la máscara la tapa.")
        # Last: without masks at all the rounds above already say what is missing.
        first = _deltas_fixture(*MASK_CASES[0], 0)
        _check_uses_rng(findings, lambda rng: mask(first, rng), name)

    return _run("mascaras-pares", body)


# --------------------------------------------------- el reto del laboratorio --

MIN_FIELD_CHARS = 12
# A measured number is cited with at least this many significant digits (4,02; 1221; 62,2 %).
MIN_CITED_DIGITS = 3
# A cited number: digits with a decimal comma or point, thousands grouped with spaces, an optional %.
CITED_NUMBER = re.compile(r"(?<![\w.,])[−-]?\d{1,3}(?:[ \u00a0\u202f]\d{3})+(?:[.,]\d+)?(?:\s?%)?"
                          r"|(?<![\w.,])[−-]?\d+(?:[.,]\d+)?(?:\s?%)?")


def _cited_numbers(text: str) -> list[tuple[float, int, bool, int]]:
    """(value, decimals written, is a percentage, significant digits) of every number in ``text``."""
    cited = []
    for match in CITED_NUMBER.finditer(text):
        raw = match.group(0)
        percent = raw.rstrip().endswith("%")
        digits = re.sub(r"[\s\u00a0\u202f%]", "", raw).replace("−", "-").replace(",", ".")
        whole, _, fraction = digits.lstrip("-").partition(".")
        significant = len((whole + fraction).lstrip("0")) if fraction else len(whole.lstrip("0").rstrip("0"))
        try:
            cited.append((float(digits), len(fraction), percent, significant))
        except ValueError:
            continue
    return cited


def _lab_numbers(result: dict) -> tuple[list[float], set[tuple[float, bool]]]:
    """What the lab printed: every number of its results and evidence values, and the numbers
    its facts write (as (value, is a percentage), the way the fact writes them)."""
    found: list[float] = []

    def walk(value):
        if isinstance(value, dict):
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)
        elif isinstance(value, numbers.Real) and not isinstance(value, bool):
            found.append(float(value))

    walk(result["results"])
    walk([item["values"] for item in result["evidence"]])
    written = {(value, percent) for item in result["evidence"]
               for value, _, percent, _ in _cited_numbers(item["fact"])}
    return found, written


def _cites_the_lab(text: str, printed: tuple[list[float], set[tuple[float, bool]]]
                   ) -> tuple[float, int, bool] | None:
    """The first number of ``text`` that the lab printed, as written (value, decimals, percent).

    A number matches a value of results or evidence rounded to the decimals
    it is written with, or a number a fact writes. Only numbers written with
    ``MIN_CITED_DIGITS`` significant digits count: a parameter (ε = 0,5, k =
    10, 5000 personas) is an input of the lab, not something it measured.
    """
    values, written = printed
    for value, decimals, percent, significant in _cited_numbers(text):
        if significant < MIN_CITED_DIGITS:
            continue
        if (value, percent) in written:
            return value, decimals, percent
        for number in values:
            shown = 100 * number if percent else number
            if abs(shown - value) <= 0.5 * 10 ** (-decimals) + 1e-12:
                return value, decimals, percent
    return None


def _example_number(result: dict) -> str:
    for item in result["evidence"]:
        for key, value in item["values"].items():
            if isinstance(value, float) and _cited_numbers(format_number(value))[0][3] >= MIN_CITED_DIGITS:
                return f"{format_number(value)} ({key}, en evidence)"
    return ""


@functools.lru_cache(maxsize=4)
def _lab_for_seed(seed: int) -> dict:
    """The lab with a seed, computed once: «Comprobar» and then «Exportar» run it a single time."""
    return lab.run_lab(seed)


def _check_extension(findings: _Findings, extension, seed) -> dict | None:
    """The four fields, a citation of the lab's numbers, an own limitation; the lab's result if valid."""
    if not isinstance(extension, dict):
        findings.fail(f"`student_extension` debe ser un diccionario con las claves "
                      f"{', '.join(lab.EXTENSION_FIELDS)}; es {describe(extension)}.", stop=True)
    complete = True
    for key, (label, prompt) in lab.EXTENSION_FIELDS.items():
        value = extension.get(key)
        text = value.strip() if isinstance(value, str) else ""
        if len(text) >= MIN_FIELD_CHARS:
            findings.ok(f"{label}: escrito.")
        else:
            complete = False
            findings.fail(f"{label}: falta ({prompt})." if not text else
                          f"{label}: demasiado corto; escribe {prompt}.")
    unknown = sorted(str(key) for key in extension if key not in lab.EXTENSION_FIELDS)
    if unknown:
        findings.fail(f"Clave desconocida «{unknown[0]}»: se esperan {', '.join(lab.EXTENSION_FIELDS)}.",
                      stop=True)
    try:
        seed = lab.check_seed(seed)
    except ValueError as error:
        findings.fail(f"La semilla no sirve: {error}.", stop=True)
    try:
        lab.check_student_extension(extension)
    except ValueError:
        return None   # the findings above already say which field is missing
    # Same seed, same JSON byte for byte: a copy of the one already computed is the lab.
    result = copy.deepcopy(_lab_for_seed(seed))
    if not complete:
        return result
    cited = _cites_the_lab(extension["measurement"] + " " + extension["conclusion"], _lab_numbers(result))
    if cited is not None:
        value, decimals, percent = cited
        shown = format_number(value, decimals) + (PERCENT_SIGN if percent else "")
        findings.ok(f"La medición cita un número del laboratorio con semilla {seed}: {shown}.")
    else:
        example = _example_number(result)
        findings.fail(f"La medición o la conclusión tienen que citar un número que midió el laboratorio "
                      f"con semilla {seed}, con al menos {MIN_CITED_DIGITS} cifras (de results o evidence"
                      + (f"; por ejemplo {example}" if example else "") + ").")
    own = extension["limitation"].strip().casefold()
    copied = any(own == text.casefold() or (len(own) > 40 and own in text.casefold())
                 for text in result["limitations"])
    findings.expect(not copied, "La limitación es tuya, no una copia de las que ya lista el laboratorio.",
                    "Esa limitación ya está en la lista `limitations` del laboratorio: escribe una propia "
                    "(un riesgo o un caso en que tu conclusión no valdría).")
    return result


def check_lab_extension(defined: Mapping) -> Verdict:
    """El reto: `student_extension` (supuesto, medición, conclusión, limitación) y `semilla`.

    Los cuatro campos de ``dpdeck.lab.EXTENSION_FIELDS`` escritos (al menos
    ``MIN_FIELD_CHARS`` caracteres); la medición o la conclusión citan, con al
    menos ``MIN_CITED_DIGITS`` cifras significativas, un número que el
    laboratorio imprimió con esa semilla (en ``results`` o en ``evidence``); la
    limitación no es una copia de ``limitations``. Es el criterio de la clase:
    «la interpretación referencia datos impresos por el laboratorio».
    """
    def body(findings: _Findings) -> None:
        extension = _require_value(findings, defined, "student_extension", "un diccionario con las claves "
                                   + ", ".join(lab.EXTENSION_FIELDS))
        _check_extension(findings, extension, defined.get("semilla", 0))

    return _run("reto-laboratorio", body)


def export_lab(*, seed=0, extension) -> dict:
    """El laboratorio con la extensión del reto, como lo exporta el mazo.

    Devuelve ``{"verdict": …, "json": texto | None, "filename": …}``: el
    veredicto del reto (``check_lab_extension``) y, si la extensión es válida
    para ``dpdeck.lab.check_student_extension``, el mismo JSON que
    ``python -m dpdeck.lab --seed N --extension archivo.json``.
    """
    holder: dict = {}

    def body(findings: _Findings) -> None:
        holder["result"] = _check_extension(findings, extension, seed)

    verdict = _run("reto-laboratorio", body)
    result = holder.get("result")
    text, filename = None, None
    if result is not None:
        result[lab.EXTENSION_KEY] = lab.check_student_extension(extension)
        text = lab.format_lab(result) + "\n"
        filename = f"laboratorio-semilla-{result['seed']}.json"
    return {"verdict": verdict.as_dict(), "json": text, "filename": filename}


# ------------------------------------------------------------- el registro --

CHECKS: Mapping[str, Callable[[Mapping], Verdict]] = {
    "laplace-escala": check_laplace_scale,
    "presupuesto": check_budget_split,
    "suma-recortada": check_clipped_sum,
    "sigma-gaussiano": check_gaussian_sigma,
    "recorte-por-persona": check_per_person_clipping,
    "promedio-fedavg": check_fedavg_average,
    "mascaras-pares": check_pairwise_masks,
    "reto-laboratorio": check_lab_extension,
}
"""Cada comprobación por su nombre: el que lleva `check=` en la celda del ejercicio."""


def check(name: str, namespace: Mapping) -> Verdict:
    """Comprueba el ejercicio ``name`` con lo que definió ``namespace`` (en un cuaderno: ``globals()``)."""
    if name not in CHECKS:
        raise ValueError(f"no hay un ejercicio «{name}»; los ejercicios son: {', '.join(CHECKS)}")
    return CHECKS[name](namespace)


def run_check(
    source: str,
    *,
    check: str,
    cell_id: str = "celda",
    on_output: Callable[[dict], Any] | None = None,
    max_output_chars: int = MAX_OUTPUT_CHARS,
    max_figures: int = MAX_FIGURES,
) -> dict:
    """Ejecuta la celda de un ejercicio y comprueba lo que definió: lo que hace «Comprobar».

    Devuelve el resultado de ``run_cell`` (``status``, ``outputs``) más
    ``verdict`` (``Verdict.as_dict()``), o ``verdict: None`` si la celda no
    terminó bien (su error ya está en ``outputs``). Lo que imprima la función
    del estudiante mientras se comprueba no se muestra: son miles de llamadas.
    """
    if check not in CHECKS:
        raise ValueError(f"no hay un ejercicio «{check}»; los ejercicios son: {', '.join(CHECKS)}")
    holder: dict = {}

    def on_namespace(namespace: dict) -> None:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            holder["verdict"] = CHECKS[check](namespace)

    result = run_cell(source, cell_id=cell_id, on_output=on_output, max_output_chars=max_output_chars,
                      max_figures=max_figures, on_namespace=on_namespace)
    verdict = holder.get("verdict")
    result["verdict"] = verdict.as_dict() if verdict is not None and result["status"] == RUN_STATUS.DONE else None
    return result
