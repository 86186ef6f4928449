"""Tests of dpdeck.lab: the class page's lab contract, the lecture's numbers, and its evidence at every seed.

Each named number is checked against an independent computation written here
(closed forms with math, not the package's own functions). Measured quantities
carry tolerances from a stated bound. That every evidence item is a
measurement a wrong implementation makes false is tested in test_sabotage.py.
"""

from __future__ import annotations

import json
import math
import re
import subprocess
import sys

import numpy as np
import pytest

from dpdeck import experiments, lab
from dpdeck.data import load_census

DELTA = 1e-5


@pytest.fixture(scope="module")
def result(lab_at):
    return lab_at(0)


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
    assert len(result["evidence"]) >= 20
    for item in result["evidence"]:
        assert set(item) == {"result", "fact", "holds", "values"}
        assert item["result"] in result["results"]
        assert isinstance(item["fact"], str) and len(item["fact"]) > 20
        assert item["values"], item["fact"]
        assert item["holds"] is True, item


# Every statistical fact fails with a right implementation with probability ≤ 10⁻⁶ (or has a margin
# measured over these seeds): all forty must hold. Each lab costs about a third of a second.
EVIDENCE_SEEDS = range(40)


@pytest.mark.parametrize("seeds", [EVIDENCE_SEEDS[start::4] for start in range(4)],
                         ids=[f"semillas {start}, {start + 4}, …" for start in range(4)])
def test_evidence_holds_for_seeds_0_to_39(seeds, lab_at):
    failing = [(seed, item["fact"]) for seed in seeds for item in lab_at(seed)["evidence"] if not item["holds"]]
    assert failing == []


def test_fact_strings_follow_the_number_format(result):
    # Spanish text a student reads: decimal comma, thousands grouped with a space from five digits.
    for item in result["evidence"]:
        assert not re.search(r"\d\.\d", item["fact"]), item["fact"]
        assert not re.search(r"(?<![\d,])\d{5,}", item["fact"]), item["fact"]
    for text in result["limitations"]:
        assert not re.search(r"\d\.\d", text), text


def test_limitations_state_what_the_teaching_code_is_not(result):
    text = " ".join(result["limitations"])
    for needle in ("Mironov 2012", "ε < 1", "registro", "usuario", "sintéticos", "producción",
                   "mismo censo", "5 % del presupuesto"):
        assert needle in text, needle


def published_reals(value):
    if isinstance(value, dict):
        for item in value.values():
            yield from published_reals(item)
    elif isinstance(value, list):
        for item in value:
            yield from published_reals(item)
    elif isinstance(value, float):
        yield value


def test_rounding_noise_is_published_as_zero(result):
    # Its last bits depend on the machine (native numpy and Pyodide's sum in another order): published
    # raw, the deck's export and `python -m dpdeck.lab` would differ on the same seed.
    assert [value for value in published_reals(result) if 0 < abs(value) < 1e-9] == []
    federated = result["results"]["federated"]
    assert federated["fedavg"]["equivalence_max_difference"] == 0.0
    assert federated["private_aggregate"]["phones_equal_central_max_difference"] == 0.0
    assert result["results"]["learning"]["accuracy_std"][0] == 0.0
    assert lab._plain([2.2e-16, -1.1e-16, 9.9e-13, 1e-12, 1e-5]) == [0.0, 0.0, 0.0, 1e-12, 1e-5]


def test_same_seed_same_json_byte_for_byte(result, lab_at):
    again = lab.format_lab(lab.run_lab(0))   # a second run, not the one lab_at keeps
    assert again == lab.format_lab(result)
    assert lab.format_lab(lab_at(1)) != again
    # plain JSON: round-trips exactly
    assert json.loads(again) == result


def test_command_line_prints_the_json_and_exits_zero(lab_at):
    completed = subprocess.run([sys.executable, "-m", "dpdeck.lab", "--seed", "3"],
                               capture_output=True, text=True, encoding="utf-8")
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout == lab.format_lab(lab_at(3)) + "\n"
    assert json.loads(completed.stdout)["seed"] == 3


def test_bad_seed_is_rejected_by_name(capsys):
    for bad in (-1, 2.5, True, "0", float("nan")):
        with pytest.raises(ValueError, match="seed"):
            lab.run_lab(bad)
    # The command line's main, in this process (`python -m dpdeck.lab` runs it: see the test above).
    assert lab.main(["--seed", "-4"]) != 0 and "seed" in capsys.readouterr().err


# ----------------------------------------------------- the challenge --

EXTENSION = {
    "assumption": "Restar dos conteos con ruido ya no revela a Karen.",
    "measurement": "La resta tiene desviación 4,02 con ε = 0,5 por consulta.",
    "conclusion": "La señal de 1 queda bajo unas cuatro unidades de ruido.",
    "limitation": "Un atacante que repite la consulta promedia el ruido.",
}


def test_the_extension_is_added_as_it_is_and_changes_nothing_else(result):
    extended = lab.run_lab(0, extension={**EXTENSION, "assumption": "  " + EXTENSION["assumption"] + "\n"})
    assert extended[lab.EXTENSION_KEY] == EXTENSION
    assert list(extended[lab.EXTENSION_KEY]) == list(lab.EXTENSION_FIELDS)
    assert {key: value for key, value in extended.items() if key != lab.EXTENSION_KEY} == result
    assert lab.EXTENSION_KEY not in result


@pytest.mark.parametrize("bad, says", [
    ({key: value for key, value in EXTENSION.items() if key != "measurement"}, "le falta la clave «measurement»"),
    ({**EXTENSION, "conclusion": "   "}, "conclusion (conclusión) está vacío"),
    ({**EXTENSION, "limitation": 3}, "limitation (limitación) debe ser un texto"),
    ({**EXTENSION, "riesgo": "otro"}, "clave desconocida «riesgo»"),
    ({**EXTENSION, "assumption": "x" * 5000}, "el máximo es 4000"),
    (["assumption"], "debe ser un objeto"),
])
def test_a_bad_extension_is_rejected_by_key(bad, says):
    with pytest.raises(ValueError, match=re.escape(says)):
        lab.check_student_extension(bad)
    with pytest.raises(ValueError, match=re.escape(says)):
        lab.run_lab(0, extension=bad)


def run_command_line(*arguments):
    return subprocess.run([sys.executable, "-m", "dpdeck.lab", *arguments],
                          capture_output=True, text=True, encoding="utf-8")


def test_command_line_takes_the_extension_from_a_file(result, tmp_path):
    path = tmp_path / "extension.json"
    path.write_text(json.dumps(EXTENSION, ensure_ascii=False), encoding="utf-8")
    completed = run_command_line("--seed", "0", "--extension", str(path))
    assert completed.returncode == 0, completed.stderr
    printed = json.loads(completed.stdout)
    assert printed[lab.EXTENSION_KEY] == EXTENSION
    assert {key: value for key, value in printed.items() if key != lab.EXTENSION_KEY} == result
    # An exported lab works as the extension file too: it is read from its student_extension.
    exported = tmp_path / "laboratorio.json"
    exported.write_text(completed.stdout, encoding="utf-8")
    again = run_command_line("--seed", "0", "--extension", str(exported))
    assert again.returncode == 0 and again.stdout == completed.stdout


@pytest.mark.parametrize("content, says", [
    (None, "no se pudo leer"),
    ("{", "no es JSON válido (línea 1)"),
    (json.dumps({"assumption": "a"}), "le falta la clave «measurement»"),
])
def test_command_line_rejects_a_bad_extension_file(tmp_path, capsys, content, says):
    path = tmp_path / "extension.json"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    code = lab.main(["--extension", str(path)])   # the command line's main, in this process
    printed = capsys.readouterr()
    assert code == 2 and printed.out == ""
    assert says in printed.err and str(path) in printed.err


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
    assert hospital["expected_abs_error"] == 2.0
    # |Lap(2)| is exponential with mean 2 and sd 2: 100,000 samples, 5 standard errors
    assert abs(hospital["measured_abs_error"] - 2.0) <= 5 * 2 / math.sqrt(100_000)
    # Pr[Lap(2) > 1] = e^{-1/2}/2 and Pr[Lap(2) > 2] = e^{-1}/2; their ratio is e^{1/2}.
    assert hospital["tail_probability_D"] == pytest.approx(math.exp(-0.5) / 2, abs=0.01)
    assert hospital["tail_probability_D_prime"] == pytest.approx(math.exp(-1) / 2, abs=0.01)
    assert hospital["e_epsilon"] == pytest.approx(math.exp(0.5), rel=1e-5)
    assert hospital["tail_ratio"] == pytest.approx(math.exp(0.5), rel=0.05)
    # Three releases: the loss reaches 3 × 0.5 when all three land at or above 42 (1/8 of them).
    assert hospital["epsilon_three_queries"] == 1.5 == hospital["max_privacy_loss_three_queries"]
    assert hospital["share_of_triples_at_max_loss"] == pytest.approx(1 / 8, abs=0.01)


def test_gaussian_price(results):
    gaussian = results["gaussian"]
    assert gaussian["sigma_factor"] == pytest.approx(math.sqrt(2 * math.log(1.25e5)), rel=1e-5)
    assert round(gaussian["sigma_factor"], 2) == 4.84
    assert gaussian["sigma_expected"] == pytest.approx(math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-5)
    assert gaussian["sigma_measured"] == pytest.approx(gaussian["sigma_expected"], rel=0.02)


def test_three_accountants_and_the_exact_epsilon(results):
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
    # The exact ε of 10^4 Gaussians with σ = 20 is that of one Gaussian with σ = 0.2 (μ = 5).
    assert round(composition["exact"], 1) == 33.1
    assert all(value <= DELTA for value in composition["true_delta_at"].values())


def test_vector_crossing(results):
    vector = results["vector"]
    assert vector["crossing_k"] == 12
    c = math.sqrt(2 * math.log(1.25 / DELTA))
    for k in (11, 12):
        assert vector[f"laplace_std_k{k}_predicted"] == pytest.approx(math.sqrt(2) * k / 0.5, rel=1e-5)
        assert vector[f"gauss_std_k{k}_predicted"] == pytest.approx(c * math.sqrt(k) / 0.5, rel=1e-5)
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
    assert histogram["epsilon_total"] == 0.5 == histogram["max_privacy_loss"]
    # 100 × 16 draws of |Lap(2)|: mean 2, sd 2 → standard error 0.05; allow 5×
    assert abs(histogram["mean_abs_error_per_bar"] - 2.0) <= 5 * 2 / math.sqrt(1600)
    assert histogram["smallest_bar"] == 7 and histogram["largest_bar"] == 1594
    assert histogram["bars_under_100"] == 8


def test_clipping_elbow_and_private_bound(results):
    clipping = results["clipping"]
    gains = load_census().capital_gain
    assert clipping["max_value"] == gains.max() == 99_999
    assert clipping["best_bound_expected"] == pytest.approx(15_848.9, rel=1e-4)
    assert clipping["best_bound_measured"] < gains.max()
    assert clipping["epsilon_0_1_best_bound"] == pytest.approx(79_432.8, rel=1e-4)
    assert clipping["epsilon_0_1_saving"] < 0.05   # at ε = 0.1 clipping barely pays
    private = results["private_bound"]
    assert private["epsilon_total"] == pytest.approx(private["search_epsilon"] + private["sum_epsilon"])
    assert private["epsilon_total"] == pytest.approx(1.0)
    assert private["best_candidate"] == 100_000 == private["median_chosen_bound"]


def test_private_mean_split(results):
    mean = results["mean"]
    assert mean["epsilon_by_release"] == [0.5, 0.5] and mean["epsilon_total"] == 1.0
    assert mean["sum_sensitivity"] == 90 and mean["count_sensitivity"] == 1
    # noise on the sum: Lap(180), sd 180√2, over n = 5000 → sd ≈ 0.051 years
    assert mean["spread_expected"] == pytest.approx(math.sqrt(2) * 180 / 5000, rel=0.1)
    assert abs(mean["private_mean_age"] - mean["true_mean_age"]) < 0.5


def test_delta_rule(results):
    assert results["delta_rule"]["delta_random_person"] == pytest.approx(1 / 5000)
    assert results["delta_rule"]["delta_used"] == DELTA
    assert results["delta_rule"]["karen_exposed_rate"] == pytest.approx(1 / 5000, abs=5 * math.sqrt(2e-4 / 2e5))


def test_learning_numbers(results):
    learning_results = results["learning"]
    mean = dict(zip(learning_results["epsilons"], learning_results["accuracy_mean"]))
    assert learning_results["nonprivate_accuracy"] >= learning_results["majority_baseline"] + 0.05
    for epsilon in (2.0, 5.0):
        assert mean[epsilon] > learning_results["nonprivate_accuracy"] - 0.01
    for epsilon in (0.02, 0.05, 0.1):
        assert abs(mean[epsilon] - learning_results["majority_baseline"]) <= 0.01
    grid = learning_results["iterations_grid"]
    best = grid.index(learning_results["best_iterations"])
    assert 0 < best < len(grid) - 1
    count, steps = learning_results["ledger"]
    assert count["noise"] == 20.0 and count["epsilon"] == 0.05
    # σ of each step: the classic Gaussian with ε = 0.95/10 and δ = 10⁻⁶.
    assert steps["noise"] == pytest.approx(math.sqrt(2 * math.log(1.25e6)) / 0.095, rel=1e-5)
    assert learning_results["ledger_sequential"] == [1.0, DELTA]
    assert learning_results["ledger_renyi_epsilon"] < 0.5


def test_lab_steps_use_the_lecture_experiments():
    # One definition per experiment: the lab's attack, averaging, histogram and elbow are the slides'.
    census = load_census()
    elbow = experiments.run_clipping_elbow()
    results, _ = lab.find_clipping_elbow(census, np.random.default_rng(0))
    assert results["best_bound_expected"] == elbow["best_bound"]


def test_federated_chapter_is_in_the_lab(result):
    federated = result["results"]["federated"]
    assert list(federated) == ["fedavg", "leakage", "secure_aggregation", "private_aggregate"]
    facts = [item for item in result["evidence"] if item["result"] == "federated"]
    assert len(facts) == 18 and all(item["holds"] for item in facts)
    limitations = " ".join(result["limitations"])
    for needle in ("sin criptografía", "sin acuerdo de claves", "honesto pero curioso", "no datos de hospitales",
                   "5 % de ε", "por cliente"):
        assert needle in limitations, needle


def test_federated_numbers(results):
    private = results["federated"]["private_aggregate"]
    count, rounds = private["ledger"]
    # The count of clients: Laplace with 5 % of ε = 1; the rounds: Gauss with 0,95/10 and δ/10 each.
    assert count["what"] == "conteo de clientes" and count["noise"] == 20.0 and count["epsilon"] == 0.05
    assert rounds["noise"] == pytest.approx(4 * math.sqrt(2 * math.log(1.25e6)) / 0.095, rel=1e-5)
    assert rounds["count"] == 10 and rounds["sensitivity"] == 4.0
    assert private["ledger_sequential"] == [1.0, DELTA] and private["ledger_renyi_epsilon"] < 0.5
    assert private["phones_equal_central_max_difference"] < 1e-9
    assert private["units"] == {"persons": 4000, "clinics": 400, "hospitals": 16}
    fedavg = results["federated"]["fedavg"]
    assert fedavg["hospital_sizes"][0] > 0 and sum(fedavg["hospital_sizes"]) == 4000
