"""Slide sources (deck/slides/*.md) → typed `Deck`, `Slide` and `Cell` records.

This is the one reader of the slides' Markdown: the build, the tests and any
tool that needs the slides or their cells take them from `read_deck`.

    deck = read_deck(Path("deck/slides"))
    for cell in deck.cells:          # every cell, in reading order
        cell.id, cell.options, cell.source, cell.file, cell.line
    for exercise in deck.exercises:  # every `::: ejercicio` and the `::: reto`
        exercise.id, exercise.check, exercise.task, exercise.cell, exercise.hints, exercise.solution_code
    cell.prompt                      # the Markdown of its `::: prueba` («Prueba esto»), or None
    cell.prediction                  # its `::: prediccion` (question, choices, the one marked), or None

A bad source raises `SourceError` with the file and line of the problem: a
file that is not UTF-8, starts with a byte-order mark, holds control characters
or no slide at all, as well as a badly written cell, container or attribute.
"""

from __future__ import annotations

import html
import re
from dataclasses import replace
from pathlib import Path

# The records and the format's names are deckbuild.deckmodel's, re-exported: tests and tools
# that read the deck import them from here with read_deck.
from .deckmodel import (
    BYTE_ORDER_MARK,
    CELL_ID,
    CELL_LAYOUTS,
    CELL_OPTIONS,
    CELL_TIME_LIMIT,
    CELL_TIME_LIMIT_MAX,
    CHALLENGE,
    CHALLENGE_ID,
    EXERCISE,
    HIDDEN_CHARACTERS,
    HINT,
    PREDICTION,
    PREDICTION_CHOICE,
    PREDICTION_CHOICES,
    PREDICTION_LABEL,
    PROMPT,
    PROMPT_LABEL,
    SLIDE_ATTRIBUTES,
    SOLUTION,
    Cell,
    Deck,
    Exercise,
    MathKey,
    Prediction,
    Slide,
)
from .errors import BuildError, SourceError
from .markdown import CONTAINERS, is_fence_line, make_markdown
from .paths import display_path
from .policy import describe_remote, find_remote_loads


def read_deck(slides_dir: Path) -> Deck:
    """Read and check every `*.md` of a folder; raise SourceError at the first problem."""
    slides_dir = Path(slides_dir)
    if not slides_dir.is_dir():
        raise BuildError(f"no existe la carpeta de diapositivas {display_path(slides_dir)}")
    # Hidden files are an editor's or a system's (".#01.md" locks, "._01.md" on macOS), never slides.
    sources = sorted(path for path in slides_dir.glob("*.md") if not path.name.startswith("."))
    if not sources:
        raise BuildError(f"no hay diapositivas *.md en {display_path(slides_dir)}")
    md = make_markdown()
    slides: list[Slide] = []
    math: dict[MathKey, tuple[Path, int]] = {}
    seen_ids: dict[str, str] = {}
    for path in sources:
        check_inside_folder(path, slides_dir)
        slides.extend(read_slide_file(md, path, math, seen_ids))
    check_exercise_names([slide.exercise for slide in slides if slide.exercise is not None])
    title = next((slide.title for slide in slides if slide.title), "")
    return Deck(title, tuple(slides), math)


def check_inside_folder(path: Path, slides_dir: Path) -> None:
    """A slide file is a file of the slides' folder: a link that leads out of it is refused.

    A link to a file elsewhere (`01.md -> /etc/passwd`) would publish that file
    in index.html; links that stay inside the folder are read as the file they name.
    """
    if not path.is_symlink():
        return
    target = path.resolve()
    if target.exists() and not target.is_relative_to(slides_dir.resolve()):
        raise SourceError(path, 1, f"es un enlace a {target}, fuera de la carpeta de diapositivas: la "
                                   "construcción no publica archivos de otras carpetas (copia el archivo dentro)")


def read_source_text(path: Path) -> str:
    """A slide file's text with "\\n" line ends, or SourceError at the line of what is wrong with it."""
    if path.is_dir():
        raise SourceError(path, 1, "es una carpeta, no un archivo de diapositivas (cámbiale el nombre)")
    if not path.exists():
        raise SourceError(path, 1, "no se puede leer: es un enlace a un archivo que no existe")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SourceError(path, 1, f"no se puede leer el archivo ({error.strerror or error})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise SourceError(path, line, f"el archivo no es UTF-8 válido (byte 0x{data[error.start]:02x} en la "
                                      f"columna {column}); guárdalo con la codificación UTF-8") from None
    if text.startswith(BYTE_ORDER_MARK):
        raise SourceError(path, 1, "el archivo empieza con una marca de orden de bytes (BOM, U+FEFF), que "
                                   "convertiría el título en un párrafo; guárdalo como «UTF-8» sin BOM")
    # markdown-it reads "\r\n" and a lone "\r" as line ends: so do the line numbers here.
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    hidden = HIDDEN_CHARACTERS.search(text)
    if hidden:
        line = text.count("\n", 0, hidden.start()) + 1
        column = hidden.start() - (text.rfind("\n", 0, hidden.start()) + 1) + 1
        raise SourceError(path, line, f"carácter invisible U+{ord(hidden.group()):04X} en la columna {column} "
                                      "(un carácter de control que ningún editor muestra); bórralo")
    if not text.strip():
        raise SourceError(path, 1, "el archivo está vacío: no tiene ninguna diapositiva "
                                   "(escribe al menos un título «# …» o bórralo)")
    return text


def read_slide_file(md, path: Path, math: dict, seen_ids: dict) -> list[Slide]:
    """One file's slides; records its math in `math` and its cell ids in `seen_ids`."""
    text = read_source_text(path)
    lines = text.split("\n")
    tokens = md.parse(text, {})
    cells_by_line = collect_cells_and_math(path, lines, tokens, math, seen_ids)
    attach_prompts(path, lines, tokens, cells_by_line)
    attach_predictions(path, lines, tokens, cells_by_line)
    exercises_by_line = collect_exercises(path, lines, tokens, cells_by_line, seen_ids)
    slides = []
    segments = split_slides(lines, tokens)
    for index, (start, end, slide_tokens) in enumerate(segments):
        attributes = read_slide_attributes(path, slide_tokens)
        titles = [token for token in slide_tokens if token.type == "heading_open" and token.tag == "h1"]
        if len(titles) > 1:
            raise SourceError(path, titles[1].map[0] + 1, "una diapositiva solo puede tener un título «#»")
        if not slide_tokens:
            if index == 0 and end == 1 and len(segments) > 2:
                raise SourceError(path, 1, "el archivo empieza con una línea «---»: ¿una cabecera YAML? "
                                           "Las diapositivas no la usan; la primera empieza en la línea 1")
            if index < len(segments) - 1:
                # Between two "---", or before the first one: almost always a slip.
                raise SourceError(path, end, "diapositiva vacía: no hay nada antes de esta línea «---» "
                                             + (f"desde la línea {start} " if start < end else "")
                                             + "(borra la línea, o escribe la diapositiva)")
            if not slides:
                raise SourceError(path, 1, "el archivo no tiene ninguna diapositiva, solo líneas «---»")
            continue   # a "---" that ends the file
        first = slide_tokens[0].map[0] + 1 if slide_tokens[0].map else start
        body = [token for token in slide_tokens if not is_slide_comment(token)]
        cells = tuple(cells_by_line[token.map[0] + 1] for token in body
                      if token.type == "fence" and token.map[0] + 1 in cells_by_line)
        exercises = [exercises_by_line[token.map[0] + 1] for token in body
                     if token.type == "container_open" and token.map[0] + 1 in exercises_by_line]
        if len(exercises) > 1:
            raise SourceError(path, exercises[1].line, "una diapositiva solo puede tener un ejercicio")
        source = "\n".join(lines[start - 1:end - 1]).strip("\n")
        slides.append(Slide(path, first, attributes, extract_title(body), source, cells, tuple(body),
                            exercises[0] if exercises else None))
    return slides


def collect_cells_and_math(path: Path, lines: list[str], tokens: list, math: dict,
                           seen_ids: dict) -> dict[int, Cell]:
    """Check one file's tokens; return its cells by fence line and record its math.

    A fence inside a `::: pista`, a `::: solucion` or a `::: prueba` is shown code, never a cell.
    """
    cells: dict[int, Cell] = {}
    containers: list[str] = []
    for token in tokens:
        if token.type == "fence":
            check_fence_closed(path, lines, token)
            info = token.info.strip()
            if info.split()[:1] and info.split()[0].startswith("python"):
                line = token.map[0] + 1
                if containers and containers[-1] in (HINT, SOLUTION, PROMPT, PREDICTION):
                    if info != "python":
                        raise SourceError(path, line, f"el código de una «::: {containers[-1]}» no es una celda: "
                                                      "escribe solo «```python», sin opciones")
                    continue
                cell = read_cell(path, token)
                if cell.check is not None and containers[-1:] != [EXERCISE]:
                    raise SourceError(path, line, "la opción check= solo va en la celda de un «::: ejercicio»")
                if cell.id in seen_ids:
                    raise SourceError(path, cell.line, f"id de celda repetido «{cell.id}» "
                                                       f"(ya usado en {seen_ids[cell.id]})")
                seen_ids[cell.id] = cell.where()
                cells[cell.line] = cell
        elif token.type == "container_open":
            line = token.map[0] + 1
            if token.info not in CONTAINERS:
                raise SourceError(path, line, f"contenedor desconocido «::: {token.info}» "
                                              f"(se admiten: {', '.join(CONTAINERS)})")
            if not token.meta.get("closed"):
                raise SourceError(path, line, f"contenedor «::: {token.info}» sin cerrar "
                                              "(falta la línea «:::» final)")
            check_container_place(path, line, token.info, containers)
            containers.append(token.info)
        elif token.type == "container_close":
            containers.pop()
        elif token.type == "math_block":
            math.setdefault(MathKey(token.content.strip(), True), (path, token.map[0] + 1))
        elif token.type == "html_block" and ".slide:" in token.content and not is_slide_comment(token):
            raise SourceError(path, token.map[0] + 1, "«<!-- .slide: … -->» mal formado")
        if token.type in ("html_block", "inline"):
            check_comments_closed(path, token)
            check_remote_loads(path, token)
        if token.type == "inline":
            for child_index, child in enumerate(token.children or []):
                if child.type in ("math_inline", "math_inline_double"):
                    key = MathKey(child.content.strip(), child.type == "math_inline_double")
                    math.setdefault(key, (path, find_inline_math_line(token, child_index)))
    return cells


def check_container_place(path: Path, line: int, name: str, open_containers: list[str]) -> None:
    """An exercise sits at the top of its slide and holds only hints and a solution; those only there."""
    parent = open_containers[-1] if open_containers else None
    if name in (EXERCISE, CHALLENGE) and parent is not None:
        raise SourceError(path, line, f"«::: {name}» no puede ir dentro de «::: {parent}»")
    if name in (HINT, SOLUTION) and parent not in (EXERCISE, CHALLENGE):
        raise SourceError(path, line, f"«::: {name}» solo va dentro de «::: {EXERCISE}» o «::: {CHALLENGE}»")
    if parent in (EXERCISE, CHALLENGE) and name not in (HINT, SOLUTION):
        raise SourceError(path, line, f"dentro de «::: {parent}» solo van el enunciado, la celda, "
                                      f"«::: {HINT}» y «::: {SOLUTION}» (no «::: {name}»)")
    if parent in (HINT, SOLUTION, PROMPT, PREDICTION):
        raise SourceError(path, line, f"«::: {parent}» no admite otros contenedores (encontré «::: {name}»)")


def attach_prompts(path: Path, lines: list[str], tokens: list, cells: dict[int, Cell]) -> None:
    """Give each cell its `::: prueba`: the block right after the cell's fence, in the same container.

    A prompt anywhere else (after text, after another prompt, before its cell) names no
    cell: it is refused with its line rather than shown to students detached from the
    code it asks them to change.
    """
    for index, token in enumerate(tokens):
        if token.type != "container_open" or token.info != PROMPT:
            continue
        line = token.map[0] + 1
        before = tokens[index - 1] if index else None
        if before is not None and before.type == "container_close" and before.info == PROMPT:
            raise SourceError(path, line, f"una celda tiene una sola «::: {PROMPT}»: junta las dos en una")
        if not (before is not None and before.type == "fence" and before.level == token.level
                and before.map[0] + 1 in cells):
            raise SourceError(path, line, f"«::: {PROMPT}» va justo después de la celda que propone cambiar "
                                          "(en la línea que sigue a su «```» de cierre, dentro del mismo "
                                          "contenedor): aquí no hay ninguna celda antes")
        body = container_body(lines, token)
        if not body.strip():
            raise SourceError(path, line, f"«::: {PROMPT}» vacía: escribe qué cambiar en la celda y qué mirar")
        cell_line = before.map[0] + 1
        cells[cell_line] = replace(cells[cell_line], prompt=body, prompt_line=line)


def attach_predictions(path: Path, lines: list[str], tokens: list, cells: dict[int, Cell]) -> None:
    """Give each cell its `::: prediccion`: the block right after the cell's fence (a cell has a
    prediction or a «Prueba esto», not both: both take the place of the cell's output or code).

    The question comes first (Markdown), then two to five choices, one per line:
    `- [ ] `what it prints``, and the right one `- [x] `…``. Which one is right is
    checked against the cell's output once it has run (deckbuild.predictions).
    """
    for index, token in enumerate(tokens):
        if token.type != "container_open" or token.info != PREDICTION:
            continue
        line = token.map[0] + 1
        fence = tokens[index - 1] if index else None
        if fence is not None and fence.type == "container_close" and fence.info in (PREDICTION, PROMPT):
            raise SourceError(path, line, f"una celda tiene una sola «::: {PREDICTION}», y no junto a una "
                                          f"«::: {PROMPT}»: las dos se muestran en el sitio de la celda")
        if not (fence is not None and fence.type == "fence" and fence.level == token.level
                and fence.map[0] + 1 in cells):
            raise SourceError(path, line, f"«::: {PREDICTION}» va justo después de la celda que pregunta (en la "
                                          "línea que sigue a su «```» de cierre, dentro del mismo contenedor): "
                                          "aquí no hay ninguna celda antes")
        cell_line = fence.map[0] + 1
        if cells[cell_line].check is not None:
            raise SourceError(path, line, f"«::: {PREDICTION}» no va en la celda de un ejercicio: "
                                          "el ejercicio ya tiene su «Comprobar»")
        prediction = read_prediction(path, line, lines[token.map[0] + 1:token.map[1]])
        cells[cell_line] = replace(cells[cell_line], prediction=prediction)


def read_prediction(path: Path, line: int, body: list[str]) -> Prediction:
    """A `::: prediccion`'s question and choices from its lines (`line`: that of its `:::` opening)."""
    question, choices, choice_lines, marked = [], [], [], []
    for offset, text in enumerate(body, start=line + 1):
        stripped = text.strip()
        match = PREDICTION_CHOICE.fullmatch(stripped)
        if match:
            choice = " ".join(match.group(2).split())
            if choice in choices:
                raise SourceError(path, offset, f"la opción `{choice}` está repetida")
            if match.group(1) != " ":
                marked.append(offset)
            choices.append(choice)
            choice_lines.append(offset)
        elif stripped.startswith(("- ", "* ", "+ ")):
            raise SourceError(path, offset, "cada opción es una línea «- [ ] `lo que imprime`»; la que es, "
                                            "«- [x] `lo que imprime`» (el texto entre comillas invertidas)")
        elif stripped and choices:
            raise SourceError(path, offset, "después de las opciones no va nada: la pregunta va antes")
        elif not choices:
            question.append(text)
    if not "\n".join(question).strip():
        raise SourceError(path, line, f"a la «::: {PREDICTION}» le falta la pregunta antes de las opciones "
                                      "(por ejemplo «¿Qué crees que imprimirá la primera línea?»)")
    low, high = PREDICTION_CHOICES
    if not low <= len(choices) <= high:
        raise SourceError(path, choice_lines[0] if choices else line,
                          f"una predicción tiene de {low} a {high} opciones (tiene {len(choices)})")
    if len(marked) != 1:
        raise SourceError(path, marked[1] if len(marked) > 1 else line,
                          "marca una sola opción como la que imprime la celda, con «- [x]»"
                          + (f" (hay {len(marked)})" if marked else " (no hay ninguna)"))
    return Prediction("\n".join(question).strip("\n"), tuple(choices), choice_lines.index(marked[0]), line,
                      tuple(choice_lines))


def collect_exercises(path: Path, lines: list[str], tokens: list, cells: dict[int, Cell],
                      seen_ids: dict) -> dict[int, Exercise]:
    """Each `::: ejercicio` and `::: reto` of a file, by the line of its opening `:::`, checked."""
    exercises: dict[int, Exercise] = {}
    for index, token in enumerate(tokens):
        if token.type == "container_open" and token.info in (EXERCISE, CHALLENGE):
            exercise = read_exercise(path, lines, tokens, index, cells)
            if exercise.is_challenge:
                if exercise.id in seen_ids:
                    raise SourceError(path, exercise.line, f"«::: {CHALLENGE}» repetido, o id «{exercise.id}» "
                                                           f"ya usado (en {seen_ids[exercise.id]}): el mazo "
                                                           "tiene un solo reto")
                seen_ids[exercise.id] = exercise.where()
            exercises[exercise.line] = exercise
    return exercises


def read_exercise(path: Path, lines: list[str], tokens: list, start: int, cells: dict[int, Cell]) -> Exercise:
    """One exercise from its tokens: task, then the cell, then one or more hints, then the solution."""
    opening = tokens[start]
    kind, line = opening.info, opening.map[0] + 1
    level = opening.level + 1
    # The exercise's own blocks (its children), as (kind, token).
    parts, depth = [], 0
    for token in tokens[start + 1:]:
        if token.type == "container_close" and token.level == opening.level:
            break
        if token.level != level or token.nesting == -1:
            continue
        if token.type == "container_open":
            parts.append((token.info, token))
        elif token.type == "fence" and token.map[0] + 1 in cells:
            parts.append(("cell", token))
        else:
            parts.append(("text", token))
    order = [name for name, _ in parts]
    where_of = {id(token): token.map[0] + 1 for _, token in parts}

    def fail(token_or_line, message):
        at = token_or_line if isinstance(token_or_line, int) else where_of[id(token_or_line)]
        raise SourceError(path, at, message)

    cell_tokens = [token for name, token in parts if name == "cell"]
    hint_tokens = [token for name, token in parts if name == HINT]
    solution_tokens = [token for name, token in parts if name == SOLUTION]
    if kind == EXERCISE and not cell_tokens:
        fail(line, "al ejercicio le falta su celda («```python id=… check=…»)")
    if len(cell_tokens) > 1:
        fail(cell_tokens[1], "un ejercicio tiene una sola celda")
    if not hint_tokens:
        fail(line, f"al «::: {kind}» le falta al menos una «::: {HINT}»")
    if len(solution_tokens) != 1:
        fail(solution_tokens[1] if solution_tokens else line,
             f"un «::: {kind}» tiene exactamente una «::: {SOLUTION}»" if solution_tokens else
             f"al «::: {kind}» le falta su «::: {SOLUTION}»")
    # Task, cell, hints, solution: in that order.
    first_part = {"text": 0, "cell": 1, HINT: 2, SOLUTION: 3}
    ranks = [first_part[name] for name in order]
    for (name, token), previous, current in zip(parts[1:], ranks, ranks[1:]):
        if current < previous:
            fail(token, f"en un «::: {kind}» va primero el enunciado, después la celda, las pistas y "
                        "al final la solución")
    if not ranks or ranks[0] != 0:
        fail(line, f"al «::: {kind}» le falta el enunciado (el texto antes de la celda y las pistas)")

    task_end = (cell_tokens[0] if cell_tokens else hint_tokens[0]).map[0]
    task = "\n".join(lines[opening.map[0] + 1:task_end]).strip("\n")
    hints = tuple(container_body(lines, token) for token in hint_tokens)
    solution = solution_tokens[0]
    code_fences = [token for token in tokens if token.type == "fence" and token.map
                   and solution.map[0] < token.map[0] < solution.map[1] and token.info.strip() == "python"]
    if kind == EXERCISE and len(code_fences) != 1:
        fail(solution, f"la «::: {SOLUTION}» de un ejercicio lleva un bloque «```python» con el código"
                       if not code_fences else f"la «::: {SOLUTION}» lleva un solo bloque «```python»")
    if kind == CHALLENGE and code_fences:
        raise SourceError(path, code_fences[0].map[0] + 1, f"la «::: {SOLUTION}» del reto es un ejemplo "
                                                           "de respuesta en texto, sin código")
    if kind == EXERCISE:
        fence = code_fences[0]
        solution_code = fence.content[:-1] if fence.content.endswith("\n") else fence.content
        explanation = lines[solution.map[0] + 1:fence.map[0]] + lines[fence.map[1]:solution.map[1]]
        cell = cells[cell_tokens[0].map[0] + 1]
        return Exercise(cell.id, cell.check or "", path, line, task, cell, hints, solution_code,
                        "\n".join(explanation).strip("\n"))
    example = read_challenge_example(path, solution.map[0] + 1, lines[solution.map[0] + 1:solution.map[1]])
    return Exercise(CHALLENGE_ID, CHALLENGE_ID, path, line, task, None, hints, None, container_body(lines, solution),
                    example)


def read_challenge_example(path: Path, line: int, lines: list[str]) -> dict[str, str]:
    """The challenge's example: one `- **Rótulo:** texto` item per field of dpdeck.lab.EXTENSION_FIELDS."""
    from dpdeck.lab import EXTENSION_FIELDS   # the challenge's fields are the lab's contract

    by_label = {label: key for key, (label, _) in EXTENSION_FIELDS.items()}
    example: dict[str, str] = {}
    current = None
    for text in lines:
        match = re.match(r"- \*\*([^*:]+):\*\*\s*(.*)$", text)
        if match and match.group(1) in by_label:
            current = by_label[match.group(1)]
            example[current] = match.group(2).strip()
        elif current is not None and text.startswith("  ") and text.strip():
            example[current] += " " + text.strip()
        else:
            current = None
    missing = [label for label, key in by_label.items() if not example.get(key)]
    if missing:
        raise SourceError(path, line, f"la «::: {SOLUTION}» del reto da un ejemplo de cada parte, una por línea: "
                                      f"«- **{missing[0]}:** …» (faltan: {', '.join(missing)})")
    return {key: example[key] for key in by_label.values()}


def container_body(lines: list[str], token) -> str:
    """The Markdown between a container's `::: name` line and its closing `:::`."""
    return "\n".join(lines[token.map[0] + 1:token.map[1]]).strip("\n")


def check_exercise_names(exercises: list[Exercise]) -> None:
    """Every exercise names a check that dpdeck.exercises has; only the challenge uses the challenge's."""
    from dpdeck.exercises import CHECKS   # the registry lives with the checks (imported only with exercises)

    for exercise in exercises:
        where_line = exercise.cell.line if exercise.cell is not None else exercise.line
        if exercise.cell is not None and exercise.cell.check is None:
            raise SourceError(exercise.file, where_line, "la celda de un ejercicio necesita check=NOMBRE "
                                                         f"(se admiten: {', '.join(sorted(CHECKS))})")
        if exercise.check not in CHECKS or (exercise.cell is not None and exercise.check == CHALLENGE_ID):
            names = sorted(name for name in CHECKS if name != CHALLENGE_ID)
            raise SourceError(exercise.file, where_line, f"check={exercise.check}: no hay esa comprobación en "
                                                         f"dpdeck.exercises (se admiten: {', '.join(names)})")


REMOTE_LOAD_ADVICE = ("el mazo funciona sin conexión y solo carga archivos de su propia carpeta; "
                      "para señalar algo de otro sitio, enlázalo con <a href=\"…\">")


def check_comments_closed(path: Path, token) -> None:
    """An HTML comment `<!--` in a slide ends with `-->`: left open, it would hide the rest of the deck."""
    first_line = token.map[0] + 1 if token.map else 1
    pieces = [token] if token.type == "html_block" else [child for child in token.children or []
                                                          if child.type == "html_inline"]
    for piece in pieces:
        text, position = piece.content, 0
        while (start := text.find("<!--", position)) >= 0:
            end = text.find("-->", start + 4)
            if end < 0:
                line = first_line + text.count("\n", 0, start)
                raise SourceError(path, line, "comentario HTML «<!--» sin cerrar: ocultaría todo lo que viene "
                                              "después en el mazo (ciérralo con «-->»)")
            position = end + 3


def check_remote_loads(path: Path, token) -> None:
    """Raw HTML or a Markdown image that would load something from another origin stops the build."""
    first_line = token.map[0] + 1 if token.map else 1
    if token.type == "html_block":
        problems = find_remote_loads(token.content)
    else:
        # The paragraph's HTML as the browser gets it: its tags, its text escaped, its line breaks.
        pieces, problems, breaks = [], [], 0
        for child in token.children or []:
            if child.type in ("softbreak", "hardbreak"):
                pieces.append("\n")
                breaks += 1
            elif child.type == "html_inline":
                pieces.append(child.content)
            elif child.type == "image":
                reason = describe_remote(child.attrGet("src") or "")
                if reason:
                    problems.append((breaks + 1, f"la imagen ![…]({child.attrGet('src')}) carga {reason}"))
            elif child.type in ("text", "code_inline"):
                pieces.append(html.escape(child.content))
        problems += find_remote_loads("".join(pieces))
    if problems:
        line, message = min(problems, key=lambda problem: problem[0])
        raise SourceError(path, first_line + line - 1, f"{message}: {REMOTE_LOAD_ADVICE}")


def read_cell(path: Path, token) -> Cell:
    line = token.map[0] + 1
    options = parse_cell_options(path, line, token.info.strip())
    source = token.content[:-1] if token.content.endswith("\n") else token.content
    return Cell(options["id"], source, path, line, int(options.get("figures", "0")),
                options.get("layout", "side"), options, int(options.get("timeout", CELL_TIME_LIMIT)))


def parse_cell_options(path: Path, line: int, info: str) -> dict[str, str]:
    """The `key=value` options of a ```python fence line, checked."""
    words = info.split()
    if words[0] != "python":
        raise SourceError(path, line, f"lenguaje de celda desconocido «{words[0]}» (se espera «python»)")
    options = {}
    for word in words[1:]:
        key, equals, value = word.partition("=")
        if not equals or not value:
            raise SourceError(path, line, f"opción de celda mal escrita «{word}» (se espera clave=valor)")
        if key not in CELL_OPTIONS:
            raise SourceError(path, line, f"opción de celda desconocida «{key}» "
                                          f"(se admiten: {', '.join(CELL_OPTIONS)})")
        if key in options:
            raise SourceError(path, line, f"opción de celda repetida «{key}»")
        options[key] = value
    if "id" not in options:
        raise SourceError(path, line, "a la celda le falta «id=…»")
    if not CELL_ID.fullmatch(options["id"]):
        raise SourceError(path, line, f"id de celda no válido «{options['id']}» (solo a-z, 0-9 y -)")
    if "check" in options and not CELL_ID.fullmatch(options["check"]):
        raise SourceError(path, line, f"check={options['check']}: no es un nombre de comprobación (a-z, 0-9 y -)")
    figures = options.get("figures", "0")
    if not (figures.isascii() and figures.isdigit()):
        raise SourceError(path, line, f"figures={figures}: se espera un número entero ≥ 0")
    layout = options.get("layout", "side")
    if layout not in CELL_LAYOUTS:
        raise SourceError(path, line, f"layout={layout}: se admiten {', '.join(CELL_LAYOUTS)}")
    seconds = options.get("timeout", str(CELL_TIME_LIMIT))
    if not (seconds.isascii() and seconds.isdigit() and 1 <= int(seconds) <= CELL_TIME_LIMIT_MAX):
        raise SourceError(path, line, f"timeout={seconds}: se esperan los segundos que la construcción deja "
                                      f"correr la celda, un número entero de 1 a {CELL_TIME_LIMIT_MAX}")
    return options


def check_fence_closed(path: Path, lines: list[str], token) -> None:
    start, end = token.map
    # Inside a list or a quote the closing line keeps its indentation and ">" marks.
    closing = lines[end - 1].lstrip(" \t>").strip() if start < end - 1 < len(lines) else ""
    marker = is_fence_line(closing)
    if not (marker and marker[0] == token.markup[0] and len(marker) >= len(token.markup)
            and not closing[len(marker):].strip()):
        raise SourceError(path, start + 1, f"bloque de código sin cerrar (falta la línea «{token.markup}» final)")


def find_inline_math_line(token, child_index: int) -> int:
    """1-based line of an inline child, counting line breaks before it in its block."""
    breaks = sum(1 for child in token.children[:child_index] if child.type in ("softbreak", "hardbreak"))
    return token.map[0] + 1 + breaks


def split_slides(lines: list[str], tokens: list) -> list[tuple[int, int, list]]:
    """Cut a file's tokens at top-level `---` lines: (first line, line after the last, tokens)."""
    slides, current, start_line = [], [], 1
    for token in tokens:
        if token.type == "hr" and token.level == 0 and lines[token.map[0]].strip() == "---":
            slides.append((start_line, token.map[0] + 1, current))
            current, start_line = [], token.map[0] + 2
            continue
        current.append(token)
    slides.append((start_line, len(lines) + 1, current))
    return slides


def is_slide_comment(token) -> bool:
    return token.type == "html_block" and token.content.lstrip().startswith("<!-- .slide:")


def read_slide_attributes(path: Path, tokens: list) -> dict[str, str]:
    """The slide's `<!-- .slide: … -->` attributes; the comment must open the slide."""
    attributes = {}
    for position, token in enumerate(tokens):
        if is_slide_comment(token):
            if position != 0:
                raise SourceError(path, token.map[0] + 1,
                                  "«<!-- .slide: … -->» debe ir en la primera línea de la diapositiva")
            attributes = parse_slide_attributes(path, token.map[0] + 1, token.content)
    return attributes


def parse_slide_attributes(path: Path, line: int, comment: str) -> dict[str, str]:
    body = comment.strip()
    body = body[len("<!--"):-len("-->")].strip() if body.endswith("-->") else None
    if body is None or not body.startswith(".slide:"):
        raise SourceError(path, line, "comentario «<!-- .slide: … -->» mal formado")
    rest = body[len(".slide:"):]
    attributes = {}
    for match in re.finditer(r'\s*([A-Za-z][\w-]*)="([^"]*)"\s*|(\S+)', rest):
        if match.group(3):
            raise SourceError(path, line, f"atributo de diapositiva mal escrito: «{match.group(3)}» "
                                          '(se espera clave="valor")')
        key, value = match.group(1), match.group(2)
        if key not in SLIDE_ATTRIBUTES:
            raise SourceError(path, line, f"atributo de diapositiva desconocido «{key}» "
                                          f"(se admiten: {', '.join(SLIDE_ATTRIBUTES)})")
        attributes[key] = value
    return attributes


def extract_title(tokens: list) -> str:
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h1":
            inline = tokens[index + 1]
            return "".join(child.content for child in inline.children or []
                           if child.type in ("text", "code_inline", "math_inline")).strip()
    return ""
