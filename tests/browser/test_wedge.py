"""Cells that cannot wedge the deck.

A cell that closes Python, breaks it from inside (a WebAssembly trap), or
leaves something behind (timers, listeners, promises, asyncio tasks, changed
globals) never leaves a cell «running» for ever or changes what the next cell
sees; a worker that ends by itself is noticed at once and Python restarts,
saying so in Spanish. An edit the browser cannot save says so, and offers the
code as a file. Every test ends with the deck usable (deckchecks.assert_deck_usable).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from playwright.sync_api import Error as PlaywrightError

from deckpage import DeckPage
from deckchecks import assert_deck_usable, run_bad_input

PI = "3.141592653589793"


def run_sequence(deck, sources: list[str], pause_s: float = 0.3) -> list[tuple[str, str]]:
    """Run each source in the cell «pruebas», waiting a moment between them; (status, text) of each."""
    results = []
    for source in sources:
        results.append(run_bad_input(deck, source))
        time.sleep(pause_s)
    return results


# ------------------------------------------------- closing and breaking Python


def test_closing_python_from_a_cell_is_refused(live_deck):
    restarts = live_deck.stats["restarts"]
    status, text = run_bad_input(live_deck, "import js\njs.self.close()\nprint('sigo')")
    assert status == "error"
    assert "Una celda no puede cerrar Python" in text
    assert "sigo" not in text
    # Nor through another handle on the same function.
    status, text = run_bad_input(live_deck, "import js\nclose = js.Object.getOwnPropertyDescriptor(js.self, 'close').value\n"
                                            "close.call(js.self)")
    assert status == "error" and "no puede cerrar Python" in text
    assert live_deck.python_state == "ready"
    assert live_deck.stats["restarts"] == restarts
    assert_deck_usable(live_deck)


@pytest.mark.parametrize("source, trap", [
    ("import ctypes\nctypes.string_at(0xFFFFFF00, 200)", "memory access out of bounds"),
    ("import ctypes\nctypes.CFUNCTYPE(None)(0)()", ""),
])
def test_a_fatal_error_restarts_python_and_says_so(live_deck, source, trap):
    # The module's deck: a fatal error leaves it with a new Python, which is what the tests after it need.
    deck = live_deck
    deck.wait_for_python("ready")
    restarts = deck.stats["restarts"]
    cell = deck.cell("pruebas")
    cell.show()
    result = cell.run_in_page(source)
    assert result["status"] == "error", result
    assert result["restarted"] is True
    assert "error interno irrecuperable" in result["notice"] and "se está reiniciando" in result["notice"]
    assert trap in result["notice"]
    assert cell.status == "error"
    assert "se está reiniciando" in cell.output_text()
    deck.wait_for_python("ready")
    assert deck.stats["restarts"] == restarts + 1
    assert_deck_usable(deck)


# The worker's own script, with a door a cell cannot reach: the test's own
# copies of `close` and of the port's `postMessage`, taken before the deck's
# guards run, and a listener on the page's port (it comes with the first
# request) that hears each request before the worker does. It stands for a
# worker that ends without a word (the browser ran out of memory for it,
# say): «# FIN YA» ends it instead of running the cell; «# FIN DESPUÉS» lets
# the cell run and ends the worker right after its reply.
SILENT_END = """
const dpdeckTestClose = self.close.bind(self);
const dpdeckTestPost = MessagePort.prototype.postMessage;
let dpdeckTestEndAfter = null;
MessagePort.prototype.postMessage = function postMessage(message, transfer) {
  dpdeckTestPost.call(this, message, transfer);
  if (dpdeckTestEndAfter !== null && message && message.id === dpdeckTestEndAfter) dpdeckTestClose();
};
function dpdeckTestWatch(event) {
  const data = event.data || {};
  const source = String(data.payload && data.payload.source);
  if (data.type !== "run") return;
  if (source.includes("# FIN YA")) {
    event.stopImmediatePropagation();
    dpdeckTestClose();
  } else if (source.includes("# FIN DESPUÉS")) {
    dpdeckTestEndAfter = data.id;
  }
}
self.addEventListener("message", (event) => {
  const port = event.data && event.data.payload && event.data.payload.port;
  if (port) port.addEventListener("message", dpdeckTestWatch);
}, { capture: true });
"""


def deck_with_a_door(new_deck, cells_url) -> DeckPage:
    deck = new_deck()

    def with_silent_end(route):
        try:
            response = route.fetch()
            route.fulfill(response=response, body=SILENT_END + response.text())
        except PlaywrightError:
            # The page closed while a restarted worker's script was on its way (the test is over): an error
            # raised here would surface in whichever later test next talks to the browser.
            pass

    deck.page.context.route("**/js/worker.js", with_silent_end)
    deck.goto(cells_url + "?autorun=0")
    deck.wait_until_ready()
    return deck


def test_a_worker_that_ends_during_a_cell_is_noticed_and_restarted(new_deck, cells_url):
    deck = deck_with_a_door(new_deck, cells_url)
    cell = deck.cell("pruebas")
    cell.show()
    started = time.monotonic()
    result = cell.run_in_page("# FIN YA\nprint('no llega')")
    noticed_s = time.monotonic() - started
    assert result["status"] == "error", result
    assert result["restarted"] is True
    assert "terminó sin avisar" in result["notice"]
    assert "terminó sin avisar" in cell.output_text()
    print(f"\nfin silencioso del worker detectado en {noticed_s:.2f} s")
    deck.wait_for_python("ready")
    assert deck.stats["restarts"] == 1
    assert_deck_usable(deck)


def test_a_worker_that_ends_while_idle_restarts_with_a_message(new_deck, cells_url):
    deck = deck_with_a_door(new_deck, cells_url)
    cell = deck.cell("pruebas")
    cell.show()
    result = cell.run_in_page("# FIN DESPUÉS\nprint('llega')")
    assert result["status"] == "done" and not result["restarted"]
    toast = deck.page.locator(".deck-toast")
    toast.wait_for(state="visible")
    assert "terminó sin avisar" in toast.inner_text()
    deck.wait_for_python("ready")
    assert deck.stats["restarts"] == 1
    assert_deck_usable(deck)


# ------------------------------------------------- what one cell leaves behind


LEFTOVERS = {
    "set-timeout": "import js, numpy as np\ndef later():\n    np.pi = 3\n    print('tarde')\njs.setTimeout(later, 50)",
    "set-interval": "import js, numpy as np\ndef tick():\n    np.pi += 1\n    print('tic')\njs.setInterval(tick, 20)",
    "animation-frame": "import js, numpy as np\ndef frame(_):\n    np.pi = 3\njs.requestAnimationFrame(frame)",
    "promise": ("import js, numpy as np\n"
                "js.Promise.resolve(0).then(lambda _: setattr(np, 'pi', 3))\n"
                "js.Promise.resolve(0).then(lambda _: print('fantasma'))"),
    "asyncio-task": ("import asyncio, numpy as np\nasync def later():\n    await asyncio.sleep(0.05)\n"
                     "    np.pi = 3\n    print('tarde')\nasyncio.ensure_future(later())"),
    "asyncio-soon": ("import asyncio, numpy as np\nasync def soon():\n    np.pi = 3\n"
                     "asyncio.ensure_future(soon())"),
    "message-listener": ("import js, numpy as np\n"
                         "def listen(event):\n    np.pi = 3\n    print('escucho')\n"
                         "js.self.addEventListener('message', listen)"),
    "onmessage": "import js\njs.self.onmessage = lambda event: print('robado')",
    "message-port": ("import js, numpy as np\nchannel = js.MessageChannel.new()\n"
                     "channel.port1.onmessage = lambda event: setattr(np, 'pi', 3)\nchannel.port2.postMessage(0)"),
    "global-timer-replaced": "import js\njs.self.setTimeout = None\njs.self.fetch = None",
    "global-added": "import js\njs.self.sobrante = 42",
    "uncaught-callback-error": ("import js\njs.Promise.resolve(0).then(lambda _: 1 / 0)\n"
                                "channel = js.MessageChannel.new()\n"
                                "channel.port1.onmessage = lambda event: 1 / 0\nchannel.port2.postMessage(0)"),
}

CHECK = ("import js, numpy as np\n"
         "print(np.pi)\n"
         "print(js.self.setTimeout is not None, js.self.fetch is not None, hasattr(js.self, 'sobrante'))")
CLEAN = f"{PI}\nTrue True False"


@pytest.mark.parametrize("leftover", sorted(LEFTOVERS))
def test_what_a_cell_leaves_behind_cannot_change_the_next_cell(live_deck, leftover):
    restarts = live_deck.stats["restarts"]
    status, _ = run_bad_input(live_deck, LEFTOVERS[leftover])
    assert status in ("done", "error")
    time.sleep(0.3)  # the leftover's time to fire
    status, text = run_bad_input(live_deck, CHECK)
    assert status == "done", text
    assert text.strip() == CLEAN, text
    # A second look, after the leftovers' time to fire again.
    time.sleep(0.2)
    status, text = run_bad_input(live_deck, CHECK)
    assert text.strip() == CLEAN, text
    assert live_deck.python_state == "ready"
    assert live_deck.stats["restarts"] == restarts
    assert_deck_usable(live_deck)


def test_a_promise_left_by_one_cell_prints_nothing_in_another(live_deck):
    run_bad_input(live_deck, "import js\nfor i in range(3):\n    js.Promise.resolve(i).then(lambda i: print('fantasma', i))")
    other = live_deck.cell("doble-a")
    other.show()
    assert other.run() == "done"
    assert other.output_text().strip() == "a"


def test_a_refusal_after_the_cell_is_told_after_its_outputs(live_deck):
    status, text = run_bad_input(live_deck, "import js\nprint('antes')\n"
                                            "js.Promise.resolve(0).then(lambda _: js.fetch('https://ejemplo.org/x'))")
    assert status == "done"
    assert text.startswith("antes")
    assert "Después de terminar la celda" in text and "https://ejemplo.org/x" in text
    assert "no se envió nada" in text


# ------------------------------------------------- a full localStorage

# Fills this origin's localStorage to the last character: big items first, then
# ever smaller ones, until not even one character fits (a cell's edit, whose key
# alone is longer, then cannot be saved).
FILL_STORAGE = """
() => {
  let size = 256 * 1024, items = 0, name = '';
  while (size >= 1) {
    try {
      localStorage.setItem('relleno-' + items, 'x'.repeat(size));
      items += 1;
    } catch (error) {
      name = error.name;
      size = Math.floor(size / 2);
    }
  }
  let full = false;
  try {
    localStorage.setItem('relleno-prueba', 'x');
    localStorage.removeItem('relleno-prueba');
  } catch (error) {
    full = true;
  }
  return {full, name, items};
}
"""

EMPTY_STORAGE = "() => { for (const key of Object.keys(localStorage)) if (key.startsWith('relleno-')) localStorage.removeItem(key); }"


def test_an_edit_that_cannot_be_saved_says_so_and_offers_the_code(new_deck, cells_url):
    deck = new_deck(cells_url + "?autorun=0")
    deck.wait_for_cells()
    filled = deck.page.evaluate(FILL_STORAGE)
    assert filled["full"] is True, filled
    cell = deck.cell("editable")
    cell.show()
    source = "x = 3\nprint(x * 2)"
    cell.set_source(source)
    assert cell.edited
    assert cell.saved_edit is None  # nothing in the browser
    badge = cell.locator(".cell-edited")
    assert badge.inner_text() == "sin guardar"
    assert "no pudo guardar" in badge.get_attribute("title")
    assert "guardados en este navegador" not in badge.get_attribute("title")
    toast = deck.page.locator(".deck-toast")
    toast.wait_for(state="visible")
    assert "No se pudo guardar tu edición de la celda editable" in toast.inner_text()
    with deck.page.expect_download() as download:
        deck.page.click(".deck-toast [data-action=download-cell]")
    assert download.value.suggested_filename == "editable.py"
    assert Path(download.value.path()).read_text(encoding="utf-8") == source
    # The cell's own button does the same, for as long as the edit is unsaved.
    with deck.page.expect_download() as again:
        cell.click("download")
    assert Path(again.value.path()).read_text(encoding="utf-8") == source
    # Room again: the next save works and the badge says so.
    deck.page.evaluate(EMPTY_STORAGE)
    cell.set_source(source + "\n")
    assert cell.saved_edit == source + "\n"
    assert badge.inner_text() == "editada"
    assert cell.locator("[data-action=download]").is_hidden()
