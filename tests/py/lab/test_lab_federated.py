"""dpdeck.lab.federated: chapter 6 in the lab, with dpdeck.lab's contract.

The facts themselves are broken one by one in test_sabotage.py; here,
the chapter's shape: its parts, its reproducibility, the experiments it shares
with the slides, and the limitations it states.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpdeck import experiments, lab
from dpdeck.lab import federated as lab_federated
from dpdeck.data import load_census


@pytest.fixture(scope="module")
def census():
    return load_census()


@pytest.fixture(scope="module")
def chapter(census):
    return lab_federated.run_lab_chapter(census, np.random.default_rng(0))


def test_the_chapter_reports_every_part_and_all_its_facts_hold(chapter):
    results, evidence = chapter
    assert list(results) == [name for name, _ in lab_federated.PARTS]
    assert [name for name, _ in lab_federated.PARTS] == ["fedavg", "leakage", "secure_aggregation",
                                                         "private_aggregate"]
    assert len(evidence) == 18
    assert [item["fact"] for item in evidence if not item["holds"]] == []
    assert all(set(item) == {"result", "fact", "holds", "values"} and item["result"] == lab_federated.STEP
               and item["values"] for item in evidence)


def test_the_chapter_is_the_labs_last_step():
    assert lab.STEPS[-1] == (lab_federated.STEP, lab_federated.run_lab_chapter)


def test_the_chapter_is_reproducible_part_by_part(census, chapter):
    # Run again one part at a time (as the sabotage tests do): each part gets the generator it gets in
    # the whole chapter, so the same seed gives the same chapter, byte for byte.
    results, evidence = {}, []
    for name, _ in lab_federated.PARTS:
        part_results, part_evidence = lab_federated.run_lab_chapter(census, np.random.default_rng(0), parts=[name])
        assert list(part_results) == [name]
        results.update(part_results)
        evidence += part_evidence
    assert lab.format_lab(lab._plain((results, evidence))) == lab.format_lab(lab._plain(chapter))


def test_parts_must_be_the_chapters(census):
    with pytest.raises(ValueError, match="parts debe nombrar partes de"):
        lab_federated.run_lab_chapter(census, np.random.default_rng(0), parts=["fedavg", "federado"])


def test_the_lab_runs_the_slides_experiments(census, monkeypatch):
    # One definition per experiment: the lab's FedAvg splits, local epochs and protected units are the slides'.
    called = []
    for name in ("run_fedavg_rounds", "run_local_epochs", "run_privacy_units"):
        original = getattr(experiments, name)
        monkeypatch.setattr(experiments, name,
                            lambda *a, original=original, name=name, **kw: called.append(name) or original(*a, **kw))
    lab_federated.run_lab_chapter(census, np.random.default_rng(1))
    assert sorted(called) == ["run_fedavg_rounds", "run_local_epochs", "run_privacy_units"]


def test_limitations_say_what_the_chapter_is_not():
    text = " ".join(lab_federated.LAB_LIMITATIONS)
    for needle in ("sin criptografía", "sin acuerdo de claves", "honesto pero curioso", "Censo sintético",
                   "no datos de hospitales", "sin amplificación por submuestreo", "5 % de ε", "por cliente"):
        assert needle in text, needle
