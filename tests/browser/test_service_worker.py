"""Offline after the first visit (the fixture deck, built by deckbuild, in headless Chromium).

* A first visit boots Python and leaves the whole deck in the service
  worker's cache; then the server stops, the page reloads and a cell runs —
  with COOP/COEP (the page stays cross-origin isolated: the cached page kept
  its headers) and under a sub-path of a plain server. The cached responses
  are the stored ones, not rebuilt: Chromium keeps the compiled WebAssembly
  beside a stored response (the Cache Storage on disk grows by it during the
  offline boot), which it never does for a Response made in JavaScript.
* A new build replaces the cache whole: the page offers the new version, and
  once taken, the only cache is the new build's, every file in it exactly the
  new manifest's.
* A student who chooses not to download Python (the menu's switch,
  remembered) reads every pre-computed result and fetches nothing of Python
  until a cell is run. A browser that asks to save data (a metered
  connection) waits for a run the same way, unless the person chose otherwise.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import shutil
import tempfile
import threading
import time
from pathlib import Path

import pytest

from deckbuild.browser import SUITE_CHROMIUM_ARGS, find_chromium
from deckbuild.pipeline import build
from deckbuild.server import make_server
from deckpage import DeckPage

# The deck's service worker runs here (elsewhere it is blocked): the offline copy is this module's subject.
pytestmark = pytest.mark.service_worker

FIXTURE_SLIDES = Path(__file__).with_name("fixture_slides")
OFFLINE_READY_MS = 120_000

# Every entry of every cache of this origin, with the SHA-256 of its body and its headers.
CACHED = """
async () => {
  const result = {};
  for (const name of await caches.keys()) {
    const cache = await caches.open(name);
    result[name] = {};
    for (const request of await cache.keys()) {
      const response = await cache.match(request);
      const digest = await crypto.subtle.digest('SHA-256', await response.arrayBuffer());
      const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
      result[name][request.url] = {sha256: hex, coop: response.headers.get('cross-origin-opener-policy')};
    }
  }
  return result;
}
"""


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


class Server:
    """A server of one folder that a test can stop: the deck's own (COOP/COEP) or a plain one under a sub-path."""

    def __init__(self, folder: Path, *, plain: bool):
        if plain:
            handler = functools.partial(Quiet, directory=str(folder.parent))
            self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            self.server.daemon_threads = True
            suffix = f"{folder.name}/"
        else:
            self.server = make_server(folder, 0, isolated=True)
            suffix = ""
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/{suffix}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def deck_copy(cells_dist, tmp_path):
    """A copy of the fixture deck in a folder of its own (a test may replace it)."""
    folder = tmp_path / "mazo"
    shutil.copytree(cells_dist, folder)
    return folder


def wait_offline(deck: DeckPage, *, python: bool) -> None:
    selector = "html[data-offline=ready][data-offline-python=ready]" if python else "html[data-offline=ready]"
    deck.page.wait_for_selector(selector, timeout=OFFLINE_READY_MS)


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file()) if folder.exists() else 0


# Compiled code Chromium keeps beside a stored wasm response: about 1 MB for Pyodide's
# interpreter (a Response rebuilt in JavaScript gets none, and the store grows by ~3 KB).
WASM_CODE_BYTES = 100_000


@pytest.fixture
def profile_page(browser):
    """A page in a browser profile on disk, like a lecturer's (the other contexts keep nothing)."""
    folder = Path(tempfile.mkdtemp(prefix="dpdeck-perfil-"))
    contexts = []

    def open_page(url: str):
        context = browser.browser_type.launch_persistent_context(
            str(folder), headless=True, args=SUITE_CHROMIUM_ARGS, executable_path=str(find_chromium()),
            viewport={"width": 1280, "height": 720})
        contexts.append(context)
        page = context.pages[0] if context.pages else context.new_page()
        page.requests = []
        context.on("request", lambda request: page.requests.append(request.url))
        page.goto(url)
        return page, folder / "Default" / "Service Worker" / "CacheStorage"

    yield open_page
    for context in contexts:
        context.close()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def deck_copy_from_scratch(cells_dist_from_scratch, tmp_path):
    """A copy of the fixture deck without a snapshot: its boots run enough of the interpreter for
    Chromium to keep the compiled code (a Python restored from a snapshot runs too little of it)."""
    folder = tmp_path / "mazo"
    shutil.copytree(cells_dist_from_scratch, folder)
    return folder


@pytest.mark.parametrize("plain", [False, True], ids=["coop-coep", "sub-path"])
def test_after_one_visit_the_deck_runs_a_cell_with_the_server_gone(profile_page, deck_copy_from_scratch, plain,
                                                                   artifacts_dir):
    deck_copy = deck_copy_from_scratch
    server = Server(deck_copy, plain=plain)
    try:
        page, cache_storage = profile_page(server.url)
        deck = DeckPage(page)
        deck.wait_until_ready()
        isolated = deck.isolated
        wait_offline(deck, python=True)
    finally:
        server.stop()
    assert isolated is (not plain)
    cached = deck.page.evaluate(CACHED)
    build_id = json.loads((deck_copy / "runtime.json").read_text())["version"]
    assert list(cached) == [f"dpdeck-{build_id}"]
    index = cached[f"dpdeck-{build_id}"][server.url + "index.html"]
    assert index["coop"] == (None if plain else "same-origin")
    stored = folder_bytes(cache_storage)

    # The network is gone: the page, its slides, Python and a run all come from the cache.
    deck.page.requests.clear()
    deck.page.reload()
    deck.wait_until_ready()
    assert deck.page.evaluate("() => navigator.serviceWorker.controller !== null")
    assert deck.isolated is isolated
    saludo = deck.cell("saludo")
    assert saludo.run_in_page()["status"] == "done"
    assert saludo.origin == "live" and saludo.output_text().split() == ["hola", "42"]
    assert any(url.endswith("pyodide.asm.wasm") for url in deck.page.requests)
    deck.page.screenshot(path=str(artifacts_dir / f"sin-conexion-{'sub-ruta' if plain else 'aislado'}.png"))

    # Chromium writes the compiled interpreter beside its stored response in the background.
    deadline = time.monotonic() + 30
    while folder_bytes(cache_storage) - stored < WASM_CODE_BYTES and time.monotonic() < deadline:
        deck.page.wait_for_timeout(500)
    grown = folder_bytes(cache_storage) - stored
    print(f"\nsin servidor ({'sub-ruta' if plain else 'COOP/COEP'}): {len(cached[f'dpdeck-{build_id}'])} "
          f"archivos en la caché; Python listo en {deck.python['timings']['pageMs']} ms; "
          f"código wasm compilado junto a la respuesta guardada: {grown // 1000} kB")
    assert grown >= WASM_CODE_BYTES


def manifest_files(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())["files"]


def test_a_new_build_replaces_the_cache_whole(new_deck, deck_copy, tmp_path):
    slides = tmp_path / "diapositivas"
    shutil.copytree(FIXTURE_SLIDES, slides)
    first = slides / "00-inicio.md"
    first.write_text(first.read_text().replace("# Celdas de prueba", "# Celdas de prueba, segunda versión"))
    second = tmp_path / "segunda"
    build(slides, second)

    server = Server(deck_copy, plain=False)
    try:
        deck = new_deck(server.url + "?autorun=0")
        deck.wait_for_cells()
        wait_offline(deck, python=False)
        old = deck.page.evaluate(CACHED)
        # The server now has the new build.
        retired = tmp_path / "retirada"
        os.replace(deck_copy, retired)
        os.replace(second, deck_copy)
        deck.page.reload()
        deck.wait_for_cells()
        # Until taken, the page is the version it was cached as.
        assert "segunda versión" not in deck.page.inner_text(".reveal .slides section.present h1")
        deck.page.wait_for_selector(".deck-toast [data-action=update-deck]", timeout=OFFLINE_READY_MS)
        assert "versión nueva" in deck.page.inner_text(".deck-toast:has([data-action=update-deck])")
        with deck.page.expect_navigation():
            deck.page.click(".deck-toast [data-action=update-deck]")
        deck.wait_for_cells()
        assert "segunda versión" in deck.page.inner_text(".reveal .slides section.present h1")
        wait_offline(deck, python=False)
        cached = deck.page.evaluate(CACHED)
    finally:
        server.stop()
    new_build = json.loads((deck_copy / "runtime.json").read_text())["version"]
    old_build = next(iter(old)).removeprefix("dpdeck-")
    assert new_build != old_build
    assert list(cached) == [f"dpdeck-{new_build}"]
    files = manifest_files(deck_copy)
    entries = cached[f"dpdeck-{new_build}"]
    wrong = {url: entry["sha256"] for url, entry in entries.items()
             if files.get(url.removeprefix(server.url)) != entry["sha256"]}
    print(f"\nversión nueva: {len(entries)} archivos en la caché, todos de {new_build}")
    assert wrong == {}
    assert server.url + "index.html" in entries


def test_a_student_can_choose_not_to_download_python(new_deck, cells_url):
    deck = new_deck(cells_url + "?autorun=0")
    page = deck.page
    # Chosen at once, long before this first visit's Python is ready and quiet
    # (when its files would be kept offline, as Python booted here).
    deck.wait_for_cells_on_screen()
    page.click(".deck-menu-button")
    page.wait_for_selector("dialog.deck-menu[open]")
    checkbox = "dialog.deck-menu [data-action=download-python]"
    assert page.is_checked(checkbox)
    # The size comes from runtime.json, which may arrive a moment after the menu opens.
    page.wait_for_selector("dialog.deck-menu .deck-menu-python:has-text('MB')")
    page.uncheck(checkbox)
    page.keyboard.press("Escape")

    # A new visit: nothing of Python is fetched, every pre-computed result is there.
    page.requests.clear()
    page.reload()
    deck.wait_for_cells()
    wait_offline(deck, python=False)
    page.wait_for_timeout(1500)
    # (the service worker, installed once the page is quiet, stores js/worker.js with the
    # page's files; no worker starts: Python's state says so)
    python_files = [url for url in page.requests if "/pyodide/" in url or "/wheels/" in url]
    assert python_files == []
    assert deck.python_state == "off"
    chip = deck.status_text()
    assert "Python sin descargar" in chip and "Descargar" in chip
    outputs = page.evaluate("""() => [...document.querySelectorAll('.cell')].map((cell) => ({
        id: cell.dataset.cellId, blocks: cell.querySelector('.cell-output').children.length,
        figures: [...cell.querySelectorAll('img.out-figure')].filter((img) => img.complete && img.naturalWidth).length,
        declared: Number(cell.dataset.figures)}))""")
    assert all(output["blocks"] > 0 and output["figures"] == output["declared"] for output in outputs), outputs
    assert page.evaluate("() => Reveal.getPlugin('dpdeck-offline').status.python.stored") == 0

    # Asking to run a cell downloads Python then.
    saludo = deck.cell("saludo")
    assert saludo.run() == "done"
    assert saludo.origin == "live"
    assert any("pyodide.asm.wasm" in url for url in page.requests)
    # Python was used: the service worker keeps it for offline use, in the background.
    wait_offline(deck, python=True)
    # The choice is remembered.
    page.requests.clear()
    page.reload()
    deck.wait_for_cells()
    page.wait_for_timeout(1500)
    assert deck.python_state == "off"
    assert not [url for url in page.requests if "/pyodide/" in url]


# What a browser on a metered connection says (Network Information API), before any script of the page.
SAVES_DATA = """Object.defineProperty(Navigator.prototype, 'connection', {
  configurable: true, get: () => ({saveData: true, effectiveType: '4g', addEventListener() {}, removeEventListener() {}}),
});"""


def test_a_metered_connection_waits_for_a_run_unless_the_person_chose(new_deck, cells_url):
    deck = new_deck()
    page = deck.page
    page.add_init_script(SAVES_DATA)
    deck.goto(cells_url + "?autorun=0")
    deck.wait_for_cells()
    page.wait_for_timeout(1500)
    assert page.evaluate("() => navigator.connection.saveData") is True
    # (the service worker stores js/worker.js with the page's files; no worker starts)
    assert not [url for url in page.requests if "/pyodide/" in url or "/wheels/" in url]
    assert deck.python_state == "off"
    assert "Python sin descargar" in deck.status_text()
    # The person's own choice wins over the connection's.
    page.click(".deck-menu-button")
    page.wait_for_selector("dialog.deck-menu[open]")
    checkbox = "dialog.deck-menu [data-action=download-python]"
    assert not page.is_checked(checkbox)
    page.check(checkbox)
    page.keyboard.press("Escape")
    page.reload()
    deck.wait_for_cells()
    # Python comes down on opening now (its download starting is enough to tell).
    page.wait_for_function("() => ['loading', 'ready'].includes(document.documentElement.dataset.python)")


# The moments the offline tests compare (performance.now(), first time each):
# `registered` (the page registers its service worker), `ready` (<html
# data-python="ready">), `cellDone` (the scratch cell «pruebas» shows «done»),
# and `asks`, every message the page sends its service worker, with its type.
RECORD_OFFLINE_MARKS = """
window.__marks = {asks: []};
const mark = (name) => { if (window.__marks[name] === undefined) window.__marks[name] = performance.now(); };
const register = ServiceWorkerContainer.prototype.register;
ServiceWorkerContainer.prototype.register = function (...args) {
  mark('registered');
  return register.apply(this, args);
};
const post = ServiceWorker.prototype.postMessage;
ServiceWorker.prototype.postMessage = function (message, ...rest) {
  window.__marks.asks.push({type: message && message.type, ms: performance.now()});
  return post.call(this, message, ...rest);
};
new MutationObserver(() => {
  if (document.documentElement.dataset.python === 'ready') mark('ready');
  const cell = document.querySelector('.cell[data-cell-id=pruebas]');
  if (cell && cell.dataset.status === 'done') mark('cellDone');
}).observe(document, {subtree: true, attributes: true, attributeFilter: ['data-python', 'data-status']});
"""


def python_cache_quiet_ms() -> int:
    """config.js's pythonCacheQuietMs: the page's own setting, read where it is defined."""
    text = (Path(__file__).resolve().parents[2] / "deck" / "js" / "page" / "config.js").read_text(encoding="utf-8")
    return int(re.search(r"pythonCacheQuietMs:\s*([\d_]+)", text).group(1).replace("_", ""))


def test_the_offline_copy_waits_for_python_to_boot_and_for_a_quiet_moment_after_a_cell(new_deck, cells_url):
    """Installing the service worker reads and checks every file of the page, and keeping Python offline reads
    and checks its 27 MB: neither competes with a first visit's boot nor with a cell. The service worker is
    registered only once Python is ready and quiet; Python's files are asked for once, a quiet moment after
    the cell queued during the boot has ended."""
    deck = new_deck()
    page = deck.page
    page.add_init_script(RECORD_OFFLINE_MARKS)
    deck.goto(cells_url + "?autorun=0")
    deck.wait_for_cells_on_screen()
    deck.cell("pruebas").set_source("import time\ntime.sleep(4)\nprint('fin')")
    # Queued while Python boots: it runs the moment Python is ready, for 4 s.
    page.evaluate("() => { Reveal.getPlugin('dpdeck').cell('pruebas').run(); }")
    wait_offline(deck, python=True)
    marks = page.evaluate("() => window.__marks")
    assert marks.get("ready") and marks.get("registered"), marks
    assert marks.get("cellDone"), "la celda no terminó"
    # Each wait starts as Python's state changes or its queue empties, a moment before <html data-python>
    # or the cell says so (hence the 100 ms).
    assert marks["registered"] >= marks["ready"] + python_cache_quiet_ms() - 100
    asks = [ask for ask in marks["asks"] if ask["type"] == "cache-python"]
    assert len(asks) == 1
    # Asked 2 s after «listo», it would fall inside the 4-s cell.
    assert asks[0]["ms"] >= marks["cellDone"] + python_cache_quiet_ms() - 100
