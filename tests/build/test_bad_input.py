"""Bad slide sources stop the build with file:line and what is wrong; the previous dist/ stays.

Also what a careless author (or a hostile cell) can do to the build itself: a file
that is not UTF-8 or starts with a BOM, a file with no slide, invisible control
characters, a cell that ends the process, never finishes or prints a lone
surrogate. Each stops the build with `archivo:línea: qué falla`, never a traceback.

Every case is built in this process (deckbuild.pipeline.build, what build.py
runs): it must stop with a BuildError, which build.py prints as «error: …»
without a traceback. A few cases, one for each kind of step that can stop
(the slides' reader, KaTeX under node, the process that runs the cells), also
go through build.py as a person runs it: exit code, stderr, no traceback.
Starting build.py costs two Pythons and the build's imports (0.7 s of a core)
per case; in this process, a case that stops while reading takes milliseconds.
"""

from __future__ import annotations

import os
import signal

import pytest

from deck_fixtures import run_build, write_deck
from deckbuild.errors import BuildError
from deckbuild.pipeline import build

GOOD = "# Bien\n\nTexto.\n"

STARTER = "```python id=e1 check=laplace-escala\nb = 1\n```\n\n"
HINT = "::: pista\nUna pista.\n:::\n\n"
SOLUTION = "::: solucion\n```python\nb = 1\n```\n\nPor qué.\n:::\n"
EXERCISE = "# T\n\n::: ejercicio\nCompleta la función.\n\n" + STARTER + HINT + SOLUTION + ":::\n"
CHALLENGE = ("# R\n\n::: reto\nEscribe.\n\n::: pista\nCita.\n:::\n\n::: solucion\n"
             "- **Supuesto:** el ruido esconde.\n- **Medición:** 4,02.\n- **Conclusión:** enterrada.\n"
             "- **Limitación:** una sola semilla.\n:::\n:::\n")

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
    # Exercises (deck/README.md, «Exercises»)
    "ejercicio-sin-celda": ({"01.md": EXERCISE.replace(STARTER, "")}, "01.md:3", "le falta su celda"),
    "ejercicio-sin-pista": ({"01.md": EXERCISE.replace(HINT, "")}, "01.md:3", "le falta al menos una «::: pista»"),
    "ejercicio-sin-solucion": ({"01.md": EXERCISE.replace(SOLUTION, "")}, "01.md:3", "le falta su «::: solucion»"),
    "ejercicio-sin-enunciado": ({"01.md": EXERCISE.replace("Completa la función.\n\n", "")},
                                "01.md:3", "le falta el enunciado"),
    "ejercicio-desordenado": ({"01.md": EXERCISE.replace(STARTER + HINT, HINT + STARTER)},
                              "01.md:10", "primero el enunciado, después la celda"),
    "comprobacion-desconocida": ({"01.md": EXERCISE.replace("check=laplace-escala", "check=adivinar")},
                                 "01.md:6", "check=adivinar: no hay esa comprobación"),
    "celda-sin-check": ({"01.md": EXERCISE.replace(" check=laplace-escala", "")},
                        "01.md:6", "necesita check=NOMBRE"),
    "check-fuera-de-ejercicio": ({"01.md": "# T\n\n```python id=a check=laplace-escala\nx = 1\n```\n"},
                                 "01.md:3", "check= solo va en la celda de un «::: ejercicio»"),
    "pista-suelta": ({"01.md": "# T\n\n::: pista\nhola\n:::\n"}, "01.md:3", "«::: pista» solo va dentro"),
    "ejercicio-anidado": ({"01.md": "# T\n\n::: idea\n" + EXERCISE.split("\n", 2)[2] + ":::\n"},
                          "01.md:4", "«::: ejercicio» no puede ir dentro de «::: idea»"),
    "caja-en-ejercicio": ({"01.md": EXERCISE.replace(HINT, "::: aviso\nojo\n:::\n\n" + HINT)},
                          "01.md:10", "no «::: aviso»"),
    "solucion-sin-codigo": ({"01.md": EXERCISE.replace("```python\nb = 1\n```\n", "")},
                            "01.md:14", "lleva un bloque «```python» con el código"),
    "solucion-con-opciones": ({"01.md": EXERCISE.replace("```python\nb = 1", "```python id=x\nb = 1")},
                              "01.md:15", "no es una celda"),
    "dos-ejercicios": ({"01.md": EXERCISE + "\n" + EXERCISE.split("\n", 2)[2].replace("id=e1", "id=e2")},
                       "01.md:23", "solo puede tener un ejercicio"),
    "reto-sin-ejemplo": ({"01.md": CHALLENGE.replace("- **Limitación:** una sola semilla.\n", "")},
                         "01.md:10", "faltan: Limitación"),
    "reto-con-codigo": ({"01.md": CHALLENGE.replace("- **Supuesto:**", "```python\nx = 1\n```\n\n- **Supuesto:**")},
                        "01.md:11", "del reto es un ejemplo de respuesta en texto"),
    "dos-retos": ({"01.md": CHALLENGE, "02.md": CHALLENGE}, "02.md:3", "el mazo tiene un solo reto"),
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
    "enlace-hacia-fuera": ({"01.md": "enlace-fuera"}, "01.md:1", "fuera de la carpeta de diapositivas"),
    # An unclosed comment would hide everything after it, in this file and the next ones.
    "comentario-sin-cerrar": ({"01.md": "# T\n\ntexto\n\n<!-- una nota\n\n# Escondida\n"}, "01.md:5",
                              "comentario HTML «<!--» sin cerrar"),
    "comentario-sin-cerrar-en-html": ({"01.md": "# T\n\n<div>\nuno\n<!-- dos\n</div>\n\nmás\n"}, "01.md:5",
                                      "comentario HTML «<!--» sin cerrar"),
    "figures-superindice": ({"01.md": cell("print(1)", "figures=²")}, "01.md:5", "figures=²: se espera"),
    "timeout-no-numero": ({"01.md": cell("print(1)", "timeout=abc")}, "01.md:5", "timeout=abc: se esperan los segundos"),
    "timeout-cero": ({"01.md": cell("print(1)", "timeout=0")}, "01.md:5", "timeout=0: se esperan"),
    # Cells that break the process that runs them
    "os-exit-0": ({"01.md": cell("import os\nos._exit(0)")}, "01.md:5",
                  "la celda «c» terminó el proceso de Python (os._exit o similar, código 0)"),
    "os-exit-3": ({"01.md": cell("import os\nos._exit(3)")}, "01.md:5", "(os._exit o similar, código 3)"),
    "segfault": ({"01.md": cell("import ctypes\nctypes.string_at(0)")}, "01.md:5",
                 "hizo que Python muriera por la señal SIGSEGV"),
    # One second, the shortest limit there is: the endless loop burns a core until it is stopped.
    "sin-fin": ({"01.md": cell("while True:\n    pass", "timeout=1")}, "01.md:5",
                "la celda «c» tardó más de 1 s y se detuvo"),
    "sin-fin-sordo": ({"01.md": cell("import signal, subprocess\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
                                     "subprocess.Popen(['sleep', '600'])\nwhile True:\n    pass", "timeout=1")},
                      "01.md:5", "tardó más de 1 s"),
    "sustituto-suelto": ({"01.md": cell('print("\\ud800")')}, "01.md:5",
                         "escribe el carácter U+D800, un sustituto suelto"),
    "sustituto-en-error": ({"01.md": cell('raise ValueError("a\\udfff")')}, "01.md:5", "U+DFFF"),
}


def place_case_files(slides, files: dict) -> None:
    """Write a case's files; "carpeta", "enlace" and "enlace-fuera" stand for a folder, a broken
    symlink and a symlink to a file beside the slides' folder."""
    for name, content in files.items():
        if content == "carpeta":
            (slides / name).mkdir()
        elif content == "enlace":
            os.symlink(slides / "no-existe", slides / name)
        elif content == "enlace-fuera":
            secret = slides.parent / "secreto.txt"
            secret.write_text("# SECRETO de esta máquina\n", encoding="utf-8")
            os.symlink(secret, slides / name)
        elif isinstance(content, bytes):
            (slides / name).write_bytes(content)
        else:
            (slides / name).write_text(content, encoding="utf-8", newline="")


@pytest.fixture(scope="module")
def previous_dist(tmp_path_factory):
    """A dist/ from an earlier good build."""
    base = tmp_path_factory.mktemp("anterior")
    out = base / "dist"
    build(write_deck(base / "slides", {"00.md": GOOD}), out)
    return out


@pytest.fixture(scope="module")
def previous_files(previous_dist):
    """The earlier build's files as it left them: every stopped build must leave them so."""
    return snapshot(previous_dist)


def snapshot(folder):
    return {path.relative_to(folder).as_posix(): path.read_bytes() for path in folder.rglob("*") if path.is_file()}


def write_case(case: str, folder) -> tuple:
    """A good slide and the case's files in folder/slides: (slides, where it should stop, what it should say)."""
    files, where, message = CASES[case]
    slides = write_deck(folder / "slides", {"00.md": GOOD})
    place_case_files(slides, files)
    file, line = where.split(":")
    return slides, f"{slides / file}:{line}: ", message


def check_untouched(previous_dist, previous_files) -> None:
    assert snapshot(previous_dist) == previous_files
    assert sorted(path.name for path in previous_dist.parent.iterdir()) == ["dist", "slides"]


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_input_stops_with_file_and_line(case, previous_dist, previous_files, tmp_path, capfd):
    slides, where, message = write_case(case, tmp_path)
    with pytest.raises(BuildError) as stopped:   # build.py prints a BuildError as «error: …», without a traceback
        build(slides, previous_dist)
    said, printed = str(stopped.value), capfd.readouterr()
    assert said.startswith(where), said
    assert message in said, said
    assert "Traceback (most recent call last)" not in said + printed.out + printed.err
    check_untouched(previous_dist, previous_files)


# One case for each kind of step that stops: the slides' reader, KaTeX (node), the process that runs the cells.
THROUGH_BUILD_PY = ("fence-sin-cerrar", "katex", "segfault")


@pytest.mark.parametrize("case", THROUGH_BUILD_PY)
def test_build_py_says_where_and_what_on_stderr_and_exits_1(case, previous_dist, previous_files, tmp_path):
    slides, where, message = write_case(case, tmp_path)
    result = run_build(slides, previous_dist)
    assert result.returncode == 1, (result.returncode, result.stderr)
    assert f"\nerror: {where}" in result.stderr, result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback (most recent call last)" not in result.stderr + result.stdout
    check_untouched(previous_dist, previous_files)


def test_a_symlink_that_stays_in_the_folder_is_read(tmp_path):
    slides = write_deck(tmp_path / "slides", {"00.md": GOOD, "capitulo.txt": "# Enlazada\n\nDentro.\n"})
    os.symlink("capitulo.txt", slides / "01.md")
    build(slides, tmp_path / "dist")
    assert "Dentro." in (tmp_path / "dist" / "index.html").read_text(encoding="utf-8")


def test_a_signal_stops_the_build_cleanly_and_says_so(previous_dist, previous_files, tmp_path):
    """A cell (or `kill`, or a CI timeout) sending SIGTERM to the build: the build says so, cleans up, exits 143."""
    slides = write_deck(tmp_path / "slides", {"00.md": GOOD, "01.md": cell(
        "import os, signal, time\nos.kill(os.getppid(), signal.SIGTERM)\ntime.sleep(30)")})
    result = run_build(slides, previous_dist)
    assert result.returncode == 128 + signal.SIGTERM, (result.returncode, result.stderr)
    assert "construcción detenida" in result.stderr and "sigue como estaba" in result.stderr, result.stderr
    assert "interrumpido (SIGTERM)" in result.stderr
    assert "Traceback (most recent call last)" not in result.stderr + result.stdout
    check_untouched(previous_dist, previous_files)


def test_hidden_files_are_an_editors_not_slides(tmp_path, capsys):
    """An editor's lock (".#00.md", a broken symlink) or a macOS "._00.md" is no slide."""
    slides = write_deck(tmp_path / "slides", {"00.md": GOOD})
    os.symlink("persona@ordenador.1234:1", slides / ".#00.md")
    (slides / "._00.md").write_bytes(b"\x00\x05\x16\x07\xff")
    build(slides, tmp_path / "dist")
    assert "1 diapositivas" in capsys.readouterr().out


def test_a_trailing_rule_ends_the_file_without_an_empty_slide(tmp_path, capsys):
    slides = write_deck(tmp_path / "slides", {"00.md": "# Uno\n\n---\n\n# Dos\n\n---\n\n"})
    build(slides, tmp_path / "dist")
    assert "2 diapositivas" in capsys.readouterr().out


def test_keep_going_shows_a_cell_over_its_limit_and_runs_the_next(tmp_path):
    """Through build.py: --keep-going reaches the build."""
    slides = write_deck(tmp_path / "slides", {"01.md": cell("while True:\n    pass", "timeout=1")
                                              + "\n---\n\n```python id=d\nprint('siguiente')\n```\n"})
    result = run_build(slides, tmp_path / "dist", "--keep-going")
    assert result.returncode == 0, result.stderr
    assert "01.md:5: la celda «c» falló al ejecutarse: La celda tardó más de 1 s" in result.stdout
    page = (tmp_path / "dist" / "index.html").read_text(encoding="utf-8")
    assert "La celda tardó más de 1 s y se detuvo" in page
    assert '<pre class="out-stream out-stdout">siguiente\n</pre>' in page
