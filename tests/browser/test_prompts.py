"""A cell's «Prueba esto» (the whole lecture, dist/, headless Chromium).

* Every `::: prueba` of the slides is on its cell, folded: a label in the
  code's top corner that covers no character of the code, at 1280×720 and on
  a 1024×768 projector. Opened, it shows the slide source's text, within the
  slide, over the code, and nothing on the slide moves.
* A student opens it with the mouse or from the keyboard (Tab reaches it
  after the code, Enter and Space open and close it, Esc closes it), and none
  of these keys moves the slides; after a click, → moves them again.
* On a phone it is a line of its own under the cell's buttons, a 44 px
  target; opened, its text reads at 14 px or more in the page's flow.
* ?print-pdf prints every one open, in its cell, its slide's content still
  above the slide's bottom margin and nothing of the cell cut to make room.
"""

from __future__ import annotations

import re

import pytest

from deckbuild.paths import DEFAULT_SLIDES
from deckbuild.slides import PROMPT_LABEL, read_deck

PROJECTOR = (1024, 768)
WIDE = (1280, 720)
PHONE = {"viewport": (390, 844), "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
MIN_PHONE_TEXT_PX = 14
MIN_TARGET_PX = 44


@pytest.fixture(scope="module")
def prompts() -> dict[str, str]:
    """Each cell with a «Prueba esto»: its id → the prompt's words as a student reads them."""
    deck = read_deck(DEFAULT_SLIDES)
    return {cell.id: read_as_text(cell.prompt) for cell in deck.cells if cell.prompt is not None}


def read_as_text(markdown: str) -> str:
    """A prompt's Markdown as its words on screen: no backticks, tags or «$» around formulas."""
    text = re.sub(r"</?span[^>]*>|`", "", markdown)
    text = re.sub(r"\$([^$]*)\$", lambda match: re.sub(r"\s+", "", match.group(1)), text)
    return " ".join(text.split())


def words_of(shown: str) -> str:
    """What the page shows, formulas without their spaces (KaTeX's text leaves them out)."""
    return " ".join(shown.split())


# Every box on the slide, the cell's own parts and the slide's blocks: opening a prompt moves none.
LAYOUT = """
(selector) => {
  const cell = document.querySelector(selector);
  const slide = cell.closest('section');
  const parts = [...slide.children, ...cell.children].filter((element) => !element.matches('aside.notes, details'));
  return parts.map((element) => { const box = element.getBoundingClientRect();
    return [element.tagName, element.className, Math.round(box.left), Math.round(box.top),
            Math.round(box.width), Math.round(box.height)]; });
}
"""

# Characters of the cell's code under the prompt's label: [line text] for each line it covers.
CODE_UNDER_LABEL = """
(selector) => {
  const cell = document.querySelector(selector);
  const label = cell.querySelector(':scope > details.cell-prueba > summary').getBoundingClientRect();
  const covered = [];
  for (const line of cell.querySelectorAll('.cm-line')) {
    const range = document.createRange();
    range.selectNodeContents(line);
    for (const box of range.getClientRects()) {
      if (box.width && box.right > label.left && box.left < label.right && box.bottom > label.top
          && box.top < label.bottom) covered.push(line.textContent);
    }
  }
  return covered;
}
"""

SLIDE_BOX = """(selector) => { const box = document.querySelector(selector).closest('section').getBoundingClientRect();
  return {left: box.left, top: box.top, right: box.right, bottom: box.bottom}; }"""


def open_lecture(new_deck, deck_url, viewport):
    deck = new_deck(deck_url + "index.html?autorun=0", viewport=viewport, python=False)
    deck.wait_for_cells()
    deck.page.evaluate("() => document.fonts.ready.then(() => true)")
    deck.without_transitions()
    return deck


def inside(box: dict, outer: dict, slack: float = 0.5) -> bool:
    return (box["left"] >= outer["left"] - slack and box["right"] <= outer["right"] + slack
            and box["top"] >= outer["top"] - slack and box["bottom"] <= outer["bottom"] + slack)


@pytest.mark.parametrize("viewport", [WIDE, PROJECTOR], ids=["1280x720", "proyector-1024x768"])
def test_every_prompt_is_folded_on_its_cell_and_opens_over_the_code(new_deck, deck_url, prompts, viewport,
                                                                    artifacts_dir):
    deck = open_lecture(new_deck, deck_url, viewport)
    page = deck.page
    assert page.evaluate("() => Reveal.getPlugin('dpdeck-prompts').ids") == list(prompts)
    problems = {}
    for cell_id, expected in prompts.items():
        cell = deck.cell(cell_id)
        cell.show()
        folded = cell.prompt()
        slide = page.evaluate(SLIDE_BOX, cell.selector)
        found = []
        if folded["open"] or folded["shown"] or folded["label"] != PROMPT_LABEL:
            found.append(f"no está plegada con su rótulo: {folded}")
        if not inside(folded["labelBox"], slide):
            found.append("el rótulo sale de la diapositiva")
        covered = page.evaluate(CODE_UNDER_LABEL, cell.selector)
        if covered:
            found.append(f"el rótulo tapa código: {covered}")
        before = page.evaluate(LAYOUT, cell.selector)
        cell.click_prompt()
        shown = cell.prompt()
        if not (shown["open"] and shown["shown"]):
            found.append("no se abre")
        if words_of(shown["text"]) != expected:
            found.append(f"dice «{shown['text']}», no «{expected}»")
        if not inside(shown["textBox"], slide):
            found.append(f"el texto sale de la diapositiva: {shown['textBox']} fuera de {slide}")
        if page.evaluate(LAYOUT, cell.selector) != before:
            found.append("abrirla mueve la diapositiva")
        if cell_id == "ataque-laplace":
            page.screenshot(path=str(artifacts_dir / f"prueba-esto-{viewport[0]}x{viewport[1]}.png"))
        cell.click_prompt()
        if cell.prompt()["open"]:
            found.append("no se cierra")
        if found:
            problems[cell_id] = found
    print(f"\n{len(prompts)} «Prueba esto» a {viewport[0]}×{viewport[1]}: plegadas en la esquina del código, "
          "abiertas dentro de la diapositiva")
    assert len(prompts) >= 15
    assert problems == {}


def test_a_student_opens_a_prompt_from_the_keyboard_or_with_the_mouse(new_deck, deck_url, prompts):
    deck = open_lecture(new_deck, deck_url, WIDE)
    page = deck.page
    cell = deck.cell("ataque-laplace")
    cell.show()
    start = deck.slide_index

    # Tab reaches the label after the code.
    page.focus(f"{cell.selector} .cell-editor")
    deck.press("Tab")
    assert cell.prompt()["focused"]
    deck.press("Enter")
    opened = cell.prompt()
    assert opened["open"] and opened["shown"] and words_of(opened["text"]) == prompts["ataque-laplace"]
    assert "epsilon = 5" in opened["text"]
    deck.press(" ")
    assert not cell.prompt()["open"]
    deck.press(" ")
    assert cell.prompt()["open"]
    # Esc closes it and only it: no overview, the focus back on its label.
    deck.press("Escape")
    closed = cell.prompt()
    assert not closed["open"] and closed["focused"]
    assert not page.evaluate("() => Reveal.isOverview()")
    assert deck.slide_index == start

    # With the mouse: it opens, and the keys go back to the slides.
    cell.click_prompt()
    clicked = cell.prompt()
    assert clicked["open"] and not clicked["focused"]
    deck.press("ArrowRight")
    deck.wait_for_slide(start + 1)


def test_on_a_phone_a_prompt_is_a_line_of_its_own_under_the_buttons(new_deck, deck_url, prompts, artifacts_dir):
    deck = new_deck(deck_url + "index.html#/ataque-con-ruido", **PHONE)
    deck.wait_for_cells()
    deck.without_transitions()
    page = deck.page
    assert page.get_attribute("html", "data-layout") == "reflow"
    cell = deck.cell("ataque-laplace")
    folded = cell.prompt()
    assert folded["labelBox"]["width"] >= MIN_TARGET_PX and folded["labelBox"]["height"] >= MIN_TARGET_PX - 0.5
    toolbar = page.evaluate("(s) => document.querySelector(s + ' > .cell-toolbar').getBoundingClientRect().bottom",
                            cell.selector)
    assert folded["labelBox"]["top"] >= toolbar
    page.tap(cell.prompt_selector)
    shown = cell.prompt()
    assert shown["open"] and shown["shown"] and shown["inFlow"]
    assert words_of(shown["text"]) == prompts["ataque-laplace"]
    assert shown["textPx"] >= MIN_PHONE_TEXT_PX
    code_top = page.evaluate("(s) => document.querySelector(s + ' .cell-editor').getBoundingClientRect().top",
                             cell.selector)
    assert shown["textBox"]["bottom"] <= code_top and shown["textBox"]["right"] <= 390
    page.screenshot(path=str(artifacts_dir / "telefono-prueba-esto.png"))


# Each printed prompt: open, its text shown; its slide's content above the slide's bottom padding;
# nothing of its cell cut to make room (no part of it scrolls).
PRINTED = """
() => [...document.querySelectorAll('.cell > details.cell-prueba')].map((prompt) => {
  const cell = prompt.closest('.cell');
  const slide = prompt.closest('section');
  const limit = slide.getBoundingClientRect().bottom - parseFloat(getComputedStyle(slide).paddingBottom);
  const text = prompt.querySelector('.cell-prueba-texto');
  const box = prompt.getBoundingClientRect();
  const bottom = Math.max(...[...slide.children].filter((child) => !child.matches('aside.notes'))
    .map((child) => child.getBoundingClientRect().bottom));
  return {id: cell.dataset.cellId, open: prompt.open, shown: text.checkVisibility(), text: text.textContent.trim(),
          fits: box.height > 0 && bottom <= limit + 1,
          scrolls: [...cell.querySelectorAll('.cell-output, .cm-scroller')]
            .filter((part) => part.scrollHeight > part.clientHeight + 1).map((part) => part.className)};
})
"""


def test_print_pdf_prints_every_prompt_open_within_its_page(new_deck, deck_url, prompts):
    deck = new_deck(deck_url + "index.html?print-pdf", viewport=WIDE)
    deck.wait_for_cells()
    printed = deck.page.evaluate(PRINTED)
    assert [prompt["id"] for prompt in printed] == list(prompts)
    wrong = [prompt for prompt in printed
             if not (prompt["open"] and prompt["shown"] and prompt["text"] and prompt["fits"]) or prompt["scrolls"]]
    assert wrong == []
