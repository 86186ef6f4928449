#!/usr/bin/env python3
"""Construye, sirve y prueba el mazo dpdeck: un sitio estático que funciona sin conexión.

    python3 build.py                     construye dist/
    python3 build.py serve [--port N] [--host DIRECCIÓN]
                                         construye y sirve dist/ (por defecto en http://127.0.0.1:8000/;
                                         --host 0.0.0.0 lo sirve a toda la red local, para una clase)
    python3 build.py test [args pytest]  construye y ejecuta todas las pruebas
    python3 build.py bench [--rounds N] [--compare CARPETA] [--no-cells]
                                         construye y compara el arranque en Chromium con el
                                         de una página de Pyodide sin más (py/deckbuild/bench.py)

Opciones: --pyodide-dist RUTA (carpeta o .tar.bz2/.tar.gz de la distribución
oficial de Pyodide 0.27.7), --slides CARPETA, --out CARPETA, --keep-going (mientras
se escribe el mazo: una celda que falla se avisa y su error queda en la página,
en lugar de detener la construcción), --no-snapshot (sin la instantánea de la
memoria de Python: el navegador arranca Python desde cero en cada visita),
--no-browser (con test: sin las pruebas del navegador, y lo dice en la última línea).
La variable DPDECK_CACHE cambia la carpeta de descargas y resultados (.cache/).

Este archivo es el arranque y la línea de órdenes; la construcción está en
py/deckbuild/ (ver ARCHITECTURE.md). Hasta tener `.venv` solo usa la biblioteca
estándar: prepara `.venv` (pip install --require-hashes -r requirements.lock y
luego el proyecto con --no-deps) y `node_modules` (npm ci) y luego se vuelve a
ejecutar con `.venv/bin/python`, donde ya puede importar markdown-it-py.
"""

from __future__ import annotations

import concurrent.futures
import ipaddress
import os
import platform
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "py"))

# Standard library only: these modules of the build package import nothing else.
from deckbuild.commands import run_command, step  # noqa: E402
from deckbuild.errors import BuildError, stop_on_signals  # noqa: E402
from deckbuild.files import hash_bytes, hash_file  # noqa: E402
from deckbuild.paths import DEFAULT_OUT, DEFAULT_SLIDES, NODE_MODULES, ROOT, VENV  # noqa: E402
from deckbuild.system import NODE_MINIMUM, Host, is_at_least, provide_system_packages  # noqa: E402

OPTIONS_WITH_VALUE = ("--port", "--host", "--pyodide-dist", "--slides", "--out")
FLAGS = ("--keep-going", "--no-browser", "--no-snapshot")
SERVE_OPTIONS = ("port", "host")
DEFAULT_PORT = 8000
DEFAULT_HOST = "127.0.0.1"
NO_BROWSER_LINE = "sin navegador: las pruebas del navegador no se ejecutaron (--no-browser)"
# pytest processes the suite is spread over (pytest-xdist). Most of a browser
# test is spent waiting (for Python, a timer, a page), so three keep two cores
# busy; `-n N` among pytest's arguments chooses another number (`-n 0`: none).
TEST_WORKERS = 3
# The build and test environment, every package pinned with its SHA-256 (README: «Las dependencias»).
LOCK_FILE = ROOT / "requirements.lock"
VENV_STAMP = VENV / ".dpdeck-environment.sha256"


# ---------------------------------------------------------------------------
# Setup: .venv and node_modules (runs under any Python ≥ 3.11)
# ---------------------------------------------------------------------------

def locate_venv_python() -> Path:
    return VENV / "bin" / "python"


def describe_python_environment() -> str:
    """What .venv is made from: the lock, pyproject.toml and this Python; any change rebuilds it."""
    parts = [hash_file(LOCK_FILE), hash_file(ROOT / "pyproject.toml"), sys.implementation.name,
             ".".join(map(str, sys.version_info[:3])), platform.machine()]
    return hash_bytes("\0".join(parts).encode())


def find_base_python() -> str:
    """The Python .venv is created from: this one, or the one .venv was made from when running inside it."""
    if Path(sys.prefix).resolve() == VENV.resolve():
        return getattr(sys, "_base_executable", sys.executable)
    return sys.executable


def ensure_venv() -> bool:
    """Create .venv anew from requirements.lock when it, pyproject.toml or the Python changed.

    Every package comes from the lock with --require-hashes (a file whose SHA-256
    is not the locked one is refused); then the project itself, with --no-deps
    and no build isolation, so pip downloads nothing that is not locked.
    Returns whether .venv was (re)built.
    """
    if not LOCK_FILE.is_file():
        raise BuildError(f"falta {LOCK_FILE.name}: las versiones de Python del proyecto están en él")
    wanted = describe_python_environment()
    if locate_venv_python().exists() and VENV_STAMP.exists() and VENV_STAMP.read_text().strip() == wanted:
        return False
    base = find_base_python()
    probe = subprocess.run([base, "-c", "import ensurepip, venv"], capture_output=True)
    if probe.returncode != 0:
        raise BuildError("este Python no puede crear entornos virtuales (faltan venv/ensurepip); "
                         "en Debian: apt-get install python3-venv")
    with step(f"entorno Python .venv ({LOCK_FILE.name}, con --require-hashes)"):
        # Made anew: a package the lock no longer names must not linger.
        VENV_STAMP.unlink(missing_ok=True)
        run_command([base, "-m", "venv", "--clear", VENV], what="python3 -m venv --clear .venv")
        pip = [locate_venv_python(), "-m", "pip", "install", "--disable-pip-version-check", "--progress-bar", "on"]
        run_command([*pip, "--require-hashes", "-r", LOCK_FILE], what=f"pip install -r {LOCK_FILE.name}")
        run_command([*pip, "--no-deps", "--no-build-isolation", "--no-index", "-e", "."],
                    what="pip install --no-deps -e .")
        VENV_STAMP.write_text(wanted + "\n")
    return True


def ensure_node_modules() -> float | None:
    """Run npm ci, its output kept, when node_modules is missing or package-lock.json changed.

    Returns how long npm ci took, or None when node_modules was up to date.
    """
    stamp = NODE_MODULES / ".dpdeck-package-lock.sha256"
    wanted = hash_file(ROOT / "package-lock.json")
    if stamp.exists() and stamp.read_text().strip() == wanted:
        return None
    started = time.perf_counter()
    # No install scripts: esbuild runs through its platform package from the JS API.
    run_command(["npm", "ci", "--ignore-scripts", "--no-audit", "--no-fund"], what="npm ci", capture=True)
    stamp.write_text(wanted + "\n")
    return time.perf_counter() - started


def ensure_tools() -> bool:
    """.venv and node_modules, npm ci beside pip: pip keeps one core busy, npm mostly waits on files.

    Returns whether .venv was (re)built.
    """
    if shutil.which("node") is None or shutil.which("npm") is None:
        raise BuildError(f"hace falta Node.js ≥ {NODE_MINIMUM} con npm (no se encuentran «node» o «npm» en PATH)")
    check_node_version()
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        node_modules = pool.submit(ensure_node_modules)
        rebuilt = ensure_venv()
    seconds = node_modules.result()
    if seconds is not None:
        print(f"  ✓ dependencias de Node (npm ci, junto a .venv) ({seconds:.2f} s)", flush=True)
    return rebuilt


def check_node_version() -> None:
    """The build needs Node ≥ NODE_MINIMUM (deckbuild.system says why); an older one would fail later with a JS error."""
    found = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip()
    if not is_at_least(found, NODE_MINIMUM):
        raise BuildError(f"hace falta Node.js ≥ {NODE_MINIMUM}; el de PATH es {found or 'desconocido'}")


def reexec_in_venv(rebuilt: bool = False) -> None:
    """Continue under .venv/bin/python so markdown-it-py and dpdeck can be imported."""
    if Path(sys.prefix).resolve() == VENV.resolve() and not rebuilt:
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
    for name in SERVE_OPTIONS:
        if name in options and command != "serve":
            raise BuildError(f"--{name} solo tiene sentido con «serve»")
    return command, options, rest


def parse_port(text: str) -> int:
    """--port: a whole number from 0 (any free port) to 65535."""
    value = text.strip()
    if not (value.isascii() and value.isdigit()) or not 0 <= int(value) <= 65535:
        raise BuildError(f"--port {text!r} no es un puerto válido: se espera un número entero de 0 a 65535 "
                         f"(por ejemplo --port {DEFAULT_PORT}; 0 elige uno libre)")
    return int(value)


def parse_host(text: str) -> str:
    """--host: an IP address or a name of this machine that can be served on."""
    value = text.strip()
    if value.startswith("[") and value.endswith("]"):
        value = value[1:-1]
    try:
        return str(ipaddress.ip_address(value))
    except ValueError:
        pass
    try:
        socket.getaddrinfo(value, None, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError, ValueError):
        raise BuildError(f"--host {text!r} no es una dirección de esta máquina: usa {DEFAULT_HOST} "
                         "(solo este ordenador) o 0.0.0.0 (toda la red local)") from None
    return value


def check_options(options: dict) -> None:
    """Values that would only fail after a long build are checked first."""
    if "port" in options:
        options["port"] = parse_port(options["port"])
    if "host" in options:
        options["host"] = parse_host(options["host"])
    for name in ("slides", "out", "pyodide_dist"):
        if name in options and not str(options[name]).strip():
            raise BuildError(f"--{name.replace('_', '-')} necesita una ruta")


def spread_over_workers(pytest_args: list[str]) -> list[str]:
    """pytest's arguments with the suite spread over TEST_WORKERS processes, unless they say how (-n, --dist).

    worksteal: each worker starts with a contiguous share of the suite, so a
    file's shared fixtures (a booted deck, a built fixture deck) are mostly set
    up once, and takes over another's remaining tests when it runs out.
    """
    if any(arg.startswith(("-n", "--numprocesses", "--dist")) for arg in pytest_args):
        return pytest_args
    return ["-n", str(TEST_WORKERS), "--dist", "worksteal", *pytest_args]


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
    command = [locate_venv_python(), "-m", "pytest", *spread_over_workers(pytest_args)]
    code = subprocess.run(command, cwd=ROOT, env=env).returncode
    if no_browser:
        print(NO_BROWSER_LINE, flush=True)
    return code


def main(argv: list[str]) -> int:
    # A terminal whose encoding lacks «·», «✓» or «ε» gets a replacement, never a traceback.
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="replace")
    # `kill`, a CI timeout or a closed terminal stop the build as Ctrl+C does, cleaning up and saying so.
    stop_on_signals()
    command, options, pytest_args = parse_arguments(argv)
    check_options(options)
    if command == "serve":
        from deckbuild.serve import check_address
        check_address(options.get("host", DEFAULT_HOST), options.get("port", DEFAULT_PORT))
    if sys.version_info < (3, 11):
        raise BuildError("hace falta Python ≥ 3.11")
    if command == "test":
        # Like .venv and node_modules: what the tests drive is installed here, or the run stops now.
        provide_system_packages(Host.this_machine(), browsers=not options.get("no_browser"))
    rebuilt = ensure_tools()
    reexec_in_venv(rebuilt)
    from deckbuild.pipeline import build   # needs .venv (markdown-it-py)

    out = Path(options.get("out", DEFAULT_OUT)).resolve()
    slides = Path(options.get("slides", DEFAULT_SLIDES)).resolve()
    build(slides, out, Path(options["pyodide_dist"]) if options.get("pyodide_dist") else None,
          keep_going=options.get("keep_going", False), snapshot=not options.get("no_snapshot", False))
    if command == "serve":
        from deckbuild.serve import serve
        serve(out, options.get("port", DEFAULT_PORT), options.get("host", DEFAULT_HOST))
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
    except KeyboardInterrupt as interruption:
        # 128 + the signal's number, as a shell reports a process a signal ended (SIGINT: 130, SIGTERM: 143).
        signal_number = getattr(interruption, "signal_number", 2)
        print(f"\ninterrumpido ({interruption.args[0] if interruption.args else 'SIGINT'})", file=sys.stderr)
        sys.exit(128 + signal_number)
