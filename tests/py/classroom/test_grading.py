"""Pruebas de dpdeck.classroom.grading y dpdeck.classroom.sandbox: la corrección de una clase.

A folder as a lecturer collects it: two students' exported work, one right and
one with the typical mistake of the Laplace exercise (ε/Δf instead of Δf/ε),
and files that must each get one line of reason without stopping the others:
cut short, edited after export, another deck's, not JSON at all, empty. The
checks run again here, in child processes: a verdict the browser recorded is
never what counts (a student whose browser said «passed» for wrong code is
listed). Student code that reaches for the network, other programs or files
outside its folder is refused, and one that never ends gets its time limit.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dpdeck.classroom import grading, sandbox
from dpdeck.numbers import format_percent
from dpdeck.classroom.protocol import WORK_FORMAT, WORK_VERSION
from dpdeck.classroom.work import checker_version, work_digest

RIGHT = """def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):
    return valor + rng.laplace(0.0, sensibilidad / epsilon)
"""
# The typical mistake: ε/Δf instead of Δf/ε.
INVERTED = """def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):
    return valor + rng.laplace(0.0, epsilon / sensibilidad)
"""
STARTER = "def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):\n    return valor\n"


def make_work(student: str, source: str, *, edited=True, browser_passed=None, deck_id="privacidad-diferencial",
              choice="2", challenge=None) -> dict:
    document = {
        "format": WORK_FORMAT, "version": WORK_VERSION,
        "deck": {"id": deck_id, "title": "Privacidad Diferencial" if deck_id == "privacidad-diferencial" else "Otro"},
        "checkers": checker_version(), "student": student, "exportedAt": "2026-12-06T10:00:00.000Z",
        "edits": {"laplace-hospital": "print(1)\n"},
        "exercises": {"ejercicio-laplace": {
            "check": "laplace-escala", "source": source, "edited": edited,
            "browserVerdict": None if browser_passed is None else {"passed": browser_passed, "at": "t"}}},
        "challenge": challenge,
        "predictions": {"laplace-hospital": {"choice": choice, "answer": "2"}},
    }
    document["sha256"] = work_digest(document)
    return document


def write(folder: Path, name: str, document: dict) -> None:
    (folder / name).write_text(json.dumps(document, ensure_ascii=False, indent=1), encoding="utf-8")


@pytest.fixture(scope="module")
def class_folder(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("clase")
    write(folder, "ana.json", make_work("Ana", RIGHT, choice="2"))
    # Her browser says «passed»: the check here says otherwise, and that is what counts.
    write(folder, "beto.json", make_work("Beto", INVERTED, browser_passed=True, choice="0,5"))
    write(folder, "carla.json", make_work("", STARTER, edited=False, choice="0,25"))
    text = json.dumps(make_work("Dora", RIGHT), indent=1)
    (folder / "cortado.json").write_text(text[: len(text) // 2], encoding="utf-8")
    tampered = make_work("Eva", INVERTED)
    tampered["exercises"]["ejercicio-laplace"]["source"] = RIGHT
    write(folder, "retocado.json", tampered)
    write(folder, "otro-mazo.json", make_work("Fede", RIGHT, deck_id="otro-mazo"))
    (folder / "notas.json").write_text("esto no es JSON", encoding="utf-8")
    (folder / "vacio.json").write_text("", encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def report(class_folder) -> grading.ClassReport:
    return grading.grade_folder(class_folder, seconds=60, jobs=2)


def test_every_bad_file_gets_one_line_and_the_others_are_graded(report):
    reasons = {entry.file: entry.reason for entry in report.bad}
    assert sorted(reasons) == ["cortado.json", "notas.json", "otro-mazo.json", "retocado.json", "vacio.json"]
    assert "cortado" in reasons["cortado.json"]
    assert "se modificó después de exportarlo" in reasons["retocado.json"]
    assert "otro mazo" in reasons["otro-mazo.json"] and "Privacidad Diferencial" in reasons["otro-mazo.json"]
    assert all("\n" not in reason for reason in reasons.values())
    assert sorted(item.file for item in report.graded) == ["ana.json", "beto.json", "carla.json"]


def test_the_checks_run_again_and_the_browsers_verdict_does_not_count(report):
    status = {item.student: item.status("ejercicio-laplace") for item in report.graded}
    assert status == {"Ana": grading.PASSED, "Beto": grading.FAILED, "carla": grading.NOT_TRIED}
    beto = next(item for item in report.graded if item.student == "Beto")
    assert grading.browser_disagrees(beto, "ejercicio-laplace")
    # The checks run again natively: their failure names Beto's mistake, the scale upside down.
    assert any("pero debería ser 2. Parece ε/Δf" in text for text in beto.results["ejercicio-laplace"]["failures"])


def test_the_class_table_has_a_row_per_student(report, tmp_path):
    table, summary = grading.write_report(report, tmp_path)
    rows = list(csv.DictReader(table.open(encoding="utf-8")))
    assert [row["estudiante"] for row in rows] == ["Ana", "Beto", "carla"]
    assert [row["ejercicio-laplace"] for row in rows] == ["aprobado", "no aprobado", "sin intentar"]
    assert [row["predicción laplace-hospital"] for row in rows] == ["2 ✓", "0,5 ✗", "0,25 ✗"]
    assert [row["no coincide con el navegador"] for row in rows] == ["", "ejercicio-laplace", ""]
    assert all(row["comprobaciones"] == "las mismas" for row in rows)


def test_the_summary_says_in_spanish_how_many_pass_and_the_common_mistakes(report, tmp_path):
    _, summary = grading.write_report(report, tmp_path)
    text = summary.read_text(encoding="utf-8")
    assert "## ejercicio-laplace" in text
    assert f"1 de 2 lo aprueba ({format_percent(0.5)}); 1 sin intentar." in text
    assert "- 1 estudiante: Con Δf = 1, ε = 0,5 la escala medida es" in text
    assert "El navegador de Beto había dicho otra cosa" in text
    assert "1 de 3 acertó (la celda imprime `2`)." in text
    assert "`retocado.json`: se modificó después de exportarlo" in text


def test_mistakes_are_counted_by_their_wording_not_their_numbers():
    one = "Con Δf = 1, ε = 0,5 la escala medida es 1,02, pero debería ser 2."
    other = "Con Δf = 1, ε = 0,5 la escala medida es 0,98, pero debería ser 2."
    assert grading.mistake_key(one) == grading.mistake_key(other)
    assert grading.mistake_key("suma 4 588 248 y 10⁻⁵") == "suma … y …"


def test_python_m_dpdeck_grade_writes_the_table_and_summary(class_folder, tmp_path):
    folder = tmp_path / "dos"
    folder.mkdir()
    for name in ("ana.json", "retocado.json"):
        (folder / name).write_bytes((class_folder / name).read_bytes())
    result = subprocess.run([sys.executable, "-m", "dpdeck.grade", str(folder)], capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, result.stderr
    assert "1 corregidos, 1 con problemas" in result.stdout
    assert "retocado.json: se modificó después de exportarlo" in result.stdout
    assert (folder / "clase.csv").is_file() and (folder / "resumen.md").is_file()
    result = subprocess.run([sys.executable, "-m", "dpdeck.grade", str(folder / "ana.json")], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 2 and "no es una carpeta" in result.stderr


# ----------------------------------------------------------- the fence


def test_student_code_cannot_reach_out_and_a_loop_gets_its_time_limit(tmp_path):
    outside = tmp_path / "fuera.txt"
    tasks = [
        {"id": "red", "check": "laplace-escala",
         "source": "import socket\nsocket.socket().connect(('127.0.0.1', 9))"},
        {"id": "programa", "check": "laplace-escala", "source": "import os\nos.system('true')"},
        {"id": "archivo", "check": "laplace-escala", "source": f"open({str(outside)!r}, 'w').write('x')"},
        {"id": "ctypes", "check": "laplace-escala", "source": "import ctypes\nctypes.CDLL(None)"},
        {"id": "bucle", "check": "laplace-escala", "source": "while True:\n    pass"},
        {"id": "despues", "check": "laplace-escala", "source": "x = 1\n"},
    ]
    results = {result["id"]: result for result in sandbox.SandboxedChecks(seconds=4).run(tasks)}
    assert not outside.exists()
    for name in ("red", "programa", "archivo", "ctypes"):
        assert results[name]["passed"] is None
        assert "Bloqueado en la corrección" in results[name]["problem"] or "conectarse" in results[name]["problem"], \
            results[name]
    assert results["bucle"]["problem"].startswith("tiempo agotado")
    # The task after the loop gets its verdict, from a fresh child.
    assert results["despues"]["passed"] is False
    assert "No encuentro la función `mecanismo_laplace`" in results["despues"]["failures"][0]


def test_the_labs_challenge_is_checked_with_its_seed():
    tasks = [
        {"id": "reto-laboratorio", "check": "reto-laboratorio", "seed": 0, "extension": {
            "assumption": "Los conteos del censo son de personas distintas.",
            "measurement": "La desviación medida fue 4,02 en los ataques con ruido.",
            "conclusion": "Con 4,02 de ruido la señal de 1 queda enterrada.",
            "limitation": "Solo vale si cada persona aparece una vez en la base."}},
    ]
    result, = sandbox.SandboxedChecks(seconds=300).run(tasks)
    assert result["problem"] is None
    assert result["passed"] is True
