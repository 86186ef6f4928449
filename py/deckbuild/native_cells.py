"""Runs slide cells with native Python for the pre-render (a program, not a module to import).

    python -m deckbuild.native_cells JOBS.json RESULTS.jsonl

JOBS.json: [{"key", "id", "source"}, …]. For each job it appends to RESULTS.jsonl
a line {"start": key} before running and {"key", "result"} after, so that the
build can hold each cell to its own time limit and name the cell that was
running when the process died. Figures travel as base64.

The build starts it in a fixed environment (deckbuild.prerender); what the
environment cannot fix is fixed here, before the first cell: matplotlib's
settings are its own defaults (no matplotlibrc of the machine or the user) and
its only fonts are the ones it ships (DejaVu), never a font installed on the
machine, so a figure is the same wherever the deck is built.
"""

from __future__ import annotations

import base64
import json
import os
import sys
from pathlib import Path


def use_matplotlib_defaults_and_fonts() -> None:
    """matplotlib's own defaults, and only the fonts in its mpl-data folder."""
    import matplotlib
    from matplotlib import font_manager

    matplotlib.rcdefaults()
    matplotlib.use("Agg")
    shipped = Path(matplotlib.get_data_path()) / "fonts"
    manager = font_manager.fontManager
    manager.ttflist, manager.afmlist = [], []
    for path in sorted([*(shipped / "ttf").glob("*.ttf"), *(shipped / "afm").glob("*.afm"),
                        *(shipped / "pdfcorefonts").glob("*.afm")]):
        manager.addfont(str(path))
    # Any lookup made while importing used the machine's list: forget it.
    clear = getattr(getattr(manager, "_findfont_cached", None), "cache_clear", None)
    if clear is not None:
        clear()


def main(jobs_path: str, results_path: str) -> None:
    use_matplotlib_defaults_and_fonts()

    from dpdeck.classroom import protocol
    from dpdeck.classroom.cellrun import run_cell

    with open(jobs_path, encoding="utf-8") as handle:
        jobs = json.load(handle)
    with open(results_path, "a", encoding="utf-8") as results:
        for job in jobs:
            results.write(json.dumps({"start": job["key"]}) + "\n")
            results.flush()
            try:
                outcome = run_cell(job["source"], cell_id=job["id"])
            except Exception as error:   # run_cell failed itself (a figure too big to draw…)
                message = f"No se pudo recoger lo que hizo la celda: {type(error).__name__}: {error}"
                outcome = {"status": protocol.RUN_STATUS.ERROR,
                           "outputs": [{"type": protocol.OUTPUT.ERROR, "ename": "", "evalue": message,
                                        "traceback": message}]}
            for output in outcome.get("outputs", []):
                if output.get("type") == protocol.OUTPUT.FIGURE:
                    output["data"] = base64.b64encode(output["data"]).decode("ascii")
            results.write(json.dumps({"key": job["key"], "result": outcome}) + "\n")
            results.flush()
    sys.stdout.flush()
    sys.stderr.flush()
    # A thread a cell left running must not keep the process (and the build) waiting.
    os._exit(0)


if __name__ == "__main__":
    main(*sys.argv[1:3])
