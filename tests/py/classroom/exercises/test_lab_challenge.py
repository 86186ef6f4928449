"""Tests of the lab's challenge (dpdeck.classroom.exercises.lab_challenge): an extension must cite the lab it extends."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from dpdeck import lab
from dpdeck.classroom.exercises import Verdict, check, export_lab, lab_challenge


def failing_texts(verdict: Verdict) -> str:
    return " ".join(finding.text for finding in verdict.findings if not finding.ok)


# ------------------------------------------------------------- el reto --

GOOD_EXTENSION = {
    "assumption": "El ruido de Laplace esconde a Karen en el ataque diferencial.",
    "measurement": "La desviación estándar de la resta de las dos consultas fue {std}.",
    "conclusion": "Con ε = 0,5 por consulta, una señal de una persona queda bajo varias unidades de ruido.",
    "limitation": "Solo probé una semilla y un ε; con ε grande el ataque vuelve a funcionar.",
}


@pytest.fixture(scope="module")
def lab_zero():
    return lab.run_lab(0)


def cited_extension(lab_zero) -> dict:
    std = lab_zero["results"]["differencing_attack"]["noisy_difference_std"]
    from dpdeck.numbers import format_number
    return {**GOOD_EXTENSION, "measurement": GOOD_EXTENSION["measurement"].format(std=format_number(std, 2))}


def test_the_challenge_accepts_an_extension_that_cites_the_lab(lab_zero):
    verdict = check("reto-laboratorio", {"student_extension": cited_extension(lab_zero), "semilla": 0})
    assert verdict.passed, verdict


@pytest.mark.parametrize("change, says", [
    ({"measurement": "Medí la resta y el ruido la tapa."}, "citar un número que midió el laboratorio"),
    ({"measurement": "Con ε = 0,5 y 5000 personas, la resta no revela a Karen."}, "citar un número"),
    ({"conclusion": ""}, "Conclusión: falta"),
    ({"assumption": "Laplace"}, "Supuesto: demasiado corto"),
    ({"limitation": lab.LIMITATIONS[3]}, "ya está en la lista `limitations`"),
    ({"extra": "algo más que no es del reto"}, "Clave desconocida"),
])
def test_the_challenge_rejects_what_the_criterion_rejects(lab_zero, change, says):
    extension = {**cited_extension(lab_zero), **change}
    verdict = check("reto-laboratorio", {"student_extension": extension, "semilla": 0})
    assert not verdict.passed
    assert says in failing_texts(verdict)


def test_a_number_the_lab_printed_with_another_seed_is_not_a_citation(lab_zero):
    verdict = check("reto-laboratorio", {"student_extension": cited_extension(lab_zero), "semilla": 3})
    assert lab.run_lab(3)["results"]["differencing_attack"]["noisy_difference_std"] != \
        lab_zero["results"]["differencing_attack"]["noisy_difference_std"]
    assert not verdict.passed and "semilla 3" in failing_texts(verdict)


def test_the_challenge_cites_percentages_and_grouped_thousands():
    cited = lab_challenge._cited_numbers("acierta 62,2 % y 79 433 personas, 4,02 y 1221")
    assert cited == [(62.2, 1, True, 3), (79433.0, 0, False, 5), (4.02, 2, False, 3), (1221.0, 0, False, 4)]
    assert lab_challenge._cites_the_lab("sube al 91,1 %", ([0.911], set())) == (91.1, 1, True)
    assert lab_challenge._cites_the_lab("ε = 0,5 y 10 consultas", ([0.5, 10.0], set())) is None
    # A number as a fact writes it counts too: «12,5 %» of the trios, «e^ε ≈ 1,65».
    assert lab_challenge._cites_the_lab("en un 12,5 % de los tríos", ([0.126271], {(12.5, True)})) == (12.5, 1, True)
    assert lab_challenge._cites_the_lab("en un 12,5 de los tríos", ([0.126271], {(12.5, True)})) is None


def test_export_is_the_command_lines_json_plus_the_extension(lab_zero, tmp_path):
    extension = cited_extension(lab_zero)
    exported = export_lab(seed=0, extension=extension)
    assert exported["verdict"]["passed"] and exported["filename"] == "laboratorio-semilla-0.json"
    path = tmp_path / "extension.json"
    path.write_text(json.dumps(extension, ensure_ascii=False), encoding="utf-8")
    command = [sys.executable, "-m", "dpdeck.lab", "--seed", "0", "--extension", str(path)]
    printed = subprocess.run(command, capture_output=True, text=True, check=True).stdout
    assert exported["json"] == printed
    data = json.loads(printed)
    assert data["student_extension"] == {key: value.strip() for key, value in extension.items()}
    assert {key: value for key, value in data.items() if key != "student_extension"} == lab_zero


def test_export_without_a_valid_extension_gives_no_json():
    exported = export_lab(seed=0, extension={"assumption": "algo", "measurement": ""})
    assert exported["json"] is None and not exported["verdict"]["passed"]
    assert "Medición: falta" in " ".join(f["text"] for f in exported["verdict"]["findings"])
