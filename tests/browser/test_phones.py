"""Phones and tablets (the whole lecture, dist/, headless Chromium with touch).

* On a phone held upright (390×844) each slide is a page of the phone's width:
  every text on every slide at 14 px or more, code at 14 px or more and
  wrapping instead of shrinking (every character in view, nothing to scroll
  sideways), nothing wider than the phone.
  Python is not downloaded until the student runs a cell; then the cell runs
  and its output reads at 14 px or more, within the phone's width. A sideways
  swipe changes slide; an up-and-down one scrolls the slide.
* On a 768×1024 tablet held upright every button is at least 44×44 px.
"""

from __future__ import annotations


PHONE = {"viewport": (390, 844), "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
TABLET = {"viewport": (768, 1024), "is_mobile": True, "has_touch": True}
MIN_TEXT_PX = 14
MIN_TARGET_PX = 44

# The smallest text on the slide on screen (reveal does not scale it here), the
# code's size and whether it scrolls sideways, and how much wider than the page
# anything makes it.
READ_SLIDE = """
(index) => {
  const slide = Reveal.getSlides()[index];
  const shown = (element) => element.checkVisibility({opacityProperty: true, visibilityProperty: true});
  let smallest = {px: Infinity, text: null};
  const walker = document.createTreeWalker(slide, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!node.textContent.trim() || parent.closest('aside.notes, .katex-mathml') || !shown(parent)) continue;
    // A formula's sub- and superscripts are smaller by design; the formula itself is measured.
    const measured = parent.closest('.katex') ? parent.closest('.katex') : parent;
    const px = parseFloat(getComputedStyle(measured).fontSize);
    if (px < smallest.px) smallest = {px, text: node.textContent.trim().slice(0, 30)};
  }
  const code = slide.querySelector('.cell .cm-content');
  const scroller = slide.querySelector('.cell .cm-scroller');
  return {smallest, wider: slide.scrollWidth - slide.clientWidth,
          code: code ? parseFloat(getComputedStyle(code).fontSize) : null,
          codeHidden: scroller ? scroller.scrollWidth - scroller.clientWidth : 0};
}
"""


def open_lecture(new_deck, deck_url, device, query=""):
    viewport = device["viewport"]
    options = {key: value for key, value in device.items() if key != "viewport"}
    deck = new_deck(deck_url + "index.html" + query, viewport=viewport, **options)
    deck.wait_for_cells()
    deck.page.evaluate("() => document.fonts.ready.then(() => true)")
    deck.without_transitions()
    return deck


def test_a_phone_reads_every_slide_and_downloads_python_only_to_run(new_deck, deck_url, artifacts_dir):
    deck = open_lecture(new_deck, deck_url, PHONE)
    page = deck.page
    assert page.get_attribute("html", "data-layout") == "reflow"
    total = page.evaluate("() => Reveal.getTotalSlides()")
    small, wide, codes = {}, {}, []
    for index in range(total):
        deck.go_to_slide(index, page.evaluate("i => Reveal.getSlides()[i].querySelectorAll('.fragment').length",
                                             index))
        seen = page.evaluate(READ_SLIDE, index)
        if seen["smallest"]["px"] < MIN_TEXT_PX:
            small[index + 1] = seen["smallest"]
        if seen["wider"] > 1:
            wide[index + 1] = seen["wider"]
        if seen["code"] is not None:
            codes.append(seen)
    print(f"\nteléfono 390×844: {total} diapositivas; código a {min(c['code'] for c in codes)} px, "
          f"{sum(1 for c in codes if c['codeHidden'] > 1)} de {len(codes)} celdas esconden código a un lado")
    assert small == {}
    assert wide == {}
    assert all(code["code"] >= MIN_TEXT_PX and code["codeHidden"] <= 1 for code in codes)
    # Nothing of Python came down.
    assert deck.python_state == "off"
    assert not [url for url in page.requests if "/pyodide/" in url or "/wheels/" in url]
    assert "Python sin descargar" in deck.status_text()

    # The student runs a cell: Python comes, the cell runs, its output reads on the phone.
    cell = deck.cell("codo")
    cell.show()
    before = cell.runs
    page.tap(f"{cell.selector} [data-action=run]")
    assert cell.wait_for_run(before, timeout=180_000) == "done"
    assert cell.origin == "live"
    output = page.evaluate("""(selector) => {
        const output = document.querySelector(selector + ' .cell-output');
        const figure = output.querySelector('img.out-figure').getBoundingClientRect();
        return {px: Math.min(...[...output.querySelectorAll('pre')].map((pre) => parseFloat(getComputedStyle(pre).fontSize))),
                right: Math.max(output.getBoundingClientRect().right, figure.right), width: window.innerWidth};
    }""", cell.selector)
    page.screenshot(path=str(artifacts_dir / "telefono-celda.png"))
    assert output["px"] >= MIN_TEXT_PX and output["right"] <= output["width"], output
    assert any("pyodide.asm.wasm" in url for url in page.requests)


SWIPE = """([dx, dy]) => {
  const slide = Reveal.getCurrentSlide();
  const box = slide.getBoundingClientRect();
  const x = box.left + box.width / 2, y = box.top + box.height / 2;
  const touch = (cx, cy) => new Touch({identifier: 1, target: slide, clientX: cx, clientY: cy});
  slide.dispatchEvent(new TouchEvent('touchstart', {bubbles: true, touches: [touch(x, y)], changedTouches: [touch(x, y)]}));
  slide.dispatchEvent(new TouchEvent('touchend', {bubbles: true, touches: [], changedTouches: [touch(x + dx, y + dy)]}));
}"""


def test_on_a_phone_a_sideways_swipe_changes_slide_and_a_long_slide_scrolls(new_deck, deck_url):
    deck = open_lecture(new_deck, deck_url, PHONE, "#/codo")
    page = deck.page
    start = deck.slide_index
    page.evaluate(SWIPE, [-150, 10])
    deck.wait_for_slide(start + 1)
    page.evaluate(SWIPE, [150, -5])
    deck.wait_for_slide(start)
    page.evaluate(SWIPE, [20, -200])  # mostly up and down: not a slide change
    assert deck.slide_index == start
    scrolled = page.evaluate("""() => { const slide = Reveal.getCurrentSlide();
        slide.scrollTop = 400; return [slide.scrollTop, slide.scrollHeight > slide.clientHeight]; }""")
    assert scrolled[0] > 0 and scrolled[1]


# Every button one can touch now (the slide on screen and the page's own), with its size.
TARGETS = """() => {
  const shown = (element) => element.checkVisibility({opacityProperty: true, visibilityProperty: true})
    && getComputedStyle(element).pointerEvents !== 'none';
  const buttons = [...Reveal.getCurrentSlide().querySelectorAll('button'),
                   ...document.querySelectorAll('.python-status button, .deck-menu-button, .reveal .controls button.enabled')];
  return buttons.filter(shown).map((button) => {
    const box = button.getBoundingClientRect();
    return {what: button.dataset.action || button.className || button.textContent, width: box.width, height: box.height};
  });
}"""


def test_on_an_upright_tablet_every_button_is_a_44_px_target(new_deck, deck_url, artifacts_dir):
    deck = open_lecture(new_deck, deck_url, TABLET)
    page = deck.page
    assert page.get_attribute("html", "data-layout") == "reflow"
    small, checked = {}, 0
    for index in range(page.evaluate("() => Reveal.getTotalSlides()")):
        deck.go_to_slide(index)
        for target in page.evaluate(TARGETS):
            checked += 1
            if target["width"] < MIN_TARGET_PX - 0.5 or target["height"] < MIN_TARGET_PX - 0.5:
                small.setdefault(index + 1, []).append(target)
    deck.go_to_slide(page.evaluate("() => Reveal.getIndices(document.getElementById('codo')).h"))
    page.screenshot(path=str(artifacts_dir / "tableta-768x1024.png"))
    print(f"\ntableta 768×1024: {checked} botones medidos")
    assert checked > 100
    assert small == {}


def test_turning_the_window_switches_between_pages_and_slides(new_deck, deck_url):
    deck = new_deck(deck_url + "index.html?autorun=0#/codo")
    deck.wait_for_cells_on_screen()
    page = deck.page
    slide_width = "() => Math.round(Reveal.getCurrentSlide().getBoundingClientRect().width)"
    assert page.get_attribute("html", "data-layout") == "slides"
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_function("() => document.documentElement.dataset.layout === 'reflow'")
    deck.settle()
    assert page.evaluate(slide_width) == 390
    page.set_viewport_size({"width": 1280, "height": 720})
    page.wait_for_function("() => document.documentElement.dataset.layout === 'slides'")
    deck.settle()
    assert page.evaluate(slide_width) == round(1280 * page.evaluate("() => Reveal.getScale()"))
