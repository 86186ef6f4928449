"""Slide sources become reveal.js sections exactly as deck/README.md describes.

Also the reader's public records (deckbuild.slides.read_deck): the slides and
cells it gives are the ones the page shows, in the same order.
"""

from __future__ import annotations

import html
import os
import re
from pathlib import Path

import pytest

from deck_fixtures import ROOT, SAMPLE_DECK, write_deck
from deckbuild.errors import SourceError
from deckbuild.files import hash_bytes
from deckbuild.markdown import make_markdown
from deckbuild.slides import Cell, check_fence_closed, read_deck


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
    match = re.search(r'<div class="cell" data-cell-id="suma" data-figures="0" data-layout="stack" '
                      r'data-status="idle" data-prevent-swipe>\s*'
                      r'<pre class="cell-source"><code class="language-python">(.*?)</code></pre>\s*'
                      r'<div class="cell-output" data-origin="prerendered">(.*?)</div>\s*</div>', cells, re.S)
    assert match, cells
    assert html.unescape(match.group(1)) == 'x = 2 + 3\nprint("x <", x)\nx * 10'
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


def test_read_deck_raises_source_error_with_file_and_line(tmp_path):
    folder = write_deck(tmp_path / "slides", {"01.md": "# T\n\n```python id=a\nprint(1)\n```\n",
                                               "02.md": "# U\n\ntexto\n\n```python id=a\nprint(2)\n```\n"})
    with pytest.raises(SourceError) as raised:
        read_deck(folder)
    assert (raised.value.path.name, raised.value.line) == ("02.md", 5)
    assert "id de celda repetido «a»" in raised.value.message
