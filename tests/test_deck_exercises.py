"""The deck's exercises, as the slides write them, against their checks.

Every exercise of deck/slides (read by deckbuild.slides, the one reader of the
slides): its starter code runs and does not pass its check (there is
something to do), its solution runs and passes, and each exercise names a
check of dpdeck.exercises. The challenge's example answer, cited with seed 0,
passes the challenge's check. Each chapter has an exercise, and the deck ends with the challenge.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deckbuild.slides import CHALLENGE_ID, read_deck
from dpdeck.exercises import CHECKS, check, run_check

SLIDES = Path(__file__).resolve().parents[1] / "deck" / "slides"
DECK = read_deck(SLIDES)
EXERCISES = [exercise for exercise in DECK.exercises if not exercise.is_challenge]


def test_every_chapter_has_an_exercise_and_the_deck_ends_with_the_challenge():
    chapters = [slide.file for slide in DECK.slides if slide.attributes.get("class") == "capitulo"]
    assert len(chapters) >= 6
    for chapter in chapters:
        exercises = [slide.exercise for slide in DECK.slides if slide.file == chapter and slide.exercise]
        assert exercises, f"{chapter.name} no tiene ningún ejercicio"
    # Each exercise on a slide of its own, which says so in its title.
    for slide in DECK.slides:
        if slide.exercise is not None:
            assert slide.title.startswith("Reto ·" if slide.exercise.is_challenge else "Ejercicio ·"), slide.title
    challenges = [exercise for exercise in DECK.exercises if exercise.is_challenge]
    assert [exercise.id for exercise in challenges] == [CHALLENGE_ID] == [DECK.exercises[-1].id]
    assert {exercise.check for exercise in DECK.exercises} <= set(CHECKS)


@pytest.mark.parametrize("exercise", EXERCISES, ids=[exercise.id for exercise in EXERCISES])
def test_the_starter_runs_and_does_not_pass_yet(exercise):
    result = run_check(exercise.cell.source, check=exercise.check, cell_id=exercise.id)
    assert result["status"] == "done", result["outputs"]
    assert result["verdict"]["passed"] is False
    assert any(not finding["ok"] for finding in result["verdict"]["findings"])


@pytest.mark.parametrize("exercise", EXERCISES, ids=[exercise.id for exercise in EXERCISES])
def test_the_solution_runs_and_passes(exercise):
    result = run_check(exercise.solution_code, check=exercise.check, cell_id=exercise.id)
    assert result["status"] == "done", result["outputs"]
    assert result["verdict"]["passed"] is True, result["verdict"]
    # The solution prints what the starter prints, with the right numbers.
    starter = run_check(exercise.cell.source, check=exercise.check, cell_id=exercise.id)
    kinds = [output["type"] for output in result["outputs"]]
    assert kinds == [output["type"] for output in starter["outputs"]]


@pytest.mark.parametrize("exercise", EXERCISES, ids=[exercise.id for exercise in EXERCISES])
def test_hints_go_from_the_idea_to_the_answer(exercise):
    assert 2 <= len(exercise.hints) <= 4
    assert all(len(hint) > 40 for hint in exercise.hints)
    assert len(exercise.solution_text) > 100, "la solución se explica"


# The deck's button and slides, and the browser that keeps an answer, are not in a notebook;
# an exercise's text goes to both (deck/README.md, «Notebooks»).
DECK_ONLY = re.compile(r"«Comprobar»|\bComprobar\b|diapositiva|este navegador|\bclic\b")


@pytest.mark.parametrize("exercise", DECK.exercises, ids=[exercise.id for exercise in DECK.exercises])
def test_an_exercises_text_reads_right_in_the_deck_and_in_a_notebook(exercise):
    texts = [exercise.task, *exercise.hints, exercise.solution_text]
    found = [match for text in texts for match in DECK_ONLY.findall(text)]
    assert found == [], f"{exercise.id}: {found}"


def test_the_challenges_example_passes_with_seed_zero():
    challenge = next(exercise for exercise in DECK.exercises if exercise.is_challenge)
    verdict = check(challenge.check, {"student_extension": challenge.example, "semilla": 0})
    assert verdict.passed, verdict


def test_the_fedavg_solution_prints_the_centralized_step():
    # The slide's notes: with the weights n_k/n the two rows agree in the three decimals shown.
    exercise = next(exercise for exercise in DECK.exercises if exercise.check == "promedio-fedavg")
    printed = {}
    for name, source in (("starter", exercise.cell.source), ("solution", exercise.solution_code)):
        result = run_check(source, check=exercise.check, cell_id=exercise.id)
        lines = "".join(output["text"] for output in result["outputs"] if output["type"] == "stream").splitlines()
        printed[name] = [line.split(":", 1)[1].strip() for line in lines]
    assert printed["solution"][0] == printed["solution"][1] == printed["starter"][1]
    assert printed["starter"][0] != printed["starter"][1]
