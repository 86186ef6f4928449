"""No door from a cell to the deck's storage, to another thread or to the page.

What a cell writes where the deck or the browser looks on a later visit would
outlive the cell: Cache Storage (the service worker serves the deck from it),
the origin's private file system (the worker keeps its copies of Python
there), IndexedDB. A worker the cell starts would outlive it and its Stop,
with storage of its own. A message to the page outside the protocol, or a
listener that answers the page's requests, would forge later outputs and
verdicts. Every such door is tried from a live cell here (each way the
security review found, and the obvious others): each is refused with a
Spanish message that says nothing was kept, and afterwards the origin's
storage holds nothing a cell wrote and the page hears only the protocol.

The worker keeps its storage for itself and removes every way to it from the
cells' reach (deck/js: worker/storagedoors.js); the protocol runs over a port
only the worker holds (worker.js, python.js).
"""

from __future__ import annotations

import pytest

from deckpage import DeckPage

# The deck's service worker runs here (elsewhere it is blocked): its Cache Storage copy is out of a cell's reach.
pytestmark = pytest.mark.service_worker

BLOCKED = "Bloqueado:"
NOTHING_KEPT = "no guardan nada en el navegador"
BLOB_WORKER = (
    "import js\nfrom pyodide.ffi import to_js\n"
    "code = \"caches.open('hilo').then((c) => c.put('/hilo', new Response('x')))\"\n"
    "blob = js.Blob.new(to_js([code]), to_js({'type': 'text/javascript'}, dict_converter=js.Object.fromEntries))\n"
    "url = js.URL.createObjectURL(blob)\n"
)

# A door, the cell that tries it, and what its error must say (None: a promise the browser
# rejects, so the cell itself ends well; the storage check afterwards shows nothing was kept).
DOORS = {
    # Cache Storage: the next visit's pages and files come from it.
    "cache-put-python": (
        "import js\nfrom pyodide.ffi import to_js\n"
        "init = to_js({'headers': {'Content-Type': 'text/html'}}, dict_converter=js.Object.fromEntries)\n"
        "js.caches.open('dpdeck-x').then(lambda c: c.put('index.html', js.Response.new('<h1>ENVENENADO</h1>', init)))",
        NOTHING_KEPT),
    "caches-global": ("import js\njs.globalThis.caches.keys()", NOTHING_KEPT),
    # Early after the boot (the doors run in this order): a throwing get here once reached the cell as a SystemError.
    "caches-self": ("import js\njs.self.caches.keys()", NOTHING_KEPT),
    "caches-getter": (
        "import js\nd = js.Object.getOwnPropertyDescriptor(js.WorkerGlobalScope.prototype, 'caches')\nd.get.call(js.self)",
        "AttributeError"),
    # A promise rejected (illegal invocation): the cell ends, nothing is opened.
    "cache-storage-prototype": ("import js\njs.CacheStorage.prototype.open.call(js.self, 'x')", None),
    # The private file system: the device's copies of Python.
    "opfs": ("import js\njs.navigator.storage.getDirectory()", NOTHING_KEPT),
    "opfs-getter": (
        "import js\nd = js.Object.getOwnPropertyDescriptor(js.WorkerNavigator.prototype, 'storage')\n"
        "d.get.call(js.navigator)", "AttributeError"),
    "storage-manager-prototype": ("import js\njs.StorageManager.prototype.getDirectory.call(js.navigator)", None),
    "indexeddb": ("import js\njs.indexedDB.open('dpdeck-x')", NOTHING_KEPT),
    "indexeddb-getter": (
        "import js\nd = js.Object.getOwnPropertyDescriptor(js.WorkerGlobalScope.prototype, 'indexedDB')\n"
        "d.get.call(js.self)", "AttributeError"),
    "local-storage": ("import js\njs.localStorage.setItem('x', '1')", "AttributeError"),
    # Threads of its own, with fresh storage: none starts.
    "nested-worker": (BLOB_WORKER + "js.Worker.new(url)", "no puede crear otros workers"),
    "nested-worker-constructor": (BLOB_WORKER + "js.Worker.prototype.constructor.new(url)",
                                  "no puede crear otros workers"),
    "nested-worker-reflect": (BLOB_WORKER + "js.Reflect.construct(js.Worker.prototype.constructor, [url])",
                              "no puede crear otros workers"),
    "shared-worker": ("import js\njs.SharedWorker.new('x.js')", "AttributeError"),
    # Channels to the page or to other pages outside the protocol.
    "broadcast-channel": ("import js\njs.BroadcastChannel.new('dpdeck').postMessage('hola')", "BroadcastChannel"),
    "broadcast-channel-constructor": (
        "import js\njs.BroadcastChannel.prototype.constructor.new('dpdeck').postMessage('hola')", "BroadcastChannel"),
    "post-message": ("import js\njs.postMessage(js.JSON.parse('{\"type\": \"progress\"}'))", "postMessage"),
    "post-message-prototype": (
        "import js\njs.DedicatedWorkerGlobalScope.prototype.postMessage.call(js.self, 1)", "AttributeError"),
}

# What the origin keeps besides the deck's own: cache names, private files, databases.
STORAGE = """async () => ({
  caches: (await caches.keys()).filter((name) => !name.startsWith('dpdeck-') || name === 'dpdeck-x'),
  files: await (async () => { const names = []; for await (const name of (await navigator.storage.getDirectory()).keys()) names.push(name); return names.filter((name) => !name.startsWith('dpdeck-python-')); })(),
  databases: (await indexedDB.databases()).map((database) => database.name),
})"""


@pytest.fixture(scope="module")
def doors(open_page, cells_url):
    """Each door's cell run once in one deck: {door: (status, output)}, and the origin's storage afterwards."""
    context, page = open_page(cells_url + "?autorun=0")
    deck = DeckPage(page)
    deck.wait_until_ready()
    cell = deck.cell("pruebas")
    cell.show()
    results = {}
    for door, (source, _) in DOORS.items():
        cell.set_source(source)
        status = cell.run()
        results[door] = (status, cell.output_text())
    page.wait_for_timeout(1000)   # anything left pending by a cell has run
    yield deck, results, page.evaluate(STORAGE)
    context.close()


@pytest.mark.parametrize("door", sorted(DOORS))
def test_each_door_is_refused_and_says_so(doors, door):
    _, results, _ = doors
    status, output = results[door]
    expected = DOORS[door][1]
    if expected is None:
        assert status == "done", output
    else:
        assert status == "error", output
        assert expected in output, output


def test_the_refusals_say_nothing_was_kept_in_spanish(doors):
    _, results, _ = doors
    refused = [output for status, output in results.values() if BLOCKED in output]
    assert len(refused) >= 8
    assert all("Bloqueado: una celda no puede" in output for output in refused)


def test_nothing_a_cell_tried_is_in_the_origins_storage(doors):
    deck, _, storage = doors
    assert storage == {"caches": [], "files": [], "databases": []}
    # The deck is unharmed: the same Python, and cells still run.
    assert deck.python_state == "ready" and deck.stats["restarts"] == 0
    other = deck.cell("otra")
    assert other.run() == "done" and other.output_text().strip().endswith("10")


# A listener an earlier cell leaves on the worker's global, through the prototype's own
# addEventListener (the wrapper that removes a cell's listeners never sees it), that answers
# every request it hears with a forged reply; and a cell that sprays replies for every id.
FORGING_LISTENER = """
import js
from pyodide.ffi import create_proxy, to_js

def forge(event):
    data = event.data
    request_id = getattr(data, "id", None)
    reply = {"id": request_id, "ok": True, "result": {"status": "done", "outputs": [
        {"type": "stream", "name": "stdout", "text": "FALSO: salida inventada por otra celda\\n"}]}}
    js.DedicatedWorkerGlobalScope.prototype.postMessage.call(js.self, to_js(reply, dict_converter=js.Object.fromEntries))

js.EventTarget.prototype.addEventListener.call(js.self, "message", create_proxy(forge))
js.EventTarget.prototype.addEventListener.call(js.self, "message", create_proxy(forge), True)
print("escuchando")
"""

SPRAYED_REPLIES = """
import js
from pyodide.ffi import to_js
for request_id in range(1, 400):
    reply = {"id": request_id, "ok": True, "result": {"status": "done", "outputs": [
        {"type": "stream", "name": "stdout", "text": "FALSO propio\\n"}]}}
    try:
        js.self.postMessage(to_js(reply, dict_converter=js.Object.fromEntries))
    except Exception:
        pass
print("verdadero")
"""


def test_a_listener_left_by_a_cell_never_answers_for_python(new_deck, cells_url):
    deck = new_deck(cells_url + "?autorun=0")
    deck.wait_until_ready()
    cell = deck.cell("pruebas")
    cell.show()
    cell.set_source(FORGING_LISTENER)
    cell.run()
    assert "escuchando" in cell.output_text() or "postMessage" in cell.output_text()
    other = deck.cell("otra")
    assert other.run() == "done"
    assert "FALSO" not in other.output_text() and other.output_text().strip().endswith("10")
    cell.set_source(SPRAYED_REPLIES)
    assert cell.run() == "done"
    assert cell.output_text().strip() == "verdadero"
    assert deck.stats["restarts"] == 0
