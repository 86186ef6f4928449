"""Downloads, verified against the pin table, in a cache keyed by SHA-256.

Stage: a pin → a local file whose SHA-256 is the pinned one. Every cache hit is
hashed again before use; a damaged entry is dropped and fetched anew.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from .commands import run_command
from .files import ensure_dir, hash_file
from .paths import CACHE, display_path
from .pins import Pin, verify_file


def locate_cached_file(sha256: str, file_name: str) -> Path:
    return CACHE / "files" / sha256 / file_name


def lookup_cache(sha256: str, file_name: str) -> Path | None:
    """Return a cached file after re-verifying its hash; drop it when damaged."""
    path = locate_cached_file(sha256, file_name)
    if not path.exists():
        return None
    if hash_file(path) == sha256:
        return path
    print(f"  ! {display_path(path)} está dañado; se descarta", flush=True)
    path.unlink()
    return None


def store_in_cache(data_path: Path, sha256: str, file_name: str, label: str) -> Path:
    """Copy a verified file into the cache; a file that does not match stops the build."""
    verify_file(data_path, sha256, label)
    target = locate_cached_file(sha256, file_name)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{file_name}.{os.getpid()}.tmp")
    shutil.copyfile(data_path, temporary)
    os.replace(temporary, target)
    return target


def download_pypi_file(pin: Pin, *, size_note: str = "") -> Path:
    """A pinned PyPI file, from the cache or downloaded with pip --require-hashes."""
    cached = lookup_cache(pin.sha256, pin.file)
    if cached:
        return cached
    print(f"  descargando {pin.name}=={pin.version} de PyPI{size_note}…", flush=True)
    with tempfile.TemporaryDirectory(dir=ensure_dir(CACHE)) as folder:
        requirement = Path(folder) / "requirements.txt"
        requirement.write_text(f"{pin.name}=={pin.version} --hash=sha256:{pin.sha256}\n")
        run_command([sys.executable, "-m", "pip", "download", "--disable-pip-version-check",
                     "--no-deps", "--progress-bar", "on", "--require-hashes", "-r", requirement,
                     "--dest", folder], what=f"pip download {pin.name}=={pin.version}")
        return store_in_cache(Path(folder) / pin.file, pin.sha256, pin.file, f"{pin.name} {pin.version}")
