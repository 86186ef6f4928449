"""dpdeck.federated.private_training: DP-FedAvg against the composition theorems, chapter 5's descent and dp-accounting."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdeck import federated as fed
from dpdeck import accounting, learning, mechanisms
from dpdeck.federated import averaging, private_training

DELTA = 1e-5


# ------------------------------------------------------- DP on the aggregate


@pytest.mark.parametrize("rounds", [10, 100, 1000])
def test_the_same_noise_over_more_rounds_costs_what_the_composition_theorems_say(rounds):
    # The table of the dp-rondas slide: z calibrated for 0,95 in 10 rounds, then T rounds of it.
    z = accounting.compute_noise_multiplier(epsilon=0.95, delta=DELTA, steps=10)
    spent = accounting.compare_gaussian_accountants(sigma=z, steps=rounds, delta=DELTA)
    # Sequential (Dwork and Roth 2014, Thm A.1 and 3.16): each round (√(2 ln(1.25T/δ))/z, δ/T)-DP.
    assert spent["sequential"] == pytest.approx(rounds * math.sqrt(2 * math.log(1.25 * rounds / DELTA)) / z,
                                                rel=1e-12)
    # Advanced (Thm 3.20), δ split half for δ' and half over the rounds.
    step = math.sqrt(2 * math.log(1.25 * rounds / (DELTA / 2))) / z
    advanced = step * math.sqrt(2 * rounds * math.log(2 / DELTA)) + rounds * step * math.expm1(step)
    assert spent["advanced"] == pytest.approx(advanced, rel=1e-12)
    # Rényi DP (Mironov 2017): ρ = T/(2z²), ε = ρ + 2√(ρ ln(1/δ)).
    rho = rounds / (2 * z**2)
    assert spent["rdp"] == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / DELTA)), rel=1e-12)
    if rounds == 10:
        assert spent["sequential"] == pytest.approx(0.95, rel=1e-12)
        assert spent["rdp"] < spent["sequential"] < spent["advanced"]


def test_calibration_counts_the_clients_privately_and_divides_by_the_expected_participants():
    ledger = accounting.PrivacyLedger()
    rng = np.random.default_rng(3)
    estimated, sigma, step = fed.calibrate_rounds(400, 3, epsilon=1.0, delta=DELTA, rounds=10, clip_norm=4.0,
                                                  rng=rng, client_fraction=0.25, ledger=ledger)
    again = np.random.default_rng(3)
    # K̂ = K + Lap(1/ε_K) with ε_K = 5 % of ε, drawn first, as chapter 5 draws n̂.
    expected = 400 + mechanisms.add_laplace_noise(0.0, scale=1 / 0.05, rng=again)
    assert estimated == pytest.approx(max(1.0, expected), rel=1e-12)
    assert sigma == pytest.approx(4.0 * accounting.compute_noise_multiplier(epsilon=0.95, delta=DELTA, steps=10),
                                  rel=1e-12)
    # The step sees only public numbers: the expected participants C·K̂, σ, T and d.
    assert step == pytest.approx(min(1.0, learning.DEFAULT_NOISE_RADIUS * 0.25 * estimated
                                     / (sigma * math.sqrt(10 * 3))), rel=1e-12)
    count, sums = ledger.releases
    assert (count.what, count.mechanism, count.epsilon) == ("conteo de clientes", "laplace", pytest.approx(0.05))
    assert (sums.mechanism, sums.sensitivity, sums.count) == ("gaussian", 4.0, 10)
    assert ledger.total() == pytest.approx((1.0, DELTA), rel=1e-12)


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_dp_fedavg_with_one_phone_per_person_is_chapter_5s_private_descent(task, epsilon):
    # The same random stream (n̂ first, then one noise draw per round), the same model, the same ledger.
    X, y = task["X_train"], task["y_train"]
    phones_ledger, central_ledger = accounting.PrivacyLedger(), accounting.PrivacyLedger()
    phones = fed.train_federated_privately(X, y, np.arange(len(y)), epsilon=epsilon, delta=DELTA, rounds=10,
                                           client_fraction=1.0, local_epochs=1, clip_norm=fed.DEFAULT_UPDATE_CLIP,
                                           rng=np.random.default_rng(9), ledger=phones_ledger)
    central = learning.noisy_gradient_descent(X, y, epsilon=epsilon, delta=DELTA, iterations=10, clip_norm=1.0,
                                              rng=np.random.default_rng(9), ledger=central_ledger)
    np.testing.assert_allclose(phones["theta"], central, rtol=0, atol=1e-9)
    ours = [(r.mechanism, r.sensitivity / r.noise, r.delta, r.count) for r in phones_ledger.releases]
    theirs = [(r.mechanism, r.sensitivity / r.noise, r.delta, r.count) for r in central_ledger.releases]
    assert [(m, pytest.approx(ratio, rel=1e-12), pytest.approx(d, rel=1e-12), c) for m, ratio, d, c in theirs] == ours
    assert phones_ledger.total() == pytest.approx(central_ledger.total(), rel=1e-12)
    assert phones["sigma"] == pytest.approx(fed.DEFAULT_UPDATE_CLIP * learning.compute_noise_sigma(
        epsilon=0.95 * epsilon, delta=DELTA, iterations=10, clip_norm=1.0), rel=1e-12)


def test_one_client_moves_the_released_sum_by_at_most_the_clip(task, hospitals, monkeypatch):
    # What the server releases in a round is Σ_k clip_S(−Δ_k) + noise. Record the sum handed to the
    # noise with and without one hospital: the difference is that hospital's clipped update, ≤ S.
    released = []
    monkeypatch.setattr(mechanisms, "add_gaussian_noise",
                        lambda value, *, sigma, rng: released.append(value.copy()) or value)
    X, y = task["X_train"], task["y_train"]
    keep = hospitals != 8  # the largest hospital (1274 patients) leaves
    without = np.unique(hospitals[keep], return_inverse=True)[1].reshape(-1)
    for owner, rows in ((hospitals, slice(None)), (without, keep)):
        fed.train_federated_privately(X[rows], y[rows], owner, epsilon=1.0, delta=DELTA, rounds=1,
                                      client_fraction=1.0, local_epochs=5, clip_norm=0.05,
                                      rng=np.random.default_rng(0))
    change = np.linalg.norm(released[0] - released[1])
    assert 0.05 * 0.999 <= change <= 0.05 * (1 + 1e-12)  # the clip is active, and it bounds the change


def test_each_client_takes_part_on_its_own_and_the_denominator_is_fixed(task, hospitals, monkeypatch):
    # Poisson sampling: with C = 0,5 the number of hospitals in a round is Binomial(16, 1/2) (sd 2), so
    # over 300 rounds its mean is within 5·2/√300 ≈ 0,6 of 8 and it is not always the same.
    masks = []
    original = private_training._select_poisson
    monkeypatch.setattr(private_training, "_select_poisson", lambda *a: masks.append(original(*a)) or masks[-1])
    fed.train_federated_privately(task["X_train"], task["y_train"], hospitals, epsilon=1.0, delta=DELTA,
                                  rounds=300, client_fraction=0.5, local_epochs=1, clip_norm=4.0,
                                  rng=np.random.default_rng(2))
    chosen = np.array([mask.sum() for mask in masks])
    assert len(masks) == 300 and abs(chosen.mean() - 8) < 0.6 and chosen.min() < chosen.max()
    # One round without noise: the server divides the clipped sum of whoever came by C·K̂, not by them.
    monkeypatch.setattr(mechanisms, "add_gaussian_noise", lambda value, *, sigma, rng: value)
    masks.clear()
    X, y = task["X_train"], task["y_train"]
    run = fed.train_federated_privately(X, y, hospitals, epsilon=1.0, delta=DELTA, rounds=1, client_fraction=0.5,
                                        local_epochs=1, clip_norm=4.0, rng=np.random.default_rng(5))
    theta = learning.make_initial_theta()
    updates, _ = fed.train_clients(theta, X, y, hospitals, selected=np.arange(16), local_epochs=1)
    clipped = learning.clip_gradients(-updates, clip_norm=4.0)[masks[0][0]]
    expected = theta - run["server_learning_rate"] * clipped.sum(axis=0) / (0.5 * run["estimated_clients"])
    np.testing.assert_allclose(run["theta"], expected, rtol=1e-12)


def test_all_privacy_noise_comes_from_mechanisms(task, hospitals, monkeypatch):
    # With the count's Laplace noise and the rounds' Gaussian noise switched off, the seed no longer matters.
    monkeypatch.setattr(mechanisms, "add_gaussian_noise", lambda value, *, sigma, rng: value)
    monkeypatch.setattr(learning, "laplace_mechanism", lambda value, *, sensitivity, epsilon, rng: value)
    runs = [fed.train_federated_privately(task["X_train"], task["y_train"], hospitals, epsilon=1.0, delta=DELTA,
                                          rounds=3, client_fraction=1.0, local_epochs=1, clip_norm=1.0,
                                          rng=np.random.default_rng(seed))["theta"] for seed in (0, 1)]
    assert np.array_equal(runs[0], runs[1])


def test_the_protected_unit_decides_what_can_be_learned(census):
    result = fed.compare_privacy_units(census, epsilons=[0.1, 1.0, 5.0], rng=np.random.default_rng(0))
    persons, hospitals = result["persons"].mean(axis=0), result["hospitals"].mean(axis=0)
    assert result["units"] == {"persons": 4000, "clinics": 400, "hospitals": 16}
    assert persons[-1] >= result["nonprivate"] - 0.02
    assert np.all(np.abs(hospitals - result["majority"]) <= 0.01)
    assert persons[-1] > result["clinics"].mean(axis=0)[-1] - 0.001 > hospitals[-1]


def test_the_persons_curve_is_chapter_5s_descent(census):
    # compare_privacy_units' persons curve runs DP-FedAvg with one client per person, three runs at once;
    # one run of chapter 5's descent with the same stream reproduces the first of them.
    task = fed.split_census_task(census, rng=np.random.default_rng(0))
    X, y = task["X_train"], task["y_train"]
    rng = np.random.default_rng(4)
    thetas, _, _, _ = private_training._train_privately(
        averaging._group_by_client(X, y, np.arange(len(y))), epsilons=[1.0], delta=DELTA, rounds=10, client_fraction=1.0,
        local_epochs=1, clip_norm=fed.DEFAULT_UPDATE_CLIP, rng=rng, learning_rate=learning.DEFAULT_LEARNING_RATE,
        count_share=learning.DEFAULT_COUNT_SHARE, noise_radius=learning.DEFAULT_NOISE_RADIUS, repeats=1)
    central = learning.noisy_gradient_descent(X, y, epsilon=1.0, delta=DELTA, iterations=10, clip_norm=1.0,
                                              rng=np.random.default_rng(4))
    np.testing.assert_allclose(thetas[0, 0], central, rtol=0, atol=1e-9)


def test_one_person_per_client_takes_a_shortcut_to_the_same_clipped_sum(task, monkeypatch):
    # With one row per client and one local step, the clipped sum is computed as chapter 5 does (a
    # factor per person, one product); here it is checked against the general per-client path.
    monkeypatch.setattr(mechanisms, "add_gaussian_noise", lambda value, *, sigma, rng: value)
    X, y = task["X_train"][:300], task["y_train"][:300]
    thetas, _, estimated, steps = private_training._train_privately(
        averaging._group_by_client(X, y, np.arange(300)), epsilons=[0.5, 0.9], delta=DELTA, rounds=1, client_fraction=1.0,
        local_epochs=1, clip_norm=0.5, rng=np.random.default_rng(0), learning_rate=learning.DEFAULT_LEARNING_RATE,
        count_share=learning.DEFAULT_COUNT_SHARE, noise_radius=learning.DEFAULT_NOISE_RADIUS, repeats=2)
    start = learning.make_initial_theta()
    updates = averaging._client_updates(start, X, y, np.ones(300), local_epochs=1,
                                  learning_rate=learning.DEFAULT_LEARNING_RATE)
    clipped_sum = private_training._clip_rows(-updates, 0.5).sum(axis=0)
    expected = start - (steps / estimated)[..., None] * clipped_sum
    np.testing.assert_allclose(thetas, expected, rtol=1e-12, atol=1e-15)


def test_subgroup_accuracy_matches_the_overall_model(census, task):
    groups = fed.measure_subgroup_accuracy(census, epsilon=0.3, rng=np.random.default_rng(0), repeats=4)
    assert groups["groups"][-1] == "total" and len(groups["groups"]) == 6
    assert groups["sizes"][:-1].sum() == groups["sizes"][-1] == 1000
    reference = learning.train_logistic(task["X_train"], task["y_train"])
    assert groups["nonprivate"][-1] == learning.accuracy(reference, task["X_test"], task["y_test"])
    for column in ("nonprivate", "private", "high_income_rate"):
        weighted = np.sum(groups["sizes"][:-1] * groups[column][:-1]) / 1000
        assert weighted == pytest.approx(groups[column][-1], abs=1e-12)


def test_bad_private_training_parameters_are_named(task, hospitals):
    X, y = task["X_train"], task["y_train"]
    arguments = dict(epsilon=1.0, delta=DELTA, rounds=10, client_fraction=1.0, local_epochs=1, clip_norm=4.0,
                     rng=np.random.default_rng(0))
    for name, bad in (("epsilon", -1.0), ("delta", 1.0), ("client_fraction", 0.0), ("clip_norm", 0.0),
                      ("rounds", 0), ("rng", 3)):
        with pytest.raises(ValueError, match=name):
            fed.train_federated_privately(X, y, hospitals, **{**arguments, name: bad})
    with pytest.raises(ValueError, match="epsilon/iterations"):
        fed.train_federated_privately(X, y, hospitals, **{**arguments, "epsilon": 20.0})
    with pytest.raises(ValueError, match="y_test"):
        fed.train_federated(X, y, hospitals, rounds=1, client_fraction=1.0, local_epochs=1,
                            rng=np.random.default_rng(0), X_test=task["X_test"], y_test=task["y_test"][:3])
