"""Fixtures for the live-cell browser tests: a small deck built from
tests/browser/fixture_slides with build.py, served with and without
cross-origin isolation, and pages where Python has already booted (one boot per
module, since each costs several seconds)."""

from __future__ import annotations

import functools
import http.server
import threading
from pathlib import Path

import pytest

import build
from cellpages import open_recording_page, wait_until_ready

FIXTURE_SLIDES = Path(__file__).with_name("fixture_slides")


def _serve(server) -> str:
    threading.Thread(target=server.serve_forever, name="servidor-celdas", daemon=True).start()
    return f"http://127.0.0.1:{server.server_address[1]}/"


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):
        pass


@pytest.fixture(scope="session")
def cells_dist(dist_dir, tmp_path_factory) -> Path:
    """The fixture deck, built by build.py with the same JS, CSS and Pyodide as dist/."""
    out = tmp_path_factory.mktemp("celdas") / "mazo"
    build.build(FIXTURE_SLIDES, out)
    return out


@pytest.fixture(scope="session")
def cells_url(cells_dist):
    """The fixture deck on build.py's server (COOP/COEP: Stop interrupts)."""
    server = build.make_server(cells_dist, 0, isolated=True)
    yield _serve(server)
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="session")
def cells_plain_url(cells_dist):
    """The fixture deck under a sub-path of a plain http.server (no isolation: Stop restarts)."""
    handler = functools.partial(_QuietHandler, directory=str(cells_dist.parent))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    yield _serve(server) + f"{cells_dist.name}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def live_page(browser, cells_url):
    """One isolated page with Python ready, shared by a module's tests."""
    context, page = open_recording_page(browser, cells_url)
    wait_until_ready(page)
    yield page
    context.close()


@pytest.fixture(scope="module")
def plain_live_page(browser, cells_plain_url):
    """One page without cross-origin isolation and with ?autorun=0, Python ready."""
    context, page = open_recording_page(browser, cells_plain_url + "?autorun=0")
    wait_until_ready(page)
    yield page
    context.close()
