"""Live cells in the browser (Playwright against a deck built by build.py).

Every bad input of the live-cells spec is here, each followed by the same
check: the deck stays usable (slides move, other cells still run, edits are
kept). Most tests share one deck where Python booted once (`live_deck`); the
tests without cross-origin isolation share another (`plain_live_deck`). Every
test drives the deck through deckpage.DeckPage.
"""

from __future__ import annotations

import re
import time

import pytest

from dpdeck.classroom.protocol import MAX_FIGURES, STREAM_EVENT_BURST, STREAM_EVENTS_PER_SECOND
from deckpage import RUN_TIMEOUT_MS

CELL_IDS = ["saludo", "figura", "editable", "otra", "pruebas", "doble-a", "doble-b"]
LAST_SLIDE = 6


def assert_deck_usable(deck, *, edited_cell: str | None = None, edited_source: str | None = None) -> None:
    """Slides still move with the keyboard, another cell still runs, edits are kept."""
    deck.blur()
    start = deck.slide_index
    there, back = ("ArrowLeft", "ArrowRight") if deck.is_last_slide() else ("ArrowRight", "ArrowLeft")
    deck.press(there)
    deck.page.wait_for_function("start => Reveal.getIndices().h !== start", arg=start)
    deck.press(back)
    deck.wait_for_slide(start)
    assert deck.python_state in ("ready", "loading")
    other = deck.cell("otra")
    assert other.run() == "done"
    assert other.output_text().strip() == "10"
    if edited_cell is not None:
        cell = deck.cell(edited_cell)
        assert cell.source == edited_source
        assert cell.saved_edit == edited_source
        assert cell.edited


def run_bad_input(deck, source: str, cell_id: str = "pruebas", timeout: int = RUN_TIMEOUT_MS) -> tuple[str, str]:
    cell = deck.cell(cell_id)
    cell.set_source(source)
    status = cell.run(timeout)
    return status, cell.output_text()


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
    assert figura.origin_label() == "pre-calculado"
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


# Watches a cell's output while it runs: the fewest figures and output elements
# it ever showed, and every label it wore. Call the returned `stop()` afterwards.
WATCH_OUTPUT = """selector => {
    const cell = document.querySelector(selector);
    const output = cell.querySelector('.cell-output');
    const seen = {minFigures: Infinity, minChildren: Infinity, labels: [], samples: 0};
    const sample = () => {
        if (!['queued', 'running'].includes(cell.dataset.status)) return;
        seen.samples += 1;
        seen.minFigures = Math.min(seen.minFigures, output.querySelectorAll('img.out-figure').length);
        seen.minChildren = Math.min(seen.minChildren, output.children.length);
        const label = getComputedStyle(output, '::before').content;
        if (seen.labels[seen.labels.length - 1] !== label) seen.labels.push(label);
    };
    const observer = new MutationObserver(sample);
    observer.observe(cell, {subtree: true, childList: true, attributes: true, characterData: true});
    window.__watched = seen;
    window.__stopWatching = () => { observer.disconnect(); return seen; };
}"""


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


# ------------------------------------------------------------- bad inputs


def test_syntax_error_shows_line_and_caret(live_deck):
    source = "x = 1\ny = (x +\nprint(y)"
    status, text = run_bad_input(live_deck, source)
    assert status == "error"
    assert "Error de sintaxis en la línea 2" in text
    assert "^" in text
    assert_deck_usable(live_deck, edited_cell="pruebas", edited_source=source)


def test_exception_deep_in_a_call_is_trimmed_to_the_cell(live_deck):
    source = (
        "def c(v):\n    return v[10]\n\ndef b(v):\n    return c(v)\n\n"
        "def a():\n    return b([1, 2, 3])\n\nprint('antes')\na()"
    )
    status, text = run_bad_input(live_deck, source)
    assert status == "error"
    assert text.startswith("antes")
    assert "Error en la línea 2: índice fuera de rango." in text
    for line in ("Línea 11", "Línea 8, en a", "Línea 5, en b", "Línea 2, en c"):
        assert line in text
    assert "IndexError: list index out of range" in text
    assert "cellrun" not in text and "/lib/python" not in text and "pyodide" not in text.lower()
    assert_deck_usable(live_deck, edited_cell="pruebas", edited_source=source)


def test_infinite_loop_is_interrupted_by_stop(live_deck):
    deck = live_deck
    pruebas = deck.cell("pruebas")
    source = "print('empieza')\nwhile True:\n    pass"
    pruebas.set_source(source)
    boots = deck.stats["boots"]
    before = pruebas.click_run()
    pruebas.wait_for_status("running")
    pruebas.wait_for_output_containing("empieza")
    started = time.perf_counter()
    pruebas.stop()
    assert pruebas.wait_for_run(before) == "stopped"
    print(f"\nStop → celda detenida (interrupción): {time.perf_counter() - started:.2f} s")
    text = pruebas.output_text()
    assert "empieza" in text and "Ejecución detenida en la línea 2" in text, (text, deck.warnings[-3:])
    # Interrupted inside the same Python: no restart was needed.
    stats = deck.stats
    assert stats["boots"] == boots
    assert stats["interruptFallbacks"] == 0
    assert deck.python_state == "ready"
    assert_deck_usable(deck, edited_cell="pruebas", edited_source=source)


# Runs the cell and presses Stop as soon as its first print arrives (Python is
# then inside the loop), `count` times in a row, inside the page so that each
# round takes milliseconds. Returns how many Stops raised KeyboardInterrupt in
# the cell, and the first one that did not.
STOP_BURST = """async ([cellId, source, count]) => {
    const deck = Reveal.getPlugin('dpdeck');
    const cell = deck.cell(cellId);
    cell.setSource(source);
    const pause = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
    const interrupted = (result) => result.status === 'stopped' && !result.restarted
        && result.outputs.some((output) => output.ename === 'KeyboardInterrupt');
    const waits = [];
    for (let round = 0; round < count; round++) {
        const streamed = deck.python.stats.streamMessages;
        const finished = cell.run();
        while (deck.python.stats.streamMessages === streamed) await pause(1);
        await pause(Math.random() * 5);
        const pressed = performance.now();
        cell.stop();
        const result = await finished;
        waits.push(performance.now() - pressed);
        if (!interrupted(result)) {
            return {interrupted: round, failure: {status: result.status, notice: result.notice || null}};
        }
    }
    waits.sort((a, b) => a - b);
    return {interrupted: count, failure: null,
            medianMs: Math.round(waits[count >> 1]), slowestMs: Math.round(waits[count - 1])};
}"""
STOP_ROUNDS = 300


def test_every_stop_interrupts_the_loop(live_deck):
    """Stop on `while True: pass`, many times in a row: each one raises
    KeyboardInterrupt in the cell, none needs a restart. Python reads the
    interrupt slot and clears it in two steps; unless the worker makes that one
    atomic step, about one Stop in 60 lands between them and is lost, so 300
    rounds catch that race almost surely (0.985**300 < 1 %)."""
    deck = live_deck
    pruebas = deck.cell("pruebas")
    pruebas.show()
    source = "print('empieza')\nwhile True:\n    pass"
    boots = deck.stats["boots"]
    outcome = deck.page.evaluate(STOP_BURST, ["pruebas", source, STOP_ROUNDS])
    print(f"\n{outcome['interrupted']} Stops seguidos con KeyboardInterrupt; "
          f"espera mediana {outcome.get('medianMs')} ms, la mayor {outcome.get('slowestMs')} ms")
    assert outcome["failure"] is None, outcome
    assert outcome["interrupted"] == STOP_ROUNDS
    stats = deck.stats
    assert stats["boots"] == boots
    assert stats["interruptFallbacks"] == 0
    pruebas.set_source(source)
    assert_deck_usable(deck, edited_cell="pruebas", edited_source=source)


def test_a_cell_that_ignores_stop_is_ended_by_a_restart(live_deck):
    deck = live_deck
    pruebas = deck.cell("pruebas")
    source = (
        "print('empieza')\nwhile True:\n    try:\n        while True:\n            pass\n"
        "    except KeyboardInterrupt:\n        print('sigo')"
    )
    pruebas.set_source(source)
    boots = deck.stats["boots"]
    before = pruebas.click_run()
    pruebas.wait_for_output_containing("empieza")
    pruebas.stop()
    assert pruebas.wait_for_run(before) == "stopped"
    text = pruebas.output_text()
    # The interrupt arrived (the cell caught it), then the grace period ran out.
    assert "sigo" in text and "no respondía a la interrupción" in text, text
    stats = deck.stats
    assert stats["interruptFallbacks"] == 1
    assert stats["boots"] == boots + 1
    deck.wait_until_ready()
    assert_deck_usable(deck, edited_cell="pruebas", edited_source=source)


def test_print_flood_is_capped_and_batched(live_deck):
    deck = live_deck
    pruebas = deck.cell("pruebas")
    source = "while True:\n    print(1)"
    pruebas.set_source(source)
    messages_before = deck.stats["streamMessages"]
    started = time.perf_counter()
    before = pruebas.click_run()
    pruebas.wait_for_output_containing("Salida recortada")
    capped_after = time.perf_counter() - started
    messages = deck.stats["streamMessages"] - messages_before
    # A burst, then at most so many a second, up to the cap (plus the final flush).
    assert messages <= STREAM_EVENT_BURST + STREAM_EVENTS_PER_SECOND * capped_after + 1, (messages, capped_after)
    # The page answers while the loop keeps printing, and nothing more is sent.
    deck.blur()
    slide = pruebas.slide_index
    deck.press("ArrowRight")
    deck.wait_for_slide(slide + 1)
    deck.page.wait_for_timeout(1000)
    assert pruebas.status == "running"
    assert deck.stats["streamMessages"] - messages_before == messages
    pruebas.show()
    pruebas.stop()
    assert pruebas.wait_for_run(before) == "stopped"
    text = pruebas.output_text()
    assert text.count("1\n") <= 10_000
    assert "Salida recortada" in text
    assert_deck_usable(deck, edited_cell="pruebas", edited_source=source)


def test_memory_error_is_explained(live_deck):
    source = "import numpy as np\nx = np.ones(10**10)"
    status, text = run_bad_input(live_deck, source)
    assert status == "error"
    assert "Memoria insuficiente en la línea 2" in text
    assert "No hay memoria suficiente" in text
    assert_deck_usable(live_deck, edited_cell="pruebas", edited_source=source)


def test_import_pandas_answers_offline_without_a_request(live_deck):
    deck = live_deck
    requests_before = len(deck.requests)
    source = "import pandas as pd"
    status, text = run_bad_input(deck, source)
    assert status == "error"
    assert "«pandas» no está disponible" in text
    assert "sin conexión" in text and "numpy, matplotlib y dpdeck" in text
    new_requests = deck.requests[requests_before:]
    assert not [url for url in new_requests if "pandas" in url], new_requests
    base = deck.page.url.split("#")[0].rsplit("/", 1)[0]
    assert all(url.startswith(base) or url.startswith("blob:") for url in new_requests), new_requests
    assert_deck_usable(deck, edited_cell="pruebas", edited_source=source)


def test_requests_to_other_servers_are_blocked(live_deck):
    deck = live_deck
    source = (
        "import js\njs.fetch('http://192.0.2.7/asincrono.csv')\n"
        "from pyodide.http import open_url\nopen_url('http://192.0.2.7/datos.csv')"
    )
    status, text = run_bad_input(deck, source)
    assert status == "error"
    # Refused on its own line, before any request exists (tests/browser/test_network.py tries every channel).
    assert "Bloqueado: http://192.0.2.7/asincrono.csv es de otro servidor" in text
    assert "no se envió nada" in text
    # Python's own sockets (urllib) cannot connect in the browser, and say that nothing left it.
    source = "import urllib.request\nurllib.request.urlopen('http://192.0.2.7/')"
    status, text = run_bad_input(deck, source)
    assert status == "error"
    assert text.startswith("Sin conexión en la línea 2: una celda no puede conectarse"), text
    assert "no salió nada del navegador" in text and "Errno" in text.splitlines()[-1]
    assert not [url for url in deck.requests if "192.0.2.7" in url]
    assert_deck_usable(deck, edited_cell="pruebas", edited_source=source)


def test_sys_exit_is_a_message_not_a_crash(live_deck):
    source = "import sys\nprint('a')\nsys.exit()\nprint('b')"
    status, text = run_bad_input(live_deck, source)
    assert status == "error"
    assert text.startswith("a")
    assert "sys.exit()" in text and "no se puede cerrar" in text
    assert "\nb" not in text
    assert live_deck.python_state == "ready"
    assert_deck_usable(live_deck, edited_cell="pruebas", edited_source=source)


def test_input_says_it_is_not_available(live_deck):
    source = "nombre = input('¿Cómo te llamas? ')\nprint(nombre)"
    status, text = run_bad_input(live_deck, source)
    assert status == "error"
    assert "Entrada por teclado no disponible en la línea 1" in text
    assert "input() no está disponible" in text
    assert_deck_usable(live_deck, edited_cell="pruebas", edited_source=source)


def test_shadowing_np_never_reaches_another_cell(live_deck):
    deck = live_deck
    source = "np = 3\nnp"
    status, text = run_bad_input(deck, source)
    assert (status, text.strip()) == ("done", "3")
    figura, doble_b = deck.cell("figura"), deck.cell("doble-b")
    assert figura.run() == "done"  # it imports numpy as np itself
    assert figura.figures().count() == 1
    doble_b.set_source("print(np)")
    assert doble_b.run() == "error"
    assert "NameError" in doble_b.output_text()
    doble_b.reset()
    assert_deck_usable(deck, edited_cell="pruebas", edited_source=source)


def test_changing_shared_modules_never_reaches_another_cell(live_deck):
    deck = live_deck
    source = (
        "import builtins, numpy as np\nfrom dpdeck import mechanisms\n"
        "np.exp = lambda x: 0\nmechanisms.laplace_scale = lambda **kw: 99\n"
        "builtins.len = lambda x: 0\nbuiltins.print = None"
    )
    status, _ = run_bad_input(deck, source)
    assert status == "done"
    doble_b = deck.cell("doble-b")
    doble_b.set_source(
        "import numpy as np\nfrom dpdeck import mechanisms\n"
        "print(len([1, 2, 3]), float(np.exp(0.0)), mechanisms.laplace_scale(sensitivity=1, epsilon=0.5))"
    )
    assert doble_b.run() == "done"
    assert doble_b.output_text().strip() == "3 1.0 2.0"
    doble_b.reset()
    assert_deck_usable(deck, edited_cell="pruebas", edited_source=source)


def test_two_hundred_figures_show_the_first_twenty(live_deck):
    deck = live_deck
    source = "import matplotlib.pyplot as plt\nfor i in range(200):\n    plt.figure(figsize=(1, 1))\n    plt.plot([0, i])"
    status, text = run_bad_input(deck, source)
    assert status == "done"
    assert MAX_FIGURES == 20
    assert deck.cell("pruebas").figures().count() == MAX_FIGURES
    assert "La celda creó 200 figuras; se muestran las primeras 20" in text
    # All 200 were closed: the next figure cell shows exactly its own.
    figura = deck.cell("figura")
    assert figura.run() == "done"
    assert figura.figures().count() == 1
    assert_deck_usable(deck, edited_cell="pruebas", edited_source=source)


LONG_RUN_SECONDS = 30


def test_a_30_second_cell_never_blocks_the_slides(live_deck):
    deck = live_deck
    pruebas = deck.cell("pruebas")
    source = (
        "import time\nt0 = time.time()\n"
        f"while time.time() - t0 < {LONG_RUN_SECONDS}:\n    pass\nprint('fin')"
    )
    pruebas.set_source(source)
    before = pruebas.click_run()
    pruebas.wait_for_status("running")
    started = time.perf_counter()
    deck.blur()
    moves = 0
    slowest = 0.0
    while pruebas.status == "running":
        start = deck.slide_index
        key, target = ("ArrowRight", start + 1) if start < LAST_SLIDE else ("Home", 0)
        pressed = time.perf_counter()
        deck.press(key)
        deck.wait_for_slide(target)
        slowest = max(slowest, time.perf_counter() - pressed)
        moves += 1
        deck.page.wait_for_timeout(400)
    elapsed = time.perf_counter() - started
    print(f"\n{moves} cambios de diapositiva durante la celda de {LONG_RUN_SECONDS} s; "
          f"el más lento tardó {slowest * 1000:.0f} ms")
    assert pruebas.wait_for_run(before) == "done"
    assert elapsed >= LONG_RUN_SECONDS - 2
    assert moves >= LONG_RUN_SECONDS  # the slides kept moving the whole time
    assert pruebas.output_text().strip() == "fin"
    assert_deck_usable(deck, edited_cell="pruebas", edited_source=source)


def test_no_request_left_the_server(live_deck):
    base = live_deck.page.url.split("#")[0].rsplit("/", 1)[0]
    foreign = [url for url in live_deck.requests
               if not (url.startswith(base) or url.startswith(("blob:", "data:")))]
    assert foreign == []
    assert not [error for error in live_deck.console_errors if "Content Security Policy" in error]


# -------------------------------------------------- without isolation, ?autorun=0


def test_autorun_off_keeps_the_prerendered_outputs(plain_live_deck):
    deck = plain_live_deck
    saludo = deck.cell("saludo")
    assert deck.isolated is False
    deck.page.wait_for_timeout(500)
    assert saludo.origin == "prerendered"
    assert saludo.status == "idle"
    assert saludo.runs == 0
    print(f"\narranque de Python (sin aislamiento): {deck.python['timings']}")


def test_stop_without_isolation_restarts_python_and_keeps_edits(plain_live_deck):
    deck = plain_live_deck
    pruebas = deck.cell("pruebas")
    source = "print('empieza')\nwhile True:\n    pass"
    pruebas.set_source(source)
    boots = deck.stats["boots"]
    before = pruebas.click_run()
    pruebas.wait_for_output_containing("empieza")
    started = time.perf_counter()
    pruebas.stop()
    assert pruebas.wait_for_run(before) == "stopped"
    print(f"\nStop → celda detenida (reinicio del worker): {time.perf_counter() - started:.2f} s")
    text = pruebas.output_text()
    assert "empieza" in text and "se reinició" in text
    # What the stopped run printed is its own output, not something from before.
    after = pruebas.output_state()
    assert after["label"] == "calculado en tu navegador" and not after["previous"] and after["elapsed"] is None
    assert all(block["opacity"] == 1 for block in after["blocks"])
    assert deck.stats["boots"] == boots + 1
    deck.wait_until_ready()
    print(f"Python listo otra vez tras {time.perf_counter() - started:.2f} s")
    assert_deck_usable(deck, edited_cell="pruebas", edited_source=source)


LOOP = "while True:\n    pass"


def run_then_restart(cell, end) -> dict:
    """Runs a loop that never prints, ends it with `end()`, waits for the new Python.

    Returns how the output looked while the loop ran and once it was ended.
    """
    cell.set_source(LOOP)
    before = cell.click_run()
    cell.wait_for_status("running")
    cell.page.wait_for_timeout(600)  # past the moment the previous output is marked as being recomputed
    during = cell.output_state()
    end()
    assert cell.wait_for_run(before) == "stopped"
    after = cell.output_state()
    cell.deck.wait_until_ready()
    return {"during": during, "after": after}


def test_a_stop_by_restart_marks_the_output_left_from_before(plain_live_deck):
    doble_a = plain_live_deck.cell("doble-a")
    # The pre-computed output of the original code; Stop restarts Python (no isolation).
    seen = run_then_restart(doble_a, doble_a.stop)
    assert seen["during"]["label"] == "pre-calculado · recalculando…"
    after = seen["after"]
    assert after["label"] == "resultado anterior (pre-calculado)"
    assert after["previous"]
    old, notice = after["blocks"][0], after["blocks"][-1]
    assert old["text"].strip() == "a" and old["opacity"] < 1
    assert notice["notice"] and "se reinició" in notice["text"] and notice["opacity"] == 1
    doble_a.reset()


def test_restart_python_during_a_run_marks_its_output_and_keeps_edits(plain_live_deck):
    deck = plain_live_deck
    doble_a, editable = deck.cell("doble-a"), deck.cell("editable")
    edit = "print('editada')"
    editable.set_source(edit)
    # A live output with its time, then a run that «Reiniciar Python» ends.
    doble_a.set_source("print('de antes')")
    assert doble_a.run() == "done"
    assert doble_a.output_state()["elapsed"]
    seen = run_then_restart(doble_a, lambda: deck.click_status_button("restart-python"))
    assert seen["during"]["label"] == "resultado anterior · recalculando…"
    after = seen["after"]
    assert (after["label"], after["previous"], after["elapsed"]) == ("resultado anterior", True, None)
    assert after["blocks"][0]["text"].strip() == "de antes" and after["blocks"][0]["opacity"] < 1
    assert "se reinició" in after["blocks"][-1]["text"]
    doble_a.reset()
    # The edit of another cell survived the restart and runs in the new Python.
    assert editable.source == edit
    assert editable.run() == "done"
    assert editable.output_text().strip() == "editada"
    editable.reset()


# ------------------------------------------------------------- fresh pages


def test_edits_survive_a_reload_whatever_the_slide(new_deck, cells_url):
    deck = new_deck(cells_url + "?autorun=0#/2")
    deck.wait_for_cells_on_screen()
    editable, saludo = deck.cell("editable"), deck.cell("saludo")
    editable.click_editor()
    deck.press("Control+End")
    deck.page.keyboard.type("\nprint('guardado')")
    edited = editable.source
    # Straight away: leaving the page must save an edit still waiting for its save.
    deck.goto(cells_url + "#/4")
    deck.page.reload()
    deck.wait_for_cells_on_screen()
    assert editable.source == edited
    assert editable.edited
    assert deck.page.inner_text(f"{editable.selector} .cell-edited") == "editada"
    # The pre-computed output belongs to the original code: shown as stale.
    assert editable.output_state()["stale"]
    assert saludo.source == saludo.original


def test_a_failed_boot_says_what_failed_and_retry_recovers(new_deck, cells_url):
    deck = new_deck()
    deck.page.context.route("**/pyodide/pyodide.asm.wasm", lambda route: route.abort())
    deck.goto(cells_url + "?autorun=0")
    deck.wait_for_python("error", timeout=60_000)
    assert "No se pudo cargar Python: falló el intérprete de Python (pyodide/)" in deck.status_text()
    assert deck.page.is_visible(".python-status [data-action=retry]")
    # The pre-computed output is still there; the slides still move.
    saludo = deck.cell("saludo")
    assert "hola" in saludo.output_text()
    deck.blur()
    deck.press("ArrowRight")
    deck.wait_for_slide(1)
    deck.page.context.unroute("**/pyodide/pyodide.asm.wasm")
    deck.page.click(".python-status [data-action=retry]")
    deck.wait_until_ready()
    assert saludo.run() == "done"
    assert saludo.origin == "live"


# Every text the Python status chip shows from the page's first moment, with
# the time and the progress bar's value.
RECORD_STATUS = """
window.__statusLog = [];
new MutationObserver(() => {
    const text = document.querySelector('.python-status-text');
    if (!text) return;
    const log = window.__statusLog, last = log[log.length - 1];
    if (last && last.text === text.textContent) return;
    const bar = document.querySelector('.python-status-bar');
    log.push({ms: Math.round(performance.now()), text: text.textContent, bar: bar ? bar.value : null});
}).observe(document, {subtree: true, childList: true, characterData: true});
"""

BOOT_STAGES = ["Cargando Python…", "Preparando el intérprete…", "Cargando numpy y matplotlib…",
               "Instalando dpdeck…", "Importando numpy, matplotlib y dpdeck…", "Python listo"]


def test_boot_says_each_stage_and_the_autorun_never_blanks_a_figure(new_deck, cells_url):
    deck = new_deck()
    figura = deck.cell("figura")
    deck.page.add_init_script(RECORD_STATUS)
    deck.goto(cells_url + "#/1")  # the figure's slide: it reruns by itself when Python is ready
    deck.wait_for_cells_on_screen()
    deck.page.evaluate(WATCH_OUTPUT, figura.selector)
    deck.wait_until_ready()
    deck.page.wait_for_function("selector => document.querySelector(selector).dataset.runs === '1'",
                                arg=figura.selector, timeout=RUN_TIMEOUT_MS)
    log = deck.page.evaluate("window.__statusLog")
    print("\narranque de Python, lo que dice el indicador:")
    for entry in log:
        print(f"  {entry['ms']:6d} ms  {entry['text']}")
    stages = []
    for entry in log:
        stage = re.sub(r" \d+/\d+ MB$", "", entry["text"])
        if stage and (not stages or stages[-1] != stage):
            stages.append(stage)
    assert stages == BOOT_STAGES, stages
    # The interpreter's bytes are counted as they arrive, before it is compiled.
    compiling = next(entry for entry in log if entry["text"] == "Preparando el intérprete…")
    assert compiling["bar"] > 0.3, compiling
    # The automatic rerun kept the pre-computed figure on screen until its own arrived.
    seen = deck.page.evaluate("window.__stopWatching()")
    assert figura.status == "done" and figura.origin == "live"
    assert seen["samples"] > 0 and seen["minFigures"] == 1, seen


@pytest.mark.parametrize("query", ["?receiver", "?print-pdf"])
def test_speaker_view_and_print_do_not_boot_python(new_deck, cells_url, query):
    deck = new_deck(cells_url + query)
    deck.wait_for_cells()
    deck.page.wait_for_timeout(2500)
    assert deck.python_state == "off"
    assert not [url for url in deck.requests if "/pyodide/" in url or "runtime.json" in url or "worker.js" in url]
    # The pre-computed results are on the page.
    assert "hola" in deck.cell("saludo").output_text()
    assert deck.cell("figura").figures().count() == 1
    if query == "?print-pdf":
        assert deck.page.is_hidden(f"{deck.cell('saludo').selector} .cell-toolbar")


def test_opened_as_a_file_the_page_says_how_to_serve_it(new_deck, cells_dist):
    deck = new_deck((cells_dist / "index.html").as_uri())
    deck.wait_for_cells()
    assert deck.python_state == "off"
    # A one-line chip; focusing it (Tab reaches it) opens the instructions.
    chip = deck.status_text().strip()
    assert chip == "Sin Python: ábrelas desde un servidor («python3 build.py serve»)"
    deck.page.focus(".python-status")
    message = deck.status_text()
    assert "python3 -m http.server" in message and "http.server" not in chip
    saludo = deck.cell("saludo")
    assert "hola" in saludo.output_text()
    saludo.click("run")
    assert "servidor" in saludo.output_text()
    assert re.search(r"/pyodide/", " ".join(deck.requests)) is None
