"""Accessibility of the whole lecture (dist/, headless Chromium).

* Tab never traps and never edits by itself: it stops on a cell's code and
  goes on; Enter enters the editor, where Tab indents (the documented key);
  Esc leaves it, the focus then on the cell's ▶. Slides other than the one on
  screen take no focus.
* Every figure's alternative text says what it shows (not «Figura 1 de la
  celda …»), the same before and after a run; a run's result is announced in
  one polite live region.
* Output that no longer matches its code is dimmed within WCAG AA (≥ 4,5:1).
* axe-core (pinned in py/deckbuild/pins.py, injected by this test only) finds
  no serious or critical violation on any slide, with every answer shown, nor
  in the page's chrome, the menu (with its worksheets), a zoomed cell, the
  help or an open «Prueba esto». Every slide is
  checked at once, laid out as reveal.js prints them (?print-pdf: each slide
  a page, with its background, its answers and its cells' code); one slide
  of each kind is checked again on screen, as a student's reader meets it.
"""

from __future__ import annotations

import re

import pytest

from deckbuild.paths import locate_npm_package
from deckbuild.pins import find_pin, verify_file
from deckpage import DeckPage

AXE_PIN = find_pin("axe-core", "axe.min.js")
BLOCKING = {"serious", "critical"}

RUN_AXE = """
async (include) => {
  const results = await axe.run(include ? {include} : document, {resultTypes: ['violations']});
  return results.violations.map((violation) => ({
    id: violation.id, impact: violation.impact, help: violation.help,
    nodes: violation.nodes.slice(0, 3).map((node) => node.target.join(' '))}));
}
"""


@pytest.fixture(scope="module")
def axe_source() -> str:
    path = locate_npm_package(AXE_PIN.name) / AXE_PIN.file
    verify_file(path, AXE_PIN.sha256, AXE_PIN.label)
    return str(path)


def blocking(violations: list[dict]) -> list[dict]:
    return [violation for violation in violations if violation["impact"] in BLOCKING]


@pytest.fixture(scope="module")
def audited(open_page, deck_url, axe_source):
    """The lecture with axe-core injected (the page's policy bypassed for the test's script only)."""
    context, page = open_page(deck_url + "index.html?autorun=0", bypass_csp=True)
    deck = DeckPage(page)
    deck.wait_until_ready()
    deck.without_transitions()
    page.add_script_tag(path=axe_source)
    yield deck
    context.close()


# reveal.js keeps every printed slide but one marked hidden from assistive technology
# (`hidden`, `aria-hidden`: its state for slides off screen, meaningless on paper); the
# marks are lifted so that axe reads each slide as a student's reader reads it on screen.
EVERY_SLIDE_READABLE = """() => {
  const slides = [...document.querySelectorAll('.reveal .pdf-page > section')];
  for (const slide of slides) { slide.removeAttribute('hidden'); slide.removeAttribute('aria-hidden'); }
  return slides.length;
}"""


def test_axe_finds_nothing_serious_on_any_slide(browser, deck_url, axe_source):
    """Every slide at once, as printed: one run of axe instead of one per slide (and its whole-page set-up)."""
    context = browser.new_context(viewport={"width": 1280, "height": 720}, bypass_csp=True)
    try:
        page = context.new_page()
        page.goto(deck_url + "index.html?print-pdf")
        page.wait_for_selector("html[data-cells=ready]", timeout=30_000)
        page.evaluate("() => document.fonts.ready.then(() => true)")
        total = page.evaluate("() => Reveal.getTotalSlides()")
        assert page.evaluate(EVERY_SLIDE_READABLE) == total
        assert page.evaluate("() => document.querySelectorAll('.reveal .pdf-page .cell .cm-editor').length") \
            == page.evaluate("() => document.querySelectorAll('.reveal .pdf-page .cell').length") > 40
        page.add_script_tag(path=axe_source)
        violations = page.evaluate(RUN_AXE, [".reveal .slides"])
    finally:
        context.close()
    found = [(violation["id"], violation["impact"], violation["nodes"]) for violation in blocking(violations)]
    minor = sorted({violation["id"] for violation in violations} - {name for name, _, _ in found})
    print(f"\naxe en {total} diapositivas: reglas con avisos menores: {minor or 'ninguna'}")
    assert found == []


# One slide of each kind, on screen: the title, a chapter's dark cover, code beside its figure,
# code above its output, a question with its answer shown (the first), and the last slide.
SLIDES_ON_SCREEN = ["portada", "cap-propiedades", "codo", "dp-rondas", "pregunta", "última"]


def test_axe_finds_nothing_serious_on_each_kind_of_slide_on_screen(audited):
    deck, page = audited, audited.page
    indices = page.evaluate("""(ids) => ids.map((id) =>
        id === 'pregunta' ? Reveal.getSlides().findIndex((slide) => slide.querySelector('.fragment'))
        : id === 'última' ? Reveal.getTotalSlides() - 1
        : Reveal.getIndices(document.getElementById(id)).h)""", SLIDES_ON_SCREEN)
    assert len(set(indices)) == len(SLIDES_ON_SCREEN) and min(indices) >= 0, indices
    found = {}
    for index in indices:
        deck.go_to_slide(index, page.evaluate("(i) => Reveal.getSlides()[i].querySelectorAll('.fragment').length", index))
        violations = blocking(page.evaluate(RUN_AXE, [".reveal .slides > section.present"]))
        if violations:
            found[index + 1] = violations
    assert found == {}


def test_axe_finds_nothing_serious_in_the_pages_own_screens(audited):
    deck, page = audited, audited.page
    deck.go_to_slide(page.evaluate("() => Reveal.getIndices(document.getElementById('codo')).h"))
    checked = {}
    checked["página"] = page.evaluate(RUN_AXE, [".python-status", ".deck-menu-button", ".reveal .controls",
                                                ".reveal .slide-number"])
    deck.blur()
    deck.press("m")
    page.wait_for_selector("dialog.deck-menu[open]")
    page.fill("dialog.deck-menu .deck-menu-search", "ruido")
    checked["índice"] = page.evaluate(RUN_AXE, ["dialog.deck-menu"])
    page.keyboard.press("Escape")
    deck.blur()
    deck.press("z")
    page.wait_for_selector("dialog.cell-zoom-view[open]")
    checked["celda ampliada"] = page.evaluate(RUN_AXE, ["dialog.cell-zoom-view"])
    page.keyboard.press("Escape")
    deck.blur()
    deck.press("h")
    page.wait_for_selector(".reveal .r-overlay-help table td")
    page.wait_for_timeout(400)
    checked["ayuda"] = page.evaluate(RUN_AXE, [".reveal .r-overlay-help"])
    page.keyboard.press("Escape")
    found = {name: blocking(violations) for name, violations in checked.items() if blocking(violations)}
    assert found == {}, [(name, v["id"], v["nodes"]) for name, vs in found.items() for v in vs]


def test_axe_finds_nothing_serious_on_an_open_prompt_nor_on_the_menus_worksheets(audited):
    deck, page = audited, audited.page
    cell = deck.cell("ataque-laplace")
    cell.show()
    cell.click_prompt()
    assert cell.prompt()["shown"]
    checked = {"prueba esto": page.evaluate(RUN_AXE, [".reveal .slides > section.present"])}
    cell.click_prompt()
    deck.blur()
    deck.open_menu()
    page.wait_for_selector("dialog.deck-menu .deck-menu-worksheets a[data-worksheet]")
    checked["índice con sus cuadernos"] = page.evaluate(RUN_AXE, ["dialog.deck-menu"])
    page.keyboard.press("Escape")
    found = {name: blocking(violations) for name, violations in checked.items() if blocking(violations)}
    assert found == {}, [(name, v["id"], v["nodes"]) for name, vs in found.items() for v in vs]


# ------------------------------------------------------------------ the keyboard

FOCUSED = """() => {
  const element = document.activeElement;
  return {tag: element.tagName.toLowerCase(), className: String(element.className),
          action: element.dataset ? element.dataset.action || null : null,
          cell: element.closest('.cell') ? element.closest('.cell').dataset.cellId : null,
          editing: Boolean(element.closest('.cm-content')),
          slide: element.closest('section') ? Reveal.getIndices(element.closest('section')).h : null};
}"""


def test_tab_stops_on_the_code_and_goes_past_it_without_editing(new_deck, deck_url):
    deck = new_deck(deck_url + "index.html?autorun=0#/codo", python=False)
    deck.wait_for_cells_on_screen()
    page = deck.page
    cell = deck.cell("codo")
    original = cell.source
    slide = deck.slide_index
    page.focus(f"{cell.selector} [data-action=run]")
    stops = []
    for _ in range(12):
        deck.press("Tab")
        stops.append(page.evaluate(FOCUSED))
    # The code is one stop; nothing typed, nothing edited; never a slide other than this one.
    assert any(stop["className"] == "cell-editor" for stop in stops), stops
    assert not any(stop["editing"] for stop in stops), stops
    assert all(stop["slide"] in (None, slide) for stop in stops), stops
    assert cell.source == original


def test_enter_edits_tab_indents_and_esc_goes_back_to_the_run_button(new_deck, deck_url):
    deck = new_deck(deck_url + "index.html?autorun=0#/codo", python=False)
    deck.wait_for_cells_on_screen()
    page = deck.page
    cell = deck.cell("codo")
    original = cell.source
    page.focus(f"{cell.selector} .cell-editor")
    deck.press("Enter")
    assert page.evaluate(FOCUSED)["editing"]
    assert cell.source == original  # entering is not editing
    deck.press("Tab")
    assert cell.source == "    " + original  # Tab indents the line (the cursor is on line 1)
    assert page.evaluate(FOCUSED)["editing"]
    deck.press("Shift+Tab")
    assert cell.source == original
    deck.press("Escape")
    focused = page.evaluate(FOCUSED)
    assert (focused["cell"], focused["action"]) == ("codo", "run"), focused
    # Keys reach the slides again (the run button takes no arrow keys).
    slide = deck.slide_index
    deck.press("ArrowRight")
    deck.wait_for_slide(slide + 1)


# ------------------------------------------------------------------ figures, announcements, contrast

ALTS = "() => [...document.querySelectorAll('img.out-figure')].map((img) => img.alt)"


def test_every_figure_says_what_it_shows_before_and_after_a_run(audited):
    deck, page = audited, audited.page
    alts = page.evaluate(ALTS)
    # Every figure the deck declares (chapters 1 to 6), each with the sentence its function wrote.
    declared = page.evaluate("() => [...document.querySelectorAll('.cell')].reduce((n, c) => n + Number(c.dataset.figures), 0)")
    assert len(alts) == declared >= 17
    assert [alt for alt in alts if not re.fullmatch(r"Figura \d+: [A-ZÁÉÍÓÚ].{60,}\.", alt)] == []
    assert not [alt for alt in alts if "de la celda" in alt or "sin descripción" in alt
                or re.search(r"\d\.\d|[{}]", alt)]
    codo = deck.cell("codo")
    before = page.get_attribute(f"{codo.selector} img.out-figure", "alt")
    assert "b ≈ 15 849" in before
    assert codo.run() == "done"
    assert page.get_attribute(f"{codo.selector} img.out-figure", "alt") == before
    # The run was announced: its status, its first lines and its figure.
    announced = page.inner_text(".deck-announcer")
    print(f"\nanunciado: «{announced}»")
    assert announced.startswith("Celda codo: hecho.") and "error mínimo en b" in announced and before in announced
    # One place speaks for every cell (not 30 status lines of their own).
    assert page.evaluate("() => document.querySelectorAll('.cell-status[role], .cell-status[aria-live]').length") == 0


# The contrast (WCAG) of every text block of a cell's output against what lies behind it,
# with the opacity of the block and its ancestors.
OUTPUT_CONTRAST = """(selector) => {
  const rgba = (text) => { const [r, g, b, a = 1] = text.match(/[\\d.]+/g).map(Number); return [r, g, b, a]; };
  const over = ([r, g, b, a], [R, G, B]) => [r * a + R * (1 - a), g * a + G * (1 - a), b * a + B * (1 - a)];
  const luminance = (rgb) => {
    const [r, g, b] = rgb.map((v) => { v /= 255; return v <= 0.04045 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * r + 0.7152 * g + 0.0722 * b;
  };
  const page = rgba(getComputedStyle(document.querySelector('.reveal-viewport')).backgroundColor);
  return [...document.querySelectorAll(selector + ' .cell-output > pre')].map((block) => {
    let opacity = 1;
    for (let e = block; e; e = e.parentElement) opacity *= Number(getComputedStyle(e).opacity);
    const own = rgba(getComputedStyle(block).backgroundColor);
    const background = over([...own.slice(0, 3), own[3] * opacity], page);
    const text = over([...rgba(getComputedStyle(block).color).slice(0, 3), opacity], over(own, page));
    const [a, b] = [luminance(text), luminance(background)];
    return {kind: block.className, ratio: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05)};
  });
}"""


def test_output_that_no_longer_matches_its_code_stays_readable(audited):
    deck, page = audited, audited.page
    cell = deck.cell("composicion-hospital")
    cell.show()
    cell.set_source(cell.source + "\n# cambiado")
    try:
        assert cell.output_state()["stale"]
        ratios = page.evaluate(OUTPUT_CONTRAST, cell.selector)
        # A stderr and an error block, dimmed the same way.
        cell_with_error = deck.cell("elegir-b")
        cell_with_error.show()
        cell_with_error.set_source("import sys\nprint('aviso', file=sys.stderr)\n1/0")
        assert cell_with_error.run() == "error"
        cell_with_error.set_source("1/0\n# cambiado")
        ratios += page.evaluate(OUTPUT_CONTRAST, cell_with_error.selector)
        cell_with_error.reset_in_page()
    finally:
        cell.reset_in_page()
    print(f"\nsalida atenuada: contraste mínimo {min(r['ratio'] for r in ratios):.1f}:1 "
          f"({', '.join(sorted({r['kind'] for r in ratios}))})")
    assert {r["kind"] for r in ratios} >= {"out-stream out-stdout", "out-stream out-stderr", "out-error"}
    assert min(r["ratio"] for r in ratios) >= 4.5, ratios
