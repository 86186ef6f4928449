"""El reto del laboratorio (``reto-laboratorio``): una extensión que cita el laboratorio, y su exportación.

``check_lab_extension`` comprueba la extensión ``student_extension`` contra un
laboratorio corrido con la semilla elegida; ``export_lab`` produce el JSON de
``python -m dpdeck.lab`` con la extensión.
"""

from __future__ import annotations

import copy
import functools
import numbers
import re
from typing import Mapping

from ... import lab
from ..._checks import describe
from ...numbers import PERCENT_SIGN, format_number
from .toolkit import _Findings, Verdict, _require_value, _run


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
