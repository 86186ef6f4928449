"""The page's take-home modules, run in node: the notebook with a student's edits, and saved outputs.

deck/js/page/notebooks.js (a shipped notebook plus the editors' code, saved
outputs and the challenge's answer) and deck/js/page/savedoutputs.js (the last
run of an edited cell in localStorage, within its budgets, and what happens
when the browser is full) are bundled by the same esbuild the build uses and
run in node against a fake localStorage with a quota. Their results are
checked here with nbformat and by running the generated Python.
"""

from __future__ import annotations

import base64
import json
import shutil
import subprocess

import nbformat
import pytest

from deckbuild.notebooks import INSTALL_CELL, INSTALL_NOTE
from deckjs import ESBUILD, ROOT

NOTEBOOKS_JS = ROOT / "deck" / "js" / "page" / "notebooks.js"
SAVED_OUTPUTS_JS = ROOT / "deck" / "js" / "page" / "savedoutputs.js"

# Bundles a module with esbuild and evaluates it; `window.localStorage` is a Map with a quota.
HARNESS = r"""
const [esbuildPath, entry, scenario] = process.argv.slice(1);
const esbuild = require(esbuildPath);
const bundle = esbuild.buildSync({entryPoints: [entry], bundle: true, write: false, format: 'cjs',
                                  platform: 'neutral', logLevel: 'silent'});
class QuotaExceededError extends Error { constructor() { super('lleno'); this.name = 'QuotaExceededError'; } }
function fakeStorage(quota) {
  const items = new Map();
  const used = () => [...items].reduce((sum, [key, value]) => sum + key.length + value.length, 0);
  return {
    quota, items,
    get length() { return items.size; },
    key: (index) => [...items.keys()][index] ?? null,
    getItem: (key) => (items.has(key) ? items.get(key) : null),
    setItem(key, value) {
      const before = items.get(key);
      items.set(key, String(value));
      if (used() > this.quota) { if (before === undefined) items.delete(key); else items.set(key, before); throw new QuotaExceededError(); }
    },
    removeItem: (key) => items.delete(key),
  };
}
globalThis.window = {localStorage: fakeStorage(Infinity)};
const module = {exports: {}};
new Function('module', 'exports', bundle.outputFiles[0].text)(module, module.exports);
const exported = module.exports;
const result = new Function('m', 'fakeStorage', scenario)(exported, fakeStorage);
process.stdout.write(JSON.stringify(result));
"""


def run_module(entry, scenario: str):
    node = shutil.which("node")
    if node is None or not ESBUILD.is_dir():
        pytest.fail("hacen falta node y node_modules/esbuild: «python3 build.py test» los instala")
    completed = subprocess.run([node, "-e", HARNESS, str(ESBUILD), str(entry), scenario],
                               capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert completed.returncode == 0, completed.stderr
    return json.loads(completed.stdout)


# ------------------------------------------------------------------ notebooks.js

PNG = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==")


def shipped_notebook() -> dict:
    from nbformat import v4

    notebook = v4.new_notebook(cells=[
        v4.new_markdown_cell("# Capítulo", id="texto-1"),
        v4.new_markdown_cell(INSTALL_NOTE.format(wheel=WHEEL), id=INSTALL_CELL,
                             metadata={"dpdeck": {"install": WHEEL}}),
        v4.new_code_cell("print('uno')\nx = 1", id="uno", metadata={"dpdeck": {"cell": "uno"}}),
        v4.new_code_cell("print('dos')", id="dos", metadata={"dpdeck": {"cell": "dos"}}),
        v4.new_code_cell("print('tres')", id="tres", metadata={"dpdeck": {"cell": "tres"}}),
        v4.new_code_cell('semilla = 0   # la semilla\nstudent_extension = {\n    # Supuesto: …\n'
                         '    "assumption": "",\n    "measurement": "",\n    "conclusion": "",\n'
                         '    "limitation": "",\n}', id="reto-laboratorio",
                         metadata={"dpdeck": {"challenge": "reto-laboratorio"}}),
    ])
    notebook.metadata["dpdeck"] = {"chapter": "01", "flavour": "guided", "title": "Capítulo"}
    # As the build writes it: sources as lists of lines.
    return json.loads(nbformat.writes(notebook))


WHEEL = "wheels/dpdeck-0.1.0-py3-none-any.whl"

TRICKY = {
    "assumption": 'Con "comillas", \\ barras y \u2028 un separador',
    "measurement": "línea\nnueva y \ttab: 4,02",
    "conclusion": "ñandú € 😀",
    "limitation": "",
}


def test_the_notebook_takes_the_editors_code_the_saved_outputs_and_the_challenge():
    figure = base64.b64encode(PNG).decode("ascii")
    saved = {
        # Edited and run: its output travels with it.
        "uno": {"source": "print('mía')", "outputs": [
            {"type": "stream", "name": "stdout", "text": "mía\n"},
            {"type": "value", "text": "42"},
            {"type": "figure", "format": "png", "width": 1, "height": 1, "data": figure}]},
        # Edited again after its last run: the output belongs to other code and stays out.
        "dos": {"source": "print('antes')", "outputs": [{"type": "stream", "name": "stdout", "text": "antes\n"}]},
        "tres": {"source": "1 / 0", "outputs": [
            {"type": "error", "ename": "ZeroDivisionError", "evalue": "división por cero",
             "traceback": "Error en la línea 1:\n  1 / 0"}]},
    }
    scenario = """
      const notebook = %s, saved = %s, answer = %s;
      const sources = {uno: "print('mía')", dos: "print('después')", tres: "1 / 0"};
      return m.notebookWithEdits(notebook, {
        sourceOf: (id) => sources[id] ?? null, savedOf: (id) => saved[id] ?? null,
        answerOf: (id) => id === 'reto-laboratorio' ? {seed: 5, extension: answer} : null});
    """ % (json.dumps(shipped_notebook()), json.dumps(saved), json.dumps(TRICKY))
    notebook = nbformat.from_dict(run_module(NOTEBOOKS_JS, scenario))
    nbformat.validate(notebook)
    cells = {cell.id: cell for cell in notebook.cells}
    assert cells["uno"].source == "print('mía')"
    assert [output.output_type for output in cells["uno"].outputs] == ["stream", "execute_result", "display_data"]
    assert cells["uno"].outputs[1]["data"]["text/plain"] == "42"
    assert base64.b64decode(cells["uno"].outputs[2]["data"]["image/png"]) == PNG
    assert cells["dos"].source == "print('después')" and cells["dos"].outputs == []
    assert cells["tres"].outputs[0].ename == "ZeroDivisionError"
    assert cells["tres"].outputs[0].traceback == ["Error en la línea 1:", "  1 / 0"]
    namespace = {}
    exec(cells["reto-laboratorio"].source, namespace)
    assert namespace["semilla"] == 5 and namespace["student_extension"] == TRICKY
    assert notebook.metadata["dpdeck"]["edited"] == 4


def test_an_untouched_notebook_stays_as_shipped():
    shipped = shipped_notebook()
    scenario = "return m.notebookWithEdits(%s, {sourceOf: () => null, savedOf: () => null, answerOf: () => null});" \
               % json.dumps(shipped)
    notebook = run_module(NOTEBOOKS_JS, scenario)
    assert notebook["cells"] == shipped["cells"]
    assert notebook["metadata"]["dpdeck"]["edited"] == 0


def test_the_install_note_names_the_wheel_at_the_decks_address():
    scenario = ("return m.notebookWithEdits(%s, {sourceOf: () => null, savedOf: () => null, answerOf: () => null, "
                "deckUrl: 'http://10.0.0.5:8000/clase/'});" % json.dumps(shipped_notebook()))
    notebook = run_module(NOTEBOOKS_JS, scenario)
    install = next(cell for cell in notebook["cells"] if cell["id"] == INSTALL_CELL)
    assert f"`pip install http://10.0.0.5:8000/clase/{WHEEL}`" in install["source"]
    assert f"`pip install {WHEEL}`" in "".join(shipped_notebook()["cells"][1]["source"])
    assert notebook["metadata"]["dpdeck"]["edited"] == 0


def test_a_slide_belongs_to_the_chapter_of_its_file():
    scenario = """
      const index = {chapters: [{name: '01-a', files: ['00-portada.md', '01-a.md']}, {name: '02-b', files: ['02-b.md']}]};
      return ['00-portada.md', '02-b.md', '09-x.md'].map((file) => (m.chapterOf(index, file) || {name: null}).name);
    """
    assert run_module(NOTEBOOKS_JS, scenario) == ["01-a", "02-b", None]


# ------------------------------------------------------------ savedoutputs.js


def saved_outputs_scenario(body: str, *, quota="Infinity", figure_chars=1000, total_chars=5000):
    scenario = """
      window.localStorage = fakeStorage(%s);
      const store = new m.SavedOutputs('/mazo/', {figureChars: %d, totalChars: %d});
      const bytes = (n) => new Uint8Array(n).map((_, i) => i %% 251);
      const text = (t) => ({status: 'done', outputs: [{type: 'stream', name: 'stdout', text: t}], elapsedMs: 12});
      const withFigure = (n) => ({status: 'done', elapsedMs: 30, outputs: [
        {type: 'stream', name: 'stdout', text: 'con figura\\n'},
        {type: 'figure', format: 'png', width: 2, height: 2, data: bytes(n)}]});
      const keys = () => [...window.localStorage.items.keys()].sort();
      %s
    """ % (quota, figure_chars, total_chars, body)
    return run_module(SAVED_OUTPUTS_JS, scenario)


def test_a_run_is_saved_with_its_figure_and_read_back():
    result = saved_outputs_scenario("""
      const outcome = store.save('dos', 'print(2)', withFigure(300));
      const entry = store.load('dos');
      return {outcome, keys: keys(), source: entry.source, elapsed: entry.elapsedMs,
              figure: Array.from(m.base64ToBytes(entry.outputs[1].data)).slice(0, 5), n: m.base64ToBytes(entry.outputs[1].data).length};
    """)
    assert result == {"outcome": {"saved": True, "figuresDropped": 0}, "keys": ["dpdeck:outputs:/mazo/:dos"],
                      "source": "print(2)", "elapsed": 30, "figure": [0, 1, 2, 3, 4], "n": 300}


def test_figures_over_the_cells_budget_are_left_out_and_the_text_kept():
    result = saved_outputs_scenario("""
      const outcome = store.save('dos', 'print(2)', withFigure(3000));   // 4000 base64 characters > 1000
      const entry = store.load('dos');
      return {outcome, types: entry.outputs.map((o) => o.type), dropped: entry.figuresDropped};
    """)
    assert result == {"outcome": {"saved": True, "figuresDropped": 1}, "types": ["stream"], "dropped": 1}


def test_the_decks_budget_lets_the_oldest_saved_outputs_go_first():
    result = saved_outputs_scenario("""
      const long = (n) => text('x'.repeat(n));
      store.save('a', 'a', long(1500));
      store.save('b', 'b', long(1500));
      store.save('c', 'c', long(1500));   // a + b + c ≈ 5000: the oldest goes
      return keys();
    """, total_chars=5000)
    assert result == ["dpdeck:outputs:/mazo/:b", "dpdeck:outputs:/mazo/:c"]


def test_a_full_browser_drops_figures_then_older_outputs_then_gives_up():
    result = saved_outputs_scenario("""
      window.localStorage.setItem('dpdeck:edits:/mazo/:dos', 'x'.repeat(100));   // the edits come first
      const first = store.save('viejo', 'v', text('y'.repeat(200)));
      // Room for the text of 'dos' but not its figure: saved without it.
      const withoutFigure = store.save('dos', 'print(2)', withFigure(600));
      const afterFigure = keys();
      // Room only if the older output goes: it goes.
      const evicted = store.save('nuevo', 'n', text('z'.repeat(450)));
      const afterEviction = keys();
      // No room at all: nothing is saved, and nothing saved before is broken.
      const none = store.save('enorme', 'e', text('w'.repeat(5000)));
      return {first, withoutFigure, afterFigure, evicted, afterEviction, none, edit: window.localStorage.getItem('dpdeck:edits:/mazo/:dos').length};
    """, quota=1100, figure_chars=100000, total_chars=100000)
    assert result["first"] == {"saved": True, "figuresDropped": 0}
    assert result["withoutFigure"] == {"saved": True, "figuresDropped": 1}
    assert "dpdeck:outputs:/mazo/:dos" in result["afterFigure"]
    assert result["evicted"] == {"saved": True, "figuresDropped": 0}
    assert "dpdeck:outputs:/mazo/:nuevo" in result["afterEviction"]
    assert "dpdeck:outputs:/mazo/:viejo" not in result["afterEviction"]
    assert result["none"] == {"saved": False, "figuresDropped": 0}
    assert result["edit"] == 100


def test_a_damaged_entry_reads_as_nothing():
    result = saved_outputs_scenario("""
      window.localStorage.setItem('dpdeck:outputs:/mazo/:a', '{no es json');
      window.localStorage.setItem('dpdeck:outputs:/mazo/:b', JSON.stringify({version: 99, outputs: []}));
      return [store.load('a'), store.load('b'), store.load('c')];
    """)
    assert result == [None, None, None]
