"""Live cells in the browser: editing and running (Playwright against a deck built by build.py).

The cells' hooks and buttons, the editor (keys never move slides, swipes stay in
the cell, the cursor lands where clicked at any scale), running with the keys,
the run queue, and resetting code. The tests share one deck where Python booted
once (`live_deck`) and drive it through deckpage.DeckPage. Bad inputs:
test_cells_bad_input.py; restarts and fresh pages: test_cells_lifecycle.py.
"""

from __future__ import annotations

import pytest

from deckchecks import WATCH_OUTPUT

CELL_IDS = ["saludo", "figura", "editable", "otra", "pruebas", "doble-a", "doble-b"]


# ------------------------------------------------- isolated page, Python ready


def test_python_ready_reruns_the_cells_on_screen(live_deck):
    deck = live_deck
    saludo, figura = deck.cell("saludo"), deck.cell("figura")
    saludo.wait_for_status("done")
    assert saludo.origin == "live"
    assert saludo.output_text().split() == ["hola", "42"]
    # Cells on other slides keep their pre-computed outputs until they run.
    assert figura.origin == "prerendered"
    assert figura.figures().count() == 1
    assert deck.isolated is True
    print(f"\narranque de Python (aislado): {deck.python['timings']}")


def test_cells_have_the_stable_hooks(live_deck):
    page = live_deck.page
    assert page.locator(".cell[data-cell-id]").count() == len(CELL_IDS)
    for cell_id in CELL_IDS:
        cell = live_deck.cell(cell_id)
        assert page.locator(cell.selector).count() == 1
        assert page.locator(f"{cell.selector}[data-prevent-swipe]").count() == 1
        for action in ("run", "stop", "reset"):
            assert cell.locator(f"[data-action={action}]").count() == 1
        assert cell.locator(".cell-output[data-origin]").count() == 1


def test_the_buttons_symbols_are_for_the_eye_only(live_deck):
    # reveal.js announces each slide by copying its text into a live region; a «▶» copied
    # there asked for the symbols' fallback font on some visits and not others.
    page = live_deck.page
    buttons = page.evaluate("""() => [...document.querySelectorAll('.cell [data-action]')].map((button) => ({
        label: button.getAttribute('aria-label') || [...button.childNodes].filter((node) => !(node.getAttribute && node.getAttribute('aria-hidden') === 'true'))
                 .map((node) => node.textContent).join('').trim(),
        symbol: (button.querySelector('[aria-hidden=true]') || {}).textContent}))""")
    assert {(button["symbol"], button["label"]) for button in buttons} == {
        ("▶", "Ejecutar"), ("■", "Detener"), ("↺", "Original"), ("⤓", ".py"),
        ("", "Ampliar la celda"),  # the zoom button: a drawn icon, hidden, and its name in aria-label
        # The take-home tools (celltools.js): words only, named by their aria-label.
        (None, "Copiar el código de la celda"), (None, "Copiar la salida"),
        (None, "Descargar el código de la celda como archivo .py")}
    live_deck.cell("otra").show()
    page.wait_for_function("() => document.querySelector('.reveal .aria-status').textContent.includes('Ejecutar')")
    announced = page.evaluate("() => document.querySelector('.reveal .aria-status').textContent")
    assert not set("▶■↺⤓") & set(announced), announced


def test_the_script_surface_is_small_and_plain(live_deck):
    page = live_deck.page
    surface = page.evaluate("""() => {
        const plugin = Reveal.getPlugin('dpdeck');
        const cell = plugin.cell('saludo');
        return {cell: Object.keys(cell).sort(), python: Object.keys(plugin.python).sort(),
                missing: plugin.cell('no-existe'), global: typeof window.dpdeck};
    }""")
    assert surface == {"cell": ["check", "edited", "id", "reset", "run", "setSource", "source", "stop"],
                       "python": ["inheritsPolicy", "state", "stats", "timings"], "missing": None, "global": "undefined"}


def test_a_figure_runs_live_with_the_prerendered_markup(live_deck):
    figura = live_deck.cell("figura")
    prerendered = figura.output_text()
    assert figura.origin_label() == "calculado al crear las diapositivas"
    assert figura.run() == "done"
    assert figura.origin_label().startswith("calculado en tu navegador")
    assert figura.origin == "live"
    # Same seed, same numbers: the live text equals the build's.
    assert figura.output_text() == prerendered
    image = figura.figures()
    assert image.count() == 1
    assert image.get_attribute("src").startswith("blob:")
    # What it shows, from what matplotlib knows of a figure without a description of its own.
    assert image.get_attribute("alt") == "Figura 1: gráfico sin descripción propia: 20 barras"
    assert image.evaluate("img => img.naturalWidth") == 480


def test_a_rerun_keeps_the_previous_figure_until_the_new_one_is_there(live_deck):
    figura = live_deck.cell("figura")
    figura.show()
    live_deck.page.evaluate(WATCH_OUTPUT, figura.selector)
    assert figura.run() == "done"
    seen = live_deck.page.evaluate("window.__stopWatching()")
    assert seen["samples"] > 0
    assert seen["minFigures"] == 1 and seen["minChildren"] >= 2, seen
    assert figura.figures().count() == 1


KEYS_THAT_MOVE_SLIDES = ["Space", "ArrowRight", "ArrowLeft", "ArrowDown", "ArrowUp", "PageDown", "PageUp",
                         "Home", "End", "n", "p", "h", "l", "j", "k", "f", "s", "o", "b", "v", ".", "?"]


def test_keys_typed_in_the_editor_never_move_slides(live_deck):
    deck, page = live_deck, live_deck.page
    editable = deck.cell("editable")
    editable.show()
    slide = editable.slide_index
    original = editable.original
    pages_before = len(page.context.pages)
    editable.click_editor()
    deck.press("Control+End")
    for key in KEYS_THAT_MOVE_SLIDES:
        deck.press(key)
        assert deck.slide_index == slide, key
    assert page.evaluate("Reveal.isOverview()") is False
    assert page.evaluate("Reveal.isPaused()") is False
    assert page.evaluate("document.fullscreenElement") is None
    assert len(page.context.pages) == pages_before  # "s" opened no speaker window
    typed = editable.source
    # Every printable key went into the code: the space, then the letters after End.
    assert "nphljkfsobv.?" in typed
    assert len(typed) == len(original) + 1 + len("nphljkfsobv.?")
    # Escape leaves the editor without opening the overview.
    deck.press("Escape")
    assert page.evaluate("Reveal.isOverview()") is False
    assert page.evaluate("document.activeElement.closest('.cm-editor')") is None
    # Outside the editor the same keys do move the slides (so the check above can fail).
    deck.press("ArrowRight")
    deck.wait_for_slide(slide + 1)
    editable.show()
    editable.reset()
    assert editable.source == original


SWIPE = """([selector, dx]) => {
    const target = document.querySelector(selector);
    const box = target.getBoundingClientRect();
    const x = box.left + box.width / 2, y = box.top + Math.min(box.height / 2, 40);
    const fire = (type, cx) => target.dispatchEvent(new PointerEvent(type, {
        bubbles: true, cancelable: true, pointerType: 'touch', isPrimary: true, pointerId: 7,
        clientX: cx, clientY: y}));
    fire('pointerdown', x);
    for (let step = 1; step <= 5; step++) fire('pointermove', x + dx * step / 5);
    fire('pointerup', x + dx);
}"""


def test_swipes_inside_a_cell_do_not_change_slide(live_deck):
    deck, page = live_deck, live_deck.page
    editable = deck.cell("editable")
    editable.show()
    start = editable.slide_index
    page.evaluate(SWIPE, [f"{editable.selector} .cm-content", -300])
    page.wait_for_timeout(300)
    assert deck.slide_index == start
    # The same swipe on the slide's title does move on.
    page.evaluate(SWIPE, [f".reveal .slides > section:nth-child({start + 1}) h1", -300])
    deck.wait_for_slide(start + 1)


# Screen rectangle of one character, found through the DOM (not through
# CodeMirror), so a wrong click mapping cannot hide behind a wrong measurement.
CHAR_BOX = """([selector, line, column]) => {
    const lineElement = document.querySelectorAll(selector + ' .cm-line')[line];
    const walker = document.createTreeWalker(lineElement, NodeFilter.SHOW_TEXT);
    let seen = 0;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (seen + node.length > column) {
            const range = document.createRange();
            range.setStart(node, column - seen);
            range.setEnd(node, column - seen + 1);
            const box = range.getBoundingClientRect();
            return {x: box.left, y: box.top, width: box.width, height: box.height};
        }
        seen += node.length;
    }
    return null;
}"""
MARK = "§"


@pytest.mark.parametrize("viewport", [(1280, 720), (1920, 1080), (800, 450), (700, 900)])
def test_the_cursor_lands_where_clicked_at_any_slide_scale(live_deck, viewport):
    deck, page = live_deck, live_deck.page
    editable = deck.cell("editable")
    page.set_viewport_size({"width": viewport[0], "height": viewport[1]})
    try:
        editable.show()
        page.wait_for_timeout(150)  # reveal lays the slides out again after a resize
        source = editable.source
        line, column = 1, 6  # the "x" of "print(x * 2)"
        assert source.splitlines()[line][column] == "x"
        box = page.evaluate(CHAR_BOX, [editable.selector, line, column])
        # Left quarter of the character: the cursor goes before it. Typing there shows where it went.
        page.mouse.click(box["x"] + box["width"] * 0.25, box["y"] + box["height"] / 2)
        page.keyboard.type(MARK)
        expected = len(source.splitlines()[0]) + 1 + column
        typed = editable.source
        assert typed.index(MARK) == expected, f"escala {viewport}: cursor en {typed.index(MARK)}, esperado {expected}"
        editable.reset_in_page()
        assert editable.source == source
        deck.blur()
    finally:
        page.set_viewport_size({"width": 1280, "height": 720})


def test_shift_enter_and_ctrl_enter_run_the_cell(live_deck):
    deck = live_deck
    editable = deck.cell("editable")
    editable.show()
    original = editable.original
    for keys in ("Shift+Enter", "Control+Enter"):
        before = editable.runs
        editable.click_editor()
        deck.press(keys)
        assert editable.wait_for_run(before) == "done"
        assert editable.origin == "live"
        assert editable.output_text().strip() == "2"
        assert editable.source == original  # no newline typed
    deck.blur()


def test_a_run_waits_in_the_queue_while_another_runs(live_deck):
    pruebas, doble_a = live_deck.cell("pruebas"), live_deck.cell("doble-a")
    pruebas.set_source("import time\nt0 = time.time()\nwhile time.time() - t0 < 3:\n    pass\n'fin'")
    before_long = pruebas.click_run()
    pruebas.wait_for_status("running")
    doble_a.show()
    before_a = doble_a.runs
    doble_a.click("run")
    assert doble_a.status == "queued"
    assert live_deck.page.inner_text(f"{doble_a.selector} .cell-status") == "En cola"
    assert pruebas.wait_for_run(before_long) == "done"
    assert doble_a.wait_for_run(before_a) == "done"
    assert doble_a.output_text().strip() == "a"


def test_reset_restores_the_original_code_and_can_be_undone(live_deck):
    deck = live_deck
    editable = deck.cell("editable")
    editable.show()
    original = editable.original
    edited = "x = 21\nprint(x * 2)"
    editable.set_source(edited)
    assert editable.edited
    assert editable.saved_edit == edited
    editable.reset()
    assert editable.source == original
    assert not editable.edited
    assert editable.saved_edit is None
    editable.click_editor()
    deck.press("Control+z")
    assert editable.source == edited
    editable.reset()
    deck.blur()


def test_restore_all_returns_every_cell_to_its_original_and_can_be_undone(live_deck):
    deck, page = live_deck, live_deck.page
    edits = {"editable": "print('uno')", "otra": "print('dos')"}
    for cell_id, source in edits.items():
        deck.cell(cell_id).set_source(source)
    # Cells that earlier tests on this page left edited are restored (and brought back) too.
    edited = deck.edited_cells()
    assert edited >= 2
    deck.click_status_button("restore-all")
    for cell_id in edits:
        cell = deck.cell(cell_id)
        assert cell.source == cell.original
        assert cell.saved_edit is None
    assert page.is_hidden(".python-status [data-action=restore-all]")
    # For a few seconds, one click brings every edit back.
    toast = page.locator(".deck-toast")
    assert toast.is_visible()
    assert toast.inner_text().split("\n")[0].strip() == f"Se restauraron {edited} celdas"
    page.mouse.move(640, 200)  # away from the status chip
    toast.locator("[data-action=undo-restore]").click()
    assert toast.is_hidden()
    for cell_id, source in edits.items():
        cell = deck.cell(cell_id)
        assert cell.source == source
        assert cell.saved_edit == source
        assert cell.edited
    assert deck.edited_cells() == edited
    for cell_id in edits:
        deck.cell(cell_id).reset_in_page()
