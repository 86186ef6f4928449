#!/usr/bin/env python3
"""Construye, sirve y prueba el mazo dpdeck: un sitio estático que funciona sin conexión.

    python3 build.py                     construye dist/
    python3 build.py serve [--port N]    construye y sirve dist/ en http://localhost:N/
    python3 build.py test [args pytest]  construye y ejecuta todas las pruebas
    python3 build.py bench [--rounds N] [--compare CARPETA] [--no-cells]
                                         construye y compara el arranque en Chromium con el
                                         de una página de Pyodide sin más (py/deckbuild/bench.py)

Opciones: --pyodide-dist RUTA (carpeta o .tar.bz2/.tar.gz de la distribución
oficial de Pyodide 0.27.7), --slides CARPETA, --out CARPETA, --keep-going (mientras
se escribe el mazo: una celda que falla se avisa y su error queda en la página,
en lugar de detener la construcción), --no-browser (con test: sin las pruebas
del navegador, y lo dice en la última línea).
La variable DPDECK_CACHE cambia la carpeta de descargas y resultados (.cache/).

Este archivo es el arranque y la línea de órdenes; la construcción está en
py/deckbuild/ (ver ARCHITECTURE.md). Hasta tener `.venv` solo usa la biblioteca
estándar: prepara `.venv` (pip install -e '.[dev]') y `node_modules` (npm ci) y
luego se vuelve a ejecutar con `.venv/bin/python`, donde ya puede importar
markdown-it-py.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "py"))

# Standard library only: these modules of the build package import nothing else.
from deckbuild.commands import run_command, step  # noqa: E402
from deckbuild.errors import BuildError  # noqa: E402
from deckbuild.files import hash_file  # noqa: E402
from deckbuild.paths import DEFAULT_OUT, DEFAULT_SLIDES, NODE_MODULES, ROOT, VENV  # noqa: E402

OPTIONS_WITH_VALUE = ("--port", "--pyodide-dist", "--slides", "--out")
FLAGS = ("--keep-going", "--no-browser")
NO_BROWSER_LINE = "sin navegador: las pruebas del navegador no se ejecutaron (--no-browser)"


# ---------------------------------------------------------------------------
# Setup: .venv and node_modules (runs under any Python ≥ 3.11)
# ---------------------------------------------------------------------------

def locate_venv_python() -> Path:
    return VENV / "bin" / "python"


def ensure_venv() -> None:
    """Create or refresh .venv from pyproject.toml when it changed."""
    stamp = VENV / ".dpdeck-pyproject.sha256"
    wanted = hash_file(ROOT / "pyproject.toml")
    if locate_venv_python().exists() and stamp.exists() and stamp.read_text().strip() == wanted:
        return
    with step("entorno Python .venv (pip install -e '.[dev]')"):
        if not locate_venv_python().exists():
            run_command([sys.executable, "-m", "venv", VENV], what="python3 -m venv .venv")
        run_command([locate_venv_python(), "-m", "pip", "install", "--disable-pip-version-check",
                     "--progress-bar", "on", "-e", ".[dev]"], what="pip install -e '.[dev]'")
        stamp.write_text(wanted + "\n")


def ensure_node_modules() -> None:
    """Run npm ci when node_modules is missing or package-lock.json changed."""
    stamp = NODE_MODULES / ".dpdeck-package-lock.sha256"
    wanted = hash_file(ROOT / "package-lock.json")
    if stamp.exists() and stamp.read_text().strip() == wanted:
        return
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise BuildError("hace falta Node.js ≥ 20 con npm (no se encuentran «node» o «npm» en PATH)")
    with step("dependencias de Node (npm ci)"):
        # No install scripts: esbuild runs through its platform package from the JS API.
        run_command(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], what="npm ci")
        stamp.write_text(wanted + "\n")


def reexec_in_venv() -> None:
    """Continue under .venv/bin/python so markdown-it-py and dpdeck can be imported."""
    if Path(sys.prefix).resolve() == VENV.resolve():
        return
    sys.stdout.flush()
    os.execv(locate_venv_python(), [str(locate_venv_python()), str(Path(__file__).resolve()), *sys.argv[1:]])


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

def parse_arguments(argv: list[str]) -> tuple[str, dict, list[str]]:
    """Split argv into the command, our options and (for `test`) pytest's arguments."""
    command, options, rest = "build", {}, []
    index = 0
    while index < len(argv):
        argument = argv[index]
        name, equals, value = argument.partition("=")
        if name in OPTIONS_WITH_VALUE:
            if not equals:
                index += 1
                if index >= len(argv):
                    raise BuildError(f"{name} necesita un valor")
                value = argv[index]
            options[name[2:].replace("-", "_")] = value
        elif argument in FLAGS:
            options[argument[2:].replace("-", "_")] = True
        elif argument in ("-h", "--help") and command != "test":
            print(__doc__)
            sys.exit(0)
        elif command == "build" and argument in ("build", "serve", "test", "bench") and not rest:
            command = argument
        elif command in ("test", "bench"):
            rest.append(argument)
        else:
            raise BuildError(f"argumento desconocido «{argument}» (ver python3 build.py --help)")
        index += 1
    if options.get("no_browser") and command != "test":
        raise BuildError("--no-browser solo tiene sentido con «test»")
    return command, options, rest


def run_tests(out: Path, slides: Path, pytest_args: list[str], *, no_browser: bool) -> int:
    """pytest over tests/ against out/; return its exit code.

    Without --no-browser a missing Chromium fails the run (tests/conftest.py says
    how to get one); with it the browser tests are left out and the last line
    of output says so.
    """
    env = {**os.environ, "DPDECK_DIST": str(out), "DPDECK_SLIDES": str(slides)}
    if no_browser:
        env["DPDECK_NO_BROWSER"] = "1"
    sys.stdout.flush()
    code = subprocess.run([locate_venv_python(), "-m", "pytest", *pytest_args], cwd=ROOT, env=env).returncode
    if no_browser:
        print(NO_BROWSER_LINE, flush=True)
    return code


def main(argv: list[str]) -> int:
    command, options, pytest_args = parse_arguments(argv)
    if sys.version_info < (3, 11):
        raise BuildError("hace falta Python ≥ 3.11")
    ensure_venv()
    ensure_node_modules()
    reexec_in_venv()
    from deckbuild.pipeline import build   # needs .venv (markdown-it-py)

    out = Path(options.get("out", DEFAULT_OUT)).resolve()
    slides = Path(options.get("slides", DEFAULT_SLIDES)).resolve()
    build(slides, out, Path(options["pyodide_dist"]) if options.get("pyodide_dist") else None,
          keep_going=options.get("keep_going", False))
    if command == "serve":
        from deckbuild.server import serve
        serve(out, int(options.get("port", 8000)))
    elif command == "test":
        return run_tests(out, slides, pytest_args, no_browser=options.get("no_browser", False))
    elif command == "bench":
        from deckbuild.bench import run_benchmark
        return run_benchmark(out, Path(options["pyodide_dist"]) if options.get("pyodide_dist") else None, pytest_args)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except BuildError as error:
        print(f"\nerror: {error}", file=sys.stderr, flush=True)
        sys.exit(1)
    except KeyboardInterrupt:
        print("\ninterrumpido", file=sys.stderr)
        sys.exit(130)
