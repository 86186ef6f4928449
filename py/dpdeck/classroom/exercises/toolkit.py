"""Lo común a las comprobaciones de los ejercicios: el veredicto y las pruebas estadísticas.

Un ``Verdict`` es una lista de hallazgos (``Finding``), cada uno bien o mal con
una frase en español. Las comprobaciones estadísticas llaman a la función del
estudiante miles de veces con generadores de semilla fija (``seeded_rng``: el
mismo código, el mismo veredicto) y miden el ruido con pruebas de
``dpdeck.audits`` cuya falsa alarma es a lo sumo ``FALSE_ALARM`` (10⁻⁶) cada
una: una implementación correcta casi nunca falla. ``check_laplace_noise``
mide el ruido de Laplace por su centro (prueba de signos), su escala (la media
de |ruido|, una gamma) y su cola lejana (cuántas publicaciones se alejan más de
3, 4 y 5 escalas): un ruido recortado o truncado, o de otra forma, no llega
allí. Redondear lo publicado a enteros es posprocesamiento y pasa. Aquí están
también las piezas que leen lo que definió la celda (una función, un valor, un
número, un vector) y dicen, si falta o está mal, qué se esperaba.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np

from ..._checks import describe
from ...audits import DEFAULT_FALSE_ALARM, binomial_bounds, exponential_mean_bounds
from ...numbers import format_number, format_percent, format_significant


FALSE_ALARM = DEFAULT_FALSE_ALARM
"""Cada prueba estadística de una comprobación falla con una respuesta correcta con probabilidad ≤ 10⁻⁶."""
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

    def passed_so_far(self) -> bool:
        return all(finding.ok for finding in self.items)

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


def seeded_rng(offset: int = 0) -> np.random.Generator:
    """The generator of a statistical check: ``SEED + offset``, so the same code always gets the same verdict."""
    return np.random.default_rng(SEED + offset)


def _num(value, decimals: int = 2) -> str:
    return format_number(value, decimals)


def scale_bounds(samples: int) -> tuple[float, float]:
    """(mínimo, máximo) aceptables de la escala medida, E|ruido| sobre ``samples`` publicaciones, dividida por b.

    |X − f(D)| de una publicación Lap(b) es exponencial de media b: su media
    es una gamma, con la cota de ``dpdeck.audits.exponential_mean_bounds``.
    """
    return exponential_mean_bounds(samples, false_alarm=FALSE_ALARM)


# Far tails: P(|Lap(b)| > t·b) = e^{−t}. Rounding the release to integers moves the edge by ½ at most.
TAIL_MULTIPLES = (3, 4, 5)


def check_laplace_noise(findings: _Findings, noise, *, scales, case: str, diagnose: Callable[[float], str],
                        minimal: bool = True, truth=None) -> float | None:
    """El ruido de Laplace de muchas publicaciones: centro, escala y cola lejana; devuelve la escala medida (en b).

    ``noise`` son las publicaciones menos el valor verdadero y ``scales`` la
    escala b de cada una (del mismo tamaño). Tres hallazgos, cada uno con
    falsa alarma ≤ ``FALSE_ALARM`` para Lap(b) exacto o redondeado a enteros:

    * centro: entre los ruidos no nulos, los positivos son una binomial(m, ½)
      (prueba de signos);
    * escala: la media de |ruido|/b está en ``scale_bounds``. Con
      ``minimal=False`` solo se exige que no sea menor (más ruido también es
      privado), y se devuelve la escala para que la comprobación lo diga;
    * cola: para t = 3, 4 y 5, cuántas publicaciones se alejan más de t·b no
      baja del mínimo de una binomial(n, e^{−t−½/b}). Un ruido recortado a ±3b
      o gaussiano casi nunca llega a 5b; Laplace, el 0,7 % de las veces.
    """
    noise = np.asarray(noise, dtype=float)
    scales = np.broadcast_to(np.asarray(scales, dtype=float), noise.shape).reshape(-1)
    truths = np.broadcast_to(np.asarray(0.0 if truth is None else truth, dtype=float), noise.shape).reshape(-1)
    noise = noise.reshape(-1)
    size = noise.size
    offset = float(np.median(noise))
    if abs(offset) > 4 * float(np.median(scales)):
        guess = (" ¿Devuelves solo el ruido?" if np.allclose(offset, -np.median(truths), rtol=0.2) else
                 " ¿Centras el ruido en el valor, `rng.laplace(valor, b)`? El ruido va centrado en 0."
                 if np.allclose(offset, np.median(truths), rtol=0.2) else "")
        findings.fail(f"Con {case} tus publicaciones se alejan {_num(offset)} del valor verdadero (mediana): se "
                      f"publica el valor más un ruido centrado en 0.{guess}", stop=True)
    positive, negative = int(np.sum(noise > 0)), int(np.sum(noise < 0))
    if positive + negative:
        low, high = binomial_bounds(positive + negative, 0.5, false_alarm=FALSE_ALARM)
        findings.expect(low <= positive <= high,
                        f"Con {case} el ruido está centrado en el valor verdadero.",
                        f"Con {case} el ruido no está centrado: {format_percent(positive / (positive + negative))} "
                        "de las publicaciones quedan por encima del valor verdadero (se espera la mitad).")
    measured = float(np.mean(np.abs(noise) / scales))
    low, high = scale_bounds(size)
    shown = _num(measured * float(np.mean(scales)))
    if low <= measured <= high:
        findings.ok(f"Con {case} la escala medida es {shown}: la esperada, {format_significant(float(np.mean(scales)))}.")
    elif measured > high and not minimal:
        pass   # more noise than needed: the check says so with its own words
    else:
        findings.fail(f"Con {case} la escala medida es {shown}, pero debería ser {format_significant(float(np.mean(scales)))}."
                      + diagnose(measured))
    if measured < low:
        return measured   # a wrong scale: its far tail says nothing more
    normalized = np.abs(noise) / scales
    for multiple in TAIL_MULTIPLES:
        # the worst case over rounding to integers: the edge moves out by ½.
        probability = float(np.min(np.exp(-multiple - 0.5 / scales)))
        minimum, _ = binomial_bounds(size, probability, false_alarm=FALSE_ALARM / len(TAIL_MULTIPLES))
        far = int(np.sum(normalized > multiple * max(measured, 1.0)))
        if far < minimum:
            findings.fail(f"Con {case} el ruido casi nunca se aleja de verdad: {far} de {format_number(size)} "
                          f"publicaciones pasan de {multiple} escalas, y Laplace pone ahí "
                          f"{format_percent(math.exp(-multiple), 1)} (al menos {minimum}). ¿Recortas o truncas el "
                          "ruido (np.clip), o usas otra distribución (rng.normal)? Un ruido acotado no es ε-DP: "
                          "cerca del borde, una salida posible con una base es imposible con la vecina.")
            return measured
    findings.ok(f"Con {case} la cola lejana es la de Laplace: "
                f"{int(np.sum(normalized > TAIL_MULTIPLES[-1] * max(measured, 1.0)))} de {format_number(size)} "
                f"publicaciones pasan de {TAIL_MULTIPLES[-1]} escalas "
                f"(Laplace: {format_percent(math.exp(-TAIL_MULTIPLES[-1]), 1)}).")
    return measured


# How many releases per seed tell a rng from a fixed one: two independent sequences of 20 rounded
# draws coincide with probability below 0,2²⁰ ≈ 10⁻¹⁴.
RNG_DRAWS = 20


def check_draws_from_rng(findings: _Findings, draw: Callable[[np.random.Generator], Any], name: str, *,
                         truth=None) -> None:
    """Same seed, same releases; another seed, other releases: the noise comes from `rng`.

    Compares ``RNG_DRAWS`` releases per generator, not one: a rounded release
    repeats across seeds now and then, twenty of them almost never.
    """
    def releases(offset):
        rng = seeded_rng(offset)
        return [np.asarray(draw(rng), dtype=float) for _ in range(RNG_DRAWS)]

    first, again, other = releases(0), releases(0), releases(1)
    if not all(np.array_equal(a, b) for a, b in zip(first, again)):
        findings.fail(f"`{name}` no saca su azar del `rng` que recibe: con la misma semilla publica otra "
                      "cosa. Toma el ruido de `rng` (no de `np.random`, de `random` ni de un generador propio).",
                      stop=True)
    if all(np.array_equal(first[0], value) for value in first):
        if truth is not None and np.allclose(first[0], truth, rtol=0, atol=1e-12):
            findings.fail(f"`{name}` publica el valor exacto, siempre: falta el ruido, que sale del `rng` que "
                          "recibe.", stop=True)
        findings.fail(f"`{name}` publica siempre lo mismo, con ruido que nunca cambia: ¿creas un generador con "
                      "semilla fija dentro de la función? Toma el ruido del `rng` que recibe.", stop=True)
    if all(np.array_equal(a, b) for a, b in zip(first, other)):
        findings.fail(f"`{name}` publica lo mismo con cualquier semilla: ignora el `rng` que recibe (¿usa un "
                      "generador de semilla fija?). El ruido tiene que salir de `rng`.", stop=True)
    findings.ok(f"`{name}` saca su azar del `rng` que recibe: con la misma semilla publica lo mismo.")
