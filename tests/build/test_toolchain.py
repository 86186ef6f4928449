"""The toolchain: the Python lock, the verified esbuild program, and a dist/ that no machine changes.

The clone-based tests build copies of the repository (deck_fixtures.make_clone):
what they break or compare never touches this working tree.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import subprocess
import sys
import sysconfig
import threading
import tomllib
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from deck_fixtures import ROOT, make_clone, write_deck
from deckbuild.commands import make_node_environment
from deckbuild.errors import BuildError
from deckbuild.pins import PINS, describe_platform, find_esbuild_binary_pin, locate_esbuild_binary

sys.path.insert(0, str(ROOT))
import build  # noqa: E402  (standard library only at import time)

LOCK = ROOT / "requirements.lock"
ESBUILD_PLATFORMS = ("linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64")


def read_lock(path: Path = LOCK) -> dict[str, tuple[str, Marker | None, list[str]]]:
    """{canonical name: (version, marker, hashes)} of a requirements file made by `uv pip compile`."""
    entries: dict[str, tuple[str, Marker | None, list[str]]] = {}
    current = None
    for line in path.read_text(encoding="utf-8").splitlines():
        text = line.split("#", 1)[0].strip().rstrip("\\").strip()
        if not text:
            continue
        if text.startswith("--hash="):
            algorithm, _, digest = text[len("--hash="):].partition(":")
            assert algorithm == "sha256" and re.fullmatch(r"[0-9a-f]{64}", digest), line
            entries[current][2].append(digest)
            continue
        assert not text.startswith("-"), f"el lock no debe llevar opciones de pip (índices, enlaces): {line}"
        requirement = Requirement(text)
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", line
        current = canonicalize_name(requirement.name)
        if current in entries:   # the same package under two markers
            current = f"{current} ; {requirement.marker}"
        entries[current] = (specifier.version, requirement.marker, [])
    return entries


def read_declared_requirements() -> list[Requirement]:
    with open(ROOT / "pyproject.toml", "rb") as handle:
        project = tomllib.load(handle)["project"]
    declared = [*project["dependencies"], *project["optional-dependencies"]["dev"]]
    for line in (ROOT / "requirements.in").read_text(encoding="utf-8").splitlines():
        if line.split("#", 1)[0].strip():
            declared.append(line.split("#", 1)[0].strip())
    return [Requirement(text) for text in declared]


# ------------------------------------------------------------ the Python lock


def test_the_lock_pins_every_package_once_with_its_hashes():
    entries = read_lock()
    assert entries, "requirements.lock está vacío"
    for name, (version, marker, hashes) in entries.items():
        assert hashes, f"{name}=={version} sin --hash"
    for requirement in read_declared_requirements():
        name = canonicalize_name(requirement.name)
        assert name in entries, f"{requirement} no está en requirements.lock"
        assert requirement.specifier.contains(entries[name][0]), (requirement, entries[name][0])
    # One version for every Python the lock covers: the pre-rendered outputs must not depend on it.
    assert not [name for name in entries if " ; " in name], "un paquete con versiones distintas según el Python"


def test_the_environment_is_exactly_the_lock():
    """Every locked package at its version, and nothing else installed (a refreshed .venv is made anew)."""
    wanted = {name: version for name, (version, marker, _) in read_lock().items()
              if marker is None or marker.evaluate()}
    paths = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    installed = {canonicalize_name(dist.metadata["Name"]): dist.version
                 for dist in importlib.metadata.distributions(path=paths)}
    assert {name: installed.get(name) for name in wanted} == wanted
    assert set(installed) - set(wanted) - {"dpdeck", "pip"} == set()


def test_the_lock_resolves_from_pypi_alone():
    text = LOCK.read_text(encoding="utf-8")
    for option in ("--index-url", "--extra-index-url", "--find-links", "-f ", "file://", "/opt/"):
        assert option not in text, option


@pytest.fixture
def fake_venv(tmp_path, monkeypatch):
    """build.py's bootstrap pointed at a folder, with run_command recording instead of running."""
    venv = tmp_path / "venv"
    lock = tmp_path / "requirements.lock"
    lock.write_text(LOCK.read_text(encoding="utf-8"), encoding="utf-8")
    commands = []

    def record(command, *, what, **_):
        commands.append([str(part) for part in command])
        if "venv" in command and "--clear" in command:
            (venv / "bin").mkdir(parents=True, exist_ok=True)
            (venv / "bin" / "python").write_text("")

    monkeypatch.setattr(build, "VENV", venv)
    monkeypatch.setattr(build, "VENV_STAMP", venv / ".dpdeck-environment.sha256")
    monkeypatch.setattr(build, "LOCK_FILE", lock)
    monkeypatch.setattr(build, "run_command", record)
    return commands, lock


def test_the_bootstrap_installs_the_lock_with_hashes_then_the_project_without_dependencies(fake_venv):
    commands, lock = fake_venv
    assert build.ensure_venv() is True
    create, locked, project = commands
    assert create[1:] == ["-m", "venv", "--clear", str(build.VENV)]
    assert locked[-3:] == ["--require-hashes", "-r", str(lock)] and "install" in locked
    assert project[-5:] == ["--no-deps", "--no-build-isolation", "--no-index", "-e", "."]


def test_npm_ci_runs_while_pip_installs_and_a_failure_of_either_stops_the_bootstrap(monkeypatch):
    # Each waits until the other has started: one after the other, the first would wait in vain.
    pip_running, npm_running = threading.Event(), threading.Event()

    def install_venv():
        pip_running.set()
        assert npm_running.wait(timeout=30), "pip esperó a que terminara npm ci"
        return True

    def install_node_modules():
        npm_running.set()
        assert pip_running.wait(timeout=30), "npm ci esperó a que terminara pip"
        return 1.0

    monkeypatch.setattr(build, "ensure_venv", install_venv)
    monkeypatch.setattr(build, "ensure_node_modules", install_node_modules)
    assert build.ensure_tools() is True

    def fail(what):
        def failing():
            raise BuildError(f"{what} falló (código 1)")
        return failing

    monkeypatch.setattr(build, "ensure_venv", lambda: True)
    monkeypatch.setattr(build, "ensure_node_modules", fail("npm ci"))
    with pytest.raises(BuildError, match="npm ci falló"):
        build.ensure_tools()
    monkeypatch.setattr(build, "ensure_venv", fail("pip install"))
    monkeypatch.setattr(build, "ensure_node_modules", lambda: None)
    with pytest.raises(BuildError, match="pip install falló"):
        build.ensure_tools()


def test_the_bootstrap_rebuilds_the_venv_when_the_lock_changes(fake_venv):
    commands, lock = fake_venv
    build.ensure_venv()
    commands.clear()
    assert build.ensure_venv() is False and commands == []
    lock.write_text(lock.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert build.ensure_venv() is True
    assert commands[0][-2:] == ["--clear", str(build.VENV)]


# ------------------------------------------------------------ the esbuild program


def test_every_platform_has_its_esbuild_program_pinned():
    pinned = {pin.platform: pin for pin in PINS if pin.name.startswith("@esbuild/")}
    assert set(ESBUILD_PLATFORMS) <= set(pinned)
    assert all(pin.file == "bin/esbuild" and pin.name == f"@esbuild/{platform}" for platform, pin in pinned.items())
    assert find_esbuild_binary_pin().platform == describe_platform()


def test_a_platform_without_a_pinned_program_is_told_so():
    with pytest.raises(BuildError, match=r"no fija el programa de esbuild 0\.25\.9 para esta plataforma "
                                         r"\(freebsd-riscv64; fijadas: linux-x64"):
        find_esbuild_binary_pin("freebsd-riscv64")


def test_node_runs_the_verified_program_and_nothing_of_the_callers(monkeypatch, tmp_path):
    monkeypatch.setenv("NODE_OPTIONS", f"--require {tmp_path / 'otro.js'}")
    monkeypatch.setenv("NODE_PATH", str(tmp_path))
    monkeypatch.setenv("ESBUILD_BINARY_PATH", "/bin/true")
    environment = make_node_environment()
    assert environment["ESBUILD_BINARY_PATH"] == str(locate_esbuild_binary())
    assert set(environment) == {"PATH", "LANG", "LC_ALL", "TZ", "ESBUILD_BINARY_PATH"}


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    return make_clone(tmp_path_factory.mktemp("clon") / "dpdeck")


def clone_build_command(clone: Path, arguments, env: dict | None) -> dict:
    environment = {**os.environ, **(env or {}), "DPDECK_CACHE": str(clone / ".cache")}
    return {"args": [sys.executable, str(clone / "build.py"), *map(str, arguments)], "cwd": clone,
            "env": environment, "text": True}


def run_clone_build(clone: Path, *arguments, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(**clone_build_command(clone, arguments, env), capture_output=True, timeout=900)


def run_clone_builds_side_by_side(builds: list[tuple[Path, tuple, dict]]) -> list[subprocess.CompletedProcess]:
    """Several clone builds at once (one per core of a small machine), each with its own log files."""
    started = []
    for number, (clone, arguments, env) in enumerate(builds):
        out, err = (open(clone.parent / f"build-{number}.{name}", "w+", encoding="utf-8") for name in ("out", "err"))
        started.append((subprocess.Popen(**clone_build_command(clone, arguments, env), stdout=out, stderr=err), out, err))
    results = []
    for process, out, err in started:
        with out, err:
            returncode = process.wait(timeout=900)
            out.seek(0)
            err.seek(0)
            results.append(subprocess.CompletedProcess(process.args, returncode, out.read(), err.read()))
    return results


def test_a_byte_appended_to_the_esbuild_program_stops_the_build(clone, tmp_path):
    program = clone / "node_modules" / find_esbuild_binary_pin().name / "bin" / "esbuild"
    original = program.read_bytes()
    program.unlink()   # a hard link to this working tree's copy: replace it, never write into it
    program.write_bytes(original + b"\0")
    program.chmod(0o755)
    try:
        slides = write_deck(tmp_path / "slides", {"00.md": "# Solo texto\n"})
        result = run_clone_build(clone, "--slides", slides, "--out", tmp_path / "dist")
    finally:
        program.unlink()
        os.link(locate_esbuild_binary(), program)
    assert result.returncode == 1, result.stdout
    assert f"{find_esbuild_binary_pin().label}: SHA-256" in result.stderr and "no coincide" in result.stderr
    assert "Borra node_modules" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "dist").exists()


def test_out_naming_the_repository_is_refused(clone, tmp_path):
    before = sorted(path.name for path in clone.iterdir())
    slides = write_deck(tmp_path / "slides", {"00.md": "# Solo texto\n"})
    for out, message in ((clone, "contiene el repositorio"), (clone.parent, "contiene el repositorio"),
                         (clone / "deck", "no es un mazo construido")):
        result = run_clone_build(clone, "--slides", slides, "--out", out)
        assert result.returncode == 1 and message in result.stderr, result.stderr
        assert sorted(path.name for path in clone.iterdir()) == before


# ------------------------------------------------------------ the same dist/ on any machine

# Cells whose output would show where and by whom the deck was built, if anything leaked.
PROBE_SLIDES = """\
# Sondas

```python id=sonda-reloj
import datetime
print(datetime.datetime.fromtimestamp(0))
```

---

# Entorno

```python id=sonda-entorno
import locale, os, sys
print(sorted(name for name in os.environ if not name.startswith("DPDECK")))
print(locale.getencoding(), sys.flags.utf8_mode, list({"uno", "dos", "tres", "cuatro", "cinco"}))
```

---

# Procesador

```python id=sonda-procesador
import hashlib
import numpy as np
x = np.linspace(-30.0, 30.0, 200_001)
for f in (np.exp, np.log1p, np.tanh, np.arctan):
    print(f.__name__, hashlib.sha256(f(np.abs(x) * 0.5).tobytes()).hexdigest()[:16])
```

---

# Letras

```python id=sonda-letras figures=1
import matplotlib.pyplot as plt
fig, ax = plt.subplots(figsize=(3, 1.5))
ax.plot([0, 1], [0, 1])
ax.set_title("Una letra que esta máquina tiene", fontfamily="Letra De Prueba")
ax.set_xlabel("y la de siempre")
```
"""


def make_user_font(folder: Path) -> None:
    """A font installed for the user only, named «Letra De Prueba» (matplotlib's DejaVu Serif renamed)."""
    import matplotlib
    from fontTools.ttLib import TTFont

    font = TTFont(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSerif.ttf")
    for record in font["name"].names:
        if record.nameID in (1, 4, 16):
            record.string = "Letra De Prueba"
        elif record.nameID == 6:
            record.string = "LetraDePrueba"
    folder.mkdir(parents=True, exist_ok=True)
    font.save(folder / "LetraDePrueba.ttf")


def make_environment(home: Path, **changes) -> dict:
    """os.environ with a home of its own and the given changes (None removes a variable)."""
    environment = {**os.environ, "HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"),
                   "XDG_CACHE_HOME": str(home / ".cache"), "XDG_DATA_HOME": str(home / ".local" / "share")}
    for name, value in changes.items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return environment


def read_tree(folder: Path) -> dict[str, bytes]:
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in sorted(folder.rglob("*"))
            if path.is_file()}


def count_cells(build_output: str) -> tuple[int, int]:
    """(cells, how many came from the cache), as the build says them."""
    cells, cached = re.search(r"^  (\d+) celdas \((\d+) de la caché\)$", build_output, re.MULTILINE).groups()
    return int(cells), int(cached)


def test_two_clones_in_two_environments_build_the_same_dist(tmp_path):
    """The whole deck plus probe cells, built by two fresh clones whose machines differ in every way we can vary.

    Clone b runs every cell, compiles Pyodide's bytecode and takes Python's
    memory snapshot in its own environment; clone a runs the probe cells and
    takes the deck's pre-rendered cells, the bytecode and the snapshot from the
    suite's own build (made in a third environment, the machine's as it is), so
    every step of the two dist/ still comes from different environments, at the
    cost of one compilation, one snapshot and one run of the deck's cells
    instead of two.
    """
    reused = ("prerender", "precompiled", "snapshots")
    first = make_clone(tmp_path / "a" / "dpdeck", also_reused=reused)
    second = make_clone(tmp_path / "b" / "dpdeck")
    assert not set(reused) & {kind.name for kind in (second / ".cache").iterdir()}
    for clone in (first, second):
        slides = clone / "deck" / "slides"
        (slides / "99-sondas.md").write_text(PROBE_SLIDES, encoding="utf-8")
    home_a, home_b = tmp_path / "a" / "casa", tmp_path / "b" / "casa"
    home_a.mkdir()
    make_user_font(home_b / ".local" / "share" / "fonts")
    make_user_font(home_b / ".fonts")
    rc = home_b / ".config" / "matplotlib" / "matplotlibrc"
    rc.parent.mkdir(parents=True)
    rc.write_text("lines.linewidth: 9\nfont.family: serif\nfigure.facecolor: yellow\n", encoding="utf-8")
    environments = {
        first: make_environment(home_a, TZ="UTC", LANG="C.UTF-8", LC_ALL="C.UTF-8", PYTHONHASHSEED="0",
                                MPLBACKEND=None, MATPLOTLIBRC=None, NPY_DISABLE_CPU_FEATURES=None),
        second: make_environment(home_b, TZ="America/Havana", LANG="C", LC_ALL="POSIX", PYTHONHASHSEED="random",
                                 MPLBACKEND="svg", MATPLOTLIBRC=str(rc), MPLCONFIGDIR=str(rc.parent),
                                 # as on a processor without AVX-512 (harmless where there is none)
                                 NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR",
                                 OPENBLAS_NUM_THREADS="2", SORPRESA="1"),
    }
    outputs = {}
    builds = [(clone, ("--out", clone / "dist"), environment) for clone, environment in environments.items()]
    probes = PROBE_SLIDES.count("```python id=")
    for (clone, _, _), result in zip(builds, run_clone_builds_side_by_side(builds)):
        assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
        cells, cached = count_cells(result.stdout)
        if clone == second:
            assert cached == 0, "el clon b ejecuta todas las celdas"
        else:
            assert cached <= cells - probes, "el clon a ejecuta las celdas de prueba"
        outputs[clone] = read_tree(clone / "dist")
    one, other = outputs[first], outputs[second]
    assert sorted(one) == sorted(other)
    differing = [name for name in one if one[name] != other[name]]
    assert differing == [], f"archivos distintos entre los dos clones: {differing}"
    page = one["index.html"].decode("utf-8")
    assert "1970-01-01 00:00:00" in page   # the clock's zone is UTC for every build
