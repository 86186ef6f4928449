"""How the slides are written: the same rules on every slide and every cell.

* Shape rules every live cell follows: fixed seeds, parameters at the top, short
  enough to read on a projector, and the figures it declares.
* One number format (deck/README.md, «Numbers»): in prose and notes; the
  lecture's curly quotes; what a student types written as code; the deck's Spanish.
* Every «Prueba esto» asks to change what its cell defines.
* deck/ERRATA.md lists every departure from the lecture's text, and names
  existing slides.
* Every slide has notes with a question for the class.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deck_sources import SLIDES, all_cells, cell_blocks, deck


# ------------------------------------------------------------ cell shape


@pytest.mark.parametrize("cell_id", sorted(all_cells()))
def test_cell_is_short_enough_for_a_projector(cell_id):
    cell = all_cells()[cell_id]
    lines = cell["source"].split("\n")
    # An exercise's editor (the left of its slide) is as wide as a side cell's: a line of 60 fits.
    limit = 60 if "check" in cell else 59 if cell.get("layout", "side") == "side" else 100
    assert len(lines) <= 19, f"{cell_id}: {len(lines)} líneas"
    assert max(len(line) for line in lines) <= limit, f"{cell_id}: línea de más de {limit} caracteres"


@pytest.mark.parametrize("cell_id", sorted(all_cells()))
def test_random_cells_fix_their_seed(cell_id):
    source = all_cells()[cell_id]["source"]
    if "rng" in source:
        assert re.search(r"rng = np\.random\.default_rng\(\d+\)", source), cell_id
    assert "np.random.seed" not in source and "random.random(" not in source


@pytest.mark.parametrize("cell_id", sorted(all_cells()))
def test_cell_draws_the_figures_it_declares(cell_id):
    cell = all_cells()[cell_id]
    declared = int(cell.get("figures", "0"))
    draws = cell["source"].count("plot_")
    assert (declared > 0) == (draws > 0), cell_id


# ------------------------------------------------------------ typography


def code_lines(path: Path) -> set[int]:
    """1-based numbers of the lines the reader finds in code blocks (fences included) of a slide file."""
    lines = set()
    for slide in deck().slides:
        if slide.file.name == path.name:
            for token in slide.tokens:
                if token.type in ("fence", "code_block") and token.map:
                    lines.update(range(token.map[0] + 1, token.map[1] + 1))
    return lines


def prose_lines(path: Path):
    """(line number, text) of the slide file outside code cells, without inline code or HTML tags."""
    code = code_lines(path)
    for number, line in enumerate(path.read_text(encoding="utf-8").split("\n"), 1):
        if number not in code:
            yield number, re.sub(r"<[^>]*>|`[^`]*`", "", line)


@pytest.mark.parametrize("path", sorted(SLIDES.glob("*.md")), ids=lambda path: path.name)
def test_prose_quotes_with_the_lectures_curly_quotes(path):
    # Straight quotes belong to code only.
    straight = [f"{path.name}:{number}: {line.strip()}" for number, line in prose_lines(path) if '"' in line]
    assert straight == []


@pytest.mark.parametrize("path", sorted(SLIDES.glob("*.md")), ids=lambda path: path.name)
def test_prose_quotes_with_guillemets_and_english_quotes_only_inside(path):
    # One rule (RAE, and deck/ERRATA.md): «…» first, “…” inside them.
    depth, problems = 0, []
    for number, line in prose_lines(path):
        for character in line:
            if character == "«":
                depth += 1
            elif character == "»":
                depth -= 1
            elif character == "“" and depth == 0:
                problems.append(f"{path.name}:{number}: {line.strip()[:70]}")
        if depth < 0:
            problems.append(f"{path.name}:{number}: «»» sin abrir")
            depth = 0
    assert problems == [] and depth == 0


# Labels that are not numbers: «Teorema 3.6», «Definición 2.4» (the book's own numbering), and in
# a reference its identifiers (DOI 10.1145/3133956.3133982, arXiv:1602.05629) and a version in a
# title (MacOS 10.12).
REFERENCE_NUMBER = re.compile(r"(Teoremas?|Corolario|Definición|Proposición|Sección|sección|cap\.) \d+\.\d+"
                              r"|\bDOI \S+|\barXiv:\d{4}\.\d{4,5}|\bMacOS \d+\.\d+")


@pytest.mark.parametrize("path", sorted(SLIDES.glob("*.md")), ids=lambda path: path.name)
def test_prose_and_notes_follow_the_number_format(path):
    # Decimal comma (KaTeX «0{,}5»), thousands grouped with a space from five digits on, four
    # digits not grouped; what a student types is code («`1_000`»), so it is not prose.
    problems = []
    for number, line in prose_lines(path):
        text = REFERENCE_NUMBER.sub("", line)
        for pattern, what in [
            (r"\d\.\d", "punto decimal o miles con punto («5.000»)"),
            (r"(?<![\d,.{}])\d{5,}(?![\d}])", "cinco cifras o más sin agrupar"),
            (r"(?<![\d ,])\d \d{3}(?![\d ])", "cuatro cifras agrupadas"),
            (r"\d_\d", "«_» fuera del código"),
            (r"\d%", "«%» sin espacio"),
        ]:
            if re.search(pattern, text):
                problems.append(f"{path.name}:{number}: {what}: {line.strip()[:80]}")
    assert problems == []


def test_what_a_student_types_is_written_as_code():
    # «Pon b = 1.000» would be read by Python as 1.0: a value to type is code.
    invitations = []
    for path in sorted(SLIDES.glob("*.md")):
        for number, line in prose_lines(path):
            if re.search(r"\b(probar|cambiar|poner|agregar|bajar|subir|[Pp]rueba|[Cc]ambia|[Pp]on|[Aa]grega|[Bb]aja"
                         r"|[Ss]ube)\b[^.]*\b[a-zε]+ = \d", line):
                invitations.append(f"{path.name}:{number}: {line.strip()}")
    assert invitations == []


# ------------------------------------------------------------ «Prueba esto»

# What a «Prueba esto» asks, in the imperative a student reads: «Pon…», «Cambia…».
PROMPT_VERBS = ("Pon", "Cambia", "Agrega", "Sube", "Baja", "Quita", "Prueba")
# A name the prompt has the student change: `epsilon`, `epsilon = 5`, `eps_b, eps_suma = 0.05, 0.95`,
# `epsilon=0.1` (a keyword of a call in the cell).
PROMPT_NAMES = re.compile(r"`([A-Za-z_]\w*(?:, [A-Za-z_]\w*)*)(?: ?= ?[^`]+)?`")


def prompted_cells() -> list:
    return [cell for cell in deck().cells if cell.prompt is not None]


def test_every_invitation_of_the_notes_is_a_prompt_students_see():
    """The notes' «Invitar a…» cue points at the slide's «Prueba esto», which the students see.

    A suggestion to change a cell lives in its `::: prueba` (the page, the print
    and the notebook show it); the notes only point at it and say what comes out.
    """
    cued, prompted = set(), set()
    for slide in deck().slides:
        notes = re.search(r"^::: notes\n(.*?)\n:::$", slide.source, re.S | re.M)
        notes = " ".join(notes.group(1).split()) if notes else ""
        invitations = re.findall(r"Invitar a [^.]*", notes)
        where = f"{slide.file.name}:{slide.line}"
        for invitation in invitations:
            assert invitation.startswith("Invitar a hacer el «Prueba esto» de la celda"), (where, invitation)
            cued.add(where)
        if any(cell.prompt is not None for cell in slide.cells):
            prompted.add(where)
    assert cued == prompted
    assert len(prompted) >= 15


@pytest.mark.parametrize("cell_id", [cell.id for cell in prompted_cells()])
def test_a_prompt_asks_to_change_what_its_cell_defines(cell_id):
    cell = deck().find_cell(cell_id)
    text = " ".join(cell.prompt.split())
    assert text.startswith(PROMPT_VERBS), text
    assert "?" in text or "compara" in text, "dice qué mirar"
    assigned = set()
    for match in re.finditer(r"^\s*([A-Za-z_]\w*(?:, *[A-Za-z_]\w*)*) *=[^=]", cell.source, re.M):
        assigned.update(name.strip() for name in match.group(1).split(","))
    keywords = set(re.findall(r"\b([A-Za-z_]\w*)=[^=]", cell.source))
    names = [name.strip() for match in PROMPT_NAMES.finditer(text) for name in match.group(1).split(",")]
    assert names, "nombra en código lo que hay que cambiar"
    assert [name for name in names if name not in assigned | keywords] == []


# Words the deck's Spanish does without (an English or regional word, a capitalised adjective,
# a spelling the RAE no longer uses, a key the interface calls otherwise).
AVOIDED_WORDS = [
    (r"\b[Ss]lides\b", "diapositivas"),
    (r"\bdataset\b", "conjunto de datos"),
    (r"\bSpoiler\b", "adelanto"),
    (r"Ctrl\+Enter", "Intro"),
    (r"(?<![.:—] )(?<!^)\bGaussian[oa]s?\b", "gaussiano (adjetivo en minúscula)"),
    (r"\b[Pp]ost-?procesa", "posprocesamiento"),
    (r"\bmomios\b", "razón de probabilidades, chances"),
    (r"\b[Aa]rriba de\b|\b[Aa]bajo de\b", "por encima de, por debajo de"),
]


@pytest.mark.parametrize("path", sorted(SLIDES.glob("*.md")), ids=lambda path: path.name)
def test_prose_uses_the_decks_spanish(path):
    found = []
    for number, line in prose_lines(path):
        if line.startswith("<!--"):
            continue  # slide attributes: ids are identifiers, not prose
        for pattern, instead in AVOIDED_WORDS:
            if re.search(pattern, line.strip()):
                found.append(f"{path.name}:{number}: «{line.strip()[:60]}» → {instead}")
    assert found == []


# ---------------------------------------------------------------- errata

ERRATA = Path(__file__).resolve().parents[1] / "deck" / "ERRATA.md"


def slide_ids() -> dict:
    """Slide id → the slide's Markdown."""
    return {slide.attributes["id"]: slide.source for slide in deck().slides if "id" in slide.attributes}


def errata_rows() -> list[tuple[str, str]]:
    """(section, slide id) of every row of deck/ERRATA.md's tables."""
    rows, section = [], ""
    for line in ERRATA.read_text(encoding="utf-8").split("\n"):
        if line.startswith("## "):
            section = line[3:].strip()
        match = re.match(r"\| `([^`]+)` \|", line)
        if match:
            rows.append((section, match.group(1)))
    return rows


def test_every_errata_entry_names_an_existing_slide():
    ids = slide_ids()
    rows = errata_rows()
    assert len(rows) >= 10
    assert [slide for _, slide in rows if slide not in ids] == []


def test_every_mathematical_correction_is_in_its_slides_notes_and_in_the_errata():
    ids = slide_ids()
    corrected = {slide for section, slide in errata_rows() if section == "Correcciones matemáticas"}
    noted = {slide_id for slide_id, slide in ids.items() if "El texto original decía" in slide}
    assert corrected == noted
    for slide_id in noted:
        notes = re.search(r"^::: notes\n(.*?)\n:::$", ids[slide_id], re.S | re.M).group(1)
        assert re.search(r"El texto original decía .+; se corrigió porque", " ".join(notes.split())), slide_id


def test_the_number_format_rule_is_written_down():
    readme = (SLIDES.parent / "README.md").read_text(encoding="utf-8")
    assert "## Numbers" in readme and "dpdeck.numbers" in readme


# ------------------------------------------------------------ speaker notes


@pytest.mark.parametrize("path", sorted(SLIDES.glob("*.md")), ids=lambda path: path.name)
def test_every_slide_has_notes_with_a_question_for_the_class(path):
    missing = []
    for slide in deck().slides:
        if slide.file.name != path.name:
            continue
        notes = re.search(r"^::: notes\n(.*?)\n:::$", slide.source, re.S | re.M)
        if not notes or "¿" not in notes.group(1) or len(notes.group(1)) < 150:
            missing.append(slide.title or slide.source[:40])
    assert missing == []
