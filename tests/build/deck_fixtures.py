"""For the build tests: fixture slide folders and build.py runs into temporary folders."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# A small deck that uses every part of the format: attributes, notes, fragment,
# boxes, columns, a table, math and two cells (one with a figure and a «Prueba esto»).
SAMPLE_DECK = {
    "00-inicio.md": """\
        <!-- .slide: class="portada" id="inicio" -->
        # Prueba de formato

        ## Un subtítulo con $\\varepsilon = 1{,}25$

        ::: notes
        Qué decir en clase.
        :::

        ---

        # Segunda

        $$
        \\Pr[M(x) \\in S] \\le e^{\\varepsilon} \\Pr[M(x') \\in S]
        $$

        ::: fragment
        La respuesta.
        :::

        ::: columns
        ::: column
        izquierda
        :::
        ::: column
        derecha
        :::
        :::

        | a | b |
        |---|---|
        | 1 | 2 |
        """,
    "01-celdas.md": """\
        # Celdas

        ```python id=suma layout=stack
        x = 2 + 3
        print("x <", x)
        x * 10
        ```

        ::: aviso
        Un aviso.
        :::

        ---

        # Figura

        ```python id=figura figures=1
        import matplotlib.pyplot as plt
        plt.plot([0, 1], [1, 0])
        ```

        ::: prueba
        Cambia `[1, 0]` por `[0, 1]` y vuelve a ejecutar: ¿hacia dónde sube la recta, con $\\varepsilon$?
        :::

        ```text
        no es una celda
        ```
        """,
}


def write_deck(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def run_build(slides: Path, out: Path, *extra: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """Run `build.py --slides … --out …` as a person would; return its result."""
    return subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "--slides", str(slides), "--out", str(out), *extra],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=600)


# What a fresh clone does not have: the machine's installs, caches and build outputs.
NOT_IN_A_CLONE = (".git", ".venv", "node_modules", ".cache", "dist", "dist.*", "test-artifacts", "__pycache__",
                  ".pytest_cache", "*.egg-info")


def make_clone(folder: Path, *, cache: Path | None = None, also_reused: tuple[str, ...] = ()) -> Path:
    """A copy of the repository as a fresh clone has it, ready to build without the network.

    node_modules is hard-linked (a test that changes a file there must replace it,
    not write into it), .venv is this one (the same lock), and the cache gets only
    the verified downloads and the compressed copies (both content-addressed by
    their input's SHA-256, re-hashed on every use; brotli and gzip of the same
    bytes depend on nothing else): no pre-rendered cell, no matplotlib state,
    no bytecode or snapshot taken in another environment, unless `also_reused`
    names those kinds of the cache ("prerender", "precompiled", "snapshots").
    """
    shutil.copytree(ROOT, folder, ignore=shutil.ignore_patterns(*NOT_IN_A_CLONE), symlinks=True)
    shutil.copytree(ROOT / "node_modules", folder / "node_modules", copy_function=os.link, symlinks=True)
    (folder / ".venv").symlink_to(ROOT / ".venv", target_is_directory=True)
    cache = cache or folder / ".cache"
    shared = Path(os.environ.get("DPDECK_CACHE", ROOT / ".cache"))
    for kind in ("files", "compressed", *also_reused):
        if (shared / kind).is_dir():
            shutil.copytree(shared / kind, cache / kind, copy_function=os.link)
    return folder
