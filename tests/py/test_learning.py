"""Tests of dpdeck.learning: logistic regression and noisy gradient descent on the census.

The three behaviours the lecture claims are pinned with seeded runs:

* ε ≥ 1: private accuracy within 2 points of the non-private model (the
  lecture's "casi nulo"); worst gap measured over 20 seeded splits: 1.1 points.
* ε ≤ 0.1: private accuracy equals the majority-class baseline within 1 point
  (worst over 20 splits: 0.64 points): the model stays at its public start.
* ε = 0.5 fixed: mean accuracy against T has its maximum strictly inside the
  grid 1…100 (T = 5 on 19 of 20 splits, 8 on one) and beats both ends by at
  least 2 points (worst over 20 splits: 5 points).

Each accuracy is a mean over 10 private runs on the same 1,000-person test set.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdeck import learning
from dpdeck.data import load_census
from dpdeck.learning import (
    accuracy,
    clip_gradients,
    compute_gradient_norms,
    compute_gradients,
    compute_noise_sigma,
    compute_step_size,
    iterations_curve,
    majority_baseline,
    make_dataset,
    make_features,
    make_initial_theta,
    noisy_gradient_descent,
    predict,
    privacy_utility_curve,
    sigmoid,
    train_logistic,
    train_test_split,
)

DELTA = 1e-5


@pytest.fixture(scope="module")
def dataset():
    return make_dataset(load_census())


@pytest.fixture(scope="module")
def split(dataset):
    X, y = dataset
    return train_test_split(X, y, rng=np.random.default_rng(0))


# ------------------------------------------------------------- features --


def test_features_use_fixed_public_constants(dataset):
    census = load_census()
    X, _ = dataset
    assert X.shape == (5000, 3)
    assert np.all(X[:, 0] == 1)
    np.testing.assert_allclose(X[:, 1], (census.age - 40) / 15)
    np.testing.assert_allclose(X[:, 2], (census.education_num - 10) / 3)
    # Not data-dependent: the features of a subset are the rows of the full matrix.
    few = census.where(census.age > 60)
    np.testing.assert_array_equal(make_features(few.age, few.education_num), X[census.age > 60])


def test_train_test_split_is_a_reproducible_partition(dataset):
    X, y = dataset
    first = train_test_split(X, y, test_fraction=0.2, rng=np.random.default_rng(5))
    second = train_test_split(X, y, test_fraction=0.2, rng=np.random.default_rng(5))
    X_train, X_test, y_train, y_test = first
    assert X_train.shape == (4000, 3) and X_test.shape == (1000, 3)
    assert y_train.shape == (4000,) and y_test.shape == (1000,)
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    rows = np.vstack([X_train, X_test])
    assert sorted(map(tuple, rows)) == sorted(map(tuple, X))


# --------------------------------------------------------------- model --


def test_sigmoid_is_the_logistic_function_and_stable():
    z = np.array([-800.0, -3.0, 0.0, 2.5, 800.0])
    expected = np.array([0.0, 1 / (1 + math.exp(3.0)), 0.5, 1 / (1 + math.exp(-2.5)), 1.0])
    np.testing.assert_allclose(sigmoid(z), expected, atol=1e-15)


def test_gradients_match_finite_differences_of_the_logistic_loss(split):
    X, _, y, _ = split
    theta = np.array([-1.0, 0.7, 1.3])

    def loss(t):
        z = X @ t
        return np.sum(np.logaddexp(0.0, z) - y * z)

    step = 1e-6
    numeric = np.array([(loss(theta + step * e) - loss(theta - step * e)) / (2 * step) for e in np.eye(3)])
    np.testing.assert_allclose(compute_gradients(theta, X, y).sum(axis=0), numeric, rtol=1e-6)
    norms = compute_gradient_norms(theta, X, y)
    np.testing.assert_allclose(norms, np.linalg.norm(compute_gradients(theta, X, y), axis=1))


def test_clipping_bounds_each_row_and_keeps_its_direction():
    rng = np.random.default_rng(1)
    gradients = rng.normal(0, 2, size=(500, 3))
    clipped = clip_gradients(gradients, clip_norm=1.0)
    norms = np.linalg.norm(gradients, axis=1)
    np.testing.assert_allclose(np.linalg.norm(clipped, axis=1), np.minimum(norms, 1.0))
    np.testing.assert_array_equal(clipped[norms <= 1], gradients[norms <= 1])
    cosine = np.sum(clipped * gradients, axis=1) / (np.linalg.norm(clipped, axis=1) * norms)
    np.testing.assert_allclose(cosine, 1.0)


def test_clipped_sum_has_l2_sensitivity_clip_norm(split):
    """Removing any one person moves the clipped gradient sum by at most C."""
    X, _, y, _ = split
    theta = make_initial_theta()
    clipped = clip_gradients(compute_gradients(theta, X, y), clip_norm=1.0)
    total = clipped.sum(axis=0)
    moved = np.linalg.norm(total - (total - clipped), axis=1)  # D minus person i, vectorised
    assert moved.max() <= 1.0 + 1e-12
    assert moved.max() > 0.99  # the bound is attained: someone is clipped


def test_nonprivate_model_learns_a_real_signal(split):
    X_train, X_test, y_train, y_test = split
    theta = train_logistic(X_train, y_train)
    # converged: the mean gradient vanishes
    assert np.linalg.norm(compute_gradients(theta, X_train, y_train).mean(axis=0)) < 1e-6
    assert theta[1] > 0 and theta[2] > 0  # older and more educated → more likely high income
    baseline = majority_baseline(y_test)
    assert 0.72 <= baseline <= 0.80
    assert accuracy(theta, X_test, y_test) >= baseline + 0.05


def test_the_nonprivate_model_is_the_plain_full_batch_descent(split):
    # Identical people are summed once (and their grouping kept for the next call on the same
    # table): the same model as the sum over every person, up to rounding, and a table changed
    # in place is grouped again.
    def every_person(X, y, iterations=50):
        theta = learning.make_initial_theta()
        for _ in range(iterations):
            theta = theta - learning.DEFAULT_LEARNING_RATE * (X.T @ (sigmoid(X @ theta) - y)) / len(y)
        return theta

    X_train, _, y_train, _ = split
    X, y = X_train.copy(), y_train.copy()
    before = train_logistic(X, y, iterations=50)
    np.testing.assert_allclose(before, every_person(X, y), rtol=1e-12, atol=1e-14)
    X[: len(y) // 2, 1] += 0.5  # the same arrays, other people
    after = train_logistic(X, y, iterations=50)
    np.testing.assert_allclose(after, every_person(X, y), rtol=1e-12, atol=1e-14)
    assert np.abs(after - before).max() > 1e-3


def test_initial_model_predicts_the_majority_class(split):
    _, X_test, _, y_test = split
    theta = make_initial_theta()
    assert theta[0] == pytest.approx(math.log(0.24 / 0.76))
    assert not predict(theta, X_test).any()
    assert accuracy(theta, X_test, y_test) == pytest.approx(majority_baseline(y_test))


def test_majority_baseline():
    assert majority_baseline([0, 0, 0, 1]) == 0.75
    assert majority_baseline([1, 1, 0]) == pytest.approx(2 / 3)


# ----------------------------------------------------- privacy calibration --


def test_noise_sigma_is_the_classic_gaussian_with_epsilon_and_delta_split_over_t():
    for epsilon, iterations, clip_norm in [(1.0, 10, 1.0), (0.5, 3, 2.0), (5.0, 10, 0.5)]:
        per_step_epsilon = epsilon / iterations
        expected = clip_norm * math.sqrt(2 * math.log(1.25 / (DELTA / iterations))) / per_step_epsilon
        got = compute_noise_sigma(epsilon=epsilon, delta=DELTA, iterations=iterations, clip_norm=clip_norm)
        assert got == pytest.approx(expected, rel=1e-12)


def test_noise_sigma_refuses_a_per_step_epsilon_of_one_or_more():
    with pytest.raises(ValueError, match="epsilon/iterations"):
        compute_noise_sigma(epsilon=10, delta=DELTA, iterations=10, clip_norm=1)
    compute_noise_sigma(epsilon=9.9, delta=DELTA, iterations=10, clip_norm=1)


def test_step_size_bounds_the_accumulated_noise():
    sigma, n, iterations, dimension = 500.0, 4000, 10, 3
    step = compute_step_size(sigma=sigma, n=n, iterations=iterations, dimension=dimension,
                             learning_rate=4.0, noise_radius=0.2)
    assert step == pytest.approx(0.2 * n / (sigma * math.sqrt(iterations * dimension)))
    # the noise that step leaves in θ after T steps has RMS norm r
    assert step * sigma * math.sqrt(iterations * dimension) / n == pytest.approx(0.2)
    assert compute_step_size(sigma=1.0, n=n, iterations=iterations, dimension=dimension,
                             learning_rate=4.0, noise_radius=0.2) == 4.0
    assert compute_step_size(sigma=0.0, n=n, iterations=1, dimension=3,
                             learning_rate=4.0, noise_radius=0.2) == 4.0


def test_noisy_descent_matches_a_direct_per_person_implementation(split):
    """Reference: a private count of n, explicit gradient matrix, explicit clipping, same random stream."""
    X, _, y, _ = split
    X, y = X[:300], y[:300]
    # Many people share a row (age, education, label): the descent sums each row once, times its count.
    assert len(np.unique(np.column_stack([X, y]), axis=0)) < 0.8 * len(y)
    epsilon, iterations, clip_norm = 2.0, 6, 0.8
    got = noisy_gradient_descent(X, y, epsilon=epsilon, delta=DELTA, iterations=iterations,
                                 clip_norm=clip_norm, rng=np.random.default_rng(11))
    epsilon_count, epsilon_steps = 0.05 * epsilon, 0.95 * epsilon
    sigma = clip_norm * math.sqrt(2 * math.log(1.25 * iterations / DELTA)) * iterations / epsilon_steps
    rng = np.random.default_rng(11)
    noisy_n = max(1.0, len(y) + rng.laplace(0.0, 1 / epsilon_count, size=1)[0])
    step = min(4.0, 0.2 * noisy_n / (sigma * math.sqrt(iterations * 3)))
    theta = make_initial_theta()
    for _ in range(iterations):
        per_person = np.array([(sigmoid(row @ theta) - label) * row for row, label in zip(X, y)])
        norms = np.sqrt(np.sum(per_person**2, axis=1))
        clipped = np.array([g * min(1.0, clip_norm / norm) for g, norm in zip(per_person, norms)])
        theta = theta - step * (clipped.sum(axis=0) + rng.normal(0.0, sigma, size=(1, 3))[0]) / noisy_n
    np.testing.assert_allclose(got, theta, rtol=1e-10, atol=1e-12)


def test_the_budget_is_split_between_the_count_and_the_steps():
    assert learning.split_budget(epsilon=1.0) == pytest.approx((0.05, 0.95))
    assert learning.split_budget(epsilon=2.0, count_share=0.25) == pytest.approx((0.5, 1.5))
    for bad in (0, 1, 1.5, -0.1):
        with pytest.raises(ValueError, match="count_share"):
            learning.split_budget(epsilon=1.0, count_share=bad)


def test_calibration_publishes_a_private_count_and_derives_sigma_and_step_from_it():
    kwargs = dict(epsilon=1.0, delta=DELTA, iterations=10, clip_norm=1.0)
    noisy_n, sigma, step = learning.calibrate_training((4000, 3), rng=np.random.default_rng(5), **kwargs)
    draw = np.random.default_rng(5).laplace(0.0, 1 / 0.05, size=1)[0]
    assert noisy_n == pytest.approx(4000 + draw)
    assert sigma == pytest.approx(compute_noise_sigma(epsilon=0.95, delta=DELTA, iterations=10, clip_norm=1.0))
    assert step == pytest.approx(min(4.0, 0.2 * noisy_n / (sigma * math.sqrt(30))))
    # Repeats: one independent count (and step) per run; a count below 1 is post-processed to 1.
    counts, _, steps = learning.calibrate_training((3, 3), rng=np.random.default_rng(5), repeats=400,
                                                   **kwargs)
    assert counts.shape == steps.shape == (400,) and counts.min() == 1.0 and len(set(counts)) > 100


def test_noisy_descent_records_its_releases_in_the_ledger(split):
    from dpdeck.accounting import PrivacyLedger

    X, _, y, _ = split
    ledger = PrivacyLedger()
    noisy_gradient_descent(X, y, epsilon=1.0, delta=DELTA, iterations=10, clip_norm=1.0,
                           rng=np.random.default_rng(0), ledger=ledger)
    count, steps = ledger.releases
    assert (count.mechanism, count.sensitivity, count.noise, count.count) == ("laplace", 1.0, 20.0, 1)
    assert (steps.mechanism, steps.sensitivity, steps.delta, steps.count) == ("gaussian", 1.0, DELTA / 10, 10)
    # ε of each step is deduced from the σ actually used: 0,95/10.
    assert steps.epsilon == pytest.approx(0.095, rel=1e-12)
    epsilon, delta = ledger.total()
    assert epsilon == pytest.approx(1.0, rel=1e-12) and delta == pytest.approx(DELTA, rel=1e-12)
    # Rényi DP accounts the same releases for much less.
    assert ledger.total(theorem="rdp", delta=DELTA)[0] < 0.5


def test_noisy_descent_is_reproducible_and_random(split):
    X, _, y, _ = split
    kwargs = dict(epsilon=1.0, delta=DELTA, iterations=10, clip_norm=1.0)
    first = noisy_gradient_descent(X, y, rng=np.random.default_rng(3), **kwargs)
    again = noisy_gradient_descent(X, y, rng=np.random.default_rng(3), **kwargs)
    other = noisy_gradient_descent(X, y, rng=np.random.default_rng(4), **kwargs)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other)


@pytest.mark.parametrize(
    "change, message",
    [
        ({"epsilon": 0}, "epsilon"),
        ({"epsilon": float("nan")}, "epsilon"),
        ({"delta": 1.0}, "delta"),
        ({"delta": 0}, "delta"),
        ({"iterations": 0}, "iterations"),
        ({"clip_norm": -1}, "clip_norm"),
        ({"rng": 3}, "rng"),
        ({"learning_rate": 0}, "learning_rate"),
        ({"noise_radius": float("inf")}, "noise_radius"),
    ],
)
def test_noisy_descent_rejects_bad_parameters_by_name(split, change, message):
    X, _, y, _ = split
    kwargs = dict(epsilon=1.0, delta=DELTA, iterations=10, clip_norm=1.0, rng=np.random.default_rng(0))
    kwargs.update(change)
    with pytest.raises(ValueError, match=message):
        noisy_gradient_descent(X, y, **kwargs)


def test_bad_data_is_rejected_with_a_spanish_message(split):
    X, _, y, _ = split
    kwargs = dict(epsilon=1.0, delta=DELTA, iterations=10, clip_norm=1.0, rng=np.random.default_rng(0))
    bad_X = X.copy()
    bad_X[5, 1] = np.nan
    with pytest.raises(ValueError, match="no finitos"):
        noisy_gradient_descent(bad_X, y, **kwargs)
    with pytest.raises(ValueError, match="solo 0 y 1"):
        noisy_gradient_descent(X, y * 2, **kwargs)
    with pytest.raises(ValueError, match="una etiqueta por fila"):
        noisy_gradient_descent(X, y[:-1], **kwargs)
    with pytest.raises(ValueError, match="vacío"):
        noisy_gradient_descent(X[:0], y[:0], **kwargs)
    with pytest.raises(TypeError):
        noisy_gradient_descent(X, y, 1.0, DELTA)  # privacy parameters are keyword-only


# ------------------------------------------------- the lecture's three claims --


@pytest.fixture(scope="module")
def utility_curves(dataset):
    X, y = dataset
    return [
        privacy_utility_curve(X, y, epsilons=[0.05, 0.1, 0.2, 1.0, 2.0, 5.0],
                              rng=np.random.default_rng(seed), repeats=10)
        for seed in (0, 1)
    ]


def test_curve_shapes_and_metadata(utility_curves):
    curve = utility_curves[0]
    assert curve["accuracies"].shape == (10, 6)
    np.testing.assert_allclose(curve["mean"], curve["accuracies"].mean(axis=0))
    assert curve["iterations"] == learning.DEFAULT_ITERATIONS
    assert curve["delta"] == DELTA


def test_large_epsilon_costs_what_the_notes_say(utility_curves):
    # The notes: with ε ≥ 2 the mean accuracy is within one point of the non-private model;
    # with ε ≈ 1, within one or two.
    for curve in utility_curves:
        for epsilon, mean in zip(curve["epsilons"], curve["mean"]):
            if epsilon >= 2:
                assert mean > curve["nonprivate"] - 0.01, (epsilon, mean, curve["nonprivate"])
            elif epsilon >= 1:
                assert mean > curve["nonprivate"] - 0.02, (epsilon, mean, curve["nonprivate"])


def test_small_epsilon_falls_to_the_majority_baseline(utility_curves):
    for curve in utility_curves:
        for epsilon, mean in zip(curve["epsilons"], curve["mean"]):
            if epsilon <= 0.1:
                assert abs(mean - curve["majority"]) <= 0.01, (epsilon, mean, curve["majority"])
        # and accuracy rises with the budget between the two regimes
        assert curve["mean"][2] < curve["mean"][3]


def test_accuracy_against_iterations_has_an_interior_optimum(dataset):
    X, y = dataset
    grid = [1, 2, 3, 5, 8, 12, 20, 35, 60, 100]
    for seed in (0, 1):
        curve = iterations_curve(X, y, epsilon=0.5, iterations_grid=grid,
                                 rng=np.random.default_rng(seed), repeats=10)
        mean = curve["mean"]
        best = int(np.argmax(mean))
        assert 0 < best < len(grid) - 1, mean
        assert curve["best_iterations"] == grid[best]
        assert mean[best] - mean[0] >= 0.02 and mean[best] - mean[-1] >= 0.02, mean


def test_iterations_curve_names_an_impossible_grid(dataset):
    X, y = dataset
    with pytest.raises(ValueError, match="epsilon/iterations"):
        iterations_curve(X, y, epsilon=2.0, iterations_grid=[1, 5], rng=np.random.default_rng(0), repeats=2)
