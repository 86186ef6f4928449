"""The page: each slide as a reveal.js <section>, each cell with its pre-rendered output.

Stage: (`Deck`, typeset math, `Prerendered`, the page's inline parts) → the
HTML of index.html, from deck/template.html. A cell is found by the line of its
fence in its slide, so nothing is stored on the parser's tokens. The page's CSS
and its first script are inlined (read_page_parts), so nothing but the HTML
stands before the first paint; the page's Content-Security-Policy allows that
script by the hash of exactly the text inlined (deckbuild.policy).
"""

from __future__ import annotations

import html
import posixpath
import re
from pathlib import Path

from dpdeck import protocol

from .errors import BuildError
from .markdown import CONTAINERS, make_markdown
from .package import STYLESHEET_URL
from .paths import TEMPLATE
from .policy import check_page_scripts, compose_policy
from .prerender import CellOutcome, Prerendered
from .slides import Cell, Deck, MathKey, Slide


def render_output(output: dict, cell: Cell, figure_number: int) -> str:
    """One output as the contract's markup (dpdeck/protocol.json, «El contrato de las celdas»)."""
    kind = output.get("type")
    if kind not in protocol.OUTPUT:
        raise BuildError(f"{cell.where()}: salida de tipo desconocido «{kind}» en la celda «{cell.id}»")
    tag = protocol.OUTPUT_MARKUP[kind]["tag"]
    classes = protocol.output_class(kind, stream=output.get("name", ""))
    if kind == protocol.OUTPUT.FIGURE:
        width, height = output.get("width"), output.get("height")
        size = f' width="{int(width)}" height="{int(height)}"' if width and height else ""
        alt = html.escape(protocol.figure_alt(figure_number + 1, output.get("description", "")))
        return f'<{tag} class="{classes}" src="{output["src"]}" alt="{alt}"{size}>'
    text = protocol.error_text(output) if kind == protocol.OUTPUT.ERROR else output["text"]
    return f'<{tag} class="{classes}">{html.escape(text, quote=False)}</{tag}>'


def render_cell(outcome: CellOutcome) -> str:
    cell = outcome.cell
    outputs, figure_number = [], 0
    for output in outcome.outputs:
        outputs.append("    " + render_output(output, cell, figure_number))
        if output.get("type") == protocol.OUTPUT.FIGURE:
            figure_number += 1
    body = "\n".join(outputs)
    return (f'<div class="cell" data-cell-id="{cell.id}" data-figures="{cell.figures}" '
            f'data-layout="{cell.layout}" data-status="{protocol.CELL_STATUS.IDLE}" data-prevent-swipe>\n'
            f'  <pre class="cell-source"><code class="language-python">'
            f'{html.escape(cell.source, quote=False)}</code></pre>\n'
            f'  <div class="{protocol.OUTPUT_AREA_CLASS}" data-origin="{protocol.ORIGIN.PRERENDERED}">'
            f'\n{body}\n  </div>\n</div>\n')


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


def render_section(md, slide: Slide, prerendered: Prerendered) -> str:
    attrs = "".join(f' {key}="{html.escape(value)}"' for key, value in sorted(slide.attributes.items()))
    cells = {cell.line: render_cell(prerendered.outcomes[cell.id]) for cell in slide.cells}
    body = md.renderer.render(list(slide.tokens), md.options, {"cells": cells})
    return f"<section{attrs} data-source=\"{html.escape(slide.file.name)}:{slide.line}\">\n{body}</section>"


# Inlined into the page's <head>, in this order: the stylesheets, then the first script.
INLINE_STYLESHEETS = ("vendor/reveal/reveal.css", "vendor/katex/katex.min.css", "css/main.css")
FIRST_PAINT_SCRIPT = "js/firstpaint.js"
FIRST_PAINT_PLACEHOLDER = "{{ first_paint }}"
PRELOAD_HREF = re.compile(r'<link rel="preload" href="([^"]+)"')


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


def check_preloads(page: str, out: Path) -> None:
    """Every file the page preloads is in out/ (a renamed font would otherwise be fetched in vain)."""
    for href in PRELOAD_HREF.findall(page):
        if not (out / href).is_file():
            raise BuildError(f"deck/template.html precarga {href}, que no está en el mazo")


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


def render_page(deck: Deck, math: dict[MathKey, str], prerendered: Prerendered, parts: dict[str, str]) -> str:
    """index.html: the template with its inline parts and every slide rendered in reading order."""
    md = make_renderer(math)
    sections = "\n".join(render_section(md, slide, prerendered) for slide in deck.slides)
    # The page's one inline script is allowed by its hash, never by 'unsafe-inline'.
    inline_scripts = [parts[FIRST_PAINT_PLACEHOLDER]]
    policy = compose_policy(inline_scripts=inline_scripts)
    page = fill_template(deck.title, sections, {**parts, "{{ csp }}": html.escape(policy)})
    check_page_scripts(page, inline_scripts)
    return page
