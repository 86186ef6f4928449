"""A restored Python is never left broken: the snapshot that does not fit this browser, in Chromium.

WebKit's engine lays the table of functions out otherwise than V8, where the
build takes its snapshot (deck/js/worker/functiontable.js); Chromium keeps the
layout, so here the layout is corrupted on purpose: runtime.json places one
library (matplotlib's Agg backend, which only drawing uses) one slot off.
Restored that way, Python boots and prints but cannot draw, exactly as WebKit
did. The deck must notice, boot from scratch, say so, remember it on the
device, and try again when another build ships; and whatever breaks in a
restored Python (its warm-up figure, a cell) must end the same way.

Service workers are blocked here: a page the deck's service worker controls
gets runtime.json from it, past the test's changes.
"""

from __future__ import annotations

import copy
import json

import pytest

from deckpage import BOOT_TIMEOUT_MS, DeckPage

FIGURE = ("import numpy as np\nimport matplotlib.pyplot as plt\nfrom PIL import Image\n"
          "plt.plot(np.arange(3))\nprint(Image.new('RGB', (4, 4)).resize((8, 8)).size)")
SHIFTED_LIBRARY = "_backend_agg"
UNFIT_FOUND = "no encaja con este navegador"
RESTORE_BROKE = "Python falló tras arrancar de su memoria preparada"
TOAST_SAYS = "(text) => [...document.querySelectorAll('.deck-toast')].some((toast) => toast.textContent.includes(text))"


def shift_agg(snapshot: dict) -> None:
    """Places matplotlib's Agg backend one slot off in the table of functions."""
    (library,) = [entry for entry in snapshot["libraries"] if SHIFTED_LIBRARY in entry["file"]]
    library["tableBase"] += 1


def serve_runtime(page, change) -> None:
    """The page's runtime.json as the server has it, its snapshot's description changed by `change`."""
    def answer(route):
        runtime = json.loads(route.fetch().text())
        change(runtime["snapshot"])
        route.fulfill(status=200, content_type="application/json", body=json.dumps(runtime))

    page.route("**/runtime.json", answer)


def open_deck(context, url: str, change=None) -> DeckPage:
    """A page of `context` (one device) with Python ready, its runtime.json changed by `change`."""
    page = context.new_page()
    page.requests = []
    page.on("request", lambda request: page.requests.append(request.url))
    if change:
        serve_runtime(page, change)
    deck = DeckPage(page)
    deck.goto(url + "?autorun=0")
    deck.wait_until_ready()
    return deck


def draw(deck: DeckPage) -> tuple[str, str, int]:
    cell = deck.cell("pruebas")
    cell.set_source(FIGURE)
    result = cell.run_in_page()
    return result["status"], cell.output_text(), cell.figures().count()


@pytest.fixture(scope="module")
def unfit_visit(open_page, cells_url):
    """A first visit on a fresh device (context) whose runtime.json places Agg one slot off, Python ready.

    The two tests below share it: one follows this device's later visits, the
    other takes the table this restore recorded (a boot from scratch fewer).
    """
    context, page = open_page(service_workers="block")
    serve_runtime(page, shift_agg)
    deck = DeckPage(page)
    deck.goto(cells_url + "?autorun=0")
    deck.wait_until_ready()
    # Said in one line, seen here: the notice goes away by itself after a while, and the other test may run first.
    page.wait_for_function(TOAST_SAYS, arg=UNFIT_FOUND, timeout=BOOT_TIMEOUT_MS)
    yield deck, copy.deepcopy(deck.python["timings"]["snapshot"])
    context.close()


def test_a_table_unlike_the_build_s_boots_from_scratch_is_remembered_and_a_new_build_is_tried(unfit_visit, cells_url):
    first, snapshot = unfit_visit
    context = first.page.context
    assert (snapshot["used"], snapshot.get("unfit")) == (False, "found"), snapshot
    assert "la tabla de funciones de este navegador no es la de la instantánea" in snapshot["error"]
    assert snapshot["table"]["length"] > 0
    # Said in one line (unfit_visit waited for it); and a figure can be drawn, which is what «Python listo» means.
    assert draw(first) == ("done", "(8, 8)\n", 1)

    # The next visit on this device does not try this snapshot, nor download it.
    again = open_deck(context, cells_url, shift_agg)
    snapshot = again.python["timings"]["snapshot"]
    assert (snapshot["used"], snapshot.get("unfit")) == (False, "remembered"), snapshot
    assert not [url for url in again.page.requests if url.endswith("python-snapshot.bin")]
    assert again.toast_text() is None
    assert draw(again)[0] == "done"

    # Another build (its snapshot described otherwise: here, as the server has it) is tried, and fits.
    rebuilt = open_deck(context, cells_url)
    snapshot = rebuilt.python["timings"]["snapshot"]
    assert snapshot["used"] is True and "unfit" not in snapshot, snapshot
    assert draw(rebuilt) == ("done", "(8, 8)\n", 1)


def test_a_restored_python_that_cannot_draw_its_warm_up_figure_boots_again_from_scratch(unfit_visit, new_deck,
                                                                                         cells_url):
    """The check corrupted too (it records the corrupted table): only the warm-up figure can tell, and it is heard."""
    _, unfit = unfit_visit
    corrupted = unfit["table"]
    assert corrupted["length"] > 0, unfit

    def shift_and_accept(snapshot):
        shift_agg(snapshot)
        snapshot["table"] = corrupted

    deck = new_deck(service_workers="block")
    serve_runtime(deck.page, shift_and_accept)
    deck.goto(cells_url + "?autorun=0")
    # Restored (the check passes), Python is ready; once it is quiet the worker draws its throwaway
    # figure (only a restored Python leaves it for then), which fails, and Python starts over from scratch.
    deck.page.wait_for_function(TOAST_SAYS, arg=RESTORE_BROKE, timeout=BOOT_TIMEOUT_MS)
    deck.wait_until_ready()
    assert deck.stats["figureWarmed"] is False and deck.stats["restarts"] == 1 and deck.stats["boots"] == 2
    snapshot = deck.python["timings"]["snapshot"]
    assert (snapshot["used"], snapshot.get("unfit")) == (False, "told"), snapshot
    assert draw(deck) == ("done", "(8, 8)\n", 1)
    # Remembered on the device.
    again = open_deck(deck.page.context, cells_url, shift_and_accept)
    assert again.python["timings"]["snapshot"].get("unfit") == "remembered", again.python["timings"]["snapshot"]


def test_an_internal_error_after_a_restore_boots_from_scratch_and_is_remembered(new_deck, cells_url):
    deck = new_deck(cells_url + "?autorun=0", service_workers="block")
    deck.wait_until_ready()
    assert deck.python["timings"]["snapshot"]["used"] is True
    cell = deck.cell("pruebas")
    # Reading past the end of WebAssembly's memory: a trap, fatal for Pyodide.
    cell.set_source("import ctypes\nctypes.string_at(2**32 - 64, 1024)")
    result = cell.run_in_page()
    assert result["status"] == "error" and result["restarted"] is True
    assert RESTORE_BROKE in cell.output_text()
    deck.wait_until_ready()
    snapshot = deck.python["timings"]["snapshot"]
    assert (snapshot["used"], snapshot.get("unfit")) == (False, "told"), snapshot
    assert draw(deck)[0] == "done"
    again = open_deck(deck.page.context, cells_url)
    assert again.python["timings"]["snapshot"].get("unfit") == "remembered", again.python["timings"]["snapshot"]


def test_stop_on_an_isolated_page_without_shared_memory_names_the_browser(new_deck, cells_url):
    """WebKitGTK isolates the page but offers no SharedArrayBuffer: Stop restarts, and does not blame the server."""
    deck = new_deck(service_workers="block")
    deck.page.add_init_script("delete window.SharedArrayBuffer;")
    deck.goto(cells_url + "?autorun=0")
    deck.wait_until_ready()
    assert deck.isolated
    cell = deck.cell("pruebas")
    cell.set_source("print('empieza')\nwhile True:\n    pass")
    before = cell.click_run()
    cell.wait_for_output_containing("empieza")
    cell.stop()
    assert cell.wait_for_run(before) == "stopped"
    text = cell.output_text()
    assert "este navegador no deja interrumpir Python" in text and "servidor" not in text
