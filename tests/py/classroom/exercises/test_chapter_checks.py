"""Tests of the chapters' checks (dpdeck.classroom.exercises) beyond the bank of answers: seeds, remarks, format.

Which answers pass and which fail, and why, is answer_bank.py's job
(test_answer_bank.py). Here: the statistical checks keep their false-alarm
rate and their power at other seeds, a check without its function says so,
the remarks that do not fail an answer, and the verdicts' Spanish and numbers.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

from dpdeck.classroom.exercises import CHECKS, Verdict, check, toolkit

from answer_bank import BANK   # tests/py/classroom/exercises/answer_bank.py


def defined_by(source: str) -> dict:
    namespace: dict = {}
    exec(compile(source, "<celda>", "exec"), namespace)
    return namespace


def answer(name: str, label: str) -> dict:
    """What the bank's answer ``label`` for the check ``name`` defines."""
    sources = {item[0]: item[1] for kind in ("right", "wrong") for item in BANK[name][kind]}
    return defined_by(sources[label])


def failing_texts(verdict: Verdict) -> str:
    return " ".join(finding.text for finding in verdict.findings if not finding.ok)


FUNCTIONS = {"laplace-escala": "mecanismo_laplace", "presupuesto": "publicar", "suma-recortada": "suma_privada",
             "recorte-por-persona": "recortar", "promedio-fedavg": "promediar", "mascaras-pares": "enmascarar"}


@pytest.mark.parametrize("name, function", FUNCTIONS.items())
def test_a_check_without_its_function_says_which(name, function):
    verdict = check(name, {"otra_cosa": len})
    assert not verdict.passed and f"No encuentro la función `{function}`" in failing_texts(verdict)
    verdict = check(name, {function: 3})
    assert not verdict.passed and "no es una función" in failing_texts(verdict)


STATISTICAL = [("laplace-escala", "la solución"), ("laplace-escala", "redondeada (posprocesamiento)"),
               ("presupuesto", "la solución"), ("presupuesto", "redondeada y sin negativos (posprocesamiento)"),
               ("suma-recortada", "la solución"), ("suma-recortada", "redondeada (posprocesamiento)")]
TRUNCATED = [("laplace-escala", "recortado a ±3b"), ("laplace-escala", "truncado a ±5b, volviendo a sortear"),
             ("presupuesto", "ruido recortado a ±3b"), ("suma-recortada", "ruido recortado a ±3b")]


@pytest.mark.parametrize("seed", range(12))
def test_the_statistical_checks_keep_their_false_alarm_and_their_power_whatever_the_seed(monkeypatch, seed):
    # Each measure fails a right answer with probability ≤ 10⁻⁶ (toolkit.FALSE_ALARM), rounded or not;
    # truncated noise is caught at every seed, not at a lucky one.
    monkeypatch.setattr(toolkit, "SEED", 1000 + 97 * seed)
    for name, label in STATISTICAL:
        assert check(name, answer(name, label)).passed, (name, label)
    for name, label in TRUNCATED:
        verdict = check(name, answer(name, label))
        assert not verdict.passed and "Recortas o truncas el ruido" in failing_texts(verdict), (name, label)


def test_spending_less_than_the_budget_passes_with_a_remark():
    verdict = check("presupuesto", answer("presupuesto", "gastando menos: ε/(k + 1) a cada uno"))
    assert verdict.passed and "más ruido del necesario" in str(verdict)
    assert "más ruido del necesario" not in str(check("presupuesto", answer("presupuesto", "la solución")))


def test_changing_what_the_function_receives_passes_with_a_remark():
    def clip_in_place(gradientes, *, C):
        normas = np.linalg.norm(gradientes, axis=1, keepdims=True)
        gradientes *= np.minimum(1.0, C / np.maximum(normas, 1e-12))
        return gradientes

    verdict = check("recorte-por-persona", {"recortar": clip_in_place})
    assert verdict.passed and "modifica el arreglo que recibe" in str(verdict)

    def average_in_place(actualizaciones, tamanos):
        actualizaciones *= (tamanos / tamanos.sum())[:, None]
        return actualizaciones.sum(axis=0)

    verdict = check("promedio-fedavg", {"promediar": average_in_place})
    assert verdict.passed and "modifica las actualizaciones" in str(verdict)


def test_verdicts_read_in_spanish_with_their_marks():
    verdict = check("laplace-escala", answer("laplace-escala", "ε/Δ al revés"))
    text = str(verdict)
    assert text.startswith("✗ Todavía no") and "  ✓ " in text and "  ✗ " in text
    assert repr(verdict) == text
    assert str(check("laplace-escala", answer("laplace-escala", "la solución"))).startswith("✓ ¡Correcto!")
    assert Verdict("x", ()).passed is False
    assert set(CHECKS) == set(BANK)


def test_verdicts_write_numbers_in_the_decks_format():
    # Decimal comma, grouped thousands, percent after a non-breaking space (dpdeck.numbers), in every
    # verdict the bank's wrong answers get.
    texts = " ".join(str(check(name, defined_by(source))) for name in ("laplace-escala", "presupuesto",
                                                                       "suma-recortada", "sigma-gaussiano")
                     for label, source, _ in BANK[name]["wrong"] if label != "devuelve texto")  # quotes '43.2'
    assert re.findall(r"\d\.\d", texts) == []
    assert re.findall(r"(?<![\d,])\d{5,}", texts) == []
    assert re.findall(r"\d ?%", texts) == [] and "\u00a0%" in texts
