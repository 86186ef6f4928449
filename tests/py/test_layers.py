"""The package's rooms: noise is sampled in one module, numbers are written by one, figures only draw.

Read from the sources, so a shortcut (an ``rng.laplace`` in a query, a
hand-rolled ``f"{x:.1f}"`` in a figure) fails here by name.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "py" / "dpdeck"
MODULES = sorted(path for path in PACKAGE.rglob("*.py") if path.name != "cellrun.py")

# Drawing random numbers for privacy is the job of dpdeck.mechanisms; dpdeck.data draws the
# synthetic census itself (no privacy involved).
SAMPLERS = re.compile(r"\.(laplace|normal|standard_normal|exponential|standard_exponential|gumbel)\(")


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_only_mechanisms_samples_noise(path):
    if path.name in ("mechanisms.py", "data.py"):
        return
    assert SAMPLERS.findall(path.read_text(encoding="utf-8")) == []


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names.add(("." * node.level) + (node.module or ""))
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return names


def test_numbers_is_pure():
    assert imported_modules(PACKAGE / "numbers.py") <= {"__future__", "math"}


def test_figures_import_no_experiment_and_no_data():
    imported = imported_modules(PACKAGE / "figures.py")
    assert not any(name.endswith(("experiments", "data", "queries", "learning", "lab")) for name in imported)


def test_experiments_and_the_lab_do_not_import_matplotlib_at_module_level():
    for name in ("experiments.py", "lab/__init__.py", "accounting.py", "queries.py", "learning.py"):
        tree = ast.parse((PACKAGE / name).read_text(encoding="utf-8"))
        top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert not any("matplotlib" in ast.dump(node) or "figures" in ast.dump(node) for node in top), name


@pytest.mark.parametrize("path", MODULES, ids=lambda path: path.name)
def test_nobody_hand_rolls_the_number_format(path):
    # Digit grouping is written in dpdeck.numbers only (figures only swap matplotlib's point for a comma).
    if path.name == "numbers.py":
        return
    source = path.read_text(encoding="utf-8")
    assert "_group_digits" not in source and "format_thousands" not in source
    assert re.findall(r"\{[^{}\s\"]*:[^{}\s\"]*,\}", source) == []   # f"{n:,}"
