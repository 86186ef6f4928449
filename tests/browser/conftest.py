"""Fixtures for the live-cell browser tests: a small deck built from
tests/browser/fixture_slides by deckbuild, served with and without
cross-origin isolation (tests/conftest.py's servers), and pages where Python has
already booted (one boot per module, since each costs several seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cellpages import wait_until_ready
from deckbuild.pipeline import build

FIXTURE_SLIDES = Path(__file__).with_name("fixture_slides")


@pytest.fixture(scope="session")
def cells_dist(dist_dir, tmp_path_factory) -> Path:
    """The fixture deck, built by deckbuild with the same JS, CSS and Pyodide as dist/."""
    out = tmp_path_factory.mktemp("celdas") / "mazo"
    build(FIXTURE_SLIDES, out)
    return out


@pytest.fixture(scope="session")
def cells_url(cells_dist, serve_folder):
    """The fixture deck on the deck's own server (COOP/COEP: Stop interrupts)."""
    return serve_folder(cells_dist)


@pytest.fixture(scope="session")
def cells_plain_url(cells_dist, serve_folder):
    """The fixture deck under a sub-path of a plain http.server (no isolation: Stop restarts)."""
    return serve_folder(cells_dist, plain=True)


@pytest.fixture(scope="module")
def live_page(open_page, cells_url):
    """One isolated page with Python ready, shared by a module's tests."""
    context, page = open_page(cells_url)
    wait_until_ready(page)
    yield page
    context.close()


@pytest.fixture(scope="module")
def plain_live_page(open_page, cells_plain_url):
    """One page without cross-origin isolation and with ?autorun=0, Python ready."""
    context, page = open_page(cells_plain_url + "?autorun=0")
    wait_until_ready(page)
    yield page
    context.close()
