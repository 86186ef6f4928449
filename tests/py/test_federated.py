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
from dpdeck import learning, mechanisms
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


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 5.0])
@pytest.mark.parametrize("rounds", [10, 100, 1000])
def test_round_accounting_matches_the_composition_theorems(epsilon, rounds):
    z = fed.compute_noise_multiplier(epsilon=epsilon, delta=DELTA, rounds=10)
    spent = fed.account_rounds(noise_multiplier=z, rounds=rounds, delta=DELTA)
    # Sequential (Dwork and Roth 2014, Thm A.1 and 3.16): each round (√(2 ln(1.25T/δ))/z, δ/T)-DP.
    per_round = math.sqrt(2 * math.log(1.25 * rounds / DELTA)) / z
    assert spent["sequential"] == pytest.approx(rounds * per_round, rel=1e-12)
    # Advanced (Thm 3.20), δ split half for δ' and half over the rounds.
    step = math.sqrt(2 * math.log(1.25 * rounds / (DELTA / 2))) / z
    advanced = step * math.sqrt(2 * rounds * math.log(2 / DELTA)) + rounds * step * math.expm1(step)
    assert spent["advanced"] == pytest.approx(advanced, rel=1e-12)
    # Rényi DP (Mironov 2017): ρ = T/(2z²), ε = ρ + 2√(ρ ln(1/δ)).
    rho = rounds / (2 * z**2)
    assert spent["rdp"] == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / DELTA)), rel=1e-12)
    if rounds == 10:
        assert spent["sequential"] == pytest.approx(epsilon, rel=1e-12)


@pytest.fixture(scope="module")
def dp_accounting():
    return pytest.importorskip("dp_accounting")


def reference_epsilon(dp_accounting, z, rounds, orders=None):
    from dp_accounting.rdp import RdpAccountant

    accountant = RdpAccountant() if orders is None else RdpAccountant(orders=list(orders))
    accountant.compose(dp_accounting.SelfComposedDpEvent(dp_accounting.GaussianDpEvent(z), rounds))
    return accountant.get_epsilon(DELTA)


@pytest.mark.parametrize("epsilon", [0.5, 1.0, 5.0])
@pytest.mark.parametrize("rounds", [10, 100, 1000])
def test_rdp_over_rounds_agrees_with_dp_accounting_within_one_percent(dp_accounting, epsilon, rounds):
    z = fed.compute_noise_multiplier(epsilon=epsilon, delta=DELTA, rounds=10)
    ours = fed.account_rounds(noise_multiplier=z, rounds=rounds, delta=DELTA)["rdp_tight"]
    assert ours == pytest.approx(reference_epsilon(dp_accounting, z, rounds), rel=0.01)


def test_noise_multiplier_for_renyi_spends_exactly_the_budget(dp_accounting):
    z = fed.compute_noise_multiplier(epsilon=1.0, delta=DELTA, rounds=10, accountant="rdp")
    spent = fed.account_rounds(noise_multiplier=z, rounds=10, delta=DELTA)["rdp"]
    assert spent == pytest.approx(1.0, rel=1e-8)
    assert fed.account_rounds(noise_multiplier=0.99 * z, rounds=10, delta=DELTA)["rdp"] > 1.0
    assert fed.compute_noise_multiplier(epsilon=1.0, delta=DELTA, rounds=10) == pytest.approx(
        learning.compute_noise_sigma(epsilon=1.0, delta=DELTA, iterations=10, clip_norm=1.0), rel=1e-15)
    with pytest.raises(ValueError, match="accountant"):
        fed.compute_noise_multiplier(epsilon=1.0, delta=DELTA, rounds=10, accountant="magia")


def test_small_noise_has_no_classic_gaussian_bound():
    spent = fed.account_rounds(noise_multiplier=0.5, rounds=10, delta=DELTA)
    assert spent["sequential"] is None and spent["advanced"] is None and spent["rdp"] > 0


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 8.0])
def test_dp_fedavg_with_one_phone_per_person_is_chapter_5s_private_descent(task, epsilon):
    X, y = task["X_train"], task["y_train"]
    z = fed.compute_noise_multiplier(epsilon=epsilon, delta=DELTA, rounds=10)
    phones = fed.train_federated_privately(X, y, np.arange(len(y)), rounds=10, client_fraction=1.0, local_epochs=1,
                                           clip_norm=fed.DEFAULT_UPDATE_CLIP, noise_multiplier=z,
                                           rng=np.random.default_rng(9))
    central = learning.noisy_gradient_descent(X, y, epsilon=epsilon, delta=DELTA, iterations=10, clip_norm=1.0,
                                              rng=np.random.default_rng(9))
    np.testing.assert_allclose(phones["theta"], central, rtol=0, atol=1e-9)
    assert phones["sigma"] == pytest.approx(z * fed.DEFAULT_UPDATE_CLIP)


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
        fed.train_federated_privately(X[rows], y[rows], owner, rounds=1, client_fraction=1.0, local_epochs=5,
                                      clip_norm=0.05, noise_multiplier=1.0, rng=np.random.default_rng(0))
    change = np.linalg.norm(released[0] - released[1])
    assert 0.05 * 0.999 <= change <= 0.05 * (1 + 1e-12)  # the clip is active, and it bounds the change


def test_all_privacy_noise_comes_from_mechanisms(task, hospitals, monkeypatch):
    monkeypatch.setattr(mechanisms, "add_gaussian_noise", lambda value, *, sigma, rng: value)
    runs = [fed.train_federated_privately(task["X_train"], task["y_train"], hospitals, rounds=3, client_fraction=1.0,
                                          local_epochs=1, clip_norm=1.0, noise_multiplier=5.0,
                                          rng=np.random.default_rng(seed))["theta"] for seed in (0, 1)]
    assert np.array_equal(runs[0], runs[1])


def test_the_protected_unit_decides_what_can_be_learned(census):
    result = fed.compare_privacy_units(census, epsilons=[0.1, 1.0, 5.0], rng=np.random.default_rng(0))
    central, hospitals = result["central"].mean(axis=0), result["hospitals"].mean(axis=0)
    assert result["units"] == {"central": 4000, "clinics": 400, "hospitals": 16}
    assert central[-1] >= result["nonprivate"] - 0.02
    assert np.all(np.abs(hospitals - result["majority"]) <= 0.01)
    assert central[-1] > result["clinics"].mean(axis=0)[-1] - 0.001 > hospitals[-1]


def test_subgroup_accuracy_matches_the_overall_model(census, task):
    groups = fed.measure_subgroup_accuracy(census, epsilon=0.3, rng=np.random.default_rng(0), repeats=4)
    assert groups["groups"][-1] == "total" and len(groups["groups"]) == 6
    assert groups["sizes"][:-1].sum() == groups["sizes"][-1] == 1000
    reference = learning.train_logistic(task["X_train"], task["y_train"])
    assert groups["nonprivate"][-1] == learning.accuracy(reference, task["X_test"], task["y_test"])
    for column in ("nonprivate", "private", "high_income_rate"):
        weighted = np.sum(groups["sizes"][:-1] * groups[column][:-1]) / 1000
        assert weighted == pytest.approx(groups[column][-1], abs=1e-12)


# ---------------------------------------------- the lab's evidence, broken


@pytest.fixture(scope="module")
def chapter(census):
    return fed.run_lab_chapter(census, np.random.default_rng(0))


def test_the_chapter_lab_reports_every_part_and_all_its_facts_hold(chapter):
    results, evidence = chapter
    assert list(results) == ["fedavg", "leakage", "secure_aggregation", "private_aggregate"]
    assert len(evidence) == 13
    assert [item["fact"] for item in evidence if not item["holds"]] == []
    assert all(item["result"] == "federated" and item["values"] for item in evidence)


def test_the_chapter_lab_is_reproducible(census, chapter):
    from dpdeck.lab import format_lab, _plain

    again = fed.run_lab_chapter(census, np.random.default_rng(0))
    assert format_lab(_plain(again)) == format_lab(_plain(chapter))


def fact_holds(part, census, keyword, seed=0) -> bool:
    """Run one part of the chapter's lab and say whether the fact containing ``keyword`` holds."""
    _, evidence = part(census, np.random.default_rng(seed))
    matching = [item for item in evidence if keyword in item["fact"]]
    assert len(matching) == 1, keyword
    return matching[0]["holds"]


def unweighted_average(updates, sizes):
    return np.asarray(updates).mean(axis=0)


def split_at_random(groups):
    return fed.split_iid(len(groups), clients=16, rng=np.random.default_rng(0))


def one_step_only(thetas, X, y, sizes, *, local_epochs, learning_rate, original=fed._local_descent):
    return original(thetas, X, y, sizes, local_epochs=1, learning_rate=learning_rate)


def device_of_one(theta, X, y, **options):
    X = np.atleast_2d(X)
    return ORIGINAL_DEVICE_UPDATE(theta, X[0], np.atleast_1d(y)[0], **options)


ORIGINAL_DEVICE_UPDATE = fed.compute_device_update


def masks_that_add(client, setup, *, size, others):
    total = np.zeros(size, dtype=np.int64)
    for other in others:
        if other != client:
            total = total + fed.expand_mask(setup["seeds"][(min(client, other), max(client, other))], size=size)
    return np.mod(total, fed.MASK_MODULUS)


BREAKS = [
    # (part of the lab, words of the fact, what is broken, replacement)
    ("_lab_fedavg", "pesos n_k/n", (fed, "average_updates"), unweighted_average),
    ("_lab_fedavg", "en su peor ronda", (fed, "split_by_group"), split_at_random),
    ("_lab_fedavg", "E = 5 épocas locales", (fed, "_local_descent"), one_step_only),
    ("_lab_leakage", "teléfono de Karen", (fed, "reconstruct_features"), lambda update: update / np.linalg.norm(update)),
    ("_lab_leakage", "otras 99 personas", (fed, "compute_device_update"), device_of_one),
    ("_lab_leakage", "Recortada a norma", (mechanisms, "add_gaussian_noise"), lambda value, *, sigma, rng: value),
    ("_lab_secure_aggregation", "se cancelan", (fed, "_pair_masks"), masks_that_add),
    ("_lab_secure_aggregation", "uniforme", (fed, "expand_mask"),
     lambda seed, *, size: np.zeros(size, dtype=np.int64)),
    ("_lab_secure_aggregation", "se cae a mitad", (fed, "reconstruct_secret"), lambda parts: int(parts[0][1])),
    ("_lab_private_aggregate", "contabilidad de Rényi", (fed, "compute_noise_multiplier"),
     lambda **kw: 4 * learning.compute_noise_sigma(epsilon=kw["epsilon"], delta=kw["delta"],
                                                    iterations=kw["rounds"], clip_norm=1.0)),
    ("_lab_private_aggregate", "un teléfono por persona", (learning, "clip_gradients"),
     lambda gradients, *, clip_norm: gradients),
    ("_lab_private_aggregate", "16 hospitales", (fed, "compute_noise_multiplier"), lambda **kw: 1e-3),
    ("_lab_private_aggregate", "licenciatura o posgrado", (learning, "noisy_gradient_descent"),
     lambda X, y, **kw: learning.train_logistic(X, y)),
]


@pytest.mark.parametrize("part, keyword, target, replacement", BREAKS, ids=[b[1] for b in BREAKS])
def test_each_fact_turns_false_when_the_implementation_is_broken(census, monkeypatch, part, keyword, target,
                                                                 replacement):
    assert fact_holds(getattr(fed, part), census, keyword)
    monkeypatch.setattr(*target, replacement)
    assert not fact_holds(getattr(fed, part), census, keyword)


def test_lab_limitations_say_what_the_chapter_is_not():
    text = " ".join(fed.LAB_LIMITATIONS)
    for needle in ("sin criptografía", "sin acuerdo de claves", "honesto pero curioso", "Censo sintético",
                   "no datos de hospitales"):
        assert needle in text, needle
