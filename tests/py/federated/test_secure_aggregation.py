"""dpdeck.federated.secure_aggregation: masks that cancel in the sum, hide each update, and survive a dropped client."""

from __future__ import annotations

import numpy as np
import pytest

from dpdeck import federated as fed
from dpdeck.federated import secure_aggregation


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
    monkeypatch.setattr(secure_aggregation, "expand_mask", lambda seed, *, size: np.zeros(size, dtype=np.int64))
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
