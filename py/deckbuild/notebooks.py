"""The chapters as Jupyter notebooks, three per chapter, from the same slide sources.

Stage: `Deck` → `Notebooks` (out/notebooks/<capítulo>/*.ipynb and
out/notebooks/index.json). A chapter is a slide file with an exercise; a file
without one (the cover) opens the next chapter. Each chapter gets:

* ``notebook.ipynb``: the lecture, guided: each slide's text as Markdown
  (math kept as ``$…$``, speaker notes left out, boxes as quotes), each
  drawing the slide shows as a figure (an ``<svg role="img">`` becomes an
  image attached to its Markdown cell, with its ``aria-label`` as the
  alternative text; a decorative one, ``aria-hidden``, is left out) and each
  cell as a code cell, followed by its «Prueba esto» as a Markdown cell;
  its exercises as in the deck (task, starter code, a check cell, hints
  folded);
* ``notebook_student.ipynb``: the worksheet: only the exercises, blank
  (starter code, check cell, hints);
* ``notebook_solution.ipynb``: the worksheet solved: each exercise with its
  solution code, its check and its explanation.

Every notebook starts with ``%matplotlib inline`` so figures show under
Jupyter, is valid for ``nbformat`` and has stable cell ids (the same slides
give the same bytes). Code cells carry ``metadata.dpdeck`` (``cell``,
``check``, ``challenge``): the page uses it to put a student's edits into the
notebook they download; a cell's «Prueba esto» carries ``prompt`` (the cell's id), its «Predice antes
de ejecutar» ``prediction`` (before the cell) and ``answer`` (after it).
"""

from __future__ import annotations

import base64
import json
import re
from dataclasses import dataclass
from pathlib import Path

from .deckmodel import CHALLENGE, EXERCISE, PREDICTION, PREDICTION_LABEL, PROMPT, PROMPT_LABEL, Cell, Deck, Exercise, Slide
from .errors import BuildError
from .files import ensure_dir

FLAVOURS = {
    "guided": "notebook.ipynb",
    "student": "notebook_student.ipynb",
    "solution": "notebook_solution.ipynb",
}
FOLDER = "notebooks"
INDEX = "index.json"

KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
SETUP_SOURCE = "%matplotlib inline"
SETUP_NOTE = {
    "guided": "Cuaderno guiado del capítulo: el texto de la clase y cada celda, en orden.",
    "student": "Ejercicios del capítulo para resolver: completa cada celda y ejecuta su comprobación.",
    "solution": "Ejercicios del capítulo resueltos: la solución de referencia, comprobada y explicada.",
}
HEADING_SUFFIX = {"guided": "", "student": ": ejercicios", "solution": ": soluciones"}
# Its own cell (id "instalar", metadata.dpdeck.install = the wheel's path in dist/): the page puts
# the deck's address before that path in the notebook a student downloads.
INSTALL_NOTE = ("*Para ejecutarlo: Python ≥ 3.11 con el paquete `dpdeck`, que el mazo trae como rueda "
                "(`pip install {wheel}`), o `pip install -e .` en la carpeta del proyecto. "
                "Después, las celdas de arriba abajo (Mayús+Intro).*")
INSTALL_CELL = "instalar"
# Containers whose content is the lecture's text; boxes become quotes, the rest is read through.
BOXES = ("definicion", "idea", "aviso")
READ_THROUGH = ("fragment", "columns", "column")
# Notes are the lecturer's; a `::: prueba` and a `::: prediccion` are written with their cell.
SKIPPED = ("notes", PROMPT, PREDICTION)
# Inline HTML the slides use for typesetting only (`<span class="nowrap">`).
INLINE_TAGS = re.compile(r"</?span\b[^>]*>")
# A drawing the slide shows (the sequence diagram of a round), as opposed to a decorative one.
FIGURE_SVG = re.compile(r"^\s*<svg\b[^>]*\brole=\"img\"[^>]*>.*</svg>\s*$", re.S)
SVG_LABEL = re.compile(r"\baria-label=\"([^\"]+)\"")
SVG_NAMESPACE = "http://www.w3.org/2000/svg"


@dataclass(frozen=True)
class Chapter:
    """A chapter's notebooks: where they are (relative to out/) and what they hold."""

    name: str                     # the stem of its file with exercises: "01-privacidad"
    title: str
    files: tuple[str, ...]        # the slide files it covers, in order
    notebooks: dict[str, str]     # flavour → path under out/
    cells: tuple[str, ...]        # ids of the deck's cells in its guided notebook
    exercises: tuple[str, ...]    # ids of its exercises


@dataclass(frozen=True)
class Notebooks:
    chapters: tuple[Chapter, ...]

    def chapter_of(self, file_name: str) -> Chapter | None:
        return next((chapter for chapter in self.chapters if file_name in chapter.files), None)


# ------------------------------------------------------------------ chapters


def group_chapters(deck: Deck) -> list[list[Slide]]:
    """Slides grouped by chapter: each file with an exercise closes one; files without join the next."""
    files: dict[Path, list[Slide]] = {}
    for slide in deck.slides:
        files.setdefault(slide.file, []).append(slide)
    chapters, pending = [], []
    for slides in files.values():
        pending.extend(slides)
        if any(slide.exercise is not None for slide in slides):
            chapters.append(pending)
            pending = []
    if pending and chapters:
        chapters[-1].extend(pending)
    return chapters


OPENING_CLASSES = ("capitulo", "portada")


def chapter_title(slides: list[Slide], name: str) -> str:
    """The chapter's title slide in its own file («1 · Privacidad diferencial»), else its file's name («Cierre»)."""
    for slide in slides:
        if slide.file.stem == name and slide.attributes.get("class") == "capitulo" and slide.title:
            return strip_tags(slide.title)
    return re.sub(r"^\d+-", "", name).replace("-", " ").capitalize()


# ------------------------------------------------------------------ Markdown


class SlideText:
    """A slide's Markdown as the notebook shows it, from the slide file's lines."""

    def __init__(self, lines: list[str]):
        self.lines = lines

    def between(self, start: int, end: int) -> str:
        return "\n".join(self.lines[start:end])

    def blocks(self, tokens: list, *, demote: bool) -> list[tuple[str, object]]:
        """(kind, content) in order: ("md", text), ("cell", Cell line), ("figure", (svg, alt)) or ("exercise", None)."""
        out: list[tuple[str, object]] = []
        index = 0
        while index < len(tokens):
            token = tokens[index]
            end = matching_close(tokens, index)
            if token.type == "container_open":
                if token.info in (EXERCISE, CHALLENGE):
                    out.append(("exercise", None))
                elif token.info in BOXES:
                    # One quote for the whole box: its paragraphs and formulas stay together.
                    for kind, content in merge_markdown(self.blocks(tokens[index + 1:end], demote=demote)):
                        out.append(("md", quote(content)) if kind == "md" else (kind, content))
                elif token.info in READ_THROUGH:
                    out.extend(self.blocks(tokens[index + 1:end], demote=demote))
                elif token.info not in SKIPPED:
                    raise BuildError(f"contenedor «::: {token.info}» sin versión para el cuaderno")
            elif token.type == "fence" and token.info.strip().split()[:1] and \
                    token.info.strip().split()[0] == "python" and "id=" in token.info:
                out.append(("cell", token.map[0] + 1))
            elif token.type == "html_block":
                # Slide attributes and decorative drawings (the cover's) are the slide's, not the text's;
                # a drawing with a role and a label is part of what the slide says.
                drawing = figure_of(self.between(*token.map))
                if drawing is not None:
                    out.append(("figure", drawing))
            elif token.map:
                text = self.between(*token.map)
                if token.type == "heading_open" and demote:
                    text = "#" + text
                out.append(("md", INLINE_TAGS.sub("", text)))
            index = end + 1
        return out


def matching_close(tokens: list, index: int) -> int:
    """Index of the token that closes tokens[index] (itself if it does not open anything)."""
    token = tokens[index]
    if token.nesting != 1:
        return index
    depth = 0
    for position in range(index, len(tokens)):
        depth += tokens[position].nesting
        if depth == 0:
            return position
    return len(tokens) - 1


def merge_markdown(blocks: list[tuple[str, object]]) -> list[tuple[str, object]]:
    """Consecutive Markdown blocks joined into one (separated by a blank line)."""
    merged: list[tuple[str, object]] = []
    for kind, content in blocks:
        if kind == "md" and merged and merged[-1][0] == "md":
            merged[-1] = ("md", f"{merged[-1][1]}\n\n{content}")
        else:
            merged.append((kind, content))
    return merged


def figure_of(html: str) -> tuple[str, str] | None:
    """(standalone SVG, alternative text) of a slide's drawing, or None if the HTML is not one.

    Inline in a page an ``<svg>`` needs no namespace and may take the slide's
    width (``width="100%"``); as an image file it needs the namespace and a size
    of its own, the one its ``viewBox`` draws.
    """
    if not FIGURE_SVG.match(html):
        return None
    label = SVG_LABEL.search(html)
    if label is None:
        raise BuildError("un dibujo con role=\"img\" necesita aria-label: es su texto en el cuaderno")
    svg = html.strip()
    opening, rest = svg.split(">", 1)
    opening = re.sub(r'\s(?:width|height)="[^"]*%"', "", opening)
    box = re.search(r'viewBox="\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)[\s,]+([\d.]+)\s*"', opening)
    if box and " width=" not in opening:
        opening += f' width="{box.group(1)}" height="{box.group(2)}"'
    if "xmlns=" not in opening:
        opening = opening.replace("<svg", f'<svg xmlns="{SVG_NAMESPACE}"', 1)
    return f"{opening}>{rest}", label.group(1)


def quote(text: str) -> str:
    return "\n".join(f"> {line}" if line else ">" for line in text.split("\n"))


def strip_tags(text: str) -> str:
    return INLINE_TAGS.sub("", text)


# ------------------------------------------------------------------ cells


class NotebookWriter:
    """Builds one notebook's cells with stable ids."""

    def __init__(self, flavour: str, chapter: str):
        from nbformat import v4

        self.v4 = v4
        self.flavour = flavour
        self.chapter = chapter
        self.cells: list = []
        self.markdown_count = 0
        self.pending: list[str] = []

    def markdown(self, text: str) -> None:
        if text.strip():
            self.pending.append(text.strip("\n"))

    def flush(self) -> None:
        if not self.pending:
            return
        self.markdown_count += 1
        self.cells.append(self.v4.new_markdown_cell("\n\n".join(self.pending), id=f"texto-{self.markdown_count}"))
        self.pending = []

    def note(self, text: str, *, cell_id: str, metadata: dict) -> None:
        """A Markdown cell of its own, with an id and metadata the page can find."""
        self.flush()
        cell = self.v4.new_markdown_cell(text, id=cell_id)
        cell.metadata["dpdeck"] = metadata
        self.cells.append(cell)

    def image(self, svg: str, *, alt: str, cell_id: str) -> None:
        """A Markdown cell that shows a drawing: the SVG attached to the cell, its label as the alt text."""
        self.flush()
        taken = {cell.id for cell in self.cells}
        cell_id = next(f"{cell_id}-{n}" if n > 1 else cell_id for n in range(1, len(taken) + 2)
                       if (f"{cell_id}-{n}" if n > 1 else cell_id) not in taken)
        name = f"{cell_id}.svg"
        data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
        alt = alt.replace("[", "(").replace("]", ")")
        cell = self.v4.new_markdown_cell(f"![{alt}](attachment:{name})", id=cell_id,
                                         attachments={name: {"image/svg+xml": data}})
        self.cells.append(cell)

    def code(self, source: str, *, cell_id: str, metadata: dict | None = None) -> None:
        self.flush()
        cell = self.v4.new_code_cell(source, id=cell_id)
        if metadata:
            cell.metadata["dpdeck"] = metadata
        self.cells.append(cell)

    def notebook(self, title: str):
        self.flush()
        notebook = self.v4.new_notebook(cells=self.cells)
        notebook.metadata["kernelspec"] = dict(KERNELSPEC)
        notebook.metadata["language_info"] = {"name": "python"}
        notebook.metadata["dpdeck"] = {"chapter": self.chapter, "flavour": self.flavour, "title": title}
        return notebook


def check_source(check: str) -> str:
    return f'from dpdeck.exercises import check\ncheck("{check}", globals())'


def hints_markdown(exercise: Exercise) -> str:
    count = len(exercise.hints)
    return "\n\n".join(f"<details><summary>Pista {number} de {count}</summary>\n\n{strip_tags(hint)}\n\n</details>"
                       for number, hint in enumerate(exercise.hints, 1))


def challenge_source(values: dict[str, str] | None) -> str:
    """The challenge as code: `semilla` and `student_extension`, empty or with the example answer."""
    from dpdeck.lab import EXTENSION_FIELDS

    lines = ["semilla = 0   # la semilla del laboratorio", "student_extension = {"]
    for key, (label, prompt) in EXTENSION_FIELDS.items():
        value = (values or {}).get(key, "")
        lines.append(f"    # {label}: {prompt}")
        lines.append(f"    {json.dumps(key)}: {json.dumps(value, ensure_ascii=False)},")
    lines.append("}")
    return "\n".join(lines)


EXPORT_SOURCE = """from dpdeck.exercises import export_lab

exportado = export_lab(seed=semilla, extension=student_extension)
if exportado["json"] is None:
    print("Completa student_extension para exportar el laboratorio.")
else:
    with open(exportado["filename"], "w", encoding="utf-8") as archivo:
        archivo.write(exportado["json"])
    print("Laboratorio con tu extensión guardado en", exportado["filename"])"""


# A prompt that opens with a list, a quote, a heading or a formula gets its label on a line of its own.
BLOCK_START = re.compile(r"^(?:[-*+>#|]|\d+[.)]\s|\$\$)")


def prompt_markdown(cell: Cell) -> str:
    """A cell's «Prueba esto» as the notebook shows it, right after the cell."""
    text = strip_tags(cell.prompt)
    separator = "\n\n" if BLOCK_START.match(text) else " "
    return f"**{PROMPT_LABEL}.**{separator}{text}"


def prediction_markdown(cell: Cell) -> str:
    """A cell's «Predice antes de ejecutar» as the notebook asks it, right before the cell: question and choices."""
    prediction = cell.prediction
    choices = "\n".join(f"{letter}) `{choice}`" for letter, choice in zip("abcde", prediction.choices))
    return f"**{PREDICTION_LABEL}.** {strip_tags(prediction.question)}\n\n{choices}"


def answer_markdown(cell: Cell) -> str:
    """…and its answer, right after the cell, folded: what the cell prints."""
    prediction = cell.prediction
    letter = "abcde"[prediction.answer]
    return (f"<details><summary>La respuesta</summary>\n\n{letter}) la celda imprime `{prediction.answer_text}`."
            "\n\n</details>")


def add_exercise(writer: NotebookWriter, exercise: Exercise, *, solved: bool, with_hints: bool) -> None:
    writer.markdown(strip_tags(exercise.task))
    if exercise.is_challenge:
        writer.code(challenge_source(exercise.example if solved else None), cell_id=exercise.id,
                    metadata={"challenge": exercise.id, "check": exercise.check})
    else:
        source = exercise.solution_code if solved else exercise.cell.source
        writer.code(source, cell_id=exercise.id, metadata={"cell": exercise.id, "check": exercise.check})
    writer.code(check_source(exercise.check), cell_id=f"{exercise.id}-comprobar",
                metadata={"checks": exercise.id})
    if exercise.is_challenge:
        writer.code(EXPORT_SOURCE, cell_id=f"{exercise.id}-exportar", metadata={"exports": exercise.id})
    if solved:
        writer.markdown(("**Un ejemplo de respuesta.**\n\n" if exercise.is_challenge else "**Solución explicada.** ")
                        + strip_tags(exercise.solution_text))
    elif with_hints:
        writer.markdown(hints_markdown(exercise))


# ------------------------------------------------------------------ notebooks


def build_notebook(flavour: str, name: str, title: str, slides: list[Slide], texts: dict[Path, SlideText], *,
                   wheel: str):
    writer = NotebookWriter(flavour, name)
    # The guided notebook's first slide is often the chapter's title slide: then it gives the heading.
    opens_itself = flavour == "guided" and slides[0].attributes.get("class") in OPENING_CLASSES
    if not opens_itself:
        writer.markdown(f"# {title}{HEADING_SUFFIX[flavour]}")
    writer.markdown(f"*{SETUP_NOTE[flavour]}*")
    writer.note(INSTALL_NOTE.format(wheel=wheel), cell_id=INSTALL_CELL, metadata={"install": wheel})
    writer.code(SETUP_SOURCE, cell_id="preparar")
    cells_by_line = {(cell.file, cell.line): cell for slide in slides for cell in slide.cells}
    for slide in slides:
        if flavour != "guided":
            if slide.exercise is None:
                continue
            writer.markdown(f"## {strip_tags(slide.title)}" if slide.title else "")
            add_exercise(writer, slide.exercise, solved=flavour == "solution", with_hints=True)
            continue
        demote = slide.attributes.get("class", "") not in OPENING_CLASSES
        for kind, content in texts[slide.file].blocks(list(slide.tokens), demote=demote):
            if kind == "md":
                writer.markdown(content)
            elif kind == "cell":
                cell = cells_by_line[(slide.file, content)]
                if cell.prediction is not None:
                    writer.note(prediction_markdown(cell), cell_id=f"{cell.id}-prediccion",
                                metadata={"prediction": cell.id})
                writer.code(cell.source, cell_id=cell.id, metadata={"cell": cell.id})
                if cell.prediction is not None:
                    writer.note(answer_markdown(cell), cell_id=f"{cell.id}-respuesta", metadata={"answer": cell.id})
                if cell.prompt is not None:
                    writer.note(prompt_markdown(cell), cell_id=f"{cell.id}-prueba", metadata={"prompt": cell.id})
            elif kind == "figure":
                svg, alt = content
                writer.image(svg, alt=alt, cell_id=f"{slide.attributes.get('id', name)}-dibujo")
            elif kind == "exercise":
                add_exercise(writer, slide.exercise, solved=False, with_hints=True)
        writer.flush()   # each slide starts its own Markdown cell
    return writer.notebook(title)


def write_notebooks(deck: Deck, out: Path, *, wheel: str) -> Notebooks:
    """Write every chapter's three notebooks and notebooks/index.json under out/; return where they are.

    ``wheel`` is the dpdeck wheel's path in out/, which each notebook tells how to install.
    """
    import nbformat

    texts = {slide.file: SlideText(slide.file.read_text(encoding="utf-8").splitlines()) for slide in deck.slides}
    chapters = []
    for slides in group_chapters(deck):
        name = next(slide.file.stem for slide in reversed(slides) if slide.exercise is not None)
        title = chapter_title(slides, name)
        folder = ensure_dir(out / FOLDER / name)
        paths = {}
        for flavour, file_name in FLAVOURS.items():
            notebook = build_notebook(flavour, name, title, slides, texts, wheel=wheel)
            try:
                nbformat.validate(notebook)
            except nbformat.ValidationError as error:
                raise BuildError(f"el cuaderno {name}/{file_name} no es válido para nbformat: {error.message}")
            (folder / file_name).write_text(nbformat.writes(notebook) + "\n", encoding="utf-8")
            paths[flavour] = f"{FOLDER}/{name}/{file_name}"
        files = tuple(dict.fromkeys(slide.file.name for slide in slides))
        chapters.append(Chapter(name, title, files, paths,
                                tuple(cell.id for slide in slides for cell in slide.cells),
                                tuple(slide.exercise.id for slide in slides if slide.exercise is not None)))
    index = {"chapters": [{"name": chapter.name, "title": chapter.title, "files": list(chapter.files),
                           "notebooks": chapter.notebooks, "cells": list(chapter.cells),
                           "exercises": list(chapter.exercises)} for chapter in chapters]}
    ensure_dir(out / FOLDER)
    (out / FOLDER / INDEX).write_text(json.dumps(index, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return Notebooks(tuple(chapters))
