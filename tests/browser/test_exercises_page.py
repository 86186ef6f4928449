"""The exercises in the browser: «Comprobar», hints one at a time, the solution, and the challenge.

Against the exercises' fixture deck (tests/browser/fixture_exercises) with
Python booted once, and against the built deck for what every exercise of the
lecture must do (its starter fails its check, its solution passes, and its
slide never overflows, whatever the panel shows). Every test drives the page
through deckpage.DeckPage and its ExerciseView.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

from deckpage import DeckPage
from test_deck import CHECK_OVERFLOW

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


# ------------------------------------------------------------- a code exercise


def test_every_exercise_gets_its_buttons(exercise_deck):
    page = exercise_deck.page
    for exercise_id in ("ejercicio-laplace", "reto-laboratorio"):
        exercise = exercise_deck.exercise(exercise_id)
        assert exercise.state()["ready"]
        for action in ("check", "hint", "solution"):
            assert exercise.locator(f"[data-action={action}]").count() == 1
    assert exercise_deck.exercise("reto-laboratorio").locator("[data-action=export]").count() == 1
    assert page.evaluate("() => Reveal.getPlugin('dpdeck-exercises').ids.sort()") == [
        "ejercicio-laplace", "reto-laboratorio"]


def test_check_answers_in_spanish_what_is_wrong_with_the_starter(exercise_deck):
    exercise = exercise_deck.exercise("ejercicio-laplace")
    exercise.show()
    state = exercise.state()
    assert state["verdict"] is None and state["help"]
    verdict = exercise.check()
    assert verdict["passed"] is False
    assert verdict["summary"].startswith("✗ Todavía no")
    wrong = [finding["text"] for finding in verdict["findings"] if not finding["ok"]]
    assert any("debería ser b = Δf/ε = 2" in text for text in wrong), wrong
    assert any(finding["ok"] for finding in verdict["findings"])
    # The check ran the cell: its output is the live one.
    assert exercise.cell.origin == "live" and "lista" in exercise.cell.output_text()
    assert not exercise.state()["help"]


def test_hints_come_one_at_a_time(exercise_deck):
    exercise = exercise_deck.exercise("ejercicio-laplace")
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


def test_the_solution_shows_on_request_and_passes_the_check(exercise_deck):
    exercise = exercise_deck.exercise("ejercicio-laplace")
    exercise.show()
    assert not exercise.state()["solution"]
    exercise.click("solution")
    state = exercise.state()
    assert state["solution"] and "sensibilidad / epsilon" in state["solutionCode"]
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


def test_a_cell_that_raises_says_so_instead_of_a_verdict(exercise_deck):
    exercise = exercise_deck.exercise("ejercicio-laplace")
    exercise.show()
    exercise.cell.set_source("def mecanismo_laplace(\n")
    verdict = exercise.check()
    assert verdict["passed"] is False and verdict["findings"] == []
    assert "terminó con un error" in verdict["summary"]
    assert exercise.cell.status == "error"
    exercise.cell.reset_in_page()


def test_keys_on_the_panel_never_move_slides_and_a_click_lets_go_of_the_focus(exercise_deck):
    exercise = exercise_deck.exercise("ejercicio-laplace")
    exercise.show()
    start = exercise_deck.slide_index
    shown = exercise.state()["solution"]
    exercise.locator("[data-action=solution]").focus()
    exercise_deck.press("Space")
    assert exercise_deck.slide_index == start
    assert exercise.state()["solution"] is not shown
    exercise_deck.press("Enter")
    assert exercise.state()["solution"] is shown
    # With the mouse, the button does not keep the focus: the slide keys are reveal's again.
    exercise.click("solution")
    assert exercise_deck.page.evaluate("() => document.activeElement.closest('.ejercicio-panel')") is None
    exercise_deck.page.evaluate("() => document.activeElement.blur()")


def test_the_exercise_slide_never_overflows_whatever_the_panel_shows(exercise_deck):
    exercise = exercise_deck.exercise("ejercicio-laplace")
    exercise.show()
    for _ in range(3):
        if not exercise.state()["hintButton"]["disabled"]:
            exercise.click("hint")
    if not exercise.state()["solution"]:
        exercise.click("solution")
    exercise_deck.settle()
    report = exercise_deck.page.evaluate(CHECK_OVERFLOW_WITH_PANEL, exercise.slide_index)
    assert report["problems"] == []
    # What does not fit scrolls inside the panel, never the slide.
    assert exercise_deck.page.evaluate(
        "(s) => { const a = document.querySelector(s + ' .ejercicio-respuesta'); "
        "return a.scrollHeight > a.clientHeight; }", exercise.selector)


# ------------------------------------------------------------- the challenge


def lab_with_extension(tmp_path, extension: dict, seed: int) -> bytes:
    path = tmp_path / "extension.json"
    path.write_text(json.dumps(extension, ensure_ascii=False), encoding="utf-8")
    command = [sys.executable, "-m", "dpdeck.lab", "--seed", str(seed), "--extension", str(path)]
    return subprocess.run(command, capture_output=True, check=True).stdout


def test_the_challenge_checks_and_exports_what_the_command_line_prints(exercise_deck, tmp_path, request):
    challenge = exercise_deck.exercise("reto-laboratorio")
    challenge.show()
    challenge.fill({**CHALLENGE, "measurement": "Medí la resta y el ruido la tapa."})
    verdict = challenge.check()
    assert verdict["passed"] is False
    assert any("citar un número" in finding["text"] for finding in verdict["findings"] if not finding["ok"])
    challenge.fill(CHALLENGE, seed=0)
    started = time.perf_counter()
    assert challenge.check()["passed"] is True
    checked = time.perf_counter() - started
    name, data = challenge.export()
    assert name == "laboratorio-semilla-0.json"
    assert data == lab_with_extension(tmp_path, CHALLENGE, 0)
    assert json.loads(data)["student_extension"] == CHALLENGE
    assert "Descargado laboratorio-semilla-0.json" in " ".join(challenge.state()["verdict"]["notes"])
    report(request, "«Comprobar» del reto (el laboratorio entero, en Pyodide):", [f"  {checked:5.2f} s"])


def test_an_empty_field_exports_nothing_and_says_why(exercise_deck):
    challenge = exercise_deck.exercise("reto-laboratorio")
    challenge.show()
    challenge.fill({**CHALLENGE, "limitation": ""})
    downloads = []
    exercise_deck.page.on("download", lambda download: downloads.append(download))
    verdict = challenge.click_and_wait("export")
    assert downloads == []
    assert "Limitación: falta" in " ".join(finding["text"] for finding in verdict["findings"])
    assert "completa las cuatro partes" in " ".join(verdict["notes"])
    challenge.fill(CHALLENGE)


def test_the_challenges_answer_is_kept_like_an_edit(new_deck, exercises_url):
    deck = new_deck(exercises_url + "?autorun=0#/3")
    deck.wait_for_cells()
    deck.wait_for_exercises()
    challenge = deck.exercise("reto-laboratorio")
    challenge.fill(CHALLENGE, seed=7)
    # Leaving the page saves an answer still waiting for its save.
    deck.page.reload()
    deck.wait_for_exercises()
    assert challenge.fields() == {**CHALLENGE, "seed": "7"}
    saved = json.loads(challenge.saved_answer)
    assert saved == {"seed": 7, "extension": CHALLENGE}
    assert deck.page.get_attribute(challenge.selector, "data-edited") is not None


# ------------------------------------------------------- the lecture's exercises


@pytest.fixture(scope="module")
def lecture(open_page, deck_url):
    """The built deck with Python ready: every exercise of the lecture."""
    context, page = open_page(deck_url + "?autorun=0")
    deck = DeckPage(page)
    deck.wait_until_ready()
    deck.wait_for_exercises()
    deck.without_transitions()
    yield deck
    context.close()


def lecture_exercises(deck) -> list[str]:
    return deck.page.evaluate("() => [...document.querySelectorAll('.ejercicio:not(.reto)')]"
                              ".map((e) => e.dataset.exercise)")


def test_every_lecture_exercise_fails_with_its_starter_and_passes_with_its_solution(lecture, request):
    ids = lecture_exercises(lecture)
    assert len(ids) >= 5
    outcome, seconds = {}, {}
    for exercise_id in ids:
        exercise = lecture.exercise(exercise_id)
        exercise.show()
        before = exercise.check()["passed"]
        exercise.click("solution")
        exercise.click("use-solution")
        started = time.perf_counter()
        after = exercise.check()["passed"]
        seconds[exercise_id] = time.perf_counter() - started
        for _ in range(5):
            if not exercise.state()["hintButton"]["disabled"]:
                exercise.click("hint")
        lecture.settle()
        overflow = lecture.page.evaluate(CHECK_OVERFLOW_WITH_PANEL, exercise.slide_index)["problems"]
        exercise.cell.reset_in_page()
        outcome[exercise_id] = (before, after, overflow)
    report(request, "«Comprobar» con la solución, en Pyodide (clic → veredicto):",
           [f"  {value:5.2f} s  {exercise_id}" for exercise_id, value in seconds.items()])
    assert outcome == {exercise_id: (False, True, []) for exercise_id in ids}


def report(request, title: str, lines: list[str]) -> None:
    """Printed even when pytest captures output: a person reads these timings."""
    capture = request.config.pluginmanager.getplugin("capturemanager")
    if capture is not None:
        with capture.global_and_fixture_disabled():
            print("\n" + "\n".join([title, *lines]), flush=True)
    else:
        print("\n".join([title, *lines]))
