"""How Python boots in the browser: what is loaded, what is cached, what waits; the first paint.

Speed itself is measured by `python3 build.py bench`, never asserted here; these
tests fail when one of the things that make the boot and the first paint fast
is undone.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import shutil
import tempfile
from pathlib import Path

import pytest

from deckbuild.browser import SUITE_CHROMIUM_ARGS, find_chromium
from deckbuild.pyodide import make_integrity
from deckpage import BOOT_TIMEOUT_MS, DeckPage

LAZY_IMPORTS = ("fontTools", "pytz", "micropip", "matplotlib_pyodide")


def run_python(deck: DeckPage, source: str) -> tuple[str, str]:
    """Run source in the fixture deck's scratch cell; its status and its output text."""
    cell = deck.cell("pruebas")
    cell.set_source(source)
    result = cell.run_in_page()
    return result["status"], cell.output_text()


@pytest.fixture(scope="module")
def deck(live_deck):
    yield live_deck
    live_deck.cell("pruebas").reset_in_page()


def test_boot_unpacks_only_what_numpy_and_pyplot_need(deck):
    probe = (
        "import json, os, site, sys\n"
        "folder = site.getsitepackages()[0]\n"
        f"names = {LAZY_IMPORTS!r}\n"
        "print(json.dumps({'imported': [n for n in names if n in sys.modules],\n"
        "                  'unpacked': [n for n in names if os.path.exists(os.path.join(folder, n))]}))\n"
    )
    status, text = run_python(deck, probe)
    assert status == "done", text
    assert json.loads(text) == {"imported": [], "unpacked": []}
    # Still there for a cell that wants them: the first import installs the package.
    status, text = run_python(deck, "import fontTools, micropip, pytz\nprint(fontTools.version, pytz.__version__)")
    assert status == "done", text
    assert text.split() == ["4.51.0", "2024.1"]


def test_the_wheels_the_worker_unpacked_count_as_loaded_for_pyodide(deck, cells_dist):
    """Unpacked by the worker (wheels.js), not by loadPackage: Pyodide still knows them (a cell's
    loadPackage or micropip finds them loaded) under the channel loadPackage records."""
    runtime = json.loads((cells_dist / "runtime.json").read_text(encoding="utf-8"))
    lock = json.loads((cells_dist / "pyodide" / "pyodide-lock.json").read_text(encoding="utf-8"))
    by_file = {entry["file_name"]: entry["name"] for entry in lock["packages"].values()}
    expected = sorted(by_file[Path(entry["file"]).name] for entry in runtime["preload"])
    assert {"numpy", "matplotlib"} <= set(expected)
    probe = ("import js, pyodide_js\n"
             "print(' '.join(sorted(js.Object.keys(pyodide_js.loadedPackages))))\n"
             "print(pyodide_js.loadedPackages.numpy)")
    status, text = run_python(deck, probe)
    assert status == "done", text
    assert text.splitlines() == [" ".join(expected), "default channel"]


def test_a_pdf_figure_loads_its_fonts_package_on_demand(deck):
    source = ("import io\nimport matplotlib.pyplot as plt\n"
              "figura = plt.figure()\nsalida = io.BytesIO()\nfigura.savefig(salida, format='pdf')\n"
              "plt.close(figura)\nprint(salida.getvalue()[:5])")
    status, text = run_python(deck, source)
    assert status == "done", text
    assert text.strip() == "b'%PDF-'"


def test_modules_load_from_bytecode_and_the_font_list_is_accepted(deck):
    probe = ("import matplotlib.font_manager as fm, numpy, sys\n"
             "print(numpy.__file__)\n"
             "print(fm.fontManager._version == fm.FontManager.__version__)\n"
             "print(sys.modules['dpdeck.classroom.cellrun'].__cached__)")
    status, text = run_python(deck, probe)
    assert status == "done", text
    assert text.split() == ["/lib/python3.12/site-packages/numpy/__init__.pyc", "True",
                            "/lib/python3.12/site-packages/dpdeck/classroom/__pycache__/cellrun.cpython-312.pyc"]


def test_a_cell_traceback_shows_the_cells_line_and_where_in_dpdeck(deck):
    source = ("from dpdeck.mechanisms import laplace_scale\n"
              "escala = laplace_scale(sensitivity=1, epsilon=-2)\n")
    status, text = run_python(deck, source)
    assert status == "error", text
    assert "escala = laplace_scale(sensitivity=1, epsilon=-2)" in text
    assert "dpdeck/" in text and "-2" in text


def without_snapshot(route) -> None:
    """Serve runtime.json without its snapshot: the worker boots Python from scratch."""
    runtime = json.loads(route.fetch().text())
    runtime.pop("snapshot")
    route.fulfill(status=200, content_type="application/json", body=json.dumps(runtime))


def test_the_wasm_module_is_code_cached_for_the_next_visit(browser, cells_url):
    """Chromium keeps compiled wasm only for a response it fetched itself (not one rebuilt in JS).

    It keeps the code it has optimized, once there is enough of it: a boot
    from scratch runs enough Python for that; one from the snapshot runs so
    little that only the lecture's cells do.
    """
    profile = Path(tempfile.mkdtemp(prefix="dpdeck-perfil-"))
    # A profile on disk, like a lecturer's browser (the tests' other contexts keep nothing).
    context = browser.browser_type.launch_persistent_context(
        str(profile), headless=True, args=SUITE_CHROMIUM_ARGS, executable_path=str(find_chromium()),
        viewport={"width": 1280, "height": 720})
    try:
        page = context.new_page()
        page.route("**/runtime.json", without_snapshot)
        page.goto(cells_url + "?autorun=0")
        DeckPage(page).wait_until_ready(BOOT_TIMEOUT_MS)
        assert DeckPage(page).python["timings"]["snapshot"] == {"used": False, "error": "el mazo no trae instantánea"}
        # Started from scratch, the boot drew the warm-up figure, formula included (warmup.js).
        assert DeckPage(page).python["timings"]["warmupFigure"] is True
        status, text = run_python(DeckPage(page), FORMULAS_PARSED)
        assert status == "done" and int(text) >= 1, text
    finally:
        context.close()
    cached = profile / "Default" / "Code Cache" / "wasm"
    size = sum(path.stat().st_size for path in cached.rglob("*") if path.is_file()) if cached.exists() else 0
    shutil.rmtree(profile, ignore_errors=True)
    assert size > 100_000, f"caché de código wasm: {size} bytes"


# ----------------------------------------------------------------- memory snapshot

# How many formulas matplotlib's mathtext has parsed and keeps: the warm-up figure's label is one.
FORMULAS_PARSED = "from matplotlib import mathtext\nprint(mathtext.MathTextParser._parse_cached.cache_info().currsize)"


WARMED = "() => Reveal.getPlugin('dpdeck').python.stats.figureWarmed === true"


def test_a_restored_python_draws_its_throwaway_figure_once_quiet(deck):
    """The snapshot was taken after the warm-up figure, its fonts and formulas then forgotten (snapshot.js).

    A restored boot runs only warmup.js's PYPLOT_CELL before «Python listo»
    (drawing the figure then would only have the browser compile the drawing
    code, 0.3 s of «Python listo»), and draws the figure once Python is quiet.
    """
    timings = deck.python["timings"]
    assert timings["snapshot"]["used"] is True and timings["warmupFigure"] is False
    deck.page.wait_for_function(WARMED, timeout=BOOT_TIMEOUT_MS)
    status, text = run_python(deck, FORMULAS_PARSED)
    assert status == "done" and int(text) >= 1, text


def test_python_is_restored_from_the_build_s_memory_snapshot(deck, cells_dist):
    """Everything the boot imports was already imported in the snapshot (snapshot.py, snapshot.js)."""
    snapshot = deck.python["timings"]["snapshot"]
    assert snapshot["used"] is True and snapshot["error"] is None
    assert set(snapshot["steps"]) >= {"module", "waited", "libraries", "total"}
    runtime = json.loads((cells_dist / "runtime.json").read_text(encoding="utf-8"))
    status, text = run_python(deck, "import sys\n"
                                    "print(sys.path.count(''), 'numpy' in sys.modules, 'dpdeck.figures' in sys.modules)")
    assert status == "done", text
    assert text.split() == ["1", "True", "True"]
    # A library the snapshot did not place loads when a cell first imports its module.
    placed = {library["file"] for library in runtime["snapshot"]["libraries"]}
    assert "numpy/fft/_pocketfft_umath.cpython-312-wasm32-emscripten.so" not in placed
    status, text = run_python(deck, "import numpy as np\nprint(np.fft.rfft([1.0, 2.0, 3.0, 4.0]).real.tolist())")
    assert status == "done", text
    assert text.strip() == "[10.0, -2.0, -2.0]"


RANDOM_DRAWS = ("import random\nimport numpy as np\n"
                "print(random.random(), np.random.random(), np.random.randint(10**9))")


def test_each_restored_python_draws_its_own_random_numbers(new_deck, cells_url):
    """The snapshot fixes the generators' state; each boot seeds them again from fresh entropy."""
    draws = []
    for _ in range(2):
        deck = new_deck(cells_url + "?autorun=0")
        deck.wait_until_ready()
        assert deck.python["timings"]["snapshot"]["used"] is True
        status, text = run_python(deck, RANDOM_DRAWS)
        assert status == "done", text
        draws.append(text.split())
    assert len(draws[0]) == 3
    assert all(first != second for first, second in zip(*draws)), draws


def replace_snapshot(page, memory: bytes, *, matching: bool) -> None:
    """Serve `memory` (gzip) as the snapshot, and a runtime.json with its size and (`matching`) its integrity."""
    def runtime_for_it(route):
        runtime = json.loads(route.fetch().text())
        runtime["snapshot"]["size"] = len(memory)
        if matching:
            runtime["snapshot"]["integrity"] = make_integrity(hashlib.sha256(shipped).hexdigest())
        route.fulfill(status=200, content_type="application/json", body=json.dumps(runtime))

    shipped = gzip.compress(memory)
    page.route("**/runtime.json", runtime_for_it)
    page.route("**/python-snapshot.bin", lambda route: route.fulfill(status=200, body=shipped))


@pytest.mark.parametrize(("damage", "error"), [
    ("missing", "No se pudo descargar pyodide/python-snapshot.bin: HTTP 404"),
    ("damaged", "pyodide/python-snapshot.bin no coincide con su SHA-256"),
    ("another", "Snapshot has invalid magic number"),
])
def test_a_snapshot_that_cannot_be_restored_costs_only_the_try(new_deck, cells_url, damage, error):
    """Missing or damaged, it fails before its memory is used; a snapshot of something else, once the interpreter exists."""
    deck = new_deck()
    if damage == "missing":
        deck.page.route("**/python-snapshot.bin", lambda route: route.fulfill(status=404, body=b"no"))
    else:
        replace_snapshot(deck.page, bytes(64 * 1024 * 1024), matching=damage == "another")
    deck.goto(cells_url + "?autorun=0")
    deck.wait_until_ready()
    snapshot = deck.python["timings"]["snapshot"]
    assert snapshot["used"] is False and error in snapshot["error"], snapshot
    status, text = run_python(deck, "import numpy as np\nimport matplotlib.pyplot as plt\n"
                                    "plt.plot(np.arange(3))\nprint(np.arange(4).sum())")
    assert status == "done", text
    assert "6" in text


# ----------------------------------------------------------------- the device's copy of the snapshot

KEPT_COPY_JS = """async () => {
  const root = await navigator.storage.getDirectory();
  const file = await (await root.getFileHandle('dpdeck-python-snapshot.bin')).getFile();
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await file.arrayBuffer()));
  return {size: file.size, sha256: Array.from(digest, (byte) => byte.toString(16).padStart(2, '0')).join('')};
}"""

WRITE_COPY_JS = """async ([name, size]) => {
  const root = await navigator.storage.getDirectory();
  const writable = await (await root.getFileHandle(name, {create: true})).createWritable();
  const bytes = new Uint8Array(size);
  bytes.set(new TextEncoder().encode('otra memoria'));
  await writable.write(bytes);
  await writable.close();
}"""

KEPT = "() => Reveal.getPlugin('dpdeck').python.stats.snapshotKept === true"

# The device's copy of the packages (packagecopy.js): its size and SHA-256, as runtime.json's packagesCopy gives them.
KEPT_PACKAGES_JS = """async () => {
  const root = await navigator.storage.getDirectory();
  const file = await (await root.getFileHandle('dpdeck-python-packages.bin')).getFile();
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', await file.arrayBuffer()));
  return {size: file.size, integrity: 'sha256-' + btoa(String.fromCharCode(...digest))};
}"""


def preloaded_wheels(dist: Path) -> dict:
    """What the build says the device's copy of the packages is (runtime.json's packagesCopy)."""
    copy = json.loads((dist / "runtime.json").read_text(encoding="utf-8"))["packagesCopy"]
    return {"size": copy["size"], "integrity": copy["integrity"]}


def shipped_memory(dist: Path) -> dict:
    """The memory Python is restored from: the shipped file inflated, with the interpreter's data put back
    (tests/build/test_snapshot.py checks runtime.json's SHA-256 of it against its own decoding)."""
    described = json.loads((dist / "runtime.json").read_text(encoding="utf-8"))["snapshot"]
    memory = gzip.decompress((dist / "pyodide" / "python-snapshot.bin").read_bytes())
    return {"size": len(memory), "sha256": base64.b64decode(described["memoryIntegrity"].removeprefix("sha256-")).hex()}


def test_once_python_is_quiet_the_device_keeps_its_snapshot_and_the_next_boot_reads_it(new_deck, cells_url, cells_dist):
    """The second boot on a device neither downloads nor inflates the snapshot (snapshot.js, «the device's copy»)."""
    deck = new_deck(cells_url + "?autorun=0")
    deck.wait_until_ready()
    first = deck.python["timings"]["snapshot"]
    assert (first["used"], first["source"], first["keep"]) == (True, "download", True), first
    assert deck.python["timings"]["packagesCopy"] == {"source": "download", "keep": True}
    deck.page.wait_for_function(KEPT, timeout=BOOT_TIMEOUT_MS)
    assert deck.page.evaluate(KEPT_COPY_JS) == shipped_memory(cells_dist)
    assert deck.page.evaluate(KEPT_PACKAGES_JS) == preloaded_wheels(cells_dist)

    context = deck.page.context
    asked = []
    # What the page and its workers ask for (the service worker may still be storing the deck for use offline).
    context.on("request", lambda request: request.service_worker is None and asked.append(request.url))
    again = DeckPage(context.new_page())
    again.goto(cells_url + "?autorun=0")
    again.wait_until_ready()
    second = again.python["timings"]["snapshot"]
    assert (second["used"], second["source"], second["keep"]) == (True, "kept", False), second
    assert "downloadedAt" not in second["marks"] and "keptCheckedAt" in second["marks"]
    assert not [url for url in asked if url.endswith("python-snapshot.bin")]
    # The packages' files came from the device's copy too (packagecopy.js); a figure needs all of them.
    assert again.python["timings"]["packagesCopy"] == {"source": "kept", "keep": False}
    status, text = run_python(again, "import numpy as np\nimport matplotlib.pyplot as plt\nfrom PIL import Image\n"
                                     "plt.plot(np.arange(3))\nprint(np.arange(4).sum())")
    assert (status, text.strip()) == ("done", "6")
    assert again.cell("pruebas").figures().count() == 1


def test_a_copy_that_is_not_the_build_s_is_never_restored_and_is_replaced(new_deck, cells_url, cells_dist):
    """Another build's copy, or one changed on the device, fails its SHA-256: the boot downloads, then keeps the right one."""
    deck = new_deck(cells_url + "runtime.json")
    deck.page.evaluate(WRITE_COPY_JS, ["dpdeck-python-snapshot.bin", shipped_memory(cells_dist)["size"]])
    deck.page.evaluate(WRITE_COPY_JS, ["dpdeck-python-packages.bin", 4096])
    deck.goto(cells_url + "?autorun=0")
    deck.wait_until_ready()
    snapshot = deck.python["timings"]["snapshot"]
    assert (snapshot["used"], snapshot["source"], snapshot["keep"]) == (True, "download", True), snapshot
    assert "keptReadAt" in snapshot["marks"] and "downloadedAt" in snapshot["marks"]
    # The copy of the packages there was no copy of the build's (4 kB of something else): refused, and said why.
    assert deck.python["timings"]["packagesCopy"] == {"source": "download", "keep": True,
                                                      "refused": "no mide lo que dice runtime.json"}
    assert snapshot["refused"] is True
    deck.page.wait_for_function(KEPT, timeout=BOOT_TIMEOUT_MS)
    assert deck.page.evaluate(KEPT_COPY_JS) == shipped_memory(cells_dist)
    assert deck.page.evaluate(KEPT_PACKAGES_JS) == preloaded_wheels(cells_dist)


# ----------------------------------------------------------------- first paint

SLIDE_BOXES = """selector => Array.from(document.querySelector(selector).children, child => {
    const box = child.getBoundingClientRect();
    return [child.tagName, Math.round(box.x), Math.round(box.y), Math.round(box.width), Math.round(box.height)];
})"""


@pytest.mark.parametrize("hash_", ["", "#/hoja-de-ruta", "#/5"])
def test_the_slide_is_painted_before_any_script_file_as_reveal_lays_it_out(new_page, new_deck, deck_url, hash_):
    """Only the page's inline script runs (every .js file is refused), and the slide is
    already on screen, every block where reveal.js puts it once it has started."""
    page = new_page()
    page.route("**/*.js", lambda route: route.abort())
    page.goto(deck_url + "?autorun=0" + hash_)
    page.wait_for_selector(".reveal .slides > section.dp-first-paint-slide", state="visible", timeout=10_000)
    assert page.evaluate("typeof window.Reveal") == "undefined"
    page.evaluate("document.fonts.ready")
    before = page.evaluate(SLIDE_BOXES, ".reveal .slides > section.dp-first-paint-slide")
    assert len(before) >= 2
    full = new_deck(deck_url + "?autorun=0" + hash_, python=False)
    full.wait_for_reveal()
    full.page.wait_for_selector(".reveal.ready .slides > section.present", state="visible", timeout=30_000)
    full.page.evaluate("document.fonts.ready")
    full.page.wait_for_timeout(500)  # reveal's fade
    after = full.page.evaluate(SLIDE_BOXES, ".reveal .slides > section.present")
    assert before == after


def test_a_slide_only_reveal_can_show_gets_no_early_paint(new_page, deck_url):
    page = new_page()
    page.route("**/*.js", lambda route: route.abort())
    page.goto(deck_url + "?autorun=0#/3/0/1")
    page.wait_for_load_state("domcontentloaded")
    assert page.evaluate("document.querySelectorAll('.dp-first-paint-slide').length") == 0


def test_python_starts_before_the_page_script(new_page, cells_url):
    """The worker is started by the page's first, inline script: with every script file but the
    worker's refused, Python still asks for runtime.json."""
    page = new_page()
    page.route("**/vendor/**/*.js", lambda route: route.abort())
    page.route("**/js/main.js", lambda route: route.abort())
    page.goto(cells_url + "?autorun=0")
    # The worker (started from a blob: URL, so it runs under the page's policy) loads
    # js/worker.js itself: its requests are the worker's, not in the page's Resource Timing.
    for _ in range(300):
        if any(url.endswith("/runtime.json") for url in page.requests):
            break
        page.wait_for_timeout(100)
    assert any(url.endswith("/runtime.json") for url in page.requests), page.requests
    assert any(url.endswith("/js/worker.js") for url in page.requests)


@pytest.fixture(scope="module", autouse=True)
def _runtime_leaves_micropip_out(cells_dist):
    runtime = json.loads((cells_dist / "runtime.json").read_text())
    assert "micropip" not in runtime["packages"]


ENHANCED_CELLS = "() => Array.from(document.querySelectorAll('.cell[data-enhanced]'), (cell) => cell.dataset.cellId)"
LONG_CELL = "import time\ninicio = time.time()\nwhile time.time() - inicio < 3:\n    pass\nprint('fin')"


def test_cells_off_screen_wait_for_python_and_for_the_cell_that_runs(new_deck, cells_url):
    """An editor costs the page's thread tens of milliseconds: while Python boots or a
    cell runs, only the cells shown (or asked for) get theirs; the rest follow after."""
    deck = new_deck()
    held = []
    deck.page.context.route("**/pyodide/pyodide.asm.wasm", lambda route: held.append(route))
    deck.goto(cells_url + "?autorun=0")
    deck.wait_for_reveal()
    deck.page.wait_for_selector(".cell[data-cell-id=saludo][data-enhanced]")
    deck.page.wait_for_timeout(500)  # idle time, in which every cell used to get its editor
    assert deck.python_state == "loading"
    assert deck.page.evaluate(ENHANCED_CELLS) == ["saludo"]
    # A slide shown gets its cells' editors at once; a script asking for a cell gets it with its editor.
    deck.cell("editable").show()
    assert deck.page.evaluate(ENHANCED_CELLS) == ["saludo", "editable"]
    pruebas = deck.cell("pruebas")
    assert pruebas.source == pruebas.original
    assert deck.page.evaluate(ENHANCED_CELLS) == ["saludo", "editable", "pruebas"]
    # Queued now, it runs the moment Python is ready; the other cells wait for it too.
    pruebas.set_source(LONG_CELL)
    deck.page.evaluate("() => { window.longRun = Reveal.getPlugin('dpdeck').cell('pruebas').run(); }")
    assert held, "la descarga de pyodide.asm.wasm no pasó por la ruta retenida"
    for route in held:
        route.continue_()
    deck.wait_for_python()
    deck.page.wait_for_selector(".cell[data-cell-id=pruebas][data-status=running]", timeout=BOOT_TIMEOUT_MS)
    assert deck.page.get_attribute("html", "data-cells") is None
    assert len(deck.page.evaluate(ENHANCED_CELLS)) == 3
    deck.wait_for_cells()
    assert deck.page.evaluate("() => window.longRun.then((result) => result.status)") == "done"
    assert "fin" in pruebas.output_text()
    assert len(deck.page.evaluate(ENHANCED_CELLS)) == deck.page.evaluate("() => document.querySelectorAll('.cell').length")
