"""Bytecode for the browser, compiled at build time by Pyodide 0.27.7 itself.

Pyodide's standard library zip and its wheels carry only ``.py`` files, and Pyodide
never writes bytecode, so every boot compiles every module it imports. Here each
archive is compiled once, by the very interpreter that will run it (Pyodide
0.27.7 under Node: same CPython 3.12.7, same magic number), and the resulting
archives are shipped instead (see precompile_pyodide.py for what changes inside).

The inputs are verified before they get here (pin table, official lock); the
outputs are derived files: cached under ``.cache/precompiled/<key>/`` where the
key hashes everything an output depends on (the input's SHA-256, the options, the
compiling interpreter's files and this compiler's own source), re-verified
against their recorded SHA-256 on every hit, and listed with their new SHA-256
in the shipped lock and manifest.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
NODE_PROGRAM = HERE / "precompile_node.mjs"
PYODIDE_PROGRAM = HERE / "precompile_pyodide.py"
# Where Pyodide 0.27.7 puts things in the browser's file system.
STDLIB_PREFIX = "/lib/python312.zip"
SITE_PACKAGES = "/lib/python3.12/site-packages"
# The interpreter that compiles: its files are part of every cache key.
COMPILER_CORE = ("pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")
CACHE_VERSION = b"dpdeck-precompile-v1"
# Packages that must be loaded in the compiling Pyodide to build matplotlib's font list.
FONT_LIST_PACKAGES = ("matplotlib",)


class PrecompileError(Exception):
    """The compilation could not be done; the message says which archive and why."""


@dataclass(frozen=True)
class Archive:
    """One archive to compile: what it is, where it is and how to compile it."""

    file_name: str          # the name it is shipped under (unchanged by compiling)
    path: Path              # the verified input
    sha256: str             # the input's verified SHA-256
    kind: str               # "zip" (the standard library, imported from the zip) or "wheel"
    install_prefix: str     # where its files live in the browser (for tracebacks)
    keep_sources: bool = False
    font_list: bool = False  # replace matplotlib's fontlist.json (matplotlib's wheel only)


def hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hash_compiler(pyodide_folder: Path) -> str:
    """Digest of the compiling interpreter and of this compiler's own programs."""
    digest = hashlib.sha256(CACHE_VERSION)
    for name in COMPILER_CORE:
        digest.update(f"{name}\0{hash_file(pyodide_folder / name)}\0".encode())
    for program in (NODE_PROGRAM, PYODIDE_PROGRAM):
        digest.update(program.name.encode() + b"\0" + program.read_bytes() + b"\0")
    return digest.hexdigest()


def make_cache_key(archive: Archive, compiler_digest: str, font_inputs: str) -> str:
    """Everything one output depends on, hashed."""
    parts = [compiler_digest, archive.file_name, archive.sha256, archive.kind, archive.install_prefix,
             str(archive.keep_sources), font_inputs if archive.font_list else ""]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def lookup_cached(entry: Path, file_name: str) -> Path | None:
    """The cached output after re-verifying it against its recorded SHA-256; a damaged entry is dropped."""
    output, recorded = entry / file_name, entry / f"{file_name}.sha256"
    if not (output.is_file() and recorded.is_file()):
        return None
    if hash_file(output) == recorded.read_text().strip():
        return output
    print(f"  ! {output} está dañado; se vuelve a compilar", flush=True)
    shutil.rmtree(entry, ignore_errors=True)
    return None


def store_cached(entry: Path, file_name: str, produced: Path) -> Path:
    """Move a fresh output into its cache entry, with its SHA-256 beside it (temp dir, then rename)."""
    staging = entry.with_name(f"{entry.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    shutil.move(produced, staging / file_name)
    (staging / f"{file_name}.sha256").write_text(hash_file(staging / file_name) + "\n")
    shutil.rmtree(entry, ignore_errors=True)
    os.replace(staging, entry)
    return entry / file_name


def run_compiler(archives: list[Archive], outputs: dict[str, Path], *, pyodide_folder: Path,
                 lock: dict | None, package_files: dict[str, Path], scratch: Path) -> dict:
    """One Node process: Pyodide boots once and compiles every archive given."""
    request = {"indexURL": str(pyodide_folder) + "/", "lockFile": None, "packageFolder": None, "packages": [],
               "program": str(PYODIDE_PROGRAM), "jobs": []}
    if any(archive.font_list for archive in archives):
        if lock is None:
            raise PrecompileError("la lista de fuentes de matplotlib necesita el pyodide-lock.json oficial")
        folder = scratch / "packages"
        folder.mkdir()
        for file_name, path in package_files.items():
            os.symlink(path, folder / file_name)
        (folder / "pyodide-lock.json").write_text(json.dumps(lock), encoding="utf-8")
        request.update(lockFile=str(folder / "pyodide-lock.json"), packageFolder=str(folder) + "/",
                       packages=list(FONT_LIST_PACKAGES))
    for archive in archives:
        request["jobs"].append({"input": str(archive.path), "output": str(outputs[archive.file_name]),
                                "kind": archive.kind, "installPrefix": archive.install_prefix,
                                "keepSources": archive.keep_sources, "fontList": archive.font_list})
    jobs_path, report_path = scratch / "jobs.json", scratch / "report.json"
    jobs_path.write_text(json.dumps(request), encoding="utf-8")
    try:
        process = subprocess.run(["node", str(NODE_PROGRAM), str(jobs_path), str(report_path)],
                                 capture_output=True, text=True)
    except FileNotFoundError:
        raise PrecompileError("no se encuentra «node» para compilar con Pyodide") from None
    if process.returncode != 0:
        names = ", ".join(archive.file_name for archive in archives)
        raise PrecompileError(f"Pyodide (node) no pudo compilar {names}:\n{process.stderr.strip()}")
    return json.loads(report_path.read_text(encoding="utf-8"))


def precompile_archives(archives: list[Archive], *, pyodide_folder: Path, cache: Path, lock: dict | None = None,
                        package_files: dict[str, Path] | None = None) -> dict[str, Path]:
    """Compiled copies of the archives, by file name, from the cache or compiled now.

    ``lock`` and ``package_files`` (file name → verified path) are the official lock
    and the original wheels the compiling Pyodide loads to build matplotlib's font list.
    """
    compiler_digest = hash_compiler(pyodide_folder)
    font_inputs = hashlib.sha256("".join(
        f"{name}\0{hash_file(path)}\n" for name, path in sorted((package_files or {}).items())).encode()).hexdigest()
    results, missing = {}, []
    for archive in archives:
        entry = cache / make_cache_key(archive, compiler_digest, font_inputs)
        cached = lookup_cached(entry, archive.file_name)
        if cached is None:
            missing.append((archive, entry))
        else:
            results[archive.file_name] = cached
    if not missing:
        return results
    cache.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="precompile-", dir=cache) as folder:
        scratch = Path(folder)
        outputs = {archive.file_name: scratch / f"out-{archive.file_name}" for archive, _ in missing}
        report = run_compiler([archive for archive, _ in missing], outputs, pyodide_folder=pyodide_folder,
                              lock=lock, package_files=package_files or {}, scratch=scratch)
        for (archive, entry), outcome in zip(missing, report["results"]):
            if archive.font_list and not outcome["fontList"]:
                raise PrecompileError(f"{archive.file_name}: no tiene matplotlib/fontlist.json que reemplazar")
            results[archive.file_name] = store_cached(entry, archive.file_name, outputs[archive.file_name])
    return results


def describe_bytecode(path: Path) -> dict:
    """How many modules of an archive are bytecode, sources, and the bytecode's magic numbers."""
    import zipfile

    magics, sources, bytecode = set(), 0, 0
    with zipfile.ZipFile(path) as archive:
        for info in archive.infolist():
            if info.filename.endswith(".pyc"):
                bytecode += 1
                with archive.open(info) as handle:
                    magics.add(handle.read(4).hex())
            elif info.filename.endswith(".py"):
                sources += 1
    return {"bytecode": bytecode, "sources": sources, "magics": sorted(magics)}
