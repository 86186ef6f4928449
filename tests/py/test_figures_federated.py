"""dpdeck.figures_federated: the chapter's figures build, fit, speak Spanish and write decimal commas.

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
from matplotlib.figure import Figure

from dpdeck import experiments, figure_style, figures_federated

DEMOS = {name: (lambda name=name: experiments.draw_experiment(name))
         for name, experiment in experiments.EXPERIMENTS.items() if experiment.figures == "figures_federated"}

PLOT_NAMES = sorted(name for name in dir(figures_federated) if name.startswith("plot_"))

# (x label of the last axes, y label of the first axes): what the slide's reader sees.
EXPECTED_LABELS = {
    "hospital_example": ("salida publicada, s", "densidad"),
    "fedavg_rounds": ("ronda de comunicación", "exactitud"),
    "local_epochs": ("épocas locales por ronda, E", "rondas hasta 82,6\u00a0%"),
    "privacy_units": ("presupuesto ε (10 rondas)", "exactitud"),
}

ENGLISH = re.compile(r"\b(rounds?|accuracy|density|clients?|epochs?|private|budget|ratio|people)\b",
                     re.IGNORECASE)


def visible_texts(figure: Figure) -> list[str]:
    return [text.get_text() for text in figure.findobj(matplotlib.text.Text)
            if text.get_visible() and text.get_text().strip()]


def tick_labels(figure: Figure) -> list[str]:
    labels = []
    for ax in figure.axes:
        for axis in (ax.xaxis, ax.yaxis):
            for which in ("major", "minor"):
                labels += [tick.get_text() for tick in axis.get_ticklabels(which=which)
                           if tick.get_visible() and tick.get_text()]
    return labels


@pytest.fixture(scope="module")
def demo_figures():
    built = {}
    for name, make in DEMOS.items():
        figure = make()
        FigureCanvasAgg(figure).draw()
        built[name] = figure
    yield built
    for figure in built.values():
        figure.clear()


def test_every_plot_function_draws_one_lecture_experiment():
    assert sorted(experiments.EXPERIMENTS[name].plot for name in DEMOS) == PLOT_NAMES


def test_figures_only_draw():
    source = Path(figures_federated.__file__).read_text(encoding="utf-8")
    for forbidden in ("load_census", "rng", "_demo_", "DEMOS", "laplace_mechanism", "def format_number", "federated."):
        assert forbidden not in source, forbidden


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_demo_fits_beside_code_and_saves_a_png(demo_figures, name):
    figure = demo_figures[name]
    width, height = figure.get_size_inches()
    assert width <= figure_style.FIGSIZE[0] + 1e-9 and height <= 4.1 + 1e-9
    png = io.BytesIO()
    figure.savefig(png, format="png", dpi=120)
    assert png.getvalue()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_no_text_is_smaller_than_the_tick_labels(demo_figures, name):
    small = [(text.get_text(), text.get_fontsize()) for text in demo_figures[name].findobj(matplotlib.text.Text)
             if text.get_visible() and text.get_text().strip() and text.get_fontsize() < figure_style.TICK_SIZE]
    assert small == []


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_every_text_fits_inside_the_figure(demo_figures, name):
    figure = demo_figures[name]
    renderer = figure.canvas.get_renderer()
    frame = figure.bbox
    parts = [(f"ejes {index}", ax.get_tightbbox(renderer)) for index, ax in enumerate(figure.axes)]
    parts += [("leyenda", legend.get_window_extent(renderer)) for legend in figure.legends]
    parts += [(text.get_text(), text.get_window_extent(renderer)) for ax in figure.axes for text in ax.texts]
    outside = [label for label, box in parts
               if box.x0 < frame.x0 - 1 or box.y0 < frame.y0 - 1 or box.x1 > frame.x1 + 1 or box.y1 > frame.y1 + 1]
    assert outside == []


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_axis_labels_are_the_spanish_ones(demo_figures, name):
    axes = demo_figures[name].axes
    assert (axes[-1].get_xlabel(), axes[0].get_ylabel()) == EXPECTED_LABELS[name]
    assert [text for text in visible_texts(demo_figures[name]) if ENGLISH.search(text)] == []


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_tick_labels_never_use_a_decimal_point(demo_figures, name):
    labels = tick_labels(demo_figures[name])
    assert labels and [label for label in labels if "." in label] == []


def test_the_hospital_figure_writes_its_bound_with_a_comma(demo_figures):
    texts = visible_texts(demo_figures["hospital_example"])
    assert any("1,65" in text for text in texts)
    assert any("," in label for label in tick_labels(demo_figures["hospital_example"]))


def test_the_chapter_figures_fix_their_margins_instead_of_measuring_every_text(demo_figures):
    # The constrained layout is half the time of a figure when a cell runs again in the browser.
    assert all(figure.get_layout_engine() is None for figure in demo_figures.values())


@pytest.mark.parametrize("name", ["fedavg_rounds", "privacy_units"])
def test_accuracy_is_written_as_whole_percents(demo_figures, name):
    ax = demo_figures[name].axes[0]
    low, high = ax.get_ylim()
    shown = [tick.label1.get_text() for tick in ax.yaxis.get_major_ticks() if low <= tick.get_loc() <= high]
    assert len(shown) >= 3 and all(re.fullmatch(r"\d+\u00a0%", label) for label in shown), shown


def test_hospital_ratio_stays_inside_its_band(demo_figures):
    bottom = demo_figures["hospital_example"].axes[1]
    ratio = bottom.lines[0].get_ydata()
    assert ratio.max() <= np.exp(0.5) * (1 + 1e-12) and ratio.min() >= np.exp(-0.5) * (1 - 1e-12)


def test_a_client_that_never_reaches_the_target_is_drawn_hollow_at_the_top():
    figure = figures_federated.plot_local_epochs([1, 2], [3, None], [4, 5], max_rounds=9, target=0.8)
    hollow = [line for line in figure.axes[0].lines if line.get_markerfacecolor() == "white"]
    assert len(hollow) == 1 and list(hollow[0].get_ydata()) == [9]


def test_a_target_never_reached_is_said_in_the_description():
    figure = figures_federated.plot_local_epochs([1, 2], [3, None], [4, 5], max_rounds=9, target=0.8)
    from dpdeck.figure_descriptions import figure_description

    assert "con clientes IID, 3 y no llega en 9 rondas" in figure_description(figure)


# ------------------------------------------------------------ what each figure says it shows

# The key numbers each chapter-6 figure's description gives, as the slide writes them.
KEY_NUMBERS = {
    "hospital_example": ("f(D) = 42", "entre 0,61 y 1,65", "ε = 0,5"),
    "fedavg_rounds": ("de 1 a 20", "82,6\u00a0% IID", "78,3\u00a0% con un hospital por nivel",
                      "centralizado (83,1\u00a0%)"),
    "local_epochs": ("82,6\u00a0%", "1, 2, 5 y 10", "IID, 10, 5, 2 y 1 rondas", "nivel, 10, 14, 9 y 9 rondas"),
    "privacy_units": ("de 0,1 a 10", "personas (cap. 5), clínicas de 10 y 16 hospitales",
                      "con ε = 10, de 83,0\u00a0%, 82,2\u00a0% y 76,1\u00a0%"),
}


@pytest.mark.parametrize("name", sorted(DEMOS))
def test_every_figure_says_what_it_shows_with_its_key_numbers(demo_figures, name):
    from dpdeck.figure_descriptions import figure_description

    description = figure_description(demo_figures[name])
    assert description and len(description) >= 80, description
    assert [number for number in KEY_NUMBERS[name] if number not in description] == [], description
    assert not re.search(r"\d\.\d|[{}]", description), description  # no decimal point, no unfilled field
    assert not ENGLISH.search(description), description
    assert description.endswith(".") and description[0].isupper()


def test_mismatched_lengths_are_rejected_in_spanish():
    with pytest.raises(ValueError, match="misma longitud"):
        figures_federated.plot_fedavg_rounds([1, 2, 3], [0.8, 0.8], [0.7, 0.7, 0.7], nonprivate=0.83, majority=0.76)
    with pytest.raises(ValueError, match="misma longitud"):
        figures_federated.plot_local_epochs([1, 2], [1], [1, 2], max_rounds=9, target=0.8)
