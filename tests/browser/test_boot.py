"""How Python boots in the browser: what is loaded, what is cached, what stays for later.

Speed itself is measured by `python3 build.py bench`, never asserted here; these
tests fail when one of the things that make the boot fast is undone.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from cellpages import BOOT_TIMEOUT_MS, wait_until_ready

LAZY_IMPORTS = ("fontTools", "pytz", "micropip", "matplotlib_pyodide")


def run_python(page, source: str) -> dict:
    """Run source as a cell of the deck's Python; the result as the worker gives it."""
    return page.evaluate(
        "async source => { const result = await window.dpdeck.runtime.run('prueba-arranque', source, {});"
        " return {status: result.status, outputs: result.outputs.map(o => o.type === 'figure' ? {type: 'figure'} : o)}; }",
        source)


def printed(result: dict) -> str:
    return "".join(output.get("text", "") for output in result["outputs"] if output["type"] == "stream")


def test_boot_unpacks_only_what_numpy_and_pyplot_need(live_page):
    probe = (
        "import json, os, site, sys\n"
        "folder = site.getsitepackages()[0]\n"
        f"names = {LAZY_IMPORTS!r}\n"
        "print(json.dumps({'imported': [n for n in names if n in sys.modules],\n"
        "                  'unpacked': [n for n in names if os.path.exists(os.path.join(folder, n))]}))\n"
    )
    before = json.loads(printed(run_python(live_page, probe)))
    assert before == {"imported": [], "unpacked": []}
    # Still there for a cell that wants them: the first import installs the package.
    result = run_python(live_page, "import fontTools, micropip, pytz\nprint(fontTools.version, pytz.__version__)")
    assert result["status"] == "done", result
    assert printed(result).split() == ["4.51.0", "2024.1"]


def test_a_pdf_figure_loads_its_fonts_package_on_demand(live_page):
    source = ("import io\nimport matplotlib.pyplot as plt\n"
              "figure = plt.figure()\nbuffer = io.BytesIO()\nfigure.savefig(buffer, format='pdf')\n"
              "plt.close(figure)\nprint(buffer.getvalue()[:5])")
    result = run_python(live_page, source)
    assert result["status"] == "done", result
    assert printed(result).strip() == "b'%PDF-'"


def test_modules_load_from_bytecode_and_the_font_list_is_accepted(live_page):
    probe = ("import matplotlib.font_manager as fm, numpy, sys\n"
             "print(numpy.__file__)\n"
             "print(fm.fontManager._version == fm.FontManager.__version__)\n"
             "print(sys.modules['dpdeck.cellrun'].__cached__)")
    lines = printed(run_python(live_page, probe)).split()
    assert lines == ["/lib/python3.12/site-packages/numpy/__init__.pyc", "True",
                     "/lib/python3.12/site-packages/dpdeck/__pycache__/cellrun.cpython-312.pyc"]


def test_a_cell_traceback_shows_the_cells_line_and_where_in_dpdeck(live_page):
    source = ("from dpdeck.mechanisms import laplace_scale\n"
              "escala = laplace_scale(sensitivity=1, epsilon=-2)\n")
    result = run_python(live_page, source)
    errors = [output for output in result["outputs"] if output["type"] == "error"]
    assert result["status"] == "error" and errors, result
    traceback = errors[0]["traceback"]
    assert "escala = laplace_scale(sensitivity=1, epsilon=-2)" in traceback
    assert "dpdeck/" in traceback and "-2" in traceback


def test_the_wasm_module_is_code_cached_for_the_next_visit(browser, cells_url):
    """Chromium keeps compiled wasm only for a response it fetched itself (not one rebuilt in JS)."""
    profile = Path(tempfile.mkdtemp(prefix="dpdeck-perfil-"))
    options = {"headless": True, "args": ["--no-sandbox", "--disable-gpu"], "viewport": {"width": 1280, "height": 720}}
    if Path("/usr/bin/chromium").exists():
        options["executable_path"] = "/usr/bin/chromium"
    context = browser.browser_type.launch_persistent_context(str(profile), **options)
    try:
        page = context.new_page()
        page.goto(cells_url + "?autorun=0")
        wait_until_ready(page, BOOT_TIMEOUT_MS)
    finally:
        context.close()
    cached = profile / "Default" / "Code Cache" / "wasm"
    size = sum(path.stat().st_size for path in cached.rglob("*") if path.is_file()) if cached.exists() else 0
    shutil.rmtree(profile, ignore_errors=True)
    assert size > 100_000, f"caché de código wasm: {size} bytes"


@pytest.fixture(scope="module", autouse=True)
def _pyodide_boots(cells_dist):
    runtime = json.loads((cells_dist / "runtime.json").read_text())
    assert "micropip" not in runtime["packages"]


# ----------------------------------------------------------------- first paint

SLIDE_BOXES = """selector => Array.from(document.querySelector(selector).children, child => {
    const box = child.getBoundingClientRect();
    return [child.tagName, Math.round(box.x), Math.round(box.y), Math.round(box.width), Math.round(box.height)];
})"""


@pytest.mark.parametrize("hash_", ["", "#/hoja-de-ruta", "#/5"])
def test_the_slide_is_painted_before_any_script_file_as_reveal_lays_it_out(new_page, deck_url, hash_):
    """Only the page's inline script runs (every .js file is refused), and the slide is
    already on screen, every block where reveal.js puts it once it has started."""
    page = new_page()
    page.route("**/*.js", lambda route: route.abort())
    page.goto(deck_url + "?autorun=0" + hash_)
    page.wait_for_selector(".reveal .slides > section.dp-preview-slide", state="visible", timeout=10_000)
    assert page.evaluate("typeof window.Reveal") == "undefined"
    before = page.evaluate(SLIDE_BOXES, ".reveal .slides > section.dp-preview-slide")
    assert len(before) >= 2
    full = new_page(deck_url + "?autorun=0" + hash_)
    full.wait_for_selector(".reveal.ready .slides > section.present", state="visible", timeout=30_000)
    full.wait_for_timeout(500)  # reveal's fade
    after = full.evaluate(SLIDE_BOXES, ".reveal .slides > section.present")
    assert before == after


def test_a_deep_link_reveal_alone_can_show_gets_no_preview(new_page, deck_url):
    page = new_page()
    page.route("**/*.js", lambda route: route.abort())
    page.goto(deck_url + "?autorun=0#/3/0/1")
    page.wait_for_load_state("domcontentloaded")
    assert page.evaluate("document.querySelectorAll('.dp-preview-slide').length") == 0
