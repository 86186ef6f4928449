"""Fixtures for the build tests."""

from __future__ import annotations

import fcntl

import pytest

from deck_fixtures import SAMPLE_DECK, run_build, write_deck


def build_sample(base):
    slides = write_deck(base / "slides", SAMPLE_DECK)
    result = run_build(slides, base / "dist")
    assert result.returncode == 0, result.stdout + result.stderr
    return base / "dist"


@pytest.fixture(scope="session")
def sample_build(tmp_path_factory, request):
    """The sample deck built once into a temporary dist/, once per run: pytest-xdist's workers share it
    (a build is 2 s of a core, and the tests only read it)."""
    if not hasattr(request.config, "workerinput"):
        return build_sample(tmp_path_factory.mktemp("muestra"))
    shared = tmp_path_factory.getbasetemp().parent   # this run's folder, the parent of every worker's
    with open(shared / "muestra.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)   # the first worker builds it; the others wait for it
        if not (shared / "muestra" / "dist" / "manifest.json").exists():
            build_sample(shared / "muestra")
    return shared / "muestra" / "dist"
