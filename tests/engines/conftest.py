"""Fixtures of the cross-engine suite: the engines it needs, and a server of dist/ that a test can stop.

An engine the selected tests need and this machine lacks stops the run before
any test, in one line (`python3 build.py test` installs them first: see
deckbuild.system); `python3 build.py test --no-browser` leaves them out, as it
does the Chromium suite (tests/conftest.py).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from deckbuild.browser import list_missing_engine_programs
from deckbuild.paths import NODE_MODULES
from deckbuild.server import make_server

ENGINE_MODULE = Path(__file__).with_name("test_engines.py")


def engine_of(item) -> str | None:
    callspec = getattr(item, "callspec", None)
    return callspec.params.get("engine") if callspec else None


def list_missing_programs(engines: set[str]) -> list[str]:
    """What the engines the selected tests drive lack here: programs, drivers, packages."""
    missing = [program for engine in sorted(engines) for program in list_missing_engine_programs(engine)]
    if "firefox" in engines and not (NODE_MODULES / "puppeteer-core" / "package.json").exists():
        missing.append("node_modules/puppeteer-core (npm ci)")
    if "webkit" in engines:
        try:
            import selenium  # noqa: F401
        except ImportError:
            missing.append("selenium en .venv (requirements.lock)")
    return missing


def pytest_collection_modifyitems(config, items):
    """A missing engine never turns into skipped or passed tests: the run stops here, in one line."""
    if os.environ.get("DPDECK_NO_BROWSER"):
        return   # tests/conftest.py leaves the engines out with the other browser tests
    engines = {engine_of(item) for item in items if Path(item.path) == ENGINE_MODULE} - {None}
    missing = list_missing_programs(engines)
    if missing:
        raise pytest.UsageError(
            f"faltan motores para las pruebas entre navegadores: {', '.join(missing)} — "
            "«python3 build.py test» los instala (como root en Debian) o dice la orden que los instala")


class StoppableServer:
    """dist/ on the deck's own server (deckbuild.server), with or without COOP/COEP, on a free port.

    `stop()` closes the listening socket and every connection it accepted (a
    browser keeps idle ones open, and through them the deck would still reach
    the server): afterwards nothing answers at that address.
    """

    def __init__(self, folder: Path, *, isolated: bool):
        self.server = make_server(folder, 0, isolated=isolated)
        self.thread = threading.Thread(target=self.server.serve_forever, name="servidor-entre-motores", daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/"
        self.running = True

    def stop(self) -> None:
        # The server's shutdown ends every connection it holds (each closes its socket) before it returns.
        if not self.running:
            return
        self.running = False
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)


@pytest.fixture
def deck_server(dist_dir):
    """Factory: serve dist/ (isolated or not) for one test; stopped when the test ends."""
    servers = []

    def serve(*, isolated: bool) -> StoppableServer:
        server = StoppableServer(dist_dir, isolated=isolated)
        servers.append(server)
        return server

    yield serve
    for server in servers:
        server.stop()
