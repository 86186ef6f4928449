"""The presenter is never surprised (the whole lecture, dist/, headless Chromium).

* a run keeps the previous output, figure included, where it is until its own
  output is complete, and nothing else on the slide moves: measured on a slide
  with text before and after a figure cell, both for a run that prints for
  over a second and for the rerun the slide on screen does by itself when
  Python becomes ready (the worst displacement of any slide element, in slide
  pixels, and the layout-shift score Chromium reports, are printed);
* after ▶ is clicked, Space and → move on as everywhere in reveal.js (a ▶
  pressed from the keyboard keeps the focus);
* a failed Python load says so on one line in the band below the slide's
  text, never over it, and its ✕ dismisses it; on file:// every ▶ looks
  disabled and says why beside it, in one line;
* stopping a run still waiting in the queue puts the cell back as it was,
  with no «Error»;
* help opens with F1 and H too (? is Shift+' on a Spanish keyboard) and lists
  the deck's own keys (run, stop, code size, zoom, menu, editing);
* ?print-pdf&showNotes=separate-page prints each slide's notes on a page of
  their own, headed in Spanish with the slide's number and title;
* the menu (M or ☰) lists every slide by chapter, searches across the slides
  (accents and case ignored) and jumps to a result, and gives a link to the
  current slide (reveal's hash) with a copy button;
* Z (or a cell's four-corner button) shows the cell as large as a 1024×768 window allows —
  code at 24 px or more, its figure at least 600 px wide — and Esc puts it
  back on its slide, whose keys work again;
"""

from __future__ import annotations

import pytest

from deckpage import DeckPage
from test_chrome import CONTENT_BOXES, overlap

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
    deck = new_deck()
    # Python's interpreter is held back until the layout is watched: a quick boot would otherwise be
    # «listo» before the watching starts, and the rerun it causes would go unmeasured.
    held = []
    deck.page.context.route("**/pyodide/pyodide.asm.wasm", lambda route: held.append(route))
    deck.goto(deck_url + "index.html#/" + CELL_WITH_TEXT_AROUND)
    deck.wait_for_cells_on_screen()
    cell = deck.cell(CELL_WITH_TEXT_AROUND)
    deck.page.evaluate("() => document.fonts.ready")
    deck.settle()
    assert deck.python_state in ("off", "loading")
    deck.watch_layout(cell.selector)
    for _ in range(600):
        if held:
            break
        deck.page.wait_for_timeout(100)
    assert held, "la descarga de pyodide.asm.wasm no pasó por la ruta retenida"
    for route in held:
        route.continue_()
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


@pytest.fixture(scope="module")
def lecture(open_page, deck_url):
    """The lecture with Python ready (no automatic rerun), shared by the tests below."""
    context, page = open_page(deck_url + "index.html?autorun=0")
    deck = DeckPage(page)
    deck.wait_until_ready()
    deck.without_transitions()
    yield deck
    context.close()


def test_after_clicking_run_space_and_the_right_arrow_move_on(lecture):
    deck = lecture
    cell = deck.cell("codo")
    for key in ("Space", "ArrowRight"):
        cell.show()
        slide = deck.slide_index
        before = cell.runs
        cell.click("run")  # a mouse click
        assert cell.wait_for_run(before) == "done"
        deck.press(key)
        deck.wait_for_slide(slide + 1)
    # Pressed from the keyboard, ▶ hands the focus to the cell's code, where Space is the
    # slides' key again (test_in_class.py presses it) and Enter edits.
    cell.show()
    deck.page.focus(f"{cell.selector} [data-action=run]")
    before = cell.runs
    deck.press("Enter")
    assert cell.wait_for_run(before) == "done"
    assert deck.page.evaluate("() => document.activeElement.classList.contains('cell-editor')")
    deck.blur()


ZOOMED = """() => {
  const dialog = document.querySelector('dialog.cell-zoom-view');
  if (!dialog || !dialog.open) return null;
  const line = dialog.querySelector('.cm-line');
  const figure = dialog.querySelector('img.out-figure');
  return {cell: dialog.querySelector('.cell').dataset.cellId,
          codePx: parseFloat(getComputedStyle(line).fontSize),
          figureWidth: figure ? figure.getBoundingClientRect().width : 0,
          scrolls: dialog.querySelector('.cm-scroller').scrollWidth - dialog.querySelector('.cm-scroller').clientWidth};
}"""


def test_z_shows_the_cell_large_and_esc_puts_it_back(new_deck, deck_url, artifacts_dir):
    deck = new_deck(deck_url + "index.html?autorun=0#/codo", viewport=(1024, 768), python=False)
    deck.wait_for_cells()
    deck.without_transitions()
    page = deck.page
    slide = deck.slide_index
    deck.blur()
    deck.press("z")
    page.wait_for_selector("dialog.cell-zoom-view[open]")
    cell = deck.cell("codo")
    cell.wait_for_figures_loaded()
    zoomed = page.evaluate(ZOOMED)
    page.screenshot(path=str(artifacts_dir / "celda-ampliada-1024x768.png"))
    print(f"\ncelda ampliada a 1024×768: código {zoomed['codePx']:.1f} px, "
          f"figura {zoomed['figureWidth']:.0f} px de ancho")
    assert zoomed["cell"] == "codo"
    assert zoomed["codePx"] >= 24 and zoomed["figureWidth"] >= 600, zoomed
    assert zoomed["scrolls"] <= 1
    # Keys in the zoomed cell are not slide navigation.
    deck.press("ArrowRight")
    assert deck.slide_index == slide
    deck.press("Escape")
    page.wait_for_selector("dialog.cell-zoom-view[open]", state="hidden")
    assert page.evaluate("() => document.querySelector('.cell[data-cell-id=codo]').closest('section').id") == "codo"
    # Its button does the same; then the slide's keys work again.
    cell.click("zoom")
    page.wait_for_selector("dialog.cell-zoom-view[open]")
    page.click("dialog.cell-zoom-view [data-action=close-zoom]")
    assert page.evaluate(ZOOMED) is None
    deck.blur()
    deck.press("ArrowRight")
    deck.wait_for_slide(slide + 1)


BUSY = "import time\nt0 = time.time()\nwhile time.time() - t0 < 4:\n    pass\nprint('fin')"


def test_stopping_a_queued_run_is_not_an_error(lecture):
    deck = lecture
    first, second = deck.cell("codo"), deck.cell("elegir-b")
    first.set_source(BUSY)
    before_first = first.click_run()
    first.wait_for_status("running")
    second.show()
    second.click("run")
    second.wait_for_status("queued")
    label_before = second.origin_label()
    second.stop()
    deck.page.wait_for_timeout(300)
    status = second.status
    shown = deck.page.inner_text(f"{second.selector} .cell-status")
    print(f"\ndetener una celda en cola: estado {status!r}, dice {shown!r}")
    assert status == "idle" and shown == "", (status, shown)
    assert second.origin_label() == label_before == "calculado al crear las diapositivas"
    assert first.wait_for_run(before_first) == "done"
    first.reset_in_page()
    assert second.runs == 0


CHIP = """() => {
  const chip = document.querySelector('.python-status');
  const box = chip.getBoundingClientRect();
  const shown = (selector) => {
    const element = chip.querySelector(selector);
    return Boolean(element) && element.getClientRects().length > 0;
  };
  return {box: [box.left, box.top, box.right, box.bottom], height: box.height,
          attention: chip.hasAttribute('data-attention'), text: chip.innerText.replace(/\\s+/g, ' ').trim(),
          retry: shown('[data-action=retry]'), dismiss: shown('[data-action=dismiss]')};
}"""


def test_a_failed_python_load_covers_no_slide_text_and_can_be_dismissed(new_deck, deck_url):
    deck = new_deck()
    page = deck.page
    page.context.route("**/pyodide/pyodide.asm.wasm", lambda route: route.abort())
    deck.goto(deck_url + "index.html?autorun=0")
    deck.wait_for_cells()
    deck.without_transitions()
    deck.wait_for_python("error", timeout=60_000)
    page.mouse.move(640, 200)
    chip = page.evaluate(CHIP)
    assert chip["attention"] and chip["retry"] and chip["dismiss"], chip
    assert "No se pudo cargar Python" in chip["text"]
    assert chip["height"] <= 32, chip  # one line, in the band below the slides' content
    covered = {}
    for index in range(page.evaluate("() => Reveal.getTotalSlides()")):
        deck.go_to_slide(index)
        chip = page.evaluate(CHIP)
        hits = [piece["what"] for piece in page.evaluate(CONTENT_BOXES, index) if overlap(chip["box"], piece["box"])]
        if hits:
            covered[index + 1] = hits[:3]
    assert covered == {}
    page.click(".python-status [data-action=dismiss]")
    page.mouse.move(640, 200)
    chip = page.evaluate(CHIP)
    assert not chip["attention"] and not chip["retry"], chip
    # Still reachable: pointing at the chip offers Retry again.
    page.hover(".python-status")
    assert page.is_visible(".python-status [data-action=retry]")


RUN_BUTTON = """(selector) => {
  const cell = document.querySelector(selector);
  const run = cell.querySelector('[data-action=run]');
  const note = cell.querySelector('.cell-status');
  const style = getComputedStyle(run);
  return {disabled: run.hasAttribute('data-unavailable'), title: run.title, color: style.color,
          background: style.backgroundColor, note: note.innerText,
          oneLine: getComputedStyle(note).whiteSpace === 'nowrap' && note.scrollWidth <= note.clientWidth + 1};
}"""


def test_on_a_file_page_every_run_button_looks_disabled_and_says_why(new_deck, cells_dist):
    deck = new_deck((cells_dist / "index.html").as_uri())
    deck.wait_for_cells()
    page = deck.page
    ids = page.evaluate("() => [...document.querySelectorAll('.cell[data-cell-id]')].map((c) => c.dataset.cellId)")
    looks = {}
    for cell_id in ids:  # each on its slide, laid out
        deck.cell(cell_id).show()
        looks[cell_id] = page.evaluate(RUN_BUTTON, deck.cell(cell_id).selector)
    first = looks[ids[0]]
    print(f"\nfile://: ▶ {first['color']} sobre {first['background']}; al lado: «{first['note']}»")
    assert all(look["disabled"] and look["oneLine"] and "servidor" in look["note"]
               for look in looks.values()), looks
    assert first["background"] != "rgb(31, 95, 168)"  # not the live ▶'s blue
    # Pressed anyway, it says how to serve the slides.
    deck.cell(ids[0]).show()
    deck.cell(ids[0]).click("run")
    assert "python3 build.py serve" in deck.cell(ids[0]).output_text()


DECK_KEY_ACTIONS = ["Esta ayuda", "En una celda: ejecutarla", "Detener las celdas de esta diapositiva",
                    "Ejecutar las celdas de esta diapositiva",
                    "Volver al código original las celdas de esta diapositiva (se puede deshacer)",
                    "Letra del código más grande", "Letra del código más pequeña",
                    "Ampliar la celda de esta diapositiva (Esc vuelve)",
                    "Índice, búsqueda y enlace a esta diapositiva", "Salir del editor: el foco pasa a ▶ Ejecutar",
                    "Sangrar o quitar sangría (también Ctrl + ] y Ctrl + [)"]


@pytest.mark.parametrize("key", ["F1", "h"])
def test_help_opens_with_f1_and_h_and_lists_the_decks_keys(new_deck, deck_url, key):
    deck = new_deck(deck_url + "index.html?autorun=0#/codo", python=False)
    deck.wait_for_cells()
    page = deck.page
    slide = deck.slide_index
    deck.blur()
    deck.press(key)
    page.wait_for_selector(".reveal .r-overlay-help table td")
    rows = page.evaluate("""() => [...document.querySelectorAll('.reveal .r-overlay-help tr')]
        .map((row) => [...row.querySelectorAll('td')].map((cell) => cell.textContent.trim()))
        .filter((cells) => cells.length === 2)""")
    actions = [action for _, action in rows]
    assert [action for action in DECK_KEY_ACTIONS if action not in actions] == []
    keys = {action: keys for keys, action in rows}
    # H is help here; ← still goes back.
    assert keys["Ir a la izquierda"] == "←", keys
    assert keys["Esta ayuda"] == "?  ,  H  ,  F1"
    assert deck.slide_index == slide
    deck.press("Escape")
    page.wait_for_selector(".reveal .r-overlay-help", state="detached")


NOTES_PAGES = """() => [...document.querySelectorAll('.reveal .speaker-notes-pdf')].map((notes) => ({
  heading: (notes.querySelector('.notes-pdf-heading') || {}).textContent || '',
  before: getComputedStyle(notes, '::before').content,
  layout: notes.dataset.layout,
  text: notes.innerText.length}))"""


def test_printed_notes_pages_are_headed_in_spanish(browser, deck_url, artifacts_dir):
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.goto(deck_url + "index.html?print-pdf&showNotes=separate-page")
        page.wait_for_function("() => document.querySelectorAll('.speaker-notes-pdf .notes-pdf-heading').length > 0")
        notes = page.evaluate(NOTES_PAGES)
        slides = page.evaluate("() => Reveal.getTotalSlides()")
        titles = page.evaluate("() => Reveal.getSlides().map((s) => (s.querySelector('h1') || {}).textContent || '')")
        pdf = page.pdf(prefer_css_page_size=True, print_background=True)
    finally:
        context.close()
    (artifacts_dir / "diapositivas-con-notas.pdf").write_bytes(pdf)
    pages = len(__import__("re").findall(rb"/Type\s*/Page\b(?!s)", pdf))
    print(f"\nPDF con notas: {pages} páginas para {slides} diapositivas; primera: «{notes[0]['heading']}»")
    assert len(notes) == slides  # every slide has notes (test_deck.py)
    assert all(note["layout"] == "separate-page" and note["before"] in ("none", "normal") for note in notes)
    assert notes[0]["heading"].startswith("Notas del presentador · diapositiva 1: ")
    second = notes[1]["heading"]
    assert second == f"Notas del presentador · diapositiva 2: {titles[1].strip()}", second
    assert pages >= 2 * slides


INDEX = """() => {
  const dialog = document.querySelector('dialog.deck-menu');
  return {open: dialog.open,
          chapters: [...dialog.querySelectorAll('.deck-menu-chapter h3')].map((h) => h.textContent),
          slides: [...dialog.querySelectorAll('.deck-menu-index .deck-menu-slide')].length,
          current: (dialog.querySelector('.deck-menu-index [aria-current]') || {}).textContent || '',
          link: dialog.querySelector('.deck-menu-link').value,
          focused: document.activeElement.className};
}"""


def test_the_menu_lists_chapters_searches_and_shares_the_current_slide(new_deck, deck_url):
    deck = new_deck(deck_url + "index.html?autorun=0#/codo", python=False)
    deck.wait_for_cells()
    deck.without_transitions()
    page = deck.page
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    deck.blur()
    deck.press("m")
    page.wait_for_selector("dialog.deck-menu[open]")
    index = page.evaluate(INDEX)
    total = page.evaluate("() => Reveal.getTotalSlides()")
    print(f"\níndice: {len(index['chapters'])} capítulos, {index['slides']} diapositivas; {index['chapters']}")
    assert index["slides"] == total
    assert len(index["chapters"]) >= 6 and "3 · Sensibilidad" in index["chapters"]
    assert index["current"] == "25Encontrar el codo" or "Encontrar el codo" in index["current"]
    assert index["link"].endswith("#/codo") and "autorun" not in index["link"]
    assert index["focused"] == "deck-menu-search"
    # Copy the link.
    page.click("dialog.deck-menu [data-action=copy-link]")
    assert page.evaluate("() => navigator.clipboard.readText()") == index["link"]
    # Search: accents and case do not matter; Enter goes to the first result.
    page.focus("dialog.deck-menu .deck-menu-search")
    page.keyboard.type("SENSIBILIDAD LOCAL")
    results = page.evaluate("() => [...document.querySelectorAll('.deck-menu-results .deck-menu-slide')]"
                            ".map((b) => b.querySelector('.deck-menu-title').textContent)")
    assert "El espejismo de la sensibilidad local" in results, results
    assert page.evaluate("() => Reveal.getPlugin('dpdeck-menu').search('codigo').length") > 0
    page.fill("dialog.deck-menu .deck-menu-search", "espejismo")
    page.keyboard.press("Enter")
    page.wait_for_selector("dialog.deck-menu", state="hidden")
    deck.page.wait_for_function("() => Reveal.getCurrentSlide().querySelector('h1').textContent.includes('espejismo')")
    # The ☰ button opens it too, on the new slide; a chapter's slide is one click away.
    page.click(".deck-menu-button")
    assert "espejismo" in page.evaluate(INDEX)["current"]
    page.click("dialog.deck-menu .deck-menu-index [data-slide='1']")
    deck.wait_for_slide(0)
    # The slides have not changed: no highlight left in their text.
    assert page.evaluate("() => document.querySelectorAll('.reveal .slides mark').length") == 0
