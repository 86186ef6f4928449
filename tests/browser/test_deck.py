"""The whole lecture in a browser (Playwright, headless Chromium, against the built dist/).

One page, one Python boot: the `tour` fixture walks every slide in order, runs
every live cell on it in Pyodide, checks the slide for overflow at 1280×720 and
saves a screenshot of it under test-artifacts/slides/. The tests then judge what
the tour saw:

* every cell runs without error, prints exactly the text the build pre-computed
  natively, and shows every figure it declares;
* no slide overflows its 1280×720 box, and no cell needs a scrollbar;
* every figure is shown large enough for its text to read from the back of
  the room; a chapter's dark background fills the whole window, and reveal's
  arrows and slide number stay readable on every background;
* the keyboard alone reaches every slide (and every answer of a «Pregunta»);
* the speaker view opens with the current slide's notes.

The tour's timings (Python boot, each cell in the browser) are printed at the
end of the run and written to test-artifacts/deck-timings.txt.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest
from PIL import Image

from deckpage import DeckPage
from shown import show_to_person
from dpdeck import figures
from dpdeck.classroom.cellrun import FIGURE_DPI

BOOT_TIMEOUT_MS = 180_000
CELL_TIMEOUT_MS = 120_000
SLOWEST_SHOWN = 8

SLIDE_SIZE = (1280, 720)

# Everything on a slide must lie inside its 1280×720 box, and no cell area may scroll.
CHECK_OVERFLOW = """
(index) => {
  const slide = Reveal.getSlides()[index];
  const box = slide.getBoundingClientRect();
  const scale = Reveal.getScale();
  const problems = [];
  for (const element of slide.querySelectorAll('*')) {
    if (element.closest('aside.notes, .katex-mathml')) continue;
    // KaTeX positions invisible struts outside a formula's box; the formula itself is what shows.
    if (element.closest('.katex') && !element.classList.contains('katex')) continue;
    if (element.closest('svg') && element.tagName.toLowerCase() !== 'svg') continue;
    const style = getComputedStyle(element);
    if (style.display === 'none' || style.visibility === 'hidden') continue;
    const rect = element.getBoundingClientRect();
    if (rect.width === 0 && rect.height === 0) continue;
    const outside = Math.max(rect.bottom - box.bottom, rect.right - box.right,
                             box.top - rect.top, box.left - rect.left) / scale;
    if (outside > 1) {
      const name = element.tagName.toLowerCase() + (element.className && typeof element.className === 'string'
        ? '.' + element.className.trim().split(/\\s+/).join('.') : '');
      problems.push(`${name} sale ${Math.round(outside)} px`);
    }
  }
  for (const element of slide.querySelectorAll('.cm-scroller, .cell-output, .cell-source')) {
    const style = getComputedStyle(element);
    if (style.display === 'none') continue;
    const down = element.scrollHeight - element.clientHeight;
    const across = element.scrollWidth - element.clientWidth;
    if (down > 1 || across > 1) {
      problems.push(`${element.className.split(' ')[0]} necesita desplazarse (${down} px abajo, ${across} px al lado)`);
    }
  }
  return {width: Math.round(box.width / scale), height: Math.round(box.height / scale),
          problems: problems.slice(0, 8)};
}
"""


# Every figure on the slide: its PNG width and the width it is shown at, in slide pixels.
FIGURE_SIZES = """
(index) => {
  const scale = Reveal.getScale();
  return Array.from(Reveal.getSlides()[index].querySelectorAll('img.out-figure')).map((img) => ({
    natural: img.naturalWidth, shown: img.getBoundingClientRect().width / scale}));
}
"""

# How much of the room under the slide's title its content takes (0–1), and whether it opens a chapter.
SLIDE_FILL = """
(index) => {
  const slide = Reveal.getSlides()[index];
  const box = slide.getBoundingClientRect();
  const title = slide.querySelector('h1');
  const top = title ? title.getBoundingClientRect().bottom : box.top;
  const blocks = Array.from(slide.children).filter((child) => !child.matches('aside.notes') && child !== title
    && child.getBoundingClientRect().height > 0);
  const bottom = Math.max(top, ...blocks.map((child) => child.getBoundingClientRect().bottom));
  const room = box.bottom - top - parseFloat(getComputedStyle(slide).paddingBottom) * Reveal.getScale();
  return {fill: (bottom - top) / room, chapter: slide.classList.contains('capitulo')};
}
"""
MIN_SLIDE_FILL = 0.4

# reveal's arrows and slide number on the current slide: their colour and where they are (window pixels).
CHROME_COLORS = """
() => {
  const reveal = document.querySelector('.reveal');
  const describe = (selector) => {
    const element = reveal.querySelector(selector);
    const box = element.getBoundingClientRect();
    return {color: getComputedStyle(element).color,
            box: [box.left, box.top, box.right, box.bottom].map(Math.round)};
  };
  return {dark: reveal.classList.contains('has-dark-background'),
          controls: describe('.controls .navigate-right'), number: describe('.slide-number')};
}
"""

# Height of a digit or capital in DejaVu Sans, matplotlib's font, as a fraction of the font size.
DIGIT_HEIGHT_EM = 0.73
# Smallest heights, in slide pixels at 1280×720, that read from the back of a classroom.
MIN_TICK_DIGIT_PX = 13
MIN_LABEL_LETTER_PX = 15


def slide_label(index: int, slide_id: str | None) -> str:
    return f"{index + 1:02d}-{slide_id}" if slide_id else f"{index + 1:02d}"


def focus_the_deck(deck) -> None:
    """Keys must reach reveal.js, not a code editor."""
    deck.blur()
    deck.page.evaluate("() => document.querySelector('.reveal').focus && document.querySelector('.reveal').focus()")


@pytest.fixture(scope="module")
def tour(browser, deck_url, artifacts_dir, request):
    shots = artifacts_dir / "slides"
    shots.mkdir(parents=True, exist_ok=True)
    for old in shots.glob("*.png"):
        old.unlink(missing_ok=True)  # a module split over two workers clears it twice

    width, height = SLIDE_SIZE
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.requests, page.console_errors = [], []
    context.on("request", lambda req: page.requests.append(req.url))
    page.on("console", lambda message: page.console_errors.append(message.text)
            if message.type == "error" else None)
    page.on("pageerror", lambda error: page.console_errors.append(str(error)))

    deck = DeckPage(page)
    started = time.perf_counter()
    # autorun=0: the tour runs each cell itself, once, and times it.
    deck.goto(deck_url + "index.html?autorun=0")
    deck.wait_for_reveal()
    deck.wait_for_cells()
    deck.without_transitions()

    slides = page.evaluate("""() => Reveal.getSlides().map((slide) => ({
        id: slide.id || null,
        title: (slide.querySelector('h1') || {}).textContent || '',
        cells: Array.from(slide.querySelectorAll('.cell[data-cell-id]')).map((c) => c.dataset.cellId),
        chapter: slide.classList.contains('capitulo'),
        fragments: slide.querySelectorAll('.fragment').length,
        notes: (slide.querySelector('aside.notes') || {}).textContent || '',
    }))""")
    cell_ids = [cell_id for slide in slides for cell_id in slide["cells"]]
    prerendered = {cell_id: deck.cell(cell_id).read_output() for cell_id in cell_ids}

    deck.wait_for_python(timeout=BOOT_TIMEOUT_MS)
    boot_seconds = time.perf_counter() - started

    runs, live, overflow, screenshots, figure_sizes, chrome, fill = {}, {}, {}, [], {}, {}, {}
    for index, slide in enumerate(slides):
        deck.go_to_slide(index, slide["fragments"])
        for cell_id in slide["cells"]:
            cell = deck.cell(cell_id)
            runs[cell_id] = cell.run_in_page()
            cell.wait_for_figures_loaded(timeout=CELL_TIMEOUT_MS)
            live[cell_id] = cell.read_output()
        deck.go_to_slide(index, slide["fragments"])
        overflow[index] = page.evaluate(CHECK_OVERFLOW, index)
        figure_sizes[index] = page.evaluate(FIGURE_SIZES, index)
        fill[index] = page.evaluate(SLIDE_FILL, index)
        chrome[index] = page.evaluate(CHROME_COLORS)
        path = shots / f"{slide_label(index, slide['id'])}.png"
        page.screenshot(path=str(path))
        screenshots.append(path)
    tour_seconds = time.perf_counter() - started

    data = {
        "page": page, "deck": deck, "context": context, "slides": slides, "cell_ids": cell_ids,
        "prerendered": prerendered, "live": live, "runs": runs, "overflow": overflow,
        "screenshots": screenshots, "folder": shots, "figure_sizes": figure_sizes, "chrome": chrome,
        "fill": fill,
    }
    report_timings(request, artifacts_dir, shots, boot_seconds, tour_seconds, runs, len(slides))
    yield data
    context.close()


def report_timings(request, artifacts_dir: Path, shots: Path, boot: float, total: float, runs: dict,
                   slide_count: int) -> None:
    timed = sorted(((run.get("elapsedMs") or run.get("wallMs") or 0.0, cell_id) for cell_id, run in runs.items()),
                   reverse=True)
    lines = [
        f"mazo completo en el navegador: {slide_count} diapositivas, {len(runs)} celdas, {total:.1f} s "
        f"(Python listo a los {boot:.1f} s)",
        f"capturas de cada diapositiva: {shots}",
        f"celdas más lentas en Pyodide (de {len(runs)}; suma {sum(ms for ms, _ in timed) / 1000:.1f} s):",
    ]
    lines += [f"  {ms / 1000:6.2f} s  {cell_id}" for ms, cell_id in timed[:SLOWEST_SHOWN]]
    (artifacts_dir / "deck-timings.txt").write_text("\n".join(lines) + "\n" + json.dumps(
        {cell_id: runs[cell_id] for _, cell_id in timed}, indent=1) + "\n", encoding="utf-8")
    show_to_person(request, lines)


# ---------------------------------------------------------------- the cells


def test_the_deck_has_its_cells(tour):
    assert len(tour["cell_ids"]) >= 30
    assert len(tour["slides"]) >= 50


def test_every_cell_runs_in_pyodide_without_error(tour):
    failures = {cell_id: (run["status"], tour["live"][cell_id]["blocks"])
                for cell_id, run in tour["runs"].items()
                if run["status"] != "done" or tour["live"][cell_id]["status"] != "done"
                or any(kind == "out-error" for kind, _ in tour["live"][cell_id]["blocks"])}
    assert failures == {}


def test_live_output_is_the_live_one(tour):
    assert {cell_id: out["origin"] for cell_id, out in tour["live"].items() if out["origin"] != "live"} == {}
    assert {cell_id: out["origin"] for cell_id, out in tour["prerendered"].items()
            if out["origin"] != "prerendered"} == {}


def test_browser_text_is_identical_to_the_native_prerendered_text(tour):
    different = {}
    for cell_id in tour["cell_ids"]:
        before, after = tour["prerendered"][cell_id]["blocks"], tour["live"][cell_id]["blocks"]
        if before != after:
            different[cell_id] = {"nativo": before, "navegador": after}
    assert different == {}


def test_every_declared_figure_is_shown_natively_and_in_the_browser(tour):
    missing = {}
    for cell_id in tour["cell_ids"]:
        native, live = tour["prerendered"][cell_id], tour["live"][cell_id]
        if not (native["figures"] == live["figures"] == live["loaded"] == live["declared"]):
            missing[cell_id] = {"declaradas": live["declared"], "nativas": native["figures"],
                                "navegador": live["figures"], "cargadas": live["loaded"]}
    assert missing == {}


# --------------------------------------------------------------- the slides


def test_no_slide_overflows_at_1280x720(tour):
    problems = {}
    for index, result in tour["overflow"].items():
        slide = tour["slides"][index]
        if (result["width"], result["height"]) != SLIDE_SIZE:
            problems[slide_label(index, slide["id"])] = [f"tamaño {result['width']}×{result['height']}"]
        elif result["problems"]:
            problems[slide_label(index, slide["id"])] = result["problems"]
    assert problems == {}


def test_no_slide_is_left_mostly_empty(tour):
    # A slide that says little next to its neighbours reads as a gap in the lecture.
    empty = {slide_label(index, tour["slides"][index]["id"]): f"{seen['fill']:.0%}"
             for index, seen in tour["fill"].items() if not seen["chapter"] and seen["fill"] < MIN_SLIDE_FILL}
    assert empty == {}


def test_every_figure_is_shown_large_enough_to_read(tour):
    # Text in a figure is drawn in points at FIGURE_DPI; the slide scales the PNG
    # to the width it is shown at. Digits of the tick labels and letters of the
    # axis labels must come out at least this tall on the 1280×720 slide.
    small = {}
    for index, sizes in tour["figure_sizes"].items():
        for size in sizes:
            scale = size["shown"] / size["natural"]
            px_per_point = FIGURE_DPI / 72 * scale * DIGIT_HEIGHT_EM
            tick, label = figures.TICK_SIZE * px_per_point, figures.LABEL_SIZE * px_per_point
            if tick < MIN_TICK_DIGIT_PX or label < MIN_LABEL_LETTER_PX:
                slide = tour["slides"][index]
                small[slide_label(index, slide["id"])] = f"cifras {tick:.1f} px, rótulos {label:.1f} px"
    assert sum(len(sizes) for sizes in tour["figure_sizes"].values()) >= 13
    assert small == {}


def rgb(css_color: str) -> tuple[float, float, float]:
    return tuple(float(part) for part in re.findall(r"[\d.]+", css_color)[:3])


def contrast_ratio(first, second) -> float:
    """WCAG 2 contrast ratio between two colours, each an (r, g, b) tuple or a CSS rgb() string."""
    def luminance(color):
        channels = [value / 255 for value in (rgb(color) if isinstance(color, str) else color)]
        linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]
    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_chapter_slides_fill_the_whole_window_with_their_dark_background(tour):
    chapters = [index for index, slide in enumerate(tour["slides"]) if slide["chapter"]]
    assert len(chapters) == 6
    wrong = {}
    for index, slide in enumerate(tour["slides"]):
        with Image.open(tour["screenshots"][index]) as shot:
            image = shot.convert("RGB")
            # The window's corners lie outside the scaled 1280×720 box.
            corners = [image.getpixel(xy) for xy in ((1, 1), (image.width - 2, 1), (1, image.height // 2))]
        dark_corners = all(sum(pixel) / 3 < 80 for pixel in corners)
        if slide["chapter"] != dark_corners or slide["chapter"] != tour["chrome"][index]["dark"]:
            wrong[slide_label(index, slide["id"])] = {"esquinas": corners, "oscura": tour["chrome"][index]["dark"]}
    assert wrong == {}


def background_behind(image: Image.Image, box: list[int]) -> tuple[int, int, int]:
    """The commonest colour in ``box`` of a screenshot: what lies behind thin arrows or small digits."""
    left, top, right, bottom = (max(0, value) for value in box)
    counts = image.crop((left, top, min(right, image.width), min(bottom, image.height))).getcolors(1 << 16)
    return max(counts)[1]


def test_arrows_and_slide_number_read_on_every_background(tour):
    faint = {}
    for index, chrome in tour["chrome"].items():
        with Image.open(tour["screenshots"][index]) as shot:
            image = shot.convert("RGB")
            ratios = {name: contrast_ratio(chrome[name]["color"], background_behind(image, chrome[name]["box"]))
                      for name in ("controls", "number")}
        # WCAG: 3:1 for graphics such as the arrows, 4.5:1 for small text.
        if ratios["controls"] < 3 or ratios["number"] < 4.5:
            slide = tour["slides"][index]
            faint[slide_label(index, slide["id"])] = f"flecha {ratios['controls']:.1f}:1, número {ratios['number']:.1f}:1"
    assert faint == {}


def test_every_slide_has_speaker_notes(tour):
    without = [slide_label(i, s["id"]) for i, s in enumerate(tour["slides"]) if len(s["notes"].strip()) < 40]
    assert without == []


def test_every_question_reveals_its_answer_as_a_fragment(tour):
    questions = [s for s in tour["slides"] if s["title"].strip() == "Pregunta"]
    assert questions and all(s["fragments"] >= 1 for s in questions)


def test_a_screenshot_of_every_slide_is_saved(tour):
    saved = [path for path in tour["screenshots"] if path.exists() and path.stat().st_size > 10_000]
    assert len(saved) == len(tour["slides"])
    print(f"\ncapturas de las diapositivas: {tour['folder']}")


def test_nothing_was_requested_from_another_origin(tour, deck_url):
    foreign = [url for url in tour["page"].requests
               if not (url.startswith(deck_url) or url.startswith(("blob:", "data:")))]
    assert foreign == []


def test_no_console_errors_during_the_tour(tour):
    assert tour["page"].console_errors == []


# --------------------------------------------------------- keyboard and notes


def test_keyboard_alone_covers_the_whole_deck(tour):
    deck = tour["deck"]
    slides = tour["slides"]
    deck.go_to_slide(0)
    focus_the_deck(deck)
    fragments = sum(s["fragments"] for s in slides)
    presses = len(slides) - 1 + fragments
    seen, revealed, current = {0}, 0, 0
    for _ in range(presses):
        deck.press("ArrowRight")
        h = deck.slide_index
        if h == current:
            revealed += 1  # the key showed the next fragment (an answer) instead of moving on
        seen.add(h)
        current = h
    assert seen == set(range(len(slides)))
    assert deck.is_last_slide()
    assert revealed == fragments
    deck.press("ArrowLeft")
    assert deck.slide_index == len(slides) - 2
    deck.press("Home")
    assert deck.slide_index == 0
    deck.press("End")
    assert deck.slide_index == len(slides) - 1


def test_speaker_view_opens_with_the_notes_of_the_current_slide(tour):
    deck = tour["deck"]
    index = next(i for i, s in enumerate(tour["slides"]) if s["id"] == "hoja-de-ruta")
    deck.go_to_slide(index)
    focus_the_deck(deck)
    with deck.page.context.expect_page(timeout=15_000) as popup_info:
        deck.press("s")
    speaker = popup_info.value
    try:
        speaker.wait_for_load_state()
        expected = re.sub(r"\s+", " ", tour["slides"][index]["notes"]).strip()[:40]
        speaker.wait_for_function(
            "text => { const n = document.querySelector('.speaker-controls-notes');"
            " return n && n.textContent.replace(/\\s+/g, ' ').includes(text); }",
            arg=expected, timeout=30_000)
        # The speaker view mirrors the deck in iframes; none of them boots Python.
        frames = speaker.frames
        assert len(frames) >= 2
    finally:
        speaker.close()
