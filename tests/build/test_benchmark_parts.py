"""The benchmark's own parts that need no browser: the plain page it measures against,
the cells it reads from the built page, the traffic it counts, and how it summarises.

(The benchmark itself, `python3 build.py bench`, prints figures and asserts nothing.)
"""

from __future__ import annotations

import hashlib
import json
import os
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from deck_fixtures import ROOT
from deckbuild import bench
from deckbuild.slides import read_deck

NPM_PYODIDE = ROOT / "node_modules" / "pyodide"


def test_the_plain_page_ships_pyodide_as_published(tmp_path):
    plain = bench.build_plain_page(tmp_path / "simple")
    assert {path.name for path in plain.iterdir()} == {"index.html", "page.js", "worker.js", "pyodide"}
    official = json.loads((NPM_PYODIDE / "pyodide-lock.json").read_text())
    lock = json.loads((plain / "pyodide" / "pyodide-lock.json").read_text())
    assert lock["info"] == official["info"]
    for name, entry in lock["packages"].items():
        assert entry == official["packages"][name]
        wheel = plain / "pyodide" / entry["file_name"]
        assert hashlib.sha256(wheel.read_bytes()).hexdigest() == entry["sha256"], name
    for name in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip"):
        assert (plain / "pyodide" / name).read_bytes() == (NPM_PYODIDE / name).read_bytes()
    with zipfile.ZipFile(plain / "pyodide" / "python_stdlib.zip") as stdlib:
        assert not [name for name in stdlib.namelist() if name.endswith(".pyc")]


def test_every_cell_of_the_built_page_is_read_with_its_source(dist_dir):
    slides = Path(os.environ.get("DPDECK_SLIDES", ROOT / "deck" / "slides"))
    expected = [(cell.id, cell.source) for cell in read_deck(slides).cells]
    assert [(cell["id"], cell["source"]) for cell in bench.read_cells(dist_dir)] == expected


def test_the_counting_server_counts_each_response_and_its_bytes(dist_dir):
    server, traffic, url = bench.make_counting_server(dist_dir)
    try:
        with urllib.request.urlopen(url + "runtime.json") as response:
            body = response.read()
            etag = response.headers["ETag"]
        first = traffic.snapshot()
        assert first["requests"] == 1 and first["bytes"] > len(body)
        traffic.reset()
        request = urllib.request.Request(url + "runtime.json", headers={"If-None-Match": etag})
        try:
            urllib.request.urlopen(request)
        except urllib.error.HTTPError as error:
            assert error.code == 304
        again = traffic.snapshot()
        assert again["requests"] == 1 and 0 < again["bytes"] < first["bytes"]
    finally:
        server.shutdown()
        server.server_close()


def test_each_server_has_served_its_page_once_before_the_rounds(dist_dir):
    """The server's one-off work for a page (composing its policy) falls outside every measured visit."""
    server, traffic, url = bench.make_counting_server(dist_dir)
    try:
        bench.warm_server(url)
        served = traffic.snapshot()
        assert served["requests"] == 1 and served["bytes"] > (dist_dir / "index.html").stat().st_size
    finally:
        server.shutdown()
        server.server_close()


def test_the_summary_flattens_boot_steps_and_judges_the_targets():
    assert bench.flatten_steps({"core": 900, "imports": {"numpy": 200}, "ok": True}) == \
        {"core": 900, "imports.numpy": 200}
    assert bench.ratio(500, 1000) == "0.50×" and bench.ratio(None, 1000) == "—" and bench.ratio(1, 0) == "—"
    assert bench.median([3, None, 1, 2]) == 2 and bench.median([None]) is None
    visits = [{"warm": {"boot": {"timings": {"snapshot": {"source": source}}}}} for source in ("kept", "download", "kept")]
    visits.append({"warm": {"boot": {}}})
    visits.append({"warm": {"boot": {"timings": {"snapshot": {"used": True}}}}})
    assert bench.count_snapshot_sources(visits, "warm") == "download ×2, kept ×2, ninguna ×1"


def test_the_packages_source_of_each_visit_is_counted():
    visits = [{"warm": {"boot": {"timings": {"packagesCopy": {"source": source}}}}} for source in ("kept", "download", "kept")]
    visits.append({"warm": {"boot": {}}})  # a deck from before the device's copy of the packages
    assert bench.count_packages_sources(visits, "warm") == "download ×2, kept ×2"


def test_the_pyodide_timing_starts_from_the_workers_own_warmup():
    imports, cell = bench.read_worker_warmup()
    assert imports.index("dpdeck.classroom.cellrun") < imports.index("matplotlib.pyplot")
    assert "plt.subplots()" in cell and r"$\varepsilon = 1$" in cell
    compile(cell, "<arranque>", "exec")
    assert cell.index("plt.subplots()") < cell.index("draw_warmup_figure()")
    worker = ('export const WARM_IMPORTS = ["numpy"];\nexport const WARMUP_CELL = `\nx = r"\\\\alpha"\n`;\n'
              'export const PYPLOT_CELL = `\nimport math\n`;\n')
    assert bench.read_worker_warmup(worker) == (["numpy"], '\nimport math\n\nx = r"\\alpha"\n')


def print_cell_times(title: str, rows: list[tuple[str, str]]) -> None:
    print(f"\n{title}")
    for cell_id, shown in rows:
        print(f"  {cell_id:28} {shown}")


def test_every_cell_is_timed_natively(dist_dir, capsys):
    # A benchmark figure to read, never a limit: the table is printed, the test checks each cell was timed.
    cells = bench.read_cells(dist_dir)
    # One timed run after the first: the benchmark (build.py bench) takes the median of NATIVE_REPEATS.
    times = bench.time_cells_natively(cells, repeats=1)
    assert list(times) == [cell["id"] for cell in cells]
    assert all(entry["wall"] > 0 and entry["cpu"] >= 0 for entry in times.values())
    with capsys.disabled():
        print_cell_times("Tiempo nativo de cada celda (run_cell en caliente, una vez; CPU y reloj)",
                         [(cell_id, f"CPU {entry['cpu']:.3f} s  reloj {entry['wall']:.3f} s") for cell_id, entry in
                          sorted(times.items(), key=lambda item: -item[1]["cpu"])])


def test_cells_are_timed_in_the_decks_pyodide_under_node(dist_dir, capsys):
    cells = [cell for cell in bench.read_cells(dist_dir) if cell["id"] in ("censo", "densidades-laplace")]
    cells.append({"id": "falla", "source": "1 / 0"})
    times = bench.time_cells_in_pyodide(dist_dir, cells, repeats=1)
    assert {cell_id: entry["status"] for cell_id, entry in times.items()} == {
        "censo": "done", "densidades-laplace": "done", "falla": "error"}
    assert all(entry["wall"] > 0 and entry["cpu"] > 0 and entry["first"] > 0 for entry in times.values())
    with capsys.disabled():
        print_cell_times("En Pyodide bajo Node (CPU, después del arranque del worker)",
                         [(cell_id, f"{entry['cpu']:.3f} s") for cell_id, entry in times.items()])
