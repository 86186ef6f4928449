"""The page: each slide as a reveal.js <section>, each cell with its pre-rendered output.

Stage: (`Deck`, typeset math, `Prerendered`, the page's inline parts) → the
HTML of index.html, from deck/template.html. A cell is found by the line of its
fence in its slide, so nothing is stored on the parser's tokens. The page's CSS
and its first script are inlined (read_page_parts), so nothing but the HTML
stands before the first paint; the page's Content-Security-Policy allows that
script by the hash of exactly the text inlined (deckbuild.policy).
"""

from __future__ import annotations

import hashlib
import html
import posixpath
import re
from pathlib import Path

from dpdeck import lab
from dpdeck.classroom import protocol
from dpdeck.classroom.work import checker_version, deck_id

from .deckmodel import (CHALLENGE, EXERCISE, PREDICTION, PREDICTION_LABEL, PROMPT, PROMPT_LABEL, Cell, Deck, Exercise,
                        MathKey, Slide)
from .errors import BuildError
from .markdown import CONTAINERS, make_markdown
from .package import STYLESHEET_URL
from .paths import TEMPLATE
from .policy import check_page_scripts, compose_policy
from .prerender import CellOutcome, Prerendered

# What the panel of an exercise says before anything is shown in it (the page hides it then).
EXERCISE_HELP = ("Escribe tu solución en la celda y pulsa «Comprobar». "
                 "Si te atascas, pide una pista; la solución está al final.")
CHALLENGE_HELP = ("Escribe las cuatro partes (se guardan en este navegador) y pulsa «Comprobar»; "
                  "«Exportar laboratorio (JSON)» "
                  "descarga el laboratorio con tu extensión.")
SEED_LABEL = "Semilla del laboratorio"
SOLUTION_LABEL = "Solución"
EXAMPLE_LABEL = "Un ejemplo de respuesta"


def render_output(output: dict, cell: Cell, figure_number: int) -> str:
    """One output as the contract's markup (dpdeck/classroom/protocol.json, «El contrato de las celdas»)."""
    kind = output.get("type")
    if kind not in protocol.OUTPUT:
        raise BuildError(f"{cell.where()}: salida de tipo desconocido «{kind}» en la celda «{cell.id}»")
    tag = protocol.OUTPUT_MARKUP[kind]["tag"]
    classes = protocol.output_class(kind, stream=output.get("name", ""))
    if kind == protocol.OUTPUT.FIGURE:
        width, height = output.get("width"), output.get("height")
        size = f' width="{int(width)}" height="{int(height)}"' if width and height else ""
        alt = html.escape(protocol.figure_alt(figure_number + 1, output.get("description", "")))
        # Lazy: the browser does not fetch every figure of the deck while it draws
        # the first slide; the page loads them all once reveal.js is ready
        # (deck/js/page/outputs.js, loadPrerenderedFigures). Without JavaScript, lazy means nothing.
        return f'<{tag} class="{classes}" src="{output["src"]}" alt="{alt}"{size} loading="lazy">'
    text = protocol.error_text(output) if kind == protocol.OUTPUT.ERROR else output["text"]
    return f'<{tag} class="{classes}">{html.escape(text, quote=False)}</{tag}>'


def render_cell(outcome: CellOutcome, prompt_html: str = "") -> str:
    """A cell as the contract's markup; `prompt_html` (render_prompt, render_prediction) goes after its output."""
    cell = outcome.cell
    outputs, figure_number = [], 0
    for output in outcome.outputs:
        outputs.append("    " + render_output(output, cell, figure_number))
        if output.get("type") == protocol.OUTPUT.FIGURE:
            figure_number += 1
    body = "\n".join(outputs)
    # The build's digest of the cell's code: a run saved in a browser is shown only with the cell it was saved for.
    source_sha256 = hashlib.sha256(cell.source.encode("utf-8")).hexdigest()
    predict = " data-predict" if cell.prediction is not None else ""
    return (f'<div class="cell" data-cell-id="{cell.id}" data-figures="{cell.figures}" '
            f'data-layout="{cell.layout}" data-status="{protocol.CELL_STATUS.IDLE}"{predict} '
            f'data-source-sha256="{source_sha256}" data-prevent-swipe>\n'
            f'  <pre class="cell-source"><code class="language-python">'
            f'{html.escape(cell.source, quote=False)}</code></pre>\n'
            f'  <div class="{protocol.OUTPUT_AREA_CLASS}" data-origin="{protocol.ORIGIN.PRERENDERED}">'
            f'\n{body}\n  </div>\n{prompt_html}</div>\n')


def render_prompt(md, cell: Cell) -> str:
    """A cell's «Prueba esto», folded: a <details> the page shows over the code's corner (cells.css)."""
    if cell.prompt is None:
        return ""
    return (f'  <details class="cell-prueba">\n    <summary>{PROMPT_LABEL}</summary>\n'
            f'    <div class="cell-prueba-texto">\n{render_markdown(md, cell.prompt)}</div>\n  </details>\n')


def render_prediction(md, cell: Cell) -> str:
    """A cell's «Predice antes de ejecutar»: the question and a button per choice, laid over the
    output until the cell runs (predictions.js, cells.css); the right choice is marked `data-correct`."""
    prediction = cell.prediction
    if prediction is None:
        return ""
    choices = "".join(
        f'      <li{" data-correct" if index == prediction.answer else ""}><button type="button" '
        f'class="cell-prediccion-opcion" data-choice="{html.escape(choice)}"><code>{html.escape(choice)}</code>'
        f'</button></li>\n' for index, choice in enumerate(prediction.choices))
    return (f'  <div class="cell-prediccion">\n    <p class="cell-prediccion-rotulo">{PREDICTION_LABEL}</p>\n'
            f'    <div class="cell-prediccion-pregunta">\n{render_markdown(md, prediction.question)}</div>\n'
            f'    <ol class="cell-prediccion-opciones">\n{choices}    </ol>\n'
            f'    <p class="cell-prediccion-veredicto"></p>\n  </div>\n')


def drop_prompts(tokens: list) -> list:
    """The slide's tokens without its `::: prueba` and `::: prediccion` blocks: each is written inside its cell."""
    kept, depth = [], 0
    for token in tokens:
        if token.type == "container_open" and token.info in (PROMPT, PREDICTION) and depth == 0:
            depth = 1
            continue
        if depth:
            if token.type == "container_open":
                depth += 1
            elif token.type == "container_close":
                depth -= 1
            continue
        kept.append(token)
    return kept


def make_renderer(math: dict[MathKey, str]):
    """The slides' markdown-it with rules for cells, containers and typeset math.

    A slide is rendered with env["cells"] = {fence line: cell HTML}.
    """
    md = make_markdown()
    default_fence = md.renderer.rules["fence"]

    def fence(self, tokens, index, options, env):
        cell_html = env.get("cells", {}).get(tokens[index].map[0] + 1)
        if cell_html is None:
            return default_fence(tokens, index, options, env)
        return cell_html

    def container_open(self, tokens, index, options, env):
        return CONTAINERS[tokens[index].info][0] + "\n"

    def container_close(self, tokens, index, options, env):
        return CONTAINERS[tokens[index].info][1] + "\n"

    def math_inline(self, tokens, index, options, env):
        return math[MathKey(tokens[index].content.strip(), False)]

    def math_display(self, tokens, index, options, env):
        return math[MathKey(tokens[index].content.strip(), True)] + ("\n" if tokens[index].block else "")

    md.add_render_rule("fence", fence)
    md.add_render_rule("container_open", container_open)
    md.add_render_rule("container_close", container_close)
    md.add_render_rule("math_inline", math_inline)
    md.add_render_rule("math_inline_double", math_display)
    md.add_render_rule("math_block", math_display)
    return md


def render_markdown(md, text: str) -> str:
    """A piece of an exercise (task, hint, solution text), rendered with the slides' rules."""
    return md.renderer.render(md.parse(text, {}), md.options, {})


def render_exercise_panel(md, exercise: Exercise) -> str:
    """The panel beside an exercise: its help line, the verdict's place, the hints and the solution (hidden)."""
    count = len(exercise.hints)
    parts = ['<div class="ejercicio-panel">', '<div class="ejercicio-respuesta">',
             f'<p class="ejercicio-ayuda">{html.escape(CHALLENGE_HELP if exercise.is_challenge else EXERCISE_HELP)}</p>',
             '<div class="ejercicio-veredicto" hidden></div>']
    for number, hint in enumerate(exercise.hints, 1):
        parts.append(f'<div class="ejercicio-pista" data-hint="{number}" hidden>\n'
                     f'<p class="ejercicio-rotulo">Pista {number} de {count}</p>\n{render_markdown(md, hint)}</div>')
    label = EXAMPLE_LABEL if exercise.is_challenge else SOLUTION_LABEL
    solution = ['<div class="ejercicio-solucion" hidden>', f'<p class="ejercicio-rotulo">{label}</p>']
    if exercise.solution_code is not None:
        solution.append(f'<pre class="ejercicio-codigo"><code>{html.escape(exercise.solution_code, quote=False)}'
                        '</code></pre>')
    solution.append(render_markdown(md, exercise.solution_text) + "</div>")
    parts += ["\n".join(solution), "</div>", "</div>"]
    return "\n".join(parts)


def render_challenge_fields() -> str:
    """The challenge's four fields (dpdeck.lab.EXTENSION_FIELDS) and the lab's seed."""
    fields = []
    for key, (label, prompt) in lab.EXTENSION_FIELDS.items():
        fields.append(f'<label class="reto-campo"><span class="reto-rotulo">{html.escape(label)}</span>'
                      f'<textarea name="{key}" rows="2" placeholder="{html.escape(prompt.capitalize())}" '
                      f'spellcheck="true"></textarea></label>')
    fields.append(f'<label class="reto-semilla"><span class="reto-rotulo">{SEED_LABEL}</span>'
                  '<input name="seed" type="number" min="0" step="1" value="0" inputmode="numeric"></label>')
    return '<div class="reto-campos">\n' + "\n".join(fields) + "\n</div>"


def render_exercise(md, exercise: Exercise, prerendered: Prerendered) -> str:
    """An exercise as deck/README.md describes it: task, then its cell (or the challenge's fields), then the panel."""
    kind = "ejercicio reto" if exercise.is_challenge else "ejercicio"
    middle = (render_challenge_fields() if exercise.is_challenge
              else render_cell(prerendered.outcomes[exercise.cell.id]).rstrip("\n"))
    return (f'<div class="{kind}" data-exercise="{exercise.id}" data-check="{exercise.check}" '
            f'data-hints="{len(exercise.hints)}">\n'
            f'<div class="ejercicio-enunciado">\n{render_markdown(md, exercise.task)}</div>\n'
            f'{middle}\n{render_exercise_panel(md, exercise)}\n</div>\n')


def splice_exercise(tokens: list, html_text: str) -> list:
    """The slide's tokens with its `::: ejercicio` (or `::: reto`) replaced by its finished HTML."""
    from markdown_it.token import Token

    start = next(index for index, token in enumerate(tokens)
                 if token.type == "container_open" and token.info in (EXERCISE, CHALLENGE))
    end = next(index for index in range(start + 1, len(tokens))
               if tokens[index].type == "container_close" and tokens[index].level == tokens[start].level)
    block = Token("html_block", "", 0, content=html_text, block=True)
    return [*tokens[:start], block, *tokens[end + 1:]]


def render_section(md, slide: Slide, prerendered: Prerendered) -> str:
    attrs = "".join(f' {key}="{html.escape(value)}"' for key, value in sorted(slide.attributes.items()))
    cells = {cell.line: render_cell(prerendered.outcomes[cell.id], render_prompt(md, cell) + render_prediction(md, cell))
             for cell in slide.cells}
    tokens = drop_prompts(list(slide.tokens))
    if slide.exercise is not None:
        tokens = splice_exercise(tokens, render_exercise(md, slide.exercise, prerendered))
    body = md.renderer.render(tokens, md.options, {"cells": cells})
    return f"<section{attrs} data-source=\"{html.escape(slide.file.name)}:{slide.line}\">\n{body}</section>"


# Inlined into the page's <head>, in this order: the stylesheets, then the first script.
INLINE_STYLESHEETS = ("vendor/reveal/reveal.css", "vendor/katex/katex.min.css", "css/main.css")
FIRST_PAINT_SCRIPT = "js/firstpaint.js"
FIRST_PAINT_PLACEHOLDER = "{{ first_paint }}"
# A font preloaded by the page, whatever the order of the link's attributes.
FONT_PRELOAD = re.compile(r'<link\b(?=[^>]*\brel="preload")(?=[^>]*\bas="font")[^>]*>')


def rebase_stylesheet(css: str, sheet: str) -> str:
    """A stylesheet's url()s made relative to the page instead of to the sheet (css/main.css: ../fonts/ → fonts/)."""
    folder = posixpath.dirname(sheet)

    def rebase(match):
        quote, url = match.group(1), match.group(2)
        if url.startswith(("data:", "#", "/")) or "://" in url:
            return match.group(0)
        return f"url({quote}{posixpath.normpath(posixpath.join(folder, url))}{quote})"

    return STYLESHEET_URL.sub(rebase, css)


def read_page_parts(out: Path) -> dict[str, str]:
    """The inline parts of the page, from files already in out/: {placeholder: text}.

    The first script exists only inline: its bundle is removed once read.
    """
    styles = [f"/* {sheet} */\n" + rebase_stylesheet((out / sheet).read_text(encoding="utf-8").strip(), sheet)
              for sheet in INLINE_STYLESHEETS]
    script = (out / FIRST_PAINT_SCRIPT).read_text(encoding="utf-8").strip()
    (out / FIRST_PAINT_SCRIPT).unlink()
    for name, text in [*zip(INLINE_STYLESHEETS, styles), (FIRST_PAINT_SCRIPT, script)]:
        if "</style" in text.lower() or "</script" in text.lower():
            raise BuildError(f"{name} no se puede poner en línea: contiene «</style» o «</script»")
    return {"{{ styles }}": "\n".join(styles), FIRST_PAINT_PLACEHOLDER: script}


def check_no_font_preload(page: str) -> None:
    """The page preloads no font: Chromium holds the first paint until a font requested before it has arrived.

    The deck's faces are declared with font-display: swap (css/fonts.css), so
    the first slide shows at once and takes its letters when they come.
    """
    preload = FONT_PRELOAD.search(page)
    if preload:
        raise BuildError(f"deck/template.html precarga una letra ({preload.group(0)}): "
                         "retrasaría la primera pintura hasta que llegue")


def fill_template(title: str, sections: str, parts: dict[str, str]) -> str:
    if not TEMPLATE.exists():
        raise BuildError("falta deck/template.html")
    template = TEMPLATE.read_text(encoding="utf-8")
    values = {**parts, "{{ title }}": html.escape(title), "{{ slides }}": sections}
    for placeholder in values:
        if placeholder not in template:
            raise BuildError(f"deck/template.html no tiene el marcador {placeholder}")
    # The slides go in last: nothing in them is ever read as a placeholder.
    for placeholder, value in values.items():
        template = template.replace(placeholder, value)
    return template


def expect_first_slide(deck: Deck) -> str:
    """The link that holds the page's first frame until its first slide is parsed (or '' if it has no id).

    `<link rel="expect" blocking="render">` (HTML, «render-blocking»): the
    browser draws nothing until the element it names has been parsed, instead
    of painting the empty background first and the slide a frame later. It
    blocks no longer than the parse of the page, even if the id is missing.
    """
    slide_id = deck.slides[0].attributes.get("id") if deck.slides else None
    if not slide_id:
        return ""
    return f'<link rel="expect" href="#{html.escape(slide_id)}" blocking="render">'


def render_page(deck: Deck, math: dict[MathKey, str], prerendered: Prerendered, parts: dict[str, str]) -> str:
    """index.html: the template with its inline parts and every slide rendered in reading order."""
    md = make_renderer(math)
    sections = "\n".join(render_section(md, slide, prerendered) for slide in deck.slides)
    # The page's one inline script is allowed by its hash, never by 'unsafe-inline'.
    inline_scripts = [parts[FIRST_PAINT_PLACEHOLDER]]
    policy = compose_policy(inline_scripts=inline_scripts)
    # What a student's exported work names (dpdeck.classroom.work): the deck, and the checks it was checked with.
    classroom = {"{{ deck_id }}": html.escape(deck_id(deck.title)), "{{ checkers }}": checker_version()}
    page = fill_template(deck.title, sections, {**parts, **classroom, "{{ csp }}": html.escape(policy),
                                               "{{ first_slide_expected }}": expect_first_slide(deck)})
    check_page_scripts(page, inline_scripts)
    return page
