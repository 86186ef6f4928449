"""Hashes and file writes shared by every stage (standard library only)."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path


def hash_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def hash_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def hash_tree(folder: Path) -> str:
    """Digest of a folder: SHA-256 over sorted "<path>\\0<file sha256>\\n" lines."""
    lines = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if "node_modules" in relative.parts or not path.is_file():
            continue
        lines.append(f"{relative.as_posix()}\0{hash_file(path)}\n")
    return hash_bytes("".join(lines).encode())


def ensure_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def lookup_verified(entry: Path, names: tuple[str, ...]) -> tuple[list[Path] | None, bool]:
    """A cache entry's files, each checked against the SHA-256 stored beside it (store_verified).

    Returns (paths, damaged): paths is None when a file is missing or damaged;
    a damaged entry is deleted, so that it is made again.
    """
    paths = [entry / name for name in names]
    recorded = [path.with_name(f"{path.name}.sha256") for path in paths]
    if not all(path.is_file() for path in paths + recorded):
        return None, False
    if all(hash_file(path) == record.read_text().strip() for path, record in zip(paths, recorded)):
        return paths, False
    shutil.rmtree(entry, ignore_errors=True)
    return None, True


def store_verified(entry: Path, produced: dict[str, Path]) -> list[Path]:
    """Move fresh files into a cache entry, each with its SHA-256 beside it (a temporary folder, then a rename)."""
    staging = entry.with_name(f"{entry.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name, path in produced.items():
        shutil.move(path, staging / name)
        (staging / f"{name}.sha256").write_text(hash_file(staging / name) + "\n")
    shutil.rmtree(entry, ignore_errors=True)
    os.replace(staging, entry)
    return [entry / name for name in produced]
