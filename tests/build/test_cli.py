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

# A browser test module and a module without browser tests.
BROWSER_TESTS = "tests/browser/test_offline.py"
OTHER_TESTS = "tests/build/test_server.py"


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
         "--out", str(tmp_path / "dist"), BROWSER_TESTS, OTHER_TESTS, "-q", "-p", "no:cacheprovider"],
        cwd=ROOT, env=without_chromium, capture_output=True, text=True, timeout=600)
    lines = result.stdout.strip().splitlines()
    assert result.returncode == 0, result.stdout + result.stderr
    assert lines[-1] == build.NO_BROWSER_LINE
    assert "deselected" in lines[-2] and " passed" in lines[-2], lines[-2]


def test_build_py_starts_with_the_standard_library_only():
    """Before .venv exists build.py must import: no site-packages at all (-S), and no third-party module loaded."""
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); import build; "
             "print(sorted(name for name in sys.modules if name.split('.')[0] in "
             "('markdown_it', 'mdit_py_plugins', 'numpy', 'matplotlib', 'playwright', 'dpdeck')))")
    result = subprocess.run([sys.executable, "-S", "-c", probe, str(ROOT)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"
