"""The slides' Markdown dialect: CommonMark with tables, `$…$`/`$$…$$` math and `::: name` containers.

`make_markdown()` returns the one markdown-it configuration that both reading
(`slides`) and rendering (`render`) use. deck/README.md describes the format.
"""

from __future__ import annotations

# Containers a slide may use, with the HTML each one becomes.
CONTAINERS = {
    "notes": ('<aside class="notes">', "</aside>"),
    "fragment": ('<div class="fragment">', "</div>"),
    "definicion": ('<div class="definicion">', "</div>"),
    "idea": ('<div class="idea">', "</div>"),
    "aviso": ('<div class="aviso">', "</div>"),
    "columns": ('<div class="columns">', "</div>"),
    "column": ('<div class="column">', "</div>"),
    # Exercises: render.py writes each one whole (task, cell, panel with hints and solution).
    "ejercicio": ('<div class="ejercicio">', "</div>"),
    "reto": ('<div class="ejercicio reto">', "</div>"),
    "pista": ('<div class="ejercicio-pista">', "</div>"),
    "solucion": ('<div class="ejercicio-solucion">', "</div>"),
    # A cell's «Prueba esto»: render.py writes it inside its cell (render_prompt).
    "prueba": ('<details class="cell-prueba">', "</details>"),
    # A cell's «Predice antes de ejecutar»: render.py writes it inside its cell (render_prediction).
    "prediccion": ('<div class="cell-prediccion">', "</div>"),
}


def is_fence_line(text: str) -> str | None:
    """The fence marker (``` or ~~~ run) a stripped line starts with, if any."""
    for char in "`~":
        if text.startswith(char * 3):
            return text[:len(text) - len(text.lstrip(char))]
    return None


def container_rule(state, start_line: int, end_line: int, silent: bool) -> bool:
    """Block rule for `::: name` … `:::` containers that may nest with the same marker."""
    if state.sCount[start_line] - state.blkIndent >= 4:
        return False
    begin = state.bMarks[start_line] + state.tShift[start_line]
    text = state.src[begin:state.eMarks[start_line]]
    if not text.startswith(":::"):
        return False
    name = text.lstrip(":").strip()
    if not name:
        return False
    if silent:
        return True
    depth, next_line, closed, fence = 1, start_line, False, None
    while True:
        next_line += 1
        if next_line >= end_line:
            break
        line = state.src[state.bMarks[next_line] + state.tShift[next_line]:state.eMarks[next_line]]
        marker = is_fence_line(line)
        if fence is not None:
            if marker and marker[0] == fence[0] and len(marker) >= len(fence) and not line[len(marker):].strip():
                fence = None
            continue
        if marker:
            fence = marker
            continue
        if line.startswith(":::"):
            if line.lstrip(":").strip():
                depth += 1
            else:
                depth -= 1
                if depth == 0:
                    closed = True
                    break
    old_parent, old_line_max = state.parentType, state.lineMax
    state.parentType = "container"
    state.lineMax = next_line
    token = state.push("container_open", "div", 1)
    token.block, token.info, token.map = True, name, [start_line, next_line]
    token.meta = {"closed": closed}
    state.md.block.tokenize(state, start_line + 1, next_line)
    token = state.push("container_close", "div", -1)
    token.block, token.info = True, name
    state.parentType, state.lineMax = old_parent, old_line_max
    state.line = next_line + (1 if closed else 0)
    return True


def make_markdown():
    """The markdown-it parser (and renderer) of the slides' dialect."""
    from markdown_it import MarkdownIt
    from mdit_py_plugins.dollarmath import dollarmath_plugin

    md = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])
    # A `---` line separates slides; it must never underline a heading.
    md.disable("lheading")
    dollarmath_plugin(md, allow_labels=False, allow_space=True, allow_digits=False, double_inline=True)
    md.block.ruler.before("fence", "container", container_rule,
                          {"alt": ["paragraph", "reference", "blockquote", "list"]})
    return md
