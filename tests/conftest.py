"""Fixtures shared by every test: the built dist/, local servers and a Playwright browser.

The browser tests run against the `dist/` that `python3 build.py test` builds
first (or the folder named by the DPDECK_DIST environment variable).
"""

from __future__ import annotations

import functools
import http.server
import os
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"

sys.path.insert(0, str(ROOT))
import build  # noqa: E402  (standard library only at import time)

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


@pytest.fixture(scope="session")
def dist_dir() -> Path:
    """The built deck (DPDECK_DIST or <repo>/dist)."""
    path = Path(os.environ.get("DPDECK_DIST", ROOT / "dist")).resolve()
    if not (path / "manifest.json").exists():
        pytest.skip(f"no hay un mazo construido en {path}: ejecuta «python3 build.py» "
                    "(o «python3 build.py test», que construye antes de probar)")
    return path


@pytest.fixture(scope="session")
def artifacts_dir() -> Path:
    """Where tests leave screenshots for a person to look at."""
    ARTIFACTS.mkdir(exist_ok=True)
    print(f"\nartefactos de las pruebas: {ARTIFACTS}")
    return ARTIFACTS


def start_in_thread(server) -> str:
    thread = threading.Thread(target=server.serve_forever, name="servidor-de-pruebas", daemon=True)
    thread.start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


class QuietPlainHandler(http.server.SimpleHTTPRequestHandler):
    """The standard library's static server, unchanged but for its logging."""

    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="session")
def serve_folder():
    """Factory: serve a built deck folder for the whole session; returns its URL.

    `serve_folder(path)` uses build.py's own server (COOP/COEP headers: cross-origin
    isolated); `serve_folder(path, plain=True)` a plain http.server started in the
    folder's parent (no special headers), so the deck sits under a sub-path.
    """
    servers = []

    def serve(folder: Path, *, plain: bool = False) -> str:
        if plain:
            handler = functools.partial(QuietPlainHandler, directory=str(folder.parent))
            server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
            server.daemon_threads = True
            servers.append(server)
            return start_in_thread(server) + f"{folder.name}/"
        server = build.make_server(folder, 0, isolated=True)
        servers.append(server)
        return start_in_thread(server)

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def deck_url(dist_dir, serve_folder):
    """build.py's own server on dist/ (COOP/COEP headers: cross-origin isolated)."""
    return serve_folder(dist_dir)


@pytest.fixture(scope="session")
def plain_url(dist_dir, serve_folder):
    """dist/ under a sub-path of a plain http.server started in dist's parent (no special headers)."""
    return serve_folder(dist_dir, plain=True)


@pytest.fixture(scope="session")
def browser():
    """Headless Chromium: Debian's /usr/bin/chromium when present, else Playwright's own."""
    try:
        from playwright.sync_api import Error, sync_playwright
    except ImportError:
        pytest.skip("falta Playwright en .venv")
    with sync_playwright() as playwright:
        options = {"headless": True, "args": CHROMIUM_ARGS}
        if CHROMIUM.exists():
            options["executable_path"] = str(CHROMIUM)
        try:
            instance = playwright.chromium.launch(**options)
        except Error as error:
            message = f"no se pudo abrir Chromium ({error}); instala el paquete Debian «chromium»"
            if os.environ.get("CI"):
                pytest.fail(message)
            pytest.skip(message)
        yield instance
        instance.close()


def open_recording_page(browser, url: str | None = None, *, viewport=(1280, 720), **context_options):
    """A fresh context and page that record what the tests look at.

    `page.requests`: every request URL (page and its workers);
    `page.console_errors`: console errors and uncaught exceptions;
    `page.warnings`: console warnings. Returns (context, page); the caller
    closes the context.
    """
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]}, **context_options)
    page = context.new_page()
    page.requests = []
    page.console_errors = []
    page.warnings = []
    context.on("request", lambda request: page.requests.append(request.url))
    page.on("console", lambda message: page.console_errors.append(message.text)
            if message.type == "error" else None)
    page.on("console", lambda message: page.warnings.append(message.text)
            if message.type == "warning" else None)
    page.on("pageerror", lambda error: page.console_errors.append(str(error)))
    if url is not None:
        page.goto(url)
    return context, page


@pytest.fixture(scope="session")
def open_page(browser):
    """Factory for fixtures wider than one test: open_page(url) → (context, page); see open_recording_page."""
    return lambda url=None, **options: open_recording_page(browser, url, **options)


@pytest.fixture
def new_page(open_page):
    """Factory: a fresh context and page that record requests and console errors.

    `page.requests` lists every request URL (page and its workers);
    `page.console_errors` lists console errors and uncaught exceptions.
    Every context is closed when the test ends.
    """
    contexts = []

    def make(url: str | None = None, *, viewport=(1280, 720), **context_options):
        context, page = open_page(url, viewport=viewport, **context_options)
        contexts.append(context)
        return page

    yield make
    for context in contexts:
        context.close()
