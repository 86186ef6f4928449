"""La corrección de la clase: cada trabajo exportado, vuelto a comprobar aquí, en una tabla y un resumen.

``python -m dpdeck.grade CARPETA`` lee cada ``*.json`` de la carpeta (lo que
descarga «Exportar mi trabajo»: ``dpdeck.classroom.work``) y, para cada
estudiante, vuelve a ejecutar la comprobación de cada ejercicio que tocó con
el código que exportó, con Python nativo y en un proceso aparte
(``dpdeck.classroom.sandbox``). Nunca usa el veredicto que vio el navegador:
solo lo compara, y dice dónde no coincide. Escribe en la carpeta:

* ``clase.csv``: una fila por archivo: estudiante, cada ejercicio
  (``aprobado``, ``no aprobado``, ``sin intentar``, ``error``, ``tiempo agotado``),
  el reto y cada predicción (lo elegido y si acertó);
* ``resumen.md``: en español, por ejercicio, cuántos aprueban y los errores más
  comunes con las palabras de las comprobaciones; por predicción, qué eligió la
  clase; y, en una línea cada uno, los archivos que no se pudieron leer.

Un archivo cortado, de otro mazo o retocado después de exportarlo recibe su
línea y no detiene a los demás. El mazo de la clase es el que nombra la mayoría
de los archivos (``--mazo ID`` lo fija).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import csv
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..numbers import format_percent
from .sandbox import SandboxedChecks
from .work import Work, WorkError, checker_version, read_work

__all__ = ["GradedWork", "BadFile", "ClassReport", "grade_folder", "write_report", "main"]

TABLE_NAME = "clase.csv"
SUMMARY_NAME = "resumen.md"
PASSED, FAILED, NOT_TRIED, ERROR, TIMED_OUT = "aprobado", "no aprobado", "sin intentar", "error", "tiempo agotado"
CHALLENGE_ID = "reto-laboratorio"
# Mistakes listed per exercise in the summary.
COMMON_MISTAKES = 3
# A number inside a finding (1,02; 4 588 248; −7; 10⁻⁵): mistakes are counted by their wording without them.
NUMBER = re.compile(r"[−-]?\d+(?:[ \u00a0\u202f]\d{3})*(?:[.,]\d+)?(?:[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?")
DEFAULT_SECONDS = 60.0


@dataclass
class GradedWork:
    """One file that could be read, with what the checks said here."""

    file: str
    work: Work
    results: dict[str, dict] = field(default_factory=dict)   # exercise id → TaskResult

    @property
    def student(self) -> str:
        return self.work.student.strip() or Path(self.file).stem

    def status(self, exercise: str) -> str:
        result = self.results.get(exercise)
        if result is None:
            return NOT_TRIED
        if result["passed"] is None:
            return TIMED_OUT if result["problem"].startswith("tiempo agotado") else ERROR
        return PASSED if result["passed"] else FAILED


@dataclass(frozen=True)
class BadFile:
    file: str
    reason: str


@dataclass
class ClassReport:
    """What the class did: the deck, the files graded, the bad ones, and the order of exercises and predictions."""

    deck_id: str
    deck_title: str
    checkers: str
    graded: list[GradedWork]
    bad: list[BadFile]
    exercises: list[str]
    predictions: list[str]
    answers: dict[str, str]
    decks: list[str] = field(default_factory=list)   # every deck the readable files name


def grade_folder(folder: Path, *, deck_id: str | None = None, seconds: float = DEFAULT_SECONDS,
                 jobs: int | None = None, on_file=None) -> ClassReport:
    """Read every ``*.json`` of ``folder`` and check every exercise again (see the module)."""
    folder = Path(folder)
    files = sorted(path for path in folder.glob("*.json") if not path.name.startswith("."))
    readable: list[tuple[Path, Work]] = []
    bad: list[BadFile] = []
    for path in files:
        try:
            readable.append((path, read_work(path)))
        except WorkError as error:
            bad.append(BadFile(path.name, str(error)))
    decks = sorted({work.deck_id for _, work in readable})
    class_deck = deck_id or _most_common(sorted(work.deck_id for _, work in readable))
    title = next((work.deck_title for _, work in readable if work.deck_id == class_deck), class_deck or "")
    graded: list[GradedWork] = []
    for path, work in readable:
        if work.deck_id != class_deck:
            bad.append(BadFile(path.name, f"es de otro mazo («{work.deck_title}», {work.deck_id}), "
                                          f"no de «{title}»"))
        else:
            graded.append(GradedWork(path.name, work))
    checks = SandboxedChecks(seconds=seconds)
    workers = max(1, jobs or min(4, os.cpu_count() or 1))
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_grade_one, checks, item): item for item in graded}
        for future in concurrent.futures.as_completed(futures):
            item = futures[future]
            try:
                future.result()
            except Exception as error:   # noqa: BLE001 — one file's failure never stops the class
                item.results = {exercise: {"id": exercise, "passed": None, "failures": [],
                                           "problem": f"no se pudo corregir: {error}"}
                                for exercise in _tried(item.work)}
            if on_file is not None:
                on_file(item)
    bad.sort(key=lambda entry: entry.file)
    exercises = _ordered(key for item in graded for key in item.work.exercises)
    if any(item.work.challenge for item in graded):
        exercises.append(CHALLENGE_ID)
    predictions = _ordered(key for item in graded for key in item.work.predictions)
    answers = {cell: _most_common(str(item.work.predictions[cell].get("answer", "")) for item in graded
                                  if cell in item.work.predictions) for cell in predictions}
    return ClassReport(class_deck or "", title, checker_version(), graded, bad, exercises, predictions, answers,
                       decks)


def _tried(work: Work) -> list[str]:
    tried = [exercise for exercise, entry in work.exercises.items() if entry.get("edited")]
    return tried + ([CHALLENGE_ID] if work.challenge else [])


def _grade_one(checks: SandboxedChecks, item: GradedWork) -> None:
    from dpdeck.exercises import CHECKS

    tasks, unknown = [], {}
    for exercise, entry in item.work.exercises.items():
        if not entry.get("edited"):
            continue
        if entry["check"] not in CHECKS or entry["check"] == CHALLENGE_ID:
            unknown[exercise] = {"id": exercise, "passed": None, "failures": [],
                                 "problem": f"pide la comprobación «{entry['check']}», que este dpdeck no tiene"}
            continue
        tasks.append({"id": exercise, "check": entry["check"], "source": entry["source"]})
    challenge = item.work.challenge
    if challenge:
        tasks.append({"id": CHALLENGE_ID, "check": CHALLENGE_ID, "seed": challenge.get("seed", 0),
                      "extension": challenge.get("extension")})
    results = checks.run(tasks) if tasks else []
    item.results = {**unknown, **{result["id"]: result for result in results}}


def _most_common(values) -> str | None:
    counted = Counter(value for value in values if value)
    return counted.most_common(1)[0][0] if counted else None


def _ordered(keys) -> list[str]:
    return list(dict.fromkeys(keys))


# ------------------------------------------------------------------ outputs


def browser_disagrees(item: GradedWork, exercise: str) -> bool:
    """The browser recorded a pass that the check here does not give (or the reverse)."""
    entry = item.work.exercises.get(exercise) or {}
    recorded = entry.get("browserVerdict")
    if not isinstance(recorded, dict) or not isinstance(recorded.get("passed"), bool):
        return False
    status = item.status(exercise)
    return status in (PASSED, FAILED) and recorded["passed"] != (status == PASSED)


def table_rows(report: ClassReport) -> list[list[str]]:
    header = ["archivo", "estudiante", "exportado", "comprobaciones"]
    header += report.exercises + ["aprobados"]
    header += [f"predicción {cell}" for cell in report.predictions] + ["predicciones acertadas", "no coincide con el navegador"]
    rows = [header]
    for item in sorted(report.graded, key=lambda graded: (graded.student.casefold(), graded.file)):
        statuses = [item.status(exercise) for exercise in report.exercises]
        choices, right = [], 0
        for cell in report.predictions:
            chosen = item.work.predictions.get(cell, {}).get("choice")
            if chosen is None:
                choices.append("")
                continue
            hit = chosen == report.answers.get(cell)
            right += hit
            choices.append(f"{chosen} {'✓' if hit else '✗'}")
        differs = [exercise for exercise in report.exercises if browser_disagrees(item, exercise)]
        checkers = "las mismas" if item.work.checkers == report.checkers else f"otras ({item.work.checkers})"
        rows.append([item.file, item.student, item.work.exported_at, checkers, *statuses,
                     str(statuses.count(PASSED)), *choices, str(right), " ".join(differs)])
    return rows


def mistake_key(text: str) -> str:
    """A finding's wording without its numbers: the same mistake with other values counts once."""
    return NUMBER.sub("…", text)


def summary_text(report: ClassReport) -> str:
    lines = [f"# Corrección de «{report.deck_title}»", ""]
    total = len(report.graded)
    lines.append(f"{total} {'trabajo corregido' if total == 1 else 'trabajos corregidos'} aquí, con Python nativo "
                 f"(comprobaciones {report.checkers}); los veredictos que vio cada navegador no cuentan.")
    if len(report.decks) > 1:
        lines += ["", f"La carpeta mezcla mazos ({', '.join(report.decks)}): se corrige «{report.deck_id}», el de la "
                      "mayoría; `--mazo ID` elige otro."]
    if report.bad:
        lines += ["", f"## Archivos que no se pudieron corregir ({len(report.bad)})", ""]
        lines += [f"- `{entry.file}`: {entry.reason}." for entry in report.bad]
    for exercise in report.exercises:
        statuses = Counter(item.status(exercise) for item in report.graded)
        tried = total - statuses[NOT_TRIED]
        lines += ["", f"## {exercise}", ""]
        lines.append(f"{statuses[PASSED]} de {tried} {'lo aprueba' if statuses[PASSED] == 1 else 'lo aprueban'}"
                     + (f" ({format_percent(statuses[PASSED] / tried)})" if tried else "")
                     + f"; {statuses[NOT_TRIED]} sin intentar.")
        if statuses[ERROR] or statuses[TIMED_OUT]:
            lines.append(f"{statuses[ERROR]} con la celda en error y {statuses[TIMED_OUT]} con el tiempo agotado.")
        mistakes: Counter = Counter()
        example: dict[str, str] = {}
        for item in report.graded:
            result = item.results.get(exercise)
            if not result:
                continue
            texts = result["failures"] or ([result["problem"]] if result["problem"] else [])
            for key in {mistake_key(text) for text in texts}:
                mistakes[key] += 1
            for text in texts:
                example.setdefault(mistake_key(text), text)
        if mistakes:
            lines += ["", "Los errores más comunes, como los dice la comprobación:", ""]
            for key, count in mistakes.most_common(COMMON_MISTAKES):
                lines.append(f"- {count} {'estudiante' if count == 1 else 'estudiantes'}: {example[key]}")
        differs = [item.student for item in report.graded if browser_disagrees(item, exercise)]
        if differs:
            lines += ["", f"El navegador de {', '.join(differs)} había dicho otra cosa: cuenta la de aquí."]
    for cell in report.predictions:
        chosen = Counter(item.work.predictions[cell].get("choice") for item in report.graded
                         if cell in item.work.predictions)
        answered = sum(chosen.values())
        answer = report.answers.get(cell)
        lines += ["", f"## Predicción · {cell}", ""]
        lines.append(f"{chosen[answer]} de {answered} {'acertó' if chosen[answer] == 1 else 'acertaron'} "
                     f"(la celda imprime `{answer}`).")
        for choice, count in chosen.most_common():
            lines.append(f"- `{choice}`: {count}")
    return "\n".join(lines) + "\n"


def write_report(report: ClassReport, out: Path) -> tuple[Path, Path]:
    """clase.csv and resumen.md in `out`; returns their paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    table = out / TABLE_NAME
    with table.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(table_rows(report))
    summary = out / SUMMARY_NAME
    summary.write_text(summary_text(report), encoding="utf-8")
    return table, summary


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m dpdeck.grade",
        description="Corrige los trabajos que exportaron los estudiantes («Exportar mi trabajo»): vuelve a "
                    "comprobar cada ejercicio con su código y escribe clase.csv y resumen.md.")
    parser.add_argument("carpeta", type=Path, help="la carpeta con los .json de la clase")
    parser.add_argument("--salida", type=Path, help="dónde escribir clase.csv y resumen.md (por defecto, la carpeta)")
    parser.add_argument("--mazo", help="el id del mazo de la clase (por defecto, el de la mayoría de los archivos)")
    parser.add_argument("--segundos", type=float, default=DEFAULT_SECONDS,
                        help=f"tiempo de cada comprobación (por defecto {DEFAULT_SECONDS:g})")
    parser.add_argument("--procesos", type=int, help="trabajos corregidos a la vez (por defecto, hasta 4)")
    arguments = parser.parse_args(argv)
    if not arguments.carpeta.is_dir():
        parser.error(f"{arguments.carpeta} no es una carpeta")
    if arguments.segundos <= 0:
        parser.error(f"--segundos {arguments.segundos:g}: tiene que ser mayor que 0")
    report = grade_folder(arguments.carpeta, deck_id=arguments.mazo, seconds=arguments.segundos,
                          jobs=arguments.procesos,
                          on_file=lambda item: print(f"  {item.file}: corregido", flush=True))
    for entry in report.bad:
        print(f"  {entry.file}: {entry.reason}", flush=True)
    if len(report.decks) > 1:
        print(f"  la carpeta mezcla mazos ({', '.join(report.decks)}): se corrige «{report.deck_id}» "
              "(--mazo ID elige otro)", flush=True)
    table, summary = write_report(report, arguments.salida or arguments.carpeta)
    print(f"{len(report.graded)} corregidos, {len(report.bad)} con problemas: {table} y {summary}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
