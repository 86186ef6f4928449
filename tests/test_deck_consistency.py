"""The numbers written on the slides are the numbers the library and the cells compute.

Three kinds of checks hold the deck together:

* ``CLAIMS``: (slide file, text as written, what dpdeck computes, tolerance).
  The text must be in the slide source and the computed value must round to
  the number the text shows. Change a parameter in the library or a number on
  a slide and one of these fails.
* ``CELL_OUTPUTS``: each cell that prints a number the slide talks about is run
  natively (``dpdeck.cellrun.run_cell``, as the build does) and its output must
  contain that number, as Python prints it.
* Shape rules every live cell follows: fixed seeds, parameters at the top, short
  enough to read on a projector, and the figures it declares.
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

from dpdeck import accounting, learning, mechanisms, queries
from dpdeck.cellrun import run_cell
from dpdeck.data import EDUCATION_LEVELS, KAREN_NAME, MAX_AGE, load_census

SLIDES = Path(__file__).resolve().parents[1] / "deck" / "slides"
CELL_PATTERN = re.compile(r"^```python ([^\n]*)\n(.*?)\n```", re.S | re.M)


# ------------------------------------------------------------------ sources


@lru_cache(maxsize=None)
def slide_text(name: str) -> str:
    """The slide file as a reader sees it: line breaks folded to spaces, no inline HTML tags."""
    text = (SLIDES / name).read_text(encoding="utf-8")
    text = re.sub(r"</?span[^>]*>", "", text)
    return re.sub(r"\s+", " ", text)


def cell_blocks():
    """(file name, options, source) of every Python cell in the slides, in reading order."""
    for path in sorted(SLIDES.glob("*.md")):
        for match in CELL_PATTERN.finditer(path.read_text(encoding="utf-8")):
            options = dict(word.split("=", 1) for word in match.group(1).split())
            yield path.name, options, match.group(2)


@lru_cache(maxsize=None)
def all_cells() -> dict:
    return {options["id"]: {"file": name, "source": source, **options} for name, options, source in cell_blocks()}


@lru_cache(maxsize=None)
def native_output(cell_id: str) -> str:
    """Text the cell prints when run natively, exactly as the build pre-renders it."""
    result = run_cell(all_cells()[cell_id]["source"], cell_id=cell_id)
    errors = [output for output in result["outputs"] if output["type"] == "error"]
    assert result["status"] == "done" and not errors, errors
    return "".join(output["text"] for output in result["outputs"] if output["type"] in ("stream", "value"))


# ------------------------------------------------- library computations


@lru_cache(maxsize=None)
def census():
    return load_census()


@lru_cache(maxsize=None)
def accountants_at_10k() -> dict:
    return accounting.compare_gaussian_accountants(sigma=20, steps=10_000, delta=1e-5, sensitivity=1)


def sequential_steps_within(epsilon: float) -> int:
    """How many σ = 20 Gaussian steps the sequential accounting fits in ``epsilon``."""
    steps = 1
    while accounting.gaussian_sequential_epsilon(sigma=20, steps=steps + 1, delta=1e-5) <= epsilon:
        steps += 1
    return steps


def sequential_sigma_for(epsilon: float, *, steps: int = 10_000, delta: float = 1e-5) -> float:
    """σ that makes ``steps`` Gaussian releases cost ``epsilon`` with sequential accounting."""
    return steps * math.sqrt(2 * math.log(1.25 * steps / delta)) / epsilon


def posterior_bound(epsilon: float, prior: float = 0.5) -> float:
    odds = math.exp(epsilon) * prior / (1 - prior)
    return odds / (1 + odds)


@lru_cache(maxsize=None)
def learning_curves():
    X, y = learning.make_dataset(census())
    epsilons = np.geomspace(0.02, 8, 12)
    utility = learning.privacy_utility_curve(X, y, epsilons=epsilons, rng=np.random.default_rng(0), repeats=10)
    grid = [1, 2, 3, 5, 8, 13, 20, 30, 50, 80, 130, 200]
    iterations = learning.iterations_curve(X, y, epsilon=0.5, iterations_grid=grid,
                                           rng=np.random.default_rng(0), repeats=10)
    return utility, iterations


@lru_cache(maxsize=None)
def slides_split() -> tuple:
    """The slides' train/test split of the census: (X_train, X_test, y_train, y_test), seed 0."""
    X, y = learning.make_dataset(census())
    return learning.train_test_split(X, y, rng=np.random.default_rng(0))


def nonprivate_test_accuracy() -> float:
    Xe, Xp, ye, yp = slides_split()
    return learning.accuracy(learning.train_logistic(Xe, ye), Xp, yp)


def clipped_gradient_sum_norm() -> float:
    """‖Σ clip_C(gᵢ)‖ at the public starting point, on the 4 000 training rows of the slides."""
    Xe, _, ye, _ = slides_split()
    gradients = learning.compute_gradients(learning.make_initial_theta(), Xe, ye)
    return float(np.linalg.norm(learning.clip_gradients(gradients, clip_norm=1.0).sum(axis=0)))


def majority_test_accuracy() -> float:
    return learning.majority_baseline(slides_split()[3])


# ------------------------------------------------------------------ claims


@dataclass(frozen=True)
class Claim:
    file: str
    text: str
    compute: Callable[[], float]
    shown: float
    tolerance: float

    @property
    def label(self) -> str:
        return f"{self.file}: {self.text}"


def claim(file, text, compute, shown, tolerance=None):
    if tolerance is None:
        # Half a unit of the last digit the slide shows.
        decimals = len(str(shown).split(".")[1]) if "." in str(shown) else 0
        tolerance = 0.5 * 10 ** (-decimals)
    return Claim(file, text, compute, shown, tolerance)


CLAIMS = [
    # El censo
    claim("00-portada.md", "censo sintético de 5.000 personas", lambda: len(census()), 5000),
    # Capítulo 1: el hospital, e^ε, el ataque con ruido
    claim("01-privacidad.md", r"$b = 1/0{,}5 = 2$",
          lambda: mechanisms.laplace_scale(sensitivity=1, epsilon=0.5), 2),
    claim("01-privacidad.md", r"\le e^{0{,}5} \approx 1{,}65",
          lambda: mechanisms.laplace_density_ratio_bound(epsilon=0.5), 1.65),
    # E|Lap(b)| = b, measured on 400 000 seeded draws: the standard error is
    # b/√400 000 ≈ 0,003, so ±0,02 is more than six standard errors.
    claim("01-privacidad.md", r"$E|\mathrm{Lap}(2)| = 2$",
          lambda: float(np.abs(np.random.default_rng(1).laplace(0, 2, 400_000)).mean()), 2, 0.02),
    claim("01-privacidad.md", "cerca de un 5 %", lambda: 100 * 2 / 42, 5),
    claim("01-privacidad.md", "con ε = 1, 73 %", lambda: 100 * posterior_bound(1.0), 73),
    claim("01-privacidad.md", r"tiene desviación estándar $\sqrt{2 \cdot 2 \cdot 2^2} = 4$",
          lambda: math.sqrt(2) * mechanisms.laplace_std(sensitivity=1, epsilon=0.5), 4),
    # Capítulo 2
    claim("02-propiedades.md", "tres consultas iguales con ε = 0,5 gastan ε = 1,5",
          lambda: accounting.sequential_composition([0.5] * 3), 1.5),
    claim("02-propiedades.md", "mil consultas con ε = 0,5 cuestan ε = 500",
          lambda: accounting.sequential_composition([0.5] * 1000), 500),
    claim("02-propiedades.md", r"$1/0{,}5 = 2$ personas sobre barras de cientos",
          lambda: mechanisms.laplace_scale(sensitivity=1, epsilon=0.5), 2),
    claim("02-propiedades.md", "barras de cientos",
          lambda: float(np.median(queries.histogram_counts(census().education, categories=EDUCATION_LEVELS))),
          200, 100),
    claim("02-propiedades.md", "Con mil publicaciones el error ronda 0,1",
          lambda: queries.measure_averaging_error(42, ks=[1000], epsilon=0.5, rng=np.random.default_rng(8),
                                                  trials=400)["error"][0], 0.1),
    # Capítulo 3
    claim("03-sensibilidad.md", "(sensibilidad $90$, la edad máxima)", lambda: float(census().age.max()), 90),
    claim("03-sensibilidad.md", "(sensibilidad $90$, la edad máxima)", lambda: float(MAX_AGE), 90),
    claim("03-sensibilidad.md", "cuesta ε = 0,2 en total",
          lambda: queries.choose_clipping_bound(census().capital_gain, epsilon=0.2,
                                                rng=np.random.default_rng(15)).epsilon_spent, 0.2),
    # Capítulo 4
    claim("04-aproximada.md", r"$\sqrt{2\ln(1{,}25/\delta)} \approx 4{,}8$",
          lambda: mechanisms.gaussian_sigma_factor(delta=1e-5), 4.8),
    claim("04-aproximada.md", r"$4{,}84/0{,}5 \approx 9{,}7$",
          lambda: mechanisms.gaussian_sigma(sensitivity=1, epsilon=0.5, delta=1e-5), 9.7),
    claim("04-aproximada.md", r"\approx 2{,}8$",
          lambda: mechanisms.laplace_std(sensitivity=1, epsilon=0.5), 2.8),
    claim("04-aproximada.md", "el factor solo crece a 6,8",
          lambda: mechanisms.gaussian_sigma_factor(delta=1e-10), 6.8),
    claim("04-aproximada.md", r"A partir de $k \approx 12$ componentes",
          lambda: queries.vector_crossover_k(delta=1e-5), 12),
    claim("04-aproximada.md", r"$k \approx 11{,}7$", lambda: math.log(1.25 / 1e-5), 11.7),
    claim("04-aproximada.md", r"$\sqrt{2}\sqrt{k}/4{,}84 \approx 290$",
          lambda: math.sqrt(2) * 1000 / mechanisms.gaussian_sigma_factor(delta=1e-5), 290, 5),
    claim("04-aproximada.md", r"$k \approx 8\ln(1/\delta') \approx 92$", lambda: 8 * math.log(1e5), 92),
    claim("04-aproximada.md", r"$2\sqrt{2\ln(1/\delta')} \approx 9{,}6$",
          lambda: 2 * math.sqrt(2 * math.log(1e5)), 9.6),
    claim("04-aproximada.md", "Con n = 5.000, 1/n = 2·10⁻⁴",
          lambda: 1e4 * queries.random_person_delta(n=len(census())), 2),
    claim("04-aproximada.md", "δ = 10⁻⁵ es veinte veces menor que 1/n",
          lambda: queries.random_person_delta(n=len(census())) / 1e-5, 20),
    claim("04-aproximada.md", "≈ 3236, ≈ 1444 y ≈ 36,5", lambda: accountants_at_10k()["sequential"], 3236),
    claim("04-aproximada.md", "≈ 3236, ≈ 1444 y ≈ 36,5", lambda: accountants_at_10k()["advanced"], 1444),
    claim("04-aproximada.md", "≈ 3236, ≈ 1444 y ≈ 36,5", lambda: accountants_at_10k()["rdp"], 36.5),
    claim("04-aproximada.md", r"de $\varepsilon \approx 3236$ a $\approx 36$",
          lambda: accountants_at_10k()["sequential"], 3236),
    claim("04-aproximada.md", r"de $\varepsilon \approx 3236$ a $\approx 36$",
          lambda: accountants_at_10k()["rdp"], 36, 0.5),
    claim("04-aproximada.md", "un mínimo en α ≈ 1,96, donde ε ≈ 36,5",
          lambda: accounting.gaussian_rdp_optimal_alpha(sigma=20, steps=10_000, delta=1e-5), 1.96),
    claim("04-aproximada.md", "apenas 126 pasos",
          lambda: sequential_steps_within(accountants_at_10k()["rdp"]), 126),
    claim("04-aproximada.md", "unas 89 veces mayor",
          lambda: sequential_sigma_for(accountants_at_10k()["rdp"]) / 20, 89),
    claim("04-aproximada.md", "(σ ≈ 1774 en vez de 20)",
          lambda: sequential_sigma_for(accountants_at_10k()["rdp"]), 1774),
    claim("03-sensibilidad.md", "cerca de b ≈ 16.000",
          lambda: queries.measure_clipping_error(census().capital_gain, bounds=np.geomspace(100, 1_000_000, 41),
                                                 epsilon=0.01, rng=np.random.default_rng(14),
                                                 trials=300)["best_bound"], 16_000, 1_000),
    # Capítulo 5
    claim("05-aprendizaje.md", "unas 240 veces el de T = 1",
          lambda: learning.compute_noise_sigma(epsilon=0.5, delta=1e-5, iterations=200, clip_norm=1.0)
          / learning.compute_noise_sigma(epsilon=0.5, delta=1e-5, iterations=1, clip_norm=1.0), 240, 5),
    claim("05-aprendizaje.md", "gradientes recortados mide unos 670", clipped_gradient_sum_norm, 670, 10),
    claim("05-aprendizaje.md", "unos 76 % de acierto", lambda: 100 * majority_test_accuracy(), 76),
    claim("05-aprendizaje.md", "(unos 83 %)", lambda: 100 * nonprivate_test_accuracy(), 83),
    # Cierre
    claim("07-cierre.md", "se equivoca en unas 2 personas",
          lambda: mechanisms.laplace_scale(sensitivity=1, epsilon=0.5), 2),
    claim("07-cierre.md", "paga un factor ≈ 4,8", lambda: mechanisms.gaussian_sigma_factor(delta=1e-5), 4.8),
    claim("07-cierre.md", "gana desde 12 componentes", lambda: queries.vector_crossover_k(delta=1e-5), 12),
    claim("07-cierre.md", "la contabilidad de Rényi da ε ≈ 36", lambda: accountants_at_10k()["rdp"], 36, 0.5),
    claim("07-cierre.md", "donde la secuencial da ≈ 3236", lambda: accountants_at_10k()["sequential"], 3236),
]


@pytest.mark.parametrize("item", CLAIMS, ids=[c.label[:70] for c in CLAIMS])
def test_claim_is_written_on_its_slide(item):
    assert item.text in slide_text(item.file), f"no aparece en {item.file}: {item.text}"


@pytest.mark.parametrize("item", CLAIMS, ids=[c.label[:70] for c in CLAIMS])
def test_claim_is_what_the_library_computes(item):
    value = float(item.compute())
    assert abs(value - item.shown) <= item.tolerance, (
        f"{item.label}: la diapositiva dice {item.shown}, la biblioteca calcula {value}"
    )


# --------------------------------------------------------- cells' numbers


CELL_OUTPUTS = [
    ("ataque-karen", "¿Karen, ingreso alto? True"),
    ("tamano-e-epsilon", "  0.5       1.65      62.2%"),
    ("tamano-e-epsilon", "    1       2.72      73.1%"),
    ("laplace-hospital", "escala  b = Δf/ε = 2.0"),
    ("laplace-hospital", "cota    e^ε = 1.65"),
    ("densidades-laplace", "ε = 0.5   b = Δf/ε = 2.0"),
    ("post-procesamiento", "presupuesto gastado: ε = 0.5"),
    ("composicion-hospital", "presupuesto gastado: ε = 1.5"),
    ("composicion-paralela", "secuencial: 8.0"),
    ("composicion-paralela", "paralela:   0.5"),
    ("sensibilidad-conteo", "cambios posibles: [0, 1]"),
    # «una ganancia de capital de mil millones»
    ("suma-sin-cota", "cambio de la suma: 1 000 000 000"),
    ("elegir-b", "[0.2, 0.8] → ε total = 1.0"),
    ("persona-al-azar", "1e-5 es 20 veces menor que 1/n"),
    ("l1-contra-l2", "   100     100   10.00"),
    ("gaussiano-codigo", "√(2 ln(1.25/δ)) = 4.84"),
    ("gaussiano-codigo", "σ = Δ₂·4.84/ε = 9.69"),
    ("gaussiano-codigo", "√2·Δ₁/ε = 2.83"),
    ("laplace-gauss-escalar", "masa en ±2: Laplace 64%, Gauss 17%"),
    ("laplace-gauss-vectorial", "Gauss tiene menos ruido desde k = 12"),
    ("composicion-avanzada", " 10 000  100.00    9.60    5.80"),
    ("cuanto-se-gana", "secuencial: ε ≈ 3236"),
    ("cuanto-se-gana", "Rényi DP:   ε ≈ 36.5"),
    ("gradiente-suma", "gradientes por persona: (5000, 3)"),
    ("descenso-privado", "por paso: ε/T = 0.1"),
    ("costo-iterar", "mejor T: 5"),
    # «abajo de 0,2 el modelo colapsa hacia la clase mayoritaria» (unos 76 %)
    ("privacidad-utilidad", "exactitud media, %: [76 76 76 76 "),
]


@pytest.mark.parametrize("cell_id, expected", CELL_OUTPUTS, ids=[f"{c}: {e}" for c, e in CELL_OUTPUTS])
def test_cell_prints_the_number_the_slide_uses(cell_id, expected):
    assert expected in native_output(cell_id)


@pytest.mark.parametrize("cell_id", sorted(all_cells()))
def test_printed_numbers_follow_the_output_convention(cell_id):
    # Cells print as Python does (decimal point), but a whole number of five or
    # more digits is grouped with spaces (format_thousands: «4 588 248»), never
    # with «_» (code, not text) nor run together. Reals in a table keep Python's
    # digits («22026.47»).
    output = native_output(cell_id)
    assert re.findall(r"\d_\d", output) == []
    assert re.findall(r"(?<![\d.,])\d{5,}(?![\d.])", output) == []


def printed_number(cell_id: str, pattern: str) -> float:
    match = re.search(pattern, native_output(cell_id))
    assert match, f"la celda {cell_id} no imprime «{pattern}»"
    return float(match.group(1))


def test_histogram_error_is_about_two_people_per_bar():
    # Mean of 16 independent |Lap(2)|: mean 2, standard deviation 2/√16 = 0,5.
    error = printed_number("histograma-educacion", r"error medio: ([0-9.]+) personas por barra")
    assert abs(error - 2) <= 0.5
    assert r"$1/0{,}5 = 2$ personas" in slide_text("02-propiedades.md")


def test_attack_noise_is_several_units_burying_the_signal_of_one():
    std = printed_number("ataque-laplace", r"desv\. est\. del ruido: ([0-9.]+)")
    # 2 000 differences of two Lap(2): σ = 4, and its sample estimate is within 5 %.
    assert abs(std - 4) <= 0.2
    text = slide_text("01-privacidad.md")
    assert "La señal que busca el atacante vale 1; el ruido tiene desviación estándar de varias unidades" in text


def test_private_mean_spends_half_the_budget_on_each_query():
    ages = census().age.astype(float)
    library = queries.private_mean(ages, upper=90, epsilon=1.0, rng=np.random.default_rng(16))
    rng = np.random.default_rng(16)
    noisy_sum = mechanisms.laplace_mechanism(float(np.clip(ages, 0, 90).sum()), sensitivity=90,
                                             epsilon=0.5, rng=rng)
    noisy_count = mechanisms.laplace_mechanism(float(len(ages)), sensitivity=1, epsilon=0.5, rng=rng)
    assert library == pytest.approx(noisy_sum / noisy_count, rel=1e-12)
    source = all_cells()["promedio"]["source"]
    assert source.count("epsilon=epsilon / 2") == 2 and "edad_maxima = 90" in source
    assert r"$\varepsilon/2$ para la suma (sensibilidad $90$" in slide_text("03-sensibilidad.md")


def test_karen_is_one_person_in_the_census():
    assert int(np.sum(census().name == KAREN_NAME)) == 1
    assert f'"{KAREN_NAME}"' in all_cells()["ataque-karen"]["source"]


def test_clipping_error_has_an_interior_minimum_with_the_cells_parameters():
    bounds = np.geomspace(100, 1_000_000, 41)
    elbow = queries.measure_clipping_error(census().capital_gain, bounds=bounds, epsilon=0.1,
                                           rng=np.random.default_rng(14), trials=300)
    best = int(np.argmin(elbow["total"]))
    assert 0 < best < len(bounds) - 1
    assert "el error total tiene un mínimo interior" in slide_text("03-sensibilidad.md")


def test_privacy_utility_regimes_are_the_ones_the_slide_states():
    utility, _ = learning_curves()
    epsilons, mean = utility["epsilons"], utility["mean"]
    # "Arriba de ε ≈ 1 el costo es casi nulo": within 2 points of the non-private model.
    assert np.all(mean[epsilons >= 1] >= utility["nonprivate"] - 0.02)
    # "abajo de 0,2 el modelo colapsa hacia la clase mayoritaria": within 2 points of it.
    assert np.all(mean[epsilons < 0.2] <= utility["majority"] + 0.02)
    text = slide_text("05-aprendizaje.md")
    assert r"Arriba de $\varepsilon \approx 1$ el costo es casi nulo" in text
    assert "$0{,}2$ el modelo colapsa hacia la clase mayoritaria" in text


def test_iterating_at_fixed_epsilon_has_an_interior_optimum():
    _, iterations = learning_curves()
    grid = list(iterations["iterations"])
    assert grid[0] < iterations["best_iterations"] < grid[-1]
    assert "Hay un óptimo interior." in slide_text("05-aprendizaje.md")


# ------------------------------------------------------------ cell shape


def test_every_cell_id_is_listed_once_and_all_cells_are_known():
    # Counted in the sources: all_cells() is keyed by id and would hide a repeated one.
    ids = [options["id"] for _, options, _ in cell_blocks()]
    assert len(ids) == len(set(ids))
    claimed = {cell_id for cell_id, _ in CELL_OUTPUTS}
    assert claimed <= set(ids)


@pytest.mark.parametrize("cell_id", sorted(all_cells()))
def test_cell_is_short_enough_for_a_projector(cell_id):
    cell = all_cells()[cell_id]
    lines = cell["source"].split("\n")
    limit = 59 if cell.get("layout", "side") == "side" else 100
    assert len(lines) <= 19, f"{cell_id}: {len(lines)} líneas"
    assert max(len(line) for line in lines) <= limit, f"{cell_id}: línea de más de {limit} caracteres"


@pytest.mark.parametrize("cell_id", sorted(all_cells()))
def test_random_cells_fix_their_seed(cell_id):
    source = all_cells()[cell_id]["source"]
    if "rng" in source:
        assert re.search(r"rng = np\.random\.default_rng\(\d+\)", source), cell_id
    assert "np.random.seed" not in source and "random.random(" not in source


@pytest.mark.parametrize("cell_id", sorted(all_cells()))
def test_cell_draws_the_figures_it_declares(cell_id):
    cell = all_cells()[cell_id]
    declared = int(cell.get("figures", "0"))
    draws = cell["source"].count("plot_")
    assert (declared > 0) == (draws > 0), cell_id


# ------------------------------------------------------------ typography


def prose_lines(path: Path):
    """(line number, text) of the slide file outside code cells, without inline code or HTML tags."""
    in_code = False
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if line.startswith("```"):
            in_code = not in_code
            continue
        if not in_code:
            yield number, re.sub(r"<[^>]*>|`[^`]*`", "", line)


@pytest.mark.parametrize("path", sorted(SLIDES.glob("*.md")), ids=lambda path: path.name)
def test_prose_quotes_with_the_lectures_curly_quotes(path):
    # The lecture writes “casi el mismo”; straight quotes belong to code only.
    straight = [f"{path.name}:{number}: {line.strip()}" for number, line in prose_lines(path) if '"' in line]
    assert straight == []


# ------------------------------------------------------------ speaker notes


def slides_of(path: Path) -> list[str]:
    return re.split(r"\n---\n", path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", sorted(SLIDES.glob("*.md")), ids=lambda path: path.name)
def test_every_slide_has_notes_with_a_question_for_the_class(path):
    missing = []
    for slide in slides_of(path):
        title = re.search(r"^# (.+)$", slide, re.M)
        notes = re.search(r"^::: notes\n(.*?)\n:::$", slide, re.S | re.M)
        if not notes or "¿" not in notes.group(1) or len(notes.group(1)) < 150:
            missing.append(title.group(1) if title else slide[:40])
    assert missing == []
