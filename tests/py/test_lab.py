"""Tests of dpdeck.lab: the class page's lab contract and every number of the lecture it carries.

Each named number is checked against an independent computation written here
(closed forms with math, not the package's own functions). Measured quantities
carry tolerances from a stated bound.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest

from dpdeck import lab
from dpdeck.data import load_census

DELTA = 1e-5


@pytest.fixture(scope="module")
def result():
    return lab.run_lab(0)


@pytest.fixture(scope="module")
def results(result):
    return result["results"]


# -------------------------------------------------------------- contract --


def test_contract_keys(result):
    assert set(result) == {"kind", "seed", "inputs", "results", "evidence", "limitations"}
    assert result["kind"] == "privacidad-diferencial"
    assert result["seed"] == 0
    assert list(result["results"]) == [name for name, _ in lab.STEPS]
    assert result["inputs"]["delta"] == DELTA and result["inputs"]["people"] == 5000


def test_evidence_items_carry_their_numbers_and_hold(result):
    assert len(result["evidence"]) >= 15
    for item in result["evidence"]:
        assert set(item) == {"result", "fact", "holds", "values"}
        assert item["result"] in result["results"]
        assert isinstance(item["fact"], str) and len(item["fact"]) > 20
        assert item["values"], item["fact"]
        assert item["holds"] is True, item


def test_evidence_holds_for_other_seeds():
    for seed in (1, 7):
        failing = [item["fact"] for item in lab.run_lab(seed)["evidence"] if not item["holds"]]
        assert failing == []


def test_limitations_state_what_the_teaching_code_is_not(result):
    text = " ".join(result["limitations"])
    for needle in ("Mironov 2012", "ε < 1", "registro", "usuario", "sintéticos", "producción"):
        assert needle in text, needle


def test_same_seed_same_json_byte_for_byte(result):
    again = lab.format_lab(lab.run_lab(0))
    assert again == lab.format_lab(result)
    assert lab.format_lab(lab.run_lab(1)) != again
    # plain JSON: round-trips exactly
    assert json.loads(again) == result


def test_command_line_prints_the_json_and_exits_zero():
    completed = subprocess.run([sys.executable, "-m", "dpdeck.lab", "--seed", "3"],
                               capture_output=True, text=True, encoding="utf-8")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == lab.format_lab(lab.run_lab(3)) + "\n"
    assert json.loads(completed.stdout)["seed"] == 3


def test_bad_seed_is_rejected_by_name():
    for bad in (-1, 2.5, True, "0", float("nan")):
        with pytest.raises(ValueError, match="seed"):
            lab.run_lab(bad)
    completed = subprocess.run([sys.executable, "-m", "dpdeck.lab", "--seed", "-4"],
                               capture_output=True, text=True, encoding="utf-8")
    assert completed.returncode != 0 and "seed" in completed.stderr


# -------------------------------------------------- the lecture's numbers --


def test_differencing_attack(results):
    census = load_census()
    attack = results["differencing_attack"]
    assert attack["karen_found"] == 1
    assert attack["count_everyone"] == int(census.high_income.sum())
    assert attack["difference"] == 1 and attack["karen_high_income_revealed"] is True
    # two Lap(2) draws: the difference has variance 2·(2·2²) = 16. The sample sd of 2000
    # draws has relative standard error ≈ √((κ−1)/4n) with kurtosis κ = 4.5 → 2 %; allow 5×.
    assert attack["noisy_difference_std"] == pytest.approx(4.0, rel=0.1)


def test_hospital_numbers(results):
    hospital = results["hospital"]
    assert hospital["scale_b"] == 2.0
    assert hospital["density_ratio_bound"] == pytest.approx(math.exp(0.5), rel=1e-5)
    assert round(hospital["density_ratio_bound"], 2) == 1.65
    assert hospital["density_ratio_max_on_grid"] <= math.exp(0.5) * (1 + 1e-5)
    assert hospital["density_ratio_max_on_grid"] == pytest.approx(math.exp(0.5), rel=1e-5)
    # |Lap(2)| is exponential with mean 2 and sd 2: 100,000 samples, 5 standard errors
    assert abs(hospital["measured_abs_error"] - 2.0) <= 5 * 2 / math.sqrt(100_000)
    assert hospital["expected_abs_error"] == 2.0
    assert hospital["epsilon_three_queries"] == 1.5


def test_gaussian_factor(results):
    assert results["gaussian"]["sigma_factor"] == pytest.approx(math.sqrt(2 * math.log(1.25e5)), rel=1e-5)
    assert round(results["gaussian"]["sigma_factor"], 2) == 4.84


def test_three_accountants(results):
    composition = results["composition"]
    # sequential: 10^4 steps, each (√(2 ln(1.25·10^4/δ))/20, δ/10^4)-DP
    sequential = 10_000 * math.sqrt(2 * math.log(1.25 * 10_000 / DELTA)) / 20
    assert composition["sequential"] == pytest.approx(sequential, rel=1e-5)
    assert round(composition["sequential"]) == 3236
    # RDP: ρ = k/(2σ²) = 12.5, ε = ρ + 2√(ρ ln(1/δ)) at α = 1 + √(ln(1/δ)/ρ)
    rho = 10_000 / (2 * 20**2)
    assert composition["rdp"] == pytest.approx(rho + 2 * math.sqrt(rho * math.log(1 / DELTA)), rel=1e-5)
    assert round(composition["rdp"], 1) == 36.5
    assert composition["alpha"] == pytest.approx(1 + math.sqrt(math.log(1 / DELTA) / rho), rel=1e-5)
    assert composition["rdp"] < composition["advanced"] < composition["sequential"]


def test_vector_crossing(results):
    vector = results["vector"]
    assert vector["crossing_k"] == 12 == vector["crossing_k_formula"]
    c = math.sqrt(2 * math.log(1.25 / DELTA))
    for k in (11, 12):
        assert vector[f"laplace_std_k{k}"] == pytest.approx(math.sqrt(2) * k / 0.5, rel=1e-5)
        assert vector[f"gauss_std_k{k}"] == pytest.approx(c * math.sqrt(k) / 0.5, rel=1e-5)
    assert vector["gauss_std_k11"] > vector["laplace_std_k11"]
    assert vector["gauss_std_k12"] < vector["laplace_std_k12"]


def test_averaging_slope(results):
    averaging = results["averaging"]
    # 400 trials per k: a root mean square of 400 (nearly normal) averages has relative sd
    # ≈ √(2/400)/2 ≈ 3.5 %; a least-squares slope over ln k ∈ [0, 6.9] (10 points) then has
    # sd ≈ 0.035/√Σ(ln k − mean)² ≈ 0.006. The tolerance 0.05 is about 8 sd.
    assert averaging["loglog_slope"] == pytest.approx(-0.5, abs=0.05)
    expected = math.sqrt(2) * 2 / np.sqrt(averaging["ks"])
    np.testing.assert_allclose(averaging["expected"], expected, rtol=1e-5)


def test_histogram_error(results):
    histogram = results["histogram"]
    census = load_census()
    counts = [int(np.sum(census.education == level)) for level in histogram["categories"]]
    assert histogram["true_counts"] == counts
    assert histogram["epsilon_total"] == 0.5
    # 200 × 16 draws of |Lap(2)|: mean 2, sd 2 → standard error 0.035; allow 5×
    assert abs(histogram["mean_abs_error_per_bar"] - 2.0) <= 5 * 2 / math.sqrt(3200)
    assert histogram["largest_bar"] > 1000 and histogram["bars_over_100"] >= 6


def test_clipping_elbow_and_private_bound(results):
    clipping = results["clipping"]
    gains = load_census().capital_gain
    for epsilon, entry in clipping["by_epsilon"].items():
        assert entry["min_total_error"] < 0.7 * min(entry["total_error_smallest_bound"],
                                                    entry["total_error_largest_bound"])
        assert 100 < entry["best_bound"] < 1_000_000
        # the ideal bound leaves ⌈1/ε⌉ people above it: the ⌈1/ε⌉-th largest gain
        rank = math.ceil(1 / float(epsilon))
        assert entry["ideal_bound"] == float(np.sort(gains)[-rank])
    assert clipping["by_epsilon"]["0.01"]["best_bound"] < gains.max()
    private = results["private_bound"]
    assert private["epsilon_total"] == pytest.approx(private["search_epsilon"] + private["sum_epsilon"])
    assert private["epsilon_total"] == pytest.approx(1.0)


def test_private_mean_split(results):
    mean = results["mean"]
    assert mean["epsilon_sum"] == mean["epsilon_count"] == mean["epsilon"] / 2
    assert mean["sum_sensitivity"] == 90 and mean["count_sensitivity"] == 1
    # noise on the sum: Lap(180) over n = 5000 → sd ≈ 0.05 years; allow far more
    assert abs(mean["private_mean_age"] - mean["true_mean_age"]) < 1.0


def test_delta_rule(results):
    assert results["delta_rule"]["delta_random_person"] == pytest.approx(1 / 5000)
    assert results["delta_rule"]["delta_used"] == DELTA


def test_learning_numbers(results):
    learning = results["learning"]
    mean = dict(zip(learning["epsilons"], learning["accuracy_mean"]))
    assert learning["nonprivate_accuracy"] >= learning["majority_baseline"] + 0.05
    for epsilon in (1.0, 2.0, 5.0):
        assert mean[epsilon] >= learning["nonprivate_accuracy"] - 0.02
    for epsilon in (0.02, 0.05, 0.1):
        assert abs(mean[epsilon] - learning["majority_baseline"]) <= 0.01
    grid = learning["iterations_grid"]
    best = grid.index(learning["best_iterations"])
    assert 0 < best < len(grid) - 1
    assert learning["sigma_per_step_epsilon_1"] == pytest.approx(
        math.sqrt(2 * math.log(1.25 * 10 / DELTA)) * 10 / 1.0, rel=1e-5)


def test_federated_chapter_is_in_the_lab(result):
    federated = result["results"]["federated"]
    assert list(federated) == ["fedavg", "leakage", "secure_aggregation", "private_aggregate"]
    facts = [item for item in result["evidence"] if item["result"] == "federated"]
    assert len(facts) == 13 and all(item["holds"] for item in facts)
    limitations = " ".join(result["limitations"])
    for needle in ("sin criptografía", "sin acuerdo de claves", "honesto pero curioso", "no datos de hospitales"):
        assert needle in limitations, needle
