"""In front of a class: what a lecturer and a student see, measured at the five
screens the deck is used on (the whole lecture, dist/, headless Chromium).

Screens: a 4:3 projector (1024×768), two laptops (1280×720, 1920×1080), a
phone held upright (390×844, touch) and a tablet held upright (820×1180,
touch).

* The Python chip, at every screen, with Python not downloaded: its text
  reads whole (nothing cut off) and no label spills past its button, closed
  and open; open on a touch screen, it covers no part of a cell wherever the
  slide is scrolled, and it has a close button in view; one click or tap on
  «Descargar (N MB)» starts the download, and nothing else.
* A student on a phone and on a tablet: one tap on the chip's «Descargar»
  brings Python (the chip reads whole while it loads), then an exercise end to
  end with touch and typing: edit the code, «Comprobar» wrong, a hint, right,
  the solution.
* A lecturer with a keyboard, at the three desktop screens: Tab never reaches
  a button that was not in view, nor the chip's own actions; Enter on any stop
  never runs a chapter nor moves the slides (except the arrows, whose job it
  is); «Ejecutar el capítulo» asks first, with the focus on «Cancelar», and
  once confirmed runs every cell of the chapter while the slide on screen
  stays; after Tab and Enter on ▶, Space moves on instead of running again;
  Shift+Enter runs the slide's cell with nothing focused; «Restaurar todo» is
  in the index (M); an output that has not been run since Python is ready
  says it was computed when the slides were made.
"""

from __future__ import annotations

import pytest

from deckpage import RUN_TIMEOUT_MS, DeckPage

PHONE = {"viewport": (390, 844), "is_mobile": True, "has_touch": True, "device_scale_factor": 2}
TABLET = {"viewport": (820, 1180), "is_mobile": True, "has_touch": True}
PROJECTOR = {"viewport": (1024, 768)}
LAPTOP = {"viewport": (1280, 720)}
WIDE = {"viewport": (1920, 1080)}
SCREENS = {"proyector-1024x768": PROJECTOR, "portatil-1280x720": LAPTOP, "portatil-1920x1080": WIDE,
           "telefono-390x844": PHONE, "tableta-820x1180": TABLET}
TOUCH = ("telefono-390x844", "tableta-820x1180")
DESKTOP = ("proyector-1024x768", "portatil-1280x720", "portatil-1920x1080")
MIN_TARGET_PX = 44

# The chip as drawn now: its box, whether it is open (its explanation in view),
# its text and each button in view, each with the box of its letters and
# whether something of it is cut off (more content than box).
CHIP = """
() => {
  const chip = document.querySelector('.python-status');
  const box = (rect) => ({left: rect.left, top: rect.top, right: rect.right, bottom: rect.bottom});
  const shown = (element) => element.checkVisibility({opacityProperty: true, visibilityProperty: true})
    && element.getClientRects().length > 0;
  const letters = (element) => {
    const range = document.createRange();
    range.selectNodeContents(element);
    const rects = [...range.getClientRects()].filter((rect) => rect.width > 0);
    if (!rects.length) return null;
    return {left: Math.min(...rects.map((r) => r.left)), top: Math.min(...rects.map((r) => r.top)),
            right: Math.max(...rects.map((r) => r.right)), bottom: Math.max(...rects.map((r) => r.bottom))};
  };
  const cut = (element) => element.scrollWidth > element.clientWidth + 1 || element.scrollHeight > element.clientHeight + 1;
  const text = chip.querySelector('.python-status-text');
  const detail = chip.querySelector('.python-status-detail');
  return {
    state: chip.dataset.state, shown: shown(chip), box: box(chip.getBoundingClientRect()),
    open: Boolean(detail && shown(detail) && detail.textContent.trim()),
    text: {content: text.textContent, box: box(text.getBoundingClientRect()), letters: letters(text), cut: cut(text)},
    buttons: [...chip.querySelectorAll('button')].filter(shown).map((button) => ({
      action: button.dataset.action || button.className, text: button.textContent.trim(),
      box: box(button.getBoundingClientRect()), letters: letters(button), cut: cut(button)})),
    window: {width: innerWidth, height: innerHeight},
  };
}
"""

# Each cell of the slide on screen: the part of it a person can see (its box
# clipped by every scrolling ancestor and by the window).
CELLS_IN_VIEW = """
() => {
  const slide = Reveal.getCurrentSlide();
  const seen = [];
  for (const cell of slide.querySelectorAll('.cell')) {
    let [left, top, right, bottom] = (({left, top, right, bottom}) => [left, top, right, bottom])(cell.getBoundingClientRect());
    for (let e = cell.parentElement; e && e !== document.documentElement; e = e.parentElement) {
      const style = getComputedStyle(e);
      if (!/(auto|scroll|hidden|clip)/.test(style.overflowY + style.overflowX)) continue;
      const clip = e.getBoundingClientRect();
      left = Math.max(left, clip.left); top = Math.max(top, clip.top);
      right = Math.min(right, clip.right); bottom = Math.min(bottom, clip.bottom);
    }
    left = Math.max(left, 0); top = Math.max(top, 0);
    right = Math.min(right, innerWidth); bottom = Math.min(bottom, innerHeight);
    if (right > left && bottom > top) seen.push({cell: cell.dataset.cellId, box: {left, top, right, bottom}});
  }
  return seen;
}
"""

# Scroll the slide on screen (a page of its own on a touch screen) so that `fraction`
# of its scrollable height is above the window: 0 top, 1 bottom.
SCROLL_SLIDE = """
(fraction) => {
  const slide = Reveal.getCurrentSlide();
  slide.scrollTop = Math.round((slide.scrollHeight - slide.clientHeight) * fraction);
  return slide.scrollHeight > slide.clientHeight;
}
"""


def overlaps(first: dict, second: dict, tolerance: float = 0.5) -> bool:
    across = min(first["right"], second["right"]) - max(first["left"], second["left"])
    down = min(first["bottom"], second["bottom"]) - max(first["top"], second["top"])
    return across > tolerance and down > tolerance


def inside(inner: dict | None, outer: dict, tolerance: float = 1.0) -> bool:
    return inner is None or (inner["left"] >= outer["left"] - tolerance and inner["right"] <= outer["right"] + tolerance
                             and inner["top"] >= outer["top"] - tolerance
                             and inner["bottom"] <= outer["bottom"] + tolerance)


def chip_problems(chip: dict) -> list[str]:
    """What a person would see wrong in the chip: text cut off, a label past its button, off the window."""
    found = []
    if chip["text"]["cut"] or not inside(chip["text"]["letters"], chip["box"]):
        found.append(f"texto cortado «{chip['text']['content']}»")
    for button in chip["buttons"]:
        if button["cut"] or not inside(button["letters"], button["box"]):
            found.append(f"«{button['text']}» se sale de su botón")
    window = {"left": 0, "top": 0, "right": chip["window"]["width"], "bottom": chip["window"]["height"]}
    if not inside(chip["box"], window):
        found.append("la etiqueta sale de la ventana")
    return found


def open_screen(new_deck, deck_url, device: dict, where: str = "", *, python: bool = True) -> DeckPage:
    options = {key: value for key, value in device.items() if key != "viewport"}
    deck = new_deck(viewport=device["viewport"], python=python, **options)
    deck.goto(deck_url + "index.html?autorun=0" + where)
    deck.wait_for_reveal()
    deck.wait_for_cells_on_screen()
    deck.page.evaluate("() => document.fonts.ready.then(() => true)")
    deck.without_transitions()
    return deck


def press_on(deck: DeckPage, selector: str, touch: bool) -> None:
    """What a person does to a thing on screen: a tap on a touch screen, a click with the mouse."""
    if touch:
        deck.page.tap(selector)
    else:
        deck.page.click(selector)


def open_chip(deck: DeckPage, touch: bool) -> dict:
    press_on(deck, ".python-status .python-status-text", touch)
    deck.settle()
    return deck.page.evaluate(CHIP)


# ------------------------------------------------------------------ the chip


def test_the_python_chip_reads_whole_and_never_covers_code_at_every_screen(new_deck, deck_url, artifacts_dir):
    problems, seen = {}, {}
    for name, device in SCREENS.items():
        touch = name in TOUCH
        deck = open_screen(new_deck, deck_url, device, "#/codo", python=False)
        page = deck.page
        found = []
        closed = page.evaluate(CHIP)
        assert closed["state"] == "off" and closed["shown"], (name, closed)
        found += [f"cerrada: {problem}" for problem in chip_problems(closed)]
        offer = [button for button in closed["buttons"] if button["action"] == "download-python"]
        if not offer:
            found.append("cerrada: sin «Descargar»")
        chip = open_chip(deck, touch)
        page.screenshot(path=str(artifacts_dir / f"chip-abierta-{name}.png"))
        if not chip["open"]:
            found.append("no se abre")
        found += [f"abierta: {problem}" for problem in chip_problems(chip)]
        if touch:
            close = [button for button in chip["buttons"] if button["action"] == "close-status"]
            if not close:
                found.append("abierta: sin botón para cerrarla")
            elif min(close[0]["box"]["right"] - close[0]["box"]["left"],
                     close[0]["box"]["bottom"] - close[0]["box"]["top"]) < MIN_TARGET_PX - 0.5:
                found.append("abierta: su botón para cerrarla mide menos de 44 px")
            # Wherever the page is scrolled, no part of a cell in view lies under it.
            for fraction in (0, 0.25, 0.5, 0.75, 1):
                page.evaluate(SCROLL_SLIDE, fraction)
                deck.settle()
                chip = page.evaluate(CHIP)
                covered = [cell["cell"] for cell in page.evaluate(CELLS_IN_VIEW) if overlaps(cell["box"], chip["box"])]
                if covered:
                    found.append(f"abierta, desplazada al {fraction:.0%}: tapa la celda {covered[0]}")
        seen[name] = [button["text"] for button in closed["buttons"]]
        if found:
            problems[name] = found
    print(f"\nla etiqueta de Python, cerrada, en cada pantalla: {seen}")
    assert problems == {}


@pytest.mark.parametrize("name", ["telefono-390x844", "portatil-1280x720"])
def test_one_press_on_descargar_downloads_python_and_does_nothing_else(new_deck, deck_url, name):
    touch = name in TOUCH
    deck = open_screen(new_deck, deck_url, SCREENS[name], "#/codo", python=False)
    page = deck.page
    downloads = []
    page.on("download", lambda download: downloads.append(download.suggested_filename))
    slide = deck.slide_index
    press_on(deck, ".python-status [data-action=download-python]", touch)
    page.wait_for_function("() => ['loading', 'ready'].includes(document.documentElement.dataset.python)")
    assert downloads == [] and deck.slide_index == slide


# ------------------------------------------------------------------ a student on a touch screen

# Where, on screen, the end of `text` is in a cell's code: a point just inside its last letter.
END_OF_TEXT = """
([selector, text]) => {
  for (const line of document.querySelectorAll(selector + ' .cm-line')) {
    const at = line.textContent.indexOf(text);
    if (at < 0) continue;
    const walker = document.createTreeWalker(line, NodeFilter.SHOW_TEXT);
    let offset = 0;
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const end = at + text.length;
      if (offset + node.length >= end) {
        const range = document.createRange();
        range.setStart(node, end - offset - 1);
        range.setEnd(node, end - offset);
        const rect = range.getClientRects()[0];
        return {x: rect.right - 1, y: rect.top + rect.height / 2};
      }
      offset += node.length;
    }
  }
  return null;
}
"""


def retype(deck: DeckPage, cell_selector: str, old: str, new: str) -> None:
    """Tap at the end of `old` in the cell's code, delete it letter by letter and type `new`."""
    locator = deck.page.locator(f"{cell_selector} .cm-line", has_text=old).first
    locator.scroll_into_view_if_needed()
    point = deck.page.evaluate(END_OF_TEXT, [cell_selector, old])
    deck.page.touchscreen.tap(point["x"], point["y"])
    for _ in old:
        deck.page.keyboard.press("Backspace")
    deck.page.keyboard.type(new)


def tap_and_wait_for_verdict(deck: DeckPage, exercise) -> dict:
    deck.page.evaluate("(selector) => delete document.querySelector(selector).dataset.verdict", exercise.selector)
    deck.page.tap(f"{exercise.selector} [data-action=check]")
    deck.page.wait_for_selector(f"{exercise.selector}[data-verdict]:not([aria-busy])", timeout=RUN_TIMEOUT_MS)
    return exercise.state()["verdict"]


@pytest.mark.parametrize("name", TOUCH)
def test_a_student_on_a_touch_screen_gets_python_in_one_tap_and_does_an_exercise(new_deck, deck_url, name,
                                                                                 artifacts_dir):
    deck = open_screen(new_deck, deck_url, SCREENS[name], "#/ejercicio-laplace")
    page = deck.page
    assert deck.python_state == "off"
    page.tap(".python-status [data-action=download-python]")
    # While it loads, the chip reads whole at every step.
    cut = []
    while deck.python_state != "ready":
        chip = page.evaluate(CHIP)
        cut += [f"{chip['text']['content']}: {problem}" for problem in chip_problems(chip)]
        assert deck.python_state in ("loading", "ready"), deck.python_state
        page.wait_for_timeout(100)
    assert cut == []
    deck.wait_for_exercises()
    exercise = deck.exercise("ejercicio-laplace")
    cell = exercise.cell
    # The starter's b is wrong; a student types another wrong one, checks, asks for a hint, fixes it.
    retype(deck, cell.selector, "1.0", "epsilon / sensibilidad")
    assert "b = epsilon / sensibilidad" in cell.source
    assert tap_and_wait_for_verdict(deck, exercise)["passed"] is False
    page.tap(f"{exercise.selector} [data-action=hint]")
    assert exercise.state()["hints"][0] is True
    retype(deck, cell.selector, "epsilon / sensibilidad", "sensibilidad / epsilon")
    assert tap_and_wait_for_verdict(deck, exercise)["passed"] is True
    page.tap(f"{exercise.selector} [data-action=solution]")
    assert exercise.state()["solution"] is True
    page.screenshot(path=str(artifacts_dir / f"ejercicio-{name}.png"))
    # The code wraps on a narrow screen: every character of it in view, nothing to scroll sideways.
    assert page.evaluate("""(selector) => { const s = document.querySelector(selector + ' .cm-scroller');
        return s.scrollWidth - s.clientWidth; }""", cell.selector) <= 1


# ------------------------------------------------------------------ a lecturer with a keyboard

# The element with the focus: what it is, whether it shows, and where.
FOCUSED = """
async () => {
  const e = document.activeElement;
  if (!e || e === document.body) return null;
  // What focus fades in (a cell's copy button, 0.15 s) is judged as a keyboard user sees it, faded in.
  await Promise.all(e.getAnimations().map((animation) => animation.finished.catch(() => null)));
  const rect = e.getBoundingClientRect();
  const slide = e.closest('.reveal .slides > section');
  return {
    what: e.dataset.action || (typeof e.className === 'string' && e.className.split(' ')[0]) || e.tagName.toLowerCase(),
    inChip: Boolean(e.closest('.python-status')), inSlide: Boolean(slide),
    shown: e.checkVisibility({opacityProperty: true, visibilityProperty: true}) && rect.width > 0 && rect.height > 0
      && rect.right > 0 && rect.bottom > 0 && rect.left < innerWidth && rect.top < innerHeight,
  };
}
"""

# Counts every finished run from now on, and every slide change.
WATCH = """
() => {
  window.__watched = {runs: [], moves: []};
  if (window.__watching) return;
  window.__watching = true;
  new MutationObserver((changes) => {
    for (const change of changes) {
      if (Number(change.target.dataset.runs || 0) > Number(change.oldValue || 0)) window.__watched.runs.push(change.target.dataset.cellId);
    }
  }).observe(document.querySelector('.reveal .slides'),
             {subtree: true, attributes: true, attributeOldValue: true, attributeFilter: ['data-runs']});
  Reveal.on('slidechanged', (event) => window.__watched.moves.push(event.indexh));
}
"""
# Whatever an Enter opened and Esc left open (a dialog, the overview), closed; the focus let go.
PUT_AWAY = """() => {
  document.querySelectorAll('dialog[open]').forEach((dialog) => dialog.close());
  if (Reveal.isOverview()) Reveal.toggleOverview(false);
  if (document.activeElement) document.activeElement.blur();
}"""
# The chip's own actions: reached only once the chip is opened on purpose.
CHIP_ACTIONS = ("run-slide", "run-chapter", "download-notebook", "restart-python", "restore-all", "retry",
                "decline-python", "dismiss")


@pytest.fixture(scope="module")
def lecturer(open_page, deck_url):
    """The lecture with Python ready on a laptop, shared by the tests below; each moves it to the
    screens it checks (the window resized, as when the laptop is plugged into a projector)."""
    context, page = open_page(deck_url + "index.html?autorun=0#/codo", viewport=WIDE["viewport"])
    deck = DeckPage(page)
    deck.wait_until_ready()
    deck.without_transitions()
    page.evaluate(WATCH)
    yield deck
    context.close()


def on_screen(deck: DeckPage, name: str) -> None:
    """The lecture on screen `name` (its window size), at the slide of the cell «codo»."""
    width, height = SCREENS[name]["viewport"]
    deck.page.set_viewport_size({"width": width, "height": height})
    deck.blur()
    deck.cell("codo").show()


def watched(deck: DeckPage) -> dict:
    """Runs finished and slides shown since the last call: {runs: [cell ids], moves: [indices]}."""
    return deck.page.evaluate("() => { const seen = window.__watched; window.__watched = {runs: [], moves: []};"
                              " return seen; }")


def tab_stops(deck: DeckPage, presses: int = 30) -> list[dict]:
    """Tab from the top of the page `presses` times: each stop as FOCUSED sees it, marked data-tab-stop=N."""
    deck.blur()
    stops = []
    for number in range(presses):
        deck.press("Tab")
        stop = deck.page.evaluate(FOCUSED)
        if stop:
            # An element met again (Tab went round) keeps its first number.
            stop["number"] = deck.page.evaluate("""(n) => { const e = document.activeElement;
                if (!e.dataset.tabStop) e.dataset.tabStop = n; return Number(e.dataset.tabStop); }""", number)
        stops.append(stop)
    return stops


def test_tab_and_enter_never_run_a_chapter_nor_move_the_slides(lecturer):
    deck = lecturer
    page = deck.page
    problems = {}
    for name in DESKTOP:
        on_screen(deck, name)
        slide = deck.slide_index
        stops = [stop for stop in tab_stops(deck) if stop]
        found = [f"Tab llega a {stop['what']}, que no se veía" for stop in stops if not stop["shown"]]
        found += [f"Tab llega a {stop['what']} de la etiqueta de Python, cerrada" for stop in stops
                  if stop["inChip"] and stop["what"] in CHIP_ACTIONS]
        # Enter on each stop Tab reaches (the arrows excepted: moving is their job).
        watched(deck)
        for stop in {stop["number"]: stop for stop in stops}.values():
            if stop["what"].startswith("navigate-"):
                continue
            # The stop again (reveal writes its slide number anew on each slide: Tab to it instead).
            if not page.evaluate("""(n) => { const e = document.querySelector(`[data-tab-stop='${n}']`);
                    if (e) e.focus(); return Boolean(e); }""", stop["number"]):
                deck.blur()
                for _ in range(stop["number"] + 1):
                    deck.press("Tab")
            deck.press("Enter")
            page.wait_for_timeout(100)
            deck.press("Escape")
            page.evaluate(PUT_AWAY)
            deck.go_to_slide(slide)
        page.wait_for_timeout(300)
        seen = watched(deck)
        # At most the slide's own cell ran (Enter on ▶); the slides never moved by themselves.
        found += [f"Intro ejecutó {cell}" for cell in sorted(set(seen["runs"]) - {"codo"})]
        found += [f"Intro movió a la diapositiva {move + 1}" for move in seen["moves"] if move != slide]
        page.evaluate("() => document.querySelectorAll('[data-tab-stop]').forEach((e) => delete e.dataset.tabStop)")
        if found:
            problems[name] = found
    assert problems == {}


def chapter_of(deck: DeckPage) -> list[str]:
    """The cells of the current slide's file (a chapter has one or more files)."""
    return deck.page.evaluate("""() => { const file = (s) => (s.dataset.source || '').split(':')[0];
        const here = file(Reveal.getCurrentSlide());
        return [...document.querySelectorAll('.reveal .slides section')].filter((s) => file(s) === here)
          .flatMap((s) => [...s.querySelectorAll('.cell[data-cell-id]')].map((c) => c.dataset.cellId)); }""")


def test_running_a_chapter_asks_first_and_never_moves_the_slides(lecturer):
    deck = lecturer
    page = deck.page
    for name in DESKTOP:
        on_screen(deck, name)
        watched(deck)
        deck.click_status_button("run-chapter")
        # It asks, with the focus on «Cancelar»: an Enter by accident cancels.
        page.wait_for_selector(".python-status [data-action=confirm-run-chapter]", state="visible")
        assert page.evaluate(FOCUSED)["what"] == "cancel-run-chapter", name
        deck.press("Enter")
        page.wait_for_timeout(300)
        assert page.is_hidden(".python-status [data-action=confirm-run-chapter]"), name
        assert watched(deck) == {"runs": [], "moves": []}, name
    # Confirmed, every cell of the chapter runs, and the slide on screen stays.
    slide = deck.slide_index
    chapter = chapter_of(deck)
    assert len(chapter) >= 3
    deck.run_chapter()
    page.wait_for_function("(n) => new Set(window.__watched.runs).size >= n", arg=len(chapter),
                           timeout=len(chapter) * RUN_TIMEOUT_MS)
    seen = watched(deck)
    assert set(chapter) <= set(seen["runs"])
    assert seen["moves"] == [] and deck.slide_index == slide


def test_after_tab_and_enter_on_run_space_moves_on(lecturer):
    deck = lecturer
    cell = deck.cell("codo")
    for name in DESKTOP:
        on_screen(deck, name)
        slide = deck.slide_index
        deck.page.focus(f"{cell.selector} [data-action=run]")
        before = cell.runs
        deck.press("Enter")
        assert cell.wait_for_run(before) == "done", name
        deck.press("Space")
        deck.wait_for_slide(slide + 1)
        deck.page.wait_for_timeout(200)
        assert cell.runs == before + 1, name


def test_shift_enter_runs_the_slides_cell_with_nothing_focused(lecturer):
    deck = lecturer
    cell = deck.cell("codo")
    for name in DESKTOP:
        on_screen(deck, name)
        slide = deck.slide_index
        before = cell.runs
        deck.press("Shift+Enter")
        assert cell.wait_for_run(before) == "done", name
        assert deck.slide_index == slide, name


def test_an_output_not_run_since_python_is_ready_says_where_it_comes_from(lecturer):
    cell = lecturer.cell("tres-contabilidades")
    cell.show()
    assert lecturer.python_state == "ready" and cell.origin == "prerendered"
    assert cell.origin_label() == "calculado al crear las diapositivas"


def test_restaurar_todo_is_in_the_index(lecturer):
    deck = lecturer
    on_screen(deck, "portatil-1280x720")
    cell = deck.cell("codo")
    cell.set_source(cell.original + "\n# una línea más\n")
    deck.open_menu()
    restore = deck.page.locator("dialog.deck-menu [data-action=restore-all]")
    assert restore.is_visible() and "Restaurar todo" in restore.inner_text()
    restore.click()
    assert not cell.edited
    assert deck.toast_text() and "Deshacer" in deck.toast_text()
