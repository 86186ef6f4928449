"""What a deck is: the typed records `read_deck` returns and the names of its Markdown's parts.

`Deck` → `Slide` → `Cell` (with its «Prueba esto» and its `Prediction`) and
`Exercise`, as the build's stages (typeset, prerender, predictions, notebooks,
render) take them; the names of the containers (`::: ejercicio`, `::: prueba`…)
and the labels the page and the notebooks show. `deckbuild.slides` reads them
from deck/slides/*.md and re-exports every name here (deck/README.md describes
the format).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .paths import display_path

SLIDE_ATTRIBUTES = ("class", "id")
CELL_OPTIONS = ("id", "figures", "layout", "timeout", "check")
CELL_LAYOUTS = ("side", "stack")
CELL_ID = re.compile(r"[a-z0-9-]+")
# Seconds the build lets one cell run (option timeout=…), and the most it accepts.
CELL_TIME_LIMIT = 60
CELL_TIME_LIMIT_MAX = 3600
BYTE_ORDER_MARK = "\ufeff"
# Characters no slide needs and an editor does not show: C0/C1 controls (but tab and
# line breaks), and separators markdown-it does not count as line breaks while
# Python's splitlines does, which would shift every line number after them.
HIDDEN_CHARACTERS = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u2028\u2029\ufeff]")

# Exercises (deck/README.md, «Exercises»): a task, a starter cell with `check=`,
# hints and a solution; the challenge has fields instead of a cell.
EXERCISE, CHALLENGE, HINT, SOLUTION = "ejercicio", "reto", "pista", "solucion"
# The challenge's id (where the page saves its answer) and its check in dpdeck.exercises.
CHALLENGE_ID = "reto-laboratorio"
# A cell's «Prueba esto» (deck/README.md, «Try this»): a `::: prueba` right after the cell's
# fence, what a student can change in it and what to look at. The page and the notebooks
# show it under this label.
PROMPT = "prueba"
PROMPT_LABEL = "Prueba esto"
# A cell's «Predice antes de ejecutar» (deck/README.md, «Predict, then run»): a `::: prediccion`
# right after the cell (in place of a `::: prueba`): a question and the choices of what it prints, each
# `- [ ] `texto``, the right one `- [x] `texto``. The build checks the marked one against what
# the cell prints (deckbuild.predictions).
PREDICTION = "prediccion"
PREDICTION_LABEL = "Predice antes de ejecutar"
PREDICTION_CHOICES = (2, 5)
PREDICTION_CHOICE = re.compile(r"- \[( |x|X)\] `([^`]+)`\s*$")


class MathKey(NamedTuple):
    """One expression to typeset: its TeX and whether it is displayed (`$$`) or inline."""

    tex: str
    display: bool


@dataclass(frozen=True)
class Prediction:
    """A `::: prediccion`: what the students choose before running its cell."""

    question: str                   # Markdown of the question
    choices: tuple[str, ...]        # what each choice says the cell prints, in order
    answer: int                     # index of the choice marked `[x]`
    line: int                       # 1-based line of its `::: prediccion`
    choice_lines: tuple[int, ...]   # 1-based line of each choice

    @property
    def answer_text(self) -> str:
        return self.choices[self.answer]


@dataclass(frozen=True)
class Cell:
    """A live Python cell: a ```python fence with its options."""

    id: str
    source: str                 # the code, without the fence lines
    file: Path
    line: int                   # 1-based line of the opening fence
    figures: int                # figures the cell declares it draws
    layout: str                 # "side" or "stack"
    options: dict[str, str]     # the options as written on the fence line
    time_limit: int = CELL_TIME_LIMIT   # seconds the build lets it run
    prompt: str | None = None   # Markdown of its `::: prueba`, what a student can try in it
    prompt_line: int | None = None   # 1-based line of that `::: prueba`
    prediction: Prediction | None = None   # its `::: prediccion`, what students predict before running it

    def where(self) -> str:
        return f"{display_path(self.file)}:{self.line}"

    def __hash__(self) -> int:   # a fence line is one cell
        return hash((self.file, self.line))

    @property
    def check(self) -> str | None:
        """The exercise check of a starter cell (`check=`), or None for a plain cell."""
        return self.options.get("check")


@dataclass(frozen=True)
class Exercise:
    """A `::: ejercicio` (task, starter cell, hints, solution) or the `::: reto` (task, hints, example)."""

    id: str                     # the starter cell's id; CHALLENGE_ID for the challenge
    check: str                  # its check in dpdeck.exercises.CHECKS
    file: Path
    line: int                   # 1-based line of its `:::` opening line
    task: str                   # Markdown of the task (what comes before the cell)
    cell: Cell | None           # the starter cell; None for the challenge
    hints: tuple[str, ...]      # Markdown of each `::: pista`, in order
    solution_code: str | None   # the Python of the `::: solucion`; None for the challenge
    solution_text: str          # the rest of the `::: solucion` (Markdown)
    # The challenge's example answer, by field of dpdeck.lab.EXTENSION_FIELDS (its `- **Rótulo:** …` items).
    example: dict[str, str] | None = field(default=None, compare=False)

    @property
    def is_challenge(self) -> bool:
        return self.cell is None

    def where(self) -> str:
        return f"{display_path(self.file)}:{self.line}"

    def __hash__(self) -> int:
        return hash((self.file, self.line))


@dataclass(frozen=True)
class Slide:
    """One reveal.js section: the Markdown between two `---` lines of a file."""

    file: Path
    line: int                   # 1-based line of its first block
    attributes: dict[str, str]  # from `<!-- .slide: key="value" -->`
    title: str                  # text of its `#` heading, or ""
    source: str                 # its Markdown as written
    cells: tuple[Cell, ...]
    tokens: tuple = field(repr=False, compare=False)   # markdown-it block tokens, for rendering
    exercise: Exercise | None = None                    # its `::: ejercicio` or `::: reto`, if any

    def __hash__(self) -> int:
        return hash((self.file, self.line))


@dataclass(frozen=True)
class Deck:
    """Every slide of a folder, in reading order (files sorted by name)."""

    title: str
    slides: tuple[Slide, ...]
    math: dict[MathKey, tuple[Path, int]]   # each expression and where it first appears

    @property
    def cells(self) -> tuple[Cell, ...]:
        return tuple(cell for slide in self.slides for cell in slide.cells)

    @property
    def exercises(self) -> tuple[Exercise, ...]:
        return tuple(slide.exercise for slide in self.slides if slide.exercise is not None)

    def find_cell(self, cell_id: str) -> Cell:
        for cell in self.cells:
            if cell.id == cell_id:
                return cell
        raise KeyError(cell_id)

