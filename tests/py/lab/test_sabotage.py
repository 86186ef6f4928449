"""Evidence that can fail: every fact of the lab falls under a broken implementation, at several seeds.

``sabotage.FACT_SABOTAGES`` names, for each evidence item, the broken
implementations that must make it false at every seed of ``sabotage.SEEDS``;
``sabotage.NAMED_SABOTAGES`` are the ways to break privacy that the evidence as
a whole must catch, with the facts that catch each. The table in
py/dpdeck/lab/README.md is written from both, and checked against them here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import sabotage as sabotages   # tests/py/lab/sabotage.py (pytest puts this folder on sys.path)

README = Path(__file__).resolve().parents[3] / "py" / "dpdeck" / "lab" / "README.md"

FACT_CASES = [(step, index, broken) for (step, index), broken_ones in sabotages.FACT_SABOTAGES.items()
              for broken in broken_ones]


@pytest.fixture(scope="session")
def holding(lab_at):
    """``holding(step, seed)``: every fact of one step holds at ``seed`` with the library as it is.

    Read from the lab at that seed: run_lab gives each step the stream ``sabotage.evidence_of`` gives it.
    """
    return lambda step, seed: all(item["holds"] for item in lab_at(seed)["evidence"] if item["result"] == step)


@pytest.fixture(scope="module")
def result(lab_at):
    return lab_at(0)


def test_every_evidence_item_has_a_sabotage(result):
    positions: dict = {}
    items = []
    for item in result["evidence"]:
        index = positions.setdefault(item["result"], 0)
        positions[item["result"]] += 1
        items.append((item["result"], index))
    assert sorted(items) == sorted(sabotages.FACT_SABOTAGES)


def test_the_readme_table_is_the_registry(result):
    text = README.read_text(encoding="utf-8")
    assert text.endswith(sabotages.evidence_table(result)), "python tests/py/lab/sabotage.py da la tabla al día"


# Under some sabotages a measurement divides by zero or overflows on its way to being false.
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::dpdeck.accounting.RdpGridWarning")
@pytest.mark.parametrize("step, index, broken", FACT_CASES,
                         ids=[f"{step}[{index}]-{broken.__name__}" for step, index, broken in FACT_CASES])
def test_a_wrong_implementation_makes_its_fact_false(step, index, broken, holding):
    # Of the federated step, only the part that gives the fact: the same fact as in the whole step.
    parts = sabotages.parts_for([(step, index)])
    for seed in sabotages.SEEDS:
        assert holding(step, seed)
        assert (step, index) in sabotages.false_facts(broken, [step], seed, parts), f"semilla {seed}"


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.filterwarnings("ignore::dpdeck.accounting.RdpGridWarning")
@pytest.mark.parametrize("broken, steps, caught_by", sabotages.NAMED_SABOTAGES,
                         ids=[broken.__name__ for broken, _, _ in sabotages.NAMED_SABOTAGES])
def test_the_evidence_catches_each_way_to_break_privacy(broken, steps, caught_by):
    assert caught_by and {step for step, _ in caught_by} <= set(steps)
    for seed in sabotages.SEEDS:
        found = sabotages.false_facts(broken, steps, seed, sabotages.parts_for(caught_by))
        assert set(caught_by) <= set(found), f"{broken.what}, semilla {seed}: caen {found}"
