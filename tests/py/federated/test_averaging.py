"""dpdeck.federated.averaging: FedAvg against an independent per-client loop and chapter 5's centralized descent."""

from __future__ import annotations

import numpy as np
import pytest

from dpdeck import federated as fed
from dpdeck import learning


# ------------------------------------------------------------------ FedAvg


def direct_client_update(theta, X, y, *, local_epochs, learning_rate):
    """One client's local training written the plain way, with learning.compute_gradients."""
    local = theta.copy()
    for _ in range(local_epochs):
        local = local - learning_rate * learning.compute_gradients(local, X, y).mean(axis=0)
    return local - theta


@pytest.mark.parametrize("local_epochs", [1, 3])
def test_client_updates_are_local_gradient_descent(task, hospitals, local_epochs):
    theta = learning.make_initial_theta()
    selected = [0, 5, 8, 15]
    updates, sizes = fed.train_clients(theta, task["X_train"], task["y_train"], hospitals, selected=selected,
                                       local_epochs=local_epochs)
    for row, client in enumerate(selected):
        rows = hospitals == client
        expected = direct_client_update(theta, task["X_train"][rows], task["y_train"][rows],
                                        local_epochs=local_epochs, learning_rate=learning.DEFAULT_LEARNING_RATE)
        np.testing.assert_allclose(updates[row], expected, rtol=1e-12, atol=1e-14)
        assert sizes[row] == rows.sum()


def test_weighted_average_is_the_sum_of_size_weighted_updates():
    updates = np.array([[1.0, 0.0], [0.0, 2.0], [3.0, 3.0]])
    np.testing.assert_allclose(fed.average_updates(updates, [1, 2, 7]), [2.2, 2.5])
    with pytest.raises(ValueError, match="sizes"):
        fed.average_updates(updates, [1, 2])


@pytest.mark.parametrize("split", ["iid", "hospitals"])
def test_fedavg_with_every_client_and_one_local_step_is_centralized_descent(task, hospitals, split):
    X, y = task["X_train"], task["y_train"]
    owner = hospitals if split == "hospitals" else fed.split_iid(len(y), clients=16, rng=np.random.default_rng(3))
    run = fed.train_federated(X, y, owner, rounds=25, client_fraction=1.0, local_epochs=1,
                              rng=np.random.default_rng(0))
    centralized = learning.train_logistic(X, y, iterations=25)
    np.testing.assert_allclose(run["theta"], centralized, rtol=0, atol=1e-12)


def test_the_equivalence_needs_the_size_weights(task, hospitals):
    # Unweighted averaging gives a 7-patient hospital the voice of a 1274-patient one.
    X, y = task["X_train"], task["y_train"]
    theta = learning.make_initial_theta()
    updates, _ = fed.train_clients(theta, X, y, hospitals, selected=np.arange(16), local_epochs=1)
    centralized_step = learning.train_logistic(X, y, iterations=1) - theta
    assert np.max(np.abs(updates.mean(axis=0) - centralized_step)) > 0.1


def test_fedavg_is_reproducible_and_reports_each_round(task, hospitals):
    arguments = dict(rounds=6, client_fraction=0.25, local_epochs=2, X_test=task["X_test"], y_test=task["y_test"])
    first = fed.train_federated(task["X_train"], task["y_train"], hospitals, rng=np.random.default_rng(4),
                                **arguments)
    again = fed.train_federated(task["X_train"], task["y_train"], hospitals, rng=np.random.default_rng(4),
                                **arguments)
    assert np.array_equal(first["theta"], again["theta"]) and first["accuracy"].shape == (6,)
    assert first["participants"] == 4 and first["clients"] == 16


def test_stopping_at_an_accuracy_counts_communication_rounds(task, hospitals):
    full = fed.train_federated(task["X_train"], task["y_train"], hospitals, rounds=15, client_fraction=1.0,
                               local_epochs=1, rng=np.random.default_rng(0), X_test=task["X_test"],
                               y_test=task["y_test"])
    target = task["nonprivate"] - 0.005
    reached = fed.rounds_to_reach(full["accuracy"], target)
    stopped = fed.train_federated(task["X_train"], task["y_train"], hospitals, rounds=15, client_fraction=1.0,
                                  local_epochs=1, rng=np.random.default_rng(0), X_test=task["X_test"],
                                  y_test=task["y_test"], stop_accuracy=target)
    assert reached is not None and stopped["accuracy"].shape == (reached,)
    assert fed.rounds_to_reach([0.5, 0.6], 0.9) is None


def test_local_epochs_save_rounds_only_with_iid_data(census):
    result = fed.compare_local_epochs(census, epochs_grid=[1, 2, 5, 10, 20], within=0.005, max_rounds=30,
                                      rng=np.random.default_rng(0))
    assert result["rounds_iid"] == [10, 5, 2, 1, 1]
    assert result["rounds_non_iid"] == [10, 14, 9, 9, 8]
    # The same seed with fewer epochs gives the same rounds: each E runs with the same client sequence.
    fewer = fed.compare_local_epochs(census, epochs_grid=[1, 2, 5, 10], within=0.005, max_rounds=30,
                                     rng=np.random.default_rng(0))
    assert fewer["rounds_non_iid"] == [10, 14, 9, 9]
    with pytest.raises(ValueError, match="target"):
        fed.compare_local_epochs(census, epochs_grid=[1], max_rounds=3, rng=np.random.default_rng(0))
