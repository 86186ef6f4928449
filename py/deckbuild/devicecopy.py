"""What a device's copy of Python's packages must be: runtime.json's `packagesCopy`.

Stage: the shipped boot wheels (runtime.json's `preload`) → their files as the
worker unpacks them, described for the worker. After a boot that downloaded
them, the worker keeps those files in one file of the origin's private file
system (deck/js: packagecopy.js) and a later boot reads it instead of the
wheels. Anything that can write that storage could change the copy, so the
worker accepts one only if it is exactly what this describes, from the build
(runtime.json, itself checked by the service worker against the build's
SHA-256), never from the copy itself:

    {"integrity": "sha256-…",            every file's bytes, in order, hashed
     "size": 35218436,                   their total
     "wheels": [{"files": [[path, size], …]}, …]}   one per preload entry, same order

A wheel's files are its archive's entries in the order of its central
directory, folders left out, paths relative to site-packages: what wheels.js's
`unpackWheel` gives. A path that would leave site-packages (`..`, a leading
`/`) stops the build.

Inflating 35 MB takes about a second, so the description is cached under
`.cache/packagecopy/<key>/`, keyed by the wheels' SHA-256, and checked on every hit.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
import zipfile
from pathlib import Path

from .errors import BuildError
from .files import ensure_dir, lookup_verified, store_verified
from .paths import CACHE, display_path
from .pyodide import make_integrity

DESCRIPTION_FILE = "packagecopy.json"
CACHE_VERSION = b"dpdeck-packagecopy-v1"
# The zip flag that says an entry's name is UTF-8 (APPNOTE.TXT 4.4.4, bit 11); wheels.js reads every name so.
UTF8_NAME_FLAG = 0x800


def entry_path(info: zipfile.ZipInfo) -> str:
    """An entry's name as wheels.js decodes it (UTF-8 always)."""
    if info.flag_bits & UTF8_NAME_FLAG:
        return info.filename
    try:
        return info.filename.encode("cp437").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return info.filename


def check_entry_path(path: str, wheel: Path) -> None:
    if path.startswith("/") or ".." in path.split("/"):
        raise BuildError(f"{display_path(wheel)}: la entrada «{path}» saldría de site-packages")


def read_wheel_files(wheel: Path, digest) -> list[list]:
    """[[path, size], …] of a wheel's files in archive order, each file's bytes fed to `digest`."""
    files = []
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            path = entry_path(info)
            if path.endswith("/"):
                continue
            check_entry_path(path, wheel)
            data = archive.read(info)
            digest.update(data)
            files.append([path, len(data)])
    return files


def make_cache_key(preload: list[dict]) -> str:
    digest = hashlib.sha256(CACHE_VERSION)
    for entry in preload:
        digest.update(f"{entry['file']}\0{entry['integrity']}\n".encode())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()


def compute_packages_copy(out: Path, preload: list[dict]) -> dict:
    """runtime.json's `packagesCopy` for the wheels of `preload` in out/ (see the module's docstring)."""
    digest = hashlib.sha256()
    wheels = [{"files": read_wheel_files(out / entry["file"], digest)} for entry in preload]
    size = sum(size for wheel in wheels for _, size in wheel["files"])
    return {"integrity": make_integrity(digest.hexdigest()), "size": size, "wheels": wheels}


def describe_packages_copy(out: Path, preload: list[dict], *, cache: Path | None = None) -> dict:
    """`compute_packages_copy`, from the cache when the same wheels were described before."""
    cache = cache or CACHE / "packagecopy"
    entry = cache / make_cache_key(preload)
    paths, _ = lookup_verified(entry, (DESCRIPTION_FILE,))
    if paths is not None:
        return json.loads(paths[0].read_text(encoding="utf-8"))
    description = compute_packages_copy(out, preload)
    ensure_dir(cache)
    with tempfile.TemporaryDirectory(prefix="copia-", dir=cache) as folder:
        produced = Path(folder) / DESCRIPTION_FILE
        produced.write_text(json.dumps(description, separators=(",", ":")), encoding="utf-8")
        store_verified(entry, {DESCRIPTION_FILE: produced})
    return description
