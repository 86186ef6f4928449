"""The built deck in Chromium, Firefox ESR and WebKit, each served with and without COOP/COEP.

One visit of a student, the same checks in every engine (engine_drivers.py
gives each engine the same verbs): the first slide painted in the deck's own
letter, moving with the keyboard and the «next» control, KaTeX's formulas, a
pre-rendered figure, «Python listo» on a first visit, a text cell and a figure
cell run with ▶ (their live output the same as the build's), an endless loop
stopped with ■ and Python back, an edit typed with real keys, the deck and
Python kept for use offline; then a second visit made with the server stopped
(`location.reload()`): the page from the service worker, «Python listo» again,
the edit still there and a cell run offline.

Each engine × mode is one test (pytest-xdist runs them beside the other
suites). A check that fails does not hide the others: every check runs unless
one it depends on failed, the test fails listing each failure, and the run's
timings, findings and a screenshot of each failure are left in
test-artifacts/engines/<engine>-<mode>/.
"""

from __future__ import annotations

import io
import json
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from PIL import Image

from engine_deck import BOOT_SECONDS, OFFLINE_SECONDS, PAGE_SECONDS, CheckFailed, EngineDeck
from engine_drivers import ENGINES, DriverError, open_driver

pytestmark = [pytest.mark.engines,
              # Selenium's own WebKitGTK driver still builds its connection the old way.
              pytest.mark.filterwarnings("ignore:setting remote_server_addr:DeprecationWarning")]

MODES = {"coop-coep": True, "sin-aislar": False}
ROOT = Path(__file__).resolve().parents[2]

TEXT_CELL = "censo"
FIGURE_CELL = "densidades-laplace"
LOOP_CELL = "ataque-karen"
EDITED_CELL = "tamano-e-epsilon"
LOOP_SOURCE = "print('empieza')\nn = 0\nwhile True:\n    n += 1\n"
LOOP_STARTED = "empieza"

# ?autorun=0: Python does not rerun the cells of the slide on screen when it becomes ready, so each
# cell runs when a check clicks ▶ and not when a boot happens to end on its slide.
QUERY = "?autorun=0"

# The first slide is painted when at least this share of the window differs from its background:
# half of what the three engines show (5.7 to 6.2 %); of that, the side bar, the figure and the
# corners are 2.0 to 2.1 % and the text the rest, so a slide drawn without its text stays under it.
INK_SHARE = 0.03
INK_DISTANCE = 96   # |ΔR| + |ΔG| + |ΔB| from the background colour that counts as ink

FIRST_SLIDE = """
() => {
  const slide = Reveal.getCurrentSlide();
  const heading = slide && slide.querySelector('h1');
  if (!heading) return null;
  const box = heading.getBoundingClientRect();
  return {index: Reveal.getIndices().h, text: heading.textContent.trim(), width: box.width, height: box.height,
          inView: box.top >= 0 && box.left >= 0 && box.bottom <= innerHeight && box.right <= innerWidth};
}
"""
# The families whose faces have loaded, once the page's fonts have settled.
LOADED_FONTS = """
() => document.fonts.ready.then(() =>
  Array.from(new Set(Array.from(document.fonts).filter((face) => face.status === 'loaded')
    .map((face) => face.family.replace(/["']/g, '')))))
"""
FIRST_DISPLAY_FORMULA = "() => document.querySelector('.slides section .katex-display')"
KATEX_SHOWN = """
() => {
  const slide = Reveal.getCurrentSlide();
  const display = slide.querySelector('.katex-display .katex-html');
  if (!display) return null;
  const box = display.getBoundingClientRect();
  const loaded = (family) => Array.from(document.fonts).some(
    (face) => face.family.replace(/["']/g, '') === family && face.status === 'loaded');
  const fonts = ['KaTeX_Main', 'KaTeX_Math'].filter(loaded);
  return box.width > 100 && box.height > 20 && fonts.length === 2
    ? {formulas: slide.querySelectorAll('.katex').length, width: box.width, height: box.height, fonts} : null;
}
"""
PRERENDERED_FIGURE = """
(selector) => {
  const output = document.querySelector(selector + ' .cell-output');
  const image = output.querySelector('img.out-figure');
  if (!image || !image.complete || image.naturalWidth === 0) return null;
  const box = image.getBoundingClientRect();
  return box.width > 0 ? {origin: output.dataset.origin, width: image.naturalWidth, shownWidth: box.width} : null;
}
"""
CONTROLLED = "() => navigator.serviceWorker.controller !== null"
OFFLINE_READY = """
() => document.documentElement.dataset.offline === 'ready' && document.documentElement.dataset.offlinePython === 'ready'
"""
# The first boot asked to keep Python on this device (where the engine has storage for it): wait for
# the answer, so the second visit reads that copy. WebKitGTK has no such storage and never asks.
COPIES_SETTLED = """
() => { const python = Reveal.getPlugin('dpdeck').python;
        const timings = python.timings || {};
        const asked = Boolean((timings.snapshot && timings.snapshot.keep) || (timings.packagesCopy && timings.packagesCopy.keep));
        return !asked || python.stats.snapshotKept !== null; }
"""
# Animations on the page that run for longer than LASTING_MS (or for ever), or null where the engine cannot
# list them. Each frame of one costs the page's thread, and in WebKit a repaint of the page: a core taken
# from Python's boot for as long as it lasts.
LASTING_MS = 5000
LASTING_ANIMATIONS = """
(lastingMs) => typeof document.getAnimations !== 'function' ? null : document.getAnimations()
  .filter((animation) => animation.playState === 'running' && animation.effect
    && animation.effect.getComputedTiming().endTime > lastingMs)
  .map((animation) => `${animation.animationName || animation.transitionProperty || 'animación'} en `
    + `${animation.effect.target ? animation.effect.target.className || animation.effect.target.tagName : '?'}`)
"""
# Endless animations on the page that draw a new frame more often than every FRAME_MS, or null where the
# engine cannot list them: one runs beside every running cell, and each of its frames is a repaint.
FRAME_MS = 100
# How long a stopped Python's worker may take to end once its successor has run a cell.
STOPPED_WORKER_SECONDS = 10
QUICK_ENDLESS_ANIMATIONS = """
(frameMs) => typeof document.getAnimations !== 'function' ? null : document.getAnimations()
  .filter((animation) => animation.playState === 'running' && animation.effect
    && animation.effect.getComputedTiming().endTime === Infinity)
  .map((animation) => {
    const effect = animation.effect;
    const timing = getComputedStyle(effect.target, effect.pseudoElement || null).animationTimingFunction;
    const steps = /steps\\((\\d+)/.exec(timing);
    return {name: animation.animationName || 'animación', timing,
            frameMs: steps ? effect.getComputedTiming().duration / Number(steps[1]) : 0};
  })
  .filter((found) => found.frameMs < frameMs)
"""
# Every Web Lock the deck holds is a Python worker's life lock (python.js): each worker holds one while it
# lives. At most one held: no stopped Python's worker is left running (in JavaScriptCore a worker ends only
# when its code calls out to JavaScript; a Python loop that never did went on spinning a core after ■).
ONE_PYTHON_WORKER = """
() => !navigator.locks ? 'sin Web Locks'
  : navigator.locks.query().then((found) => found.held.length <= 1 ? String(found.held.length) : null)
"""
ENGINE_FEATURES = """
() => ({crossOriginIsolated: window.crossOriginIsolated === true, sharedArrayBuffer: typeof SharedArrayBuffer === 'function',
        storage: Boolean(navigator.storage && navigator.storage.getDirectory), userAgent: navigator.userAgent})
"""


def measure_ink(png: bytes) -> float:
    """Share of the screenshot's pixels that differ from its most common colour by INK_DISTANCE or more."""
    image = Image.open(io.BytesIO(png)).convert("RGB")
    pixels = image.width * image.height
    counts = image.getcolors(maxcolors=pixels)
    background = max(counts)[1]
    ink = sum(count for count, colour in counts
              if sum(abs(a - b) for a, b in zip(colour, background)) >= INK_DISTANCE)
    return ink / pixels


def expect(condition, message: str) -> None:
    """A check's claim: CheckFailed with `message` (what was seen instead) when it does not hold."""
    if not condition:
        raise CheckFailed(message)


def text_blocks(output: dict) -> list:
    """An output's text blocks in order ([kind, text]), figures left out."""
    return [block for block in output["blocks"] if block[0] != "figure"]


@dataclass
class Outcome:
    name: str
    ok: bool | None          # None: not run, a check it needs failed
    detail: str = ""
    seconds: float = 0.0


@dataclass
class EngineRun:
    """One engine × mode: its driver, the deck, the server, and what the checks found."""

    engine: str
    mode: str
    deck: EngineDeck
    server: object
    artifacts: Path
    outcomes: list[Outcome] = field(default_factory=list)
    facts: dict = field(default_factory=dict)
    prerendered: dict = field(default_factory=dict)

    @property
    def url(self) -> str:
        return self.server.url + QUERY

    def passed(self, name: str) -> bool:
        return any(outcome.name == name and outcome.ok for outcome in self.outcomes)

    def check(self, name: str, function, needs: tuple[str, ...] = ()) -> None:
        """Run one check; record whether it held, and why not (with a screenshot)."""
        failed = [need for need in needs if not self.passed(need)]
        if failed:
            self.outcomes.append(Outcome(name, None, f"no se comprobó: falló «{failed[0]}»"))
            return
        started = time.monotonic()
        try:
            detail = function(self) or ""
            self.outcomes.append(Outcome(name, True, detail, time.monotonic() - started))
        except (CheckFailed, DriverError, AssertionError) as error:
            self.outcomes.append(Outcome(name, False, str(error) or type(error).__name__,
                                         time.monotonic() - started))
            self.save_screenshot(f"{len(self.outcomes):02d}-fallo")
        except Exception as error:  # a check's own bug is reported like a failure, with its traceback
            self.outcomes.append(Outcome(name, False, "".join(traceback.format_exception_only(error)).strip(),
                                         time.monotonic() - started))
            self.save_screenshot(f"{len(self.outcomes):02d}-fallo")

    def save_screenshot(self, name: str) -> bytes | None:
        try:
            png = self.deck.driver.screenshot()
        except DriverError:
            return None
        (self.artifacts / f"{name}.png").write_bytes(png)
        return png

    def report(self) -> str:
        lines = [f"{self.engine} · {self.mode}"]
        for outcome in self.outcomes:
            mark = {True: "✓", False: "✗", None: "·"}[outcome.ok]
            lines.append(f"  {mark} {outcome.name} ({outcome.seconds:.1f} s){': ' + outcome.detail if outcome.detail else ''}")
        return "\n".join(lines)


# ---------------------------------------------------------------------------
# The checks, in the order a student meets them
# ---------------------------------------------------------------------------

def check_first_slide(run: EngineRun) -> str:
    deck = run.deck
    deck.open(run.url)
    heading = deck.wait_for(FIRST_SLIDE, seconds=PAGE_SECONDS, what="el título de la primera diapositiva")
    expect(heading["index"] == 0 and heading["text"] and heading["inView"], f"el título no está a la vista: {heading}")
    fonts = deck.evaluate(LOADED_FONTS)
    expect("Arimo" in fonts, f"la letra del mazo (Arimo) no cargó: {fonts}")
    deck.next_frame()
    png = run.save_screenshot("01-primera-diapositiva")
    expect(png is not None, "sin captura de la ventana")
    ink = measure_ink(png)
    run.facts["firstSlideInk"] = round(ink, 4)
    expect(ink >= INK_SHARE, f"la ventana está casi vacía: {ink:.2%} de tinta (se esperaba ≥ {INK_SHARE:.1%})")
    run.facts["features"] = deck.evaluate(ENGINE_FEATURES)
    return f"«{heading['text']}», {ink:.1%} de tinta, letras {', '.join(sorted(fonts))}"


def check_nothing_moves_for_long(run: EngineRun) -> str:
    lasting = run.deck.evaluate(LASTING_ANIMATIONS, LASTING_MS)
    expect(lasting is not None, "este motor no lista las animaciones de la página (document.getAnimations)")
    expect(lasting == [], f"animaciones de más de {LASTING_MS / 1000:g} s en la página recién abierta: {lasting}")
    return "ninguna animación larga"


def check_navigation(run: EngineRun) -> str:
    deck = run.deck
    start = deck.slide
    deck.driver.press("ArrowRight")
    deck.wait_for_slide(start + 1, "→ lleva a la diapositiva siguiente")
    deck.driver.click(".reveal .controls .navigate-right")
    deck.wait_for_slide(start + 2, "el control «siguiente» lleva a la diapositiva siguiente")
    return f"{start} → {start + 1} → {start + 2}"


def check_katex(run: EngineRun) -> str:
    deck = run.deck
    deck.show(".slides section .katex-display")
    shown = deck.wait_for(KATEX_SHOWN, seconds=PAGE_SECONDS, what="una fórmula de KaTeX con sus letras")
    return f"{shown['formulas']} fórmulas; la destacada {shown['width']:.0f}×{shown['height']:.0f} px"


def check_prerendered_figure(run: EngineRun) -> str:
    deck = run.deck
    selector = deck.cell_selector(FIGURE_CELL)
    deck.show(selector)
    figure = deck.wait_for(PRERENDERED_FIGURE, selector, seconds=PAGE_SECONDS, what="la figura pre-calculada")
    expect(figure["origin"] == "prerendered", f"la figura no es la pre-calculada: {figure}")
    # What the build computed, to compare with what this engine's Python computes.
    for cell_id in (TEXT_CELL, FIGURE_CELL):
        run.prerendered[cell_id] = deck.read_output(cell_id)
    return f"{figure['width']} px de ancho"


def check_python_first_visit(run: EngineRun) -> str:
    python = run.deck.wait_for_python("«Python listo» en la primera visita")
    run.facts["firstVisit"] = python["timings"]
    snapshot = python["timings"].get("snapshot") or {}
    return f"{python['timings'].get('readyAtMs', 0) / 1000:.1f} s; instantánea: {snapshot.get('used')} ({snapshot.get('source')})"


def assert_same_text(run: EngineRun, cell_id: str, output: dict) -> None:
    """The text this engine's Python printed is the build's (native Python's), block by block."""
    expected = text_blocks(run.prerendered[cell_id])
    expect(text_blocks(output) == expected, f"{cell_id}: salida {text_blocks(output)} en vez de {expected}")


def check_text_cell(run: EngineRun) -> str:
    output = run.deck.run(TEXT_CELL)
    expect(output["status"] == "done" and output["origin"] == "live", f"la celda terminó así: {output}")
    assert_same_text(run, TEXT_CELL, output)
    return f"{len(output['blocks'])} bloques, iguales a los de la construcción"


def check_figure_cell(run: EngineRun) -> str:
    deck = run.deck
    output = deck.run(FIGURE_CELL)
    errors = [text for kind, text in text_blocks(output) if kind == "out-error"]
    expect(output["status"] == "done" and not errors, f"la celda terminó en «{output['status']}»: {errors or output}")
    expect(output["origin"] == "live", f"la salida no es la calculada en el navegador: {output}")
    figures = [loaded for kind, loaded in output["blocks"] if kind == "figure"]
    expect(len(figures) == output["declared"] and all(figures),
           f"figuras cargadas {figures}; la celda declara {output['declared']}")
    assert_same_text(run, FIGURE_CELL, output)
    return f"{len(figures)} figura dibujada en el navegador"


def check_loop_stopped(run: EngineRun) -> str:
    """■ stops an endless loop and Python comes back (by interrupting it or by starting anew)."""
    deck = run.deck
    deck.show_cell(LOOP_CELL)
    deck.set_source(LOOP_CELL, LOOP_SOURCE)
    boots = deck.python["stats"]["boots"]
    before = deck.click_run(LOOP_CELL)
    deck.wait_for_text(LOOP_CELL, LOOP_STARTED)
    quick = deck.evaluate(QUICK_ENDLESS_ANIMATIONS, FRAME_MS)
    stopped_at = time.monotonic()
    deck.driver.click(f"{deck.cell_selector(LOOP_CELL)} [data-action=stop]")
    status = deck.wait_for_run(LOOP_CELL, before)
    expect(status == "stopped", f"tras ■ la celda está en «{status}»")
    stop_seconds = time.monotonic() - stopped_at
    deck.wait_for_python("Python de nuevo listo tras ■")
    back_seconds = time.monotonic() - stopped_at
    restarted = deck.python["stats"]["boots"] > boots
    output = deck.run(TEXT_CELL)
    expect(output["status"] == "done", f"tras ■, {TEXT_CELL} terminó en «{output['status']}»")
    workers = deck.wait_for(ONE_PYTHON_WORKER, seconds=STOPPED_WORKER_SECONDS,
                            what="el fin del worker del Python detenido (sigue vivo: su bucle ocupa un núcleo)")
    run.facts["stop"] = {"stoppedSeconds": round(stop_seconds, 2), "readySeconds": round(back_seconds, 2),
                         "restarted": restarted, "workersAlive": workers}
    # Judged once the loop is stopped, so that a failure here leaves Python free for the checks after it.
    expect(quick is not None, "este motor no lista las animaciones de la página (document.getAnimations)")
    expect(quick == [], f"mientras corre la celda, animaciones sin fin de más de {1000 // FRAME_MS} cuadros por "
                        f"segundo: {quick}")
    how = "reiniciando Python" if restarted else "interrumpiendo Python"
    return f"detenido en {stop_seconds:.2f} s ({how}); Python listo a los {back_seconds:.1f} s"


def typed_marker(run: EngineRun) -> str:
    return f"# editado en {run.engine}"


def check_edit(run: EngineRun) -> str:
    """An edit typed with real keys (click, Ctrl+End, Enter, text) is saved in the browser."""
    deck = run.deck
    selector = deck.show_cell(EDITED_CELL)
    deck.driver.click(f"{selector} .cm-content")
    deck.driver.press("Control+End", "Enter")
    marker = typed_marker(run)
    deck.driver.type(marker)
    deck.wait_for(f"(id) => Reveal.getPlugin('dpdeck').cell(id).source.trimEnd().endsWith({json.dumps(marker)})",
                  EDITED_CELL, seconds=PAGE_SECONDS, what="el texto tecleado en el editor")
    deck.wait_for("(id) => { for (let i = 0; i < localStorage.length; i++) { const key = localStorage.key(i);"
                  " if (key.startsWith('dpdeck:edits:') && key.endsWith(':' + id)) return true; } return false; }",
                  EDITED_CELL, seconds=PAGE_SECONDS, what="la edición guardada en el navegador")
    return "tecleada y guardada"


def check_kept_offline(run: EngineRun) -> str:
    """The service worker keeps the deck and Python's files (and, where the engine has room, the
    device keeps Python's memory: the second visit reads it instead of downloading it)."""
    deck = run.deck
    deck.wait_for(OFFLINE_READY, seconds=OFFLINE_SECONDS, what="el mazo y Python guardados para usar sin conexión")
    # A first visit's page need not be controlled yet (WebKit's is not); the next one is.
    run.facts["firstVisitControlled"] = deck.evaluate(CONTROLLED)
    deck.wait_for(COPIES_SETTLED, seconds=BOOT_SECONDS, what="la copia de Python en el dispositivo")
    kept = deck.python["stats"]["snapshotKept"]
    run.facts["keptOnDevice"] = kept
    return "mazo y Python guardados" + ("; memoria de Python guardada en el dispositivo" if kept else "")


def check_second_visit_offline(run: EngineRun) -> str:
    """The second visit is made with the server stopped: the page, Python and its files come from this browser."""
    deck = run.deck
    run.server.stop()
    deck.reload()
    expect(deck.evaluate(CONTROLLED), "la página recargada no viene del service worker")
    python = deck.wait_for_python("«Python listo» en la segunda visita, sin conexión")
    run.facts["secondVisit"] = python["timings"]
    snapshot = python["timings"].get("snapshot") or {}
    return f"{python['timings'].get('readyAtMs', 0) / 1000:.1f} s; instantánea: {snapshot.get('used')} ({snapshot.get('source')})"


def check_edit_kept(run: EngineRun) -> str:
    deck = run.deck
    marker = typed_marker(run)
    source = deck.source(EDITED_CELL)
    expect(source.rstrip().endswith(marker), f"tras recargar, la celda dice: …{source[-80:]!r}")
    expect(deck.read_output(EDITED_CELL)["edited"], "la celda no se muestra como editada")
    return "la edición sigue tras recargar"


def check_cell_offline(run: EngineRun) -> str:
    output = run.deck.run(TEXT_CELL)
    expect(output["status"] == "done", f"sin conexión, {TEXT_CELL} terminó en «{output['status']}»")
    assert_same_text(run, TEXT_CELL, output)
    return "la celda de texto funciona sin conexión"


FIRST = "primera diapositiva pintada"
PYTHON_FIRST = "Python listo, primera visita"
EDIT = "edición con el teclado"
KEPT = "guardado para usar sin conexión"
SECOND = "segunda visita sin conexión: Python listo"
PRERENDERED = "figura pre-calculada"

SCENARIO = (
    (FIRST, check_first_slide, ()),
    # Before the first move, which ends reveal's own hint.
    ("nada se mueve sin fin", check_nothing_moves_for_long, (FIRST,)),
    ("navegación (→ y el control «siguiente»)", check_navigation, (FIRST,)),
    ("fórmulas de KaTeX", check_katex, (FIRST,)),
    (PRERENDERED, check_prerendered_figure, (FIRST,)),
    (PYTHON_FIRST, check_python_first_visit, (FIRST,)),
    ("celda de texto", check_text_cell, (PYTHON_FIRST, PRERENDERED)),
    ("celda con figura", check_figure_cell, (PYTHON_FIRST, PRERENDERED)),
    ("bucle infinito detenido con ■", check_loop_stopped, (PYTHON_FIRST,)),
    (EDIT, check_edit, (FIRST,)),
    (KEPT, check_kept_offline, (PYTHON_FIRST,)),
    (SECOND, check_second_visit_offline, (KEPT,)),
    ("edición conservada al recargar", check_edit_kept, (EDIT, SECOND)),
    ("celda sin conexión", check_cell_offline, (SECOND, PRERENDERED)),
)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("engine", ENGINES)
def test_deck_in_engine(engine, mode, deck_server, artifacts_dir, request):
    artifacts = artifacts_dir / "engines" / f"{engine}-{mode}"
    artifacts.mkdir(parents=True, exist_ok=True)
    for old in artifacts.glob("*"):
        old.unlink()
    server = deck_server(isolated=MODES[mode])
    started = time.monotonic()
    chromium = request.getfixturevalue("browser") if engine == "chromium" else None
    driver = open_driver(engine, root=ROOT, chromium_browser=chromium)
    run = EngineRun(engine, mode, EngineDeck(driver), server, artifacts)
    run.facts["version"] = driver.version
    run.facts["startSeconds"] = round(time.monotonic() - started, 2)
    try:
        for name, function, needs in SCENARIO:
            run.check(name, function, needs)
        try:
            run.facts["consoleErrors"] = driver.take_errors()
        except DriverError as error:
            run.facts["consoleErrors"] = [f"(no se pudieron leer: {error})"]
    finally:
        driver.close()
        run.facts["seconds"] = round(time.monotonic() - started, 1)
        (artifacts / "result.json").write_text(json.dumps(
            {"engine": engine, "mode": mode, "facts": run.facts,
             "checks": [outcome.__dict__ for outcome in run.outcomes]}, ensure_ascii=False, indent=1))
    print("\n" + run.report())
    failures = [outcome for outcome in run.outcomes if outcome.ok is not True]
    assert not failures, f"{len(failures)} de {len(run.outcomes)} comprobaciones fallaron ({artifacts}):\n" + run.report()
