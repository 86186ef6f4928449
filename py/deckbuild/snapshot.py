"""Python's memory snapshot for the browser, taken at build time by Pyodide 0.27.7 itself.

Stage: the deck's shipped Pyodide (out/pyodide/: core, compiled wheels) and
the compiled dpdeck wheel → out/pyodide/python-snapshot.bin (gzip) and the
list of extension modules it needs placed again, which runtime.json carries
to the worker (deck/js/worker/snapshot.js says how a restore works). The snapshot is
taken by `js/snapshot.mjs` under Node, after the same installs, imports and
warm-up figure the worker does; restoring it skips them all.

The output is derived from files the build verified: cached under
`.cache/snapshots/<key>/`, where the key hashes every input (the shipped
Pyodide files, each wheel, the programs that take it), and checked against
its recorded SHA-256 on every hit. `--no-snapshot` builds a deck without one:
the worker then boots Python from scratch, as it also does whenever a
snapshot cannot be restored.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .commands import NODE_SCRIPTS, make_node_environment, run_command
from .errors import BuildError
from .files import ensure_dir, hash_file, lookup_verified, store_verified
from .paths import CACHE, ROOT, display_path, locate_npm_package
from .pyodide import ShippedPyodide, make_integrity

SNAPSHOT_FILE = "python-snapshot.bin"
# Beside the snapshot in its cache entry: {libraries, memorySha256} (what runtime.json says of it).
DESCRIPTION_FILE = "snapshot.json"
NODE_PROGRAM = NODE_SCRIPTS / "snapshot.mjs"
DECK_SCRIPTS = ROOT / "deck" / "js" / "worker"
# The worker's own modules the snapshot is taken with: part of the cache key.
DECK_MODULES = ("wheels.js", "snapshot.js", "warmup.js")
# The shipped Pyodide files the snapshot's interpreter starts from.
PYODIDE_FILES = ("pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
CACHE_VERSION = b"dpdeck-snapshot-v2"


@dataclass(frozen=True)
class Snapshot:
    """The shipped snapshot, as runtime.json describes it."""

    file: str               # relative to out/
    integrity: str          # Subresource Integrity of the compressed file
    size: int               # bytes downloaded
    memory_size: int        # bytes once inflated (Pyodide's snapshot: header and memory)
    memory_integrity: str   # Subresource Integrity of the inflated bytes (a device's kept copy must match)
    libraries: list[dict]   # [{file, path, memoryBase, tableBase}] in load order

    def describe(self) -> dict:
        return {"file": self.file, "integrity": self.integrity, "size": self.memory_size,
                "memoryIntegrity": self.memory_integrity, "libraries": self.libraries}


def list_wheels(out: Path, pyodide: ShippedPyodide, wheel: Path) -> list[Path]:
    """The wheels in the order the worker installs them: the boot's, then dpdeck's."""
    return [out / entry["file"] for entry in pyodide.preload] + [wheel]


def make_cache_key(pyodide_folder: Path, wheels: list[Path], pyodide_module: Path) -> str:
    """Everything the snapshot depends on, hashed."""
    digest = hashlib.sha256(CACHE_VERSION)
    inputs = [pyodide_folder / name for name in PYODIDE_FILES] + wheels
    programs = [pyodide_module, NODE_PROGRAM] + [DECK_SCRIPTS / name for name in DECK_MODULES]
    for path in inputs + programs:
        digest.update(f"{path.name}\0{hash_file(path)}\n".encode())
    return digest.hexdigest()


def lookup_snapshot(entry: Path) -> tuple[Path, dict] | None:
    """The cached snapshot and its description, both checked against their recorded SHA-256; damage drops the entry."""
    paths, damaged = lookup_verified(entry, (SNAPSHOT_FILE, DESCRIPTION_FILE))
    if damaged:
        print(f"  ! {display_path(entry)} está dañada; se vuelve a tomar la instantánea", flush=True)
    if paths is None:
        return None
    return paths[0], json.loads(paths[1].read_text(encoding="utf-8"))


def store_snapshot(entry: Path, produced: Path, libraries: list[dict]) -> Path:
    """Move a fresh snapshot and its description into their cache entry, each with its SHA-256.

    The inflated memory's SHA-256 is computed here, once per snapshot taken,
    not on every build that reuses it.
    """
    described = produced.with_name(DESCRIPTION_FILE)
    description = {"libraries": libraries, "memorySha256": hash_inflated(produced)}
    described.write_text(json.dumps(description, indent=1) + "\n", encoding="utf-8")
    return store_verified(entry, {SNAPSHOT_FILE: produced, DESCRIPTION_FILE: described})[0]


def run_snapshot_program(pyodide_folder: Path, wheels: list[Path], pyodide_module: Path, scratch: Path) -> tuple[Path, dict]:
    """One Node process: Pyodide starts, installs the wheels, warms up and writes its memory."""
    output = scratch / SNAPSHOT_FILE
    job = {"pyodideModule": str(pyodide_module), "indexURL": f"{pyodide_folder}/", "deckScripts": str(DECK_SCRIPTS),
           "wheels": [str(path) for path in wheels], "output": str(output)}
    job_path, report_path = scratch / "job.json", scratch / "report.json"
    job_path.write_text(json.dumps(job), encoding="utf-8")
    # The same environment on every machine (time zone, locale): the snapshot holds what Python read of it.
    run_command(["node", NODE_PROGRAM, job_path, report_path], what="Pyodide (node) tomando la instantánea de Python",
                capture=True, env=make_node_environment())
    return output, json.loads(report_path.read_text(encoding="utf-8"))


def measure_inflated(path: Path) -> int:
    """The size of a gzip file once inflated (ISIZE, RFC 1952 2.3.1: the last four bytes, modulo 2**32)."""
    with path.open("rb") as file:
        file.seek(-4, os.SEEK_END)
        return int.from_bytes(file.read(4), "little")


def hash_inflated(path: Path) -> str:
    """The SHA-256 (hex) of a gzip file's inflated bytes, read a megabyte at a time."""
    digest = hashlib.sha256()
    with gzip.open(path, "rb") as file:
        while chunk := file.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def take_snapshot(out: Path, pyodide: ShippedPyodide, wheel: Path, *, cache: Path | None = None) -> Snapshot:
    """out/pyodide/python-snapshot.bin, from the cache or taken now; return what runtime.json says of it."""
    pyodide_folder = out / "pyodide"
    pyodide_module = locate_npm_package("pyodide") / "pyodide.mjs"
    wheels = list_wheels(out, pyodide, wheel)
    cache = cache or CACHE / "snapshots"
    entry = cache / make_cache_key(pyodide_folder, wheels, pyodide_module)
    cached = lookup_snapshot(entry)
    if cached is None:
        ensure_dir(cache)
        with tempfile.TemporaryDirectory(prefix="instantanea-", dir=cache) as folder:
            produced, report = run_snapshot_program(pyodide_folder, wheels, pyodide_module, Path(folder))
            if not report["libraries"]:
                raise BuildError("la instantánea no registró ninguna biblioteca de numpy o matplotlib")
            store_snapshot(entry, produced, report["libraries"])
        cached = lookup_snapshot(entry)
        if cached is None:
            raise BuildError(f"la instantánea recién tomada en {display_path(entry)} no se puede leer")
    path, description = cached
    target = pyodide_folder / SNAPSHOT_FILE
    shutil.copyfile(path, target)
    return Snapshot(file=f"{pyodide_folder.name}/{SNAPSHOT_FILE}", integrity=make_integrity(hash_file(target)),
                    size=target.stat().st_size, memory_size=measure_inflated(target),
                    memory_integrity=make_integrity(description["memorySha256"]),
                    libraries=description["libraries"])
