"""Benchmark across engines: the deck's «Python listo» in WebKit against Chromium, on one machine.

    python3 build.py bench --engine webkit [--rounds N] [--compare DIR ...]

Safari's engine is measured in WebKitGTK's MiniBrowser (Debian's
libwebkit2gtk-4.1-0), driven by WebKitWebDriver through Selenium in an Xvfb
screen of its own; Chromium is the benchmark's usual one (Playwright). Each
round gives each engine a fresh profile and, in it, a first visit and a second
one, engines alternating so that drift in the machine's load hits both alike.
Both are measured the same way, inside the page: «Python listo» is the deck's
own mark (`Reveal.getPlugin("dpdeck").python.timings.readyAtMs`, ms since the
navigation started); then ▶ on the first figure cell and the time until its
figure is on screen, which also says whether a figure can be drawn at all.
Before the second visit, the first waits until the deck's service worker and
the worker's copies on the device are done, as `bench` does.

The table gives medians, and WebKit's time over Chromium's against the target
(at most twice, first and second visit). Measurements to read, never
assertions: nothing here fails on a slow machine.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

from .browser import (
    CHROMIUM_ARGS,
    MISSING_BROWSER_MESSAGE,
    WEBKIT_DRIVER,
    XVFB,
    find_chromium,
    find_minibrowser,
    start_xvfb,
    webkit_environment,
)
from .errors import BuildError

ENGINES = ("chromium", "webkit")
# WebKit's «Python listo» over Chromium's, first and second visit: the target.
TARGET_RATIO = 2.0
VIEWPORT = (1280, 720)
VISIT_SECONDS = 240
# Before the second visit: the service worker's offline copy and the worker's
# device copies (bench.OFFLINE_WAIT_MS), then LINGER_MS for the browser's caches.
SETTLE_SECONDS = 60
LINGER_SECONDS = 5

MISSING_WEBKIT_MESSAGE = (
    "para medir WebKit hacen falta WebKitWebDriver, MiniBrowser y Xvfb:\n"
    "    apt-get install webkit2gtk-driver xvfb xauth\n"
    "y Selenium en .venv (requirements.lock).")

# One visit, the same in every engine: called as an async function with `done`
# (WebDriver's callback convention); answers {state, readyAtMs, figureMs,
# figures, status, notice, timings, stats}.
VISIT_SCRIPT = r"""
const done = arguments[arguments.length - 1];
const frame = () => new Promise((resolve) => requestAnimationFrame(() => resolve()));
const waitFor = (check) => new Promise((resolve) => {
  const found = check();
  if (found) return resolve(found);
  const observer = new MutationObserver(() => {
    const value = check();
    if (value) { observer.disconnect(); resolve(value); }
  });
  observer.observe(document.documentElement, {attributes: true, childList: true, subtree: true});
});
(async () => {
  const cell = document.querySelector('.cell[data-figures]:not([data-figures="0"])');
  while (!(window.Reveal && Reveal.isReady && Reveal.isReady())) await frame();
  const indices = Reveal.getIndices(cell.closest('.slides > section'));
  Reveal.slide(indices.h, indices.v);
  const state = await waitFor(() => ['ready', 'error'].includes(document.documentElement.dataset.python)
    && document.documentElement.dataset.python);
  const python = () => JSON.parse(JSON.stringify(Reveal.getPlugin('dpdeck').python));
  const result = {state, readyAtMs: (python().timings || {}).readyAtMs || null};
  if (state !== 'ready') {
    const chip = document.querySelector('.python-status');
    result.error = chip ? chip.textContent.trim() : 'Python no arrancó';
  }
  if (state === 'ready') {
    const button = await waitFor(() => cell.querySelector('[data-action=run]'));
    const runs = Number(cell.dataset.runs || 0);
    const clicked = performance.now();
    button.click();
    await waitFor(() => Number(cell.dataset.runs || 0) > runs);
    const images = cell.querySelectorAll('.cell-output[data-origin=live] img');
    for (const image of images) if (!image.complete) await image.decode().catch(() => {});
    await frame();
    await frame();
    result.figureMs = performance.now() - clicked;
    result.figures = images.length;
    result.status = cell.dataset.status;
    const notice = cell.querySelector('.cell-output .out-notice');
    result.notice = notice ? notice.textContent : null;
  }
  const last = python();
  result.timings = last.timings;
  result.stats = last.stats;
  return result;
})().then(done, (error) => done({state: 'error', error: String(error && error.message || error)}));
"""

# Whether the first visit is done with what it leaves for the second: the
# offline copy and, when the worker was to keep copies on the device, its answer.
SETTLED_SCRIPT = r"""
const root = document.documentElement;
const python = Reveal.getPlugin('dpdeck').python;
const timings = python.timings || {};
const keeping = (timings.snapshot && timings.snapshot.keep) || (timings.packagesCopy && timings.packagesCopy.keep);
return root.dataset.offline === 'ready' && root.dataset.offlinePython === 'ready'
  && (!keeping || python.stats.snapshotKept !== null);
"""


# ---------------------------------------------------------------------------
# The engines
# ---------------------------------------------------------------------------

class ChromiumEngine:
    """The benchmark's Chromium (Playwright), one persistent profile per round."""

    name = "chromium"

    def __init__(self, playwright):
        self.playwright = playwright

    def start(self) -> None:
        self.profile = Path(tempfile.mkdtemp(prefix="dpdeck-bench-engines-"))
        self.context = self.playwright.chromium.launch_persistent_context(
            str(self.profile), headless=True, args=CHROMIUM_ARGS, executable_path=str(find_chromium()),
            viewport={"width": VIEWPORT[0], "height": VIEWPORT[1]})
        self.page = None

    def open(self, url: str) -> None:
        if self.page:
            self.page.close()
        self.page = self.context.new_page()
        self.page.goto(url)

    def run(self, script: str):
        """`script` as a WebDriver function body: `arguments` ends with the callback `done`; a `return` is kept."""
        return self.page.evaluate("body => new Promise((done) => { const value = (new Function(body)).call(null, done);"
                                  " if (value !== undefined) done(value); })", script)

    def stop(self) -> None:
        self.context.close()
        shutil.rmtree(self.profile, ignore_errors=True)


class WebKitEngine:
    """MiniBrowser through WebKitWebDriver (Selenium) in an Xvfb screen; a new session (profile) per round."""

    name = "webkit"

    def __init__(self):
        from selenium import webdriver

        self.webdriver = webdriver
        self.xvfb, self.display = start_xvfb("1400x900x24")

    def start(self) -> None:
        options = self.webdriver.WebKitGTKOptions()
        options.binary_location = str(find_minibrowser())
        options.add_argument("--automation")
        service = self.webdriver.WebKitGTKService(executable_path=str(WEBKIT_DRIVER),
                                                  env=webkit_environment(self.display))
        self.driver = self.webdriver.WebKitGTK(options=options, service=service)
        self.driver.set_window_size(*VIEWPORT)
        self.driver.set_script_timeout(VISIT_SECONDS)

    def open(self, url: str) -> None:
        self.driver.get(url)

    def run(self, script: str):
        if "arguments[arguments.length - 1]" in script:
            return self.driver.execute_async_script(script)
        return self.driver.execute_script(script)

    def stop(self) -> None:
        self.driver.quit()

    def close(self) -> None:
        self.xvfb.terminate()
        self.xvfb.wait()


# ---------------------------------------------------------------------------
# Rounds
# ---------------------------------------------------------------------------

def wait_until_settled(engine) -> bool:
    deadline = time.monotonic() + SETTLE_SECONDS
    while time.monotonic() < deadline:
        if engine.run(SETTLED_SCRIPT):
            return True
        time.sleep(0.25)
    return False


def run_round(engine, url: str) -> dict:
    """A fresh profile: a first visit, its copies settled, and a second visit in the same profile."""
    engine.start()
    try:
        engine.open(url)
        cold = engine.run(VISIT_SCRIPT)
        cold["settled"] = wait_until_settled(engine)
        time.sleep(LINGER_SECONDS)
        engine.open(url)
        warm = engine.run(VISIT_SCRIPT)
        return {"cold": cold, "warm": warm}
    finally:
        engine.stop()


# ---------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------

def describe_visit(visit: dict) -> str:
    """One line: «listo», the figure, where the snapshot and the packages came from."""
    timings = visit.get("timings") or {}
    snapshot = timings.get("snapshot") or {}
    source = snapshot.get("source") if snapshot.get("used") else "sin instantánea"
    packages = (timings.get("packagesCopy") or {}).get("source") or "—"
    figure = (f"figura {visit['figureMs'] / 1000:.2f} s ({visit.get('status')}, {visit.get('figures')})"
              if visit.get("figureMs") is not None else f"figura — ({visit.get('error') or visit.get('state')})")
    ready = visit.get("readyAtMs")
    return (f"listo {'—' if ready is None else f'{ready / 1000:.2f} s'}, {figure}, instantánea {source},"
            f" paquetes {packages}, copias en {timings.get('store') or '—'}{describe_boot_steps(timings)}")


# The boot's stages and the restore's steps a visit line names (ms): worker.js's timings,
# snapshot.js's restore steps and the boot's marks (ms since the worker's boot started).
BOOT_STEPS = (("runtime", "runtime.json"), ("core", "intérprete"), ("warmup", "calentamiento"))
RESTORE_STEPS = (("module", "módulo"), ("waited", "espera"), ("libraries", "bibliotecas"))
BOOT_MARKS = (("keptFoundAt", "copia hallada"), ("keptCheckedAt", "copia comprobada"),
              ("inflatedAt", "inflada"), ("librariesAt", "bibliotecas llegadas"))


def describe_boot_steps(timings: dict) -> str:
    """«; runtime.json 40 ms, intérprete 1210 ms…»: where a visit's boot spent its time, or nothing."""
    snapshot = timings.get("snapshot") or {}
    parts = []
    for found, names, form in ((timings, BOOT_STEPS, "{} {} ms"),
                               (snapshot.get("steps") or {}, RESTORE_STEPS, "{} {} ms"),
                               (snapshot.get("marks") or {}, BOOT_MARKS, "{} a {} ms")):
        parts += [form.format(label, found[key]) for key, label in names if isinstance(found.get(key), (int, float))]
    return f"; {', '.join(parts)}" if parts else ""


def summarize(sites: list[dict], results: dict) -> list[tuple]:
    """Print the tables; return the verdicts (text, ratio, met) for the first deck."""
    from .bench import median, print_table, ratio, seconds

    verdicts = []
    for site in sites:
        print(f"\nMotores ({site['label']}; ms desde que empieza la navegación, mediana de las rondas)")
        rows = []
        for visit_name, title in (("cold", "1.ª visita"), ("warm", "2.ª visita")):
            for name, getter in (("«Python listo»", lambda v: v.get("readyAtMs")),
                                 ("figura después de «listo»", lambda v: v.get("figureMs"))):
                values = {engine: median(getter(result[visit_name]) for result in results[site["label"]][engine])
                          for engine in ENGINES}
                rows.append((f"{name}, {title}", *(seconds(values[engine]) for engine in ENGINES),
                             ratio(values["webkit"], values["chromium"])))
        print_table(("", *ENGINES, "webkit/chromium"), rows)
        failed = [(engine, visit_name, result[visit_name].get("notice") or result[visit_name].get("error"))
                  for engine in ENGINES for result in results[site["label"]][engine] for visit_name in ("cold", "warm")
                  if result[visit_name].get("status") != "done" or not result[visit_name].get("figures")]
        for engine, visit_name, why in failed:
            print(f"  ! {engine}, {visit_name}: la celda de la figura no dibujó ({why})")
        if site is sites[0]:
            for visit_name, title in (("cold", "1.ª"), ("warm", "2.ª")):
                values = {engine: median(result[visit_name].get("readyAtMs")
                                         for result in results[site["label"]][engine]) for engine in ENGINES}
                value = values["webkit"] / values["chromium"] if values["webkit"] and values["chromium"] else None
                verdicts.append((f"«listo» en WebKit ≤ {TARGET_RATIO:g}× Chromium, {title} visita", value,
                                 None if value is None else value <= TARGET_RATIO))
            figures_ok = not any(engine == "webkit" for engine, _, _ in failed)
            verdicts.append(("WebKit dibuja la figura en cada visita", None, figures_ok))
    return verdicts


def check_engines() -> None:
    if find_chromium() is None:
        raise BuildError(MISSING_BROWSER_MESSAGE)
    missing = [path for path in (WEBKIT_DRIVER, XVFB) if not os.access(path, os.X_OK)]
    if missing or find_minibrowser() is None:
        raise BuildError(MISSING_WEBKIT_MESSAGE)
    try:
        import selenium  # noqa: F401
    except ImportError:
        raise BuildError(MISSING_WEBKIT_MESSAGE) from None


def run_engine_benchmark(dist: Path, options) -> int:
    """Serve dist/ (and --compare decks); alternate Chromium and WebKit visits each round; print."""
    from playwright.sync_api import sync_playwright

    from .bench import make_counting_server, print_verdicts, read_load, stop_servers, warm_server

    check_engines()
    folders = [("mazo", dist)] + [(Path(folder).resolve().name, Path(folder).resolve()) for folder in options.compare]
    sites, servers = [], []
    for label, folder in folders:
        if not (folder / "index.html").exists():
            raise BuildError(f"--compare {folder}: no hay un mazo construido ahí")
        server, _traffic, url = make_counting_server(folder)
        servers.append(server)
        warm_server(url)
        sites.append({"label": label, "url": url + "?autorun=0"})
    print(f"\nBanco de pruebas por motor: {', '.join(ENGINES)}; {options.rounds} rondas "
          f"({', '.join(site['label'] for site in sites)}). {read_load()}", flush=True)
    results = {site["label"]: {engine: [] for engine in ENGINES} for site in sites}
    webkit = None
    try:
        webkit = WebKitEngine()
        with sync_playwright() as playwright:
            engines = {"chromium": ChromiumEngine(playwright), "webkit": webkit}
            runs = [(site, engine) for site in sites for engine in ENGINES]
            for number in range(options.rounds):
                order = runs[number % len(runs):] + runs[:number % len(runs)]
                for site, name in order:
                    started = time.perf_counter()
                    outcome = run_round(engines[name], site["url"])
                    results[site["label"]][name].append(outcome)
                    print(f"  ronda {number + 1}: {site['label']:8} {name:8} "
                          f"1.ª {describe_visit(outcome['cold'])}\n{'':31}2.ª {describe_visit(outcome['warm'])}"
                          f" ({time.perf_counter() - started:.0f} s)", flush=True)
    finally:
        if webkit:
            webkit.close()
        stop_servers(servers)
    verdicts = summarize(sites, results)
    print_verdicts(f"{sites[0]['label']}, WebKit frente a Chromium", verdicts)
    print(f"\n{read_load()}", flush=True)
    return 0
