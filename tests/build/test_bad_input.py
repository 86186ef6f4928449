"""Bad slide sources stop the build with file:line and what is wrong; the previous dist/ stays."""

from __future__ import annotations

import pytest

from deck_fixtures import run_build, write_deck

GOOD = "# Bien\n\nTexto.\n"

STARTER = "```python id=e1 check=laplace-escala\nb = 1\n```\n\n"
HINT = "::: pista\nUna pista.\n:::\n\n"
SOLUTION = "::: solucion\n```python\nb = 1\n```\n\nPor qué.\n:::\n"
EXERCISE = "# T\n\n::: ejercicio\nCompleta la función.\n\n" + STARTER + HINT + SOLUTION + ":::\n"
CHALLENGE = ("# R\n\n::: reto\nEscribe.\n\n::: pista\nCita.\n:::\n\n::: solucion\n"
             "- **Supuesto:** el ruido esconde.\n- **Medición:** 4,02.\n- **Conclusión:** enterrada.\n"
             "- **Limitación:** una sola semilla.\n:::\n:::\n")

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
