"""Fixtures shared by every test: the built dist/, local servers and a Playwright browser.

The browser tests run against the `dist/` that `python3 build.py test` builds
first (or the folder named by the DPDECK_DIST environment variable). They need
Chromium (deckbuild.browser finds it): without one the run stops before any test
with the commands that install it, unless DPDECK_NO_BROWSER is set
(`python3 build.py test --no-browser`), which leaves the browser tests out.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
from pathlib import Path

import pytest

from deckbuild.browser import MISSING_BROWSER_MESSAGE, SUITE_CHROMIUM_ARGS, find_chromium
from deckbuild.server import make_server
from suiteorder import spread_longest_tests

ROOT = Path(__file__).resolve().parents[1]
ARTIFACTS = ROOT / "test-artifacts"
CHROMIUM_KEY = pytest.StashKey[Path]()


def uses_browser(item) -> bool:
    """Drives a browser: Chromium through the `browser` fixture, or any engine of tests/engines."""
    return "browser" in getattr(item, "fixturenames", ()) or item.get_closest_marker("engines") is not None


def pytest_collection_modifyitems(config, items):
    """The browser suite never goes missing silently: it runs, or the run stops, or it was left out on purpose."""
    workers = getattr(config, "workerinput", {}).get("workercount", 1)
    items[:] = spread_longest_tests(items, workers)
    browser_items = [item for item in items if uses_browser(item)]
    if not browser_items:
        return
    if os.environ.get("DPDECK_NO_BROWSER"):
        config.hook.pytest_deselected(items=browser_items)
        items[:] = [item for item in items if not uses_browser(item)]
        return
    chromium = find_chromium()
    if chromium is None:
        raise pytest.UsageError(MISSING_BROWSER_MESSAGE)
    config.stash[CHROMIUM_KEY] = chromium


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

    `serve_folder(path)` uses the deck's own server, deckbuild.server (COOP/COEP
    headers: cross-origin isolated); `serve_folder(path, plain=True)` a plain
    http.server started in the
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
        server = make_server(folder, 0, isolated=True)
        servers.append(server)
        return start_in_thread(server)

    yield serve
    for server in servers:
        server.shutdown()
        server.server_close()


@pytest.fixture(scope="session")
def deck_url(dist_dir, serve_folder):
    """The deck's own server on dist/ (COOP/COEP headers: cross-origin isolated)."""
    return serve_folder(dist_dir)


@pytest.fixture(scope="session")
def plain_url(dist_dir, serve_folder):
    """dist/ under a sub-path of a plain http.server started in dist's parent (no special headers)."""
    return serve_folder(dist_dir, plain=True)


@pytest.fixture(scope="session")
def browser(request):
    """Headless Chromium: the one deckbuild.browser found (Debian's, else Playwright's own)."""
    from playwright.sync_api import Error, sync_playwright

    chromium = request.config.stash[CHROMIUM_KEY]
    with sync_playwright() as playwright:
        try:
            instance = playwright.chromium.launch(headless=True, args=SUITE_CHROMIUM_ARGS, executable_path=str(chromium))
        except Error as error:
            pytest.fail(f"no se pudo abrir Chromium ({chromium}): {error}", pytrace=False)
        yield instance
        instance.close()


# After a first visit the deck's service worker stores its files and Python's (about 50 MB) for use
# offline: some 3 core-seconds each time, on a machine whose two cores the suite keeps busy. Pages
# block it unless their module is marked `service_worker` (the tests of the offline copy, of what it
# serves and of what may reach it) or the test passes service_workers="allow".
SERVICE_WORKER_MARK = "service_worker"
# Playwright's block answers register() with nothing, which no browser does: a blocked page sees a
# browser without service workers instead (the deck then keeps no offline copy, as it must there).
WITHOUT_SERVICE_WORKERS = "delete Navigator.prototype.serviceWorker;"


def service_workers_for(node) -> str:
    """Playwright's `service_workers` option for pages opened by `node`'s tests: allow where marked, else block."""
    return "allow" if node.get_closest_marker(SERVICE_WORKER_MARK) is not None else "block"


def open_recording_page(browser, url: str | None = None, *, viewport=(1280, 720), service_workers="block",
                        **context_options):
    """A fresh context and page that record what the tests look at.

    `page.requests`: every request URL (page and its workers);
    `page.console_errors`: console errors and uncaught exceptions;
    `page.warnings`: console warnings. Returns (context, page); the caller
    closes the context. The deck's service worker is blocked unless
    `service_workers="allow"`.
    """
    context = browser.new_context(viewport={"width": viewport[0], "height": viewport[1]},
                                  service_workers=service_workers, **context_options)
    if service_workers == "block":
        context.add_init_script(WITHOUT_SERVICE_WORKERS)
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


@pytest.fixture(scope="module")
def open_page(browser, request):
    """Factory for fixtures wider than one test: open_page(url) → (context, page); see open_recording_page.

    The deck's service worker runs only in modules marked `service_worker` (or when asked for)."""
    default = service_workers_for(request.node)
    return lambda url=None, **options: open_recording_page(browser, url, **{"service_workers": default, **options})


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
