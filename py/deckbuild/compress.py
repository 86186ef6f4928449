"""Compressed copies of the deck's text, scripts and WebAssembly, written once by the build.

Stage: the finished folder and its manifest → `<file>.br` (brotli) and
`<file>.gz` (gzip) beside each file worth compressing, and manifest.json's
`encoded`: {path: {"br": sha256, "gzip": sha256}}. `build.py serve` sends a
copy to a browser that accepts its coding (deckbuild.server); any static
host can do the same (README: «Servirlo comprimido»). Browsers offer brotli
only over https and on localhost; on a classroom's plain-http network they get
gzip. The page, its service worker and Python see the same bytes either way:
a browser decodes a response before anyone reads it.

Worth compressing: text, scripts, JSON and WebAssembly of at least MIN_BYTES
whose copy saves at least MIN_SAVING (measured on this deck: the interpreter's
10.1 MB of wasm → 2.6 MB brotli, 3.2 MB gzip; the page 0.81 MB → 0.09/0.12 MB).
Wheels, the standard library's zip, the snapshot, images and woff2 fonts are
compressed already: a copy would save under 2 %, and is not written.

Copies are made by Node's zlib (`js/compress.mjs`: brotli quality 11 with a
16 MB window, gzip level 9), cached under `.cache/compressed/<key>/` by the
SHA-256 of the file and of these settings, and checked on every hit.
"""

from __future__ import annotations

import concurrent.futures
import hashlib
import json
import tempfile
from pathlib import Path

from .commands import run_node_script
from .errors import BuildError
from .files import ensure_dir, hash_file, lookup_verified, store_verified
from .paths import CACHE, display_path

# The content codings written, each with its file suffix (deckbuild.server reads the same table).
CODINGS = {"br": "br", "gzip": "gz"}
COMPRESSIBLE_SUFFIXES = (".html", ".js", ".mjs", ".css", ".json", ".csv", ".svg", ".txt", ".wasm", ".ttf", ".ipynb")
# Never compressed: the file list servers read, written after the copies.
NOT_COMPRESSED = frozenset({"manifest.json"})
MIN_BYTES = 1024
MIN_SAVING = 0.10
SETTINGS = b"brotli q11 lgwin24; gzip 9; v1"


def list_compressible(out: Path, files: dict[str, str]) -> list[str]:
    """The manifest's files that get compressed copies (by suffix and size), in order."""
    return [path for path in sorted(files) if path not in NOT_COMPRESSED and path.endswith(COMPRESSIBLE_SUFFIXES)
            and (out / path).stat().st_size >= MIN_BYTES]


def make_cache_key(sha256: str) -> str:
    return hashlib.sha256(SETTINGS + b"\0" + sha256.encode()).hexdigest()


def compress_into_cache(sources: list[Path], cache: Path) -> None:
    """One node process compresses every source that is not cached yet."""
    missing = []
    for source in sources:
        entry = cache / make_cache_key(hash_file(source))
        if lookup_verified(entry, tuple(f"copy.{suffix}" for suffix in CODINGS.values()))[0] is None:
            missing.append((source, entry))
    if not missing:
        return
    ensure_dir(cache)
    with tempfile.TemporaryDirectory(prefix="comprimidas-", dir=cache) as scratch:
        jobs = []
        for number, (source, entry) in enumerate(missing):
            outputs = {coding: str(Path(scratch) / f"{number}.{suffix}") for coding, suffix in CODINGS.items()}
            jobs.append({"source": str(source), **outputs})
        run_node_script("compress.mjs", what="copias comprimidas (node: brotli y gzip)", input_text=json.dumps(jobs))
        for (source, entry), job in zip(missing, jobs):
            store_verified(entry, {f"copy.{suffix}": Path(job[coding]) for coding, suffix in CODINGS.items()})


def start_early_copies(sources: list[Path], *, cache: Path | None = None) -> concurrent.futures.Future:
    """Make the copies of files that are final already in the background; compress_deck then finds them cached.

    The interpreter's WebAssembly takes most of the compressing (brotli at
    quality 11: 34 s on one core, measured) and ships as it was verified: made
    beside the compiling and the snapshot, its copies leave the build's
    longest path (a cold build: 70 → 49 s on two cores). The caller waits for
    the result (or its error) before compress_deck.
    """
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="copias-comprimidas")
    future = pool.submit(compress_into_cache, sources, cache or CACHE / "compressed")
    pool.shutdown(wait=False)
    return future


def write_compressed_copies(out: Path, files: dict[str, str], *, cache: Path | None = None) -> dict[str, dict[str, str]]:
    """Write each worthwhile copy beside its file; return the manifest's `encoded` section."""
    cache = cache or CACHE / "compressed"
    paths = list_compressible(out, files)
    compress_into_cache([out / path for path in paths], cache)
    encoded: dict[str, dict[str, str]] = {}
    for path in paths:
        source = out / path
        entry = cache / make_cache_key(files[path])
        found, _ = lookup_verified(entry, tuple(f"copy.{suffix}" for suffix in CODINGS.values()))
        if found is None:
            raise BuildError(f"{display_path(entry)}: la copia comprimida de {path} desapareció de la caché")
        size = source.stat().st_size
        for (coding, suffix), copy in zip(CODINGS.items(), found):
            if copy.stat().st_size <= size * (1 - MIN_SAVING):
                target = source.with_name(f"{source.name}.{suffix}")
                target.write_bytes(copy.read_bytes())
                encoded.setdefault(path, {})[coding] = hash_file(target)
    return encoded


def compress_deck(out: Path, manifest: dict, *, cache: Path | None = None) -> dict:
    """The copies written beside out/'s files and listed in its manifest.json (`encoded`); the new manifest."""
    encoded = write_compressed_copies(out, manifest["files"], cache=cache)
    manifest = {**manifest, "encoded": encoded}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest
