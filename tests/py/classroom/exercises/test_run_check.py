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


def test_run_check_undoes_what_the_checked_code_changes_in_shared_modules():
    source = ("import numpy as np\n"
              "def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):\n"
              "    np.pi = 3\n"
              "    return valor + rng.laplace(0.0, sensibilidad / epsilon)\n")
    assert run_check(source, check="laplace-escala")["verdict"]["passed"]
    assert np.pi == math.pi


def test_an_unknown_exercise_is_named():
    with pytest.raises(ValueError, match="no hay un ejercicio «nada»"):
        check("nada", {})
    with pytest.raises(ValueError, match="no hay un ejercicio «nada»"):
        run_check("pass", check="nada")
