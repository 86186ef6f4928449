"""Benchmark over a network: `build.py bench --link MBIT` and `build.py bench --class N`.

Over a link (`--link MBIT`, repeatable): every page goes through one shared
link of that many Mbit/s on loopback (benchnet.Link), served both by
`build.py serve` and by a generic static host that gzips on the fly, in
alternating rounds with fresh profiles; the tables give the bytes sent before
«Python listo», «Python listo», the first figure and both visits' bytes, with
the ratios deck / plain page.

A class (`--class N`): N first visits at once to `build.py serve`'s server, in
a process of its own behind one link: the time until every student has
«Python listo», the bytes served, the server's peak memory and its errors.

`deckbuild.bench` parses the command line, measures each visit and prints the
tables (its docstring describes the whole benchmark); it calls this module
for `--link` and `--class`. Measurement only: nothing here asserts a time.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .bench import (
    SERVER_LABELS,
    VIEWPORT,
    figure_after_ready,
    find_moment,
    make_counting_server,
    make_page_script,
    mark,
    median,
    print_table,
    print_verdicts,
    ratio,
    read_load,
    run_rounds,
    seconds,
    stop_servers,
    warm_server,
)
from .benchnet import Link, Traffic, compress_ahead, make_generic_host
from .browser import CHROMIUM_ARGS, find_chromium
from .errors import BuildError
from .paths import ROOT


# ---------------------------------------------------------------------------
# Over a link: the first visit from a classroom or a home
# ---------------------------------------------------------------------------

# The targets over a link (ratios deck / plain page, medians of one run).
NETWORK_TARGETS = {"bytes_ratio_generic": 0.6, "ready_ratio": {20: 0.6, 100: 0.4}}


def start_site(label: str, folder: Path, kind: str, server_kind: str, link: Link) -> tuple[dict, object]:
    """A page served by `server_kind` through `link`: ({label, folder, kind, url, traffic}, server)."""
    if server_kind == "gzip":
        traffic = Traffic()
        server, url = make_generic_host(folder, traffic, link)
        compress_ahead(folder, server)
    else:
        server, traffic, url = make_counting_server(folder, link)
    warm_server(url)
    traffic.reset()
    return {"label": label, "folder": folder, "kind": kind, "url": url, "traffic": traffic}, server


def run_over_links(playwright, folders: list[tuple[str, Path, str]], options) -> dict:
    """Every page through every (link, server), alternating rounds; {(mbit, server): {label: [round]}}."""
    results = {}
    for mbit in options.link:
        link = Link(mbit)
        for server_kind in options.server:
            sites, servers = [], []
            for label, folder, kind in folders:
                site, server = start_site(label, folder, kind, server_kind, link)
                sites.append(site)
                servers.append(server)
            print(f"\n{link.describe()}, {SERVER_LABELS[server_kind]}", flush=True)
            try:
                results[(mbit, server_kind)] = run_rounds(playwright, sites, options.rounds, run_cells=False,
                                                          describe=describe_link_round)
            finally:
                stop_servers(servers)
    return results


def describe_link_round(outcome: dict) -> str:
    """«Python listo», the bytes sent before it and the first visit's bytes, for `run_rounds`' line."""
    cold = outcome["cold"]
    return (f"listo {seconds(mark(cold, 'ready'))}, {megabytes(cold.get('bytes_before_ready'))} antes de «listo»,"
            f" {megabytes(cold['traffic_total']['bytes'])} en la visita")


def megabytes(count) -> str:
    return "—" if count is None else f"{count / 1e6:.1f} MB"


NETWORK_ROWS = (
    ("bytes antes de «Python listo»", "bytes", lambda v: v["cold"].get("bytes_before_ready")),
    ("«Python listo»", "ms", lambda v: mark(v["cold"], "ready")),
    ("primera figura en pantalla", "ms", lambda v: mark(v["cold"], "figureShown")),
    ("figura después de «listo»", "ms", lambda v: figure_after_ready(v["cold"])),
    ("bytes de la 1.ª visita (toda)", "bytes", lambda v: v["cold"]["traffic_total"]["bytes"]),
    ("peticiones de la 1.ª visita", "count", lambda v: v["cold"]["traffic_total"]["requests"]),
    ("2.ª visita: «Python listo»", "ms", lambda v: mark(v["warm"], "ready")),
    ("2.ª visita: bytes", "bytes", lambda v: v["warm"]["traffic_total"]["bytes"]),
)


def format_value(value, unit: str) -> str:
    if value is None:
        return "—"
    return {"bytes": megabytes, "ms": seconds, "count": lambda v: f"{v:.0f}"}[unit](value)


def summarize_links(folders: list[tuple[str, Path, str]], results: dict) -> list[tuple]:
    """Print one table per (link, server) and the comparison between servers; return the verdicts."""
    labels = [label for label, _, _ in folders]
    plain = next(label for label, _, kind in folders if kind == "plain")
    decks = [label for label, _, kind in folders if kind == "deck"]
    medians = {}
    for (mbit, server_kind), rounds in results.items():
        print(f"\n{mbit:g} Mbit/s, {SERVER_LABELS[server_kind]} (mediana de {len(rounds[plain])} rondas)")
        rows = []
        for name, unit, getter in NETWORK_ROWS:
            values = [median(getter(result) for result in rounds[label]) for label in labels]
            medians[(mbit, server_kind, name)] = dict(zip(labels, values))
            plain_value = values[labels.index(plain)]
            rows.append((name, *(format_value(value, unit) for value in values),
                         *(ratio(values[labels.index(deck)], plain_value) for deck in decks)))
        print_table(("", *labels, *(f"{deck}/{plain}" for deck in decks)), rows)
    deck = decks[0]
    verdicts = []
    for (mbit, server_kind) in results:
        got = medians[(mbit, server_kind, NETWORK_ROWS[0][0])]
        ready = medians[(mbit, server_kind, NETWORK_ROWS[1][0])]
        if server_kind == "gzip" and got[deck] and got[plain]:
            limit = NETWORK_TARGETS["bytes_ratio_generic"]
            value = got[deck] / got[plain]
            verdicts.append((f"{mbit:g} Mbit/s, gzip al vuelo: bytes antes de «listo» ≤ {limit}× la página simple",
                             value, value <= limit))
        if server_kind == "serve" and (mbit, "gzip") in results:
            generic = medians[(mbit, "gzip", NETWORK_ROWS[0][0])][deck]
            if got[deck] and generic:
                verdicts.append((f"{mbit:g} Mbit/s: bytes antes de «listo» con build.py serve ≤ con gzip al vuelo"
                                 " (razón)", got[deck] / generic, got[deck] <= generic))
        limit = NETWORK_TARGETS["ready_ratio"].get(int(mbit))
        if limit and ready[deck] and ready[plain]:
            value = ready[deck] / ready[plain]
            verdicts.append((f"{mbit:g} Mbit/s, {SERVER_LABELS[server_kind]}: «listo» ≤ {limit}× la página simple",
                             value, value <= limit))
    return verdicts


# ---------------------------------------------------------------------------
# A class on one laptop
# ---------------------------------------------------------------------------

CLASS_TIMEOUT_S = 1200


def start_class_server(dist: Path, mbit: float, stats_path: Path) -> tuple[subprocess.Popen, str]:
    """`build.py serve`'s server in a process of its own behind the link (benchnet.serve_behind_link); (process, url)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "py"), os.environ.get("PYTHONPATH")]))}
    process = subprocess.Popen([sys.executable, "-m", "deckbuild.benchnet", str(dist), str(mbit), str(stats_path)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    port = process.stdout.readline().strip()
    if not port.isdigit():
        process.kill()
        raise BuildError("el servidor de la clase no arrancó")
    return process, f"http://127.0.0.1:{port}/"


async def visit_as_student(browser, contexts: list, url: str, number: int, started: float) -> dict:
    """One student's first visit, in a context of its own (added to `contexts`): until «Python listo» (or an error).

    What goes wrong is counted until then. The tab stays open, as a
    student's does, until the class is over (run_class_visits): closing it
    would cut the downloads that go on after «Python listo» short, which is
    no student's problem.
    """
    context = await browser.new_context(viewport=VIEWPORT)
    contexts.append(context)
    await context.add_init_script(script=make_page_script("deck"))
    problems = []
    page = await context.new_page()
    page.on("requestfailed", lambda request: problems.append(f"{request.url}: {request.failure}"))
    page.on("response", lambda response: response.status >= 400 and problems.append(f"{response.url}: HTTP {response.status}"))
    page.on("pageerror", lambda error: problems.append(str(error)))
    try:
        await page.goto(url + "?autorun=0", timeout=CLASS_TIMEOUT_S * 1000)
        await page.wait_for_function("() => window.__bench && (window.__bench.marks.ready !== undefined"
                                     " || window.__bench.marks.error !== undefined)",
                                     timeout=CLASS_TIMEOUT_S * 1000, polling=250)
        bench = await page.evaluate("() => ({marks: window.__bench.marks, timeOrigin: window.__bench.timeOrigin})")
        ready_at = find_moment(bench, "ready")
        if ready_at is None:
            problems.append("Python no arrancó")
        return {"student": number, "ready_s": None if ready_at is None else ready_at - started,
                "problems": list(problems), "ready_at": ready_at}
    except Exception as error:   # noqa: BLE001 — a student who never got there is a result, not a crash
        problems.append(f"{type(error).__name__}: {str(error).splitlines()[0]}")
        return {"student": number, "ready_s": None, "problems": list(problems), "ready_at": None}


async def run_class_visits(url: str, students: int, on_class_ready) -> list[dict]:
    """Every student's visit at once; `on_class_ready()` once all are ready (or failed), before any tab closes."""
    from playwright.async_api import async_playwright

    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(headless=True, args=CHROMIUM_ARGS,
                                                   executable_path=str(find_chromium()))
        contexts: list = []
        try:
            started = time.time()
            visits = await asyncio.gather(*(visit_as_student(browser, contexts, url, number, started)
                                            for number in range(students)))
            on_class_ready()
            return visits
        finally:
            for context in contexts:
                await context.close()
            await browser.close()


def run_class(dist: Path, students: int, mbit: float) -> None:
    """`students` first visits at once to `build.py serve` through one shared link; print what it took."""
    with tempfile.TemporaryDirectory(prefix="dpdeck-bench-class-") as scratch:
        stats_path = Path(scratch) / "servidor.json"
        process, url = start_class_server(dist, mbit, stats_path)
        warm_server(url)
        print(f"\nUna clase: {students} primeras visitas a la vez a build.py serve por un enlace de {mbit:g} Mbit/s"
              f" (un Chromium, un contexto nuevo por estudiante). {read_load()}", flush=True)
        def ask_for_stats() -> None:
            # The server's numbers when the whole class is ready, before any tab closes.
            process.stdin.write("stats\n")
            process.stdin.flush()
            process.stdout.readline()

        try:
            visits = asyncio.run(run_class_visits(url, students, ask_for_stats))
        finally:
            process.stdin.close()
            process.wait(timeout=60)
        served = json.loads(stats_path.read_text(encoding="utf-8"))
    times = sorted(visit["ready_s"] for visit in visits if visit["ready_s"] is not None)
    problems = [problem for visit in visits for problem in visit["problems"]]
    responses = served["responses"]
    server_errors = sum(count for status, count in responses.items() if status.startswith("5"))
    rows = [
        ("estudiantes con «Python listo»", f"{len(times)} de {students}"),
        ("todos listos", "—" if len(times) < students else f"{times[-1]:.1f} s"),
        ("el primero / la mediana", "—" if not times else f"{times[0]:.1f} s / {statistics.median(times):.1f} s"),
        ("bytes servidos hasta entonces", megabytes(served["bytes"])),
        ("peticiones", str(served["requests"])),
        ("memoria máxima del servidor", megabytes(served.get("peak_memory_bytes"))),
        ("respuestas 5xx / cortadas", f"{server_errors} / {responses.get('abandoned', 0)}"),
        ("errores en los navegadores", str(len(problems))),
    ]
    print_table(("", "valor"), rows)
    for problem in problems[:10]:
        print(f"  ! {problem}")
    counted = ", ".join(f"{status or 'sin estado'} ×{count}" for status, count in sorted(responses.items()))
    print(f"  respuestas: {counted}")
    print_verdicts("clase", [(f"{students} estudiantes listos, 0 errores", float(len(problems) + server_errors),
                              len(times) == students and not problems and not server_errors)])

