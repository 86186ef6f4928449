"""The deck as the browser tests see it: a small page object over Playwright.

Every browser test drives the deck through a `DeckPage` and its `CellView`s,
which use only what the deck documents (deck/README.md):

* the markup the build writes and the page keeps up to date: `.cell` with
  `data-status`, `data-runs`, `data-edited`, its `[data-action]` buttons and
  its `.cell-output` (`data-origin`, the output blocks);
* `<html data-python>` and `data-cells`, the status chip `.python-status`;
* reveal.js's public API (`Reveal.slide`, `Reveal.getIndices`, …) to move;
* the deck's script surface, `Reveal.getPlugin("dpdeck")`: a cell's code
  (`cell(id).source`, `.setSource()`), running it from inside the page
  (`.run()`), and Python's boot timings and counters (`.python`);
* an exercise's markup (`.ejercicio[data-exercise]`, its `[data-action]`
  buttons, `.ejercicio-veredicto`, `.ejercicio-pista`, `.ejercicio-solucion`,
  the challenge's fields) and the take-home tools (`dpdeck-tools`: copy and
  download buttons, run a slide or a chapter, the chapter's notebook);
* a cell's «Prueba esto» (`.cell > details.cell-prueba`, its `<summary>` and
  `.cell-prueba-texto`) and the menu's worksheets (`.deck-menu-worksheets
  [data-chapter]`, its `a[data-worksheet]` links);
* the classroom: a cell's «Predice antes de ejecutar» (`.cell[data-predict]`,
  `[data-revealed]`, its `button[data-choice]` and `.cell-prediccion-veredicto`),
  the menu's «Exportar mi trabajo» (`#deck-menu-name`, `[data-action=export-work]`),
  the speaker view (reveal's notes window, S) and «Seguir al profesor»
  (`.follow-pill[data-state]`).

Nothing here reaches into the page's internals (its editors, its runtime
object), so the page can change how it works without breaking the tests.
"""

from __future__ import annotations

from pathlib import Path

BOOT_TIMEOUT_MS = 120_000
# The cells not on screen get their editors once Python is up (deck.js, enhanceLater).
CELLS_TIMEOUT_MS = BOOT_TIMEOUT_MS
RUN_TIMEOUT_MS = 60_000

TWO_FRAMES = "() => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)))"

GO_TO_SLIDE = "([h, f]) => f > 0 ? Reveal.slide(h, 0, f - 1) : Reveal.slide(h, 0)"

SLIDE_OF_CELL = """
(selector) => Reveal.getIndices(document.querySelector(selector).closest('.slides section')).h
"""

# Saved edits live in localStorage under a key that ends with ":<cell id>"; the last
# run of an edited cell under one that starts with "dpdeck:outputs:".
SAVED_EDIT = """
(id) => {
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (key.startsWith('dpdeck:edits:') && key.endsWith(':' + id)) return localStorage.getItem(key);
  }
  return null;
}
"""

SAVED_OUTPUT = """
(id) => {
  for (let i = 0; i < localStorage.length; i++) {
    const key = localStorage.key(i);
    if (key.startsWith('dpdeck:outputs:') && key.endsWith(':' + id)) return JSON.parse(localStorage.getItem(key));
  }
  return null;
}
"""

# An exercise as shown: its verdict, which hints and whether the solution are visible.
EXERCISE_STATE = """
(selector) => {
  const exercise = document.querySelector(selector);
  const verdict = exercise.querySelector('.ejercicio-veredicto');
  const button = (action) => exercise.querySelector(`[data-action="${action}"]`);
  return {
    ready: exercise.dataset.ready === 'true',
    verdict: verdict.hidden ? null : {
      passed: verdict.dataset.passed === 'true',
      summary: (verdict.querySelector('.veredicto-resumen') || {}).textContent || '',
      findings: Array.from(verdict.querySelectorAll('.veredicto-hallazgos > li'))
        .map((item) => ({ok: item.dataset.ok === 'true', text: item.textContent})),
      notes: Array.from(verdict.querySelectorAll('.veredicto-nota')).map((line) => line.textContent),
    },
    hints: Array.from(exercise.querySelectorAll('.ejercicio-pista')).map((hint) => !hint.hidden),
    hintButton: button('hint') ? {text: button('hint').textContent, disabled: button('hint').disabled} : null,
    solution: !exercise.querySelector('.ejercicio-solucion').hidden,
    solutionCode: (exercise.querySelector('.ejercicio-codigo code') || {}).textContent || null,
    help: !(exercise.querySelector('.ejercicio-ayuda') || {hidden: true}).hidden,
  };
}
"""

# A cell's «Prueba esto» as shown: its label, whether it is open, its text, and their boxes (window px).
PROMPT_STATE = """
(selector) => {
  const prompt = document.querySelector(selector + ' > details.cell-prueba');
  if (!prompt) return null;
  const label = prompt.querySelector(':scope > summary');
  const text = prompt.querySelector('.cell-prueba-texto');
  const box = (element) => { const r = element.getBoundingClientRect();
    return {left: r.left, top: r.top, right: r.right, bottom: r.bottom, width: r.width, height: r.height}; };
  // The text as read, formulas once (KaTeX's MathML copy left out).
  const copy = text.cloneNode(true);
  copy.querySelectorAll('.katex-mathml').forEach((math) => math.remove());
  return {
    open: prompt.open,
    label: label.textContent.trim(),
    labelBox: box(label),
    focused: document.activeElement === label,
    shown: text.checkVisibility(),
    text: copy.textContent.replace(/\\s+/g, ' ').trim(),
    textBox: box(text),
    textPx: parseFloat(getComputedStyle(text).fontSize),
    inFlow: getComputedStyle(text).position === 'static',
  };
}
"""

# The menu's worksheet links, chapter by chapter: [{chapter, heading, flavour, href, name, text}].
WORKSHEET_LINKS = """
() => [...document.querySelectorAll('dialog.deck-menu .deck-menu-worksheets a[data-worksheet]')].map((link) => ({
  chapter: link.closest('.deck-menu-worksheets').dataset.chapter,
  heading: link.closest('.deck-menu-chapter').querySelector('h3').textContent,
  flavour: link.dataset.worksheet, href: link.href, name: link.download, text: link.textContent}))
"""

# An init script: this device chose not to download Python (pythonchoice.js), so a visit
# fetches only the page's files until a cell runs or the chip's «Descargar» is pressed.
NO_PYTHON = """localStorage.setItem('dpdeck:prefs:' + location.pathname.replace(/index\\.html?$/i, '')
  + ':download-python', 'no');"""

CELLS_ON_SCREEN_READY = """
() => window.Reveal && Reveal.isReady() &&
  Array.from(Reveal.getCurrentSlide().querySelectorAll('.cell[data-cell-id]')).every((cell) => cell.dataset.enhanced)
"""
SOURCE = "(id) => Reveal.getPlugin('dpdeck').cell(id).source"
SET_SOURCE = "([id, source]) => Reveal.getPlugin('dpdeck').cell(id).setSource(source)"
RESET = "(id) => Reveal.getPlugin('dpdeck').cell(id).reset()"
PYTHON = "() => Reveal.getPlugin('dpdeck').python"

# Runs a cell from inside the page (what ▶ does), optionally with new code first.
RUN_IN_PAGE = """
async ([id, source]) => {
  const cell = Reveal.getPlugin('dpdeck').cell(id);
  if (source !== null) cell.setSource(source);
  const started = performance.now();
  const result = await cell.run();
  return {status: result ? result.status : null,
          elapsedMs: result && typeof result.elapsedMs === 'number' ? result.elapsedMs : null,
          wallMs: performance.now() - started,
          notice: (result && result.notice) || null,
          restarted: Boolean(result && result.restarted)};
}
"""

# A cell's output area as shown: its label (drawn by CSS from data-origin and
# friends), its attributes, and each block with its text and opacity.
OUTPUT_STATE = """
(selector) => {
  const output = document.querySelector(selector);
  return {
    origin: output.dataset.origin,
    label: getComputedStyle(output, '::before').content.replace(/^"|"$/g, ''),
    previous: output.hasAttribute('data-previous'),
    stale: output.hasAttribute('data-stale'),
    elapsed: output.dataset.elapsed || null,
    blocks: Array.from(output.children).map((element) => ({
      text: element.textContent,
      notice: element.classList.contains('out-notice'),
      opacity: Number(getComputedStyle(element).opacity),
    })),
  };
}
"""

# A cell's output blocks in order: text blocks as (kind, text), figures counted.
READ_OUTPUT = """
(selector) => {
  const cell = document.querySelector(selector);
  const output = cell.querySelector('.cell-output');
  const blocks = [];
  let figures = 0, loaded = 0;
  for (const element of output.children) {
    if (element.matches('img.out-figure')) {
      figures += 1;
      if (element.complete && element.naturalWidth > 0) loaded += 1;
    } else if (element.matches('pre')) {
      const kind = ['out-stdout', 'out-stderr', 'out-value', 'out-error']
        .find((name) => element.classList.contains(name)) || element.className;
      blocks.push([kind, element.textContent]);
    }
  }
  return {origin: output.dataset.origin, status: cell.dataset.status,
          declared: Number(cell.dataset.figures), blocks, figures, loaded};
}
"""


# Watches a slide while something happens on it: every animation frame, how far
# (slide px) each of the slide's other blocks has moved from where it was, and
# how many figures the watched cell shows; Chromium's layout-shift entries add
# up to the score it reports. `window.__stopLayoutWatch()` ends it.
WATCH_LAYOUT = """
(selector) => {
  const cell = document.querySelector(selector);
  const slide = cell.closest('section');
  const others = Array.from(slide.children).filter((e) => !e.matches('aside.notes') && !e.contains(cell));
  const top = (element) => element.getBoundingClientRect().top;
  const start = others.map(top);
  const seen = {maxShift: 0, shiftScore: 0, minFigures: Infinity, samples: 0, worst: null, shifted: []};
  let running = true;
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      // Only what happens on the slide: the page's chrome (the status chip) is not slide text.
      const sources = (entry.sources || []).filter((source) => source.node && slide.contains(source.node));
      if (!sources.length) continue;
      seen.shiftScore += entry.value;
      for (const source of sources) {
        const node = source.node;
        const name = node && node.nodeType === 1
          ? node.tagName.toLowerCase() + '.' + String(node.className).split(' ')[0]
          : node ? '#text ' + node.textContent.slice(0, 20) : '?';
        const [before, after] = [source.previousRect, source.currentRect];
        seen.shifted.push(`${name} ${Math.round(before.y)}→${Math.round(after.y)} `
          + `h ${Math.round(before.height)}→${Math.round(after.height)} @${Math.round(entry.startTime)}`);
      }
    }
  });
  observer.observe({type: 'layout-shift'});
  const tick = () => {
    if (!running) return;
    const scale = slide.getBoundingClientRect().height / slide.offsetHeight;
    others.forEach((element, index) => {
      const moved = Math.abs(top(element) - start[index]) / scale;
      if (moved > seen.maxShift) {
        seen.maxShift = moved;
        seen.worst = element.tagName.toLowerCase() + ' ' + element.textContent.trim().slice(0, 30);
      }
    });
    seen.minFigures = Math.min(seen.minFigures, cell.querySelectorAll('.cell-output img.out-figure').length);
    seen.samples += 1;
    requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
  window.__stopLayoutWatch = () => {
    running = false;
    observer.disconnect();
    return seen;
  };
}
"""


class DeckPage:
    """One browser page showing the deck."""

    def __init__(self, page):
        self.page = page

    # ------------------------------------------------------------ loading

    def goto(self, url: str) -> "DeckPage":
        self.page.goto(url)
        return self

    def wait_for_reveal(self) -> None:
        self.page.wait_for_function("() => window.Reveal && Reveal.isReady()")

    def wait_for_cells(self, timeout: int = CELLS_TIMEOUT_MS) -> None:
        """Every cell has its editor (html[data-cells=ready]): after Python's boot, which the off-screen ones wait for."""
        self.page.wait_for_selector("html[data-cells=ready]", timeout=timeout)

    def wait_for_cells_on_screen(self, timeout: int = CELLS_TIMEOUT_MS) -> None:
        """The cells of the slide shown have their editors (the others may still be waiting for Python)."""
        self.page.wait_for_function(CELLS_ON_SCREEN_READY, timeout=timeout)

    def wait_for_python(self, state: str = "ready", timeout: int = BOOT_TIMEOUT_MS) -> None:
        self.page.wait_for_selector(f"html[data-python={state}]", timeout=timeout)

    def wait_until_ready(self, timeout: int = BOOT_TIMEOUT_MS) -> None:
        """Cells enhanced and Python ready."""
        self.wait_for_cells()
        self.wait_for_python("ready", timeout)

    def without_transitions(self) -> None:
        self.page.evaluate("() => Reveal.configure({transition: 'none', backgroundTransition: 'none'})")

    @property
    def python_state(self) -> str:
        return self.page.get_attribute("html", "data-python")

    @property
    def python(self) -> dict:
        """Python's state, boot timings and counters (boots, streamMessages, restarts, interruptFallbacks)."""
        return self.page.evaluate(PYTHON)

    @property
    def stats(self) -> dict:
        return self.python["stats"]

    @property
    def isolated(self) -> bool:
        return self.page.evaluate("crossOriginIsolated")

    # What the page requested and logged (recorded by tests/conftest.py's pages).
    @property
    def requests(self) -> list[str]:
        return self.page.requests

    @property
    def console_errors(self) -> list[str]:
        return self.page.console_errors

    @property
    def warnings(self) -> list[str]:
        return self.page.warnings

    # ------------------------------------------------------------ slides

    @property
    def slide_index(self) -> int:
        return self.page.evaluate("() => Reveal.getIndices().h")

    def is_last_slide(self) -> bool:
        return self.page.evaluate("() => Reveal.isLastSlide()")

    def go_to_slide(self, index: int, fragments: int = 0) -> None:
        """Show slide `index` with its first `fragments` fragments revealed."""
        self.page.evaluate(GO_TO_SLIDE, [index, fragments])
        self.wait_for_slide(index)
        self.settle()

    def settle(self) -> None:
        """Wait two animation frames: reveal lays the slide out and the editors re-measure."""
        self.page.evaluate(TWO_FRAMES)

    def wait_for_slide(self, index: int) -> None:
        self.page.wait_for_function("h => Reveal.getIndices().h === h", arg=index)

    def watch_layout(self, cell_selector: str) -> None:
        """Start watching the slide of a cell: see stop_watching_layout."""
        self.page.evaluate(WATCH_LAYOUT, cell_selector)

    def stop_watching_layout(self) -> dict:
        """{maxShift (slide px), shiftScore, minFigures, samples, worst} since watch_layout."""
        return self.page.evaluate("() => window.__stopLayoutWatch()")

    def press(self, key: str) -> None:
        self.page.keyboard.press(key)

    def blur(self) -> None:
        """Keys go to reveal.js again, not to an editor or a button."""
        self.page.evaluate("() => document.activeElement && document.activeElement.blur()")

    # ------------------------------------------------------------ cells and chrome

    def cell(self, cell_id: str) -> "CellView":
        return CellView(self, cell_id)

    def edited_cells(self) -> int:
        return self.page.locator(".cell[data-edited]").count()

    def status_text(self) -> str:
        return self.page.inner_text(".python-status")

    def click_status_button(self, action: str) -> None:
        # Once Python is ready the status chip shrinks; pointing at it shows its buttons.
        self.page.hover(".python-status")
        self.page.click(f".python-status [data-action={action}]")

    # ------------------------------------------------------------ exercises and take-home

    def exercise(self, exercise_id: str) -> "ExerciseView":
        return ExerciseView(self, exercise_id)

    def wait_for_exercises(self, timeout: int = CELLS_TIMEOUT_MS) -> None:
        """Every exercise has its buttons."""
        self.page.wait_for_function(
            "() => [...document.querySelectorAll('.ejercicio')].every((e) => e.dataset.ready === 'true')",
            timeout=timeout)

    def download(self, action) -> tuple[str, bytes]:
        """Do `action()` (a click) and return the file it downloads: (suggested name, bytes)."""
        with self.page.expect_download() as info:
            action()
        download = info.value
        return download.suggested_filename, Path(download.path()).read_bytes()

    def download_notebook(self) -> tuple[str, dict]:
        """What «Cuaderno del capítulo (.ipynb)» in the status chip downloads, from the current slide."""
        import json

        name, data = self.download(lambda: self.click_status_button("download-notebook"))
        return name, json.loads(data)

    def run_slide(self) -> None:
        """Click «Ejecutar la diapositiva» in the status chip."""
        self.click_status_button("run-slide")

    def run_chapter(self) -> None:
        """Click «Ejecutar el capítulo…» in the status chip, then the button that confirms it."""
        self.click_status_button("run-chapter")
        self.page.click(".python-status [data-action=confirm-run-chapter]")

    def open_status(self) -> None:
        """Click the status chip's text: it opens with its buttons and details."""
        self.page.click(".python-status .python-status-toggle")

    def toast_text(self) -> str | None:
        toast = self.page.locator(".deck-toast")
        return toast.inner_text() if toast.is_visible() else None

    def clipboard(self) -> str:
        """The clipboard's text (the context needs clipboard-read permission)."""
        return self.page.evaluate("() => navigator.clipboard.readText()")

    def open_menu(self) -> None:
        """Click ☰ and wait for the menu."""
        self.page.click(".deck-menu-button")
        self.page.wait_for_selector("dialog.deck-menu[open]")

    def worksheet_links(self, chapters: int) -> list[dict]:
        """The open menu's worksheet links, once the `chapters` chapters have theirs: [{chapter, heading,
        flavour, href, name, text}]."""
        self.page.wait_for_function(
            "(n) => document.querySelectorAll('dialog.deck-menu .deck-menu-worksheets').length === n",
            arg=chapters)
        return self.page.evaluate(WORKSHEET_LINKS)

    def export_work(self, name: str | None = None) -> tuple[str, bytes]:
        """«Exportar mi trabajo» from the menu (with the student's name typed first): the file it downloads."""
        self.open_menu()
        if name is not None:
            self.page.fill("#deck-menu-name", name)
        exported = self.download(lambda: self.page.click("dialog.deck-menu [data-action=export-work]"))
        self.page.keyboard.press("Escape")
        return exported

    def open_speaker_view(self):
        """Press S: reveal's speaker view opens; returns its window (a Playwright page)."""
        with self.page.context.expect_page(timeout=30_000) as opened:
            self.page.keyboard.press("s")
        speaker = opened.value
        speaker.wait_for_load_state()
        return speaker

    @property
    def follow_pill(self) -> dict | None:
        """«Seguir al profesor» as shown: {state, text, button}, or None where there is none."""
        return self.page.evaluate(
            "() => { const pill = document.querySelector('.follow-pill');"
            " return pill && !pill.hidden ? {state: pill.dataset.state, text: pill.textContent,"
            " button: pill.localName === 'button'} : null; }")

    def download_worksheet(self, chapter: str, flavour: str) -> tuple[str, bytes]:
        """Click a worksheet link of the open menu: the file it downloads."""
        return self.download(lambda: self.page.click(
            f'dialog.deck-menu .deck-menu-worksheets[data-chapter="{chapter}"] a[data-worksheet="{flavour}"]'))


class SlideElementView:
    """One element of a slide, found by `selector`: where it is and what is inside it."""

    selector: str

    def __init__(self, deck: DeckPage, element_id: str):
        self.deck = deck
        self.page = deck.page
        self.id = element_id

    def locator(self, inner: str = ""):
        return self.page.locator(f"{self.selector} {inner}".strip())

    @property
    def slide_index(self) -> int:
        return self.page.evaluate(SLIDE_OF_CELL, self.selector)

    def show(self) -> None:
        """Go to the element's slide."""
        self.deck.go_to_slide(self.slide_index)


class CellView(SlideElementView):
    """One live cell, as its markup, its buttons and the script surface show it."""

    def __init__(self, deck: DeckPage, cell_id: str):
        super().__init__(deck, cell_id)
        self.selector = f'.cell[data-cell-id="{cell_id}"]'

    # ------------------------------------------------------------ its code

    @property
    def source(self) -> str:
        """The code in its editor now."""
        return self.page.evaluate(SOURCE, self.id)

    @property
    def original(self) -> str:
        """The code the build wrote (the hidden .cell-source)."""
        return self.page.text_content(f"{self.selector} .cell-source")

    def set_source(self, source: str) -> None:
        """Replace its code (one undoable edit, saved at once), as pasting it would."""
        self.page.evaluate(SET_SOURCE, [self.id, source])

    @property
    def edited(self) -> bool:
        return self.page.get_attribute(self.selector, "data-edited") is not None

    @property
    def saved_edit(self) -> str | None:
        """The edit this browser keeps for the cell, if any."""
        return self.page.evaluate(SAVED_EDIT, self.id)

    @property
    def saved_output(self) -> dict | None:
        """The last run this browser keeps with the cell's edit: {source, status, outputs, …}, or None."""
        return self.page.evaluate(SAVED_OUTPUT, self.id)

    def copy_code(self) -> None:
        """Click the toolbar's «Copiar» (the cell's code to the clipboard)."""
        self.click("copy-code")

    def copy_output(self) -> None:
        """Point at the output and click its «Copiar»."""
        self.page.hover(self.output_selector)
        self.click("copy-output")

    def download_py(self) -> tuple[str, str]:
        """Click «.py»: (file name, its text)."""
        name, data = self.deck.download(lambda: self.click("download-py"))
        return name, data.decode("utf-8")

    def click_editor(self) -> None:
        self.page.click(f"{self.selector} .cm-content")

    # ------------------------------------------------------------ its «Prueba esto»

    @property
    def prompt_selector(self) -> str:
        return f"{self.selector} > details.cell-prueba > summary"

    def prompt(self) -> dict | None:
        """{open, label, labelBox, focused, shown, text, textBox, textPx, inFlow}, or None without one."""
        return self.page.evaluate(PROMPT_STATE, self.selector)

    def click_prompt(self) -> None:
        """Click (or tap, on a touch screen) the label of its «Prueba esto»."""
        self.page.click(self.prompt_selector)

    # ------------------------------------------------------------ running it

    @property
    def status(self) -> str:
        return self.page.get_attribute(self.selector, "data-status")

    @property
    def runs(self) -> int:
        """How many runs it has finished (data-runs)."""
        return int(self.page.get_attribute(self.selector, "data-runs") or 0)

    def click(self, action: str) -> None:
        """Click one of its buttons: run, stop or reset."""
        self.page.click(f"{self.selector} [data-action={action}]")

    def click_run(self) -> int:
        """Go to its slide and click ▶; return its run count before the click."""
        self.show()
        before = self.runs
        self.click("run")
        return before

    def wait_for_run(self, before: int, timeout: int = RUN_TIMEOUT_MS) -> str:
        """Wait until it has finished a run more than `before`; return its status."""
        self.page.wait_for_function(
            "([selector, before]) => Number(document.querySelector(selector).dataset.runs || 0) > before",
            arg=[self.selector, before], timeout=timeout)
        return self.status

    def run(self, timeout: int = RUN_TIMEOUT_MS) -> str:
        """Click ▶ and wait for the run to end; return the cell's status."""
        return self.wait_for_run(self.click_run(), timeout)

    def run_in_page(self, source: str | None = None) -> dict:
        """Run it from inside the page (optionally with new code): {status, elapsedMs, wallMs, notice, restarted}."""
        return self.page.evaluate(RUN_IN_PAGE, [self.id, source])

    def stop(self) -> None:
        self.click("stop")

    def reset(self) -> None:
        """Click ↺ (the button shows only while the cell is edited)."""
        self.click("reset")

    def reset_in_page(self) -> None:
        """Back to its original code from inside the page, wherever it is (what ↺ does)."""
        self.page.evaluate(RESET, self.id)

    def wait_for_status(self, status: str, timeout: int = RUN_TIMEOUT_MS) -> None:
        self.page.wait_for_selector(f'{self.selector}[data-status="{status}"]', timeout=timeout)

    # ------------------------------------------------------------ its output

    @property
    def output_selector(self) -> str:
        return f"{self.selector} .cell-output"

    def output_text(self) -> str:
        return self.page.inner_text(self.output_selector)

    @property
    def origin(self) -> str:
        return self.page.get_attribute(self.output_selector, "data-origin")

    def origin_label(self) -> str:
        """The label above the output (drawn by CSS from data-origin)."""
        return self.output_state()["label"]

    def output_state(self) -> dict:
        """{origin, label, previous, stale, elapsed, blocks: [{text, notice, opacity}]}."""
        return self.page.evaluate(OUTPUT_STATE, self.output_selector)

    def read_output(self) -> dict:
        """{origin, status, declared, blocks: [(kind, text)], figures, loaded}."""
        return self.page.evaluate(READ_OUTPUT, self.selector)

    def figures(self):
        return self.locator("img.out-figure")

    def wait_for_output_containing(self, text: str, timeout: int = RUN_TIMEOUT_MS) -> None:
        """Wait until the cell shows `text`: in its output, or in the live tail of a run that prints."""
        # Function form: the page's CSP forbids the eval that string predicates need.
        self.page.wait_for_function(
            "([selector, text]) => Array.from(document.querySelectorAll("
            "`${selector} > .cell-output, ${selector} > .cell-live`)).some((e) => e.innerText.includes(text))",
            arg=[self.selector, text], timeout=timeout)

    def live_tail_text(self) -> str:
        """What a running cell shows of its printed text over its previous output ('' when none)."""
        return self.page.evaluate(
            "(selector) => { const tail = document.querySelector(selector + ' > .cell-live');"
            " return tail && !tail.hidden ? tail.innerText : ''; }", self.selector)

    # ------------------------------------------------------------ its prediction

    def choose(self, choice: str) -> None:
        """Click a choice of the cell's «Predice antes de ejecutar»."""
        self.page.click(f'{self.selector} > .cell-prediccion button[data-choice="{choice}"]')

    def prediction(self) -> dict:
        """{revealed, chosen, verdict, outputVisible}: the question as the page shows it."""
        return self.page.evaluate(
            "(selector) => { const cell = document.querySelector(selector);"
            " const chosen = cell.querySelector('.cell-prediccion button[aria-pressed=true]');"
            " return {revealed: cell.hasAttribute('data-revealed'), chosen: chosen ? chosen.dataset.choice : null,"
            " verdict: cell.querySelector('.cell-prediccion-veredicto').textContent,"
            " outputVisible: getComputedStyle(cell.querySelector('.cell-output')).visibility === 'visible'}; }",
            self.selector)

    def wait_for_figures_loaded(self, timeout: int = RUN_TIMEOUT_MS) -> None:
        self.page.wait_for_function(
            "selector => [...document.querySelectorAll(selector + ' img.out-figure')].every((img) => img.complete)",
            arg=self.selector, timeout=timeout)


class ExerciseView(SlideElementView):
    """One exercise (`.ejercicio[data-exercise]`), as its buttons and its panel show it."""

    def __init__(self, deck: DeckPage, exercise_id: str):
        super().__init__(deck, exercise_id)
        self.selector = f'.ejercicio[data-exercise="{exercise_id}"]'

    def click(self, action: str) -> None:
        """Click one of its buttons: check, hint, solution, use-solution, export."""
        self.page.click(f"{self.selector} [data-action={action}]")

    def state(self) -> dict:
        """{ready, verdict: {passed, summary, findings: [{ok, text}], notes} | None, hints: [shown…],
        hintButton: {text, disabled}, solution, solutionCode, help}."""
        return self.page.evaluate(EXERCISE_STATE, self.selector)

    def click_and_wait(self, action: str, timeout: int = RUN_TIMEOUT_MS) -> dict:
        """Click a button that answers in the panel (check, export) and wait for that answer; return it."""
        self.page.evaluate("(selector) => delete document.querySelector(selector).dataset.verdict", self.selector)
        self.click(action)
        self.page.wait_for_selector(f"{self.selector}[data-verdict]:not([aria-busy])", timeout=timeout)
        return self.state()["verdict"]

    def check(self, timeout: int = RUN_TIMEOUT_MS) -> dict:
        """Click «Comprobar» and wait for its answer; return the verdict as shown."""
        return self.click_and_wait("check", timeout)

    @property
    def cell(self) -> CellView:
        return self.deck.cell(self.id)

    # ------------------------------------------------------------ the challenge

    def fill(self, extension: dict, seed: int | None = None) -> None:
        """Type the challenge's answer into its fields (as a student would)."""
        for key, value in extension.items():
            self.page.fill(f'{self.selector} textarea[name="{key}"]', value)
        if seed is not None:
            self.page.fill(f'{self.selector} input[name="seed"]', str(seed))

    @property
    def saved_answer(self) -> str | None:
        """The challenge's answer this browser keeps (JSON), keyed like a cell's edit."""
        return self.page.evaluate(SAVED_EDIT, self.id)

    def fields(self) -> dict:
        return self.page.evaluate(
            "(selector) => Object.fromEntries([...document.querySelectorAll(selector + ' .reto-campos [name]')]"
            ".map((field) => [field.name, field.value]))", self.selector)

    def export(self, timeout: int = RUN_TIMEOUT_MS) -> tuple[str, bytes]:
        """Click «Exportar laboratorio (JSON)»: the file it downloads."""
        with self.page.expect_download(timeout=timeout) as info:
            self.click("export")
        download = info.value
        return download.suggested_filename, Path(download.path()).read_bytes()
