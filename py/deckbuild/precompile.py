"""Bytecode for the browser, compiled at build time by Pyodide 0.27.7 itself.

Stage: verified archives (the standard library's zip, the wheels, the dpdeck
wheel) → the same archives with every module compiled, from a cache keyed by
their inputs. Pyodide's standard library and wheels carry only `.py` files and
Pyodide never writes bytecode, so without this every boot compiles every module
it imports. Each archive is compiled once by the interpreter that will run it
(Pyodide 0.27.7 under Node, `js/precompile.mjs`: the same CPython 3.12.7, the
same magic number); what changes inside is described in precompile_pyodide.py.

The inputs were verified before they get here (pin table, official lock); the
outputs are derived files: cached under `.cache/precompiled/<key>/`, where the
key hashes everything an output depends on (the input's SHA-256, the options,
the compiling interpreter's files and this compiler's own programs), checked
against their recorded SHA-256 on every hit, and listed with their own SHA-256
in the shipped lock and the manifest.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .commands import NODE_SCRIPTS, run_command
from .errors import BuildError
from .files import ensure_dir, hash_file, lookup_verified, store_verified
from .paths import CACHE, display_path, locate_npm_package
from .pins import find_pin
from .pyodide import PyodideFiles

NODE_PROGRAM = NODE_SCRIPTS / "precompile.mjs"
PYODIDE_PROGRAM = Path(__file__).resolve().with_name("precompile_pyodide.py")
# Where Pyodide 0.27.7 puts things in the browser's file system.
STDLIB_ARCHIVE = "python_stdlib.zip"
STDLIB_PREFIX = "/lib/python312.zip"
SITE_PACKAGES = "/lib/python3.12/site-packages"
# The compiling interpreter: its files are part of every cache key.
COMPILER_CORE = ("pyodide.mjs", "pyodide.asm.js", "pyodide.asm.wasm", STDLIB_ARCHIVE)
CACHE_VERSION = b"dpdeck-precompile-v1"
# Loaded into the compiling Pyodide to build matplotlib's font list.
FONT_LIST_PACKAGE = "matplotlib"
# Compiling Node processes at most, one per core up to this: each holds a Pyodide (measured: up to 370 MB).
MAX_COMPILERS = 4


@dataclass(frozen=True)
class Archive:
    """One archive to compile: what it is, where it is and how to compile it."""

    file_name: str          # the name it ships under (compiling does not change it)
    path: Path              # the verified input
    sha256: str             # the input's verified SHA-256
    kind: str               # "zip" (imported from the zip: the standard library) or "wheel"
    install_prefix: str     # where its files live in the browser (the paths tracebacks show)
    keep_sources: bool = False
    font_list: bool = False  # replace matplotlib's fontlist.json (matplotlib's wheel only)


def locate_compiler() -> Path:
    return locate_npm_package("pyodide")


def hash_compiler(pyodide_folder: Path) -> str:
    """Digest of the compiling interpreter and of this compiler's own programs."""
    digest = hashlib.sha256(CACHE_VERSION)
    for name in COMPILER_CORE:
        digest.update(f"{name}\0{hash_file(pyodide_folder / name)}\0".encode())
    for program in (NODE_PROGRAM, PYODIDE_PROGRAM):
        digest.update(program.name.encode() + b"\0" + program.read_bytes() + b"\0")
    return digest.hexdigest()


def hash_font_inputs(package_files: dict[str, Path]) -> str:
    """Digest of the wheels the font list is built from."""
    lines = "".join(f"{name}\0{hash_file(path)}\n" for name, path in sorted(package_files.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


def make_cache_key(archive: Archive, compiler_digest: str, font_digest: str) -> str:
    """Everything one output depends on, hashed."""
    parts = [compiler_digest, archive.file_name, archive.sha256, archive.kind, archive.install_prefix,
             str(archive.keep_sources), font_digest if archive.font_list else ""]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()


def lookup_compiled(entry: Path, file_name: str) -> Path | None:
    """The cached output after checking it against its recorded SHA-256; a damaged entry is dropped."""
    paths, damaged = lookup_verified(entry, (file_name,))
    if damaged:
        print(f"  ! {display_path(entry / file_name)} está dañado; se vuelve a compilar", flush=True)
    return paths[0] if paths else None


def store_compiled(entry: Path, file_name: str, produced: Path) -> Path:
    """Move a fresh output into its cache entry with its SHA-256 beside it."""
    return store_verified(entry, {file_name: produced})[0]


def run_compiler(archives: list[Archive], outputs: dict[str, Path], *, pyodide_folder: Path,
                 lock: dict | None, package_files: dict[str, Path], scratch: Path) -> dict:
    """One Node process: Pyodide boots once and compiles every archive given."""
    request = {"indexURL": f"{pyodide_folder}/", "lockFile": None, "packageFolder": None, "packages": [],
               "program": str(PYODIDE_PROGRAM), "jobs": []}
    if any(archive.font_list for archive in archives):
        if lock is None:
            raise BuildError("la lista de fuentes de matplotlib necesita el pyodide-lock.json oficial")
        folder = ensure_dir(scratch / "packages")
        for file_name, path in package_files.items():
            os.symlink(path, folder / file_name)
        (folder / "pyodide-lock.json").write_text(json.dumps(lock), encoding="utf-8")
        request.update(lockFile=str(folder / "pyodide-lock.json"), packageFolder=f"{folder}/",
                       packages=[FONT_LIST_PACKAGE])
    for archive in archives:
        request["jobs"].append({"input": str(archive.path), "output": str(outputs[archive.file_name]),
                                "kind": archive.kind, "installPrefix": archive.install_prefix,
                                "keepSources": archive.keep_sources, "fontList": archive.font_list})
    jobs_path, report_path = scratch / "jobs.json", scratch / "report.json"
    jobs_path.write_text(json.dumps(request), encoding="utf-8")
    names = ", ".join(archive.file_name for archive in archives)
    run_command(["node", NODE_PROGRAM, jobs_path, report_path], what=f"Pyodide (node) compilando {names}",
                capture=True)
    return json.loads(report_path.read_text(encoding="utf-8"))


def compile_archives(archives: list[Archive], *, lock: dict | None = None,
                     package_files: dict[str, Path] | None = None, pyodide_folder: Path | None = None,
                     cache: Path | None = None) -> dict[str, Path]:
    """Compiled copies of the archives, by file name: from the cache, or compiled now, one group per core.

    `lock` and `package_files` (file name → verified original) are what the
    compiling Pyodide loads to build matplotlib's font list.
    """
    pyodide_folder = pyodide_folder or locate_compiler()
    cache = cache or CACHE / "precompiled"
    compiler_digest = hash_compiler(pyodide_folder)
    font_digest = hash_font_inputs(package_files or {})
    results, missing = {}, []
    for archive in archives:
        entry = cache / make_cache_key(archive, compiler_digest, font_digest)
        cached = lookup_compiled(entry, archive.file_name)
        if cached is None:
            missing.append((archive, entry))
        else:
            results[archive.file_name] = cached
    if not missing:
        return results
    ensure_dir(cache)
    with tempfile.TemporaryDirectory(prefix="compilando-", dir=cache) as folder:
        scratch = Path(folder)
        outputs = {archive.file_name: scratch / f"salida-{archive.file_name}" for archive, _ in missing}
        groups = split_by_size([archive for archive, _ in missing], min(os.cpu_count() or 1, MAX_COMPILERS))

        def compile_group(number: int) -> dict:
            return run_compiler(groups[number], outputs, pyodide_folder=pyodide_folder, lock=lock,
                                package_files=package_files or {}, scratch=ensure_dir(scratch / f"grupo-{number}"))

        # One Node process per group, side by side: each archive's bytecode depends only on it.
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(groups)) as pool:
            reports = list(pool.map(compile_group, range(len(groups))))
        outcomes = {archive.file_name: outcome for group, report in zip(groups, reports)
                    for archive, outcome in zip(group, report["results"])}
        for archive, entry in missing:
            if archive.font_list and not outcomes[archive.file_name]["fontList"]:
                raise BuildError(f"{archive.file_name}: no tiene matplotlib/fontlist.json que reemplazar")
            results[archive.file_name] = store_compiled(entry, archive.file_name, outputs[archive.file_name])
    return results


def split_by_size(archives: list[Archive], count: int) -> list[list[Archive]]:
    """At most `count` non-empty groups of about equal bytes (largest archive first, into the lightest group)."""
    groups: list[list[Archive]] = [[] for _ in range(min(max(count, 1), len(archives)))]
    weights = [0] * len(groups)
    sizes = {archive.file_name: archive.path.stat().st_size for archive in archives}
    for archive in sorted(archives, key=lambda archive: sizes[archive.file_name], reverse=True):
        lightest = weights.index(min(weights))
        groups[lightest].append(archive)
        weights[lightest] += sizes[archive.file_name]
    return groups


def compile_pyodide(pyodide: PyodideFiles, dpdeck_wheel: Path) -> PyodideFiles:
    """The standard library and every shipped wheel compiled (their originals stay verified in `pyodide.lock`),
    and the dpdeck wheel compiled in place, keeping its sources (inspect and tracebacks show them).

    In one call: on a cold cache the dpdeck wheel is compiled by one of the
    Node processes that compile Pyodide's archives, instead of booting a
    Pyodide of its own (3 s of a core).
    """
    packages = pyodide.lock["packages"]
    archives = [Archive(STDLIB_ARCHIVE, pyodide.paths[STDLIB_ARCHIVE], find_pin("pyodide", STDLIB_ARCHIVE).sha256,
                        "zip", STDLIB_PREFIX)]
    for name in pyodide.packages:
        entry = packages[name]
        archives.append(Archive(entry["file_name"], pyodide.paths[entry["file_name"]], entry["sha256"], "wheel",
                                SITE_PACKAGES, font_list=name == FONT_LIST_PACKAGE))
    archives.append(Archive(dpdeck_wheel.name, dpdeck_wheel, hash_file(dpdeck_wheel), "wheel", SITE_PACKAGES,
                            keep_sources=True))
    originals = {file_name: pyodide.paths[file_name] for file_name in pyodide.wheel_names()}
    shipped_lock = {"info": pyodide.lock["info"], "packages": {name: packages[name] for name in pyodide.packages}}
    compiled = compile_archives(archives, lock=shipped_lock, package_files=originals)
    shutil.copyfile(compiled.pop(dpdeck_wheel.name), dpdeck_wheel)
    return dataclasses.replace(pyodide, paths={**pyodide.paths, **compiled})
