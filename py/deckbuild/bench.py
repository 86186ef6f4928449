"""Benchmark: the deck against the plainest Pyodide page, in one run, in headless Chromium.

    python3 build.py bench [--rounds N] [--compare DIR ...] [--no-cells]
    python3 build.py bench --link 20 --link 100 [--server serve|gzip] [--rounds N] [--compare DIR ...]
    python3 build.py bench --class 40 [--link 100]

`python3 build.py bench` builds dist/ as usual, then builds next to it (`dist.plain/`) a
plain page from the same verified Pyodide files, as Pyodide publishes them (no
bytecode, the official lock): a worker that runs `loadPyodide`,
`loadPackage(['numpy', 'matplotlib'])` and imports `matplotlib.pyplot`, and a ▶ that
draws one histogram. Both are served by the deck's own server (same headers, same
revalidation) and visited alternately, each round in a fresh browser profile:

* a first visit (empty cache): first slide painted, «Python listo», first figure
  (▶ on the first figure cell pressed the moment Python is ready, measured to the
  image on screen), the worker's own boot steps, bytes and requests; on the deck, then
  every cell run once (the worker's time and the time until its output is shown);
* a second visit in the same profile: the same marks, bytes and requests (the first
  visit of the deck waits until its service worker keeps the whole deck, then each
  first visit stays open LINGER_MS more, for both pages alike, so the browser can
  write its HTTP and compiled-wasm caches, as it would during a class).

Every cell also runs natively (`dpdeck.classroom.cellrun.run_cell`, warm process) and in the deck's own
Pyodide under Node (js/bench_cells.mjs, after the worker's warm-up), where its CPU time
moves much less with the machine's load than any wall clock. The tables give
medians over the rounds and the ratio deck/plain page; targets are marked as met or not.
These are measurements to read, never assertions: nothing here fails on a slow machine.
`--compare DIR` adds another built deck (for example one built from an older commit) to
the same rotation, so a before/after comparison shares the machine's load.

Over a network (`--link MBIT`, repeatable; bench_links.py): every page goes through one link of
that many Mbit/s on loopback that all responses share (benchnet.Link), served
both by `build.py serve` and by a generic static host that gzips text, scripts
and wasm on the fly (`--server` picks one), in alternating rounds with fresh
on-disk profiles. Per link and server: the bytes sent before the page said
«Python listo» (each byte timed as it left the server), «Python listo», the
first figure, all the bytes of the first visit (the service worker's copy
included) and the second visit, with the ratios deck / plain page.

A class (`--class N`, bench_links.py as well): N first visits at once, one browser context each, to
`build.py serve`'s server running in a process of its own behind one shared
link (the first `--link`, 100 Mbit/s by default): the time until every
student has «Python listo», the bytes served, the server's peak memory, its
responses by status and those cut short, and any failed request in a browser.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

from .browser import CHROMIUM_ARGS, MISSING_BROWSER_MESSAGE, find_chromium
from .commands import run_node_script
from .errors import BuildError
from .paths import NODE_MODULES, ROOT
from .pyodide import PYODIDE_CORE, PYODIDE_LOCK, encode_lock, gather_pyodide
from .benchnet import Link, Traffic
from .server import make_server

HERE = Path(__file__).resolve().parent
PLAIN_PAGE = HERE / "plain"
PAGE_SCRIPT = HERE / "js" / "bench_page.js"
VIEWPORT = {"width": 1280, "height": 720}
VISIT_TIMEOUT_MS = 240_000
CELL_TIMEOUT_MS = 120_000
# A first visit stays open this long after its last measurement, for both pages
# alike: the browser writes its HTTP cache and its compiled-wasm cache in the
# background, and a page closed at once would leave the second visit without them.
LINGER_MS = 5_000
# Before that, a first visit of the deck waits (at most this long) until its
# service worker keeps the whole deck, Python included, as a lecturer's browser
# does a few seconds after Python is ready; the second visit then comes from it.
OFFLINE_WAIT_MS = 60_000
OFFLINE_COMPLETE = "html[data-offline=ready][data-offline-python=ready]"
NATIVE_REPEATS = 3

# The targets, checked against the medians (ratios are deck / plain page).
TARGETS = {
    "ready_ratio_cold": 0.5,
    "ready_ratio_warm": 0.35,
    "figure_after_ready_s": 0.5,
    "painted_s": 0.3,
    "cell_browser_s": 1.0,
    "cell_native_s": 0.3,
    "warm_bytes": 100_000,
}

# Where each kind of page is first painted (see bench_page.js).
PAINT_SELECTORS = {"deck": ".reveal .slides > section", "plain": "h1"}

# How each server is called in the tables: the deck's own (`build.py serve`) and a generic host.
SERVER_LABELS = {"serve": "build.py serve", "gzip": "gzip al vuelo"}


# ---------------------------------------------------------------------------
# The plain page
# ---------------------------------------------------------------------------

def build_plain_page(target: Path, pyodide_dist: Path | None = None) -> Path:
    """The plain page in target/: its three files, Pyodide's core, and the shipped packages as published."""
    pyodide = gather_pyodide(pyodide_dist)
    staging = target.with_name(f"{target.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    shutil.copytree(PLAIN_PAGE, staging)
    folder = staging / "pyodide"
    folder.mkdir()
    for name in (*PYODIDE_CORE, *pyodide.wheel_names()):
        shutil.copyfile(pyodide.paths[name], folder / name)
    official = {"info": pyodide.lock["info"],
                "packages": {name: pyodide.lock["packages"][name] for name in pyodide.packages}}
    (folder / PYODIDE_LOCK).write_bytes(encode_lock(official))
    shutil.rmtree(target, ignore_errors=True)
    os.replace(staging, target)
    return target


# ---------------------------------------------------------------------------
# Serving, with the bytes and requests each visit costs
# ---------------------------------------------------------------------------

def warm_server(url: str) -> None:
    """One request for the page before any round: what a server does once, after it starts, is no visit's.

    The deck's server composes the policy of the page it serves on its first
    request for it (deckbuild.server: the hashes of the page's inline scripts,
    about a second for an 800 kB page on a loaded machine); a lecturer's server
    has done it long before the class opens the deck.
    """
    with urllib.request.urlopen(url) as response:
        response.read()


def make_counting_server(root: Path, link: Link | None = None):
    """The deck's own server on root/ (same headers and revalidation for every page), counting what it sends.

    With a `link`, every byte it sends waits its turn on that link.
    """
    traffic = Traffic()
    server = make_server(root, 0, link=link, traffic=traffic)
    threading.Thread(target=server.serve_forever, name="bench-server", daemon=True).start()
    return server, traffic, f"http://127.0.0.1:{server.server_address[1]}/"


# ---------------------------------------------------------------------------
# One visit
# ---------------------------------------------------------------------------

def make_page_script(kind: str) -> str:
    config = {"paintSelector": PAINT_SELECTORS[kind], "gotoFigureSlide": kind == "deck", "clickFigure": True}
    return PAGE_SCRIPT.read_text(encoding="utf-8").replace("__BENCH_CONFIG__", json.dumps(config))


def wait_for_offline_copy(page) -> None:
    """Until the deck's service worker keeps the whole deck, or OFFLINE_WAIT_MS have passed."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeoutError

    try:
        page.wait_for_selector(OFFLINE_COMPLETE, state="attached", timeout=OFFLINE_WAIT_MS)
    except PlaywrightTimeoutError:
        print("  (la copia sin conexión no terminó a tiempo: la 2.ª visita descargará lo que falte)", flush=True)


def visit(context, url: str, kind: str, traffic: Traffic, *, run_cells: bool, linger_ms: int = 0) -> dict:
    """Open url in a new page of context; return the marks, the worker's timings and the traffic."""
    traffic.reset()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(url + ("?autorun=0" if kind == "deck" else ""))
        page.wait_for_function("() => window.__bench && (window.__bench.marks.figureShown !== undefined"
                               " || window.__bench.marks.error !== undefined || window.__bench.errors.length)",
                               timeout=VISIT_TIMEOUT_MS, polling=100)
        bench = page.evaluate("() => ({marks: window.__bench.marks, boot: window.__bench.boot,"
                              " errors: window.__bench.errors, timeOrigin: window.__bench.timeOrigin})")
        result = {"marks": bench["marks"], "boot": bench["boot"] or {}, "errors": bench["errors"] + errors,
                  "traffic": traffic.snapshot(),
                  "bytes_before_ready": traffic.bytes_until(find_moment(bench, "ready"))}
        if run_cells:
            page.wait_for_selector("html[data-cells=ready]", timeout=VISIT_TIMEOUT_MS)
            result["cells"] = page.evaluate("timeout => window.__bench.runAllCells(timeout)", CELL_TIMEOUT_MS)
            result["traffic_all_cells"] = traffic.snapshot()
        if kind == "deck" and linger_ms:
            wait_for_offline_copy(page)
        page.wait_for_timeout(linger_ms)
        result["traffic_total"] = traffic.snapshot()
        return result
    finally:
        page.close()


def find_moment(bench: dict, name: str) -> float | None:
    """When the page set mark `name`, in seconds since the epoch (the servers' clock), or None."""
    value = bench["marks"].get(name)
    return None if value is None or not bench.get("timeOrigin") else (bench["timeOrigin"] + value) / 1000


def measure_folder(folder: Path) -> int:
    if not folder.exists():
        return 0
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def run_round(playwright, site: dict, *, run_cells: bool) -> dict:
    """A fresh profile: first visit, then a second visit in the same profile."""
    profile = Path(tempfile.mkdtemp(prefix="dpdeck-bench-profile-"))
    context = playwright.chromium.launch_persistent_context(
        str(profile), headless=True, args=CHROMIUM_ARGS, viewport=VIEWPORT, executable_path=str(find_chromium()))
    context.add_init_script(script=make_page_script(site["kind"]))
    try:
        cold = visit(context, site["url"], site["kind"], site["traffic"], run_cells=run_cells and site["kind"] == "deck",
                     linger_ms=LINGER_MS)
        cold["wasm_code_cache"] = measure_folder(profile / "Default" / "Code Cache" / "wasm")
        warm = visit(context, site["url"], site["kind"], site["traffic"], run_cells=False)
        return {"cold": cold, "warm": warm}
    finally:
        context.close()
        shutil.rmtree(profile, ignore_errors=True)


def run_rounds(playwright, sites: list[dict], rounds: int, *, run_cells: bool, describe) -> dict[str, list[dict]]:
    """`rounds` rounds of `run_round` on every site; {label: [round]}, one line printed per visit (`describe`)."""
    results: dict[str, list[dict]] = {site["label"]: [] for site in sites}
    for number in range(rounds):
        # Rotate the order each round so drift in the machine's load hits every page alike.
        order = sites[number % len(sites):] + sites[:number % len(sites)]
        for site in order:
            started = time.perf_counter()
            outcome = run_round(playwright, site, run_cells=run_cells)
            results[site["label"]].append(outcome)
            problems = outcome["cold"]["errors"] + outcome["warm"]["errors"]
            print(f"  ronda {number + 1}: {site['label']:8} {describe(outcome)}"
                  f" ({time.perf_counter() - started:.0f} s)"
                  + (f"  ! {problems[0]}" if problems else ""), flush=True)
    return results


def describe_round(outcome: dict) -> str:
    """«Python listo» in both visits and the second visit's bytes, for `run_rounds`' line."""
    return (f"listo {seconds(mark(outcome['cold'], 'ready'))} / {seconds(mark(outcome['warm'], 'ready'))}"
            f" (2.ª visita, {kilobytes(outcome['warm']['traffic']['bytes'])})")


def stop_servers(servers: list) -> None:
    for server in servers:
        server.shutdown()
        server.server_close()


# ---------------------------------------------------------------------------
# Native cell times
# ---------------------------------------------------------------------------

CELL_PATTERN = re.compile(
    r'<div class="cell" data-cell-id="(?P<id>[^"]+)"[^>]*>\s*<pre class="cell-source"><code[^>]*>(?P<source>.*?)</code></pre>',
    re.DOTALL)

NATIVE_SCRIPT = r"""
import json, statistics, sys, time
from dpdeck.classroom.cellrun import run_cell

cells, repeats = json.load(sys.stdin), int(sys.argv[1])
times = {}
for cell in cells:
    run_cell(cell["source"], cell_id=cell["id"])  # warm: imports and caches, as in a booted browser
    walls, cpus = [], []
    for _ in range(repeats):
        wall, cpu = time.perf_counter(), time.process_time()
        run_cell(cell["source"], cell_id=cell["id"])
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
    times[cell["id"]] = {"wall": statistics.median(walls), "cpu": statistics.median(cpus)}
json.dump(times, sys.stdout)
"""


WARMUP_SOURCE = ROOT / "deck" / "js" / "worker" / "warmup.js"
PYODIDE_LOADER = NODE_MODULES / "pyodide" / "pyodide.mjs"
PYODIDE_REPEATS = 3


def read_worker_warmup(source: str | None = None) -> tuple[list[str], str]:
    """The worker's warm-up from scratch as deck/js/worker/warmup.js writes it: (WARM_IMPORTS, PYPLOT_CELL + WARMUP_CELL)."""
    text = WARMUP_SOURCE.read_text(encoding="utf-8") if source is None else source
    imports = re.search(r"^export const WARM_IMPORTS = (\[.*?\]);", text, re.MULTILINE | re.DOTALL)
    cells = [re.search(rf"^export const {name} = `(.*?)`;", text, re.MULTILINE | re.DOTALL)
             for name in ("PYPLOT_CELL", "WARMUP_CELL")]
    if imports is None or None in cells:
        raise BuildError(f"{WARMUP_SOURCE}: no se encontró WARM_IMPORTS, PYPLOT_CELL o WARMUP_CELL"
                         " (el arranque del worker)")
    # Template literals without substitutions: only their backslash escapes to undo.
    return json.loads(imports[1]), "".join(re.sub(r"\\(.)", r"\1", cell[1]) for cell in cells)


def time_cells_in_pyodide(dist: Path, cells: list[dict], *, repeats: int = PYODIDE_REPEATS) -> dict[str, dict]:
    """Each cell in the deck's Pyodide under Node, after the worker's own warm-up (js/bench_cells.mjs).

    {id: {first, wall, cpu, status}} in seconds (medians of ``repeats`` runs
    after a first one); {} with a note if Node could not run it.
    """
    warm_imports, warmup_cell = read_worker_warmup()
    request = json.dumps({"warmImports": warm_imports, "warmupCell": warmup_cell, "cells": cells})
    try:
        output = run_node_script("bench_cells.mjs", PYODIDE_LOADER, dist, str(repeats),
                                 what="Pyodide (node) ejecutando las celdas", input_text=request)
    except BuildError as error:
        print(f"  ! tiempos en Pyodide: {str(error).splitlines()[0]}", flush=True)
        return {}
    return json.loads(output)


def read_cells(dist: Path) -> list[dict]:
    """The deck's cells (id and source) as the built page carries them."""
    text = (dist / "index.html").read_text(encoding="utf-8")
    return [{"id": match["id"], "source": html.unescape(match["source"])} for match in CELL_PATTERN.finditer(text)]


def time_cells_natively(cells: list[dict], *, repeats: int = NATIVE_REPEATS) -> dict[str, dict]:
    """Each cell's median time in a warm native Python (this one), in a process of its own.

    {id: {wall, cpu}} in seconds (medians of ``repeats`` runs after a first
    one): the wall clock and the process's CPU time, which the other work of a
    shared machine moves much less.
    """
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0",
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "py"), os.environ.get("PYTHONPATH")]))}
    with tempfile.TemporaryDirectory(prefix="dpdeck-bench-cells-") as work:
        process = subprocess.run([sys.executable, "-c", NATIVE_SCRIPT, str(repeats)], input=json.dumps(cells),
                                 capture_output=True, text=True, cwd=work, env=env)
    if process.returncode != 0:
        print(f"  ! tiempos nativos: {process.stderr.strip().splitlines()[-1:]}", flush=True)
        return {}
    return json.loads(process.stdout)


# ---------------------------------------------------------------------------
# Summaries
# ---------------------------------------------------------------------------

def median(values) -> float | None:
    values = [value for value in values if value is not None]
    return statistics.median(values) if values else None


def seconds(ms) -> str:
    return "—" if ms is None else f"{ms / 1000:.2f} s"


def ratio(numerator, denominator) -> str:
    if numerator is None or not denominator:
        return "—"
    return f"{numerator / denominator:.2f}×"


def kilobytes(count) -> str:
    return "—" if count is None else f"{count / 1000:,.0f} kB".replace(",", " ")


def read_load() -> str:
    try:
        return "carga media (1, 5, 15 min): " + ", ".join(f"{value:.2f}" for value in os.getloadavg())
    except OSError:
        return "carga media: desconocida"


def mark(visit_result: dict, name: str):
    return visit_result["marks"].get(name)


def figure_after_ready(visit_result: dict):
    shown, ready = mark(visit_result, "figureShown"), mark(visit_result, "ready")
    return None if shown is None or ready is None else shown - ready


def flatten_steps(timings: dict, prefix: str = "") -> dict[str, float]:
    """{"core": 900, "imports": {"numpy": 200}} → {"core": 900, "imports.numpy": 200}."""
    steps = {}
    for key, value in (timings or {}).items():
        if isinstance(value, dict):
            steps.update(flatten_steps(value, f"{prefix}{key}."))
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            steps[prefix + key] = value
    return steps


def count_snapshot_sources(rounds: list[dict], visit_name: str) -> str:
    """Where each round's snapshot came from on that visit: "download ×1, kept ×4" ("ninguna": none restored).

    A deck from before the device's copy restores only from the download.
    """
    snapshots = [((result[visit_name]["boot"].get("timings") or {}).get("snapshot") or {}) for result in rounds]
    sources = [snapshot.get("source") or ("download" if snapshot.get("used") else "ninguna") for snapshot in snapshots]
    return ", ".join(f"{source} ×{sources.count(source)}" for source in sorted(set(sources)))


def count_packages_sources(rounds: list[dict], visit_name: str) -> str:
    """Where each round's packages came from on that visit: "download ×1, kept ×4" (a deck before the copy: "download")."""
    sources = [(((result[visit_name]["boot"].get("timings") or {}).get("packagesCopy") or {}).get("source")
                or "download") for result in rounds]
    return ", ".join(f"{source} ×{sources.count(source)}" for source in sorted(set(sources)))


def print_table(header: tuple, rows: list[tuple]) -> None:
    cells = [tuple(str(cell) for cell in header)] + [tuple(str(cell) for cell in row) for row in rows]
    widths = [max(len(row[index]) for row in cells) for index in range(len(header))]
    for number, row in enumerate(cells):
        line = "  ".join(cell.ljust(widths[0]) if index == 0 else cell.rjust(widths[index])
                         for index, cell in enumerate(row))
        print("  " + line.rstrip())
        if number == 0:
            print("  " + "  ".join("-" * width for width in widths))


def summarize(sites: list[dict], results: dict[str, list[dict]], native: dict[str, dict],
              pyodide: dict[str, dict] | None = None) -> list[tuple]:
    """Print the tables; return (target, value, met) rows for the first deck."""
    plain = next(site for site in sites if site["kind"] == "plain")
    decks = [site for site in sites if site["kind"] == "deck"]
    labels = [site["label"] for site in sites]

    def med(label, visit_name, getter):
        return median(getter(result[visit_name]) for result in results[label])

    print("\nMarcas (ms desde que empieza la navegación; mediana de las rondas)")
    header = ("", *labels, *(f"{deck['label']}/{plain['label']}" for deck in decks))
    for visit_name, title in (("cold", "primera visita"), ("warm", "segunda visita")):
        rows = []
        for name, getter in (
                ("primera diapositiva pintada", lambda v: mark(v, "painted")),
                ("«Python listo»", lambda v: mark(v, "ready")),
                ("primera figura en pantalla", lambda v: mark(v, "figureShown")),
                ("figura después de «listo»", figure_after_ready)):
            values = [med(label, visit_name, getter) for label in labels]
            plain_value = values[labels.index(plain["label"])]
            rows.append((name, *map(seconds, values),
                         *(ratio(values[labels.index(deck["label"])], plain_value) for deck in decks)))
        traffic = [med(label, visit_name, lambda v: v["traffic"]["bytes"]) for label in labels]
        requests = [med(label, visit_name, lambda v: v["traffic"]["requests"]) for label in labels]
        rows.append(("transferido hasta la figura", *map(kilobytes, traffic),
                     *(ratio(traffic[labels.index(deck["label"])], traffic[labels.index(plain["label"])])
                       for deck in decks)))
        rows.append(("peticiones hasta la figura", *("—" if r is None else f"{r:.0f}" for r in requests),
                     *("" for _ in decks)))
        print(f"\n  {title}")
        print_table(header, rows)
    caches = [med(label, "cold", lambda v: v.get("wasm_code_cache")) for label in labels]
    print("\n  caché de código wasm en el perfil tras la 1.ª visita: "
          + ", ".join(f"{label} {kilobytes(value)}" for label, value in zip(labels, caches)))
    for deck in decks:
        print(f"  instantánea de Python en la 2.ª visita ({deck['label']}): "
              + count_snapshot_sources(results[deck["label"]], "warm"))
        print(f"  paquetes de Python en la 2.ª visita ({deck['label']}): "
              + count_packages_sources(results[deck["label"]], "warm"))

    print("\nPasos del arranque según cada worker (ms, mediana)")
    for visit_name, title in (("cold", "primera visita"), ("warm", "segunda visita")):
        step_names = []
        for label in labels:
            for result in results[label]:
                for key in flatten_steps(result[visit_name]["boot"].get("timings")):
                    if key not in step_names:
                        step_names.append(key)
        rows = []
        for key in step_names:
            values = [med(label, visit_name, lambda v, key=key: flatten_steps(v["boot"].get("timings")).get(key))
                      for label in labels]
            plain_value = values[labels.index(plain["label"])]
            rows.append((key, *("—" if value is None else f"{value:.0f}" for value in values),
                         *(ratio(values[labels.index(deck["label"])], plain_value) for deck in decks)))
        print(f"\n  {title}")
        print_table(header, rows)

    pyodide = pyodide or {}
    verdicts = []
    for deck in decks:
        cell_rows, browser_worst, native_worst = [], None, None
        per_cell: dict[str, dict[str, list]] = {}
        for result in results[deck["label"]]:
            for cell in result["cold"].get("cells", []):
                entry = per_cell.setdefault(cell["cellId"], {"worker": [], "page": [], "status": []})
                entry["worker"].append(cell["elapsedMs"])
                entry["page"].append(cell["pageMs"])
                entry["status"].append(cell["status"])
        if per_cell:
            print(f"\nCeldas de {deck['label']} (mediana; navegador = tiempo del worker, "
                  "en pantalla = desde ▶ hasta la salida; Pyodide = la celda en el Pyodide del mazo "
                  "bajo Node, tiempo de CPU, que la carga de la máquina mueve poco; "
                  "nativo = run_cell en caliente, CPU y reloj; las metas se comparan con el CPU)")
            for cell_id, entry in per_cell.items():
                worker_ms, page_ms = median(entry["worker"]), median(entry["page"])
                native_s = (native.get(cell_id) or {}).get("cpu")
                native_wall_s = (native.get(cell_id) or {}).get("wall")
                pyodide_s = (pyodide.get(cell_id) or {}).get("cpu") if deck is decks[0] else None
                browser_worst = max(filter(None, [browser_worst, page_ms]), default=None)
                native_worst = max(filter(lambda v: v is not None, [native_worst, native_s]), default=None)
                flags = []
                if page_ms is not None and page_ms > TARGETS["cell_browser_s"] * 1000:
                    flags.append("> 1 s")
                if native_s is not None and native_s > TARGETS["cell_native_s"]:
                    flags.append("> 0.3 s nativo (CPU)")
                if any(status != "done" for status in entry["status"]):
                    flags.append("estado: " + ",".join(sorted(set(entry["status"]))))
                cell_rows.append((cell_id, seconds(worker_ms), seconds(page_ms),
                                  "—" if pyodide_s is None else f"{pyodide_s:.2f} s",
                                  "—" if native_s is None else f"{native_s:.2f} s",
                                  "—" if native_wall_s is None else f"{native_wall_s:.2f} s", " ".join(flags)))
            print_table(("celda", "navegador", "en pantalla", "Pyodide (CPU)", "nativo (CPU)", "nativo (reloj)", ""),
                        cell_rows)
        if deck is decks[0]:
            verdicts = collect_verdicts(deck, plain, results, med, browser_worst, native_worst)
            pyodide_worst = max((entry["cpu"] for entry in pyodide.values()), default=None)
            verdicts.append((f"cada celda ≤ {TARGETS['cell_browser_s']} s en Pyodide bajo Node, CPU (la más lenta)",
                             pyodide_worst,
                             None if pyodide_worst is None else pyodide_worst <= TARGETS["cell_browser_s"]))
    return verdicts


def collect_verdicts(deck, plain, results, med, browser_worst_ms, native_worst_s) -> list[tuple]:
    def site_median(site, visit_name, getter):
        return med(site["label"], visit_name, getter)

    cold_ratio = ready_ratio = None
    deck_ready = site_median(deck, "cold", lambda v: mark(v, "ready"))
    plain_ready = site_median(plain, "cold", lambda v: mark(v, "ready"))
    if deck_ready and plain_ready:
        cold_ratio = deck_ready / plain_ready
    deck_ready_warm = site_median(deck, "warm", lambda v: mark(v, "ready"))
    plain_ready_warm = site_median(plain, "warm", lambda v: mark(v, "ready"))
    if deck_ready_warm and plain_ready_warm:
        ready_ratio = deck_ready_warm / plain_ready_warm
    figure = site_median(deck, "cold", figure_after_ready)
    painted = site_median(deck, "cold", lambda v: mark(v, "painted"))
    warm_bytes = site_median(deck, "warm", lambda v: v["traffic"]["bytes"])

    def check(value, limit, text):
        return (text, value, None if value is None else value <= limit)

    return [
        check(cold_ratio, TARGETS["ready_ratio_cold"], f"«listo» 1.ª visita ≤ {TARGETS['ready_ratio_cold']}× la página simple"),
        check(ready_ratio, TARGETS["ready_ratio_warm"], f"«listo» 2.ª visita ≤ {TARGETS['ready_ratio_warm']}× la página simple"),
        check(None if figure is None else figure / 1000, TARGETS["figure_after_ready_s"],
              f"primera figura ≤ {TARGETS['figure_after_ready_s']} s después de «listo»"),
        check(None if painted is None else painted / 1000, TARGETS["painted_s"],
              f"primera diapositiva pintada < {TARGETS['painted_s']} s"),
        check(None if browser_worst_ms is None else browser_worst_ms / 1000, TARGETS["cell_browser_s"],
              f"cada celda ≤ {TARGETS['cell_browser_s']} s en el navegador (la más lenta)"),
        check(native_worst_s, TARGETS["cell_native_s"],
              f"cada celda ≤ {TARGETS['cell_native_s']} s nativa, CPU (la más lenta)"),
        check(warm_bytes, TARGETS["warm_bytes"], "2.ª visita transfiere < 100 kB"),
    ]


def print_verdicts(label: str, verdicts: list[tuple]) -> None:
    print(f"\nMetas ({label})")
    for text, value, met in verdicts:
        shown = "—" if value is None else (f"{value:.2f}" if value < 1000 else kilobytes(value))
        state = "sin dato" if met is None else ("cumple" if met else "NO cumple")
        print(f"  {state:9}  {text}: {shown}")


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def parse_arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python3 build.py bench", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5, help="rondas alternadas (5 por defecto)")
    parser.add_argument("--compare", action="append", default=[], metavar="DIR",
                        help="otro mazo construido que entra en la misma rotación (repetible)")
    parser.add_argument("--no-cells", action="store_true", help="no ejecuta cada celda ni mide su tiempo nativo")
    parser.add_argument("--engine", choices=("chromium", "webkit"), default="chromium",
                        help="webkit: el mazo en WebKit frente a Chromium (bench_engines.py)")
    parser.add_argument("--link", action="append", type=float, default=[], metavar="MBIT",
                        help="visitas a través de un enlace compartido de MBIT Mbit/s (repetible); "
                             "mide bytes y tiempos hasta «Python listo» en cada servidor de --server")
    parser.add_argument("--server", action="append", choices=sorted(SERVER_LABELS), default=[],
                        help="con --link: serve (el servidor de build.py serve) o gzip (un servidor estático "
                             "genérico que comprime al vuelo); ambos si no se dice")
    parser.add_argument("--class", dest="students", type=int, metavar="N",
                        help="N primeras visitas a la vez a build.py serve por un enlace (el primer --link, "
                             "100 Mbit/s si no se dice): tiempo hasta que todos tienen Python, bytes, "
                             "memoria y errores del servidor")
    options = parser.parse_args(argv)
    if options.rounds < 1:
        parser.error(f"--rounds {options.rounds}: se espera un entero ≥ 1")
    if any(mbit <= 0 for mbit in options.link):
        parser.error("--link: se esperan Mbit/s mayores que 0")
    if options.server and not options.link:
        parser.error("--server solo tiene sentido con --link")
    options.server = options.server or ["serve", "gzip"]
    if options.students is not None and options.students < 1:
        parser.error("--class: se espera un número de estudiantes ≥ 1")
    return options


def run_benchmark(dist: Path, pyodide_dist: Path | None, argv: list[str]) -> int:
    """Build the plain page next to dist/, serve it with dist/ (and --compare decks), alternate the visits, print."""
    options = parse_arguments(argv)
    if options.engine == "webkit":
        from .bench_engines import run_engine_benchmark
        return run_engine_benchmark(dist, options)
    from playwright.sync_api import sync_playwright

    if find_chromium() is None:
        raise BuildError(MISSING_BROWSER_MESSAGE)
    folders = [("mazo", dist, "deck")]
    for folder in options.compare:
        path = Path(folder).resolve()
        if not (path / "index.html").exists():
            raise BuildError(f"--compare {folder}: no hay un mazo construido ahí")
        folders.append((path.name, path, "deck"))
    if options.students:
        from .bench_links import run_class
        run_class(dist, options.students, options.link[0] if options.link else 100)
        return 0
    plain = build_plain_page(dist.with_name(f"{dist.name}.plain"), pyodide_dist)
    folders.append(("simple", plain, "plain"))
    if options.link:
        from .bench_links import run_over_links, summarize_links
        print(f"\nBanco de pruebas por la red: {platform.machine()}, {os.cpu_count()} núcleos, "
              f"{options.rounds} rondas por enlace y servidor ({', '.join(label for label, _, _ in folders)}). "
              f"{read_load()}", flush=True)
        with sync_playwright() as playwright:
            results = run_over_links(playwright, folders, options)
        print_verdicts(folders[0][0], summarize_links(folders, results))
        print(f"\n{read_load()}", flush=True)
        return 0
    sites, servers = [], []
    for label, folder, kind in folders:
        server, traffic, url = make_counting_server(folder)
        servers.append(server)
        warm_server(url)
        sites.append({"label": label, "folder": folder, "kind": kind, "url": url, "traffic": traffic})

    print(f"\nBanco de pruebas: {platform.machine()}, {os.cpu_count()} núcleos, {options.rounds} rondas "
          f"({', '.join(site['label'] for site in sites)}). {read_load()}", flush=True)
    native: dict[str, dict] = {}
    pyodide: dict[str, dict] = {}
    if not options.no_cells:
        cells = read_cells(dist)
        started = time.perf_counter()
        native = time_cells_natively(cells)
        print(f"  {len(native)} celdas medidas en nativo ({time.perf_counter() - started:.0f} s)", flush=True)
        started = time.perf_counter()
        pyodide = time_cells_in_pyodide(dist, cells)
        print(f"  {len(pyodide)} celdas medidas en Pyodide bajo Node ({time.perf_counter() - started:.0f} s)",
              flush=True)
    try:
        with sync_playwright() as playwright:
            results = run_rounds(playwright, sites, options.rounds, run_cells=not options.no_cells,
                                 describe=describe_round)
    finally:
        stop_servers(servers)
    verdicts = summarize(sites, results, native, pyodide)
    print_verdicts(sites[0]["label"], verdicts)
    print(f"\n{read_load()}", flush=True)
    return 0
