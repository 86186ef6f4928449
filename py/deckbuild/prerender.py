"""Every cell run with native Python (dpdeck.cellrun.run_cell), its output embedded in the page.

Stage: `Deck.cells` → `Prerendered` (each cell's outputs, figures written to
out/figures/ by content hash). Outcomes are cached in .cache/prerender/ under a
key that hashes the cell's id and code, py/dpdeck/ and the census; each entry
starts with the SHA-256 of its content and is re-verified on every hit.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dpdeck import protocol

from .errors import BuildError
from .files import ensure_dir, hash_bytes, write_atomically
from .paths import CACHE, CENSUS, PY_PACKAGE, ROOT, display_path
from .slides import Cell, Deck

SECONDS_PER_CELL = 120


@dataclass(frozen=True)
class CellOutcome:
    """A cell with what it printed and drew when run natively."""

    cell: Cell
    # cellrun's outputs; a figure carries "src" (its file under dist/) instead of its PNG bytes.
    outputs: tuple[dict, ...]


@dataclass(frozen=True)
class Prerendered:
    outcomes: dict[str, CellOutcome]   # by cell id, in reading order
    cache_hits: int


def hash_package_code() -> str:
    """Hash of what a cell's output depends on besides its source."""
    # v2: each entry starts with the SHA-256 of its content (see read_cached_outcome).
    digest = hashlib.sha256(b"dpdeck-prerender-v2\0")
    for path in sorted([*PY_PACKAGE.glob("*.py"), *PY_PACKAGE.glob("*.json")]):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(b"censo.csv\0" + CENSUS.read_bytes())
    return digest.hexdigest()


def make_cell_cache_key(cell: Cell, package_digest: str) -> str:
    return hash_bytes(f"{package_digest}\0{cell.id}\0{cell.source}".encode())


def run_cells_natively(jobs: list[dict], cells_by_key: dict[str, Cell]) -> dict[str, dict]:
    """Run uncached cells in one Python process (matplotlib imported once)."""
    if not (PY_PACKAGE / "cellrun.py").exists():
        first = cells_by_key[jobs[0]["key"]]
        raise BuildError(f"{first.where()}: no se puede pre-calcular la celda: falta py/dpdeck/cellrun.py")
    with tempfile.TemporaryDirectory(prefix="dpdeck-cells-") as folder:
        jobs_file, results_file = Path(folder) / "jobs.json", Path(folder) / "results.jsonl"
        jobs_file.write_text(json.dumps(jobs), encoding="utf-8")
        results_file.write_text("", encoding="utf-8")
        work = ensure_dir(Path(folder) / "work")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "py"),
                                                                         os.environ.get("PYTHONPATH")])),
               "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
        timeout = 60 + SECONDS_PER_CELL * len(jobs)
        command = [sys.executable, "-m", "deckbuild.native_cells", str(jobs_file), str(results_file)]
        try:
            process = subprocess.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
            failure = None if process.returncode == 0 else (process.stderr.strip() or
                                                            f"código de salida {process.returncode}")
        except subprocess.TimeoutExpired:
            failure = f"tardó más de {timeout} s"
        results, running = {}, None
        for line in results_file.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if "start" in record:
                running = record["start"]
            else:
                results[record["key"]] = record["result"]
                running = None
        if failure:
            key = running or jobs[0]["key"]
            raise BuildError(f"{cells_by_key[key].where()}: el pre-cálculo de la celda "
                             f"«{cells_by_key[key].id}» se interrumpió: {failure}")
    return results


def write_cached_outcome(path: Path, outcome: dict) -> None:
    """Store a cell's outcome after a line with the SHA-256 of what follows."""
    body = json.dumps(outcome).encode()
    write_atomically(path, hash_bytes(body).encode() + b"\n" + body)


def read_cached_outcome(path: Path) -> dict | None:
    """A cached outcome, re-verified against its SHA-256 line; a damaged entry is dropped."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest, _, body = data.partition(b"\n")
    try:
        if hash_bytes(body) == digest.decode("ascii"):
            return json.loads(body)
    except ValueError:
        pass
    print(f"  ! {display_path(path)} está dañado; se descarta", flush=True)
    path.unlink(missing_ok=True)
    return None


def check_cell_outcome(cell: Cell, outcome: dict) -> None:
    """A cell must finish without an error and draw the figures it declares."""
    errors = [output for output in outcome.get("outputs", []) if output.get("type") == protocol.OUTPUT.ERROR]
    if outcome.get("status") != protocol.RUN_STATUS.DONE or errors:
        detail = ""
        if errors:
            error = errors[0]
            detail = f": {error.get('ename')}: {error.get('evalue')}"
            trace = (error.get("traceback") or "").strip()
            if trace:
                detail += "\n" + "\n".join("    " + line for line in trace.splitlines())
        raise BuildError(f"{cell.where()}: la celda «{cell.id}» falló al ejecutarse{detail}")
    drawn = sum(1 for output in outcome["outputs"] if output.get("type") == protocol.OUTPUT.FIGURE)
    if drawn != cell.figures:
        raise BuildError(f"{cell.where()}: la celda «{cell.id}» dibuja {drawn} figura(s) "
                         f"pero declara figures={cell.figures}")


def write_figure(output: dict, out: Path) -> dict:
    """Write a figure's PNG under out/figures/ by content hash; return the output pointing at it."""
    data = base64.b64decode(output["data"])
    name = f"{hash_bytes(data)[:16]}.png"
    target = out / "figures" / name
    if not target.exists():
        ensure_dir(target.parent)
        target.write_bytes(data)
    placed = {key: value for key, value in output.items() if key != "data"}
    placed["src"] = f"figures/{name}"
    return placed


def prerender_cells(deck: Deck, out: Path, keep_going: bool = False) -> Prerendered:
    """Run (or take from the cache) every cell and write its figures into out/."""
    cache = ensure_dir(CACHE / "prerender")
    digest = hash_package_code() if deck.cells else ""
    cells_by_key = {make_cell_cache_key(cell, digest): cell for cell in deck.cells}
    results, jobs = {}, []
    for key, cell in cells_by_key.items():
        cached = read_cached_outcome(cache / f"{key}.json")
        if cached is None:
            jobs.append({"key": key, "id": cell.id, "source": cell.source})
        else:
            results[key] = cached
    if jobs:
        fresh = run_cells_natively(jobs, cells_by_key)
        for job in jobs:
            outcome = fresh[job["key"]]
            results[job["key"]] = outcome
            if outcome.get("status") == protocol.RUN_STATUS.DONE:
                write_cached_outcome(cache / f"{job['key']}.json", outcome)
    outcomes = {}
    for key, cell in cells_by_key.items():
        outcome = results[key]
        try:
            check_cell_outcome(cell, outcome)
        except BuildError as error:
            if not keep_going:
                raise
            print(f"  ! {str(error).splitlines()[0]}", flush=True)
        outputs = tuple(write_figure(output, out) if output.get("type") == protocol.OUTPUT.FIGURE else output
                        for output in outcome["outputs"])
        outcomes[cell.id] = CellOutcome(cell, outputs)
    return Prerendered(outcomes, len(cells_by_key) - len(jobs))
