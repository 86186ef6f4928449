"""The service worker that keeps the deck for use offline: dist/sw.js, stamped with the build's files.

Stage: the bundled worker (deck/js/offline/serviceworker.js → sw.js) and the build's
file list → sw.js that starts with `self.DPDECK_PRECACHE = {build, page,
python}`: the build's id and each file's SHA-256, split into the page's files
(cached on the first visit) and Python's (cached once Python is used; a person
who chose not to download Python never fetches them). Every build is a new
sw.js, so browsers install it beside the old one and replace the old cache
whole, never file by file.
"""

from __future__ import annotations

import json
from pathlib import Path

from .errors import BuildError

SERVICE_WORKER = "sw.js"
# What the deck never caches: the worker itself, and the file list servers read.
NOT_CACHED = frozenset({SERVICE_WORKER, "manifest.json"})


def python_prefixes(runtime: dict) -> tuple[str, ...]:
    """Folders of dist/ holding what Python downloads at boot (runtime.json): Pyodide and the wheel."""
    wheel_folder = runtime["wheel"].rsplit("/", 1)[0] + "/"
    return (runtime["pyodide"], wheel_folder)


def split_precache(files: dict[str, str], runtime: dict) -> dict[str, dict[str, str]]:
    """{page: {path: sha256}, python: {path: sha256}} from the manifest's files."""
    prefixes = python_prefixes(runtime)
    groups: dict[str, dict[str, str]] = {"page": {}, "python": {}}
    for path, digest in sorted(files.items()):
        if path in NOT_CACHED:
            continue
        groups["python" if path.startswith(prefixes) else "page"][path] = digest
    if "index.html" not in groups["page"]:
        raise BuildError("el mazo no tiene index.html: el service worker no tendría qué guardar")
    return groups


def stamp_service_worker(out: Path, files: dict[str, str], build_id: str, runtime: dict) -> None:
    """Prefix the bundled out/sw.js with this build's id and files."""
    target = out / SERVICE_WORKER
    if not target.is_file():
        raise BuildError(f"falta {SERVICE_WORKER}: esbuild no empaquetó deck/js/offline/serviceworker.js")
    precache = {"build": build_id, **split_precache(files, runtime)}
    header = f"self.DPDECK_PRECACHE = {json.dumps(precache, separators=(',', ':'), sort_keys=True)};\n"
    target.write_text(header + target.read_text(encoding="utf-8"), encoding="utf-8")
