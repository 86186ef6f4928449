"""«Predice antes de ejecutar» in the slide format: read, refused with file and line, checked against the cell's output.

A `::: prediccion` right after a cell asks what it prints; one choice is marked
`[x]`. The reader gives each cell its prediction and refuses a badly written
one at its line; the build runs the cell and refuses a prediction whose marked
choice is not what the cell prints, or whose other choices are printed too,
so a question can never disagree with its cell. The page gets the question
inside its cell, the right choice marked; the guided notebook asks it before
the cell and answers it after.
"""

from __future__ import annotations

import html
import json
import re

import pytest

from deck_fixtures import run_build, write_deck
from deck_sources import deck
from deckbuild.errors import SourceError
from deckbuild.predictions import appears_in, check_predictions, printed_text
from deckbuild.prerender import CellOutcome, Prerendered
from deckbuild.slides import PREDICTION_LABEL, read_deck

PREDICTION_DECK = {
    "01-predice.md": """\
        # Predice

        ```python id=escala
        print("escala  b =", 2)
        ```

        ::: prediccion
        ¿Qué escala imprimirá? Con $\\varepsilon = 0{,}5$.

        - [ ] `0,5`
        - [x] `b = 2`
        - [ ] `0,25`
        :::

        ```python id=sin-pregunta
        x = 1
        ```
        """,
}


def test_read_deck_gives_a_cell_its_prediction(tmp_path):
    deck = read_deck(write_deck(tmp_path / "slides", PREDICTION_DECK))
    escala, plain = deck.cells
    prediction = escala.prediction
    assert prediction.question == "¿Qué escala imprimirá? Con $\\varepsilon = 0{,}5$."
    assert prediction.choices == ("0,5", "b = 2", "0,25")
    assert (prediction.answer, prediction.answer_text) == (1, "b = 2")
    assert (prediction.line, prediction.choice_lines) == (7, (10, 11, 12))
    assert plain.prediction is None


CELL = "```python id=c\nprint(2)\n```\n"
CHOICES = "- [ ] `1`\n- [x] `2`\n"


def prediction(body: str) -> str:
    return f"::: prediccion\n{body}:::\n"


PREDICTION_ERRORS = {
    "after-text": ("# T\n\n" + CELL + "\ntexto\n\n" + prediction("¿Qué?\n\n" + CHOICES), 9,
                   "va justo después de la celda"),
    "no-question": ("# T\n\n" + CELL + "\n" + prediction(CHOICES), 7, "le falta la pregunta"),
    "one-choice": ("# T\n\n" + CELL + "\n" + prediction("¿Qué?\n\n- [x] `2`\n"), 10, "de 2 a 5 opciones"),
    "none-marked": ("# T\n\n" + CELL + "\n" + prediction("¿Qué?\n\n- [ ] `1`\n- [ ] `2`\n"), 7,
                    "no hay ninguna"),
    "two-marked": ("# T\n\n" + CELL + "\n" + prediction("¿Qué?\n\n- [x] `1`\n- [x] `2`\n"), 11, "(hay 2)"),
    "repeated": ("# T\n\n" + CELL + "\n" + prediction("¿Qué?\n\n- [x] `2`\n- [ ] `2`\n"), 11, "repetida"),
    "plain-item": ("# T\n\n" + CELL + "\n" + prediction("¿Qué?\n\n- [x] `2`\n- tres\n"), 11,
                   "cada opción es una línea"),
    "text-after": ("# T\n\n" + CELL + "\n" + prediction("¿Qué?\n\n" + CHOICES + "\nY más.\n"), 13,
                   "después de las opciones no va nada"),
    "two-for-one-cell": ("# T\n\n" + CELL + "\n" + prediction("¿Qué?\n\n" + CHOICES) + "\n"
                         + prediction("¿Y?\n\n" + CHOICES), 14, "una sola «::: prediccion»"),
    "with-a-prompt": ("# T\n\n" + CELL + "\n::: prueba\nPon `x = 2`.\n:::\n\n" + prediction("¿Qué?\n\n" + CHOICES),
                      11, "no junto a una «::: prueba»"),
    "with-a-box": ("# T\n\n" + CELL + "\n" + prediction("¿Qué?\n\n::: aviso\nojo\n:::\n" + CHOICES), 10,
                   "no admite otros contenedores"),
    "on-an-exercise": ("# T\n\n::: ejercicio\nCompleta.\n\n```python id=e check=laplace-escala\nb = 1\n```\n\n"
                       + prediction("¿Qué?\n\n" + CHOICES) + "\n::: pista\nUna.\n:::\n\n::: solucion\n```python\n"
                       "b = 1\n```\n:::\n:::\n", 10, "no «::: prediccion»"),
}


@pytest.mark.parametrize("case", sorted(PREDICTION_ERRORS))
def test_a_badly_written_prediction_stops_the_build_at_its_line(case, tmp_path):
    text, line, message = PREDICTION_ERRORS[case]
    folder = tmp_path / "slides"
    folder.mkdir()
    (folder / "01.md").write_text(text, encoding="utf-8")
    with pytest.raises(SourceError) as raised:
        read_deck(folder)
    assert (raised.value.path.name, raised.value.line) == ("01.md", line), raised.value.message
    assert message in raised.value.message


# ----------------------------------------------------------- against the cell's output


def outcome_of(deck, cell_id: str, *texts: str, value: str | None = None) -> Prerendered:
    outputs = [{"type": "stream", "name": "stdout", "text": text} for text in texts]
    outputs.append({"type": "stream", "name": "stderr", "text": "aviso: b = 2 también aquí, pero en stderr\n"})
    if value is not None:
        outputs.append({"type": "value", "text": value})
    cell = deck.find_cell(cell_id)
    return Prerendered({cell_id: CellOutcome(cell, tuple(outputs)),
                        "sin-pregunta": CellOutcome(deck.find_cell("sin-pregunta"), ())}, 0)


def test_the_marked_choice_must_be_what_the_cell_prints(tmp_path):
    deck = read_deck(write_deck(tmp_path / "slides", PREDICTION_DECK))
    assert check_predictions(deck, outcome_of(deck, "escala", "escala  b = 2\n")) == 1
    with pytest.raises(SourceError) as raised:
        check_predictions(deck, outcome_of(deck, "escala", "escala  b = 3\n"))
    assert raised.value.line == 11
    assert "la opción marcada `b = 2` no es lo que imprime la celda «escala» (imprime: escala b = 3)" in raised.value.message


def test_no_other_choice_may_be_printed_too(tmp_path):
    deck = read_deck(write_deck(tmp_path / "slides", PREDICTION_DECK))
    with pytest.raises(SourceError) as raised:
        check_predictions(deck, outcome_of(deck, "escala", "escala  b = 2\n", value="0.25 → 0,25"))
    assert raised.value.line == 12
    assert "también imprime `0,25`" in raised.value.message


@pytest.mark.parametrize("choice, printed, found", [
    ("2", "b = 2", True),
    ("2", "b = 12", False),
    ("2", "b = 0,25", False),
    ("2", "b = 2,5", False),
    ("0,5", "ε = 0,5 y más", True),
    ("1,5", "ε = 11,5", False),
    ("[0, 1]", "cambios posibles: [0, 1]", True),
    ("[1]", "cambios posibles: [0, 1]", False),
    ("paralela: 0,5", "paralela:   0,5", True),
    ("2·10⁻⁴", "δ = 1/n = 2·10⁻⁴", True),
    ("4 588 248", "suma: 4\u00a0588\u00a0248", True),
    ("True", "¿alto? True", True),
])
def test_a_choice_is_found_as_a_whole(choice, printed, found):
    assert appears_in(choice, printed_text([{"type": "stream", "name": "stdout", "text": printed}])) is found


def test_a_wrong_answer_stops_a_real_build_at_the_choices_line(tmp_path):
    wrong = {"01-predice.md": PREDICTION_DECK["01-predice.md"].replace("- [ ] `0,5`", "- [x] `0,5`")
             .replace("- [x] `b = 2`", "- [ ] `b = 2`")}
    result = run_build(write_deck(tmp_path / "slides", wrong), tmp_path / "dist")
    assert result.returncode != 0
    assert re.search(r"01-predice\.md:10: la opción marcada `0,5` no es lo que imprime la celda «escala»",
                     result.stdout + result.stderr), result.stdout + result.stderr
    assert not (tmp_path / "dist").exists()


# ----------------------------------------------------------- in the page and the notebook


def test_the_page_has_each_question_inside_its_cell_with_the_right_choice_marked(dist_dir):
    page = (dist_dir / "index.html").read_text(encoding="utf-8")
    asked = [cell for cell in deck().cells if cell.prediction is not None]
    assert len(asked) >= 7
    for cell in asked:
        match = re.search(rf'<div class="cell" data-cell-id="{cell.id}"[^>]* data-predict[ >].*?'
                          r'<div class="cell-prediccion">\s*<p class="cell-prediccion-rotulo">(.*?)</p>'
                          r'.*?<ol class="cell-prediccion-opciones">(.*?)</ol>', page, re.S)
        assert match, cell.id
        assert match.group(1) == PREDICTION_LABEL
        choices = re.findall(r'<li( data-correct)?><button type="button" class="cell-prediccion-opcion" '
                             r'data-choice="([^"]*)">', match.group(2))
        assert [html.unescape(choice) for _, choice in choices] == list(cell.prediction.choices)
        assert [bool(marked) for marked, _ in choices] == [index == cell.prediction.answer
                                                           for index in range(len(choices))]


def test_every_chapter_asks_at_least_one_prediction(dist_dir):
    index = json.loads((dist_dir / "notebooks" / "index.json").read_text(encoding="utf-8"))
    for chapter in index["chapters"]:
        notebook = json.loads((dist_dir / chapter["notebooks"]["guided"]).read_text(encoding="utf-8"))
        cells = notebook["cells"]
        asks = [position for position, cell in enumerate(cells) if "prediction" in cell["metadata"].get("dpdeck", {})]
        assert asks, chapter["name"]
        for position in asks:
            asked = cells[position]["metadata"]["dpdeck"]["prediction"]
            # Question, then the cell, then the answer, folded.
            assert cells[position + 1]["metadata"]["dpdeck"] == {"cell": asked}
            answer = cells[position + 2]
            assert answer["metadata"]["dpdeck"] == {"answer": asked}
            assert "".join(answer["source"]).startswith("<details><summary>La respuesta</summary>")
