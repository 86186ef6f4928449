"""The chapters' notebooks in dist/notebooks: valid, complete, and they run top to bottom under Jupyter.

Each notebook is executed by nbclient with an ipykernel kernel of this
environment, in a temporary folder, one timeout per notebook, with dpdeck
taken from the wheel dist/ ships (what the notebook tells a student to
install), not from the sources. Then: every deck cell of the chapter is in
its guided notebook with the slide's code and draws the figures it declares;
every solved exercise passes its check and every blank one does not (yet).
"""

from __future__ import annotations

import compileall
import json
import os
import re
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import nbclient
import nbformat
import pytest

from deckbuild.notebooks import FLAVOURS, group_chapters
from deckbuild.slides import read_deck
from shown import show_to_person

ROOT = Path(__file__).resolve().parents[2]
SLIDES = ROOT / "deck" / "slides"
SECONDS_PER_NOTEBOOK = 300


@pytest.fixture(scope="module")
def deck():
    return read_deck(SLIDES)


@pytest.fixture(scope="module")
def index(dist_dir):
    return json.loads((dist_dir / "notebooks" / "index.json").read_text(encoding="utf-8"))


def read_notebook(dist_dir: Path, relative: str):
    return nbformat.read(dist_dir / relative, as_version=4)


def test_one_chapter_per_file_with_an_exercise_and_three_notebooks_each(deck, index, dist_dir):
    expected = [[slide.file.name for slide in slides] for slides in group_chapters(deck)]
    assert [chapter["files"] for chapter in index["chapters"]] == [list(dict.fromkeys(files)) for files in expected]
    assert len(index["chapters"]) >= 6
    # Every slide file belongs to one chapter, so every slide has a notebook to download.
    covered = [name for chapter in index["chapters"] for name in chapter["files"]]
    assert sorted(covered) == sorted({slide.file.name for slide in deck.slides})
    for chapter in index["chapters"]:
        assert set(chapter["notebooks"]) == set(FLAVOURS)
        for flavour, relative in chapter["notebooks"].items():
            notebook = read_notebook(dist_dir, relative)
            nbformat.validate(notebook)
            assert notebook.metadata["dpdeck"] == {"chapter": chapter["name"], "flavour": flavour,
                                                   "title": chapter["title"]}
            assert notebook.metadata["kernelspec"]["name"] == "python3"
            install, setup = notebook.cells[1:3]
            assert (install.id, setup.id, setup.source) == ("instalar", "preparar", "%matplotlib inline")
            # How to get dpdeck: the wheel this deck ships, by its path in dist/.
            wheel = install.metadata["dpdeck"]["install"]
            assert f"`pip install {wheel}`" in install.source and (dist_dir / wheel).is_file()
            assert all(cell.get("outputs", []) == [] for cell in notebook.cells), "se publican sin salidas"


def test_the_guided_notebook_has_every_cell_and_the_lectures_text(deck, index, dist_dir):
    cells = {cell.id: cell for cell in deck.cells}
    for chapter in index["chapters"]:
        notebook = read_notebook(dist_dir, chapter["notebooks"]["guided"])
        code = {cell.metadata["dpdeck"]["cell"]: cell.source for cell in notebook.cells
                if cell.cell_type == "code" and "cell" in cell.metadata.get("dpdeck", {})}
        assert list(code) == chapter["cells"]
        assert all(code[cell_id] == cells[cell_id].source for cell_id in code)
        text = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
        assert "$" in text and "::: " not in text and "<span" not in text and "<!--" not in text
        # Speaker notes stay in the deck: their «Preguntar:» never reaches a notebook.
        assert "Preguntar:" not in text


def test_each_prompt_follows_its_cell_in_the_guided_notebook(deck, index, dist_dir):
    """A cell's «Prueba esto» is the Markdown cell right after its code cell, in the guided notebook only."""
    prompted = {cell.id: cell.prompt for cell in deck.cells if cell.prompt is not None}
    assert len(prompted) >= 15
    found = {}
    for chapter in index["chapters"]:
        for flavour, relative in chapter["notebooks"].items():
            cells = read_notebook(dist_dir, relative).cells
            for position, cell in enumerate(cells):
                cell_id = cell.metadata.get("dpdeck", {}).get("prompt")
                if cell_id is None:
                    continue
                assert flavour == "guided", relative
                before = cells[position - 1]
                assert before.cell_type == "code" and before.metadata["dpdeck"]["cell"] == cell_id
                assert (cell.cell_type, cell.id) == ("markdown", f"{cell_id}-prueba")
                found[cell_id] = cell.source
            if flavour == "guided":
                code = [cell.metadata["dpdeck"]["cell"] for cell in cells if cell.cell_type == "code"
                        and "cell" in cell.metadata.get("dpdeck", {})]
                assert [cell_id for cell_id in code if cell_id in prompted] == \
                    [cell_id for cell_id in found if cell_id in chapter["cells"]]
    assert set(found) == set(prompted)
    for cell_id, source in found.items():
        text = re.sub(r"</?span[^>]*>", "", prompted[cell_id])
        assert source == f"**Prueba esto.** {text}", cell_id


def test_a_slide_becomes_markdown_with_its_math_boxes_and_answers(index, dist_dir):
    first = next(chapter for chapter in index["chapters"] if "01-privacidad.md" in chapter["files"])
    text = "\n\n".join(cell.source for cell in read_notebook(dist_dir, first["notebooks"]["guided"]).cells
                       if cell.cell_type == "markdown")
    assert "# 1 · Privacidad diferencial" in text
    assert "## El mecanismo de Laplace" in text
    assert "$$\\frac{\\Pr[M(D) \\in S]}{\\Pr[M(D') \\in S]} \\le e^{\\varepsilon}$$" in text
    assert re.search(r"^> \*\*Ataque diferencial\.\*\*", text, re.M), "una caja es una cita"
    assert "Porque una garantía promedio se rompe" in text, "la respuesta de una pregunta se lee"
    assert "<details><summary>Pista 1 de 3</summary>" in text


def test_a_drawn_diagram_is_an_image_in_the_guided_notebook(deck, index, dist_dir):
    """The round's sequence diagram (an SVG on its slide) is under its heading, with its label as alt text."""
    import base64
    import xml.etree.ElementTree as ElementTree

    slide = next(slide for slide in deck.slides if slide.attributes.get("id") == "ronda-completa")
    label = re.search(r'aria-label="([^"]+)"', slide.source).group(1)
    chapter = next(chapter for chapter in index["chapters"] if slide.file.name in chapter["files"])
    cells = read_notebook(dist_dir, chapter["notebooks"]["guided"]).cells
    heading = next(position for position, cell in enumerate(cells) if cell.source.startswith("## Una ronda completa"))
    drawing = cells[heading + 1]
    assert (drawing.cell_type, drawing.id) == ("markdown", "ronda-completa-dibujo")
    assert drawing.source == f"![{label}](attachment:ronda-completa-dibujo.svg)"
    svg = base64.b64decode(drawing.attachments["ronda-completa-dibujo.svg"]["image/svg+xml"]).decode("utf-8")
    root = ElementTree.fromstring(svg)   # a file of its own: well formed, namespaced, sized
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert (root.get("width"), root.get("height")) == ("1160", "540")
    assert "actualización enmascarada (SecAgg)" in svg
    # The cover's drawing is decoration (aria-hidden): no notebook shows it.
    for chapter in index["chapters"]:
        for relative in chapter["notebooks"].values():
            attached = [cell.id for cell in read_notebook(dist_dir, relative).cells if cell.get("attachments")]
            assert attached == (["ronda-completa-dibujo"] if relative == chapter["notebooks"]["guided"]
                                and slide.file.name in chapter["files"] else [])


# What only the deck has: its buttons, its slides, the browser that keeps an answer.
DECK_ONLY = re.compile(r"«Comprobar»|\bComprobar\b|diapositiva|este navegador|\bclic\b")


def test_the_worksheets_speak_of_the_notebook_not_of_the_deck(index, dist_dir):
    for chapter in index["chapters"]:
        for flavour in ("student", "solution"):
            notebook = read_notebook(dist_dir, chapter["notebooks"][flavour])
            text = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "markdown")
            assert DECK_ONLY.findall(text) == [], f"{chapter['name']} {flavour}"


def test_the_worksheets_hold_only_the_exercises(index, dist_dir, deck):
    exercises = {exercise.id: exercise for exercise in deck.exercises}
    for chapter in index["chapters"]:
        student = read_notebook(dist_dir, chapter["notebooks"]["student"])
        solution = read_notebook(dist_dir, chapter["notebooks"]["solution"])
        for notebook, solved in ((student, False), (solution, True)):
            marked = [cell for cell in notebook.cells if cell.cell_type == "code"
                      and {"cell", "challenge"} & set(cell.metadata.get("dpdeck", {}))]
            assert [cell.id for cell in marked] == chapter["exercises"]
            for cell in marked:
                exercise = exercises[cell.id]
                if exercise.is_challenge:
                    assert ('"assumption": ""' in cell.source) is not solved
                else:
                    assert cell.source == (exercise.solution_code if solved else exercise.cell.source)
        assert "Pista 1 de" in "\n".join(cell.source for cell in student.cells)
        assert "Solución explicada" not in "\n".join(cell.source for cell in student.cells)


def test_building_twice_gives_the_same_notebooks(tmp_path, deck):
    from deckbuild.notebooks import write_notebooks

    write_notebooks(deck, tmp_path / "a", wheel="wheels/dpdeck.whl")
    write_notebooks(deck, tmp_path / "b", wheel="wheels/dpdeck.whl")
    first = {path.relative_to(tmp_path / "a"): path.read_bytes() for path in (tmp_path / "a").rglob("*") if path.is_file()}
    second = {path.relative_to(tmp_path / "b"): path.read_bytes() for path in (tmp_path / "b").rglob("*") if path.is_file()}
    assert first == second


# ------------------------------------------------------------ executed


# Notebooks run a few at a time: most of a notebook's time is its kernel starting.
CONCURRENT_NOTEBOOKS = 3


def environment_with_the_wheel(dist_dir: Path, folder: Path) -> dict:
    """This process' environment with dist/'s dpdeck wheel, unpacked and compiled, first on the path (as pip
    would put it: pip writes the bytecode when it installs; without it every kernel compiles what it imports)."""
    wheel = next((dist_dir / "wheels").glob("dpdeck-*.whl"))
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(folder)
    assert compileall.compile_dir(folder, quiet=1)
    environment = {**os.environ, "PYTHONPATH": str(folder)}
    found = subprocess.run([sys.executable, "-c", "import dpdeck; print(dpdeck.__file__)"], env=environment,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert Path(found).is_relative_to(folder), found
    return environment


def executed_notebooks(dist_dir: Path, index: dict, folder: Path) -> dict:
    """Every notebook of dist/, run top to bottom by nbclient: {(chapter, flavour): (notebook, seconds)}."""
    import asyncio

    environment = environment_with_the_wheel(dist_dir, folder / "rueda")

    async def run(key, relative, gate):
        notebook = read_notebook(dist_dir, relative)
        work = folder / key[0] / key[1]
        work.mkdir(parents=True)
        async with gate:
            started = time.perf_counter()
            client = nbclient.NotebookClient(notebook, timeout=SECONDS_PER_NOTEBOOK, kernel_name="python3",
                                             resources={"metadata": {"path": str(work)}})
            await client.async_execute(env=environment)
            return key, (notebook, time.perf_counter() - started)

    async def run_all():
        gate = asyncio.Semaphore(CONCURRENT_NOTEBOOKS)
        jobs = [run((chapter["name"], flavour), relative, gate)
                for chapter in index["chapters"] for flavour, relative in chapter["notebooks"].items()]
        return dict(await asyncio.gather(*jobs))

    # In a thread of its own: Playwright's sync API may already run an event loop in this one.
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(lambda: asyncio.run(run_all())).result()


@pytest.fixture(scope="module")
def executed(dist_dir, index, tmp_path_factory, request):
    started = time.perf_counter()
    runs = executed_notebooks(dist_dir, index, tmp_path_factory.mktemp("cuadernos"))
    lines = [f"{len(runs)} cuadernos ejecutados con nbclient en {time.perf_counter() - started:.1f} s "
             f"(de a {CONCURRENT_NOTEBOOKS}; cada uno:)"]
    lines += [f"  {seconds:5.1f} s  {name}/{flavour}" for (name, flavour), (_, seconds) in runs.items()]
    show_to_person(request, lines)
    return {key: notebook for key, (notebook, _) in runs.items()}


def outputs_of(cell, output_type=None):
    return [output for output in cell.get("outputs", []) if output_type is None or output.output_type == output_type]


def test_every_notebook_runs_top_to_bottom_without_an_error(executed):
    errors = {key: [output.ename for cell in notebook.cells for output in outputs_of(cell, "error")]
              for key, notebook in executed.items()}
    assert {key: names for key, names in errors.items() if names} == {}
    assert len(executed) == 3 * len({name for name, _ in executed})


def test_figures_appear_under_jupyter(executed, deck):
    declared = {cell.id: cell.figures for cell in deck.cells}
    shown = {}
    for (name, flavour), notebook in executed.items():
        if flavour != "guided":
            continue
        for cell in notebook.cells:
            cell_id = cell.metadata.get("dpdeck", {}).get("cell")
            if cell_id:
                shown[cell_id] = sum("image/png" in output.get("data", {}) for output in outputs_of(cell))
    assert shown == {cell_id: declared[cell_id] for cell_id in shown}
    assert sum(shown.values()) >= 10


def check_outputs(notebook) -> list[str]:
    """The text each check cell printed (its Verdict's repr)."""
    texts = []
    for cell in notebook.cells:
        if "checks" in cell.metadata.get("dpdeck", {}):
            results = outputs_of(cell, "execute_result")
            texts.append(results[0]["data"]["text/plain"] if results else "")
    return texts


def test_solved_exercises_pass_their_checks_and_blank_ones_do_not(executed):
    for (name, flavour), notebook in executed.items():
        verdicts = check_outputs(notebook)
        assert verdicts, (name, flavour)
        if flavour == "solution":
            assert all(text.startswith("✓ ¡Correcto!") for text in verdicts), (name, verdicts)
        else:
            assert all(text.startswith("✗ Todavía no") for text in verdicts), (name, verdicts)


def test_the_solved_challenge_exports_the_lab_with_its_extension(executed):
    exports = [cell for notebook in executed.values() for cell in notebook.cells
               if "exports" in cell.metadata.get("dpdeck", {})]
    assert exports
    printed = {"".join(output.text for output in outputs_of(cell, "stream")) for cell in exports}
    assert any("guardado en laboratorio-semilla-0.json" in text for text in printed)
    assert any("Completa student_extension" in text for text in printed)
