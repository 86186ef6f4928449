"""Fixtures for the build tests."""

from __future__ import annotations

import pytest

from deck_fixtures import SAMPLE_DECK, run_build, write_deck


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory):
    """The sample deck built once into a temporary dist/."""
    base = tmp_path_factory.mktemp("muestra")
    slides = write_deck(base / "slides", SAMPLE_DECK)
    result = run_build(slides, base / "dist")
    assert result.returncode == 0, result.stdout + result.stderr
    return base / "dist"
