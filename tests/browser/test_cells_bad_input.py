"""Live cells in the browser: every bad input of the live-cells spec.

Each is followed by the same check: the deck stays usable (slides move, other
cells still run, edits are kept: deckchecks.assert_deck_usable). The tests
share one deck where Python booted once (`live_deck`) and drive it through
deckpage.DeckPage.
"""

from __future__ import annotations

import time

from dpdeck.classroom.protocol import MAX_FIGURES, STREAM_EVENT_BURST, STREAM_EVENTS_PER_SECOND
from deckchecks import assert_deck_usable, run_bad_input

LAST_SLIDE = 6


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


# Longer than every delay the page applies to a running cell (config.js: output streamed after 1 s,
# the «recomputing» mark after 0.3 s); the slides are moved the whole time, so a few seconds more
# would only keep a core busy for longer.
LONG_RUN_SECONDS = 12


def test_a_long_cell_never_blocks_the_slides(live_deck):
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
