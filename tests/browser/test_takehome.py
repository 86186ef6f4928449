"""What a student takes home, in the browser: copy, .py, the chapter's notebook, run a slide or a chapter,
and outputs of edited cells that survive a reload.

Against the exercises' fixture deck (two slide files, one chapter); every test
drives the page through deckpage.DeckPage.
"""

from __future__ import annotations

import pytest

nbformat = pytest.importorskip("nbformat")


def test_copy_puts_the_code_and_the_output_on_the_clipboard(exercise_deck):
    uno = exercise_deck.cell("uno")
    uno.show()
    uno.copy_code()
    assert exercise_deck.clipboard() == uno.source
    assert uno.run() == "done"
    uno.copy_output()
    assert exercise_deck.clipboard() == "uno\n"
    assert uno.locator("[data-action=copy-output]").inner_text() == "Copiado ✓"


def test_a_cell_downloads_as_a_py_file_with_its_code_now(exercise_deck):
    tres = exercise_deck.cell("tres")
    tres.show()
    tres.set_source('print("tres, editada")')
    name, text = tres.download_py()
    assert (name, text) == ("tres.py", 'print("tres, editada")\n')
    tres.reset_in_page()


def test_run_the_slide_runs_each_cell_on_it_in_order(exercise_deck):
    uno, dos = exercise_deck.cell("uno"), exercise_deck.cell("dos")
    uno.show()
    before = (uno.runs, dos.runs)
    exercise_deck.run_slide()
    dos.wait_for_run(before[1])
    assert uno.runs == before[0] + 1
    assert dos.read_output()["figures"] == 1 and dos.origin == "live"


def test_run_the_chapter_runs_every_cell_of_its_files(exercise_deck):
    exercise_deck.cell("tres").show()
    results = exercise_deck.run_chapter_in_page()
    assert [result["id"] for result in results] == ["uno", "dos", "tres", "ejercicio-laplace"]
    assert {result["status"] for result in results} == {"done"}


def test_the_chapters_notebook_has_the_students_edits_and_outputs(exercise_deck):
    tres = exercise_deck.cell("tres")
    tres.show()
    tres.set_source('print("mi versión")')
    assert tres.run() == "done"
    challenge = exercise_deck.exercise("reto-laboratorio")
    challenge.fill({"assumption": 'Con "comillas" y \\ barra', "measurement": "4,02",
                    "conclusion": "sí", "limitation": "línea\nnueva"}, seed=3)
    tres.show()
    name, notebook = exercise_deck.download_notebook()
    assert name == "01-ejercicio.ipynb"
    nbformat.validate(nbformat.from_dict(notebook))
    cells = {cell["id"]: {**cell, "source": "".join(cell["source"])} for cell in notebook["cells"]}
    assert cells["tres"]["source"] == 'print("mi versión")'
    assert cells["tres"]["outputs"] == [{"output_type": "stream", "name": "stdout", "text": "mi versión\n"}]
    assert cells["uno"]["outputs"] == [], "a cell that is not edited keeps the shipped notebook's"
    namespace = {}
    exec(cells["reto-laboratorio"]["source"], namespace)   # the challenge's answer, as Python
    assert namespace["semilla"] == 3
    assert namespace["student_extension"]["assumption"] == 'Con "comillas" y \\ barra'
    assert namespace["student_extension"]["limitation"] == "línea\nnueva"
    assert notebook["metadata"]["dpdeck"]["edited"] == 2
    tres.reset_in_page()


def test_an_edited_cells_output_survives_a_reload_labelled_as_the_students(new_deck, exercises_url):
    deck = new_deck(exercises_url + "?autorun=0")
    deck.wait_until_ready()
    dos = deck.cell("dos")
    dos.show()
    dos.set_source(dos.original.replace("[2, 0, 1]", "[0, 2, 1]").replace('"dos"', '"mía"'))
    assert dos.run() == "done"
    saved = dos.saved_output
    assert saved["source"] == dos.source and [output["type"] for output in saved["outputs"]] == ["stream", "figure"]
    deck.page.reload()
    deck.wait_for_cells()
    dos.show()
    dos.wait_for_figures_loaded()
    state = dos.output_state()
    assert state["origin"] == "saved"
    assert state["label"].startswith("tu última ejecución (guardada)")
    assert not state["stale"] and state["blocks"][0]["text"] == "mía\n"
    assert dos.read_output()["loaded"] == 1
    # Edited again, the saved output belongs to other code: shown as stale.
    dos.set_source(dos.source + "\n")
    assert dos.output_state()["stale"]
    # Back to the original: the saved output is forgotten with the edit.
    dos.reset_in_page()
    assert dos.saved_output is None and dos.saved_edit is None
    deck.page.reload()
    deck.wait_for_cells()
    assert dos.origin == "prerendered"


FULL_STORAGE = """
() => {
  const setItem = Storage.prototype.setItem;
  Storage.prototype.setItem = function (key, value) {
    if (String(key).startsWith('dpdeck:outputs:')) {
      throw new DOMException('lleno', 'QuotaExceededError');
    }
    return setItem.call(this, key, value);
  };
}
"""


def test_a_full_browser_keeps_the_edit_and_says_the_output_was_not_saved(new_deck, exercises_url):
    deck = new_deck(exercises_url + "?autorun=0")
    deck.wait_until_ready()
    deck.page.evaluate(FULL_STORAGE)
    uno = deck.cell("uno")
    uno.show()
    uno.set_source('print("sin sitio")')
    assert uno.run() == "done"
    assert uno.output_text().strip() == "sin sitio"
    assert uno.saved_edit == 'print("sin sitio")' and uno.saved_output is None
    deck.page.wait_for_selector(".deck-toast:not([hidden])")
    assert "no tiene sitio para guardar las salidas" in deck.toast_text()
    assert deck.console_errors == []


def test_an_exercise_downloads_its_chapters_notebook_too(exercise_deck):
    import json

    exercise = exercise_deck.exercise("ejercicio-laplace")
    exercise.show()
    name, data = exercise_deck.download(lambda: exercise.click("notebook"))
    notebook = json.loads(data)
    assert name == "01-ejercicio.ipynb"
    assert notebook["metadata"]["dpdeck"]["chapter"] == "01-ejercicio"
    assert [cell["id"] for cell in notebook["cells"] if cell["cell_type"] == "code"][:4] == [
        "preparar", "uno", "dos", "tres"]
