"""What a restored Python gets after «Python listo» (deck/js/worker/remainder.js), and files that arrive badly.

A first visit restores Python from the snapshot with only the libraries the
snapshot places; the wheels and the standard library come afterwards. These
tests hold those downloads back and check that Python is ready without them,
that a figure needs none of them (its fonts come in a small zip), that an
import or a font needing a file still on its way fetches it there and then, and that a damaged file is never
half-used: Python starts from the full files, or the boot ends at once, and
the page says so in one line of Spanish.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from deckpage import BOOT_TIMEOUT_MS, DeckPage


def run_python(deck: DeckPage, source: str) -> tuple[str, str]:
    cell = deck.cell("pruebas")
    cell.set_source(source)
    result = cell.run_in_page()
    return result["status"], cell.output_text()


class HeldDownloads:
    """Routes that keep the worker's own fetches of some files waiting until released; other requests pass."""

    def __init__(self, page, names: tuple[str, ...]):
        self.names = names
        self.held: dict[str, list] = {}
        self.passed: list[tuple[str, str]] = []
        page.route("**/*", self.handle)

    def handle(self, route):
        request = route.request
        name = request.url.rsplit("/", 1)[-1].split("?", 1)[0]
        if name in self.names and request.resource_type == "fetch":
            self.held.setdefault(name, []).append(route)
            return
        self.passed.append((request.resource_type, name))
        route.continue_()

    def release(self, *names: str) -> None:
        for name in names or list(self.held):
            for route in self.held.pop(name, []):
                route.continue_()


def runtime_of(dist: Path) -> dict:
    return json.loads((dist / "runtime.json").read_text(encoding="utf-8"))


def test_python_is_ready_before_any_wheel_or_the_standard_library_arrives(new_deck, cells_url, cells_dist):
    runtime = runtime_of(cells_dist)
    wheels = tuple(Path(entry["file"]).name for entry in runtime["preload"]) + (Path(runtime["wheel"]).name,)
    held_names = (*wheels, "python_stdlib.zip")
    deck = new_deck()
    held = HeldDownloads(deck.page, held_names)
    deck.goto(cells_url + "?autorun=0")
    deck.wait_until_ready()
    timings = deck.python["timings"]
    assert timings["snapshot"]["used"] is True and timings["remainderLater"] is True
    # Nothing of it was needed. First asked for: the files the first figure reads (matplotlib's fonts, alone in
    # their small zip) and the dpdeck wheel (the census), which a cell waits for; the rest once they are in.
    assert "python-libraries.zip" in [name for _, name in held.passed]
    assert "python-figure-files.zip" in [name for _, name in held.passed]
    assert any(file.endswith("DejaVuSans.ttf") for file in runtime["snapshot"]["figureFiles"])
    assert "cellWheels" not in runtime["snapshot"]
    for _ in range(50):
        if held.held:
            break
        deck.page.wait_for_timeout(100)
    cell_wheels = [Path(runtime["wheel"]).name]
    assert set(held.held) == set(cell_wheels)
    held.release(*cell_wheels)
    for _ in range(200):
        if set(held.held) == set(held_names) - set(cell_wheels):
            break
        deck.page.wait_for_timeout(100)
    assert set(held.held) == set(held_names) - set(cell_wheels)
    # A figure before matplotlib's wheel is in: its fonts are there already.
    status, text = run_python(deck, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.title('hola $\\epsilon$')")
    assert status == "done", text
    assert deck.cell("pruebas").figures().count() == 1
    assert "matplotlib-3.8.4-cp312-cp312-pyodide_2024_0_wasm32.whl" in held.held
    # An import whose files are still on their way (the standard library, numpy's other modules) fetches them
    # there and then (a synchronous request), and goes on.
    source = ("import colorsys\nimport numpy.polynomial as polinomios\n"
              "print(colorsys.rgb_to_hsv(1.0, 0.0, 0.0), polinomios.Polynomial([1, 2])(3))")
    status, text = run_python(deck, source)
    assert status == "done", text
    assert text.strip() == "(0.0, 1.0, 1.0) 7.0"
    fetched_now = {name for kind, name in held.passed if kind == "xhr"}
    assert {"python_stdlib.zip", "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"} <= fetched_now
    # A font the first figure did not read (bold monospace) waits for matplotlib's wheel, fetched there and then.
    status, text = run_python(deck, "import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\n"
                                    "plt.title('hola', fontweight='bold', family='monospace')")
    assert status == "done", text
    assert deck.cell("pruebas").figures().count() == 1
    assert "matplotlib-3.8.4-cp312-cp312-pyodide_2024_0_wasm32.whl" in {name for kind, name in held.passed if kind == "xhr"}
    held.release()


@pytest.mark.parametrize("name", ["python-snapshot.bin", "python-libraries.zip"])
def test_a_restore_file_cut_short_leaves_python_to_start_from_the_full_files(new_deck, cells_url, cells_dist, name):
    """Nothing half-used: the snapshot or its libraries cut in half fail their check, Python starts from scratch
    from the wheels, and the page says so in one line of Spanish."""
    whole = (cells_dist / "pyodide" / name).read_bytes()
    deck = new_deck()
    deck.page.route(f"**/pyodide/{name}", lambda route: route.fulfill(status=200, body=whole[: len(whole) // 2],
                                                                       content_type="application/octet-stream"))
    deck.goto(cells_url + "?autorun=0")
    deck.wait_until_ready()
    timings = deck.python["timings"]
    assert timings["snapshot"]["used"] is False and timings["remainderLater"] is False
    notice = timings["notice"]
    assert notice.startswith("Python arrancó desde cero: su memoria guardada no se pudo usar") and "\n" not in notice
    assert deck.toast_text() and notice in deck.toast_text()
    status, text = run_python(deck, "import numpy as np\nprint(np.arange(5).sum())")
    assert (status, text.strip()) == ("done", "10")


def test_an_interpreter_compressed_without_saying_so_ends_the_boot_at_once(new_deck, cells_url, cells_dist):
    """A proxy that strips Content-Encoding hands the worker gzip bytes as the .wasm: one line says so, no wait."""
    compressed = gzip.compress((cells_dist / "pyodide" / "pyodide.asm.wasm").read_bytes())
    deck = new_deck()
    deck.page.route("**/pyodide/pyodide.asm.wasm",
                    lambda route: route.fulfill(status=200, body=compressed, content_type="application/wasm"))
    deck.goto(cells_url + "?autorun=0")
    deck.wait_for_python("error", timeout=BOOT_TIMEOUT_MS)
    detail = deck.page.inner_text(".python-status-detail")
    assert detail.startswith("pyodide/pyodide.asm.wasm llegó comprimido con gzip sin decirlo") and "\n" not in detail
