"""Code readable from the back of the room (the whole lecture, dist/, headless Chromium).

* On a 1024×768 projector the slide grows to 1280×960 (the window's 4:3
  shape), no slide overflows its box nor needs a scrollbar in a cell, with
  every answer shown: the same check the 1280×720 tour makes (test_deck.py).
  A code line wider than its cell wraps instead. Every cell's code and output
  are drawn at 16 px or more (as at 1280×720), a full-width cell's at 18 px.
  The index button (☰) covers no slide content there (test_chrome.py checks
  it at 1280×720).
* There, every figure is readable from the back of the room: beside its code
  it gets 40 % of the slide's width or more, at least 420 px on screen, with
  its tick labels at 14 px or more; and a printed line is not chopped up: one
  of up to 60 characters takes at most two rows, and none takes four.
* The sizes at 1280×720 and 1024×768 are printed.
* The first paint, before any script file, already has that shape.
* The presenter's code size: + and − change it a step (reveal's help lists
  the keys), 0 goes back, and the choice survives a reload.
"""

from __future__ import annotations

import pytest

from deckpage import NO_PYTHON, DeckPage
from dpdeck import figure_style
from dpdeck.classroom.cellrun import FIGURE_DPI
from test_boot import SLIDE_BOXES
from test_chrome import CONTENT_BOXES, overlap
from test_deck import CHECK_OVERFLOW, slide_label

PROJECTOR = (1024, 768)
WIDE = (1280, 720)
MIN_PROJECTED_PX = 16
MIN_FULL_WIDTH_PX = 18
MIN_FIGURE_PX = 420
MIN_FIGURE_SHARE = 0.40
MIN_TICK_PX = 14
SHORT_LINE_CHARS = 60

# The smallest code and output text on a slide, in window pixels (font size × reveal's scale);
# `wide`: the same in full-width cells (layout=stack) only.
TEXT_SIZES = """
(index) => {
  const slide = Reveal.getSlides()[index];
  const scale = Reveal.getScale();
  const size = (selector) => {
    const sizes = Array.from(slide.querySelectorAll(selector))
      .filter((element) => element.getClientRects().length)
      .map((element) => parseFloat(getComputedStyle(element).fontSize) * scale);
    return sizes.length ? Math.min(...sizes) : null;
  };
  return {code: size('.cell .cm-line'), output: size('.cell-output pre'),
          wide: size('.cell[data-layout="stack"] .cm-line, .cell[data-layout="stack"] .cell-output pre')};
}
"""

# Every figure on the slide as shown (window px) and the slide's width on screen.
FIGURES = """
(index) => {
  const slide = Reveal.getSlides()[index];
  const width = slide.getBoundingClientRect().width;
  return Array.from(slide.querySelectorAll('.cell-output img.out-figure')).map((img) => ({
    cell: img.closest('.cell').dataset.cellId, shown: img.getBoundingClientRect().width,
    natural: img.naturalWidth, slide: width}));
}
"""

# Each printed line of the slide's outputs: its first characters, its length and
# how many rows it takes on screen.
PRINTED_ROWS = """
(index) => {
  const rows = [];
  for (const pre of Reveal.getSlides()[index].querySelectorAll('.cell-output pre')) {
    const height = parseFloat(getComputedStyle(pre).lineHeight) * Reveal.getScale();
    const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      let start = 0;
      for (const line of node.textContent.split('\\n')) {
        if (line.trim()) {
          const range = document.createRange();
          range.setStart(node, start);
          range.setEnd(node, start + line.length);
          const tops = new Set(Array.from(range.getClientRects(), (rect) => Math.round(rect.top / (height / 2))));
          rows.push({line: line.slice(0, 30), chars: line.length, rows: tops.size});
        }
        start += line.length + 1;
      }
    }
  }
  return rows;
}
"""


def walk(deck) -> tuple[dict, dict, tuple[int, int], dict, dict]:
    """Every slide with its answers: overflow problems, the smallest code and output sizes,
    the slide's size, its figures and its printed lines (test docstrings say what of each)."""
    page = deck.page
    slides = page.evaluate(
        "() => Reveal.getSlides().map((s) => [s.id || null, s.querySelectorAll('.fragment').length])")
    problems, sizes, figures, printed = {}, {}, {}, {}
    size = None
    for index, (slide_id, fragments) in enumerate(slides):
        deck.go_to_slide(index, fragments)
        result = page.evaluate(CHECK_OVERFLOW, index)
        size = (result["width"], result["height"])
        menu = page.evaluate("() => { const b = document.querySelector('.deck-menu-button').getBoundingClientRect();"
                             " return [b.left, b.top, b.right, b.bottom]; }")
        covered = [f"☰ sobre {piece['what']}" for piece in page.evaluate(CONTENT_BOXES, index)
                   if overlap(menu, piece["box"])]
        if result["problems"] or covered:
            problems[slide_label(index, slide_id)] = result["problems"] + covered
        measured = page.evaluate(TEXT_SIZES, index)
        if measured["code"] is not None:
            sizes[slide_label(index, slide_id)] = measured
            figures[slide_label(index, slide_id)] = page.evaluate(FIGURES, index)
            printed[slide_label(index, slide_id)] = page.evaluate(PRINTED_ROWS, index)
    return problems, sizes, size, figures, printed


def open_deck(new_deck, deck_url, viewport, query="?autorun=0"):
    """The lecture's slides alone (this device chose not to download Python): code sizes are the page's."""
    deck = new_deck(deck_url + "index.html" + query, viewport=viewport, python=False)
    deck.wait_for_cells()
    deck.page.evaluate("() => document.fonts.ready.then(() => true)")
    deck.without_transitions()
    return deck


def summary(sizes: dict) -> str:
    codes = [size["code"] for size in sizes.values()]
    outputs = [size["output"] for size in sizes.values() if size["output"] is not None]
    return f"código {min(codes):.1f}–{max(codes):.1f} px, salida {min(outputs):.1f}–{max(outputs):.1f} px"


@pytest.fixture(scope="module")
def projector(open_page, deck_url, artifacts_dir):
    """The whole lecture walked once at 1024×768, with a screenshot of each slide that has a figure.

    Its slides alone, as built (this device chose not to download Python)."""
    context, page = open_page(viewport=PROJECTOR)
    page.add_init_script(NO_PYTHON)
    deck = DeckPage(page).goto(deck_url + "index.html?autorun=0")
    deck.wait_for_cells()
    deck.page.evaluate("() => document.fonts.ready.then(() => true)")
    deck.without_transitions()
    problems, sizes, size, figures, printed = walk(deck)
    shots = artifacts_dir / "proyector"
    shots.mkdir(exist_ok=True)
    for label, shown in figures.items():
        if shown:
            deck.go_to_slide(int(label[:2]) - 1)
            deck.page.screenshot(path=str(shots / f"{label}.png"))
    yield {"problems": problems, "sizes": sizes, "size": size, "figures": figures, "printed": printed}
    context.close()


def test_a_1024x768_projector_shows_code_and_output_large_and_nothing_overflows(projector):
    sizes = projector["sizes"]
    size = projector["size"]
    print(f"\n1024×768: diapositiva {size[0]}×{size[1]}; {summary(sizes)} en {len(sizes)} diapositivas con celdas")
    assert size == (1280, 960)
    assert len(sizes) >= 25
    small = {label: measured for label, measured in sizes.items()
             if measured["code"] < MIN_PROJECTED_PX or (measured["output"] or 99) < MIN_PROJECTED_PX
             or (measured["wide"] or 99) < MIN_FULL_WIDTH_PX}
    assert small == {}
    assert projector["problems"] == {}


def test_every_figure_on_a_1024x768_projector_reads_from_the_back_of_the_room(projector):
    # Text in a figure is drawn in points at FIGURE_DPI and scaled with the PNG.
    tick_px_at_natural = figure_style.TICK_SIZE * FIGURE_DPI / 72
    shown, small = [], {}
    for label, seen in projector["figures"].items():
        for figure in seen:
            tick_px = tick_px_at_natural * figure["shown"] / figure["natural"]
            share = figure["shown"] / figure["slide"]
            shown.append(figure["shown"])
            if figure["shown"] < MIN_FIGURE_PX or share < MIN_FIGURE_SHARE or tick_px < MIN_TICK_PX:
                small[label] = f"{figure['shown']:.0f} px ({share:.0%} de la diapositiva), marcas a {tick_px:.1f} px"
    print(f"\n1024×768: {len(shown)} figuras de {min(shown):.0f} a {max(shown):.0f} px de ancho")
    assert len(shown) >= 13
    assert small == {}


def test_printed_lines_on_a_1024x768_projector_are_not_chopped_up(projector):
    chopped = {}
    for label, lines in projector["printed"].items():
        bad = [f"«{line['line']}…» ({line['chars']} caracteres) en {line['rows']} filas" for line in lines
               if line["rows"] >= 4 or (line["chars"] <= SHORT_LINE_CHARS and line["rows"] > 2)]
        if bad:
            chopped[label] = bad[:3]
    assert chopped == {}


def test_code_sizes_at_1280x720_are_reported(new_deck, deck_url):
    deck = open_deck(new_deck, deck_url, WIDE)
    page = deck.page
    sizes = {}
    for index in page.evaluate("""() => Reveal.getSlides().map((s, i) => s.querySelector('.cell') ? i : -1)
                                  .filter((i) => i >= 0)"""):
        deck.go_to_slide(index)
        sizes[index] = page.evaluate(TEXT_SIZES, index)
    print(f"\n1280×720: diapositiva 1280×720; {summary(sizes)}")
    assert min(size["code"] for size in sizes.values()) >= 16


CODE_PX = """() => {
  const line = Reveal.getCurrentSlide().querySelector('.cell .cm-line');
  return parseFloat(getComputedStyle(line).fontSize) * Reveal.getScale();
}"""


SIDEWAYS_SCROLL = """() => {
  const scroller = Reveal.getCurrentSlide().querySelector('.cell .cm-scroller');
  return scroller.scrollWidth - scroller.clientWidth;
}"""


def test_the_presenter_changes_the_code_size_with_keys_and_it_is_remembered(new_deck, deck_url):
    deck = open_deck(new_deck, deck_url, WIDE, "?autorun=0#/codo")
    page = deck.page
    deck.settle()
    normal = page.evaluate(CODE_PX)
    deck.blur()
    deck.press("Equal")  # «+» (on a Spanish keyboard its own key; here the US one)
    deck.press("NumpadAdd")
    deck.settle()
    bigger = page.evaluate(CODE_PX)
    assert bigger > normal * 1.25, (normal, bigger)
    assert page.get_attribute("html", "data-code-size") == "130"
    assert "Letra del código: 130 %" in page.inner_text(".deck-announcer")
    # The cell's code column grows with its code: no line needs scrolling sideways
    # (a long cell scrolls down instead; «zoom this cell» shows it whole).
    assert page.evaluate(SIDEWAYS_SCROLL) <= 1
    deck.page.reload()
    deck.wait_for_cells()
    deck.settle()
    assert page.evaluate(CODE_PX) == pytest.approx(bigger, abs=0.1)
    deck.blur()
    deck.press("Minus")
    deck.settle()
    assert page.get_attribute("html", "data-code-size") == "115"
    deck.press("Digit0")
    deck.settle()
    assert page.evaluate(CODE_PX) == pytest.approx(normal, abs=0.1)
    deck.page.reload()
    deck.wait_for_cells()
    assert page.get_attribute("html", "data-code-size") == "100"
    # reveal's help lists the keys.
    deck.blur()
    deck.press("h")
    page.wait_for_selector(".reveal .r-overlay-help table td")
    help_text = page.inner_text(".reveal .r-overlay-help")
    assert "Letra del código más grande" in help_text and "Letra del código más pequeña" in help_text


@pytest.mark.parametrize("viewport", [PROJECTOR, (390, 844)], ids=["proyector-4-3", "telefono"])
def test_the_first_paint_has_the_shape_reveal_then_gives(new_page, new_deck, deck_url, viewport):
    """Before any script file runs, the slide is painted in the layout the window gets (a taller
    slide on 4:3, a page on a phone), every block where it stays once reveal.js has started."""
    page = new_page(viewport=viewport)
    page.route("**/*.js", lambda route: route.abort())
    page.goto(deck_url + "?autorun=0#/hoja-de-ruta")
    page.wait_for_selector(".reveal .slides > section.dp-first-paint-slide", state="visible", timeout=10_000)
    page.evaluate("document.fonts.ready")
    before = page.evaluate(SLIDE_BOXES, ".reveal .slides > section.dp-first-paint-slide")
    full = new_deck(deck_url + "?autorun=0#/hoja-de-ruta", viewport=viewport, python=False)
    full.wait_for_reveal()
    full.page.wait_for_selector(".reveal.ready .slides > section.present", state="visible", timeout=30_000)
    full.page.evaluate("document.fonts.ready")
    full.page.wait_for_timeout(500)  # reveal's fade
    after = full.page.evaluate(SLIDE_BOXES, ".reveal .slides > section.present")
    assert len(before) >= 2
    assert before == after
