"""Fixtures for the live-cell browser tests: a small deck built from
tests/browser/fixture_slides by deckbuild, served with and without
cross-origin isolation (tests/conftest.py's servers), and decks where Python
has already booted (one boot per module, since each costs several seconds).
Tests drive every page through deckpage.DeckPage."""

from __future__ import annotations

from pathlib import Path

import pytest

from deckbuild.pipeline import build
from deckpage import NO_PYTHON, DeckPage

FIXTURE_SLIDES = Path(__file__).with_name("fixture_slides")


@pytest.fixture(scope="session")
def cells_dist(dist_dir, tmp_path_factory) -> Path:
    """The fixture deck, built by deckbuild with the same JS, CSS and Pyodide as dist/."""
    out = tmp_path_factory.mktemp("celdas") / "mazo"
    build(FIXTURE_SLIDES, out)
    return out


@pytest.fixture(scope="session")
def cells_dist_from_scratch(dist_dir, tmp_path_factory) -> Path:
    """The fixture deck built without Python's memory snapshot (--no-snapshot): every boot starts Python anew."""
    out = tmp_path_factory.mktemp("celdas-sin-instantanea") / "mazo"
    build(FIXTURE_SLIDES, out, snapshot=False)
    return out


@pytest.fixture(scope="session")
def cells_url(cells_dist, serve_folder):
    """The fixture deck on the deck's own server (COOP/COEP: Stop interrupts)."""
    return serve_folder(cells_dist)


@pytest.fixture(scope="session")
def cells_plain_url(cells_dist, serve_folder):
    """The fixture deck under a sub-path of a plain http.server (no isolation: Stop restarts)."""
    return serve_folder(cells_dist, plain=True)


@pytest.fixture
def new_deck(new_page):
    """Factory: a fresh page (tests/conftest.py's new_page) as a DeckPage, optionally opened at `url`.

    `python=False`: the page's device chose not to download Python (deckpage.NO_PYTHON), for tests of
    the slides alone; a boot they never look at would cost a core for seconds, its copies more.
    """

    def make(url=None, *, python=True, **options):
        deck = DeckPage(new_page(None, **options))
        if not python:
            deck.page.add_init_script(NO_PYTHON)
        return deck if url is None else deck.goto(url)

    return make


@pytest.fixture(scope="module")
def live_deck(open_page, cells_url):
    """One isolated fixture deck with Python ready, shared by a module's tests."""
    context, page = open_page(cells_url)
    deck = DeckPage(page)
    deck.wait_until_ready()
    yield deck
    context.close()


@pytest.fixture(scope="module")
def plain_live_deck(open_page, cells_plain_url):
    """One fixture deck without cross-origin isolation and with ?autorun=0, Python ready."""
    context, page = open_page(cells_plain_url + "?autorun=0")
    deck = DeckPage(page)
    deck.wait_until_ready()
    yield deck
    context.close()
