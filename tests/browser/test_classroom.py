"""The live classroom, end to end in Chromium.

* The speaker view (S) in step with the room: the preview of the current
  slide shows the lecturer's edit and the live output the deck shows, figure
  included; its ▶ runs the deck's cell, and the keys pressed in the speaker
  window (E run, D stop, R back to the original) drive the deck's Python —
  the previews never start one of their own.
* Predict, then run: the output waits behind the question; a choice, then a
  run, shows it with whether the choice was right; the choice and its answer
  survive a reload.
* The class's work back to the lecturer: «Exportar mi trabajo» saves one JSON
  with the edits, the exercises (with what «Comprobar» said), the challenge
  and the predictions; `python -m dpdeck.grade` grades it natively, next to a
  copy edited by hand and one of another deck, which each get their line.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import pytest

from deckpage import DeckPage
from deck_sources import deck as read_slides

FIGURE_CELL = "figura"        # tests/browser/fixture_slides/01-figura.md
SLOW_SOURCE = "import time\nprint('empieza')\nwhile True:\n    time.sleep(0.05)\n"

PREVIEW_CELL = """([id]) => {
  const cell = document.querySelector(`.cell[data-cell-id="${id}"]`);
  const output = cell.querySelector('.cell-output');
  return {
    python: document.documentElement.dataset.python,
    source: Reveal.getPlugin('dpdeck').cell(id).source,
    edited: cell.hasAttribute('data-edited'),
    status: cell.dataset.status,
    origin: output.dataset.origin,
    text: Array.from(output.querySelectorAll('pre')).map((pre) => pre.textContent).join(''),
    figures: Array.from(output.querySelectorAll('img.out-figure')).map((img) => ({
      blob: img.src.startsWith('blob:'), width: img.naturalWidth})),
    toolbar: !cell.querySelector('.cell-toolbar').hidden,
    pythonFiles: performance.getEntriesByType('resource').filter((entry) => /pyodide|worker\\.js/.test(entry.name)).length,
  };
}"""


def preview(speaker, *, current: bool = True):
    """The frame of the speaker view that previews the current slide (or the next one)."""
    marker = "postMessageEvents=true" if current else "controls=false"
    frames = [frame for frame in speaker.frames if "receiver" in frame.url and marker in frame.url]
    assert len(frames) == 1, [frame.url for frame in speaker.frames]
    return frames[0]


def preview_cell(frame, cell_id: str) -> dict:
    return frame.evaluate(PREVIEW_CELL, [cell_id])


@pytest.fixture(scope="module")
def lecture(open_page, cells_url):
    """The fixture deck with Python ready and no automatic rerun: the lecturer's window."""
    context, page = open_page(cells_url + "?autorun=0")
    deck = DeckPage(page)
    deck.wait_until_ready()
    deck.without_transitions()
    yield deck
    context.close()


def test_the_speaker_view_shows_the_decks_live_cells_and_drives_its_python(lecture, artifacts_dir):
    deck = lecture
    cell = deck.cell(FIGURE_CELL)
    cell.show()
    speaker = deck.open_speaker_view()
    errors = []
    speaker.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    speaker.wait_for_function(
        "(id) => { const frame = document.querySelector('#current-slide iframe');"
        " const doc = frame && frame.contentDocument;"
        " return doc && doc.querySelector(`.cell[data-cell-id='${id}'][data-enhanced]`); }",
        arg=FIGURE_CELL, timeout=60_000)
    current = preview(speaker)
    # The next slide's preview loads on its own: its deck must be running before it is asked.
    preview(speaker, current=False).wait_for_function(
        "(id) => window.Reveal && typeof Reveal.getPlugin === 'function' && Reveal.isReady()"
        " && document.querySelector(`.cell[data-cell-id='${id}']`)", arg=FIGURE_CELL, timeout=60_000)
    shown = preview_cell(current, FIGURE_CELL)
    # The previews never start Python: they show the deck's.
    assert shown["python"] == "off" and shown["pythonFiles"] == 0
    assert shown["toolbar"] and not preview_cell(preview(speaker, current=False), FIGURE_CELL)["toolbar"]

    # The lecturer's edit appears in the preview…
    edited = cell.original.replace("bins=20", "bins=7")
    cell.set_source(edited)
    current.wait_for_function("(id) => document.querySelector(`.cell[data-cell-id='${id}']`)"
                              ".hasAttribute('data-edited')", arg=FIGURE_CELL, timeout=15_000)
    assert preview_cell(current, FIGURE_CELL)["source"] == edited

    # …and the preview's ▶ runs the deck's cell: the same output, figure included, on both.
    before = cell.runs
    current.click(f".cell[data-cell-id={FIGURE_CELL}] [data-action=run]")
    assert cell.wait_for_run(before) == "done"
    current.wait_for_function("(id) => document.querySelector(`.cell[data-cell-id='${id}'] .cell-output`)"
                              ".dataset.origin === 'live'", arg=FIGURE_CELL, timeout=15_000)
    shown = preview_cell(current, FIGURE_CELL)
    assert shown["text"] == deck.page.evaluate(
        "(id) => Array.from(document.querySelectorAll(`.cell[data-cell-id='${id}'] .cell-output pre`))"
        ".map((pre) => pre.textContent).join('')", FIGURE_CELL)
    assert cell.read_output()["figures"] == 1
    assert len(shown["figures"]) == 1 and shown["figures"][0]["blob"] and shown["figures"][0]["width"] > 0
    speaker.screenshot(path=str(artifacts_dir / "vista-del-presentador-en-vivo.png"))

    # Keys pressed in the speaker window: E runs the slide, D stops it, R puts the code back.
    cell.set_source(SLOW_SOURCE)
    speaker.bring_to_front()
    speaker.keyboard.press("e")
    cell.wait_for_output_containing("empieza")
    current.wait_for_function("(id) => document.querySelector(`.cell[data-cell-id='${id}']`).dataset.status"
                              " === 'running'", arg=FIGURE_CELL, timeout=15_000)
    speaker.keyboard.press("d")
    cell.wait_for_status("stopped")
    current.wait_for_function("(id) => document.querySelector(`.cell[data-cell-id='${id}']`).dataset.status"
                              " === 'stopped'", arg=FIGURE_CELL, timeout=15_000)
    speaker.keyboard.press("r")
    deck.page.wait_for_function("(id) => !Reveal.getPlugin('dpdeck').cell(id).edited", arg=FIGURE_CELL,
                                timeout=15_000)
    current.wait_for_function("(id) => !document.querySelector(`.cell[data-cell-id='${id}']`)"
                              ".hasAttribute('data-edited')", arg=FIGURE_CELL, timeout=15_000)
    assert deck.python["stats"]["boots"] == 1
    assert errors == [] and deck.console_errors == []
    speaker.close()


# ------------------------------------------------------------------ a student's work

PREDICTED = "laplace-hospital"
CHOSEN = "composicion-paralela"
EXERCISE = "ejercicio-laplace"
WRONG_BUDGET = ("def publicar(conteos, *, epsilon_total, rng):\n"
                "    return conteos\n")
EXTENSION = {"assumption": "Cada persona del censo aparece una sola vez en los conteos.",
             "measurement": "La desviación medida de la resta fue 4,02 con ε = 0,5.",
             "conclusion": "Con 4,02 de ruido la señal de 1 que busca el atacante queda enterrada.",
             "limitation": "Si alguien aparece varias veces, su sensibilidad sería mayor."}


@pytest.fixture(scope="module")
def student(open_page, deck_url):
    """The whole lecture in a student's browser, with Python ready (no automatic rerun)."""
    context, page = open_page(deck_url + "index.html?autorun=0", accept_downloads=True)
    deck = DeckPage(page)
    deck.wait_until_ready()
    deck.without_transitions()
    yield deck
    context.close()


def test_a_prediction_hides_the_output_until_the_cell_runs_and_says_if_it_was_right(student):
    deck = student
    cell = deck.cell(PREDICTED)
    cell.show()
    asked = cell.prediction()
    assert asked == {"revealed": False, "chosen": None, "verdict": "", "outputVisible": False}
    prediction = next(c.prediction for c in read_slides().cells if c.id == PREDICTED)
    wrong = next(choice for choice in prediction.choices if choice != prediction.answer_text)
    cell.choose(wrong)
    assert cell.prediction()["chosen"] == wrong and not cell.prediction()["revealed"]
    assert cell.click_run() >= 0
    deck.page.wait_for_selector(f"{cell.selector}[data-revealed]", timeout=60_000)
    shown = cell.prediction()
    assert shown["outputVisible"] and shown["chosen"] == wrong
    assert shown["verdict"] == f"✗ Imprime {prediction.answer_text}; elegiste {wrong}"
    # Kept like an edit: a reload shows the same answer, without running anything.
    deck.page.reload()
    deck.wait_for_cells_on_screen()
    assert cell.prediction()["revealed"] and cell.prediction()["verdict"].startswith("✗ Imprime")


def test_exported_work_is_graded_natively_and_bad_copies_get_their_reason(student, tmp_path):
    deck = student
    deck.wait_until_ready()
    solution = next(exercise for exercise in read_slides().exercises if exercise.id == EXERCISE).solution_code
    laplace = deck.exercise(EXERCISE)
    laplace.show()
    laplace.cell.set_source(solution)
    assert laplace.check()["passed"] is True
    budget = deck.exercise("ejercicio-presupuesto")
    budget.show()
    budget.cell.set_source(WRONG_BUDGET)
    assert budget.check()["passed"] is False
    challenge = deck.exercise("reto-laboratorio")
    challenge.show()
    challenge.fill(EXTENSION, seed=0)
    chosen = deck.cell(CHOSEN)
    chosen.show()
    right = next(c.prediction for c in read_slides().cells if c.id == CHOSEN).answer_text
    chosen.choose(right)
    name, data = deck.export_work("Ana Pérez")
    assert name.startswith("trabajo-ana-perez-privacidad-diferencial-") and name.endswith(".json")
    work = json.loads(data)
    assert work["student"] == "Ana Pérez" and work["deck"]["id"] == "privacidad-diferencial"
    assert work["checkers"] == deck.page.get_attribute("html", "data-checkers")
    assert work["exercises"][EXERCISE]["source"] == solution
    assert work["exercises"][EXERCISE]["browserVerdict"]["passed"] is True
    assert work["exercises"]["ejercicio-presupuesto"]["browserVerdict"]["passed"] is False
    assert work["challenge"]["extension"] == EXTENSION
    assert work["predictions"][CHOSEN] == {"choice": right, "answer": right}

    folder = tmp_path / "clase"
    folder.mkdir()
    (folder / name).write_bytes(data)
    tampered = json.loads(data)
    tampered["exercises"]["ejercicio-presupuesto"]["source"] = "# retocado a mano\n" + WRONG_BUDGET
    (folder / "retocado.json").write_text(json.dumps(tampered), encoding="utf-8")
    (folder / "cortado.json").write_bytes(data[: len(data) // 3])
    result = subprocess.run([sys.executable, "-m", "dpdeck.grade", str(folder)], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stderr
    assert "1 corregidos, 2 con problemas" in result.stdout
    rows = list(csv.DictReader((folder / "clase.csv").open(encoding="utf-8")))
    assert len(rows) == 1
    row = rows[0]
    assert (row["estudiante"], row[EXERCISE], row["ejercicio-presupuesto"], row["reto-laboratorio"]) == (
        "Ana Pérez", "aprobado", "no aprobado", "aprobado")
    assert row["ejercicio-suma"] == "sin intentar"
    assert row[f"predicción {CHOSEN}"] == f"{right} ✓"
    summary = (folder / "resumen.md").read_text(encoding="utf-8")
    assert "`retocado.json`: se modificó después de exportarlo" in summary
    assert "`cortado.json`: está cortado" in summary
    assert "## ejercicio-presupuesto" in summary and "- 1 estudiante: " in summary
    assert deck.console_errors == []
