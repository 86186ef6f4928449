"""Python's memory snapshot for the browser, taken at build time by Pyodide 0.27.7 itself.

Stage: the deck's shipped Pyodide (out/pyodide/: core, compiled wheels) and
the compiled dpdeck wheel → out/pyodide/python-snapshot.bin (gzip) and the
list of extension modules it needs placed again, which runtime.json carries
to the worker (deck/js/worker/snapshot.js says how a restore works). The snapshot is
taken by `js/snapshot.mjs` under Node, after the same installs, imports and
warm-up figure the worker does; restoring it skips them all. The shipped
file holds the interpreter's data segment XOR-ed out (wasmdata.py): those
bytes come with pyodide.asm.wasm, and the worker puts them back.

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
import zipfile
from dataclasses import dataclass
from pathlib import Path

from .commands import NODE_SCRIPTS, make_node_environment, run_command
from .errors import BuildError
from .files import ensure_dir, hash_file, lookup_verified, store_verified
from .paths import CACHE, ROOT, display_path, locate_npm_package
from .pyodide import ShippedPyodide, make_integrity
from .wasmdata import MainData, read_main_data

SNAPSHOT_FILE = "python-snapshot.bin"
# The libraries a restore places, alone: what a restored boot needs of the wheels before «Python listo».
LIBRARIES_FILE = "python-libraries.zip"
# The files the first figure reads (matplotlib's fonts), alone: what a cell waits for after «Python listo».
FIGURE_FILES_FILE = "python-figure-files.zip"
# The core files a restored boot downloads (the standard library's zip comes after «Python listo»).
RESTORE_CORE = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "pyodide-lock.json")
FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)
# Beside the snapshot in its cache entry: {libraries, table, figureFiles, memorySha256} (what runtime.json says of it).
DESCRIPTION_FILE = "snapshot.json"
NODE_PROGRAM = NODE_SCRIPTS / "snapshot.mjs"
DECK_SCRIPTS = ROOT / "deck" / "js" / "worker"
# The worker's own modules the snapshot is taken with: part of the cache key.
DECK_MODULES = ("wheels.js", "snapshot.js", "functiontable.js", "warmup.js")
# The shipped Pyodide files the snapshot's interpreter starts from.
PYODIDE_FILES = ("pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json")
CACHE_VERSION = b"dpdeck-snapshot-v5"
# Pyodide 0.27.7's snapshot (API.makeSnapshot): 32-bit words, the second of which is where the memory starts.
SNAPSHOT_HEADER = {"MEMORY_OFFSET_AT": 4}
# At least this share of the data segment is still as instantiation wrote it (measured: 97 %); less means a
# wrong address, and the build stops rather than ship a snapshot that compresses worse.
MAIN_DATA_MIN_UNCHANGED = 0.5
GZIP_LEVEL = 9


@dataclass(frozen=True)
class Snapshot:
    """The shipped snapshot, as runtime.json describes it."""

    file: str               # relative to out/
    integrity: str          # Subresource Integrity of the compressed file
    size: int               # bytes downloaded
    memory_size: int        # bytes once inflated (Pyodide's snapshot: header and memory)
    memory_integrity: str   # Subresource Integrity of the inflated bytes (a device's kept copy must match)
    libraries: list[dict]   # [{file, path, memoryBase, tableBase, tableSize}] in load order
    table: dict             # {length, got}: the table of functions once they are placed (functiontable.js)
    main_data: dict         # {address, offset, size, integrity}: the interpreter's data, XOR-ed out of the file
    libraries_file: str     # the libraries to place, alone in one zip (relative to out/)
    libraries_integrity: str
    figure_files: list[str]  # the files drawing a figure reads (paths in site-packages)
    figure_files_file: str   # those files alone in one zip (relative to out/)
    figure_files_integrity: str
    boot_bytes: int         # what a restored boot downloads before «Python listo»: core, libraries, snapshot

    def describe(self) -> dict:
        return {"file": self.file, "integrity": self.integrity, "size": self.memory_size,
                "memoryIntegrity": self.memory_integrity, "libraries": self.libraries, "table": self.table,
                "librariesFile": self.libraries_file, "librariesIntegrity": self.libraries_integrity,
                "figureFiles": self.figure_files, "figureFilesFile": self.figure_files_file,
                "figureFilesIntegrity": self.figure_files_integrity, "mainData": self.main_data}


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


def store_snapshot(entry: Path, produced: Path, libraries: list[dict], table: dict,
                   figure_files: list[str], main: MainData) -> Path:
    """Move a fresh snapshot (as Pyodide gave it), encoded (encode_snapshot) and compressed, and its description
    into their cache entry, each with its SHA-256.

    The inflated memory's SHA-256 (of the snapshot as Python is restored from
    it) and the encoding are computed here, once per snapshot taken, not on
    every build that reuses it.
    """
    described = produced.with_name(DESCRIPTION_FILE)
    memory = bytearray(produced.read_bytes())
    memory_sha256 = hashlib.sha256(memory).hexdigest()
    main_data = encode_snapshot(memory, main)
    produced.write_bytes(gzip.compress(memory, compresslevel=GZIP_LEVEL, mtime=0))
    description = {"libraries": libraries, "table": table, "figureFiles": figure_files,
                   "memorySha256": memory_sha256, "mainData": main_data}
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


def encode_snapshot(memory: bytearray, main: MainData) -> dict:
    """XOR the interpreter's data segment out of `memory` (a snapshot, inflated), in place; return where it was.

    encoded[offset + i] = memory[offset + i] ^ data[i], offset = the header's
    length + the segment's address: the bytes still as instantiation wrote
    them become zeros, which gzip sends almost for free (12.2 → 10.7 MB). The
    worker applies the same XOR with the bytes its own instantiation wrote
    (deck/js/worker/snapshot.js, decodeMainData), after checking them against
    `integrity`.
    """
    at = SNAPSHOT_HEADER["MEMORY_OFFSET_AT"]
    offset = int.from_bytes(memory[at:at + 4], "little") + main.address
    size = len(main.data)
    if offset + size > len(memory):
        raise BuildError(f"el segmento de datos del intérprete ({size} bytes en {main.address}) no cabe en la instantánea")
    xored = (int.from_bytes(memory[offset:offset + size], "little") ^ int.from_bytes(main.data, "little"))
    encoded = xored.to_bytes(size, "little")
    unchanged = encoded.count(0) / size
    if unchanged < MAIN_DATA_MIN_UNCHANGED:
        raise BuildError(f"solo el {unchanged:.0%} del segmento de datos del intérprete coincide con la instantánea "
                         f"en la dirección {main.address}: ¿otro Pyodide?")
    memory[offset:offset + size] = encoded
    return {"address": main.address, "offset": offset, "size": size,
            "integrity": make_integrity(hashlib.sha256(main.data).hexdigest())}


def measure_inflated(path: Path) -> int:
    """The size of a gzip file once inflated (ISIZE, RFC 1952 2.3.1: the last four bytes, modulo 2**32)."""
    with path.open("rb") as file:
        file.seek(-4, os.SEEK_END)
        return int.from_bytes(file.read(4), "little")


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
            main = read_main_data(pyodide_folder / "pyodide.asm.wasm", pyodide_folder / "pyodide.asm.js")
            store_snapshot(entry, produced, report["libraries"], report["table"], report["figureFiles"], main)
        cached = lookup_snapshot(entry)
        if cached is None:
            raise BuildError(f"la instantánea recién tomada en {display_path(entry)} no se puede leer")
    path, description = cached
    target = pyodide_folder / SNAPSHOT_FILE
    shutil.copyfile(path, target)
    libraries = write_files(pyodide_folder / LIBRARIES_FILE, wheels, [entry["file"] for entry in description["libraries"]])
    figure_files = write_files(pyodide_folder / FIGURE_FILES_FILE, wheels, description["figureFiles"])
    boot_bytes = sum((pyodide_folder / name).stat().st_size for name in RESTORE_CORE)
    return Snapshot(file=f"{pyodide_folder.name}/{SNAPSHOT_FILE}", integrity=make_integrity(hash_file(target)),
                    size=target.stat().st_size, memory_size=measure_inflated(target),
                    memory_integrity=make_integrity(description["memorySha256"]),
                    libraries=description["libraries"], table=description["table"],
                    main_data=description["mainData"],
                    libraries_file=f"{pyodide_folder.name}/{LIBRARIES_FILE}",
                    libraries_integrity=make_integrity(hash_file(libraries)),
                    figure_files=description["figureFiles"],
                    figure_files_file=f"{pyodide_folder.name}/{FIGURE_FILES_FILE}",
                    figure_files_integrity=make_integrity(hash_file(figure_files)),
                    boot_bytes=boot_bytes + libraries.stat().st_size + target.stat().st_size)


def write_files(target: Path, wheels: list[Path], files: list[str]) -> Path:
    """The `files` (paths in site-packages: the libraries, or the figure files), taken from the wheels, alone in one zip.

    Reproducible: fixed dates, deflated, in their order. A restored boot
    unpacks them (deck/js/worker/wheels.js) instead of the 15 MB of wheels
    they come in.
    """
    found = {}
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as opened:
            for name in opened.namelist():
                if name in files:
                    found[name] = opened.read(name)
    missing = [name for name in files if name not in found]
    if missing:
        raise BuildError(f"la instantánea necesita archivos que no están en ninguna rueda: {', '.join(missing)}")
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name in files:
            info = zipfile.ZipInfo(name, FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, found[name])
    return target
