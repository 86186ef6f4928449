"""Tests of «Comprobar» (dpdeck.classroom.exercises.run_check): the cell runs, then its check, and what it prints is hidden."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdeck.classroom.exercises import check, run_check


# --------------------------------------------------------- run_check --


def test_run_check_runs_the_cell_and_checks_what_it_defined():
    source = ("def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):\n"
              "    return valor + rng.laplace(0.0, sensibilidad / epsilon)\n"
              "print('definida')\n")
    result = run_check(source, check="laplace-escala", cell_id="ej")
    assert result["status"] == "done"
    assert result["outputs"] == [{"type": "stream", "name": "stdout", "text": "definida\n"}]
    assert result["verdict"]["passed"] is True and result["verdict"]["exercise"] == "laplace-escala"
    assert all(set(finding) == {"ok", "text"} for finding in result["verdict"]["findings"])


def test_run_check_hides_what_the_checked_function_prints():
    source = ("def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):\n"
              "    print('llamada')\n"
              "    return valor + rng.laplace(0.0, sensibilidad / epsilon)\n")
    result = run_check(source, check="laplace-escala")
    assert result["outputs"] == [] and result["verdict"]["passed"]


def test_run_check_of_a_cell_that_raises_has_no_verdict():
    result = run_check("1 / 0", check="laplace-escala")
    assert result["status"] == "error" and result["verdict"] is None
    assert result["outputs"][-1]["type"] == "error"


def test_run_check_undoes_what_the_checked_code_changes_in_shared_modules_and_the_verdict_does_not_count():
    source = ("import numpy as np\n"
              "def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):\n"
              "    np.pi = 3\n"
              "    return valor + rng.laplace(0.0, sensibilidad / epsilon)\n")
    verdict = run_check(source, check="laplace-escala")["verdict"]
    assert verdict["passed"] is False
    assert "La comprobación no vale" in verdict["findings"][0]["text"] and "«numpy.pi»" in verdict["findings"][0]["text"]
    assert np.pi == math.pi


# ----------------------------------------------- a verdict a cell cannot forge --
#
# «Comprobar» runs in the student's browser, with the student's code: the
# verdict is a self-check, never a grade (the README says so). Still, nothing a
# cell can do through Python's own objects changes what a check concludes: the
# check runs with dpdeck, numpy and the builtins as they were imported, and a
# verdict during which the student's code changed them does not count.

WRONG = ("def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):\n"
         "    return valor + rng.laplace(0.0, 1.0)\n")
RIGHT = ("def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):\n"
         "    return valor + rng.laplace(0.0, sensibilidad / epsilon)\n")
# Each way to forge a «¡Correcto!», as a cell would try it.
FORGERIES = {
    # The registry changed in place in the same cell: every later check of it would pass.
    "registro": ("import dpdeck.exercises as e\n"
                 "e.CHECKS['laplace-escala'] = lambda ns: e.Verdict('laplace-escala', (e.Finding(True, 'Perfecto'),))\n"),
    "registro-reemplazado": ("import dpdeck.classroom.exercises as e\n"
                             "e.CHECKS = {'laplace-escala': lambda ns: None}\n"),
    # A class attribute: every verdict would say it passed.
    "veredicto-siempre-bien": "import dpdeck.exercises as e\ne.Verdict.passed = property(lambda self: True)\n",
    # A function's code swapped: the checker's own helper records nothing that failed.
    "codigo-cambiado": ("from dpdeck.classroom.exercises import toolkit\n"
                        "def nada(self, text, *, stop=False):\n    pass\n"
                        "toolkit._Findings.fail.__code__ = nada.__code__\n"),
    # A numpy function the check measures with: every scale would measure the expected 2.
    "numpy": "import numpy as np\nnp.abs = lambda values: values * 0 + 2.0\n",
}


@pytest.mark.parametrize("forgery", sorted(FORGERIES))
def test_a_cell_cannot_make_a_wrong_answer_pass_in_the_same_cell_or_after(forgery):
    verdict = run_check(FORGERIES[forgery] + WRONG, check="laplace-escala")["verdict"]
    assert verdict is not None and verdict["passed"] is False, verdict
    # Nor in a later cell, with the forgery gone from the code.
    assert run_check(WRONG, check="laplace-escala")["verdict"]["passed"] is False
    assert run_check(RIGHT, check="laplace-escala")["verdict"]["passed"] is True


def test_a_forgery_run_by_the_checked_function_itself_voids_the_verdict():
    source = ("def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):\n"
              "    import dpdeck.exercises as e\n"
              "    e.Verdict.passed = property(lambda self: True)\n"
              "    return valor + rng.laplace(0.0, 1.0)\n")
    verdict = run_check(source, check="laplace-escala")["verdict"]
    assert verdict["passed"] is False
    assert "La comprobación no vale" in verdict["findings"][0]["text"]
    assert "Verdict.passed" in verdict["findings"][0]["text"]
    assert run_check(RIGHT, check="laplace-escala")["verdict"]["passed"] is True


def test_what_a_cell_changes_inside_dpdeck_is_undone_for_the_next_cell():
    from dpdeck.classroom.cellrun import run_cell

    swapped = run_cell("import dpdeck.mechanisms as m\n"
                       "def f(*args, **kwargs):\n    return [100.0, 100.0, 100.0]\n"
                       "m.laplace_mechanism.__code__ = f.__code__\n"
                       "m.laplace_mechanism.__kwdefaults__ = {'rng': None}\n"
                       "import matplotlib.axes\nmatplotlib.axes.Axes.set_title = lambda self, *a, **k: None\n")
    assert swapped["status"] == "done"
    after = run_cell("import numpy as np\nfrom dpdeck.mechanisms import laplace_mechanism\n"
                     "print(laplace_mechanism(100, sensitivity=1, epsilon=1, rng=np.random.default_rng(0)))\n"
                     "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.set_title('t')\n"
                     "print(ax.get_title())\nplt.close(fig)\n")
    assert after["status"] == "done", after
    printed = after["outputs"][0]["text"].split()
    assert printed[0] != "[100.0," and float(printed[0]) != 100.0
    assert printed[-1] == "t"


def test_an_unknown_exercise_is_named():
    with pytest.raises(ValueError, match="no hay un ejercicio «nada»"):
        check("nada", {})
    with pytest.raises(ValueError, match="no hay un ejercicio «nada»"):
        run_check("pass", check="nada")
