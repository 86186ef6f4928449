"""dpdeck.federated: FedAvg, gradient leakage, secure aggregation and DP on the aggregate.

Each property is checked against an independent computation (the centralized
descent of dpdeck.learning, a per-client loop, closed forms, dp-accounting),
and every evidence item of the chapter's lab is shown to turn false when the
implementation is broken on purpose.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpdeck import federated as fed
from dpdeck import accounting, learning, mechanisms
from dpdeck.data import KAREN_NAME, load_census

DELTA = 1e-5


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


# ------------------------------------------------------------------ splits


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


# ---------------------------------------------------- secure aggregation


def test_fixed_point_encoding_round_trips_within_its_resolution():
    values = np.array([-3.25, 0.0, 1e-6, 1234.5])
    decoded = fed.decode_fixed_point(fed.encode_fixed_point(values))
    assert np.max(np.abs(decoded - values)) <= 0.5 / fed.FIXED_POINT_SCALE
    with pytest.raises(ValueError, match="2¹⁵"):
        fed.encode_fixed_point([40_000.0])


def test_shamir_threshold_shares_rebuild_the_secret_and_fewer_do_not():
    rng = np.random.default_rng(7)
    for threshold in (1, 2, 3, 5):
        secret = int(rng.integers(fed.SHARE_PRIME))
        parts = fed.share_secret(secret, shares=5, threshold=threshold, rng=rng)
        for start in range(5 - threshold + 1):
            assert fed.reconstruct_secret(parts[start:start + threshold]) == secret
        if threshold > 1:
            assert fed.reconstruct_secret(parts[: threshold - 1]) != secret
    with pytest.raises(ValueError, match="threshold"):
        fed.share_secret(1, shares=2, threshold=3, rng=rng)


@pytest.mark.parametrize("clients", [2, 3, 7])
def test_masks_cancel_exactly_in_the_sum(clients):
    rng = np.random.default_rng(clients)
    updates = np.round(rng.normal(0, 2, size=(clients, 4)), 3)
    setup = fed.setup_secure_aggregation(clients, threshold=min(2, clients), rng=rng)
    masked = {client: fed.mask_update(updates[client], client=client, setup=setup) for client in range(clients)}
    encoded = np.mod(sum(fed.encode_fixed_point(row) for row in updates), fed.MASK_MODULUS)
    assert np.array_equal(fed.sum_masked(masked), encoded)
    assert all(not np.array_equal(masked[c], fed.encode_fixed_point(updates[c])) for c in range(clients))


def masked_views(value, *, draws=2000, seed=8):
    """First coordinate of client 0's masked update over ``draws`` fresh setups, as a fraction of 2³²."""
    rng = np.random.default_rng(seed)
    views = [fed.mask_update(np.array([value]), client=0, setup=fed.setup_secure_aggregation(4, threshold=2,
                                                                                              rng=rng))[0]
             for _ in range(draws)]
    return np.array(views) / fed.MASK_MODULUS


def uniformity_statistic(fractions, bins=16) -> float:
    counts = np.bincount((fractions * bins).astype(int), minlength=bins)
    expected = len(fractions) / bins
    return float(np.sum((counts - expected) ** 2 / expected))


# χ² with 15 degrees of freedom exceeds 44.3 with probability 10⁻⁴.
CHI2_15_CRITICAL = 44.3


def test_a_single_masked_update_is_uniform_whatever_the_data():
    for value in (0.0, 1000.0, -7.5):
        assert uniformity_statistic(masked_views(value)) < CHI2_15_CRITICAL


@pytest.mark.parametrize("size", [1, 2, 3, 8, 1001])
def test_a_mask_is_the_32_bit_integers_of_pcg64_from_its_seed(size):
    for seed in (0, 1, 2**32 + 7, fed.SHARE_PRIME - 1):
        expected = np.random.default_rng(seed).integers(0, fed.MASK_MODULUS, size=size, dtype=np.int64)
        mask = fed.expand_mask(seed, size=size)
        assert mask.dtype == np.int64 and np.array_equal(mask, expected), (seed, size)


def test_the_uniformity_check_catches_masks_that_do_not_hide(monkeypatch):
    monkeypatch.setattr(fed, "expand_mask", lambda seed, *, size: np.zeros(size, dtype=np.int64))
    assert uniformity_statistic(masked_views(0.0, draws=200)) > CHI2_15_CRITICAL


def test_a_dropped_client_breaks_naive_masking_and_the_shares_recover_it():
    updates = np.array([[0.12, -0.40, 0.31], [-0.05, 0.22, 0.10], [0.30, 0.08, -0.27], [-0.11, 0.35, 0.02]])
    result = fed.run_secure_aggregation(updates, threshold=3, rng=np.random.default_rng(0), dropped=[3])
    survivors = updates[:3].sum(axis=0)
    assert np.max(np.abs(result["naive_sum"] - survivors)) > 1000
    assert np.max(np.abs(result["recovered_sum"] - survivors)) <= 3 / fed.FIXED_POINT_SCALE
    two = fed.run_secure_aggregation(np.vstack([updates, updates]), threshold=3, rng=np.random.default_rng(1),
                                     dropped=[0, 6])
    assert np.max(np.abs(two["recovered_sum"] - np.vstack([updates, updates])[[1, 2, 3, 4, 5, 7]].sum(axis=0))) \
        <= 6 / fed.FIXED_POINT_SCALE
    with pytest.raises(ValueError, match="solo quedan 2 clientes"):
        fed.run_secure_aggregation(updates, threshold=3, rng=np.random.default_rng(0), dropped=[2, 3])


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
    original = fed._select_poisson
    monkeypatch.setattr(fed, "_select_poisson", lambda *a: masks.append(original(*a)) or masks[-1])
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
    thetas, _, _, _ = fed._train_privately(
        fed._group_by_client(X, y, np.arange(len(y))), epsilons=[1.0], delta=DELTA, rounds=10, client_fraction=1.0,
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
    thetas, _, estimated, steps = fed._train_privately(
        fed._group_by_client(X, y, np.arange(300)), epsilons=[0.5, 0.9], delta=DELTA, rounds=1, client_fraction=1.0,
        local_epochs=1, clip_norm=0.5, rng=np.random.default_rng(0), learning_rate=learning.DEFAULT_LEARNING_RATE,
        count_share=learning.DEFAULT_COUNT_SHARE, noise_radius=learning.DEFAULT_NOISE_RADIUS, repeats=2)
    start = learning.make_initial_theta()
    updates = fed._client_updates(start, X, y, np.ones(300), local_epochs=1,
                                  learning_rate=learning.DEFAULT_LEARNING_RATE)
    clipped_sum = fed._clip_rows(-updates, 0.5).sum(axis=0)
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
