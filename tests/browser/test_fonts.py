"""The deck's text is drawn with its own fonts (dist/fonts/), never with the machine's.

Headless Chromium against the built dist/ says which font actually drew each
element's text (DevTools `CSS.getPlatformFontsForNode`). Every one must be a web
font the deck ships: Arimo, DejaVu Sans Mono, the DejaVu Sans fallback for
symbols, KaTeX's. Then the layout that the other browser tests measure is the
layout of any machine, whatever fonts it has installed. Checked with every slide
laid out at once (?print-pdf) and on the page as a lecturer opens it (its chrome
included). KaTeX's MathML copy for screen readers is left out: it is clipped to
nothing and never drawn.
"""

from __future__ import annotations

from collections import defaultdict

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
    assert any(family.startswith("KaTeX_") for family in drawn)


def test_the_page_and_its_chrome_use_the_decks_own_fonts(deck_url, new_page):
    page = new_page(deck_url + "?autorun=0")
    page.wait_for_selector("html[data-cells=ready]", timeout=30_000)
    page.wait_for_selector(".python-status", state="attached")
    drawn, _ = read_fonts_drawing_text(page)
    check_only_deck_fonts(drawn)
