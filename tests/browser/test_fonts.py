"""The deck's text is drawn with its own fonts (dist/fonts/), never with the machine's.

Headless Chromium against the built dist/ says which font actually drew each
element's text (DevTools `CSS.getPlatformFontsForNode`). Every one must be a web
font the deck ships: Arimo, DejaVu Sans Mono, the DejaVu Sans fallback for
symbols, KaTeX's. Then the layout that the other browser tests measure is the
layout of any machine, whatever fonts it has installed. Checked with every slide
laid out at once (?print-pdf) and on the page as a lecturer opens it (its chrome
included). KaTeX's MathML copy for screen readers is left out: it is clipped to
nothing and never drawn.

And no character is drawn as an empty box: each one's glyph is in a font of
its element's list (a character no font has looks, drawn on a canvas in that
list, exactly like a code point no font has).
"""

from __future__ import annotations

from collections import defaultdict

from deckpage import CELLS_TIMEOUT_MS, NO_PYTHON

DECK_FONTS = {"Arimo", "DejaVu Sans", "DejaVu Sans Mono"}

# Marks every element with text of its own (outside KaTeX's MathML copy); returns how many.
MARK_TEXT_ELEMENTS = """() => {
  let count = 0;
  for (const element of document.body.querySelectorAll('*')) {
    if (element.closest('.katex-mathml')) continue;
    const ownText = [...element.childNodes].some(
      (node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim());
    if (ownText) {
      element.setAttribute('data-font-probe', '');
      count += 1;
    }
  }
  return count;
}"""


# Characters on screen (beyond ASCII) that no font of their element's list draws.
MISSING_GLYPHS = """() => {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = 64;
  const context = canvas.getContext('2d', {willReadFrequently: true});
  const draw = (font, text) => {
    context.clearRect(0, 0, 64, 64);
    context.font = font;
    context.fillText(text, 4, 48);
    return context.getImageData(0, 0, 64, 64).data.join(',');
  };
  const seen = new Map();
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest('.katex-mathml') || !parent.getClientRects().length) continue;
    const style = getComputedStyle(parent);
    for (const char of node.textContent) {
      if (char.codePointAt(0) < 0x80 || /\\s/.test(char)) continue;
      const font = `${style.fontStyle} ${style.fontWeight} 40px ${style.fontFamily}`;
      if (!seen.has(font + char)) seen.set(font + char, {char, font, element: parent.className || parent.tagName});
    }
  }
  const missing = [...seen.values()].filter(({char, font}) => draw(font, char) === draw(font, '\\u{10FFFD}'));
  return {checked: seen.size, missing: missing.map(({char, element}) => `${char} (${String(element).slice(0, 40)})`)};
}"""


def check_every_glyph_is_drawn(page) -> None:
    glyphs = page.evaluate(MISSING_GLYPHS)
    assert glyphs["checked"] > 0
    assert glyphs["missing"] == [], "caracteres que ninguna letra del mazo dibuja (se verían como una caja)"


def read_fonts_drawing_text(page) -> tuple[dict[str, list[str]], int]:
    """{font family: a few of the texts it drew}, and how many elements were asked about.

    A font that is not a web font of the page is reported as «<family> (del sistema)».
    """
    page.evaluate("() => document.fonts.ready.then(() => true)")
    failed = page.evaluate("() => [...document.fonts].filter((f) => f.status === 'error').map((f) => f.family)")
    # Chromium on Linux loads no web font at all when the system has none (fontconfig empty).
    assert failed == [], ("Chromium no pudo cargar la letra del mazo; si el sistema no tiene ninguna "
                          "letra instalada: apt-get install fonts-dejavu-core")
    marked = page.evaluate(MARK_TEXT_ELEMENTS)
    session = page.context.new_cdp_session(page)
    session.send("DOM.enable")
    session.send("CSS.enable")
    root = session.send("DOM.getDocument", {"depth": 0})["root"]["nodeId"]
    nodes = session.send("DOM.querySelectorAll", {"nodeId": root, "selector": "[data-font-probe]"})["nodeIds"]
    drawn: dict[str, list[str]] = defaultdict(list)
    for node in nodes:
        for font in session.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]:
            family = font["familyName"] + ("" if font["isCustomFont"] else " (del sistema)")
            if len(drawn[family]) < 3:
                drawn[family].append(session.send("DOM.getOuterHTML", {"nodeId": node})["outerHTML"][:80])
    session.detach()
    return dict(drawn), marked


def check_only_deck_fonts(drawn: dict[str, list[str]]) -> None:
    foreign = {family: texts for family, texts in drawn.items()
               if family not in DECK_FONTS and not family.startswith("KaTeX_")}
    assert foreign == {}, "texto dibujado con letra que el mazo no lleva"
    assert {"Arimo", "DejaVu Sans Mono"} <= set(drawn), sorted(drawn)


def test_every_slide_is_drawn_with_the_decks_own_fonts(deck_url, new_page):
    page = new_page(deck_url + "index.html?print-pdf")
    page.wait_for_function("() => window.Reveal && Reveal.isReady()")
    page.wait_for_function("() => document.querySelectorAll('.pdf-page').length > 0")
    drawn, marked = read_fonts_drawing_text(page)
    assert marked > 1000   # the whole lecture is laid out
    check_only_deck_fonts(drawn)
    check_every_glyph_is_drawn(page)
    assert any(family.startswith("KaTeX_") for family in drawn)


def test_the_page_and_its_chrome_use_the_decks_own_fonts(deck_url, new_page):
    # A device that chose not to download Python: no boot to wait for, and the chip shows its «Descargar»
    # button besides its text.
    page = new_page()
    page.add_init_script(NO_PYTHON)
    page.goto(deck_url + "?autorun=0")
    page.wait_for_selector("html[data-cells=ready]", timeout=CELLS_TIMEOUT_MS)
    page.wait_for_selector(".python-status:has-text('Descargar')")
    drawn, _ = read_fonts_drawing_text(page)
    check_only_deck_fonts(drawn)
    check_every_glyph_is_drawn(page)
