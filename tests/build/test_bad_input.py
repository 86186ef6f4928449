"""Bad slide sources stop the build with file:line and what is wrong; the previous dist/ stays.

Also what a careless author (or a hostile cell) can do to the build itself: a file
that is not UTF-8 or starts with a BOM, a file with no slide, invisible control
characters, a cell that ends the process, never finishes or prints a lone
surrogate. Each stops the build with `archivo:línea: qué falla`, never a traceback.
"""

from __future__ import annotations

import os

import pytest

from deck_fixtures import run_build, write_deck

GOOD = "# Bien\n\nTexto.\n"


def cell(code: str, options: str = "") -> str:
    """A file whose cell «c» opens at line 5."""
    return f"# T\n\ntexto\n\n```python id=c {options}\n{code}\n```\n"

CASES = {
    "fence-sin-cerrar": ({"01.md": "# T\n\ntexto\n\n```python id=a\nprint(1)\n\n---\n\n# Otra\n"},
                         "01.md:5", "bloque de código sin cerrar"),
    "opcion-desconocida": ({"01.md": "# T\n\n```python id=a color=rojo\nprint(1)\n```\n"},
                           "01.md:3", "opción de celda desconocida «color»"),
    "sin-id": ({"01.md": "# T\n\n```python figures=0\nprint(1)\n```\n"}, "01.md:3", "le falta «id=…»"),
    "id-no-valido": ({"01.md": "# T\n\n```python id=Ataque_1\nprint(1)\n```\n"}, "01.md:3", "id de celda no válido"),
    "layout-desconocido": ({"01.md": "# T\n\n```python id=a layout=grid\nprint(1)\n```\n"},
                           "01.md:3", "layout=grid"),
    "id-repetido": ({"01.md": "# T\n\n```python id=a\nprint(1)\n```\n",
                     "02.md": "# U\n\ntexto\n\n```python id=a\nprint(2)\n```\n"},
                    "02.md:5", "id de celda repetido «a» (ya usado en"),
    "celda-que-falla": ({"01.md": "# T\n\nuno\n\n```python id=division\nx = 1\nx / 0\n```\n"},
                        "01.md:5", "la celda «division» falló al ejecutarse: ZeroDivisionError"),
    "figuras-distintas": ({"01.md": "# T\n\n```python id=sin-figura figures=2\nprint(1)\n```\n"},
                          "01.md:3", "dibuja 0 figura(s) pero declara figures=2"),
    "contenedor-desconocido": ({"01.md": "# T\n\n::: cuadro\nhola\n:::\n"},
                               "01.md:3", "contenedor desconocido «::: cuadro»"),
    "contenedor-sin-cerrar": ({"01.md": "# T\n\n::: notes\nhola\n"}, "01.md:3", "sin cerrar"),
    "atributo-desconocido": ({"01.md": "# T\n\n---\n\n<!-- .slide: data-x=\"1\" -->\n# U\n"},
                             "01.md:5", "atributo de diapositiva desconocido «data-x»"),
    "atributo-fuera-de-lugar": ({"01.md": "# T\n\n<!-- .slide: class=\"a\" -->\n"},
                                "01.md:3", "primera línea de la diapositiva"),
    "katex": ({"01.md": "# T\n\nbien $x^2$\n\ny mal $\\frac{1$ aquí\n"}, "01.md:5", "KaTeX"),
    "katex-bloque": ({"01.md": "# T\n\n$$\n\\begin{matrix} a\n$$\n"}, "01.md:3", "KaTeX"),
    "dos-titulos": ({"01.md": "# T\n\n# U\n"}, "01.md:3", "un título «#»"),
    # The file itself
    "bom": ({"01.md": "\ufeff# Título\n\ntexto\n"}, "01.md:1", "marca de orden de bytes (BOM"),
    "no-es-utf8": ({"01.md": "# T\n\ntexto\n\nespa\xf1a\n".encode("latin-1")}, "01.md:5",
                   "no es UTF-8 válido (byte 0xf1 en la columna 5)"),
    "archivo-vacio": ({"01.md": ""}, "01.md:1", "el archivo está vacío"),
    "archivo-en-blanco": ({"01.md": "  \n\n\t\n"}, "01.md:1", "el archivo está vacío"),
    "solo-separadores": ({"01.md": "---\n---\n"}, "01.md:1", "una línea «---»"),
    "cabecera-yaml": ({"01.md": "---\ntitle: x\n---\n# T\n"}, "01.md:1", "¿una cabecera YAML?"),
    "diapositiva-vacia": ({"01.md": "# A\n\n---\n\n---\n\n# B\n"}, "01.md:5",
                          "diapositiva vacía: no hay nada antes de esta línea «---» desde la línea 4"),
    "caracter-nulo": ({"01.md": "# T\n\ntex\x00to\n"}, "01.md:3", "carácter invisible U+0000 en la columna 4"),
    # U+2028 is a line break for Python's splitlines but not for markdown-it: every later line would be off.
    "separador-de-linea": ({"01.md": "# T\n\nuno\u2028dos\n\n```python id=Mal\nprint(1)\n```\n"}, "01.md:3",
                           "carácter invisible U+2028"),
    "salto-de-pagina": ({"01.md": "# T\n\x0c\ntexto\n"}, "01.md:2", "carácter invisible U+000C"),
    "crlf": ({"01.md": "# T\r\n\r\ntexto\r\n\r\n```python id=Mal\r\nprint(1)\r\n```\r\n"}, "01.md:5",
             "id de celda no válido «Mal»"),
    "carpeta-md": ({"x.md": "carpeta"}, "x.md:1", "es una carpeta"),
    "enlace-roto": ({"x.md": "enlace"}, "x.md:1", "enlace a un archivo que no existe"),
    "figures-superindice": ({"01.md": cell("print(1)", "figures=²")}, "01.md:5", "figures=²: se espera"),
    "timeout-no-numero": ({"01.md": cell("print(1)", "timeout=abc")}, "01.md:5", "timeout=abc: se esperan los segundos"),
    "timeout-cero": ({"01.md": cell("print(1)", "timeout=0")}, "01.md:5", "timeout=0: se esperan"),
    # Cells that break the process that runs them
    "os-exit-0": ({"01.md": cell("import os\nos._exit(0)")}, "01.md:5",
                  "la celda «c» terminó el proceso de Python (os._exit o similar, código 0)"),
    "os-exit-3": ({"01.md": cell("import os\nos._exit(3)")}, "01.md:5", "(os._exit o similar, código 3)"),
    "segfault": ({"01.md": cell("import ctypes\nctypes.string_at(0)")}, "01.md:5",
                 "hizo que Python muriera por la señal SIGSEGV"),
    "sin-fin": ({"01.md": cell("while True:\n    pass", "timeout=2")}, "01.md:5",
                "la celda «c» tardó más de 2 s y se detuvo"),
    "sin-fin-sordo": ({"01.md": cell("import signal, subprocess\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                     "subprocess.Popen(['sleep', '600'])\nwhile True:\n    pass", "timeout=2")},
                      "01.md:5", "tardó más de 2 s"),
    "sustituto-suelto": ({"01.md": cell('print("\\ud800")')}, "01.md:5",
                         "escribe el carácter U+D800, un sustituto suelto"),
    "sustituto-en-error": ({"01.md": cell('raise ValueError("a\\udfff")')}, "01.md:5", "U+DFFF"),
}


def place_case_files(slides, files: dict) -> None:
    """Write a case's files; "carpeta" and "enlace" stand for a folder and a broken symlink."""
    for name, content in files.items():
        if content == "carpeta":
            (slides / name).mkdir()
        elif content == "enlace":
            os.symlink(slides / "no-existe", slides / name)
        elif isinstance(content, bytes):
            (slides / name).write_bytes(content)
        else:
            (slides / name).write_text(content, encoding="utf-8", newline="")


@pytest.fixture(scope="module")
def previous_dist(tmp_path_factory):
    """A dist/ from an earlier good build."""
    base = tmp_path_factory.mktemp("anterior")
    out = base / "dist"
    result = run_build(write_deck(base / "slides", {"00.md": GOOD}), out)
    assert result.returncode == 0, result.stderr
    return out


def snapshot(folder):
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_stops_with_file_and_line(case, previous_dist, tmp_path):
    files, where, message = CASES[case]
    slides = write_deck(tmp_path / "slides", {"00.md": GOOD})
    place_case_files(slides, files)
    before = snapshot(previous_dist)
    result = run_build(slides, previous_dist)
    assert result.returncode != 0
    assert f"{slides / where.split(':')[0]}:{where.split(':')[1]}: " in result.stderr, result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback (most recent call last)" not in result.stderr + result.stdout
    assert snapshot(previous_dist) == before
    assert sorted(path.name for path in previous_dist.parent.iterdir()) == ["dist", "slides"]


def test_hidden_files_are_an_editors_not_slides(tmp_path):
    """An editor's lock (".#00.md", a broken symlink) or a macOS "._00.md" is no slide."""
    slides = write_deck(tmp_path / "slides", {"00.md": GOOD})
    os.symlink("persona@ordenador.1234:1", slides / ".#00.md")
    (slides / "._00.md").write_bytes(b"\x00\x05\x16\x07\xff")
    result = run_build(slides, tmp_path / "dist")
    assert result.returncode == 0, result.stderr
    assert "1 diapositivas" in result.stdout


def test_a_trailing_rule_ends_the_file_without_an_empty_slide(tmp_path):
    slides = write_deck(tmp_path / "slides", {"00.md": "# Uno\n\n---\n\n# Dos\n\n---\n\n"})
    result = run_build(slides, tmp_path / "dist")
    assert result.returncode == 0, result.stderr
    assert "2 diapositivas" in result.stdout


def test_keep_going_shows_a_cell_over_its_limit_and_runs_the_next(tmp_path):
    slides = write_deck(tmp_path / "slides", {"01.md": cell("while True:\n    pass", "timeout=2")
                                              + "\n---\n\n```python id=d\nprint('siguiente')\n```\n"})
    result = run_build(slides, tmp_path / "dist", "--keep-going")
    assert result.returncode == 0, result.stderr
    assert "01.md:5: la celda «c» falló al ejecutarse: La celda tardó más de 2 s" in result.stdout
    page = (tmp_path / "dist" / "index.html").read_text(encoding="utf-8")
    assert "La celda tardó más de 2 s y se detuvo" in page
    assert '<pre class="out-stream out-stdout">siguiente\n</pre>' in page
