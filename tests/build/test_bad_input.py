"""Bad slide sources stop the build with file:line and what is wrong; the previous dist/ stays."""

from __future__ import annotations

import pytest

from deck_fixtures import run_build, write_deck

GOOD = "# Bien\n\nTexto.\n"

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
}


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
    slides = write_deck(tmp_path / "slides", {"00.md": GOOD, **files})
    before = snapshot(previous_dist)
    result = run_build(slides, previous_dist)
    assert result.returncode != 0
    assert f"{slides / where.split(':')[0]}:{where.split(':')[1]}: " in result.stderr, result.stderr
    assert message in result.stderr, result.stderr
    assert "Traceback (most recent call last)" not in result.stderr + result.stdout
    assert snapshot(previous_dist) == before
    assert sorted(path.name for path in previous_dist.parent.iterdir()) == ["dist", "slides"]
