"""What the page draws over the slides never covers them, and none of it is printed.

Against the built dist/ (the whole lecture) in headless Chromium at 1280×720:

* on every slide, with every fragment shown, no piece of slide content (each
  line of text, each figure) meets the page's own chrome: the Python status
  chip, the index button (☰), reveal's arrows, the slide number and the
  progress bar; nor do those
  meet each other. Checked while Python is loading (the download is held
  half-way) and once it is ready. A strip of the bottom of each slide where
  they meet is saved under test-artifacts/chrome/;
* ``?print-pdf`` lays out one page per slide with every pre-computed output and
  figure and no status chip or buttons, and Chromium's PDF of it has exactly
  that many pages, of reveal's page size, with the figures in it;
* a long live output (60 lines, 50 000 characters) in any cell with slide
  content after it scrolls inside the cell: nothing leaves the slide's box and
  the output's origin label stays in view;
* reveal's own screens: the speaker view (S) typesets the notes' math with
  KaTeX's stylesheet and speaks Spanish; the keyboard help (?) is Spanish and
  every line of it readable (contrast ≥ 4.5:1); the pause button is Spanish.
"""

from __future__ import annotations

import re

import pytest

from deckpage import DeckPage

VIEWPORT = {"width": 1280, "height": 720}
STRIP_HEIGHT = 110  # px of the bottom of the window kept per slide

# Every line of text (its glyph boxes, not its block's) and every figure on the
# slide, in window pixels.
CONTENT_BOXES = """
(index) => {
  const slide = Reveal.getSlides()[index];
  const shown = (element) => {
    for (let e = element; e && e !== slide.parentElement; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return false;
    }
    return true;
  };
  const name = (element) => element.tagName.toLowerCase()
    + (typeof element.className === 'string' && element.className.trim()
       ? '.' + element.className.trim().split(/\\s+/).slice(0, 2).join('.') : '');
  const boxes = [];
  const add = (what, rect) => {
    if (rect.width > 0 && rect.height > 0) boxes.push({what, box: [rect.left, rect.top, rect.right, rect.bottom]});
  };
  const walker = document.createTreeWalker(slide, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent.trim();
    if (!text) continue;
    const parent = node.parentElement;
    // Speaker notes stay off the slide; KaTeX's MathML copy is for screen readers only.
    if (parent.closest('aside.notes, .katex-mathml') || !shown(parent)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) add(`${name(parent)} «${text.slice(0, 40)}»`, rect);
  }
  for (const element of slide.querySelectorAll('img, svg, canvas, video')) {
    if (element.parentElement.closest('svg') || !shown(element)) continue;
    add(name(element) + (element.getAttribute('src') ? ` ${element.getAttribute('src')}` : ''),
        element.getBoundingClientRect());
  }
  return boxes;
}
"""

# The page's chrome as it is drawn now (whatever is hidden or transparent is left out).
CHROME_BOXES = """
() => {
  const boxes = [];
  const add = (what, element) => {
    if (!element) return;
    const style = getComputedStyle(element);
    if (style.display === 'none' || style.visibility === 'hidden' || Number(style.opacity) === 0) return;
    const rect = element.getBoundingClientRect();
    if (rect.width > 0 && rect.height > 0) boxes.push({what, box: [rect.left, rect.top, rect.right, rect.bottom]});
  };
  add('estado de Python', document.querySelector('.python-status'));
  add('botón del índice', document.querySelector('.deck-menu-button'));
  for (const arrow of document.querySelectorAll('.reveal .controls button')) {
    if (getComputedStyle(arrow.parentElement).display === 'none') continue;
    add('flecha ' + (arrow.className.match(/navigate-\\w+/) || ['?'])[0], arrow);
  }
  add('número de diapositiva', document.querySelector('.reveal .slide-number'));
  add('barra de progreso', document.querySelector('.reveal .progress'));
  return boxes;
}
"""


def overlap(first, second) -> bool:
    """Whether two [left, top, right, bottom] boxes share more than half a pixel each way."""
    across = min(first[2], second[2]) - max(first[0], second[0])
    down = min(first[3], second[3]) - max(first[1], second[1])
    return across > 0.5 and down > 0.5


def collisions_on_every_slide(deck, state: str, strips) -> tuple[dict, float, list]:
    """Walks the deck; returns {slide: [what meets what]}, the smallest room (px)
    between content and the chrome below it, and the chrome seen on the last slide."""
    page = deck.page
    slides = page.evaluate("() => Reveal.getSlides().map((s) => s.querySelectorAll('.fragment').length)")
    problems, smallest_gap, chrome = {}, float("inf"), []
    for index, fragments in enumerate(slides):
        deck.go_to_slide(index, fragments)
        chrome = page.evaluate(CHROME_BOXES)
        content = page.evaluate(CONTENT_BOXES, index)
        found = [f"{piece['what']} bajo {part['what']}"
                 for part in chrome for piece in content if overlap(part["box"], piece["box"])]
        found += [f"{first['what']} sobre {second['what']}"
                  for number, first in enumerate(chrome) for second in chrome[number + 1:]
                  if overlap(first["box"], second["box"])]
        if found:
            problems[index + 1] = found[:6]
            # What the chrome covers, to look at (only there: a picture of each slide is a tenth of a second).
            page.screenshot(path=str(strips / f"{state}-{index + 1:02d}.png"),
                            clip={"x": 0, "y": VIEWPORT["height"] - STRIP_HEIGHT,
                                  "width": VIEWPORT["width"], "height": STRIP_HEIGHT})
        # Room between a piece of content and the chrome right below it.
        for part in chrome:
            for piece in content:
                beside = min(part["box"][2], piece["box"][2]) - max(part["box"][0], piece["box"][0]) <= 0.5
                if not beside and piece["box"][1] < part["box"][1]:
                    smallest_gap = min(smallest_gap, part["box"][1] - piece["box"][3])
    return problems, smallest_gap, chrome


@pytest.fixture(scope="module")
def strips(artifacts_dir):
    folder = artifacts_dir / "chrome"
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("*.png"):
        old.unlink(missing_ok=True)  # a module split over two workers clears it twice
    return folder


def test_the_chrome_never_covers_slide_content_loading_or_ready(browser, deck_url, strips):
    context = browser.new_context(viewport=VIEWPORT)
    held = []
    # Hold Python's download half-way: the status chip stays in its loading state.
    context.route("**/pyodide/pyodide.asm.wasm", lambda route: held.append(route))
    try:
        deck = DeckPage(context.new_page()).goto(deck_url + "index.html?autorun=0")
        deck.wait_for_reveal()
        # While Python loads, each slide's cells get their editors as it is shown (deck.js).
        deck.without_transitions()
        deck.page.wait_for_function("() => /MB/.test(document.querySelector('.python-status').textContent)")
        assert deck.python_state == "loading"
        loading, loading_gap, loading_chrome = collisions_on_every_slide(deck, "cargando", strips)
        assert "Cargando Python" in deck.status_text()

        assert held, "la descarga de pyodide.asm.wasm no pasó por la ruta retenida"
        for route in held:
            route.continue_()
        deck.wait_for_python()
        deck.page.mouse.move(VIEWPORT["width"] / 2, VIEWPORT["height"] / 3)  # not over the chip
        ready, ready_gap, ready_chrome = collisions_on_every_slide(deck, "listo", strips)
        assert deck.status_text().strip() == "Python listo"
    finally:
        context.close()
    print(f"\nfranjas inferiores de las diapositivas con choques: {strips}")
    print(f"menor distancia entre el contenido y lo que hay debajo: cargando {loading_gap:.0f} px, "
          f"listo {ready_gap:.0f} px")
    # The check can fail: each state really drew its chip, both arrows and the slide number.
    for chrome in (loading_chrome, ready_chrome):
        drawn = {part["what"] for part in chrome}
        assert {"estado de Python", "botón del índice", "número de diapositiva", "flecha navigate-left"} <= drawn, drawn
    assert loading == {}
    assert ready == {}


# ------------------------------------------------------------------ ?print-pdf

PRINT_LAYOUT = """
() => {
  const shown = (element) => {
    const style = getComputedStyle(element);
    const box = element.getBoundingClientRect();
    return style.display !== 'none' && style.visibility !== 'hidden' && box.width > 0 && box.height > 0;
  };
  const cells = Array.from(document.querySelectorAll('.cell[data-cell-id]'));
  const figures = Array.from(document.querySelectorAll('.cell-output img.out-figure'));
  const sheet = Array.from(document.styleSheets).flatMap((s) => {
    try { return Array.from(s.cssRules).map((rule) => rule.cssText); } catch { return []; }
  }).find((text) => text.startsWith('@page')) || '';
  return {
    pages: document.querySelectorAll('.pdf-page').length,
    slides: Reveal.getTotalSlides(),
    pageRule: sheet,
    cells: cells.length,
    declaredFigures: cells.reduce((sum, cell) => sum + Number(cell.dataset.figures || 0), 0),
    withoutOutput: cells.filter((cell) => {
      const output = cell.querySelector('.cell-output');
      return !output || output.dataset.origin !== 'prerendered' || !output.children.length || !shown(output);
    }).map((cell) => cell.dataset.cellId),
    figures: figures.length,
    figureSources: Array.from(new Set(figures.map((img) => img.getAttribute('src')))),
    notLoaded: figures.filter((img) => !(img.complete && img.naturalWidth > 0) || !shown(img))
      .map((img) => img.getAttribute('src')),
    // Each page's number: how far its box is from the page's bottom-right corner.
    numbers: Array.from(document.querySelectorAll('.pdf-page')).map((pdfPage) => {
      const number = pdfPage.querySelector('.slide-number-pdf');
      if (!number) return null;
      const page = pdfPage.getBoundingClientRect(), box = number.getBoundingClientRect();
      return {text: number.textContent.trim(), right: page.right - box.right, bottom: page.bottom - box.bottom};
    }),
    // A question to predict: printed under its cell, the right choice marked, none a button.
    predictions: Array.from(document.querySelectorAll('.cell[data-predict]')).map((cell) => {
      const question = cell.querySelector('.cell-prediccion-pregunta');
      const output = cell.querySelector('.cell-output').getBoundingClientRect();
      const marked = cell.querySelector('.cell-prediccion-opciones > li[data-correct] > .cell-prediccion-opcion');
      return {id: cell.dataset.cellId, question: Boolean(question) && shown(question),
              below: Boolean(question) && question.getBoundingClientRect().top >= output.bottom - 1,
              marked: marked && shown(marked) ? getComputedStyle(marked, '::after').content : null};
    }),
    statusChips: document.querySelectorAll('.python-status').length,
    buttonsShown: Array.from(document.querySelectorAll('button')).filter(shown).map((b) => b.className),
    python: document.documentElement.dataset.python,
  };
}
"""


def test_print_pdf_has_every_slide_output_and_figure_and_no_chrome(browser, deck_url, artifacts_dir):
    context = browser.new_context(viewport=VIEWPORT)
    try:
        deck = DeckPage(context.new_page()).goto(deck_url + "index.html?print-pdf")
        deck.wait_for_reveal()
        page = deck.page
        page.wait_for_function("() => document.querySelectorAll('.pdf-page').length > 0")
        page.wait_for_function(
            "() => Array.from(document.querySelectorAll('img')).every((img) => img.complete)", timeout=30_000)
        layout = page.evaluate(PRINT_LAYOUT)
        pdf = page.pdf(prefer_css_page_size=True, print_background=True)
    finally:
        context.close()
    path = artifacts_dir / "diapositivas.pdf"
    path.write_bytes(pdf)
    print(f"\nPDF de ?print-pdf: {path} ({len(pdf) / 1e6:.1f} MB)")

    # reveal: one page per slide (answers shown on the same page), each the slide plus its margin.
    assert layout["slides"] >= 50
    assert layout["pages"] == layout["slides"]
    match = re.fullmatch(r"@page \{ size: (\d+)px (\d+)px; margin: 0px; \}", layout["pageRule"])
    assert match, layout["pageRule"]
    page_px = (int(match[1]), int(match[2]))
    assert page_px == (int(1280 * 1.03), int(720 * 1.03))

    # Every cell shows its pre-computed output and figures; nothing interactive is printed.
    assert layout["python"] == "off"
    assert layout["cells"] >= 30 and layout["withoutOutput"] == []
    assert layout["figures"] == layout["declaredFigures"] >= 13
    assert layout["notLoaded"] == []
    assert layout["statusChips"] == 0
    # Every page carries its slide number, in the corner (no arrows to make room for in print).
    numbers = layout["numbers"]
    assert [number and number["text"] for number in numbers] == [str(n) for n in range(1, len(numbers) + 1)]
    assert max(max(number["right"], number["bottom"]) for number in numbers) <= 40, numbers[:3]
    assert layout["buttonsShown"] == []
    # «Predict, then run» (deck/README.md): under the output, the question with the right choice marked ✓.
    predictions = layout["predictions"]
    assert len(predictions) >= 5
    assert [p for p in predictions if not (p["question"] and p["below"] and p["marked"] == '" ✓"')] == []

    # The PDF itself: that many pages, of that size (CSS px are 3/4 pt), with the figures as images.
    pages = re.findall(rb"/Type\s*/Page\b(?!s)", pdf)
    assert len(pages) == layout["pages"]
    sizes = {tuple(float(v) for v in box.split()[2:]) for box in re.findall(rb"/MediaBox\s*\[([^\]]*)\]", pdf)}
    assert len(sizes) == 1
    (width_pt, height_pt), = sizes
    assert abs(width_pt / 0.75 - page_px[0]) < 2 and abs(height_pt / 0.75 - page_px[1]) < 2, sizes
    assert len(re.findall(rb"/Subtype\s*/Image", pdf)) >= len(layout["figureSources"])


# ------------------------------------------------------- long live outputs

# Cells followed by more slide content (text under a stacked cell, a closing line…).
CELLS_WITH_CONTENT_AFTER = """
() => Reveal.getSlides().flatMap((slide, index) => Array.from(slide.querySelectorAll('.cell[data-cell-id]'))
  .filter((cell) => {
    let top = cell;
    while (top.parentElement !== slide) top = top.parentElement;
    for (let next = top.nextElementSibling; next; next = next.nextElementSibling) {
      if (!next.matches('aside.notes') && next.textContent.trim()) return true;
    }
    return false;
  }).map((cell) => ({index, id: cell.dataset.cellId})))
"""

# How far (slide px) anything drawn on the slide — each line of text and each
# figure, as far as the boxes that scroll or clip it let it show — reaches beyond
# the slide's box (negative: how far inside it stays).
SLIDE_REACH = """
(index) => {
  const slide = Reveal.getSlides()[index];
  const box = slide.getBoundingClientRect(), scale = box.height / slide.offsetHeight;
  const clipped = (element, rect) => {
    let [left, top, right, bottom] = [rect.left, rect.top, rect.right, rect.bottom];
    for (let e = element; e && e !== slide; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
      const clip = e.getBoundingClientRect();
      left = Math.max(left, clip.left); top = Math.max(top, clip.top);
      right = Math.min(right, clip.right); bottom = Math.min(bottom, clip.bottom);
    }
    return right > left && bottom > top ? [left, top, right, bottom] : null;
  };
  const shown = (element) => !element.closest('aside.notes, .katex-mathml')
    && element.checkVisibility({opacityProperty: true, visibilityProperty: true});
  let worst = {what: null, by: -Infinity};
  const consider = (what, element, rect) => {
    const piece = clipped(element, rect);
    if (!piece) return;
    const by = Math.max(piece[3] - box.bottom, piece[2] - box.right, box.top - piece[1], box.left - piece[0]) / scale;
    if (by > worst.by) worst = {what, by};
  };
  const walker = document.createTreeWalker(slide, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim() || !shown(node.parentElement)) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) consider(`«${node.textContent.trim().slice(0, 30)}»`, node.parentElement, rect);
  }
  for (const element of slide.querySelectorAll('img, svg, canvas')) {
    if (shown(element)) consider(element.tagName.toLowerCase(), element, element.getBoundingClientRect());
  }
  return worst;
}
"""

LABEL_SHOWN = """
(id) => {
  const output = document.querySelector(`.cell[data-cell-id="${id}"] .cell-output`);
  output.scrollTop = output.scrollHeight;
  const box = output.getBoundingClientRect();
  const hit = document.elementFromPoint(box.left + 6, box.top + 6);
  return {scrolled: output.scrollTop > 0, labelOnTop: hit === output,
          label: getComputedStyle(output, '::before').content};
}
"""

LONG_OUTPUTS = {
    "muchas líneas": "for i in range(60):\n    print(i)",
    "una línea enorme": "print('x' * 50000)",
}


def test_a_long_live_output_scrolls_inside_its_cell_and_never_leaves_the_slide(new_deck, deck_url):
    deck = new_deck(deck_url + "index.html?autorun=0")
    page = deck.page
    deck.wait_for_cells()
    deck.without_transitions()
    cells = page.evaluate(CELLS_WITH_CONTENT_AFTER)
    assert len(cells) >= 3, cells
    deck.wait_for_python()
    problems, checked = [], 0
    for cell in cells:
        deck.go_to_slide(cell["index"])
        before = page.evaluate(SLIDE_REACH, cell["index"])
        for name, source in LONG_OUTPUTS.items():
            assert deck.cell(cell["id"]).run_in_page(source)["status"] == "done"
            deck.settle()
            reach = page.evaluate(SLIDE_REACH, cell["index"])
            label = page.evaluate(LABEL_SHOWN, cell["id"])
            checked += 1
            if reach["by"] > max(before["by"], 0) + 0.5:
                problems.append(f"{cell['id']} ({name}): {reach['what']} sale {reach['by']:.0f} px de la diapositiva")
            if not (label["scrolled"] and label["labelOnTop"]):
                problems.append(f"{cell['id']} ({name}): la etiqueta no queda visible al desplazar ({label})")
    print(f"\n{checked} salidas largas en {len(cells)} celdas con texto debajo")
    assert problems == []


# ------------------------------------------------------------ reveal's own screens

# The first slide whose speaker notes hold a formula.
SLIDE_WITH_MATH_NOTES = """
() => Reveal.getSlides().findIndex((slide) => slide.querySelector('aside.notes .katex'))
"""

SPEAKER_VIEW = """
() => {
  const notes = document.querySelector('.speaker-controls-notes .value');
  const mathml = notes.querySelector('.katex-mathml');
  const box = mathml.getBoundingClientRect();
  const shown = (element) => element.checkVisibility({opacityProperty: true, visibilityProperty: true});
  const texts = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!node.textContent.trim() || parent.closest('.speaker-controls-notes .value, script, style')) continue;
    if (parent.tagName === 'OPTION' || shown(parent)) texts.push(node.textContent.trim());
  }
  return {
    formulas: notes.querySelectorAll('.katex').length,
    mathmlBox: [box.width, box.height],
    mathmlClip: getComputedStyle(mathml).clipPath,
    katexFont: getComputedStyle(notes.querySelector('.katex')).fontFamily,
    texts,
    lang: document.documentElement.lang,
  };
}
"""

# The «Siguiente» label and every line of text of the next slide, shown in the frame below it
# (speaker-window pixels); null until that frame shows a slide.
UPCOMING = """
() => {
  const frame = document.querySelector('#upcoming-slide iframe');
  const slide = frame && frame.contentDocument && frame.contentDocument.querySelector('.reveal.ready .slides section.present');
  if (!slide) return null;
  const at = frame.getBoundingClientRect();
  const [dx, dy] = [at.left + frame.clientLeft, at.top + frame.clientTop];
  const lines = [];
  const walker = frame.contentDocument.createTreeWalker(slide, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim() || node.parentElement.closest('aside.notes, .katex-mathml')) continue;
    const range = frame.contentDocument.createRange();
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) {
      if (rect.width > 0) lines.push({text: node.textContent.trim().slice(0, 30),
                                      box: [rect.left + dx, rect.top + dy, rect.right + dx, rect.bottom + dy]});
    }
  }
  const label = document.querySelector('#upcoming-slide .label').getBoundingClientRect();
  return {label: [label.left, label.top, label.right, label.bottom], lines};
}
"""

ENGLISH_WORDS = re.compile(r"\b(Upcoming|Time|TIME|Notes|NOTES|Layout|Click|Reset|Pacing|Default|Wide|Tall|"
                           r"Loading|AM|PM)\b")


def test_speaker_view_typesets_the_notes_math_and_speaks_spanish(new_deck, deck_url, artifacts_dir):
    deck = new_deck(deck_url + "index.html?autorun=0", python=False)
    deck.wait_for_reveal()
    index = deck.page.evaluate(SLIDE_WITH_MATH_NOTES)
    assert index >= 0, "ninguna diapositiva tiene fórmulas en sus notas"
    deck.go_to_slide(index)
    with deck.page.context.expect_page(timeout=15_000) as popup:
        deck.press("s")
    speaker = popup.value
    speaker.wait_for_function(
        "() => document.querySelector('.speaker-controls-notes .value .katex-mathml')", timeout=30_000)
    # The clock is written every second, the layout label when the menu changes: translated each time.
    speaker.wait_for_timeout(1200)
    speaker.select_option(".speaker-layout-dropdown", "wide")
    view = speaker.evaluate(SPEAKER_VIEW)
    speaker.select_option(".speaker-layout-dropdown", "default")
    speaker.wait_for_timeout(300)
    speaker.wait_for_function(UPCOMING, timeout=30_000)
    upcoming = speaker.evaluate(UPCOMING)
    speaker.screenshot(path=str(artifacts_dir / "vista-del-presentador.png"))
    speaker.close()
    print(f"\nvista del presentador: {view['formulas']} fórmulas en las notas; textos: {view['texts']}")
    assert view["formulas"] > 0
    # KaTeX's stylesheet hides the MathML copy (1×1 px, clipped) and sets its fonts.
    assert max(view["mathmlBox"]) <= 1 and view["mathmlClip"].startswith("inset"), view
    assert "KaTeX" in view["katexFont"], view["katexFont"]
    assert view["lang"] == "es"
    for label in ("Siguiente", "Tiempo", "Notas", "Diseño: Ancha"):
        assert label in view["texts"], (label, view["texts"])
    assert not [text for text in view["texts"] if ENGLISH_WORDS.search(text)], view["texts"]
    # «Siguiente» names the next slide without covering any of its text.
    assert upcoming["lines"]
    assert [line["text"] for line in upcoming["lines"] if overlap(upcoming["label"], line["box"])] == []


# Every line of text in reveal's help overlay: its words, and the contrast
# ratio (WCAG) between its colour and what lies behind it (each ancestor's
# background composited over the page's).
HELP_OVERLAY = """
() => {
  const overlay = document.querySelector('.reveal .r-overlay-help');
  const rgba = (text) => {
    const [r, g, b, a = 1] = text.match(/[\\d.]+/g).map(Number);
    return [r, g, b, a];
  };
  const luminance = ([r, g, b]) => {
    const linear = [r, g, b].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; });
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2];
  };
  const behind = (element) => {
    const layers = [];
    for (let e = element; e; e = e.parentElement) layers.push(rgba(getComputedStyle(e).backgroundColor));
    let color = rgba(getComputedStyle(document.querySelector('.reveal-viewport') || document.body).backgroundColor);
    if (color[3] === 0) color = [255, 255, 255, 1];
    for (const [r, g, b, a] of layers.reverse()) {
      color = [r * a + color[0] * (1 - a), g * a + color[1] * (1 - a), b * a + color[2] * (1 - a), 1];
    }
    return color;
  };
  const lines = [];
  const walker = document.createTreeWalker(overlay, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const text = node.textContent.trim();
    if (!text) continue;
    const element = node.parentElement;
    const [fg, bg] = [luminance(rgba(getComputedStyle(element).color)), luminance(behind(element))];
    const ratio = (Math.max(fg, bg) + 0.05) / (Math.min(fg, bg) + 0.05);
    lines.push({text, ratio: Math.round(ratio * 10) / 10});
  }
  return {lines, lang: overlay.lang};
}
"""

ENGLISH_HELP = re.compile(r"\b(Keyboard|Shortcuts|KEY|ACTION|Next|Previous|Navigate|slide|Jump|Pause|Fullscreen|"
                          r"overview|Speaker|notes view|SPACE|Shift|Resume|presentation)\b")


def test_reveals_help_and_pause_screens_are_readable_and_spanish(new_deck, deck_url, artifacts_dir):
    deck = new_deck(deck_url + "index.html?autorun=0", python=False)
    deck.wait_for_reveal()
    page = deck.page
    page.keyboard.press("Shift+Slash")  # «?»
    page.wait_for_selector(".reveal .r-overlay-help table td")
    page.wait_for_timeout(400)  # its fade-in
    help_overlay = page.evaluate(HELP_OVERLAY)
    page.screenshot(path=str(artifacts_dir / "ayuda-de-teclas.png"))
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.wait_for_function("() => Reveal.isPaused()")
    # The button fades in (visibility flips with the transition): read it once shown.
    page.wait_for_selector(".reveal .pause-overlay .resume-button", state="visible")
    resume = page.inner_text(".reveal .pause-overlay .resume-button")
    page.keyboard.press("b")
    texts = [line["text"] for line in help_overlay["lines"]]
    print(f"\nayuda de reveal: {len(texts)} textos, contraste mínimo "
          f"{min(line['ratio'] for line in help_overlay['lines'])}:1")
    assert "Atajos de teclado" in texts and help_overlay["lang"] == "es"
    assert {"Tecla", "Acción", "Diapositiva siguiente", "Vista del presentador (notas)"} <= set(texts), texts
    assert [text for text in texts if ENGLISH_HELP.search(text)] == []
    # Readable from the back of the room: at least WCAG's 4.5:1 for every line.
    assert [line for line in help_overlay["lines"] if line["ratio"] < 4.5] == []
    assert resume == "Reanudar la presentación"


# ------------------------------------------------------------ the editor itself

# For each of a cell's first lines: the vertical centre of its line number and
# of its code text, from their glyph boxes.
GUTTER_AND_LINE_CENTRES = """
(cellId) => {
  const editor = document.querySelector(`.cell[data-cell-id="${cellId}"] .cm-editor`);
  const centre = (element) => {
    const range = document.createRange();
    range.selectNodeContents(element);
    const box = range.getBoundingClientRect();
    return (box.top + box.bottom) / 2;
  };
  const numbers = [...editor.querySelectorAll('.cm-lineNumbers .cm-gutterElement')]
    .filter((element) => element.textContent.trim() !== '' && element.offsetHeight > 0);
  const lines = [...editor.querySelectorAll('.cm-line')];
  return lines.slice(0, 5).map((line, index) => [centre(numbers[index]), centre(line)]);
}
"""


def test_line_numbers_sit_on_their_code_lines(new_deck, deck_url):
    deck = new_deck(deck_url + "index.html?autorun=0#/codo", python=False)
    deck.wait_for_cells_on_screen()
    page = deck.page
    cell_id = page.evaluate("() => Reveal.getCurrentSlide().querySelector('.cell').dataset.cellId")
    pairs = page.evaluate(GUTTER_AND_LINE_CENTRES, cell_id)
    assert len(pairs) == 5
    offsets = [round(number - line, 1) for number, line in pairs]
    # A line number drawn at the top of its line box sits ~3 px above the code.
    assert all(abs(offset) <= 1.5 for offset in offsets), offsets
