"""Slide sources become reveal.js sections exactly as deck/README.md describes.

Also the reader's public records (deckbuild.slides.read_deck): the slides and
cells it gives are the ones the page shows, in the same order.
"""

from __future__ import annotations

import hashlib
import html
import os
import re
from pathlib import Path

import pytest

from deck_fixtures import ROOT, SAMPLE_DECK, write_deck
from deckbuild.errors import SourceError
from deckbuild.files import hash_bytes
from deckbuild.markdown import make_markdown
from deckbuild.slides import PROMPT_LABEL, Cell, check_fence_closed, read_deck


def sections(out):
    page = (out / "index.html").read_text(encoding="utf-8")
    return re.findall(r"<section\b[^>]*>.*?</section>", page, flags=re.S)


def test_slides_split_on_top_level_rules(sample_build):
    found = sections(sample_build)
    assert len(found) == 4
    assert found[0].startswith('<section class="portada" id="inicio"')
    assert "<h1>Prueba de formato</h1>" in found[0]


def test_title_comes_from_the_first_heading(sample_build):
    assert "<title>Prueba de formato</title>" in (sample_build / "index.html").read_text(encoding="utf-8")


def test_notes_fragment_columns_table_and_boxes(sample_build):
    first, second, cells, _ = sections(sample_build)
    assert '<aside class="notes">\n<p>Qué decir en clase.</p>\n</aside>' in first
    assert '<div class="fragment">\n<p>La respuesta.</p>\n</div>' in second
    assert re.search(r'<div class="columns">\s*<div class="column">\s*<p>izquierda</p>\s*</div>\s*'
                     r'<div class="column">\s*<p>derecha</p>\s*</div>\s*</div>', second)
    assert "<table>" in second and "<td>1</td>" in second
    assert '<div class="aviso">' in cells


def test_math_is_typeset_at_build_time(sample_build):
    first, second, *_ = sections(sample_build)
    assert '<span class="katex">' in first and "$" not in first.split("<h2>")[1].split("</h2>")[0]
    assert '<span class="katex-display">' in second


def test_python_fences_become_cells_with_prerendered_output(sample_build):
    cells = sections(sample_build)[2]
    source = 'x = 2 + 3\nprint("x <", x)\nx * 10'
    # The digest of the code as written in the slide, so a run saved in a browser is shown only with it;
    # no data-predict: this cell asks for no prediction.
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    match = re.search(r'<div class="cell" data-cell-id="suma" data-figures="0" data-layout="stack" '
                      rf'data-status="idle" data-source-sha256="{digest}" data-prevent-swipe>\s*'
                      r'<pre class="cell-source"><code class="language-python">(.*?)</code></pre>\s*'
                      r'<div class="cell-output" data-origin="prerendered">(.*?)</div>\s*</div>', cells, re.S)
    assert match, cells
    assert html.unescape(match.group(1)) == source
    assert '<pre class="out-stream out-stdout">x &lt; 5\n</pre>' in match.group(2)
    assert '<pre class="out-value">50</pre>' in match.group(2)


def test_figures_are_written_by_content_hash(sample_build):
    figure = sections(sample_build)[3]
    assert 'data-cell-id="figura" data-figures="1" data-layout="side"' in figure
    name = re.search(r'<img class="out-figure" src="figures/([0-9a-f]{16})\.png" alt="[^"]+"', figure).group(1)
    data = (sample_build / "figures" / f"{name}.png").read_bytes()
    assert data.startswith(b"\x89PNG") and hash_bytes(data)[:16] == name


def test_other_fences_stay_code(sample_build):
    figure = sections(sample_build)[3]
    assert '<pre><code class="language-text">no es una celda\n</code></pre>' in figure


def test_dashes_under_text_do_not_make_a_heading():
    md = make_markdown()
    tokens = md.parse("texto\n---\nmás\n")
    assert [token.type for token in tokens if token.level == 0] == ["paragraph_open", "paragraph_close", "hr",
                                                                    "paragraph_open", "paragraph_close"]


def test_nested_containers_close_in_order():
    md = make_markdown()
    tokens = md.parse("::: columns\n::: column\na\n:::\n::: column\n```python id=x\n:::\n```\n:::\n:::\nfin\n")
    opened = [(token.type, token.info) for token in tokens if token.type.startswith("container")]
    assert opened == [("container_open", "columns"), ("container_open", "column"), ("container_close", "column"),
                      ("container_open", "column"), ("container_close", "column"), ("container_close", "columns")]
    assert all(token.meta["closed"] for token in tokens if token.type == "container_open")


def test_fences_inside_quotes_and_lists_are_closed(tmp_path):
    md = make_markdown()
    text = "> ```text\n> citado\n> ```\n\n- punto\n\n  ```text\n  en lista\n  ```\n"
    tokens = md.parse(text)
    fences = [token for token in tokens if token.type == "fence"]
    assert len(fences) == 2
    for token in fences:
        check_fence_closed(tmp_path / "x.md", text.splitlines(), token)


# ------------------------------------------------------------ read_deck


def test_read_deck_gives_slides_and_cells_in_reading_order(tmp_path):
    deck = read_deck(write_deck(tmp_path / "slides", SAMPLE_DECK))
    assert deck.title == "Prueba de formato"
    assert [(slide.file.name, slide.line, slide.title) for slide in deck.slides] == [
        ("00-inicio.md", 1, "Prueba de formato"), ("00-inicio.md", 12, "Segunda"),
        ("01-celdas.md", 1, "Celdas"), ("01-celdas.md", 15, "Figura")]
    assert deck.slides[0].attributes == {"class": "portada", "id": "inicio"}
    assert deck.slides[1].source.startswith("# Segunda\n") and deck.slides[1].source.endswith("| 1 | 2 |")
    suma, figura = deck.cells
    assert suma == Cell(id="suma", source='x = 2 + 3\nprint("x <", x)\nx * 10', file=tmp_path / "slides" / "01-celdas.md",
                        line=3, figures=0, layout="stack", options={"id": "suma", "layout": "stack"})
    assert (figura.id, figura.line, figura.figures, figura.layout, figura.options) == (
        "figura", 17, 1, "side", {"id": "figura", "figures": "1"})
    assert [slide.cells for slide in deck.slides] == [(), (), (suma,), (figura,)]
    assert deck.find_cell("figura") is figura


def test_read_deck_matches_the_built_page(dist_dir):
    """Every slide and cell the reader gives is a section and a cell of dist/index.html, in order."""
    deck = read_deck(Path(os.environ.get("DPDECK_SLIDES", ROOT / "deck" / "slides")))
    page = (dist_dir / "index.html").read_text(encoding="utf-8")
    assert re.findall(r'<section\b[^>]* data-source="([^"]+)"', page) == [
        f"{slide.file.name}:{slide.line}" for slide in deck.slides]
    assert re.findall(r'data-cell-id="([^"]+)"', page) == [cell.id for cell in deck.cells]
    sources = re.findall(r'<code class="language-python">(.*?)</code>', page, flags=re.S)
    assert [html.unescape(source) for source in sources] == [cell.source for cell in deck.cells]


# ------------------------------------------------------------ «Prueba esto»


def test_a_prompt_is_written_inside_its_cell_after_the_output(sample_build):
    figure = sections(sample_build)[3]
    match = re.search(r'<div class="cell" data-cell-id="figura" .*?<div class="cell-output" data-origin="prerendered">'
                      r'.*?</div>\s*<details class="cell-prueba">\s*<summary>(.*?)</summary>\s*'
                      r'<div class="cell-prueba-texto">\s*<p>(.*?)</p>\s*</div>\s*</details>\s*</div>', figure, re.S)
    assert match, figure
    assert match.group(1) == PROMPT_LABEL == "Prueba esto"
    assert match.group(2).startswith("Cambia <code>[1, 0]</code> por <code>[0, 1]</code> y vuelve a ejecutar")
    assert '<span class="katex">' in match.group(2) and "$" not in match.group(2)
    # Written once, inside its cell: nothing of the `::: prueba` is left in the slide's flow.
    assert figure.count("Cambia <code>") == 1 and ":::" not in figure
    assert '<pre><code class="language-text">no es una celda' in figure.split("</details>")[1]


PROMPT_DECK = {
    "01-pruebas.md": """\
        # Pruebas

        ```python id=una
        epsilon = 0.5
        ```

        ::: prueba
        Pon `epsilon = 5` y vuelve a ejecutar.

        ¿Qué cambia?
        :::

        ```python id=sin-prueba
        x = 1
        ```

        Texto entre medias.

        ---

        # En columnas y en un fragmento

        ::: columns
        ::: column
        ```python id=izquierda
        b = 1
        ```
        ::: prueba
        Sube `b` a `2`.
        :::
        :::
        ::: column
        ::: fragment
        ```python id=oculta
        c = 3
        ```

        ::: prueba
        Cambia `c`:

        ```python
        c = 4
        ```
        :::
        :::
        :::
        :::
        """,
}


def test_read_deck_gives_each_cell_its_prompt(tmp_path):
    deck = read_deck(write_deck(tmp_path / "slides", PROMPT_DECK))
    prompts = {cell.id: (cell.prompt, cell.prompt_line) for cell in deck.cells}
    assert prompts == {
        "una": ("Pon `epsilon = 5` y vuelve a ejecutar.\n\n¿Qué cambia?", 7),
        "sin-prueba": (None, None),
        "izquierda": ("Sube `b` a `2`.", 28),
        "oculta": ("Cambia `c`:\n\n```python\nc = 4\n```", 38),
    }
    # The code shown in a prompt is not a cell.
    assert [cell.id for cell in deck.cells] == ["una", "sin-prueba", "izquierda", "oculta"]


CELL = "```python id=c\nx = 1\n```\n"
PROMPT = "::: prueba\nPon `x = 2`.\n:::\n"

PROMPT_ERRORS = {
    "after-text": ("# T\n\n" + CELL + "\ntexto\n\n" + PROMPT, 9, "va justo después de la celda"),
    "first-on-its-slide": ("# T\n\n" + PROMPT + "\n" + CELL, 3, "aquí no hay ninguna celda antes"),
    "after-a-rule": ("# T\n\n" + CELL + "\n---\n\n" + PROMPT, 9, "va justo después de la celda"),
    "two-for-one-cell": ("# T\n\n" + CELL + "\n" + PROMPT + "\n" + PROMPT, 11, "una sola «::: prueba»"),
    "outside-the-cells-column": ("# T\n\n::: columns\n::: column\n" + CELL + ":::\n:::\n\n" + PROMPT, 11,
                                 "dentro del mismo contenedor"),
    "in-the-notes": ("# T\n\n" + CELL + "\n::: notes\n" + PROMPT + ":::\n", 8, "va justo después de la celda"),
    "empty": ("# T\n\n" + CELL + "\n::: prueba\n\n:::\n", 7, "«::: prueba» vacía"),
    "with-a-box": ("# T\n\n" + CELL + "\n::: prueba\nPon esto.\n\n::: aviso\nojo\n:::\n:::\n", 10,
                   "«::: prueba» no admite otros contenedores"),
    "with-a-cell": ("# T\n\n" + CELL + "\n::: prueba\n```python id=d\ny = 1\n```\n:::\n", 8,
                    "el código de una «::: prueba» no es una celda"),
    "on-an-exercise": ("# T\n\n::: ejercicio\nCompleta.\n\n```python id=e check=laplace-escala\nb = 1\n```\n\n"
                       + PROMPT + "\n::: pista\nUna.\n:::\n\n::: solucion\n```python\nb = 1\n```\n:::\n:::\n",
                       10, "no «::: prueba»"),
}


@pytest.mark.parametrize("case", sorted(PROMPT_ERRORS))
def test_a_prompt_that_is_not_next_to_its_cell_stops_the_build_at_its_line(case, tmp_path):
    text, line, message = PROMPT_ERRORS[case]
    folder = tmp_path / "slides"
    folder.mkdir()
    (folder / "01.md").write_text(text, encoding="utf-8")
    with pytest.raises(SourceError) as raised:
        read_deck(folder)
    assert (raised.value.path.name, raised.value.line) == ("01.md", line), raised.value.message
    assert message in raised.value.message


def test_read_deck_raises_source_error_with_file_and_line(tmp_path):
    folder = write_deck(tmp_path / "slides", {"01.md": "# T\n\n```python id=a\nprint(1)\n```\n",
                                               "02.md": "# U\n\ntexto\n\n```python id=a\nprint(2)\n```\n"})
    with pytest.raises(SourceError) as raised:
        read_deck(folder)
    assert (raised.value.path.name, raised.value.line) == ("02.md", 5)
    assert "id de celda repetido «a»" in raised.value.message


# ------------------------------------------------------------ exercises

EXERCISE_DECK = {
    "01-ejercicio.md": """\
        <!-- .slide: id="ejercicio" -->
        # Ejercicio

        ::: ejercicio
        Completa la función con $\\Delta f/\\varepsilon$.

        ```python id=ej check=laplace-escala layout=stack
        def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):
            return valor
        ```

        ::: pista
        Primera pista con `código`.
        :::

        ::: pista
        Segunda pista.
        :::

        ::: solucion
        ```python
        def mecanismo_laplace(valor, *, sensibilidad, epsilon, rng):
            return valor + rng.laplace(0.0, sensibilidad / epsilon)
        ```

        Porque $b = \\Delta f/\\varepsilon$.
        :::
        :::

        ::: notes
        ¿Qué escala?
        :::

        ---

        # Reto

        ::: reto
        Escribe tu extensión.

        ::: pista
        Cita un número.
        :::

        ::: solucion
        - **Supuesto:** el ruido esconde a Karen.
        - **Medición:** la resta tiene desviación
          4,02.
        - **Conclusión:** la señal queda enterrada.
        - **Limitación:** una sola semilla.
        :::
        :::
        """,
}


@pytest.fixture(scope="module")
def exercise_build(tmp_path_factory):
    from deck_fixtures import run_build

    base = tmp_path_factory.mktemp("ejercicios")
    result = run_build(write_deck(base / "slides", EXERCISE_DECK), base / "dist")
    assert result.returncode == 0, result.stdout + result.stderr
    return base


def test_read_deck_gives_each_exercise_with_its_parts(exercise_build):
    deck = read_deck(exercise_build / "slides")
    exercise, challenge = deck.exercises
    assert (exercise.id, exercise.check, exercise.line, exercise.is_challenge) == ("ej", "laplace-escala", 4, False)
    assert exercise.task == "Completa la función con $\\Delta f/\\varepsilon$."
    assert exercise.cell is deck.find_cell("ej") and exercise.cell.check == "laplace-escala"
    assert exercise.hints == ("Primera pista con `código`.", "Segunda pista.")
    assert exercise.solution_code.endswith("rng.laplace(0.0, sensibilidad / epsilon)")
    assert exercise.solution_text == "Porque $b = \\Delta f/\\varepsilon$."
    assert [cell.id for cell in deck.cells] == ["ej"], "the solution's code is not a cell"
    assert (challenge.id, challenge.check, challenge.cell, challenge.solution_code) == (
        "reto-laboratorio", "reto-laboratorio", None, None)
    assert challenge.example == {"assumption": "el ruido esconde a Karen.",
                                 "measurement": "la resta tiene desviación 4,02.",
                                 "conclusion": "la señal queda enterrada.", "limitation": "una sola semilla."}
    assert [slide.exercise for slide in deck.slides] == [exercise, challenge]


def test_an_exercise_is_written_whole_task_cell_and_panel(exercise_build):
    first, second = sections(exercise_build / "dist")
    match = re.search(r'<div class="ejercicio" data-exercise="ej" data-check="laplace-escala" data-hints="2">\s*'
                      r'<div class="ejercicio-enunciado">\s*<p>Completa la función con <span class="katex">.*?</div>\s*'
                      r'<div class="cell" data-cell-id="ej" .*?</div>\s*</div>\s*'
                      r'<div class="ejercicio-panel">\s*<div class="ejercicio-respuesta">\s*'
                      r'<p class="ejercicio-ayuda">[^<]+</p>\s*<div class="ejercicio-veredicto" hidden></div>\s*'
                      r'<div class="ejercicio-pista" data-hint="1" hidden>\s*<p class="ejercicio-rotulo">Pista 1 de 2</p>\s*'
                      r'<p>Primera pista con <code>código</code>.</p>\s*</div>\s*'
                      r'<div class="ejercicio-pista" data-hint="2" hidden>.*?</div>\s*'
                      r'<div class="ejercicio-solucion" hidden>\s*<p class="ejercicio-rotulo">Solución</p>\s*'
                      r'<pre class="ejercicio-codigo"><code>def mecanismo_laplace.*?</code></pre>\s*<p>Porque',
                      first, re.S)
    assert match, first
    assert '<aside class="notes">' in first and ":::" not in first


def test_the_challenge_has_the_labs_four_fields_and_a_seed(exercise_build):
    from dpdeck.lab import EXTENSION_FIELDS

    second = sections(exercise_build / "dist")[1]
    assert '<div class="ejercicio reto" data-exercise="reto-laboratorio" data-check="reto-laboratorio"' in second
    names = re.findall(r'<textarea name="([a-z]+)"', second)
    assert names == list(EXTENSION_FIELDS)
    for label, _ in EXTENSION_FIELDS.values():
        assert f'<span class="reto-rotulo">{label}</span>' in second
    assert '<input name="seed" type="number" min="0" step="1" value="0"' in second
    assert '<p class="ejercicio-rotulo">Un ejemplo de respuesta</p>' in second


def test_the_build_writes_the_chapters_notebooks(exercise_build):
    import json

    index = json.loads((exercise_build / "dist" / "notebooks" / "index.json").read_text(encoding="utf-8"))
    assert index["chapters"] == [{
        "name": "01-ejercicio", "title": "Ejercicio", "files": ["01-ejercicio.md"],
        "notebooks": {"guided": "notebooks/01-ejercicio/notebook.ipynb",
                      "student": "notebooks/01-ejercicio/notebook_student.ipynb",
                      "solution": "notebooks/01-ejercicio/notebook_solution.ipynb"},
        "cells": ["ej"], "exercises": ["ej", "reto-laboratorio"]}]
    for relative in index["chapters"][0]["notebooks"].values():
        assert (exercise_build / "dist" / relative).is_file()
