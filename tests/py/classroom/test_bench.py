"""Tests of dpdeck.classroom.bench: the benchmark covers every lab step and every figure (times are never asserted)."""

from __future__ import annotations

import subprocess
import sys

from dpdeck import figures, figures_federated, lab
from dpdeck.classroom import bench


def test_lab_timings_cover_every_step_and_the_total():
    rows = bench.collect_lab_timings(repeats=1)
    names = [row["name"] for row in rows]
    assert names == [name for name, _ in lab.STEPS] + ["run_lab (total)"]
    assert all(len(row["timing"]["runs"]) == 1 for row in rows)


def test_every_plot_function_is_discovered():
    discovered = dict(bench.discover_figures())
    public = {name for module in (figures, figures_federated) for name in dir(module)
              if name.startswith("plot_") and callable(getattr(module, name))}
    assert set(discovered) == public and public
    for name, demo in discovered.items():
        assert demo is None or callable(demo), name


def test_table_marks_unmeasured_rows():
    timing = bench.time_call(lambda: None, repeats=3)
    assert len(timing["runs"]) == 3 and timing["min"] <= timing["median"]
    table = bench.format_table([
        {"group": "figuras", "name": "plot_x", "timing": None, "note": "sin ejemplo"},
        {"group": "datos", "name": "leer", "timing": timing, "note": ""},
    ])
    lines = table.splitlines()
    assert lines[0].split()[:2] == ["grupo", "medición"]
    assert "—" in lines[2] and "sin ejemplo" in lines[2]


def test_command_line_prints_a_table():
    completed = subprocess.run([sys.executable, "-m", "dpdeck.classroom.bench", "--repeats", "1", "--no-figures"],
                               capture_output=True, text=True, encoding="utf-8")
    assert completed.returncode == 0, completed.stderr
    assert "run_lab (total)" in completed.stdout and "load_census() (con caché)" in completed.stdout
