"""Benchmark of the live cells in headless Chromium; prints a table, asserts nothing.

    .venv/bin/python tests/browser/bench_cells.py [DIST] [--rounds N]

For each server (build.py's, cross-origin isolated; and a plain http.server
under a sub-path) and each round, in a fresh browser context (cold cache):
page open → Python ready, → first figure (the first cell that draws one,
run with its Run button), Python's own boot steps, and the time from pressing
Stop on `while True: pass` until the cell is idle (and, without isolation,
until Python is ready again).
"""

from __future__ import annotations

import argparse
import functools
import http.server
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "py"))
from deckbuild.browser import CHROMIUM_ARGS, MISSING_BROWSER_MESSAGE, find_chromium  # noqa: E402
from deckbuild.server import make_server  # noqa: E402
from deckpage import DeckPage  # noqa: E402  (next to this file)

TIMEOUT_MS = 180_000


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


def serve(server) -> str:
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


def measure(browser, url: str) -> dict:
    context = browser.new_context(viewport={"width": 1280, "height": 720})
    deck = DeckPage(context.new_page())
    try:
        deck.goto(url + "?autorun=0")
        deck.wait_for_cells(timeout=TIMEOUT_MS)
        deck.wait_for_python(timeout=TIMEOUT_MS)
        timings = deck.python["timings"]
        figure_cell = deck.page.evaluate(
            "() => { const cell = document.querySelector('.cell[data-figures]:not([data-figures=\"0\"])');"
            " return cell && cell.dataset.cellId; }")
        first_figure_ms = None
        if figure_cell:
            deck.cell(figure_cell).run(timeout=TIMEOUT_MS)
            first_figure_ms = deck.page.evaluate("() => Math.round(performance.now())")
        stop = measure_stop(deck)
        return {"ready_ms": timings["readyAtMs"], "first_figure_ms": first_figure_ms,
                "isolated": deck.isolated, "steps": timings, **stop}
    finally:
        context.close()


def measure_stop(deck) -> dict:
    cell = deck.cell(deck.page.evaluate("() => document.querySelector('.cell[data-cell-id]').dataset.cellId"))
    cell.set_source("while True:\n    pass")
    before = cell.click_run()
    cell.wait_for_status("running", timeout=TIMEOUT_MS)
    deck.page.wait_for_timeout(500)
    started = time.perf_counter()
    cell.stop()
    cell.wait_for_run(before, timeout=TIMEOUT_MS)
    stopped = time.perf_counter() - started
    deck.wait_for_python(timeout=TIMEOUT_MS)
    ready_again = time.perf_counter() - started
    cell.reset_in_page()
    return {"stop_ms": round(stopped * 1000), "ready_again_ms": round(ready_again * 1000)}


def summarize(label: str, results: list[dict]) -> None:
    def median(key):
        values = [r[key] for r in results if r.get(key) is not None]
        return f"{statistics.median(values) / 1000:.2f} s" if values else "—"

    print(f"\n{label} (aislado: {results[0]['isolated']}, {len(results)} rondas, mediana)")
    print(f"  página abierta → Python listo     {median('ready_ms')}")
    print(f"  página abierta → primera figura   {median('first_figure_ms')}")
    print(f"  Stop → celda detenida             {median('stop_ms')}")
    print(f"  Stop → Python listo otra vez      {median('ready_again_ms')}")
    steps = results[0]["steps"]
    print("  pasos del arranque (1.ª ronda):   " + ", ".join(
        f"{key} {value} ms" for key, value in steps.items() if isinstance(value, int)))
    print("  importaciones (1.ª ronda):        " + ", ".join(
        f"{key} {value} ms" for key, value in steps.get("imports", {}).items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist", nargs="?", default=str(ROOT / "dist"))
    parser.add_argument("--rounds", type=int, default=3)
    options = parser.parse_args()
    dist = Path(options.dist).resolve()
    if not (dist / "runtime.json").exists():
        sys.exit(f"no hay un mazo construido en {dist}: ejecuta «python3 build.py»")
    from playwright.sync_api import sync_playwright

    chromium = find_chromium()
    if chromium is None:
        sys.exit(MISSING_BROWSER_MESSAGE)
    isolated = make_server(dist, 0, isolated=True)
    plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                            functools.partial(QuietHandler, directory=str(dist.parent)))
    urls = {"servidor de build.py": serve(isolated), "http.server simple": serve(plain) + f"{dist.name}/"}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(headless=True, args=CHROMIUM_ARGS, executable_path=str(chromium))
        for label, url in urls.items():
            summarize(label, [measure(browser, url) for _ in range(options.rounds)])
        browser.close()
    isolated.shutdown()
    plain.shutdown()


if __name__ == "__main__":
    main()
