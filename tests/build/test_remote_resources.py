"""A slide that would load anything from another origin stops the build with file:line.

Raw HTML in slides is allowed, but the page's Content-Security-Policy
(deckbuild.policy) blocks every load from another origin and every inline
script: the build refuses such a slide instead of letting it break silently in
front of the class. Links stay allowed: following one is the reader's choice.
"""

from __future__ import annotations

import re

import pytest

from deck_fixtures import run_build, write_deck
from deckbuild.errors import BuildError, SourceError
from deckbuild.policy import (check_page_scripts, compose_policy, describe_remote, find_inline_scripts,
                              find_remote_loads, hash_script, policy_for_page)
from deckbuild.slides import read_deck

# name → (slide source, line of the problem, what the message names)
REFUSED = {
    "img-src": ('# T\n\n<img src="https://ejemplo.org/a.png" alt="a">\n', 3,
                "<img src> carga «https://ejemplo.org/a.png», que es de otro origen"),
    "img-sin-esquema": ('# T\n\ntexto\n\n<img src="//cdn.ejemplo.org/a.png">\n', 5, "«//cdn.ejemplo.org/a.png»"),
    "img-barras-invertidas": ('# T\n\n<img src="\\\\ejemplo.org\\a.png">\n', 3, "que es de otro origen"),
    "img-entidades": ('# T\n\n<img src="&#104;ttps://ejemplo.org/a.png">\n', 3, "«https://ejemplo.org/a.png»"),
    "img-en-parrafo": ("# T\n\nUna línea\ny una imagen <img src='http://ejemplo.org/b.png'> en medio.\n", 4,
                       "<img src> carga «http://ejemplo.org/b.png»"),
    "imagen-markdown": ("# T\n\nTexto\n\n![gráfica](https://ejemplo.org/g.png)\n", 5,
                        "la imagen ![…](https://ejemplo.org/g.png) carga"),
    "srcset": ('# T\n\n<img src="a.png" srcset="a.png 1x, https://ejemplo.org/a2.png 2x">\n', 3, "<img srcset>"),
    "script-remoto": ('# T\n\n<script src="https://cdn.ejemplo.org/lib.js"></script>\n', 3, "<script src>"),
    "script-en-linea": ("# T\n\n<script>\nfetch('https://ejemplo.org')\n</script>\n", 3,
                        "un <script> escrito en la diapositiva no se ejecutaría"),
    "atributo-on": ('# T\n\n<button onclick="alert(1)">Pulsa</button>\n', 3, "<button onclick=…>"),
    "enlace-javascript": ('# T\n\n<a href="javascript:alert(1)">x</a>\n', 3, "que es código JavaScript"),
    "css-url": ('# T\n\n<div style="background: url(https://ejemplo.org/f.jpg)">x</div>\n', 3,
                "el estilo de <div> carga «https://ejemplo.org/f.jpg»"),
    "css-import": ('# T\n\n<style>\n.a { color: red; }\n@import "https://ejemplo.org/x.css";\n</style>\n', 5,
                   "la hoja de estilo <style> carga «https://ejemplo.org/x.css»"),
    # CSS escapes are read as the browser reads them: «u\72l(» is «url(», «\68» an «h».
    "css-escape-en-url": ('# T\n\n<div style="background:u\\72l(https://ejemplo.org/x.png)">x</div>\n', 3,
                          "el estilo de <div> carga «https://ejemplo.org/x.png»"),
    "css-escape-en-direccion": ('# T\n\n<div style="background:url(\\68 ttps://ejemplo.org/y.png)">x</div>\n', 3,
                                "carga «https://ejemplo.org/y.png»"),
    "css-escape-en-import": ('# T\n\n<style>\n.a { color: red; }\n@\\69mport "https://ejemplo.org/x.css";\n</style>\n',
                             5, "la hoja de estilo <style> carga «https://ejemplo.org/x.css»"),
    # Same origin, but the deck's own code: a second copy of the deck would run.
    "script-del-propio-mazo": ('# T\n\n<script src="js/main.js"></script>\n', 3,
                               "ejecutaría otra vez el código del propio mazo"),
    "script-modulo-del-propio-mazo": ('# T\n\n<script type="module" src="./vendor/reveal/reveal.esm.js"></script>\n', 3,
                                      "ejecutaría otra vez el código del propio mazo"),
    "css-image-set": ("# T\n\n<div style=\"background: image-set('https://ejemplo.org/a.png' 1x)\"></div>\n", 3,
                      "el estilo de <div>"),
    "link-stylesheet": ('# T\n\n<link rel="stylesheet" href="https://ejemplo.org/tema.css">\n', 3, "<link href>"),
    "iframe": ('# T\n\n<iframe src="https://www.ejemplo.org/embed/1"></iframe>\n', 3, "<iframe src>"),
    "iframe-srcdoc": ('# T\n\n<iframe srcdoc="<img src=\'https://ejemplo.org/a.png\'>"></iframe>\n', 3,
                      "<iframe srcdoc>: <img src>"),
    "object": ('# T\n\n<object data="https://ejemplo.org/a.svg"></object>\n', 3, "<object data>"),
    "video-poster": ('# T\n\n<video src="v.mp4" poster="https://ejemplo.org/p.jpg"></video>\n', 3, "<video poster>"),
    "svg-image": ('# T\n\n<svg><image href="https://ejemplo.org/a.png"/></svg>\n', 3, "<image href>"),
    "a-ping": ('# T\n\n<a href="https://ejemplo.org" ping="https://ejemplo.org/ping">x</a>\n', 3, "<a ping>"),
    "base": ('# T\n\n<base href="https://ejemplo.org/">\n', 3, "<base>"),
    "meta-refresh": ('# T\n\n<meta http-equiv="refresh" content="0; url=https://ejemplo.org">\n', 3,
                     '<meta http-equiv="refresh">'),
    "dentro-de-notas": ('# T\n\n::: notes\nMirad\n\n<img src="https://ejemplo.org/a.png">\n:::\n', 6, "<img src>"),
}

# Raw HTML that stays inside the deck's folder, and links anywhere.
ALLOWED = (
    '<img src="figuras/a.png" alt="a">',
    '<img src="data:image/png;base64,iVBORw0KGgo=" alt="punto">',
    '<a href="https://www.ejemplo.org/articulo">el artículo</a>',
    "[el artículo](https://www.ejemplo.org/articulo)",
    '<script src="extra/animacion.js"></script>',
    '<div style="content: \'\\2014\'; background: u\\72l(fondo.png)">x</div>',
    '<div style="color: #123; background: url(fondo.png)">x</div>',
    "Escribid `<img src=\"https://ejemplo.org/a.png\">` y veréis que el navegador lo bloquea.",
)


def read_one(tmp_path, source: str):
    slides = write_deck(tmp_path / "slides", {"01.md": source})
    return slides, read_deck(slides)


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_slide_that_loads_from_another_origin_is_refused(case, tmp_path):
    source, line, expected = REFUSED[case]
    slides = write_deck(tmp_path / "slides", {"01.md": source})
    with pytest.raises(SourceError) as raised:
        read_deck(slides)
    assert raised.value.line == line, str(raised.value)
    assert raised.value.path.name == "01.md"
    assert expected in raised.value.message, raised.value.message
    assert "solo carga archivos de su propia carpeta" in raised.value.message


@pytest.mark.parametrize("html", ALLOWED)
def test_local_loads_and_links_are_allowed(html, tmp_path):
    _, deck = read_one(tmp_path, f"# T\n\n{html}\n")
    assert len(deck.slides) == 1


def test_the_build_stops_with_file_line_and_no_traceback(tmp_path):
    slides = write_deck(tmp_path / "slides", {
        "00.md": "# Bien\n\nTexto.\n",
        "01.md": "# Mal\n\nUn vídeo:\n\n<iframe src=\"https://www.ejemplo.org/embed/1\"></iframe>\n",
    })
    result = run_build(slides, tmp_path / "dist")
    assert result.returncode != 0
    assert f"{slides / '01.md'}:5: <iframe src> carga «https://www.ejemplo.org/embed/1»" in result.stderr
    assert "Traceback (most recent call last)" not in result.stderr + result.stdout
    assert not (tmp_path / "dist").exists()


@pytest.mark.parametrize("url", ["https://a.org/x", "http:x", "//a.org/x", "\\\\a.org/x", "/\\a.org/x",
                                 " https://a.org/x", "ht\ttps://a.org/x", "HTTPS://A.ORG", "ws://a.org",
                                 "file:///etc/passwd", "blob:https://a.org/1"])
def test_urls_that_leave_the_folder(url):
    assert describe_remote(url) is not None


@pytest.mark.parametrize("url", ["a.png", "./a.png", "../a.png", "/a.png", "#sec", "?x=1", "data:,x",
                                 "figuras/a b.png"])
def test_urls_that_stay_in_the_folder(url):
    assert describe_remote(url) is None


def test_every_problem_of_a_fragment_is_found_with_its_line():
    fragment = '<div>\n<img src="a.png">\n<img src="https://a.org/1.png">\n<p style="x">\n<img src="//a.org/2.png">'
    assert [line for line, _ in find_remote_loads(fragment)] == [3, 5]


def test_the_policy_allows_only_the_decks_own_origin():
    policy = compose_policy(inline_scripts=["console.log(1)"])
    directives = dict(part.strip().split(" ", 1) for part in policy.split(";"))
    assert directives["default-src"] == "'self'"
    assert directives["connect-src"] == "'self'"
    script = directives["script-src"].split()
    assert script[:2] == ["'self'", "'wasm-unsafe-eval'"]
    assert all(re.fullmatch(r"'sha256-[A-Za-z0-9+/]{43}='", source) for source in script[2:])
    assert "'unsafe-inline'" not in script and "'unsafe-eval'" not in script
    assert directives["worker-src"] == "'self' blob:"
    assert directives["object-src"] == "'none'"
    # Nothing that would send a report (or anything else) to another server.
    assert "report-uri" not in directives and "report-to" not in directives
    assert "http" not in policy and "*" not in policy


def test_an_inline_script_is_allowed_by_the_hash_of_its_exact_text():
    # base64 of the SHA-256 of the script's UTF-8 text (CSP3 §8.3), computed apart with
    # «echo -n 'doSomething();' | openssl sha256 -binary | openssl base64».
    assert hash_script("doSomething();") == "sha256-RFWPLDbv2BY+rCkDzsE+0fr8ylGr2R2faWMhq4lfEQc="
    script = "console.log('primero')"
    policy = compose_policy(inline_scripts=[script])
    assert f"'{hash_script(script)}'" in policy
    assert hash_script(script + " ") not in policy
    assert compose_policy() != policy


def test_a_pages_inline_scripts_are_found_as_the_browser_hashes_them():
    page = ('<head><script>uno()</script><script src="js/main.js"></script>'
            '<script src=js/b.js defer></script><script>\n dos("</p>")\n</script></head><p><script>x</script>')
    assert find_inline_scripts(page) == ["uno()", '\n dos("</p>")\n', "x"]
    assert policy_for_page(page) == compose_policy(inline_scripts=["uno()", '\n dos("</p>")\n', "x"])
    assert policy_for_page("<p>sin guiones</p>") == compose_policy()


def test_the_build_refuses_a_page_with_inline_scripts_it_did_not_write():
    check_page_scripts("<script>uno()</script><script src=a.js></script>", ["uno()"])
    with pytest.raises(BuildError, match="2 guiones en línea"):
        check_page_scripts("<script>uno()</script><p><script>otro()</script>", ["uno()"])
