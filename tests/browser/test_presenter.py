"""The presenter is never surprised (the whole lecture, dist/, headless Chromium).

* a run keeps the previous output, figure included, where it is until its own
  output is complete, and nothing else on the slide moves: measured on a slide
  with text before and after a figure cell, both for a run that prints for
  over a second and for the rerun the slide on screen does by itself when
  Python becomes ready (the worst displacement of any slide element, in slide
  pixels, and the layout-shift score Chromium reports, are printed);
"""

from __future__ import annotations

from deckpage import DeckPage

VIEWPORT = {"width": 1280, "height": 720}
# A figure cell with the lecture's text above and below it.
CELL_WITH_TEXT_AROUND = "costo-iterar"
# Prints at once, then computes for 2,5 s before drawing a figure of the same
# size as the slide's: longer than the moment after which a run used to show
# its printed lines instead of the figure. Shorter than the cell's own code, so
# the output, not the code, sets the cell's height.
SLOW_SOURCE = """import time
from dpdeck.figures import plot_iterations_cost
print("calculando…")
t0 = time.time()
while time.time() - t0 < 2.5:
    pass
plot_iterations_cost([1, 2, 3], [0.7, 0.75, 0.72], epsilon=0.5)
"""


def test_a_slow_run_keeps_the_figure_and_the_slide_text_in_place(new_deck, deck_url):
    deck = new_deck(deck_url + "index.html?autorun=0#/" + CELL_WITH_TEXT_AROUND)
    deck.wait_until_ready()
    cell = deck.cell(CELL_WITH_TEXT_AROUND)
    cell.show()
    deck.settle()
    cell.set_source(SLOW_SOURCE)
    deck.settle()
    deck.watch_layout(cell.selector)
    before = cell.runs
    deck.page.evaluate("id => { Reveal.getPlugin('dpdeck').cell(id).run(); }", CELL_WITH_TEXT_AROUND)
    # What it prints shows over the bottom of the previous output while it runs.
    cell.wait_for_output_containing("calculando…")
    assert "calculando…" in cell.live_tail_text()
    assert cell.figures().count() == 1
    status = cell.wait_for_run(before)
    seen = deck.stop_watching_layout()
    assert cell.live_tail_text() == ""
    assert "calculando…" in cell.output_text()
    cell.reset_in_page()
    print(f"\nejecución lenta: el texto de la diapositiva se movió {seen['maxShift']:.1f} px "
          f"(puntuación de desplazamiento {seen['shiftScore']:.4f}); figuras a la vista: "
          f"mínimo {seen['minFigures']}")
    assert status == "done"
    assert seen["samples"] > 20
    assert seen["minFigures"] == 1, seen
    assert seen["maxShift"] <= 0.5, (seen["worst"], seen["shifted"])
    assert seen["shiftScore"] == 0, seen["shifted"]


def test_the_rerun_when_python_becomes_ready_moves_nothing(new_deck, deck_url):
    deck = new_deck(deck_url + "index.html#/" + CELL_WITH_TEXT_AROUND)
    deck.wait_for_cells()
    cell = deck.cell(CELL_WITH_TEXT_AROUND)
    deck.page.evaluate("() => document.fonts.ready")
    deck.settle()
    assert deck.python_state in ("off", "loading")
    deck.watch_layout(cell.selector)
    deck.wait_for_python()
    deck.page.wait_for_function("selector => document.querySelector(selector).dataset.runs === '1'",
                                arg=cell.selector, timeout=120_000)
    seen = deck.stop_watching_layout()
    print(f"\nal quedar Python listo: el texto se movió {seen['maxShift']:.1f} px "
          f"(puntuación {seen['shiftScore']:.4f}); figuras a la vista: mínimo {seen['minFigures']}")
    assert cell.origin == "live"
    assert seen["minFigures"] == 1, seen
    assert seen["maxShift"] <= 0.5, (seen["worst"], seen["shifted"])
    assert seen["shiftScore"] == 0, seen["shifted"]
