"""Slide sources (deck/slides/*.md) → typed `Deck`, `Slide` and `Cell` records.

This is the one reader of the slides' Markdown: the build, the tests and any
tool that needs the slides or their cells take them from `read_deck`.

    deck = read_deck(Path("deck/slides"))
    for cell in deck.cells:          # every cell, in reading order
        cell.id, cell.options, cell.source, cell.file, cell.line

A bad source raises `SourceError` with the file and line of the problem: a
file that is not UTF-8, starts with a byte-order mark, holds control characters
or no slide at all, as well as a badly written cell, container or attribute.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from .errors import BuildError, SourceError
from .markdown import CONTAINERS, is_fence_line, make_markdown
from .paths import display_path
from .policy import describe_remote, find_remote_loads

SLIDE_ATTRIBUTES = ("class", "id")
CELL_OPTIONS = ("id", "figures", "layout", "timeout")
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


class MathKey(NamedTuple):
    """One expression to typeset: its TeX and whether it is displayed (`$$`) or inline."""

    tex: str
    display: bool


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

    def where(self) -> str:
        return f"{display_path(self.file)}:{self.line}"

    def __hash__(self) -> int:   # a fence line is one cell
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

    def find_cell(self, cell_id: str) -> Cell:
        for cell in self.cells:
            if cell.id == cell_id:
                return cell
        raise KeyError(cell_id)


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
        slides.extend(read_slide_file(md, path, math, seen_ids))
    title = next((slide.title for slide in slides if slide.title), "")
    return Deck(title, tuple(slides), math)


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
        source = "\n".join(lines[start - 1:end - 1]).strip("\n")
        slides.append(Slide(path, first, attributes, extract_title(body), source, cells, tuple(body)))
    return slides


def collect_cells_and_math(path: Path, lines: list[str], tokens: list, math: dict,
                           seen_ids: dict) -> dict[int, Cell]:
    """Check one file's tokens; return its cells by fence line and record its math."""
    cells: dict[int, Cell] = {}
    for token in tokens:
        if token.type == "fence":
            check_fence_closed(path, lines, token)
            info = token.info.strip()
            if info.split()[:1] and info.split()[0].startswith("python"):
                cell = read_cell(path, token)
                if cell.id in seen_ids:
                    raise SourceError(path, cell.line, f"id de celda repetido «{cell.id}» "
                                                       f"(ya usado en {seen_ids[cell.id]})")
                seen_ids[cell.id] = cell.where()
                cells[cell.line] = cell
        elif token.type == "container_open":
            if token.info not in CONTAINERS:
                raise SourceError(path, token.map[0] + 1, f"contenedor desconocido «::: {token.info}» "
                                                          f"(se admiten: {', '.join(CONTAINERS)})")
            if not token.meta.get("closed"):
                raise SourceError(path, token.map[0] + 1, f"contenedor «::: {token.info}» sin cerrar "
                                                          "(falta la línea «:::» final)")
        elif token.type == "math_block":
            math.setdefault(MathKey(token.content.strip(), True), (path, token.map[0] + 1))
        elif token.type == "html_block" and ".slide:" in token.content and not is_slide_comment(token):
            raise SourceError(path, token.map[0] + 1, "«<!-- .slide: … -->» mal formado")
        if token.type in ("html_block", "inline"):
            check_remote_loads(path, token)
        if token.type == "inline":
            for child_index, child in enumerate(token.children or []):
                if child.type in ("math_inline", "math_inline_double"):
                    key = MathKey(child.content.strip(), child.type == "math_inline_double")
                    math.setdefault(key, (path, find_inline_math_line(token, child_index)))
    return cells


REMOTE_LOAD_ADVICE = ("el mazo funciona sin conexión y solo carga archivos de su propia carpeta; "
                      "para señalar algo de otro sitio, enlázalo con <a href=\"…\">")


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
