"""Chapter 6 (06-federado.md): the numbers its slides state are the numbers dpdeck computes.

Same kinds of checks as test_deck_consistency.py, for this chapter (the
number format, the Spanish, the experiments behind the figures and the errata
are checked there for every slide file):

* ``CLAIMS``: a text written on a slide (prose or notes) and the value dpdeck
  computes for it, with the tolerance the written number implies;
* ``CELL_OUTPUTS``: each cell that prints a number the slide talks about is run
  natively, as the build pre-renders it, and its output contains that number;
* the chapter's story: DP-FedAvg treats the number of clients as chapter 5
  treats n (a private count, a fixed denominator), the slide says so, and the
  cells show the library's own calibration and ledger;
* the chapter's structure: a chapter slide, the drawn (not coded) sequence
  diagram, the roadmap entry and the closing chapter moved to 07.

Slides and cells come from the build's reader, ``deckbuild.slides.read_deck``.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Callable

import numpy as np
import pytest

from dpdeck import accounting, experiments, federated, learning, mechanisms
from dpdeck.data import KAREN_NAME, load_census
from dpdeck.numbers import format_number, format_vector
from deck_sources import deck, native_output  # one reader, one native run per cell

SLIDES = Path(__file__).resolve().parents[1] / "deck" / "slides"
CHAPTER = "06-federado.md"
DELTA = 1e-5
NBSP = "\u00a0"


def chapter_slides() -> list:
    return [slide for slide in deck().slides if slide.file.name == CHAPTER]


def slide(slide_id: str):
    return next(s for s in deck().slides if s.attributes.get("id") == slide_id)


@lru_cache(maxsize=None)
def slide_text() -> str:
    """The chapter as a reader sees it: line breaks folded to spaces, no inline span tags."""
    text = "\n".join(s.source for s in chapter_slides())
    text = re.sub(r"</?span[^>]*>", "", text)
    return re.sub(r"\s+", " ", text)


@lru_cache(maxsize=None)
def chapter_cells() -> dict:
    return {cell.id: cell.source for s in chapter_slides() for cell in s.cells}


# ------------------------------------------- the cells' experiments, once


@lru_cache(maxsize=None)
def census():
    return load_census()


@lru_cache(maxsize=None)
def splits():
    return experiments.run_experiment("fedavg_rounds")


@lru_cache(maxsize=None)
def epochs():
    return experiments.run_experiment("local_epochs")


@lru_cache(maxsize=None)
def units():
    return experiments.run_experiment("privacy_units")


@lru_cache(maxsize=None)
def leakage():
    return federated.measure_leakage(census(), person=KAREN_NAME, batch_sizes=[1, 2, 10, 100],
                                     noise_multiplier=1.0, trials=200, rng=np.random.default_rng(0))


@lru_cache(maxsize=None)
def subgroups(epsilon=0.3):
    return federated.measure_subgroup_accuracy(census(), epsilon=epsilon, rng=np.random.default_rng(0))


@lru_cache(maxsize=None)
def hospital_sizes():
    task = federated.split_census_task(census(), rng=np.random.default_rng(0))
    return federated.count_examples(federated.split_by_group(task["X_train"][:, federated.EDUCATION_COLUMN]))


def equivalence_difference() -> float:
    task = federated.split_census_task(census(), rng=np.random.default_rng(0))
    X, y = task["X_train"], task["y_train"]
    owner = federated.split_by_group(X[:, federated.EDUCATION_COLUMN])
    run = federated.train_federated(X, y, owner, rounds=10, client_fraction=1.0, local_epochs=1,
                                    rng=np.random.default_rng(0))
    return float(np.max(np.abs(run["theta"] - learning.train_logistic(X, y, iterations=10))))


@lru_cache(maxsize=None)
def rounds_ledger() -> accounting.PrivacyLedger:
    """The ledger of DP-FedAvg's calibration for ε = 1 in 10 rounds, as the dp-rondas cell builds it."""
    ledger = accounting.PrivacyLedger()
    federated.calibrate_rounds(4000, 3, epsilon=1.0, delta=DELTA, rounds=10, clip_norm=4.0,
                               rng=np.random.default_rng(0), ledger=ledger)
    return ledger


def z_for(accountant="sequential") -> float:
    """The noise multiplier of the 10 rounds: 95 % of ε = 1, the other 5 % went to the count of clients."""
    return accounting.compute_noise_multiplier(epsilon=0.95, delta=DELTA, steps=10, accountant=accountant)


def tail_log_ratio_of_three_laplace_sums(scale=2.0, far=2000.0) -> float:
    def log_density(x):
        return -abs(x) / scale + math.log(3 * scale**2 + 3 * scale * abs(x) + x**2) - math.log(16 * scale**3)
    return log_density(far) - log_density(far + 3)


def loss(band: int, epsilon=0.3) -> float:
    groups = subgroups(epsilon)
    return float(groups["nonprivate"][band] - groups["private"][band])


def doctorates() -> int:
    return int(np.sum(census().education == "Doctorado"))


def fedavg_exercise_difference() -> float:
    """The FedAvg exercise's solution against the centralized step: 16 hospitals of the whole census."""
    X, y = learning.make_dataset(census())
    owner = federated.split_by_group(census().education_num)
    theta = learning.make_initial_theta()
    updates, sizes = federated.train_clients(theta, X, y, owner, selected=np.unique(owner), local_epochs=1)
    weights = sizes / sizes.sum()
    averaged = (weights[:, None] * updates).sum(axis=0)
    return float(np.max(np.abs(averaged - (learning.train_logistic(X, y, iterations=1) - theta))))


def hospital_server_step(epsilon: float, estimated_clients: float = 16.0) -> float:
    """DP-FedAvg's server step with 16 hospitals (K̂ = 16): the rule η_s = min(1, r·K̂/(σ√(T d)))."""
    _, sigma, _ = federated.calibrate_rounds(16, 3, epsilon=epsilon, delta=DELTA, rounds=10,
                                             clip_norm=federated.DEFAULT_UPDATE_CLIP, rng=np.random.default_rng(0))
    return learning.compute_step_size(sigma=sigma, n=estimated_clients, iterations=10, dimension=3,
                                      learning_rate=1.0, noise_radius=learning.DEFAULT_NOISE_RADIUS)


@lru_cache(maxsize=None)
def subgroup_counterfactuals(epsilon=0.3, repeats=200) -> dict:
    """Postgraduates' loss (points) on the subgroup slide's partition, with the private step and no noise,
    and with the noise and a step four times longer: which of the two makes the disparity. Two hundred
    runs: with twenty, the noisy loss wanders by about a point from one set of draws to the next.

    Written here with numpy, apart from the library's descent: the partition and the calibration
    (n̂, σ, η) are the library's, the loop is this test's.
    """
    X, X_test, y, y_test = learning.split_census(rng=np.random.default_rng(0), census=census())
    noisy_n, sigma, step = learning.calibrate_training(X.shape, epsilon=epsilon, delta=DELTA, iterations=10,
                                                       clip_norm=1.0, rng=np.random.default_rng(1), repeats=repeats)
    noise = np.random.default_rng(2)
    education = np.rint(learning.EDUCATION_CENTER + learning.EDUCATION_SCALE * X_test[:, federated.EDUCATION_COLUMN])
    postgraduate = education >= 14
    reference = learning.train_logistic(X, y)
    baseline = np.mean(((X_test @ reference) > 0)[postgraduate] == (y_test[postgraduate] == 1))

    def loss(with_noise: bool, longer: float) -> float:
        correct = []
        for n_hat, eta in zip(noisy_n, step):
            theta = learning.make_initial_theta()
            eta = min(learning.DEFAULT_LEARNING_RATE, longer * eta)
            for _ in range(10):
                residual = 1 / (1 + np.exp(-(X @ theta))) - y
                norms = np.abs(residual) * np.linalg.norm(X, axis=1)
                total = X.T @ (residual * np.minimum(1.0, 1.0 / np.maximum(norms, 1e-300)))
                if with_noise:
                    total = total + noise.normal(0.0, sigma, size=total.shape)
                theta = theta - eta * total / n_hat
            correct.append(((X_test @ theta) > 0)[postgraduate] == (y_test[postgraduate] == 1))
        return 100 * (baseline - np.mean(correct))

    return {"no_noise_same_step": loss(False, 1.0), "noise_four_times_the_step": loss(True, 4.0)}


@lru_cache(maxsize=None)
def postgraduate_losses_over_partitions(partitions=30) -> np.ndarray:
    """Postgraduates' loss (points) at ε = 0,3 with the slide's measurement over many partitions of the census."""
    losses = []
    for seed in range(partitions):
        groups = federated.measure_subgroup_accuracy(census(), epsilon=0.3, rng=np.random.default_rng(seed))
        losses.append(100 * (groups["nonprivate"][4] - groups["private"][4]))
    return np.array(losses)


# ------------------------------------------------------------------ claims


@dataclass(frozen=True)
class Claim:
    text: str
    compute: Callable[[], float]
    shown: float
    tolerance: float


def claim(text, compute, shown, tolerance=None) -> Claim:
    if tolerance is None:
        decimals = len(str(shown).split(".")[1]) if "." in str(shown) else 0
        tolerance = 0.5 * 10 ** (-decimals)
    return Claim(text, compute, shown, tolerance)


CLAIMS = [
    # El ejemplo del hospital
    claim(r"$3\varepsilon = 1{,}5$", lambda: accounting.sequential_composition([0.5] * 3), 1.5),
    claim(r"$b = \Delta f/\varepsilon = 1/0{,}5 = 2$", lambda: mechanisms.laplace_scale(sensitivity=1, epsilon=0.5), 2),
    claim(r"\le e^{0{,}5} \approx 1{,}65", lambda: mechanisms.laplace_density_ratio_bound(epsilon=0.5), 1.65),
    # E|Lap(2)| = 2: 400 000 seeded draws have standard error 2/√400 000 ≈ 0,003; ±0,02 is six of them.
    claim(r"$E|\mathrm{Lap}(2)| = 2$",
          lambda: float(np.abs(mechanisms.add_laplace_noise(np.zeros(400_000), scale=2.0,
                                                            rng=np.random.default_rng(1))).mean()), 2, 0.02),
    claim("unos ±2 pacientes sobre 42, cerca del 5 %", lambda: 100 * 2 / 42, 5),
    # The average of three Lap(2) releases, published alone: the sum of three Lap(b) has density
    # e^{−|x|/b}(3b² + 3b|x| + x²)/(16b³), so far in the tail the log-ratio between sums shifted by
    # 3 (one person in each of the three counts) tends to 3/b = 1,5.
    claim(r"la razón tiende a $e^{1{,}5}$ en las colas", lambda: tail_log_ratio_of_three_laplace_sums(), 1.5, 0.05),
    claim(r"la franja se abre a $e^{2} \approx 7{,}4$", lambda: math.exp(2), 7.4),
    claim("el error cae a ±0,5", lambda: mechanisms.laplace_scale(sensitivity=1, epsilon=2), 0.5),
    # FedAvg
    claim("hay un hospital de 7 pacientes y uno de 1274", lambda: hospital_sizes().min(), 7),
    claim("hay un hospital de 7 pacientes y uno de 1274", lambda: hospital_sizes().max(), 1274),
    claim("un hospital por nivel educativo, de 7 a 1274 pacientes", lambda: len(hospital_sizes()), 16),
    claim("Dos repartos de las mismas 4000 personas de entrenamiento", lambda: hospital_sizes().sum(), 4000),
    claim(r"la diferencia es del orden de $10^{-16}$", lambda: max(equivalence_difference(), 1e-16) * 1e16, 1, 4),
    claim("ya está a menos de dos puntos del modelo centralizado",
          lambda: 100 * (splits()["nonprivate"] - splits()["iid"].min()), 1, 0.99),
    claim("la primera ronda queda cerca de 78 %", lambda: 100 * splits()["non_iid"][:, 0].mean(), 78),
    claim("la peor ronda de las cinco corridas cae a la clase mayoritaria",
          lambda: 100 * (splits()["non_iid"].min() - splits()["majority"]), 0, 1),
    claim("de 10 rondas con E = 1 a una sola con E = 10", lambda: epochs()["rounds_iid"][0], 10),
    claim("de 10 rondas con E = 1 a una sola con E = 10", lambda: epochs()["rounds_iid"][3], 1),
    claim("Las rondas no bajan de 9 por más que se entrene localmente", lambda: min(epochs()["rounds_non_iid"]), 9),
    claim("y la no IID apenas baja a 8", lambda: experiments.run_local_epochs(
        rng=np.random.default_rng(0), epochs_grid=(20,))["rounds_non_iid"][0], 8),
    claim("ya no tiene dónde bajar", lambda: experiments.run_local_epochs(
        rng=np.random.default_rng(0), epochs_grid=(20,))["rounds_iid"][0], 1),
    claim("Con E = 1 las dos curvas empiezan juntas",
          lambda: epochs()["rounds_iid"][0] - epochs()["rounds_non_iid"][0], 0),
    # Fugas
    claim("con z = 1 el error ya es de más de diez años", lambda: leakage()["noisy_error"], 15, 5),
    claim("con 2 personas todavía se parece a Karen, con 100 ya no", lambda: leakage()["batch_error"][1], 1, 1),
    claim("con 2 personas todavía se parece a Karen, con 100 ya no", lambda: leakage()["batch_error"][3], 15, 5),
    claim("es (ε, δ)-DP solo con ε ≈ 4,4, el ε exacto",
          lambda: accounting.gaussian_exact_epsilon(delta=DELTA, sigma=1.0), 4.4),
    claim("Rényi da 5,3", lambda: accounting.gaussian_rdp_epsilon(sigma=1.0, steps=1, delta=DELTA)[0], 5.3),
    # Agregación segura
    claim(r"la resolución de la codificación, $2^{-16}$", lambda: 1 / federated.FIXED_POINT_SCALE, 2**-16, 0),
    # DP sobre el agregado
    claim("con el 5 % de ε. Después", lambda: 100 * learning.DEFAULT_COUNT_SHARE, 5),
    claim("el 5 % de ε, y cada ronda divide", lambda: 100 * learning.DEFAULT_COUNT_SHARE, 5),
    claim("con 400 clínicas para repartirlo", lambda: units()["units"]["clinics"], 400),
    claim(r"Con 16 hospitales, el ruido $\sigma = zS$ debe tapar a un hospital entero",
          lambda: units()["units"]["hospitals"], 16),
    # The hospitals stay at the majority class because of the server's step, not because of the noise.
    claim(r"queda en milésimas: 0,003 con ε = 1 y 0,03 con ε = 10 (con $\hat K = 16$)",
          lambda: hospital_server_step(1.0), 0.003),
    claim(r"queda en milésimas: 0,003 con ε = 1 y 0,03 con ε = 10 (con $\hat K = 16$)",
          lambda: hospital_server_step(10.0), 0.03),
    claim("no queda señal para ningún ε de la figura, ni con ε = 10",
          lambda: 100 * np.max(np.abs(units()["hospitals"].mean(axis=0) - units()["majority"])), 0, 1),
    claim("ni con ε = 10", lambda: max(units()["epsilons"]), 10),
    # La cuenta de las rondas: the ledger's lines and what Rényi makes of them.
    claim("el conteo de clientes (Laplace, ε = 0,05)", lambda: rounds_ledger().releases[0].epsilon, 0.05),
    claim("las 10 sumas recortadas (gaussiano, ε = 0,095", lambda: rounds_ledger().releases[1].epsilon, 0.095),
    claim("δ = 10⁻⁶ cada una", lambda: 1e6 * rounds_ledger().releases[1].delta, 1),
    claim("En total, ε = 1 y δ = 10⁻⁵", lambda: rounds_ledger().total()[0], 1),
    claim("dice que costaron menos de 0,4",
          lambda: rounds_ledger().total(theorem="rdp", delta=DELTA)[0], 0.3, 0.1),
    claim("súmenle 0,05 a cada columna", lambda: rounds_ledger().releases[0].epsilon, 0.05),
    claim("con 4000 teléfonos", lambda: len(federated.split_census_task(census(), rng=np.random.default_rng(0))
                                            ["y_train"]), 4000),
    claim("con ruido de escala 20", lambda: rounds_ledger().releases[0].noise, 20),
    claim("las mismas 10 rondas con ε = 0,95 se consiguen con un ruido unas 3,4 veces menor",
          lambda: z_for() / z_for("rdp"), 3.4),
    claim("con su conversión mejorada da aún menos (0,20 con 10 rondas)",
          lambda: accounting.gaussian_rdp_epsilon(sigma=z_for(), steps=10, delta=DELTA, conversion="tight")[0], 0.20),
    claim("Unas 520 con 10 por semana", lambda: 52 * 10, 520),
    # Errores conceptuales y operación
    claim("El hospital: tres consultas, ε = 1,5", lambda: accounting.sequential_composition([0.5] * 3), 1.5),
    claim("Para el conteo, ε = 0,1 y un error enorme; para la suma, ε = 9", lambda: 1 / 10, 0.1),
    claim("Para el conteo, ε = 0,1 y un error enorme; para la suma, ε = 9", lambda: 90 / 10, 9),
    claim("un error típico del 17 % del valor", lambda: 100 * 10 / doctorates(), 17),
    claim("lo que pide el conteo para un ε de 0,5", lambda: mechanisms.laplace_scale(sensitivity=1, epsilon=0.5), 2),
    claim("lo que pide la suma", lambda: mechanisms.laplace_scale(sensitivity=90, epsilon=0.5), 180),
    claim(r"$e^{9} \approx 8103$", lambda: math.exp(9), 8103),
    claim(r"$e^{10} \approx 22\,026$", lambda: math.exp(10), 22026),
    claim("licenciatura y posgrado pierden más de diez puntos cada uno", lambda: 100 * min(loss(3), loss(4)), 15, 5),
    claim("mientras «sin bachillerato» no pierde nada", lambda: 100 * loss(0), 0, 0.05),
    claim("La exactitud total baja menos de 4 puntos; la de posgrado, 19.", lambda: 100 * loss(-1), 3, 1),
    claim("La exactitud total baja menos de 4 puntos; la de posgrado, 19.", lambda: 100 * loss(4), 19),
    claim("La exactitud total baja unos pocos puntos", lambda: 100 * loss(-1), 3, 2),
    claim("la brecha se cierra casi del todo", lambda: 100 * max(loss(3, 1.0), loss(4, 1.0)), 2, 1),
    # What makes the disparity: the short private step, not the zero-mean noise.
    claim("con el mismo paso y sin ruido, posgrado pierde 14 puntos",
          lambda: subgroup_counterfactuals()["no_noise_same_step"], 14),
    claim("con el ruido y un paso cuatro veces mayor, unos 3",
          lambda: subgroup_counterfactuals()["noise_four_times_the_step"], 3, 0.75),
    claim("con 30 particiones del censo, posgrado pierde entre 4 y 31 puntos",
          lambda: postgraduate_losses_over_partitions().min(), 4),
    claim("con 30 particiones del censo, posgrado pierde entre 4 y 31 puntos",
          lambda: postgraduate_losses_over_partitions().max(), 31),
    claim("con 30 particiones del censo, posgrado pierde entre 4 y 31 puntos",
          lambda: len(postgraduate_losses_over_partitions()), 30),
    # The FedAvg exercise: with the weights n_k/n the two rows agree up to the doubles' rounding.
    claim(r"la diferencia es del orden de $10^{-15}$", lambda: fedavg_exercise_difference() * 1e15, 1, 4),
    # La afirmación permitida de la evaluación (3 modelos, the lab's measurement with the slide's seed)
    claim("con (ε, δ) = (5, 10⁻⁵) en 10 rondas, proteger a cada persona deja la exactitud media de 3 modelos "
          "a menos de 2 puntos",
          lambda: 100 * (units()["nonprivate"]
                         - experiments.run_privacy_units(rng=np.random.default_rng(0), epsilons=(5,))["persons"].mean()),
          1, 1),
]


@pytest.mark.parametrize("item", CLAIMS, ids=[c.text[:60] for c in CLAIMS])
def test_claim_is_written_on_the_slide(item):
    assert item.text in slide_text(), f"no aparece en {CHAPTER}: {item.text}"


@pytest.mark.parametrize("item", CLAIMS, ids=[c.text[:60] for c in CLAIMS])
def test_claim_is_what_the_library_computes(item):
    value = float(item.compute())
    assert abs(value - item.shown) <= item.tolerance, f"{item.text}: la diapositiva dice {item.shown}, dpdeck {value}"


# --------------------------------------------------------- cells' numbers


CELL_OUTPUTS = [
    ("hospital-completo", "b = Δf/ε = 2\n"),
    ("hospital-completo", "razón máxima: 1,65"),
    ("hospital-completo", f"error típico: ±2 = 4,8{NBSP}% de 42"),
    ("hospital-completo", "tres consultas: ε = 1,5"),
    ("fedavg-no-iid", f"IID     1.ª ronda 82,6{NBSP}%"),
    ("fedavg-no-iid", f"no IID  1.ª ronda 78,3{NBSP}%  peor ronda 75,7{NBSP}%"),
    ("fedavg-epocas", "rondas IID:    [10; 5; 2; 1]"),
    ("fedavg-epocas", "rondas no IID: [10; 14; 9; 9]"),
    # The exercise's starter: the plain mean is not the centralized step.
    ("ejercicio-fedavg", "FedAvg:       [0,039; 0,305; 1,722]"),
    ("ejercicio-fedavg", "centralizado: [0,017; 0,437; 0,698]"),
    # The masks' starter: every update hidden, but the sum drags the masks along.
    ("ejercicio-mascaras", "el hospital 0 envía: [−1050,1; 332,6; −307,3]"),
    ("ejercicio-mascaras", "suma real:   [0,195; 0,628; −0,500]"),
    ("ejercicio-mascaras", "suma segura: [1546,448; 1014,500; −608,327]"),
    ("fuga-karen", "edad:      34\n"),
    ("fuga-karen", "educación: 13\n"),
    ("fuga-karen", "¿ingreso alto? sí"),
    ("fuga-karen", "en el censo: 34 13 sí"),
    ("fuga-lotes", "en un lote de   2:   1,1\n"),
    ("fuga-lotes", "en un lote de 100:  18,0\n"),
    ("fuga-lotes", "sola, con recorte y ruido:  18,2\n"),
    ("agregacion-segura", "suma real:   [0,26; 0,25; 0,16]"),
    ("agregacion-segura", "suma segura: [0,26; 0,25; 0,16]"),
    ("agregacion-caida", "suma real:       [0,37; −0,1; 0,14]"),
    ("agregacion-caida", "suma recuperada: [0,37; −0,1; 0,14]"),
    ("dp-agregado", f"personas (cap. 5)  ε = 1: 82,4{NBSP}%"),
    ("dp-agregado", f"16 hospitales      ε = 1: 76,0{NBSP}%"),
    ("dp-rondas", "conteo de clientes"),
    ("dp-rondas", "total (composición secuencial): ε = 1, δ = 10⁻⁵"),
    ("dp-rondas", "el mismo libro con Rényi (conversión clásica): ε = 0,32"),
    ("dp-rondas", "z = σ/S = 55,8"),
    ("dp-por-vida", "z = 55,8"),
    ("dp-por-vida", "    10       0,95       1,62       0,27"),
    ("dp-por-vida", "  1000     109,48      30,57       2,88"),
    ("dp-por-vida", "las 10 rondas piden z = 16,3"),
    ("mas-ruido", f"personas con doctorado       1        0,1      17,24{NBSP}%"),
    ("mas-ruido", "suma de todas las edades    90          9"),
    ("utilidad-subgrupos", f"sin bachillerato               130           1{NBSP}%   99,2{NBSP}%   99,2{NBSP}%"),
    ("utilidad-subgrupos", f"posgrado                        64          75{NBSP}%   78,1{NBSP}%   59,1{NBSP}%"),
    ("utilidad-subgrupos", f"total                         1000          24{NBSP}%   83,1{NBSP}%   79,3{NBSP}%"),
]


@pytest.mark.parametrize("cell_id, expected", CELL_OUTPUTS, ids=[f"{c}: {e}" for c, e in CELL_OUTPUTS])
def test_cell_prints_the_number_the_slide_uses(cell_id, expected):
    assert expected in native_output(cell_id)


def test_cells_print_what_the_library_measures():
    # The leakage cell prints the medians measure_leakage returns, and the reconstruction is exact.
    result = leakage()
    assert result["alone"] == {"age": 34.0, "education_num": 13.0, "high_income": True} == result["true"]
    assert "ruido: " + format_number(result["noisy_error"], 1).rjust(5) in native_output("fuga-lotes")
    assert format_vector(epochs()["rounds_non_iid"]) in native_output("fedavg-epocas")


def test_every_chapter_cell_is_listed():
    assert {cell_id for cell_id, _ in CELL_OUTPUTS} == set(chapter_cells())


# ------------------------------------------------- the chapter's DP story


def test_dp_fedavg_treats_the_number_of_clients_as_chapter_5_treats_n():
    # The slide body says it, the notes explain it, and the cell's ledger shows the count first.
    body = slide("dp-agregado").source.split("::: notes")[0]
    assert "cuántos clientes hay es un dato: se estima en privado" in " ".join(body.split())
    notes = " ".join(slide("dp-agregado").source.split("::: notes")[1].split())
    for words in ("agregan o quitan un cliente entero", r"\hat K = K + \mathrm{Lap}(1/\varepsilon_K)",
                  "un denominador fijo", "con probabilidad $C$", "hasta $2S$"):
        assert words in notes, words
    first = rounds_ledger().releases[0]
    assert first.what == "conteo de clientes" and first.mechanism == "laplace"
    assert rounds_ledger().total() == pytest.approx((1.0, DELTA), rel=1e-12)


def test_the_rounds_cell_prints_the_librarys_ledger():
    cell = chapter_cells()["dp-rondas"]
    assert "federated.calibrate_rounds(" in cell and "print(libro)" in cell
    assert str(rounds_ledger()) in native_output("dp-rondas")
    assert "compute_noise_multiplier(epsilon=0.95" in chapter_cells()["dp-por-vida"]


# --------------------------------------------------------------- structure


def test_the_chapter_opens_with_a_chapter_slide_and_is_on_the_roadmap():
    first = chapter_slides()[0]
    assert first.attributes == {"class": "capitulo", "id": "cap-federado"}
    assert first.title == "6 · Aprendizaje federado"
    roadmap = " ".join(s.source for s in deck().slides if s.file.name == "00-portada.md")
    assert "6. **Aprendizaje federado**" in roadmap
    assert (SLIDES / "07-cierre.md").exists() and not (SLIDES / "06-cierre.md").exists()


def test_the_sequence_diagram_is_drawn_not_coded():
    diagram = slide("ronda-completa")
    assert "<svg" in diagram.source and not diagram.cells and "```" not in diagram.source
    for message in ("modelo global w", "E épocas locales", "actualización enmascarada (SecAgg)", "ruido DP",
                    "listo para la ronda t + 1"):
        assert message in diagram.source, message


def test_the_class_pages_averaging_remark_is_corrected():
    text = slide_text()
    assert "promediarlas después no gasta nada más: es posprocesamiento" in text
    assert "lo que triplica ε es publicar las tres respuestas" in text


def test_the_closing_summary_keeps_the_lectures_five_rows_and_names_chapter_6_apart():
    closing = slide("cinco-ideas")
    assert closing.title == "Las cinco ideas en una página"
    rows = [line for line in closing.source.split("\n") if re.match(r"\| \d\. ", line)]
    assert [row.split("|")[1].strip()[:2] for row in rows] == ["1.", "2.", "3.", "4.", "5."]
    assert "Y de la página de clase, el capítulo 6: **aprendizaje federado**" in closing.source


def test_the_closing_references_cite_the_chapters_sources():
    references = slide("referencias").source + slide("referencias-ataques-federado").source
    for source in ("McMahan, H. B. et al. (2017)", "Bonawitz, K. et al. (2017)", "Zhu, L., Liu, Z. y Han, S. (2019)",
                   "Mironov, I. (2012)", "Canonne, C., Kamath, G. y Steinke, T. (2020)",
                   "Dwork, C., McSherry, F., Nissim, K. y Smith, A. (2006)"):
        assert source in references, source
