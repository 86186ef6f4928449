"""dpdeck.federated.leakage: one person's update gives their data back; a batch, or clipping and noise, does not."""

from __future__ import annotations

import numpy as np

from dpdeck import federated as fed
from dpdeck import learning, mechanisms
from dpdeck.data import KAREN_NAME


# ------------------------------------------------------- gradient leakage


def test_one_persons_update_reveals_their_features_and_label_exactly(census):
    X, y = learning.make_dataset(census)
    theta = learning.train_logistic(X, y)
    people = np.random.default_rng(5).choice(len(y), size=300, replace=False)
    for local_epochs in (1, 5):
        for person in people:
            update = fed.compute_device_update(theta, X[person], y[person], local_epochs=local_epochs)
            np.testing.assert_allclose(fed.reconstruct_features(update), X[person], rtol=0, atol=1e-9)
            assert fed.infer_high_income(update) == bool(y[person])
            decoded = fed.decode_features(fed.reconstruct_features(update))
            assert abs(decoded["age"] - census.age[person]) < 1e-9
            assert abs(decoded["education_num"] - census.education_num[person]) < 1e-9


def test_a_batch_update_reconstructs_a_weighted_mix_not_the_person(census):
    X, y = learning.make_dataset(census)
    theta = learning.train_logistic(X, y)
    rows = np.array([0, 1, 2, 3])
    update = fed.compute_device_update(theta, X[rows], y[rows])
    weights = learning.sigmoid(X[rows] @ theta) - y[rows]
    np.testing.assert_allclose(fed.reconstruct_features(update), weights @ X[rows] / weights.sum(), rtol=1e-10)


def test_clipping_plus_noise_defeats_the_reconstruction(census):
    # Bound: with z = 1 the noise on each coordinate has the size of the whole clipped update
    # (σ = S = 4), so the ratio (Δ₁ + n₁)/(Δ₀ + n₀) is dominated by a ratio of Gaussians, as wide as
    # a Cauchy variable: the median age error is over 10 years (≈ 18 here). With z → 0 the same
    # code recovers the age: the measurement sees the noise, not something else.
    leak = fed.measure_leakage(census, person=KAREN_NAME, batch_sizes=[1], noise_multiplier=1.0, trials=1000,
                               rng=np.random.default_rng(6))
    assert leak["alone_error"] < 1e-9 and leak["noisy_error"] > 10
    quiet = fed.measure_leakage(census, person=KAREN_NAME, batch_sizes=[1], noise_multiplier=1e-7, trials=50,
                                rng=np.random.default_rng(6))
    assert quiet["noisy_error"] < 1e-3


def test_privatized_update_is_clipped_then_noised_through_mechanisms(monkeypatch):
    update = np.array([3.0, 4.0, 0.0])
    calls = []

    def record(value, *, sigma, rng):
        calls.append(sigma)
        return value

    monkeypatch.setattr(mechanisms, "add_gaussian_noise", record)
    clipped = fed.privatize_update(update, clip_norm=1.0, noise_multiplier=2.5, rng=np.random.default_rng(0))
    np.testing.assert_allclose(clipped, [0.6, 0.8, 0.0])
    assert calls == [2.5]
