"""Every cell run with native Python (dpdeck.classroom.cellrun.run_cell), its output embedded in the page.

Stage: `Deck.cells` → `Prerendered` (each cell's outputs, figures written to
out/figures/ by content hash). Outcomes are cached in .cache/prerender/ under a
key that hashes the cell's id and code, py/dpdeck/, the census and the Python
environment that ran it (every installed package's version, the Python, this
runner); each entry starts with the SHA-256 of its content and is re-verified
on every hit.

Cells run in a child process (deckbuild.native_cells) whose environment is
made here from nothing, so the outputs do not depend on the machine or the
person building: no variable of the caller's passes (HOME, XDG_*, LANG, TZ,
MPLBACKEND, MATPLOTLIBRC, PYTHONHASHSEED, PYTHONSTARTUP…), one BLAS thread,
and numpy on its baseline instructions, since its AVX2/AVX-512 kernels for exp,
log, tanh, power… round differently from one processor to another. Each cell
has its own time limit (`Cell.time_limit`); a cell that runs over it, or that
ends the process (`os._exit`, a crash), stops the build at its file and line.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.metadata
import json
import os
import platform
import signal
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from dpdeck.classroom import protocol

from .deckmodel import Cell, Deck
from .errors import BuildError
from .files import ensure_dir, hash_bytes, write_atomically
from .paths import CACHE, CENSUS, PY_PACKAGE, ROOT, display_path, list_package_files

# Importing numpy and matplotlib before the first cell, or exiting after the last one.
STARTUP_SECONDS = 120
POLL_SECONDS = 0.02
# Machine settings that keep OpenBLAS correct on some processors: they pass through.
MACHINE_SETTINGS = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
RUNNER = Path(__file__).with_name("native_cells.py")
STDERR_TAIL_LINES = 3
# Ancillary PNG chunks that carry text or a time, never pixels.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
PNG_METADATA_CHUNKS = (b"tEXt", b"zTXt", b"iTXt", b"tIME")


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
    # v3: the environment that runs the cells is part of the key.
    digest = hashlib.sha256(b"dpdeck-prerender-v3\0")
    for path in list_package_files():
        digest.update(path.relative_to(PY_PACKAGE).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(b"censo.csv\0" + CENSUS.read_bytes())
    digest.update(describe_cell_environment().encode())
    return digest.hexdigest()


def describe_cell_environment() -> str:
    """The Python that runs the cells: its version, machine, installed packages and this runner."""
    # Only what is installed (a package's vendored copies, such as setuptools', are no package of their own).
    installed = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    packages = sorted(f"{dist.metadata['Name']}=={dist.version}"
                      for dist in importlib.metadata.distributions(path=installed) if dist.metadata["Name"])
    runner = hash_bytes(RUNNER.read_bytes() + Path(__file__).read_bytes())
    return "\n".join([sys.version, platform.machine(), runner, *packages])


def list_numpy_dispatch_targets() -> str:
    """The instruction sets numpy picks at run time on top of its baseline (NPY_DISABLE_CPU_FEATURES)."""
    import numpy

    simd = numpy.show_config(mode="dicts").get("SIMD Extensions", {})
    return " ".join([*simd.get("found", []), *simd.get("not found", [])])


def make_cell_environment(work: Path) -> dict[str, str]:
    """The whole environment of the process that runs the cells (nothing inherited but MACHINE_SETTINGS)."""
    environment = {
        "PATH": os.defpath, "HOME": str(work), "TMPDIR": str(work),
        "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
        "PYTHONPATH": str(ROOT / "py"), "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONUTF8": "1", "PYTHONIOENCODING": "utf-8", "PYTHONNOUSERSITE": "1",
        "MPLBACKEND": "Agg", "MPLCONFIGDIR": str(ensure_dir(CACHE / "matplotlib")),
        "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
        "NPY_DISABLE_CPU_FEATURES": list_numpy_dispatch_targets(),
    }
    for name in MACHINE_SETTINGS:
        if name in os.environ:
            environment[name] = os.environ[name]
    return environment


def make_cell_cache_key(cell: Cell, package_digest: str) -> str:
    return hash_bytes(f"{package_digest}\0{cell.id}\0{cell.source}".encode())


def run_cells_natively(jobs: list[dict], cells_by_key: dict[str, Cell], keep_going: bool = False) -> dict[str, dict]:
    """Run uncached cells, each within its time limit; return their outcomes by key.

    One process runs the cells in order (matplotlib imported once). A cell that
    runs over its limit or ends the process stops the build at its file and
    line; with keep_going it gets an error outcome instead and a new process
    runs the cells after it.
    """
    if not (PY_PACKAGE / "classroom" / "cellrun.py").exists():
        first = cells_by_key[jobs[0]["key"]]
        raise BuildError(f"{first.where()}: no se puede pre-calcular la celda: falta py/dpdeck/classroom/cellrun.py")
    results: dict[str, dict] = {}
    pending = list(jobs)
    with tempfile.TemporaryDirectory(prefix="dpdeck-cells-") as folder:
        work = ensure_dir(Path(folder) / "work")
        environment = make_cell_environment(work)
        while pending:
            finished, failure = run_cell_batch(pending, Path(folder), work, environment, cells_by_key)
            results.update(finished)
            pending = [job for job in pending if job["key"] not in finished]
            if failure is None:
                break
            key, message = failure
            cell = cells_by_key[key or pending[0]["key"]]
            if key is None:
                raise BuildError(f"{cell.where()}: no se pudo pre-calcular la celda «{cell.id}»: {message}")
            if not keep_going:
                raise BuildError(f"{cell.where()}: la celda «{cell.id}» {message}")
            results[key] = make_failed_outcome(f"La celda {message}")
            pending = [job for job in pending if job["key"] != key]
    return results


def run_cell_batch(jobs: list[dict], folder: Path, work: Path, environment: dict,
                   cells_by_key: dict[str, Cell]) -> tuple[dict[str, dict], tuple[str | None, str] | None]:
    """One runner process over jobs: (finished outcomes, None or (key of the cell at fault, why))."""
    jobs_file, results_file, log_file = folder / "jobs.json", folder / "results.jsonl", folder / "stderr.txt"
    jobs_file.write_text(json.dumps(jobs), encoding="utf-8")
    results_file.write_bytes(b"")
    finished: dict[str, dict] = {}
    running, started, partial = None, time.monotonic(), b""
    with open(log_file, "wb") as log, open(results_file, "rb") as reader:
        process = subprocess.Popen([sys.executable, "-m", "deckbuild.native_cells", str(jobs_file), str(results_file)],
                                   cwd=work, env=environment, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                   start_new_session=True)
        try:
            while True:
                code = process.poll()
                lines = (partial + reader.read()).split(b"\n")
                partial = lines.pop()
                for line in lines:
                    try:
                        record = json.loads(line)
                    except ValueError:
                        return finished, (running, "dejó ilegible el registro de resultados del pre-cálculo")
                    if "start" in record:
                        running, started = record["start"], time.monotonic()
                    else:
                        finished[record["key"]] = record["result"]
                        running, started = None, time.monotonic()
                if code is not None:
                    if running is None and len(finished) == len(jobs):
                        return finished, None
                    return finished, (running, describe_exit(code, read_tail(log_file)))
                limit = cells_by_key[running].time_limit if running else STARTUP_SECONDS
                if time.monotonic() - started > limit:
                    if running is None:
                        return finished, (None, f"Python no respondió en {limit} s")
                    return finished, (running, f"tardó más de {limit} s y se detuvo: es el límite de cada "
                                               "celda (si de verdad necesita más, añade «timeout=SEGUNDOS» "
                                               "a su línea ```python)")
                time.sleep(POLL_SECONDS)
        finally:
            stop_process_group(process)


def stop_process_group(process: subprocess.Popen) -> None:
    """End the runner and anything a cell started from it."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    process.wait()


def describe_exit(code: int, stderr_tail: str) -> str:
    """Why the runner ended in the middle of a cell, in Spanish."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"{-code}"
        what = f"hizo que Python muriera por la señal {name}"
        if -code == signal.SIGSEGV:
            what += " (un fallo de segmentación: memoria dañada o una recursión demasiado profunda)"
        elif -code == signal.SIGKILL:
            what += " (¿se quedó sin memoria?)"
    else:
        what = f"terminó el proceso de Python (os._exit o similar, código {code}) antes de acabar"
    detail = f":\n{stderr_tail}" if stderr_tail and code != 0 else ""
    return f"{what}; su salida se perdió{detail}"


def read_tail(path: Path) -> str:
    """The last thing the runner wrote to stderr (its error line, not a whole traceback)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.startswith((" ", "\t"))]
    lines = [line for line in lines if not line.startswith("Traceback (most recent call last)")]
    return "\n".join("    " + line[:300] for line in lines[-STDERR_TAIL_LINES:])


def make_failed_outcome(message: str) -> dict:
    """What a cell that could not finish shows on the page under --keep-going."""
    return {"status": protocol.RUN_STATUS.ERROR,
            "outputs": [{"type": protocol.OUTPUT.ERROR, "ename": "", "evalue": message, "traceback": message}]}


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
            detail = f": {error.get('ename')}: {error.get('evalue')}" if error.get("ename") else f": {error.get('evalue')}"
            trace = (error.get("traceback") or "").strip()
            if trace and trace != error.get("evalue"):
                detail += "\n" + "\n".join("    " + line for line in trace.splitlines())
        raise BuildError(f"{cell.where()}: la celda «{cell.id}» falló al ejecutarse{detail}")
    drawn = sum(1 for output in outcome["outputs"] if output.get("type") == protocol.OUTPUT.FIGURE)
    if drawn != cell.figures:
        raise BuildError(f"{cell.where()}: la celda «{cell.id}» dibuja {drawn} figura(s) "
                         f"pero declara figures={cell.figures}")


def find_unwritable_character(outcome: dict) -> str | None:
    """A character of the outputs that UTF-8 cannot write (a lone surrogate such as "\\ud800"), if any."""
    for output in outcome.get("outputs", []):
        for value in output.values():
            if isinstance(value, str):
                try:
                    value.encode("utf-8")
                except UnicodeEncodeError as error:
                    return f"U+{ord(value[error.start]):04X}"
    return None


def check_outputs_are_writable(cell: Cell, outcome: dict, keep_going: bool) -> dict:
    """The page is UTF-8: an output with a lone surrogate stops the build (or becomes the cell's error)."""
    character = find_unwritable_character(outcome)
    if character is None:
        return outcome
    message = (f"escribe el carácter {character}, un sustituto suelto que no es texto Unicode válido "
               "y no se puede poner en la página (¿un chr() o un \\ud800 de más?)")
    if not keep_going:
        raise BuildError(f"{cell.where()}: la celda «{cell.id}» {message}")
    return make_failed_outcome(f"La celda {message}")


def strip_png_metadata(data: bytes) -> bytes:
    """The PNG without its text and time chunks: the same pixels give the same bytes."""
    if not data.startswith(PNG_SIGNATURE):
        return data
    kept, position = [PNG_SIGNATURE], len(PNG_SIGNATURE)
    while position + 12 <= len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        end = position + 12 + length
        if data[position + 4:position + 8] not in PNG_METADATA_CHUNKS:
            kept.append(data[position:end])
        position = end
    return b"".join(kept)


def write_figure(output: dict, out: Path) -> dict:
    """Write a figure's PNG under out/figures/ by content hash; return the output pointing at it."""
    data = strip_png_metadata(base64.b64decode(output["data"]))
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
        fresh = run_cells_natively(jobs, cells_by_key, keep_going)
        for job in jobs:
            outcome = check_outputs_are_writable(cells_by_key[job["key"]], fresh[job["key"]], keep_going)
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
