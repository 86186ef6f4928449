"""dpdeck.federated.clients: who holds which rows (IID and one client per group), and who takes part in a round."""

from __future__ import annotations

import numpy as np
import pytest

from dpdeck import federated as fed


def test_iid_split_is_a_balanced_random_partition():
    owner = fed.split_iid(103, clients=10, rng=np.random.default_rng(1))
    sizes = np.bincount(owner)
    assert sizes.sum() == 103 and set(sizes) == {10, 11}
    again = fed.split_iid(103, clients=10, rng=np.random.default_rng(1))
    other = fed.split_iid(103, clients=10, rng=np.random.default_rng(2))
    assert np.array_equal(owner, again) and not np.array_equal(owner, other)


def test_group_split_gives_one_client_per_education_level(task, hospitals):
    education = np.rint(10 + 3 * task["X_train"][:, fed.EDUCATION_COLUMN])
    assert hospitals.max() + 1 == 16
    for client in range(16):
        assert np.unique(education[hospitals == client]).size == 1
    sizes = fed.count_examples(hospitals)
    assert sizes.sum() == 4000 and sizes.min() == 7 and sizes.max() == 1274


@pytest.mark.parametrize("fraction, expected", [(1.0, 16), (0.25, 4), (0.01, 1), (0.1, 2), (0.5, 8)])
def test_selection_takes_max_one_and_the_rounded_fraction(fraction, expected):
    chosen = fed.select_clients(16, fraction=fraction, rng=np.random.default_rng(0))
    assert chosen.size == expected and np.all(np.diff(chosen) > 0) and chosen.max() < 16


def test_bad_split_and_selection_parameters_are_named():
    with pytest.raises(ValueError, match="clients"):
        fed.split_iid(5, clients=6, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="client_fraction"):
        fed.select_clients(16, fraction=0.0, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="client_fraction"):
        fed.select_clients(16, fraction=1.5, rng=np.random.default_rng(0))
    with pytest.raises(ValueError, match="rng"):
        fed.split_iid(5, clients=2, rng=0)
    with pytest.raises(ValueError, match="el cliente 1 no tiene ninguna"):
        fed.count_examples([0, 2, 2])
