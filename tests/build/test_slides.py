"""Slide sources become reveal.js sections exactly as deck/README.md describes."""

from __future__ import annotations

import html
import re

import build


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
    assert data.startswith(b"\x89PNG") and build.hash_bytes(data)[:16] == name


def test_other_fences_stay_code(sample_build):
    figure = sections(sample_build)[3]
    assert '<pre><code class="language-text">no es una celda\n</code></pre>' in figure


def test_dashes_under_text_do_not_make_a_heading():
    md = build.make_markdown()
    tokens = md.parse("texto\n---\nmás\n")
    assert [token.type for token in tokens if token.level == 0] == ["paragraph_open", "paragraph_close", "hr",
                                                                    "paragraph_open", "paragraph_close"]


def test_nested_containers_close_in_order():
    md = build.make_markdown()
    tokens = md.parse("::: columns\n::: column\na\n:::\n::: column\n```python id=x\n:::\n```\n:::\n:::\nfin\n")
    opened = [(token.type, token.info) for token in tokens if token.type.startswith("container")]
    assert opened == [("container_open", "columns"), ("container_open", "column"), ("container_close", "column"),
                      ("container_open", "column"), ("container_close", "column"), ("container_close", "columns")]
    assert all(token.meta["closed"] for token in tokens if token.type == "container_open")


def test_command_line_keeps_pytest_arguments():
    assert build.parse_arguments(["test", "-k", "offline", "--out", "x", "-x"]) == (
        "test", {"out": "x"}, ["-k", "offline", "-x"])
    assert build.parse_arguments(["serve", "--port=9000"]) == ("serve", {"port": "9000"}, [])
    assert build.parse_arguments([]) == ("build", {}, [])


def test_fences_inside_quotes_and_lists_are_closed(tmp_path):
    md = build.make_markdown()
    text = "> ```text\n> citado\n> ```\n\n- punto\n\n  ```text\n  en lista\n  ```\n"
    tokens = md.parse(text)
    fences = [token for token in tokens if token.type == "fence"]
    assert len(fences) == 2
    for token in fences:
        build.check_fence_closed(tmp_path / "x.md", text.splitlines(), token)
