"""The deck's slides and cells as the build reads them, and each cell's output as the build pre-renders it.

Shared by the tests that hold the deck together (test_deck_consistency.py,
test_deck_consistency_federated.py, test_deck_writing.py): one reader
(``deckbuild.slides.read_deck``) and one native run per cell.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from deckbuild.slides import read_deck
from dpdeck.classroom.cellrun import run_cell


SLIDES = Path(__file__).resolve().parents[1] / "deck" / "slides"


# ------------------------------------------------------------------ sources


@lru_cache(maxsize=None)
def slide_text(name: str) -> str:
    """The slide file as a reader sees it: line breaks folded to spaces, no inline HTML tags."""
    text = (SLIDES / name).read_text(encoding="utf-8")
    text = re.sub(r"</?span[^>]*>", "", text)
    return re.sub(r"\s+", " ", text)


@lru_cache(maxsize=None)
def deck():
    """The slides and cells as the build reads them (one reader for the build and its tests)."""
    return read_deck(SLIDES)


def cell_blocks():
    """(file name, options, source) of every Python cell in the slides, in reading order."""
    for slide in deck().slides:
        for cell in slide.cells:
            yield cell.file.name, cell.options, cell.source


@lru_cache(maxsize=None)
def all_cells() -> dict:
    return {options["id"]: {"file": name, "source": source, **options} for name, options, source in cell_blocks()}


@lru_cache(maxsize=None)
def native_output(cell_id: str) -> str:
    """Text the cell prints when run natively, exactly as the build pre-renders it."""
    result = run_cell(all_cells()[cell_id]["source"], cell_id=cell_id)
    errors = [output for output in result["outputs"] if output["type"] == "error"]
    assert result["status"] == "done" and not errors, errors
    return "".join(output["text"] for output in result["outputs"] if output["type"] in ("stream", "value"))
