"""The classroom's exercises and take-home tools in the browser, against the built dist/.

One page of the lecture with Python booted once serves the module: every
exercise's «Comprobar» (its starter fails, its solution passes), hints one at
a time, the solution on request, the challenge checked and exported as the
lab's JSON with `student_extension`; and what a student takes home: copy
buttons on code and output, a cell as `.py`, «Ejecutar la diapositiva» and
«Ejecutar el capítulo», the chapter's notebook with their edits; and, last,
that edits, their outputs and the challenge's answer survive a reload. Every
test drives the page through deckpage.DeckPage and its views, and leaves the
shared page as it found it (no edit kept).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from deckbuild.slides import read_deck
from deckpage import DeckPage
from shown import show_to_person
from test_deck import CHECK_OVERFLOW

SLIDES = Path(__file__).resolve().parents[2] / "deck" / "slides"

# The tour's overflow check, for a slide whose exercise panel shows more than fits: what is
# inside the panel's answer area scrolls there (the area itself must fit in the slide).
assert "aside.notes, .katex-mathml" in CHECK_OVERFLOW
CHECK_OVERFLOW_WITH_PANEL = CHECK_OVERFLOW.replace("aside.notes, .katex-mathml",
                                                   "aside.notes, .katex-mathml, .ejercicio-respuesta > *")

CHALLENGE = {
    "assumption": "Sumar ruido de Laplace a los dos conteos esconde a Karen.",
    "measurement": "La resta con ruido tiene desviación estándar 4,02 con la semilla 0.",
    "conclusion": "La señal de una persona queda bajo unas cuatro unidades de ruido.",
    "limitation": "Una sola semilla; quien promedia muchas consultas recupera la señal.",
}
EMPTY_CHALLENGE = {key: "" for key in CHALLENGE}

# Every finished run, in order: the cell ids whose data-runs went up.
RECORD_RUNS = """
() => {
  window.__runs = [];
  if (window.__runsObserved) return;
  window.__runsObserved = true;
  new MutationObserver((changes) => {
    for (const change of changes) {
      if (Number(change.target.dataset.runs || 0) > Number(change.oldValue || 0)) {
        window.__runs.push(change.target.dataset.cellId);
      }
    }
  }).observe(document.querySelector('.reveal .slides'),
             {subtree: true, attributes: true, attributeOldValue: true, attributeFilter: ['data-runs']});
}
"""


@pytest.fixture(scope="module")
def lecture(open_page, deck_url):
    """dist/ with Python ready, the exercises' buttons and clipboard access: shared by the module."""
    context, page = open_page(deck_url + "?autorun=0")
    context.grant_permissions(["clipboard-read", "clipboard-write"])
    deck = DeckPage(page)
    started = time.perf_counter()
    deck.wait_until_ready()
    deck.wait_for_exercises()
    deck.boot_seconds = time.perf_counter() - started
    deck.without_transitions()
    yield deck
    context.close()


@pytest.fixture(scope="module")
def index(dist_dir):
    return json.loads((dist_dir / "notebooks" / "index.json").read_text(encoding="utf-8"))


def report(request, title: str, lines: list[str]) -> None:
    """Timings a person reads, under their title."""
    show_to_person(request, [title, *lines])


# ------------------------------------------------------------- exercises


def test_every_exercise_of_the_slides_gets_its_buttons(lecture):
    deck = read_deck(SLIDES)
    expected = [exercise.id for exercise in deck.exercises]
    assert len(expected) >= 7   # one per chapter (1 to 6) and the challenge
    page = lecture.page
    assert sorted(page.evaluate("() => Reveal.getPlugin('dpdeck-exercises').ids")) == sorted(expected)
    for exercise in deck.exercises:
        view = lecture.exercise(exercise.id)
        assert view.state()["ready"]
        actions = ["check", "hint", "solution"] + (["export"] if exercise.is_challenge
                                                   else ["notebook", "use-solution"])
        for action in actions:
            assert view.locator(f"[data-action={action}]").count() == 1, (exercise.id, action)
        assert view.state()["hintButton"]["text"] == f"Pista 1 de {len(exercise.hints)}"


def test_check_answers_in_spanish_what_is_wrong_with_the_starter(lecture):
    exercise = lecture.exercise("ejercicio-laplace")
    exercise.show()
    state = exercise.state()
    assert state["verdict"] is None and state["help"]
    verdict = exercise.check()
    assert verdict["passed"] is False
    assert verdict["summary"].startswith("✗ Todavía no")
    wrong = [finding["text"] for finding in verdict["findings"] if not finding["ok"]]
    # b = 1 matches none of the typical mistakes: the check says the scale it measured and the one expected.
    assert any("la escala medida es" in text and "pero debería ser 2." in text for text in wrong), wrong
    assert any(finding["ok"] for finding in verdict["findings"])
    # The check ran the cell: its output is the live one.
    assert exercise.cell.origin == "live" and "publicado:" in exercise.cell.output_text()
    assert not exercise.state()["help"]


def test_hints_come_one_at_a_time(lecture):
    exercise = lecture.exercise("ejercicio-laplace")
    exercise.show()
    assert exercise.state()["hints"] == [False, False, False]
    assert exercise.state()["hintButton"] == {"text": "Pista 1 de 3", "disabled": False}
    exercise.click("hint")
    assert exercise.state()["hints"] == [True, False, False]
    assert exercise.state()["hintButton"]["text"] == "Pista 2 de 3"
    exercise.click("hint")
    exercise.click("hint")
    state = exercise.state()
    assert state["hints"] == [True, True, True]
    assert state["hintButton"] == {"text": "No hay más pistas", "disabled": True}
    assert not state["solution"]


def test_the_solution_shows_on_request_and_passes_the_check(lecture):
    exercise = lecture.exercise("ejercicio-laplace")
    exercise.show()
    assert not exercise.state()["solution"]
    exercise.click("solution")
    state = exercise.state()
    assert state["solution"] and "b = sensibilidad / epsilon" in state["solutionCode"]
    exercise.click("use-solution")
    cell = exercise.cell
    assert cell.source == state["solutionCode"] and cell.edited
    verdict = exercise.check()
    assert verdict["passed"] is True and verdict["summary"].startswith("✓ ¡Correcto!")
    assert all(finding["ok"] for finding in verdict["findings"])
    exercise.click("solution")
    assert not exercise.state()["solution"]
    # The solution is one undoable edit, like any other.
    cell.reset_in_page()
    assert not cell.edited


def test_a_cell_that_raises_says_so_instead_of_a_verdict(lecture):
    exercise = lecture.exercise("ejercicio-laplace")
    exercise.show()
    exercise.cell.set_source("def mecanismo_laplace(\n")
    verdict = exercise.check()
    assert verdict["passed"] is False and verdict["findings"] == []
    assert "terminó con un error" in verdict["summary"]
    assert exercise.cell.status == "error"
    exercise.cell.reset_in_page()


def test_keys_on_the_panel_never_move_slides_and_a_click_lets_go_of_the_focus(lecture):
    exercise = lecture.exercise("ejercicio-laplace")
    exercise.show()
    start = lecture.slide_index
    shown = exercise.state()["solution"]
    exercise.locator("[data-action=solution]").focus()
    lecture.press("Space")
    assert lecture.slide_index == start
    assert exercise.state()["solution"] is not shown
    lecture.press("Enter")
    assert exercise.state()["solution"] is shown
    # With the mouse, the button does not keep the focus: the slide keys are reveal's again.
    exercise.click("solution")
    assert lecture.page.evaluate("() => document.activeElement.closest('.ejercicio-panel')") is None
    lecture.blur()


def test_every_exercise_fails_with_its_starter_passes_with_its_solution_and_fits(lecture, request):
    ids = lecture.page.evaluate("() => [...document.querySelectorAll('.ejercicio:not(.reto)')]"
                                ".map((e) => e.dataset.exercise)")
    assert len(ids) >= 6
    outcome, seconds = {}, {}
    for exercise_id in ids:
        exercise = lecture.exercise(exercise_id)
        exercise.show()
        before = exercise.check()["passed"]
        if not exercise.state()["solution"]:
            exercise.click("solution")
        exercise.click("use-solution")
        started = time.perf_counter()
        after = exercise.check()["passed"]
        seconds[exercise_id] = time.perf_counter() - started
        while not exercise.state()["hintButton"]["disabled"]:
            exercise.click("hint")
        lecture.settle()
        # Everything shown at once: what does not fit scrolls inside the panel, never the slide.
        overflow = lecture.page.evaluate(CHECK_OVERFLOW_WITH_PANEL, exercise.slide_index)["problems"]
        exercise.cell.reset_in_page()
        outcome[exercise_id] = (before, after, overflow)
    report(request, "«Comprobar» con la solución, en Pyodide (clic → veredicto):",
           [f"  {value:5.2f} s  {exercise_id}" for exercise_id, value in seconds.items()])
    assert outcome == {exercise_id: (False, True, []) for exercise_id in ids}


# ------------------------------------------------------------- the challenge


def lab_with_extension(tmp_path, extension: dict, seed: int) -> bytes:
    path = tmp_path / "extension.json"
    path.write_text(json.dumps(extension, ensure_ascii=False), encoding="utf-8")
    command = [sys.executable, "-m", "dpdeck.lab", "--seed", str(seed), "--extension", str(path)]
    return subprocess.run(command, capture_output=True, check=True).stdout


def test_the_challenge_checks_and_exports_what_the_command_line_prints(lecture, tmp_path, request):
    challenge = lecture.exercise("reto-laboratorio")
    challenge.show()
    challenge.fill({**CHALLENGE, "measurement": "Medí la resta y el ruido la tapa."}, seed=0)
    started = time.perf_counter()
    verdict = challenge.check()
    first = time.perf_counter() - started
    assert verdict["passed"] is False
    assert any("citar un número" in finding["text"] for finding in verdict["findings"] if not finding["ok"])
    challenge.fill(CHALLENGE)
    started = time.perf_counter()
    assert challenge.check()["passed"] is True
    again = time.perf_counter() - started
    name, data = challenge.export()
    assert name == "laboratorio-semilla-0.json"
    assert data == lab_with_extension(tmp_path, CHALLENGE, 0)
    assert json.loads(data)["student_extension"] == CHALLENGE
    assert "Descargado laboratorio-semilla-0.json" in " ".join(challenge.state()["verdict"]["notes"])
    report(request, "«Comprobar» del reto, en Pyodide:",
           [f"  {first:5.2f} s  la primera vez (el laboratorio entero con la semilla 0)",
            f"  {again:5.2f} s  otra vez con la misma semilla"])
    challenge.fill(EMPTY_CHALLENGE)


def test_an_empty_field_exports_nothing_and_says_why(lecture):
    challenge = lecture.exercise("reto-laboratorio")
    challenge.show()
    challenge.fill({**CHALLENGE, "limitation": ""})
    downloads = []

    def record(download):
        downloads.append(download)

    lecture.page.on("download", record)
    try:
        verdict = challenge.click_and_wait("export")
    finally:
        lecture.page.remove_listener("download", record)
    assert downloads == []
    assert "Limitación: falta" in " ".join(finding["text"] for finding in verdict["findings"])
    assert "completa las cuatro partes" in " ".join(verdict["notes"])
    challenge.fill(EMPTY_CHALLENGE)
    assert challenge.saved_answer is None, "an empty answer is not kept"


# ------------------------------------------------------------- take home


def test_copy_puts_the_code_and_the_output_on_the_clipboard(lecture):
    cell = lecture.cell("laplace-hospital")
    cell.show()
    cell.copy_code()
    assert lecture.clipboard() == cell.source
    assert cell.run() == "done"
    printed = "".join(text for kind, text in cell.read_output()["blocks"] if kind == "out-stdout")
    assert printed.count("\n") >= 2
    cell.copy_output()
    assert lecture.clipboard() == printed
    assert cell.locator("[data-action=copy-output]").inner_text() == "Copiado ✓"


def test_a_cell_downloads_as_a_py_file_with_its_code_now(lecture):
    cell = lecture.cell("tamano-e-epsilon")
    cell.show()
    edited = cell.original.rstrip("\n") + '\nprint("mi línea")'
    cell.set_source(edited)
    assert cell.download_py() == ("tamano-e-epsilon.py", edited)
    cell.reset_in_page()


def test_run_the_slide_runs_the_cells_on_it(lecture):
    cell = lecture.cell("densidades-laplace")
    cell.show()
    lecture.page.evaluate(RECORD_RUNS)
    before = cell.runs
    lecture.run_slide()
    cell.wait_for_run(before)
    assert lecture.page.evaluate("() => window.__runs") == ["densidades-laplace"]
    assert cell.read_output()["figures"] == 1 and cell.origin == "live"
    # A slide without cells (the cover) has nothing to run: its button is hidden.
    lecture.go_to_slide(0)
    assert lecture.page.locator(".reveal .slides section.present .cell").count() == 0
    assert lecture.page.locator(".python-status [data-action=run-slide]").is_hidden()


def test_run_the_chapter_runs_every_cell_of_its_files_in_order(lecture, index, request):
    chapter = next(chapter for chapter in index["chapters"] if "01-privacidad.md" in chapter["files"])
    assert chapter["files"] == ["00-portada.md", "01-privacidad.md"] and len(chapter["cells"]) >= 5
    lecture.cell("laplace-hospital").show()
    lecture.page.evaluate(RECORD_RUNS)
    started = time.perf_counter()
    lecture.run_chapter()
    last = lecture.cell(chapter["cells"][-1])
    lecture.page.wait_for_function("(count) => window.__runs.length >= count", arg=len(chapter["cells"]),
                                   timeout=120_000)
    seconds = time.perf_counter() - started
    assert lecture.page.evaluate("() => window.__runs") == chapter["cells"]
    assert {lecture.cell(cell_id).status for cell_id in chapter["cells"]} == {"done"}
    assert last.origin == "live"
    report(request, "«Ejecutar el capítulo» 1 en Pyodide:",
           [f"  {seconds:5.2f} s  {len(chapter['cells'])} celdas"])


def test_the_chapters_notebook_has_the_students_edits_and_outputs(lecture, index):
    cell = lecture.cell("laplace-hospital")
    cell.show()
    cell.set_source('print("mi versión")')
    assert cell.run() == "done"
    name, notebook = lecture.download_notebook()
    assert name == "01-privacidad.ipynb"
    # Said on the button itself: a message over the status chip would hide its other buttons.
    button = lecture.page.locator(".python-status [data-action=download-notebook]")
    assert button.inner_text() == "Descargado ✓" and lecture.toast_text() is None
    nbformat.validate(nbformat.from_dict(notebook))
    cells = {cell["id"]: {**cell, "source": "".join(cell["source"])} for cell in notebook["cells"]}
    assert cells["laplace-hospital"]["source"] == 'print("mi versión")'
    assert cells["laplace-hospital"]["outputs"] == [{"output_type": "stream", "name": "stdout",
                                                     "text": "mi versión\n"}]
    assert cells["tamano-e-epsilon"]["outputs"] == [], "a cell that is not edited keeps the shipped notebook's"
    chapter = next(chapter for chapter in index["chapters"] if chapter["name"] == "01-privacidad")
    assert [cell_id for cell_id in cells if cell_id in chapter["cells"]] == chapter["cells"]
    assert notebook["metadata"]["dpdeck"]["edited"] == 1
    # Where to get dpdeck: this deck's wheel, by its full address.
    install = cells["instalar"]
    assert f"`pip install {lecture.page.url.split('?')[0]}{install['metadata']['dpdeck']['install']}`" \
        in install["source"]
    cell.reset_in_page()


def test_the_closing_chapters_notebook_has_the_challenges_answer(lecture):
    challenge = lecture.exercise("reto-laboratorio")
    challenge.show()
    answer = {"assumption": 'Con "comillas" y \\ barra', "measurement": "4,02",
              "conclusion": "sí", "limitation": "línea\nnueva"}
    challenge.fill(answer, seed=3)
    name, notebook = lecture.download_notebook()
    assert name == "07-cierre.ipynb"
    nbformat.validate(nbformat.from_dict(notebook))
    source = next("".join(cell["source"]) for cell in notebook["cells"] if cell["id"] == "reto-laboratorio")
    namespace = {}
    exec(source, namespace)   # the challenge's answer, as Python
    assert namespace["semilla"] == 3 and namespace["student_extension"] == answer
    challenge.fill(EMPTY_CHALLENGE, seed=0)


def test_an_exercise_downloads_its_chapters_notebook_too(lecture):
    exercise = lecture.exercise("ejercicio-fedavg")
    exercise.show()
    name, data = lecture.download(lambda: exercise.click("notebook"))
    notebook = json.loads(data)
    assert name == "06-federado.ipynb"
    assert notebook["metadata"]["dpdeck"]["chapter"] == "06-federado"
    assert "ejercicio-fedavg" in [cell["id"] for cell in notebook["cells"]]


FULL_STORAGE = """
() => {
  const setItem = Storage.prototype.setItem;
  window.__setItem = setItem;
  Storage.prototype.setItem = function (key, value) {
    if (String(key).startsWith('dpdeck:outputs:')) {
      throw new DOMException('lleno', 'QuotaExceededError');
    }
    return setItem.call(this, key, value);
  };
}
"""


def test_a_full_browser_keeps_the_edit_and_says_the_output_was_not_saved(lecture):
    cell = lecture.cell("tamano-e-epsilon")
    cell.show()
    lecture.page.evaluate(FULL_STORAGE)
    try:
        cell.set_source('print("sin sitio")')
        assert cell.run() == "done"
        assert cell.output_text().strip() == "sin sitio"
        assert cell.saved_edit == 'print("sin sitio")' and cell.saved_output is None
        lecture.page.wait_for_selector(".deck-toast:not([hidden])")
        assert "no tiene sitio para guardar las salidas" in lecture.toast_text()
    finally:
        lecture.page.evaluate("() => { Storage.prototype.setItem = window.__setItem; }")
        cell.reset_in_page()
    assert lecture.console_errors == []


# ------------------------------------------------------------- after a reload
# Last in the module: it reloads the shared page (Python then boots again, and no test needs it).


def test_edits_their_outputs_and_the_challenges_answer_survive_a_reload(lecture):
    deck = lecture
    cell = deck.cell("densidades-laplace")
    cell.show()
    edited = cell.original.replace("epsilons = [0.25, 0.5, 1, 2]", 'epsilons = [0.25, 1]\nprint("mía")')
    assert edited != cell.original
    cell.set_source(edited)
    assert cell.run() == "done"
    saved = cell.saved_output
    assert saved["source"] == edited and "figure" in [output["type"] for output in saved["outputs"]]
    challenge = deck.exercise("reto-laboratorio")
    challenge.show()
    challenge.fill(CHALLENGE, seed=7)
    # Leaving the page saves what is still waiting for its save.
    deck.page.reload()
    deck.wait_for_cells()
    deck.wait_for_exercises()
    deck.without_transitions()
    cell.show()
    cell.wait_for_figures_loaded()
    state = cell.output_state()
    assert cell.source == edited
    assert state["origin"] == "saved" and "crear las diapositivas" not in state["label"]
    assert state["label"].startswith("tu última ejecución (guardada)")
    assert not state["stale"] and state["blocks"][0]["text"].startswith("mía\nε = 0,25")
    assert cell.read_output()["loaded"] == 1
    challenge.show()
    assert challenge.fields() == {**CHALLENGE, "seed": "7"}
    assert json.loads(challenge.saved_answer) == {"seed": 7, "extension": CHALLENGE}
    # Edited again, the saved output belongs to other code: shown as stale.
    cell.set_source(edited + "\n")
    assert cell.output_state()["stale"]
    # Back to the original: the saved output is forgotten with the edit.
    cell.reset_in_page()
    assert cell.saved_output is None and cell.saved_edit is None
    deck.page.reload()
    deck.wait_for_cells()
    assert cell.origin == "prerendered"
