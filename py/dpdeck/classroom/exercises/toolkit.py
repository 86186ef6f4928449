"""Lo común a las comprobaciones de los ejercicios: el veredicto y las pruebas estadísticas.

Un ``Verdict`` es una lista de hallazgos (``Finding``), cada uno bien o mal con
una frase en español. Las comprobaciones estadísticas llaman a la función del
estudiante miles de veces con generadores de semilla fija (``seeded_rng``: el
mismo código, el mismo veredicto) y aceptan una medida si está a menos de
``Z_TOLERANCE`` errores estándar de la teórica: una implementación correcta
falla con probabilidad menor que 10⁻⁶ (aproximación normal). Aquí están
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
from ...numbers import format_number


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


def seeded_rng(offset: int = 0) -> np.random.Generator:
    """The generator of a statistical check: ``SEED + offset``, so the same code always gets the same verdict."""
    return np.random.default_rng(SEED + offset)


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
    first = draw(seeded_rng())
    again = draw(seeded_rng())
    other = draw(seeded_rng(1))
    if not np.array_equal(first, again):
        findings.fail(f"`{name}` no saca su azar del `rng` que recibe: con la misma semilla publica otra "
                      "cosa. Toma el ruido de `rng` (no de `np.random` ni de `random`).", stop=True)
    if np.array_equal(first, other):
        findings.fail(f"`{name}` publica siempre lo mismo, con cualquier semilla: falta el ruido, "
                      "que sale del `rng` que recibe.", stop=True)
    findings.ok(f"`{name}` saca su azar del `rng` que recibe: con la misma semilla publica lo mismo.")
