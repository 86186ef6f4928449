"""The package's rooms: one-way layers, noise sampled in one module, numbers written by one, figures only draw.

Read from the sources, so a shortcut (an ``rng.laplace`` in a query, a
hand-rolled ``f"{x:.1f}"`` in a figure, a library module that reaches into the
classroom runtime) fails here by name.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PY = Path(__file__).resolve().parents[2] / "py"
PACKAGE = PY / "dpdeck"
# The cell runner writes its counts with a thin space itself, without importing dpdeck.numbers.
MODULES = sorted(path for path in PACKAGE.rglob("*.py") if path.name != "cellerrors.py")


# Drawing random numbers for privacy is the job of dpdeck.mechanisms; dpdeck.data draws the
# synthetic census itself (no privacy involved).
SAMPLERS = frozenset({"laplace", "normal", "standard_normal", "exponential", "standard_exponential", "gumbel"})


def sampler_uses(source: str) -> list[str]:
    """The samplers a module's code reaches for (``rng.laplace(…)``, ``draw = rng.normal``), with their lines.

    Read from the syntax tree, not the text: a message that shows the student
    ``rng.laplace(valor, b)`` is a string, not a draw.
    """
    uses = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Attribute) and node.attr in SAMPLERS]
    return [f"{node.lineno}: .{node.attr}" for node in sorted(uses, key=lambda node: (node.lineno, node.col_offset))]


def module_name(path: Path, root: Path = PY) -> str:
    """py/dpdeck/federated/averaging.py → "dpdeck.federated.averaging"; a package's __init__ is the package."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def short_id(path: Path) -> str:
    return path.relative_to(PACKAGE).as_posix()


# The layers, lowest first; a module imports only from its own layer or a lower one. Every
# module of the package must be in one: a new module is placed here on purpose.
LAYERS = {
    # pure formulas: no randomness, no I/O
    "dpdeck": 0, "dpdeck._checks": 0, "dpdeck.numbers": 0, "dpdeck.accounting": 0, "dpdeck.audits": 0,
    "dpdeck.renyi": 0, "dpdeck.figure_descriptions": 0,
    # mechanisms and data: every random function takes rng
    "dpdeck.mechanisms": 1, "dpdeck.data": 1, "dpdeck.attacks": 1,
    # what the lecture builds on them, and the figures that draw results
    "dpdeck.queries": 2, "dpdeck.learning": 2, "dpdeck.federated": 2,
    "dpdeck.figure_style": 2, "dpdeck.figures": 2, "dpdeck.figures_federated": 2,
    # the class's experiments and its reproducible lab
    "dpdeck.experiments": 3, "dpdeck.lab": 3,
    # the classroom runtime: runs and checks the cells (the browser's glue talks to it)
    "dpdeck.classroom": 4, "dpdeck.exercises": 4, "dpdeck.grade": 4,
}
# dpdeck.exercises: the notebooks' name for the checks; dpdeck.grade: `python -m dpdeck.grade`.
CLASSROOM = ("dpdeck.classroom", "dpdeck.exercises", "dpdeck.grade")


def layer_of(name: str) -> int:
    """The layer of a module: its own entry, or its package's (dpdeck.federated.averaging → dpdeck.federated)."""
    while name not in LAYERS:
        if "." not in name:
            raise KeyError(name)
        name = name.rpartition(".")[0]
    return LAYERS[name]


def imported_names(path: Path, root: Path = PY) -> set[str]:
    """Absolute names of what a module imports, anywhere in it (relative imports resolved)."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module
            found.add(module)
            # `from . import mechanisms` imports a module; `from .x import f` a name of one.
            if node.module is None:
                found.update(f"{module}.{alias.name}" for alias in node.names)
    return found


ALL_MODULES = sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", ALL_MODULES, ids=short_id)
def test_imports_go_one_way_down_the_layers(path):
    own = layer_of(module_name(path))
    upward = sorted(name for name in imported_names(path)
                    if name.startswith("dpdeck") and layer_of(name) > own)
    assert upward == [], f"{module_name(path)} (capa {own}) importa de una capa superior: {upward}"


@pytest.mark.parametrize("path", ALL_MODULES, ids=short_id)
def test_the_library_never_imports_the_classroom_runtime(path):
    name = module_name(path)
    if name.startswith(CLASSROOM):
        return
    assert sorted(imported for imported in imported_names(path) if imported.startswith(CLASSROOM)) == []


def test_the_layer_check_sees_an_upward_import(tmp_path):
    # The checks above can fail: a figure module that imports the cell runner is caught.
    wrong = tmp_path / "py" / "dpdeck" / "figures.py"
    wrong.parent.mkdir(parents=True)
    wrong.write_text("from .classroom.cellrun import FIGURE_DPI\n", encoding="utf-8")
    imported = imported_names(wrong, tmp_path / "py")
    assert "dpdeck.classroom.cellrun" in imported and layer_of("dpdeck.classroom.cellrun") > layer_of("dpdeck.figures")


@pytest.mark.parametrize("path", sorted(PY.rglob("*.py")), ids=lambda path: path.relative_to(PY).as_posix())
def test_nothing_in_py_imports_the_browser(path):
    roots = {name.split(".")[0] for name in imported_names(path)}
    assert roots.isdisjoint({"js", "pyodide"}), path


@pytest.mark.parametrize("path", MODULES, ids=short_id)
def test_only_mechanisms_samples_noise(path):
    if path.name in ("mechanisms.py", "data.py"):
        return
    assert sampler_uses(path.read_text(encoding="utf-8")) == []


def test_the_sampler_check_sees_a_draw_and_not_a_message():
    # The check above can fail: a draw, called or kept for later, is caught; a message quoting one is not.
    source = ('noise = rng.laplace(0.0, b, size=n)\n'
              'draw = rng.normal\n'
              'hint = "¿Centras el ruido en el valor, `rng.laplace(valor, b)`?"  # rng.gumbel(0, 1)\n')
    assert sampler_uses(source) == ["1: .laplace", "2: .normal"]


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
    names = ["experiments.py", "accounting.py", "queries.py", "learning.py",
             *(path.relative_to(PACKAGE).as_posix() for path in (PACKAGE / "lab").glob("*.py"))]
    for name in names:
        tree = ast.parse((PACKAGE / name).read_text(encoding="utf-8"))
        top = [node for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))]
        assert not any("matplotlib" in ast.dump(node) or "figures" in ast.dump(node) for node in top), name


@pytest.mark.parametrize("path", MODULES, ids=short_id)
def test_nobody_hand_rolls_the_number_format(path):
    # Digit grouping is written in dpdeck.numbers only (figures only swap matplotlib's point for a comma).
    if path.name == "numbers.py":
        return
    source = path.read_text(encoding="utf-8")
    assert "_group_digits" not in source and "format_thousands" not in source
    assert re.findall(r"\{[^{}\s\"]*:[^{}\s\"]*,\}", source) == []   # f"{n:,}"
