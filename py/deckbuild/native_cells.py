"""Runs slide cells with native Python for the pre-render (a program, not a module to import).

    python -m deckbuild.native_cells JOBS.json RESULTS.jsonl

JOBS.json: [{"key", "id", "source"}, …]. For each job it appends to RESULTS.jsonl
a line {"start": key} before running and {"key", "result"} after, so that a crash
or a time-out names the cell that was running. Figures travel as base64.
"""

from __future__ import annotations

import base64
import json
import sys

from dpdeck import protocol
from dpdeck.cellrun import run_cell


def main(jobs_path: str, results_path: str) -> None:
    with open(jobs_path, encoding="utf-8") as handle:
        jobs = json.load(handle)
    with open(results_path, "a", encoding="utf-8") as results:
        for job in jobs:
            results.write(json.dumps({"start": job["key"]}) + "\n")
            results.flush()
            outcome = run_cell(job["source"], cell_id=job["id"])
            for output in outcome.get("outputs", []):
                if output.get("type") == protocol.OUTPUT.FIGURE:
                    output["data"] = base64.b64encode(output["data"]).decode("ascii")
            results.write(json.dumps({"key": job["key"], "result": outcome}) + "\n")
            results.flush()


if __name__ == "__main__":
    main(*sys.argv[1:3])
