"""dpdeck.figures: every figure builds, speaks Spanish, writes decimal commas and draws what it says.

Each figure is drawn from its lecture experiment (``dpdeck.experiments``), with
the parameters and the seed of its slide.
"""

from __future__ import annotations

import io
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.collections import PolyCollection
from matplotlib.figure import Figure
from matplotlib.patches import Rectangle, StepPatch
from matplotlib.ticker import FixedLocator

from dpdeck import experiments, figure_style, figures
from dpdeck.data import EDUCATION_LEVELS
from dpdeck.figure_descriptions import figure_description
from dpdeck.figures import FIGSIZE, use_decimal_comma
from dpdeck.numbers import PERCENT_SIGN

# The experiments drawn by dpdeck.figures (chapters 1–5); chapter 6's are in test_figures_federated.py.
DEMOS = {name: (lambda name=name: experiments.draw_experiment(name))
         for name, experiment in experiments.EXPERIMENTS.items() if experiment.figures == "figures"}

PLOT_NAMES = sorted(name for name in dir(figures) if name.startswith("plot_"))

# Axis labels each demo must show: Spanish words a reader of the slide expects.
EXPECTED_LABELS = {
    "laplace_densities": ("ruido añadido al conteo", "densidad"),
    "attack_through_noise": ("consulta 1 − consulta 2 (con ruido)", "número de ataques"),
    "averaging_error": ("publicaciones promediadas, k", "error del promedio"),
    "private_histogram": ("personas", ""),
    "clipping_elbow": ("cota de recorte, b", "error de la suma"),
    "local_sensitivity_leak": ("resta de dos publicaciones, r₁ − r₂", "densidad (relativa)"),
    "laplace_vs_gauss": ("ruido añadido", "densidad"),
    "vector_noise": ("componentes de la consulta, k", "ruido por componente"),
    "accountants": ("publicaciones gaussianas, k", "ε total"),
    "rdp_conversion": ("orden de Rényi, α", "ε"),
    "gradient_norms": (r"norma $L_2$ de cada gradiente", "personas"),
    "privacy_utility": ("presupuesto ε", "exactitud"),
    "iterations_cost": ("iteraciones, T", "exactitud"),
}

# English words that must not appear in any visible text of a figure.
ENGLISH = re.compile(r"\b(noise|count|accuracy|density|bound|iterations?|private|true|budget|"
                     r"steps?|sequential|advanced|clipped|minimum|crossing|releases?)\b", re.IGNORECASE)


def drawn(figure: Figure) -> Figure:
    FigureCanvasAgg(figure).draw()
    return figure


def visible_texts(figure: Figure) -> list[str]:
    texts = []
    for text in figure.findobj(matplotlib.text.Text):
        if text.get_visible() and text.get_text().strip():
            texts.append(text.get_text())
    return texts


def tick_labels(figure: Figure) -> list[str]:
    """Visible labels of the numeric ticks (an axis of names, placed with set_ticks, is left out)."""
    labels = []
    for ax in figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            if isinstance(axis.get_major_locator(), FixedLocator):
                continue
            for which in ("major", "minor"):
                for tick in axis.get_ticklabels(which=which):
                    if tick.get_visible() and tick.get_text():
                        labels.append(tick.get_text())
            offset = axis.get_offset_text().get_text()
            if offset:
                labels.append(offset)
    return labels


@pytest.fixture(scope="module")
def demo_figures():
    built = {name: drawn(make()) for name, make in DEMOS.items()}
    yield built
    for figure in built.values():
        figure.clear()


# ------------------------------------------------------------------ coverage


def test_every_plot_function_draws_one_lecture_experiment():
    drawn_here = [e.plot for e in experiments.EXPERIMENTS.values() if e.figures == "figures"]
    assert sorted(drawn_here) == PLOT_NAMES


def test_figures_only_draw():
    # The experiments (data, mechanisms, accounting) live in dpdeck.experiments.
    source = Path(figures.__file__).read_text(encoding="utf-8")
    for forbidden in ("load_census", "rng", "_demo_", "DEMOS", "laplace_mechanism", "def format_number"):
        assert forbidden not in source, forbidden


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_demo_builds_a_figure_that_fits_beside_code(demo_figures, name):
    figure = demo_figures[name]
    assert isinstance(figure, Figure)
    width, height = figure.get_size_inches()
    # At 120 dpi the PNG is at most 600×492 px: it fits the output column of a 1280×720 slide.
    assert width <= FIGSIZE[0] + 1e-9 and height <= 4.1 + 1e-9
    png = io.BytesIO()
    figure.savefig(png, format="png", dpi=120)
    assert png.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"


# ------------------------------------------------------------- legibility


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_no_text_is_smaller_than_the_tick_labels(demo_figures, name):
    # TICK_SIZE is the smallest size that reads from the back of the room once the
    # slide shows the figure (the browser suite measures that scale).
    small = [(text.get_text(), text.get_fontsize()) for text in demo_figures[name].findobj(matplotlib.text.Text)
             if text.get_visible() and text.get_text().strip() and text.get_fontsize() < figure_style.TICK_SIZE]
    assert small == []
    ax = demo_figures[name].axes[0]
    assert ax.xaxis.label.get_fontsize() >= figure_style.LABEL_SIZE


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_every_text_fits_inside_the_figure(demo_figures, name):
    # What is drawn: each axes with its tick labels and axis labels, each legend,
    # each annotation. A legend or a label wider than the figure gets cut in the PNG.
    figure = demo_figures[name]
    renderer = figure.canvas.get_renderer()
    frame = figure.bbox
    parts = [(f"ejes {index}", ax.get_tightbbox(renderer)) for index, ax in enumerate(figure.axes)]
    parts += [("leyenda", legend.get_window_extent(renderer)) for legend in figure.legends]
    parts += [("leyenda", ax.get_legend().get_window_extent(renderer)) for ax in figure.axes if ax.get_legend()]
    parts += [(text.get_text(), text.get_window_extent(renderer)) for ax in figure.axes for text in ax.texts]
    outside = [label for label, box in parts
               if box.x0 < frame.x0 - 1 or box.y0 < frame.y0 - 1 or box.x1 > frame.x1 + 1 or box.y1 > frame.y1 + 1]
    assert outside == []


def test_figures_measure_their_margins_instead_of_laying_out_twice(demo_figures):
    # The constrained layout drew every figure twice (once to measure); fit_margins measures the texts only.
    assert all(figure.get_layout_engine() is None for figure in demo_figures.values())


@pytest.mark.parametrize("name", sorted(name for name in DEMOS if name not in ("laplace_densities", "laplace_vs_gauss",
                                                                                "averaging_error", "private_histogram",
                                                                                "gradient_norms")))
def test_the_legend_above_never_covers_the_axes_or_their_tick_labels(demo_figures, name):
    figure = demo_figures[name]
    renderer = figure.canvas.get_renderer()
    (legend,) = figure.legends
    bottom = legend.get_window_extent(renderer).y0
    ax = figure.axes[0]
    tops = [ax.get_window_extent(renderer).y1]
    tops += [label.get_window_extent(renderer).y1 for label in ax.yaxis.get_ticklabels() if label.get_visible()
             and label.get_text() and ax.get_ylim()[0] <= label.get_position()[1] <= ax.get_ylim()[1]]
    assert bottom >= max(tops) - 1


def test_margins_grow_with_wider_tick_labels():
    # A class that asks for 200 000 attacks gets counts of five digits on the y axis: they still fit.
    rng = np.random.default_rng(0)
    figure = drawn(figures.plot_attack_through_noise(rng.laplace(1.0, 4.0, size=200_000), signal=1))
    renderer = figure.canvas.get_renderer()
    ax = figure.axes[0]
    assert max(len(label.get_text()) for label in ax.yaxis.get_ticklabels()) >= 5
    box = ax.get_tightbbox(renderer)
    assert box.x0 >= figure.bbox.x0 - 1 and box.y0 >= figure.bbox.y0 - 1


def test_log_ticks_are_plain_text_powers_of_ten(demo_figures):
    # Superscripts in plain text read the same as mathtext's 10^{n} and cost no parsing.
    labels = tick_labels(demo_figures["accountants"])
    assert "10⁴" in labels and "10⁰" in labels
    assert not [label for figure in demo_figures.values() for label in tick_labels(figure) if "$" in label]


# ------------------------------------------------------------------- Spanish


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_axis_labels_are_the_spanish_ones(demo_figures, name):
    ax = demo_figures[name].axes[0]
    assert (ax.get_xlabel(), ax.get_ylabel()) == EXPECTED_LABELS[name]


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_no_english_in_visible_text(demo_figures, name):
    found = [text for text in visible_texts(demo_figures[name]) if ENGLISH.search(text)]
    assert found == []


# ------------------------------------------------------------ decimal commas


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_tick_labels_never_use_a_decimal_point(demo_figures, name):
    labels = tick_labels(demo_figures[name])
    assert labels, "la figura no tiene marcas con texto"
    assert [label for label in labels if "." in label] == []


@pytest.mark.parametrize("name", ["laplace_densities", "laplace_vs_gauss", "local_sensitivity_leak",
                                  "privacy_utility", "averaging_error"])
def test_fractional_ticks_are_written_with_a_comma(demo_figures, name):
    assert any("," in label for label in tick_labels(demo_figures[name]))


@pytest.mark.parametrize("name", ["privacy_utility", "iterations_cost"])
def test_accuracy_is_written_as_a_percentage(demo_figures, name):
    # The slides speak of «76 %» and «83 %»: the axis reads the same, whole percents.
    ax = demo_figures[name].axes[0]
    low, high = ax.get_ylim()
    shown = [(tick.get_loc(), tick.label1.get_text()) for tick in ax.yaxis.get_major_ticks()
             if low <= tick.get_loc() <= high]
    assert len(shown) >= 3
    # Each tick sits on a whole percent, so the label is exact, not rounded.
    assert all(label == f"{round(100 * loc)}{PERCENT_SIGN}" and abs(100 * loc - round(100 * loc)) < 1e-6
               for loc, label in shown), shown


def test_decimal_comma_leaves_names_on_the_ticks_alone():
    figure = Figure()
    ax = figure.add_subplot()
    ax.barh([0, 1, 2], [3.5, 1.25, 2])
    ax.set_yticks([0, 1, 2], ["1.º a 4.º", "9.º", "12.º sin título"])
    use_decimal_comma(ax)
    drawn(figure)
    assert [label.get_text() for label in ax.get_yticklabels()] == ["1.º a 4.º", "9.º", "12.º sin título"]
    assert any("," in label.get_text() for label in ax.get_xticklabels())


def test_decimal_comma_wraps_log_and_offset_formatters():
    figure = Figure(figsize=(4, 3))
    ax = figure.add_subplot()
    ax.plot([1e-3, 1e2], [1.0e6 + 0.25, 1.0e6 + 0.75])
    ax.set_xscale("log")
    use_decimal_comma(ax)
    drawn(figure)
    labels = tick_labels(figure)
    assert labels and not any("." in label for label in labels)
    # The y axis needs an offset (1e6 + small fractions): it must carry commas too.
    assert any("," in label for label in labels)


def test_decimal_comma_is_idempotent():
    figure = Figure()
    ax = figure.add_subplot()
    use_decimal_comma(ax)
    first = ax.xaxis.get_major_formatter()
    use_decimal_comma(ax)
    assert ax.xaxis.get_major_formatter() is first


# ---------------------------------------------------------- expected artists


def lines_with_data(ax):
    return [line for line in ax.get_lines() if len(line.get_xdata()) > 2]


def test_laplace_densities_one_curve_per_epsilon_labelled_with_commas(demo_figures):
    ax = demo_figures["laplace_densities"].axes[0]
    labels = [line.get_label() for line in lines_with_data(ax)]
    assert labels == ["ε = 0,25", "ε = 0,5", "ε = 1", "ε = 2"]


def test_attack_marks_zero_and_the_signal(demo_figures):
    ax = demo_figures["attack_through_noise"].axes[0]
    verticals = sorted(line.get_xdata()[0] for line in ax.get_lines())
    assert verticals == [0.0, 1.0]
    (histogram,) = [patch for patch in ax.patches if isinstance(patch, StepPatch)]
    assert len(histogram.get_data().values) == 60


def test_averaging_error_is_log_log_with_reference_line(demo_figures):
    ax = demo_figures["averaging_error"].axes[0]
    assert (ax.get_xscale(), ax.get_yscale()) == ("log", "log")
    assert len(lines_with_data(ax)) == 2


def test_private_histogram_has_one_bar_and_one_marker_per_level(demo_figures):
    ax = demo_figures["private_histogram"].axes[0]
    bars = [patch for patch in ax.patches if isinstance(patch, Rectangle)]
    assert len(bars) == 16
    markers = [line for line in ax.get_lines() if line.get_marker() == "D"]
    assert len(markers) == 1 and len(markers[0].get_xdata()) == 16


def test_private_histogram_names_the_levels_exactly_as_the_census(demo_figures):
    # The census writes «1.º a 4.º»: names are not numbers and get no decimal comma.
    ax = demo_figures["private_histogram"].axes[0]
    assert [label.get_text() for label in ax.get_yticklabels()] == list(EDUCATION_LEVELS)


def pixels_of_color_inside_axes(figure: Figure, ax, color: str, tolerance: int = 40) -> int:
    """How many pixels inside ``ax`` (legend excluded) have ``color``, once the figure is drawn."""
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    image = np.asarray(canvas.buffer_rgba())[:, :, :3].astype(int)
    box = ax.get_window_extent()
    height = image.shape[0]
    inside = image[int(height - box.y1) + 1:int(height - box.y0) - 1, int(box.x0) + 1:int(box.x1) - 1]
    target = np.array(matplotlib.colors.to_rgb(color)) * 255
    return int((np.abs(inside - target).sum(axis=2) < tolerance).sum())


def test_clipping_elbow_shows_all_three_curves(demo_figures):
    # Left of the elbow the total is the bias; right of it, the noise. The total
    # goes underneath, wide and light, so the bias and the noise show on top of it.
    figure = demo_figures["clipping_elbow"]
    ax = figure.axes[0]
    lines = {line.get_label(): line for line in ax.get_lines()}
    bias, noise, total = lines["sesgo del recorte"], lines["ruido de Laplace"], lines["error total"]
    assert len({bias.get_color(), noise.get_color(), total.get_color()}) == 3
    assert bias.get_zorder() > total.get_zorder() and noise.get_zorder() > total.get_zorder()
    assert total.get_linewidth() >= 2 * max(bias.get_linewidth(), noise.get_linewidth())
    # Drawn, each curve covers a stretch of the plot in its own colour (a 40-px line of
    # 2,6 pt at 100 dpi is about 140 px; the legend is outside the axes).
    for line in (bias, noise, total):
        assert pixels_of_color_inside_axes(figure, ax, line.get_color()) > 600, line.get_label()


def test_clipping_elbow_marks_an_interior_minimum(demo_figures):
    ax = demo_figures["clipping_elbow"].axes[0]
    minimum = [line for line in ax.get_lines() if line.get_label().startswith("mínimo")]
    assert len(minimum) == 1
    b_min = minimum[0].get_xdata()[0]
    total = [line for line in ax.get_lines() if line.get_label() == "error total"][0]
    bounds = total.get_xdata()
    assert bounds[0] < b_min < bounds[-1]


def test_laplace_vs_gauss_draws_both_shaded_densities(demo_figures):
    ax = demo_figures["laplace_vs_gauss"].axes[0]
    assert [line.get_label() for line in lines_with_data(ax)] == ["Laplace", "Gauss"]
    assert len([c for c in ax.collections if isinstance(c, PolyCollection)]) == 2


def test_vector_noise_marks_the_crossing_at_twelve(demo_figures):
    ax = demo_figures["vector_noise"].axes[0]
    crossing = [line for line in ax.get_lines() if line.get_label().startswith("cruce")]
    assert crossing and crossing[0].get_xdata()[0] == 12
    assert crossing[0].get_label() == "cruce: k = 12"


def test_accountants_three_curves_and_final_values(demo_figures):
    figure = demo_figures["accountants"]
    ax = figure.axes[0]
    assert len(lines_with_data(ax)) == 3
    annotations = sorted(text.get_text() for text in ax.texts)
    assert annotations == ["1444", "3236", "36,5"]
    boxes = [text.get_window_extent() for text in ax.texts]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    legend_labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert legend_labels == ["secuencial", "avanzada", "Rényi DP"]


def test_rdp_conversion_minimum_at_alpha_196(demo_figures):
    ax = demo_figures["rdp_conversion"].axes[0]
    minimum = [line for line in ax.get_lines() if line.get_label().startswith("mínimo")][0]
    assert minimum.get_label() == "mínimo: α ≈ 1,96"
    assert [text.get_text() for text in ax.texts] == ["ε ≈ 36,5"]


def test_local_sensitivity_scales_are_grouped_alike(demo_figures):
    labels = [text.get_text() for text in demo_figures["local_sensitivity_leak"].legends[0].get_texts()]
    assert "D: ruido de escala 9 594" in labels and "D′: ruido de escala 99 999" in labels


def test_local_sensitivity_curves_differ_only_in_width(demo_figures):
    # What the slide claims: the scale gives the person away. Both curves peak at 0 (the sum has
    # cancelled in the difference of two releases); D′'s is wider by the ratio of the scales.
    figure = demo_figures["local_sensitivity_leak"]
    curves = [line for line in figure.axes[0].get_lines() if len(line.get_xdata()) > 2]
    assert len(curves) == 2
    halves = []
    for line in curves:
        x, y = np.asarray(line.get_xdata()), np.asarray(line.get_ydata())
        assert x[np.argmax(y)] == 0.0 and np.isclose(y.max(), 1.0)
        halves.append(x[(y >= 0.5) & (x >= 0)].max())   # half width at half maximum
    assert halves[1] / halves[0] == pytest.approx(99_999 / 9594, rel=0.02)
    assert "la escala delata a la persona" in figure_description(figure)


def test_gradient_norms_show_the_clip_line(demo_figures):
    ax = demo_figures["gradient_norms"].axes[0]
    clip = [line for line in ax.get_lines() if line.get_label().startswith("cota C")]
    assert clip and clip[0].get_xdata()[0] == 1.0


def test_privacy_utility_has_both_reference_lines(demo_figures):
    figure = demo_figures["privacy_utility"]
    labels = [text.get_text() for text in figure.legends[0].get_texts()]
    assert labels == ["sin privacidad", "clase mayoritaria", "privado"]
    assert figure.axes[0].get_xscale() == "log"


def test_iterations_cost_marks_an_interior_optimum(demo_figures):
    ax = demo_figures["iterations_cost"].axes[0]
    best = [line for line in ax.get_lines() if line.get_label().startswith("óptimo")][0]
    curve = [line for line in ax.get_lines() if line.get_label().startswith("privado")][0]
    iterations = curve.get_xdata()
    assert iterations[0] < best.get_xdata()[0] < iterations[-1]


# ------------------------------------------------------------------- inputs


def test_mismatched_lengths_are_refused_in_spanish():
    with pytest.raises(ValueError, match="misma longitud"):
        figures.plot_laplace_vs_gauss([0, 1, 2], [0.1, 0.2, 0.1], [0.1, 0.2])


def test_empty_input_is_refused_naming_it():
    with pytest.raises(ValueError, match="ks"):
        figures.plot_averaging_error([], [])


def test_figures_do_not_touch_pyplot_or_global_style():
    import matplotlib.pyplot as plt

    before = dict(matplotlib.rcParams)
    open_before = plt.get_fignums()
    figures.plot_vector_noise(np.arange(1, 5), [1, 2, 3, 4], [2, 2.5, 3, 3.2], crossing=3)
    assert plt.get_fignums() == open_before
    assert dict(matplotlib.rcParams) == before


# ------------------------------------------------------------ what each figure says it shows

# The key number each lecture figure's description gives, as the slide writes it.
KEY_NUMBERS = {
    "laplace_densities": "0,25, 0,5, 1 y 2",
    "attack_through_noise": "2000 restas",
    "averaging_error": "k = 1000",
    "private_histogram": "16 categorías",
    "clipping_elbow": "b ≈ 15 849",
    "local_sensitivity_leak": "99 999",
    "laplace_vs_gauss": "0,25",
    "vector_noise": "k = 12",
    "accountants": "36,5 (Rényi DP)",
    "rdp_conversion": "α ≈ 1,96",
    "gradient_norms": "C = 1",
    "privacy_utility": "83" + PERCENT_SIGN,
    "iterations_cost": "T = 5",
}


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_every_figure_says_what_it_shows_with_its_key_number(demo_figures, name):
    from dpdeck.figure_descriptions import figure_description

    description = figure_description(demo_figures[name])
    assert description and len(description) >= 80, description
    assert KEY_NUMBERS[name] in description, description
    # Spanish prose and the deck's number format: no decimal point, no English.
    assert not re.search(r"\d\.\d|[{}]", description), description  # no decimal point, no unfilled field
    assert not ENGLISH.search(description), description
    assert description.endswith(".") and description[0].isupper()
