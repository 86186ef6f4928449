"""The built deck works offline: it loads, shows its first slide, runs Python from dist/ only.

Every page here records each request it and its workers make; a test fails if
one of them goes anywhere but the local server that serves dist/.
"""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser
from urllib.parse import urlsplit

import pytest

# The deck's service worker runs here (elsewhere it is blocked): its requests stay on the server too.
pytestmark = pytest.mark.service_worker

PYTHON_READY_MS = 120_000
CELL_DONE_MS = 60_000

# A seeded Laplace draw: the browser's numpy 2.0.2 must print exactly what native numpy prints.
PARITY_SOURCE = (
    "import numpy as np\n"
    "print(np.random.default_rng(0).laplace(0.0, 2.0, 4).round(6).tolist())\n"
    "import matplotlib.pyplot as plt\n"
    "plt.plot([0, 1, 2], [0, 1, 4])\n"
)

PROBE_WORKER = r"""
self.onmessage = async (event) => {
  const { base, wheel, source } = event.data;
  try {
    importScripts(base + "pyodide/pyodide.js");
    const pyodide = await loadPyodide({ indexURL: base + "pyodide/" });
    await pyodide.loadPackage(["numpy", "matplotlib", "micropip"]);
    const micropip = pyodide.pyimport("micropip");
    await micropip.install(base + wheel);
    pyodide.globals.set("cell_source", source);
    const answer = await pyodide.runPythonAsync(`
import json, pathlib
import numpy, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot  # builds the font cache once, before the cell runs
import dpdeck
from dpdeck.classroom.cellrun import run_cell
outcome = run_cell(cell_source, cell_id="prueba")
json.dumps({
    "numpy": numpy.__version__,
    "matplotlib": matplotlib.__version__,
    "status": outcome["status"],
    "outputs": [[o["type"], o.get("text", "")] for o in outcome["outputs"]],
    "census_in_wheel": pathlib.Path(dpdeck.__file__).with_name("censo.csv").exists(),
})
`);
    self.postMessage({ ok: true, answer });
  } catch (error) {
    self.postMessage({ ok: false, error: String(error && error.stack || error) });
  }
};
"""

RUN_PROBE = """
([probe, message]) => new Promise((resolve) => {
  const url = URL.createObjectURL(new Blob([probe], { type: "text/javascript" }));
  const worker = new Worker(url);
  worker.onmessage = (event) => { resolve(event.data); worker.terminate(); };
  worker.onerror = (event) => resolve({ ok: false, error: event.message || "error en el worker" });
  worker.postMessage(message);
})
"""


def foreign_requests(requests: list[str], base_url: str) -> list[str]:
    """Requests that went anywhere but the server that serves the deck."""
    origin = urlsplit(base_url)[:2]
    return [url for url in requests
            if not url.startswith(("data:", "blob:")) and urlsplit(url)[:2] != origin]


class FirstHeading(HTMLParser):
    """Text of the first <h1> in the built page."""

    def __init__(self):
        super().__init__()
        self.inside, self.done, self.parts = False, False, []

    def handle_starttag(self, tag, attrs):
        if tag == "h1" and not self.done:
            self.inside = True

    def handle_endtag(self, tag):
        if tag == "h1" and self.inside:
            self.inside, self.done = False, True

    def handle_data(self, data):
        if self.inside:
            self.parts.append(data)


def first_title(dist_dir) -> str:
    parser = FirstHeading()
    parser.feed((dist_dir / "index.html").read_text(encoding="utf-8"))
    return " ".join("".join(parser.parts).split())


def native_outputs(source: str) -> list[list[str]]:
    from dpdeck.classroom.cellrun import run_cell

    outcome = run_cell(source, cell_id="prueba")
    assert outcome["status"] == "done", outcome
    return [[output["type"], output.get("text", "")] for output in outcome["outputs"]]


def runtime_built(dist_dir) -> bool:
    files = json.loads((dist_dir / "manifest.json").read_text())["files"]
    return "js/main.js" in files and "js/worker.js" in files


def test_vendored_pyodide_runs_numpy_matplotlib_and_dpdeck(dist_dir, deck_url, new_page):
    """Pyodide, the shipped wheels and the dpdeck wheel load from dist/ and compute like native Python."""
    runtime = json.loads((dist_dir / "runtime.json").read_text())
    page = new_page(deck_url + "manifest.json")
    reply = page.evaluate(RUN_PROBE, [PROBE_WORKER, {"base": deck_url, "wheel": runtime["wheel"],
                                                     "source": PARITY_SOURCE}])
    assert reply["ok"], reply.get("error")
    answer = json.loads(reply["answer"])
    assert (answer["numpy"], answer["matplotlib"]) == ("2.0.2", "3.8.4")
    assert answer["status"] == "done"
    assert answer["outputs"] == native_outputs(PARITY_SOURCE)
    assert answer["census_in_wheel"] == (dist_dir / "data" / "censo.csv").exists()
    fetched = " ".join(page.requests)
    assert "pyodide.asm.wasm" in fetched and runtime["wheel"] in fetched, "no se registraron las peticiones del worker"
    assert foreign_requests(page.requests, deck_url) == []


def open_deck(new_page, url):
    page = new_page(url)
    page.wait_for_selector(".reveal .slides > section.present", state="visible", timeout=30_000)
    return page


@pytest.mark.parametrize("server", ["deck_url", "plain_url"])
def test_deck_shows_first_slide_and_runs_a_cell_offline(server, request, dist_dir, new_page, artifacts_dir):
    """A full load, Python boot and one cell run: right answer, no request leaves the server."""
    if not runtime_built(dist_dir):
        pytest.fail("dist/ no tiene js/main.js y js/worker.js: falta el código de la página (deck/js/)")
    url = request.getfixturevalue(server)
    page = open_deck(new_page, url)
    title = page.locator(".reveal .slides > section.present h1").first.inner_text()
    assert " ".join(title.split()) == first_title(dist_dir)
    page.screenshot(path=str(artifacts_dir / f"offline-first-slide-{server}.png"))

    page.wait_for_function("() => ['ready', 'error'].includes(document.documentElement.dataset.python)",
                           timeout=PYTHON_READY_MS)
    assert page.evaluate("() => document.documentElement.dataset.python") == "ready"

    cell = page.locator(".cell").first
    cell_id = cell.get_attribute("data-cell-id")
    prerendered = cell.locator(".cell-output").inner_text()
    cell.locator("[data-action=run]").dispatch_event("click")
    page.wait_for_function(
        "(id) => ['done', 'error'].includes(document.querySelector(`.cell[data-cell-id='${id}']`).dataset.status)"
        " && document.querySelector(`.cell[data-cell-id='${id}'] .cell-output`).dataset.origin === 'live'",
        arg=cell_id, timeout=CELL_DONE_MS)
    assert cell.get_attribute("data-status") == "done"
    live = cell.locator(".cell-output").inner_text()
    assert normalise_output(live) == normalise_output(prerendered)

    assert any("pyodide.asm.wasm" in url for url in page.requests)
    assert foreign_requests(page.requests, url) == []


def normalise_output(text: str) -> str:
    """Output text without the origin label each output carries (calculado al crear las diapositivas / en tu navegador)."""
    lines = [line for line in text.splitlines()
             if not re.search(r"pre-?calculad|calculado en tu navegador", line, re.IGNORECASE)]
    return "\n".join(line.rstrip() for line in lines).strip()


def test_file_url_says_it_must_be_served(dist_dir, new_page):
    """Opened from file://, the page says in Spanish that it must be served, and how."""
    if not runtime_built(dist_dir):
        pytest.fail("dist/ no tiene js/main.js: falta el código de la página (deck/js/)")
    page = new_page((dist_dir / "index.html").as_uri())
    page.wait_for_function("() => document.body && /servid/i.test(document.body.innerText)", timeout=15_000)
    text = page.evaluate("() => document.body.innerText")
    assert "python3 build.py serve" in text or "http.server" in text
    assert foreign_requests([url for url in page.requests if not url.startswith("file:")], "file:///") == []
