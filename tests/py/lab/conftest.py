"""Fixtures of the lab's tests: the lab at a seed, computed once per process."""

from __future__ import annotations

import functools

import pytest

from dpdeck import lab


@pytest.fixture(scope="session")
def lab_at():
    """``lab_at(seed)``: ``lab.run_lab(seed)``, computed once per seed and per process (read it, do not change it).

    The lab at seed 0 is the reference of most tests of test_lab.py and
    test_sabotage.py, and the seeds of the evidence test are the references of
    the command line's: each run is 0.4 s of a core. A test that checks that a
    second run gives the same JSON runs it again itself.
    """
    return functools.lru_cache(maxsize=None)(lambda seed: lab.run_lab(seed))
