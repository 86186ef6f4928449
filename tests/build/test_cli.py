"""build.py's command line, and the test command's rule: the browser suite runs, or the run says why not.

The discovery is checked in subprocesses with no Chromium to find: DPDECK_CHROMIUM
points at a missing file (instead of /usr/bin/chromium) and PLAYWRIGHT_BROWSERS_PATH
at an empty folder (so Playwright has none of its own either).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from deck_fixtures import ROOT, write_deck

sys.path.insert(0, str(ROOT))
import build  # noqa: E402  (standard library only at import time)

# A browser test module and a module without browser tests: a quick one, with no clocks or sockets
# to be upset by the rest of the suite running beside it.
BROWSER_TESTS = "tests/browser/test_offline.py"
OTHER_TESTS = "tests/test_suite_order.py"


def test_command_line_keeps_pytest_arguments():
    assert build.parse_arguments(["test", "-k", "offline", "--out", "x", "-x"]) == (
        "test", {"out": "x"}, ["-k", "offline", "-x"])
    assert build.parse_arguments(["serve", "--port=9000"]) == ("serve", {"port": "9000"}, [])
    assert build.parse_arguments([]) == ("build", {}, [])
    assert build.parse_arguments(["test", "--no-browser", "-q"]) == ("test", {"no_browser": True}, ["-q"])


def test_no_browser_only_goes_with_test():
    with pytest.raises(build.BuildError, match="--no-browser"):
        build.parse_arguments(["serve", "--no-browser"])


@pytest.fixture
def without_chromium(tmp_path):
    """An environment in which neither Debian's nor Playwright's Chromium exists."""
    (tmp_path / "navegadores").mkdir()
    env = {**os.environ, "DPDECK_CHROMIUM": str(tmp_path / "no-hay-chromium"),
           "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path / "navegadores")}
    env.pop("DPDECK_NO_BROWSER", None)
    return env


def run_pytest(env: dict, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *arguments],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def test_without_chromium_the_browser_tests_stop_the_run_with_the_commands(without_chromium):
    result = run_pytest(without_chromium, BROWSER_TESTS, OTHER_TESTS, "-q")
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "apt-get install chromium" in output and "python -m playwright install chromium" in output, output
    assert "--no-browser" in output
    assert " passed" not in output and " skipped" not in output, output


def test_without_browser_tests_chromium_is_not_needed(without_chromium):
    result = run_pytest(without_chromium, OTHER_TESTS, "-q")
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_browser_found_is_the_one_the_tests_use(tmp_path):
    """DPDECK_CHROMIUM is tried first; a file that is not executable is not a browser."""
    fake = tmp_path / "chromium"
    fake.write_text("#!/bin/sh\n")
    probe = "from deckbuild.browser import find_chromium; print(find_chromium())"
    env = {**os.environ, "DPDECK_CHROMIUM": str(fake), "PLAYWRIGHT_BROWSERS_PATH": str(tmp_path)}
    found = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True)
    assert found.stdout.strip() == "None", found.stderr
    fake.chmod(0o755)
    found = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True)
    assert found.stdout.strip() == str(fake), found.stderr


def test_no_browser_leaves_them_out_and_says_so_on_the_last_line(without_chromium, tmp_path):
    slides = write_deck(tmp_path / "slides", {"00.md": "# Solo texto\n"})
    result = subprocess.run(
        [sys.executable, str(ROOT / "build.py"), "test", "--no-browser", "--slides", str(slides),
         "--out", str(tmp_path / "dist"), BROWSER_TESTS, OTHER_TESTS, "-q", "-p", "no:cacheprovider",
         # one process: pytest-xdist's summary leaves out what its workers deselected
         "-n", "0"],
        cwd=ROOT, env=without_chromium, capture_output=True, text=True, timeout=600)
    lines = result.stdout.strip().splitlines()
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines[-1] == build.NO_BROWSER_LINE
    assert "deselected" in lines[-2] and " passed" in lines[-2], lines[-2]


@pytest.mark.parametrize("arguments", [[], ["tests/py", "-q"], ["-x"]])
def test_the_suite_is_spread_over_workers_unless_told_otherwise(arguments):
    spread = build.spread_over_workers(arguments)
    assert spread == ["-n", str(build.TEST_WORKERS), "--dist", "worksteal", *arguments]
    assert build.TEST_WORKERS >= 2


@pytest.mark.parametrize("arguments", [["-n", "0"], ["-n0", "-q"], ["--numprocesses=4"], ["--dist", "loadfile"]])
def test_a_run_that_says_how_to_spread_is_left_as_it_is(arguments):
    assert build.spread_over_workers(arguments) == arguments


def test_build_py_starts_with_the_standard_library_only():
    """Before .venv exists build.py must import: no site-packages at all (-S), and no third-party module loaded."""
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import build; "
             "print(sorted(name for name in sys.modules if name.split('.')[0] in "
             "('markdown_it', 'mdit_py_plugins', 'numpy', 'matplotlib', 'playwright', 'dpdeck')))")
    result = subprocess.run([sys.executable, "-S", "-c", probe, str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


# ------------------------------------------------------------ options checked before building


@pytest.mark.parametrize("arguments, message", [
    (["serve", "--port", "abc"], "--port 'abc' no es un puerto válido"),
    (["serve", "--port", "70000"], "--port '70000' no es un puerto válido"),
    (["serve", "--port", "65536"], "se espera un número entero de 0 a 65535"),
    (["serve", "--port=-1"], "--port '-1' no es un puerto válido"),
    (["serve", "--port", "８０００"], "no es un puerto válido"),
    (["serve", "--host", "no.existe.invalid"], "--host 'no.existe.invalid' no es una dirección de esta máquina"),
    (["serve", "--host", "192.0.2.1"], "la dirección 192.0.2.1 no es de esta máquina"),
    (["--port", "9000"], "--port solo tiene sentido con «serve»"),
    (["test", "--host", "0.0.0.0"], "--host solo tiene sentido con «serve»"),
    (["--slides"], "--slides necesita un valor"),
    (["--out="], "--out necesita una ruta"),
])
def test_bad_options_stop_before_anything_is_built(arguments, message, tmp_path):
    result = subprocess.run([sys.executable, str(ROOT / "build.py"), *arguments], cwd=ROOT, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 1, result.stdout + result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback" not in result.stderr + result.stdout
    assert "diapositivas leídas" not in result.stdout


def test_a_busy_port_is_said_before_building(tmp_path):
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run([sys.executable, str(ROOT / "build.py"), "serve", "--port", str(port)],
                                cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert result.returncode == 1
    assert f"el puerto {port} ya lo usa otro programa" in result.stderr, result.stderr
    assert "diapositivas leídas" not in result.stdout


def test_port_and_host_are_parsed():
    assert build.parse_port("8000") == 8000 and build.parse_port(" 65535 ") == 65535
    assert build.parse_host("0.0.0.0") == "0.0.0.0" and build.parse_host("[::1]") == "::1"
    assert build.parse_host("localhost") == "localhost"


# ------------------------------------------------------------ the output folder is replaced whole


@pytest.mark.parametrize("where", ["diapositivas", "ajena", "archivo"])
def test_out_never_replaces_a_folder_with_other_work(where, tmp_path):
    """(--out naming the repository itself is tried on a copy: tests/build/test_toolchain.py.)"""
    slides = write_deck(tmp_path / "slides", {"00.md": "# Solo texto\n"})
    out = {"diapositivas": slides, "ajena": tmp_path / "tesis", "archivo": tmp_path / "notas.txt"}[where]
    if where == "ajena":
        out.mkdir()
        (out / "capitulo.tex").write_text("mi trabajo")
    if where == "archivo":
        out.write_text("mis notas")
    before = sorted(path.name for path in out.iterdir()) if out.is_dir() else out.read_text()
    result = subprocess.run([sys.executable, str(ROOT / "build.py"), "--slides", str(slides), "--out", str(out)],
                            cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert result.returncode == 1, result.stdout
    assert "--out" in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert (sorted(path.name for path in out.iterdir()) if out.is_dir() else out.read_text()) == before


@pytest.mark.parametrize("cache", ["archivo", "dentro-de-un-archivo"])
def test_a_cache_that_is_not_a_folder_is_said_plainly(cache, tmp_path):
    (tmp_path / "archivo").write_text("no es una carpeta")
    slides = write_deck(tmp_path / "slides", {"00.md": "# Solo texto\n"})
    path = tmp_path / "archivo" if cache == "archivo" else tmp_path / "archivo" / "cache"
    result = subprocess.run([sys.executable, str(ROOT / "build.py"), "--slides", str(slides), "--out",
                             str(tmp_path / "dist")], cwd=ROOT, capture_output=True, text=True, timeout=300,
                            env={**os.environ, "DPDECK_CACHE": str(path)})
    assert result.returncode == 1
    assert "no es una carpeta en la que se pueda escribir" in result.stderr and "Traceback" not in result.stderr
