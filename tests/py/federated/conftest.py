"""Fixtures of the federated chapter's tests: the census, chapter 5's split and the 16 hospitals.

Each property of dpdeck.federated is checked against an independent
computation (the centralized descent of dpdeck.learning, a per-client loop,
closed forms, dp-accounting); tests/py/lab shows every evidence item of the
chapter's lab turn false when the implementation is broken on purpose.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpdeck import federated as fed
from dpdeck.data import load_census


@pytest.fixture(scope="module")
def census():
    return load_census()


@pytest.fixture(scope="module")
def task(census):
    """The chapter 5 split (seed 0): 4000 training rows, 1000 test rows."""
    return fed.split_census_task(census, rng=np.random.default_rng(0))


@pytest.fixture(scope="module")
def hospitals(task):
    return fed.split_by_group(task["X_train"][:, fed.EDUCATION_COLUMN])

