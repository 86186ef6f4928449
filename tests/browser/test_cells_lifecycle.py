"""Live cells in the browser: Python restarted and fresh pages.

Without cross-origin isolation Stop restarts Python (`plain_live_deck`, a deck
shared by those tests, with ?autorun=0); on fresh pages, edits survive a
reload, a failed boot says what failed, the boot says each stage, the speaker
view and print never boot Python, and a deck opened as a file says how to
serve it. Every test drives the deck through deckpage.DeckPage.
"""

from __future__ import annotations

import re
import time

import pytest

from deckpage import RUN_TIMEOUT_MS
from deckchecks import WATCH_OUTPUT, assert_deck_usable


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
    # The page is served from this computer without COOP/COEP: the message names what is missing.
    assert "este servidor no envía las cabeceras COOP y COEP" in text
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
    assert seen["during"]["label"] == "calculado al crear las diapositivas · recalculando…"
    after = seen["after"]
    assert after["label"] == "resultado anterior (calculado al crear las diapositivas)"
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
    deck = new_deck(cells_url + "?autorun=0#/2", python=False)
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


def test_a_list_of_files_that_fails_once_is_asked_for_again(new_deck, cells_url):
    # One dropped connection (a busy machine, a connection the server just closed) costs a pause, not Python.
    deck = new_deck()
    aborted = []

    def drop_first(route):
        if not aborted:
            aborted.append(route.request.url)
            route.abort()
        else:
            route.continue_()

    deck.page.context.route("**/runtime.json", drop_first)
    deck.goto(cells_url + "?autorun=0")
    deck.wait_until_ready()
    assert len(aborted) == 1
    assert deck.cell("saludo").run() == "done"


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
    # A one-line chip; its text (Tab reaches it) opens the instructions.
    chip = deck.status_text().strip()
    assert chip == "Sin Python: ábrelas desde un servidor («python3 build.py serve»)"
    deck.page.focus(".python-status-toggle")
    deck.press("Enter")
    message = deck.status_text()
    assert "python3 -m http.server" in message and "http.server" not in chip
    saludo = deck.cell("saludo")
    assert "hola" in saludo.output_text()
    saludo.click("run")
    assert "servidor" in saludo.output_text()
    assert re.search(r"/pyodide/", " ".join(deck.requests)) is None
