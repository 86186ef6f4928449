"""Hashes and file writes shared by every stage (standard library only)."""

from __future__ import annotations

import hashlib
import os
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
