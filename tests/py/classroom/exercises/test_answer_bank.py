"""The bank of answers (answer_bank.py) against every exercise check: right ones pass, wrong ones fail for their reason.

Each check has at least 5 right answers written differently and at least 8
wrong ones, adversarial included; a wrong answer's ✗ findings must name its
actual mistake (the words the bank gives).
"""

from __future__ import annotations

import pytest

from dpdeck.classroom.exercises import CHECKS, check

from answer_bank import BANK   # tests/py/classroom/exercises/answer_bank.py

RIGHT = [(name, label, source) for name, answers in BANK.items() for label, source in answers["right"]]
WRONG = [(name, label, source, words) for name, answers in BANK.items()
         for label, source, words in answers["wrong"]]


def verdict_of(name: str, source: str):
    namespace: dict = {}
    exec(compile(source, f"<{name}>", "exec"), namespace)
    return check(name, namespace)


def failing_texts(verdict) -> str:
    return " ".join(finding.text for finding in verdict.findings if not finding.ok)


def test_every_check_has_its_bank():
    assert set(BANK) == set(CHECKS)
    for name, answers in BANK.items():
        assert len(answers["right"]) >= 5, name
        assert len(answers["wrong"]) >= 8, name


@pytest.mark.parametrize("name, label, source", RIGHT, ids=[f"{name}: {label}" for name, label, _ in RIGHT])
def test_a_right_answer_passes(name, label, source):
    verdict = verdict_of(name, source)
    assert verdict.passed, verdict


@pytest.mark.parametrize("name, label, source, words", WRONG, ids=[f"{name}: {label}" for name, label, _, _ in WRONG])
def test_a_wrong_answer_fails_and_says_why(name, label, source, words):
    verdict = verdict_of(name, source)
    assert not verdict.passed, verdict
    assert words in failing_texts(verdict), verdict
