"""What dist/ ships besides the page: esbuild bundles, the dpdeck wheel, pinned files, the manifest.

Stages: deck/js + deck/css → dist/js, dist/css (every npm file bundled must be
pinned); py/dpdeck + the census → a reproducible wheel (only `dpdeck`: the build
package never ships); pinned files with `ship` → dist/ as they are; the finished
folder → runtime.json and manifest.json (SHA-256 of every file).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import zipfile
from pathlib import Path

from .commands import run_node_script
from .devicecopy import describe_packages_copy
from .errors import BuildError
from .files import ensure_dir, hash_bytes, hash_file, hash_tree
from .paths import CENSUS, DECK, NODE_MODULES, PY_PACKAGE, ROOT, list_package_files, locate_npm_package
from .offline import SERVICE_WORKER, stamp_service_worker
from .pins import list_pins, list_shipped_pins
from .pyodide import ShippedPyodide, make_integrity
from .snapshot import Snapshot

# Files esbuild bundles: source under deck/ → output under dist/, with its JS format.
BUNDLES = (
    ("js/page/main.js", "js/main.js", "iife"),
    ("js/worker/worker.js", "js/worker.js", "iife"),
    ("js/page/firstpaint.js", "js/firstpaint.js", "iife"),
    # At the deck's root, so its scope is the whole deck folder; stamped by offline.py.
    ("js/offline/serviceworker.js", SERVICE_WORKER, "iife"),
    ("css/main.css", "css/main.css", None),
)
WHEEL_PACKAGE = "dpdeck"
SHIPPED_FONTS = "fonts/"
STYLESHEET_URL = re.compile(r"""url\(\s*(["']?)([^"')]+)\1\s*\)""")
FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


def read_project_version() -> str:
    import tomllib
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["project"]["version"]


def bundle_sources(out: Path) -> list[str]:
    """Bundle deck/js and deck/css with esbuild; every bundled npm file must be pinned."""
    jobs = [{"source": str(DECK / source), "target": str(out / target), "format": fmt, "root": str(ROOT)}
            for source, target, fmt in BUNDLES]
    inputs = json.loads(run_node_script("esbuild.js", locate_npm_package("esbuild"), json.dumps(jobs),
                                        what="esbuild"))
    pinned = {pin.name for pin in list_pins(source="npm")}
    for input_path in inputs:
        parts = input_path.split("node_modules/")
        if len(parts) < 2:
            continue
        segments = parts[-1].split("/")
        package = "/".join(segments[:2]) if segments[0].startswith("@") else segments[0]
        if package not in pinned:
            raise BuildError(f"esbuild incluye node_modules/{package}, que no está en la tabla de versiones "
                             f"(py/deckbuild/pins.py; añade su versión y su hash: "
                             f"{hash_tree(NODE_MODULES / package)})")
    return [target for _, target, _ in BUNDLES]


def hash_for_wheel_record(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def dpdeck_wheel_path() -> str:
    """Where the dpdeck wheel goes in dist/ (the page installs it; a notebook tells a student to)."""
    return f"wheels/dpdeck-{read_project_version()}-py3-none-any.whl"


def build_dpdeck_wheel(out: Path) -> Path:
    """The dpdeck package as a reproducible wheel, with the census inside."""
    version = read_project_version()
    dist_info = f"dpdeck-{version}.dist-info"
    members: list[tuple[str, bytes]] = []
    for path in list_package_files():
        members.append((f"{WHEEL_PACKAGE}/{path.relative_to(PY_PACKAGE).as_posix()}", path.read_bytes()))
    members.append((f"{WHEEL_PACKAGE}/censo.csv", CENSUS.read_bytes()))
    metadata = (f"Metadata-Version: 2.1\nName: dpdeck\nVersion: {version}\n"
                "Summary: Privacidad diferencial, en diapositivas que ejecutan su Python en el navegador\n"
                "License: MIT\nRequires-Python: >=3.11\nRequires-Dist: numpy>=2.0\n"
                "Requires-Dist: matplotlib>=3.8\n")
    wheel = "Wheel-Version: 1.0\nGenerator: dpdeck-build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    members += [(f"{dist_info}/METADATA", metadata.encode()), (f"{dist_info}/WHEEL", wheel.encode()),
                (f"{dist_info}/top_level.txt", f"{WHEEL_PACKAGE}\n".encode())]
    record = "".join(f"{name},{hash_for_wheel_record(data)},{len(data)}\n" for name, data in members)
    record += f"{dist_info}/RECORD,,\n"
    members.append((f"{dist_info}/RECORD", record.encode()))
    target = out / dpdeck_wheel_path()
    ensure_dir(target.parent)
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data, compresslevel=9)
    return target


def copy_shipped_pins(out: Path) -> None:
    """Pinned files that dist/ carries as they are (reveal.js, KaTeX's CSS and fonts…)."""
    for pin in list_shipped_pins():
        source = locate_npm_package(pin.name) / pin.file
        destination = out / pin.ship
        if pin.file.endswith("/"):
            shutil.copytree(source, destination)
        else:
            ensure_dir(destination.parent)
            shutil.copyfile(source, destination)


def check_stylesheet_urls(out: Path) -> None:
    """Every url() of every stylesheet in out/ names a file in out/, and every shipped font is used."""
    used = set()
    for sheet in sorted(out.rglob("*.css")):
        for _, url in STYLESHEET_URL.findall(sheet.read_text(encoding="utf-8")):
            if url.startswith(("data:", "#")):
                continue
            target = (sheet.parent / url.split("?")[0].split("#")[0]).resolve()
            if not target.is_relative_to(out.resolve()) or not target.is_file():
                raise BuildError(f"{sheet.relative_to(out)} pide url({url}), que no está en el mazo "
                                 "(¿falta fijarlo en py/deckbuild/pins.py?)")
            used.add(target.relative_to(out.resolve()).as_posix())
    fonts = {pin.ship for pin in list_shipped_pins() if pin.ship.startswith(SHIPPED_FONTS)
             and pin.ship.endswith(".woff2")}
    unused = sorted(fonts - used)
    if unused:
        raise BuildError(f"letra fijada que ninguna hoja de estilo usa: {', '.join(unused)} "
                         "(quítala de py/deckbuild/pins.py o declárala en deck/css/fonts.css)")


def write_manifest(out: Path, pyodide: ShippedPyodide, wheel: Path, snapshot: Snapshot | None = None) -> dict:
    """runtime.json (what the worker boots), sw.js stamped with the build, and manifest.json with each file's SHA-256.

    The build id hashes every file but the service worker, which then carries it.
    """
    files = {path.relative_to(out).as_posix(): hash_file(path) for path in sorted(out.rglob("*"))
             if path.is_file() and path.relative_to(out).as_posix() != SERVICE_WORKER}
    build_id = hash_bytes(json.dumps(files, sort_keys=True).encode())[:16]
    wheel_name = wheel.relative_to(out).as_posix()
    runtime = {"pyodide": "pyodide/", "packages": pyodide.packages, "preload": pyodide.preload,
               "lazyPackages": pyodide.lazy, "wheel": wheel_name, "wheelIntegrity": make_integrity(files[wheel_name]),
               "bytes": pyodide.boot_bytes + wheel.stat().st_size, "version": build_id,
               "packagesCopy": describe_packages_copy(out, pyodide.preload)}
    if pyodide.stdlib is not None:
        runtime["stdlib"] = pyodide.stdlib
    if snapshot is not None:
        runtime["snapshot"] = {**snapshot.describe(), "bytes": snapshot.boot_bytes}
    # Compact: packagesCopy lists a thousand files, which indenting would make twice as long.
    (out / "runtime.json").write_text(json.dumps(runtime, separators=(",", ":")) + "\n", encoding="utf-8")
    files["runtime.json"] = hash_file(out / "runtime.json")
    stamp_service_worker(out, files, build_id, runtime)
    files[SERVICE_WORKER] = hash_file(out / SERVICE_WORKER)
    manifest = {"files": dict(sorted(files.items()))}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest
