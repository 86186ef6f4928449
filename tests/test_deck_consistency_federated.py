"""Chapter 6 (06-federado.md): the numbers its slides state are the numbers dpdeck computes.

Same three kinds of checks as test_deck_consistency.py, for this chapter:

* ``CLAIMS``: a text written on a slide (prose or notes) and the value dpdeck
  computes for it, with the tolerance the written number implies;
* ``CELL_OUTPUTS``: each cell that prints a number the slide talks about is run
  natively, as the build pre-renders it, and its output contains that number;
* the chapter's structure: a chapter slide, the drawn (not coded) sequence
  diagram, the roadmap entry and the closing chapter moved to 07.
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

from dpdeck import accounting, federated, mechanisms
from dpdeck.cellrun import run_cell
from dpdeck.data import KAREN_NAME, load_census

SLIDES = Path(__file__).resolve().parents[1] / "deck" / "slides"
CHAPTER = "06-federado.md"
CELL_PATTERN = re.compile(r"^```python ([^\n]*)\n(.*?)\n```", re.S | re.M)
DELTA = 1e-5


@lru_cache(maxsize=None)
def slide_text(name: str = CHAPTER) -> str:
    """The slide file as a reader sees it: line breaks folded to spaces, no inline span tags."""
    text = (SLIDES / name).read_text(encoding="utf-8")
    text = re.sub(r"</?span[^>]*>", "", text)
    return re.sub(r"\s+", " ", text)


@lru_cache(maxsize=None)
def chapter_cells() -> dict:
    source = (SLIDES / CHAPTER).read_text(encoding="utf-8")
    cells = {}
    for match in CELL_PATTERN.finditer(source):
        options = dict(word.split("=", 1) for word in match.group(1).split())
        cells[options["id"]] = match.group(2)
    return cells


@lru_cache(maxsize=None)
def native_output(cell_id: str) -> str:
    result = run_cell(chapter_cells()[cell_id], cell_id=cell_id)
    errors = [output for output in result["outputs"] if output["type"] == "error"]
    assert result["status"] == "done" and not errors, errors
    return "".join(output["text"] for output in result["outputs"] if output["type"] in ("stream", "value"))


# ------------------------------------------- the cells' experiments, once


@lru_cache(maxsize=None)
def census():
    return load_census()


@lru_cache(maxsize=None)
def splits():
    return federated.compare_splits(census(), clients=16, client_fraction=0.25, local_epochs=5, rounds=20,
                                    rng=np.random.default_rng(0))


@lru_cache(maxsize=None)
def epochs():
    return federated.compare_local_epochs(census(), epochs_grid=[1, 2, 5, 10, 20], within=0.005, max_rounds=30,
                                          rng=np.random.default_rng(0))


@lru_cache(maxsize=None)
def leakage():
    return federated.measure_leakage(census(), person=KAREN_NAME, batch_sizes=[1, 2, 10, 100],
                                     noise_multiplier=1.0, trials=200, rng=np.random.default_rng(0))


@lru_cache(maxsize=None)
def units():
    return federated.compare_privacy_units(census(), epsilons=[0.05, 0.1, 0.2, 0.5, 1, 2, 5],
                                           rng=np.random.default_rng(0))


@lru_cache(maxsize=None)
def subgroups():
    return federated.measure_subgroup_accuracy(census(), epsilon=0.3, rng=np.random.default_rng(0))


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
    from dpdeck import learning

    return float(np.max(np.abs(run["theta"] - learning.train_logistic(X, y, iterations=10))))


def z_for(epsilon=1.0, accountant="sequential") -> float:
    return federated.compute_noise_multiplier(epsilon=epsilon, delta=DELTA, rounds=10, accountant=accountant)


def rounds_spent(rounds: int) -> dict:
    return federated.account_rounds(noise_multiplier=z_for(), rounds=rounds, delta=DELTA)


def loss(band: int) -> float:
    groups = subgroups()
    return float(groups["nonprivate"][band] - groups["private"][band])


def doctorates() -> int:
    return int(np.sum(census().education == "Doctorado"))


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
    claim(r"$E|\mathrm{Lap}(2)| = 2$",
          lambda: float(np.abs(np.random.default_rng(1).laplace(0, 2, 400_000)).mean()), 2, 0.02),
    claim("unos ±2 pacientes sobre 42, cerca del 5 %", lambda: 100 * 2 / 42, 5),
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
    claim("Las rondas no bajan de 8 por más que se entrene localmente", lambda: min(epochs()["rounds_non_iid"]), 8),
    # Fugas
    claim("con z = 1 el error ya es de más de diez años", lambda: leakage()["noisy_error"], 15, 5),
    claim("con 2 personas todavía se parece a Karen, con 100 ya no", lambda: leakage()["batch_error"][1], 1, 1),
    claim("con 2 personas todavía se parece a Karen, con 100 ya no", lambda: leakage()["batch_error"][3], 15, 5),
    # Agregación segura
    claim(r"la resolución de la codificación, $2^{-16}$", lambda: 1 / federated.FIXED_POINT_SCALE, 2**-16, 0),
    # DP sobre el agregado
    claim("con 400 clínicas para repartirlo", lambda: units()["units"]["clinics"], 400),
    claim("Con 16 hospitales, el ruido debe tapar a un hospital entero", lambda: units()["units"]["hospitals"], 16),
    claim("no queda señal para ningún ε",
          lambda: 100 * np.max(np.abs(units()["hospitals"].mean(axis=0) - units()["majority"])), 0, 1),
    claim("Rényi dice que esas mismas 10 rondas costaron menos de 0,3", lambda: rounds_spent(10)["rdp"], 0.25, 0.05),
    claim("se consigue con un ruido unas tres veces menor", lambda: z_for() / z_for(accountant="rdp"), 3, 0.5),
    claim("Unas 520 con 10 por semana", lambda: 52 * 10, 520),
    # Errores conceptuales y operación
    claim("El hospital: tres consultas, ε = 1,5", lambda: accounting.sequential_composition([0.5] * 3), 1.5),
    claim("Para el conteo, ε = 0,1 y un error enorme; para la suma, ε = 9", lambda: 1 / 10, 0.1),
    claim("Para el conteo, ε = 0,1 y un error enorme; para la suma, ε = 9", lambda: 90 / 10, 9),
    claim("un error típico del 17 % del valor", lambda: 100 * 10 / doctorates(), 17),
    claim(r"$e^{9} \approx 8103$", lambda: math.exp(9), 8103),
    claim(r"$e^{10} \approx 22\,026$", lambda: math.exp(10), 22026),
    claim("licenciatura y posgrado pierden más de diez puntos cada uno", lambda: 100 * min(loss(3), loss(4)), 12.5, 2.5),
    claim("mientras «sin bachillerato» no pierde nada", lambda: 100 * loss(0), 0, 0.05),
    claim("La exactitud total baja menos de 4 puntos; la de posgrado, 15.", lambda: 100 * loss(-1), 3, 1),
    claim("La exactitud total baja menos de 4 puntos; la de posgrado, 15.", lambda: 100 * loss(4), 15),
    claim("La exactitud total baja unos pocos puntos",
          lambda: 100 * loss(-1), 3, 2),
    # La afirmación permitida de la evaluación
    claim("con ε = 5 en 10 rondas, proteger a cada persona deja la exactitud a menos de 2 puntos",
          lambda: 100 * (units()["nonprivate"] - units()["central"][:, -1].mean()), 1, 1),
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
    ("hospital-completo", "b = Δf/ε = 2.0"),
    ("hospital-completo", "razón máxima: 1.65"),
    ("hospital-completo", "error típico: ±2.0 = 4.8% de 42"),
    ("hospital-completo", "tres consultas: ε = 1.5"),
    ("fedavg-no-iid", "IID     1.ª ronda 82.6%"),
    ("fedavg-no-iid", "no IID  1.ª ronda 78.3%  peor ronda 75.7%"),
    ("fedavg-epocas", "rondas IID:    [10, 5, 2, 1, 1]"),
    ("fedavg-epocas", "rondas no IID: [10, 14, 9, 9, 8]"),
    ("fuga-karen", "edad:      34.0"),
    ("fuga-karen", "educación: 13.0"),
    ("fuga-karen", "¿ingreso alto? True"),
    ("fuga-karen", "en el censo: 34 13 True"),
    ("fuga-lotes", "en un lote de 100:  18.0 años"),
    ("fuga-lotes", "sola, con recorte y ruido:  18.2 años"),
    ("agregacion-segura", "suma real:   [0.26 0.25 0.16]"),
    ("agregacion-segura", "suma segura: [0.26 0.25 0.16]"),
    ("agregacion-caida", "suma real:       [ 0.37 -0.1   0.14]"),
    ("agregacion-caida", "con las semillas: [ 0.37 -0.1   0.14]"),
    ("dp-agregado", "personas (cap. 5)  con ε = 1: 82.5%"),
    ("dp-agregado", "16 hospitales      con ε = 1: 76.0%"),
    ("dp-rondas", "z = 53.0"),
    ("dp-rondas", "    10        1.00      1.71   0.29"),
    ("dp-rondas", "Rényi: ε = 1 en 10 rondas con z = 15.5"),
    ("mas-ruido", "personas con doctorado       1        0.1       17.24%"),
    ("mas-ruido", "suma de todas las edades    90        9.0"),
    ("utilidad-subgrupos", "sin bachillerato               130            1%    99.2%    99.2%"),
    ("utilidad-subgrupos", "posgrado                        64           75%    78.1%    63.0%"),
]


@pytest.mark.parametrize("cell_id, expected", CELL_OUTPUTS, ids=[f"{c}: {e}" for c, e in CELL_OUTPUTS])
def test_cell_prints_the_number_the_slide_uses(cell_id, expected):
    assert expected in native_output(cell_id)


def test_cells_print_what_the_lab_measures():
    # The lab and the cells run the same experiments: Karen's reconstruction in the cell is the
    # lab's, and the leakage cell prints the medians measure_leakage returns.
    result = leakage()
    assert result["alone"] == {"age": 34.0, "education_num": 13.0, "high_income": True} == result["true"]
    assert f"{result['noisy_error']:5.1f} años" in native_output("fuga-lotes")
    epochs_result = epochs()
    assert str(epochs_result["rounds_non_iid"]) in native_output("fedavg-epocas")


def test_every_chapter_cell_is_listed():
    assert {cell_id for cell_id, _ in CELL_OUTPUTS} == set(chapter_cells())


# --------------------------------------------------------------- structure


def test_the_chapter_opens_with_a_chapter_slide_and_is_on_the_roadmap():
    source = (SLIDES / CHAPTER).read_text(encoding="utf-8")
    assert source.startswith('<!-- .slide: class="capitulo" id="cap-federado" -->\n# 6 · Aprendizaje federado')
    assert "6. **Aprendizaje federado**" in (SLIDES / "00-portada.md").read_text(encoding="utf-8")
    assert (SLIDES / "07-cierre.md").exists() and not (SLIDES / "06-cierre.md").exists()


def test_the_sequence_diagram_is_drawn_not_coded():
    source = (SLIDES / CHAPTER).read_text(encoding="utf-8")
    slide = next(part for part in re.split(r"\n---\n", source) if 'id="ronda-completa"' in part)
    assert "<svg" in slide and "```" not in slide
    for message in ("modelo global w", "E épocas locales", "actualización enmascarada (SecAgg)", "ruido DP",
                    "listo para la ronda t + 1"):
        assert message in slide, message


def test_the_class_pages_averaging_remark_is_corrected():
    text = slide_text()
    assert "promediarlas después no gasta nada más: es post-procesamiento" in text
    assert "Lo que triplica ε es publicar las tres" in text
