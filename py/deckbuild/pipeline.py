"""The build in order: slides → formulas → cells → notebooks → wheel → Pyodide and the wheel (compiled) → bundles → snapshot
→ page → manifest → compressed copies.

Everything is written into a temporary folder beside out/ that replaces out/
only once it is complete: a failed build leaves the previous out/ untouched.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import shutil
import sys
import time
from pathlib import Path

from .commands import step
from .compress import compress_deck, start_early_copies
from .errors import BuildError
from .files import ensure_dir
from .package import (build_dpdeck_wheel, bundle_sources, check_stylesheet_urls, copy_shipped_pins, dpdeck_wheel_path,
                      write_manifest)
from .notebooks import write_notebooks
from .paths import CACHE, CENSUS, DEFAULT_OUT, DEFAULT_SLIDES, ROOT, display_path
from .pins import verify_npm_pins
from .policy import check_speaker_view_scripts
from .precompile import compile_pyodide
from .predictions import check_predictions
from .prerender import prerender_cells
from .pyodide import PYODIDE_VERSION, copy_pyodide, gather_pyodide
from .render import check_no_font_preload, read_page_parts, render_page
from .slides import read_deck
from .snapshot import take_snapshot
from .typeset import typeset_math


# Shipped as verified (never compiled): their compressed copies are made while the build goes on
# (compress.start_early_copies), from the verified files.
EARLY_COMPRESSED = ("pyodide.asm.wasm", "pyodide.asm.js")


def build(slides_dir: Path = DEFAULT_SLIDES, out: Path = DEFAULT_OUT, pyodide_dist: Path | None = None,
          keep_going: bool = False, snapshot: bool = True) -> dict:
    """Build the deck into out/ (atomically); return the manifest.

    `snapshot: False` ships no memory snapshot of Python (snapshot.py): the
    browser then starts Python from scratch at every boot.
    """
    started = time.perf_counter()
    out = Path(out).resolve()
    check_output_folder(out, Path(slides_dir).resolve())
    ensure_dir(out.parent)
    remove_stale_staging(out)
    staging = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    early_copies = None
    try:
        require_cache()
        require_census()
        with step("diapositivas leídas"):
            deck = read_deck(Path(slides_dir).resolve())
            print(f"  {len(deck.slides)} diapositivas, {len(deck.cells)} celdas, "
                  f"{len(deck.math)} fórmulas", flush=True)
        # Every npm file is checked against the pin table before any of them (KaTeX first) runs.
        with step("dependencias verificadas (tabla de versiones)"):
            verify_npm_pins()
        with step("fórmulas con KaTeX"):
            math = typeset_math(deck)
        with step("celdas pre-calculadas con Python nativo"):
            prerendered = prerender_cells(deck, staging, keep_going)
            print(f"  {len(deck.cells)} celdas ({prerendered.cache_hits} de la caché)", flush=True)
            predictions = check_predictions(deck, prerendered)
            print(f"  {predictions} predicciones comprobadas contra lo que imprime su celda", flush=True)
        with step("cuadernos de Jupyter"):
            notebooks = write_notebooks(deck, staging, wheel=dpdeck_wheel_path())
            print(f"  {len(notebooks.chapters)} capítulos × 3 cuadernos", flush=True)
        with step("rueda dpdeck"):
            wheel = build_dpdeck_wheel(staging)
            print(f"  {wheel.relative_to(staging)}", flush=True)
        with step(f"Pyodide {PYODIDE_VERSION}, sus paquetes y la rueda dpdeck, compilados a bytecode"):
            gathered = gather_pyodide(pyodide_dist)
            early_copies = start_early_copies([gathered.paths[name] for name in EARLY_COMPRESSED])
            shipped_pyodide = copy_pyodide(staging, compile_pyodide(gathered, wheel))
        with step("JS y CSS con esbuild"):
            bundled = bundle_sources(staging)
            print(f"  {', '.join(bundled)}", flush=True)
        python_snapshot = None
        if snapshot:
            with step("instantánea de la memoria de Python (Pyodide en node)"):
                python_snapshot = take_snapshot(staging, shipped_pyodide, wheel)
                print(f"  {python_snapshot.file}: {python_snapshot.size / 1e6:.1f} MB, "
                      f"{len(python_snapshot.libraries)} bibliotecas", flush=True)
        with step("página y archivos copiados"):
            copy_shipped_pins(staging)
            check_speaker_view_scripts(staging)
            check_stylesheet_urls(staging)
            page = render_page(deck, math, prerendered, read_page_parts(staging))
            check_no_font_preload(page)
            (staging / "index.html").write_text(page, encoding="utf-8")
            ensure_dir(staging / "data")
            shutil.copyfile(CENSUS, staging / "data" / "censo.csv")
        with step("manifiesto"):
            manifest = write_manifest(staging, shipped_pyodide, wheel, python_snapshot)
        with step("copias comprimidas (brotli y gzip)"):
            early_copies.result()
            manifest = compress_deck(staging, manifest)
            print(f"  {len(manifest['encoded'])} archivos", flush=True)
        swap_into_place(staging, out)
    except BaseException as error:
        if early_copies is not None:
            concurrent.futures.wait([early_copies])
        shutil.rmtree(staging, ignore_errors=True)
        if isinstance(error, KeyboardInterrupt):
            print(f"\nconstrucción detenida: {display_path(out)} sigue como estaba y la carpeta temporal "
                  "se borró", file=sys.stderr, flush=True)
        raise
    size = measure_folder(out)
    print(f"listo: {display_path(out)} ({len(manifest['files'])} archivos, {size / 1e6:.1f} MB) "
          f"en {time.perf_counter() - started:.1f} s", flush=True)
    return manifest


def check_output_folder(out: Path, slides_dir: Path) -> None:
    """out/ is replaced whole: it must be new, empty or an earlier build, never a folder with other work."""
    if out.exists() and not out.is_dir():
        raise BuildError(f"--out {display_path(out)} es un archivo, no una carpeta")
    if ROOT.is_relative_to(out) or slides_dir.is_relative_to(out):
        raise BuildError(f"--out {display_path(out)} contiene el repositorio o las diapositivas, y la "
                         "construcción reemplaza esa carpeta entera; elige otra (por defecto, dist/)")
    if out.is_dir() and any(out.iterdir()) and not is_earlier_build(out):
        raise BuildError(f"--out {display_path(out)} ya tiene archivos y no es un mazo construido (le falta "
                         "manifest.json): la construcción la reemplazaría entera; elige una carpeta nueva o vacía")


def is_earlier_build(folder: Path) -> bool:
    try:
        manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and isinstance(manifest.get("files"), dict)


def require_cache() -> None:
    """The cache folder (.cache/ or DPDECK_CACHE) must be a folder this build can write to."""
    try:
        ensure_dir(CACHE)
        probe = CACHE / f".escritura-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError:
        raise BuildError(f"la caché {CACHE} no es una carpeta en la que se pueda escribir; "
                         "cambia DPDECK_CACHE o bórrala") from None


def require_census() -> None:
    """The census goes into the wheel and dist/data/, and every cell's cache key hashes it."""
    if not CENSUS.is_file():
        raise BuildError(f"falta {display_path(CENSUS)}: se regenera con "
                         "«.venv/bin/python -m dpdeck.data --write»")


def swap_into_place(staging: Path, out: Path) -> None:
    """Replace out/ with the finished staging folder (previous out/ kept until then)."""
    retired = out.with_name(f"{out.name}.old-{os.getpid()}")
    if out.exists():
        os.replace(out, retired)
    os.replace(staging, out)
    shutil.rmtree(retired, ignore_errors=True)


def remove_stale_staging(out: Path) -> None:
    """Drop temporary folders left by builds whose process is gone."""
    for leftover in [*out.parent.glob(f"{out.name}.tmp-*"), *out.parent.glob(f"{out.name}.old-*")]:
        pid = leftover.name.rsplit("-", 1)[-1]
        if pid.isdigit() and not is_process_alive(int(pid)):
            shutil.rmtree(leftover, ignore_errors=True)


def is_process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def measure_folder(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())
