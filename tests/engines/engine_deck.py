"""The deck as the cross-engine checks see it, through any engine's driver (engine_drivers.py).

Like tests/browser/deckpage.py it uses only what the deck documents
(deck/README.md): the cells' markup and `data-*` attributes, `<html
data-python>` and `data-offline`, reveal.js's API and the deck's script surface
`Reveal.getPlugin("dpdeck")`. Every wait is a poll of a quick question to the
page (a few a second), so it ends as soon as the page is there, and a page that
is navigating answers «not yet».
"""

from __future__ import annotations

import time

from engine_drivers import DriverError

POLL_SECONDS = 0.1
BOOT_SECONDS = 240      # Python's boot: seconds in every engine; minutes on a 2-core machine shared with other jobs
RUN_SECONDS = 60        # one cell's run
PAGE_SECONDS = 60       # a page load, fonts, a figure's image
OFFLINE_SECONDS = 150   # the service worker keeps the deck and then Python's files


class CheckFailed(AssertionError):
    """A check saw something else than the deck promises (its message says what, in Spanish)."""


CELL = '.cell[data-cell-id="{id}"]'

REVEAL_READY = "() => Boolean(window.Reveal && Reveal.isReady && Reveal.isReady())"
SLIDE_INDEX = "() => Reveal.getIndices().h"
GO_TO_SLIDE_OF = """
(selector) => {
  const slide = document.querySelector(selector).closest('.slides > section');
  Reveal.configure({transition: 'none', backgroundTransition: 'none'});
  Reveal.slide(Reveal.getIndices(slide).h);
  return Reveal.getIndices().h;
}
"""
PYTHON_SETTLED = """
() => { const state = document.documentElement.dataset.python;
        return state === 'ready' || state === 'error' ? state : null; }
"""
PYTHON = "() => Reveal.getPlugin('dpdeck').python"
STATUS_CHIP = "() => (document.querySelector('.python-status') || {}).textContent || ''"
SET_SOURCE = "([id, source]) => { Reveal.getPlugin('dpdeck').cell(id).setSource(source); return true; }"
SOURCE = "(id) => Reveal.getPlugin('dpdeck').cell(id).source"
ENHANCED = """
(selector) => { const cell = document.querySelector(selector);
                const run = cell && cell.querySelector('[data-action=run]');
                return Boolean(cell && cell.dataset.enhanced && run && run.getBoundingClientRect().width > 0); }
"""
RUNS = "(selector) => Number(document.querySelector(selector).dataset.runs || 0)"
RUN_FINISHED = """
([selector, before]) => { const cell = document.querySelector(selector);
                          return Number(cell.dataset.runs || 0) > before ? cell.dataset.status : null; }
"""
STATUS_IS = "([selector, status]) => document.querySelector(selector).dataset.status === status"
SHOWS_TEXT = """
([selector, text]) => Array.from(document.querySelectorAll(`${selector} > .cell-output, ${selector} > .cell-live`))
  .some((element) => element.innerText.includes(text))
"""
# A cell's output: its origin and blocks in order, text blocks as [kind, text], figures as ["figure", loaded].
READ_OUTPUT = """
(selector) => {
  const cell = document.querySelector(selector);
  const output = cell.querySelector('.cell-output');
  const blocks = Array.from(output.children).map((element) => {
    if (element.matches('img.out-figure')) {
      const box = element.getBoundingClientRect();
      return ['figure', element.complete && element.naturalWidth > 0 && box.width > 0];
    }
    const kind = ['out-stdout', 'out-stderr', 'out-value', 'out-error']
      .find((name) => element.classList.contains(name)) || element.className;
    return [kind, element.textContent];
  });
  return {origin: output.dataset.origin, status: cell.dataset.status, declared: Number(cell.dataset.figures || 0),
          edited: cell.hasAttribute('data-edited'), blocks};
}
"""
# Where the deck keeps an edit: localStorage, under a key that ends with ":<cell id>".
SAVED_EDIT = """
(id) => {
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (key.startsWith('dpdeck:edits:') && key.endsWith(':' + id)) return localStorage.getItem(key);
  }
  return null;
}
"""
MARK_DOCUMENT = "() => { window.__enginesOldDocument = true; return true; }"
NEW_DOCUMENT = "() => !window.__enginesOldDocument && document.readyState === 'complete'"
# location.reload(), not the driver's Refresh: Firefox's WebDriver Refresh bypasses the service worker.
RELOAD = "() => { setTimeout(() => location.reload(), 0); return true; }"
NEXT_FRAME = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(true))))"


class EngineDeck:
    """The deck in one engine's page."""

    def __init__(self, driver):
        self.driver = driver

    def evaluate(self, function: str, arg=None):
        return self.driver.evaluate(function, arg)

    def wait_for(self, function: str, arg=None, *, seconds: float, what: str):
        """The first truthy answer of `function(arg)`; CheckFailed after `seconds` without one."""
        deadline = time.monotonic() + seconds
        last_error = None
        while True:
            try:
                value = self.driver.evaluate(function, arg)
                if value:
                    return value
            except DriverError as error:
                last_error = error
            if time.monotonic() > deadline:
                raise CheckFailed(f"{what}: no ocurrió en {seconds:.0f} s" + (f" ({last_error})" if last_error else ""))
            time.sleep(POLL_SECONDS)

    # ------------------------------------------------------------ pages

    def open(self, url: str) -> None:
        self.driver.open(url)
        self.wait_for(REVEAL_READY, seconds=PAGE_SECONDS, what="reveal.js listo")

    def reload(self) -> None:
        """location.reload(), then the new document's reveal.js ready."""
        self.evaluate(MARK_DOCUMENT)
        self.evaluate(RELOAD)
        self.wait_for(NEW_DOCUMENT, seconds=PAGE_SECONDS, what="la página recargada")
        self.wait_for(REVEAL_READY, seconds=PAGE_SECONDS, what="reveal.js listo tras recargar")

    def next_frame(self) -> None:
        self.evaluate(NEXT_FRAME)

    @property
    def slide(self) -> int:
        return self.evaluate(SLIDE_INDEX)

    def wait_for_slide(self, index: int, what: str) -> None:
        self.wait_for(f"() => Reveal.getIndices().h === {int(index)}", seconds=PAGE_SECONDS, what=what)

    def show(self, selector: str) -> int:
        """Go (with reveal.js's API) to the slide that holds `selector`; its index."""
        return self.evaluate(GO_TO_SLIDE_OF, selector)

    # ------------------------------------------------------------ Python

    def wait_for_python(self, what: str) -> dict:
        """Python ready (html[data-python=ready]); CheckFailed naming the status chip if it failed."""
        state = self.wait_for(PYTHON_SETTLED, seconds=BOOT_SECONDS, what=what)
        if state != "ready":
            raise CheckFailed(f"{what}: Python falló al arrancar: «{self.evaluate(STATUS_CHIP)}»")
        return self.evaluate(PYTHON)

    @property
    def python(self) -> dict:
        return self.evaluate(PYTHON)

    # ------------------------------------------------------------ cells

    def cell_selector(self, cell_id: str) -> str:
        return CELL.format(id=cell_id)

    def show_cell(self, cell_id: str) -> str:
        """Go to the cell's slide and wait for its editor and buttons; its selector."""
        selector = self.cell_selector(cell_id)
        self.show(selector)
        self.wait_for(ENHANCED, selector, seconds=PAGE_SECONDS, what=f"los botones de la celda {cell_id}")
        return selector

    def read_output(self, cell_id: str) -> dict:
        return self.evaluate(READ_OUTPUT, self.cell_selector(cell_id))

    def click_run(self, cell_id: str) -> int:
        """Go to the cell and click ▶ (a real click); its run count before."""
        selector = self.show_cell(cell_id)
        before = self.evaluate(RUNS, selector)
        self.driver.click(f"{selector} [data-action=run]")
        return before

    def wait_for_run(self, cell_id: str, before: int, seconds: float = RUN_SECONDS) -> str:
        """The status of the cell once it has finished a run more than `before`."""
        return self.wait_for(RUN_FINISHED, [self.cell_selector(cell_id), before], seconds=seconds,
                             what=f"el final de la ejecución de {cell_id}")

    def run(self, cell_id: str) -> dict:
        """Click ▶, wait for the run to end; the cell's output (READ_OUTPUT)."""
        self.wait_for_run(cell_id, self.click_run(cell_id))
        return self.read_output(cell_id)

    def wait_for_status(self, cell_id: str, status: str, seconds: float = RUN_SECONDS) -> None:
        self.wait_for(STATUS_IS, [self.cell_selector(cell_id), status], seconds=seconds,
                      what=f"la celda {cell_id} en estado {status}")

    def wait_for_text(self, cell_id: str, text: str, seconds: float = RUN_SECONDS) -> None:
        self.wait_for(SHOWS_TEXT, [self.cell_selector(cell_id), text], seconds=seconds,
                      what=f"«{text}» en la celda {cell_id}")

    def set_source(self, cell_id: str, source: str) -> None:
        self.evaluate(SET_SOURCE, [cell_id, source])

    def source(self, cell_id: str) -> str:
        return self.evaluate(SOURCE, cell_id)

    def saved_edit(self, cell_id: str) -> str | None:
        return self.evaluate(SAVED_EDIT, cell_id)
