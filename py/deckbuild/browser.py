"""The Chromium that the browser tests drive: Debian's, else Playwright's own.

DPDECK_CHROMIUM names another executable to try first (instead of
/usr/bin/chromium); PLAYWRIGHT_BROWSERS_PATH is where Playwright keeps its own.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .errors import BuildError

DEBIAN_CHROMIUM = Path("/usr/bin/chromium")
# The omnibox's WebUI popups: recent Chromium starts them in a renderer of their
# own even when headless, where nobody sees them, and on a 2-core machine their
# start-up (seconds of CPU) would run alongside the page under test.
OMNIBOX_WEBUI_FEATURES = "WebUIOmniboxPopup,WebUIOmniboxAimPopup,WebUIOmniboxFullPopup"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run",
                 f"--disable-features={OMNIBOX_WEBUI_FEATURES}"]
# The test suite's Chromium (tests/). V8 recompiles a WebAssembly function with its optimising compiler
# once it has run a while (its tiering budget); the Python of a test lives seconds, so most of that
# compiling never paid back. With a budget 28 times the default the suite's Chromium spent 4 to 5 % less
# CPU (11 % on a boot and its warm-up figure), measured on test_boot, test_wedge, test_cells_bad_input,
# test_deck and test_exercises_page. The benchmarks keep CHROMIUM_ARGS: they time Chromium as a class runs it.
SUITE_CHROMIUM_ARGS = [*CHROMIUM_ARGS, "--js-flags=--wasm-tiering-budget=50000000"]
MISSING_BROWSER_MESSAGE = (
    "no se encuentra Chromium para las pruebas del navegador. Instálalo con una de estas órdenes:\n"
    "    apt-get install chromium                            (Debian: /usr/bin/chromium)\n"
    "    .venv/bin/python -m playwright install chromium     (el Chromium de Playwright)\n"
    "o ejecuta «python3 build.py test --no-browser» para probar todo lo demás sin navegador.")


def is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_chromium() -> Path | None:
    """The first Chromium found: DPDECK_CHROMIUM or /usr/bin/chromium, then Playwright's."""
    configured = os.environ.get("DPDECK_CHROMIUM")
    first = Path(configured) if configured else DEBIAN_CHROMIUM
    if is_executable(first):
        return first
    return find_playwright_chromium()


def find_playwright_chromium() -> Path | None:
    """The Chromium that `python -m playwright install chromium` downloads, if it is there."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        return None
    try:
        with sync_playwright() as playwright:
            path = Path(playwright.chromium.executable_path)
    except Error:
        return None
    return path if is_executable(path) else None


# ---------------------------------------------------------------------------
# The other engines of the cross-engine suite (tests/engines), from Debian's packages
# (deckbuild.system installs them): Firefox ESR, and WebKitGTK's MiniBrowser driven by
# WebKitWebDriver in an Xvfb screen.
# ---------------------------------------------------------------------------

FIREFOX_ESR = Path("/usr/bin/firefox-esr")
WEBKIT_DRIVER = Path("/usr/bin/WebKitWebDriver")
# MiniBrowser lives in the multiarch folder of libwebkit2gtk-4.1-0 (x86_64-linux-gnu, aarch64-linux-gnu…).
MINIBROWSER_PATTERN = "webkit2gtk-4.1/MiniBrowser"
XVFB = Path("/usr/bin/Xvfb")


def webkit_environment(display: str) -> dict:
    """The environment WebKitWebDriver (and the MiniBrowser it starts) runs in, on the Xvfb screen `display`.

    Xvfb has no GPU: WebKitGTK's accelerated compositing would draw every frame
    through Mesa's software OpenGL, which cost a WebKit walk of the deck 8 to 17
    of its 35 to 44 core-seconds (tests/engines, measured). Without it WebKit
    paints the page on the CPU directly, as it does where no GPU is usable.
    """
    return {**os.environ, "DISPLAY": display, "WEBKIT_DISABLE_COMPOSITING_MODE": "1"}


def start_xvfb(screen: str = "1280x800x24") -> tuple[subprocess.Popen, str]:
    """A virtual screen of `screen` (WxHxDEPTH) on the first free display (Xvfb picks it and writes its number): (process, ":N")."""
    read_end, write_end = os.pipe()
    process = subprocess.Popen([str(XVFB), "-displayfd", str(write_end), "-screen", "0", screen, "-nolisten", "tcp"],
                               pass_fds=(write_end,), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.close(write_end)
    with os.fdopen(read_end) as numbers:
        display = numbers.readline().strip()
    if not display.isdigit():
        process.kill()
        process.wait()
        raise BuildError("Xvfb no abrió ninguna pantalla")
    return process, f":{display}"


def find_minibrowser() -> Path | None:
    """WebKitGTK's MiniBrowser (package libwebkit2gtk-4.1-0), if installed."""
    return next((path for path in sorted(Path("/usr/lib").glob(f"*/{MINIBROWSER_PATTERN}")) if is_executable(path)),
                None)


def list_missing_engine_programs(engine: str) -> list[str]:
    """What `engine` ("chromium", "firefox", "webkit") lacks on this machine, as «package (path)»."""
    if engine == "chromium":
        return [] if find_chromium() else [f"chromium ({DEBIAN_CHROMIUM})"]
    if engine == "firefox":
        return [] if is_executable(FIREFOX_ESR) else [f"firefox-esr ({FIREFOX_ESR})"]
    missing = [] if is_executable(WEBKIT_DRIVER) else [f"webkit2gtk-driver ({WEBKIT_DRIVER})"]
    if find_minibrowser() is None:
        missing.append(f"libwebkit2gtk-4.1-0 (/usr/lib/…/{MINIBROWSER_PATTERN})")
    if not is_executable(XVFB):
        missing.append(f"xvfb ({XVFB})")
    return missing
