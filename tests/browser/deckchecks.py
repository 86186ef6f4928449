"""What every live-cell test checks after a bad input: the deck is still usable.

A bad input (an error, an endless loop, a flood of output, a request to
another server…) runs in a cell of the fixture deck (`run_bad_input`); then
slides still move, another cell still runs and edits are kept
(`assert_deck_usable`). And what a cell showed while it ran (`WATCH_OUTPUT`).
"""

from __future__ import annotations

from deckpage import RUN_TIMEOUT_MS


def assert_deck_usable(deck, *, edited_cell: str | None = None, edited_source: str | None = None) -> None:
    """Slides still move with the keyboard, another cell still runs, edits are kept."""
    deck.blur()
    start = deck.slide_index
    there, back = ("ArrowLeft", "ArrowRight") if deck.is_last_slide() else ("ArrowRight", "ArrowLeft")
    deck.press(there)
    deck.page.wait_for_function("start => Reveal.getIndices().h !== start", arg=start)
    deck.press(back)
    deck.wait_for_slide(start)
    assert deck.python_state in ("ready", "loading")
    other = deck.cell("otra")
    assert other.run() == "done"
    assert other.output_text().strip() == "10"
    if edited_cell is not None:
        cell = deck.cell(edited_cell)
        assert cell.source == edited_source
        assert cell.saved_edit == edited_source
        assert cell.edited


def run_bad_input(deck, source: str, cell_id: str = "pruebas", timeout: int = RUN_TIMEOUT_MS) -> tuple[str, str]:
    cell = deck.cell(cell_id)
    cell.set_source(source)
    status = cell.run(timeout)
    return status, cell.output_text()


# Watches a cell's output while it runs: the fewest figures and output elements
# it ever showed, and every label it wore. Call the returned `stop()` afterwards.
WATCH_OUTPUT = """selector => {
    const cell = document.querySelector(selector);
    const output = cell.querySelector('.cell-output');
    const seen = {minFigures: Infinity, minChildren: Infinity, labels: [], samples: 0};
    const sample = () => {
        if (!['queued', 'running'].includes(cell.dataset.status)) return;
        seen.samples += 1;
        seen.minFigures = Math.min(seen.minFigures, output.querySelectorAll('img.out-figure').length);
        seen.minChildren = Math.min(seen.minChildren, output.children.length);
        const label = getComputedStyle(output, '::before').content;
        if (seen.labels[seen.labels.length - 1] !== label) seen.labels.push(label);
    };
    const observer = new MutationObserver(sample);
    observer.observe(cell, {subtree: true, childList: true, attributes: true, characterData: true});
    window.__watched = seen;
    window.__stopWatching = () => { observer.disconnect(); return seen; };
}"""
