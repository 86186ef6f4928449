"""La frase que dice lo que muestra cada figura de la clase: su texto alternativo.

Cada función de ``dpdeck.figures`` y ``dpdeck.figures_federated`` da a su
figura, con ``describe_figure``, una frase en español (qué curvas, qué ejes y
el número clave, escrito según ``dpdeck.numbers``). ``run_cell``
(``dpdeck.classroom.cellrun``) la lee con ``figure_description`` y la lleva al
campo ``description`` de la salida; la página y la construcción la usan como
texto alternativo (``dpdeck.classroom.protocol.figure_alt``).

Solo guarda y lee un atributo: no importa matplotlib, y quien ejecuta celdas
puede leer la frase sin cargar el código de dibujo.
"""

from __future__ import annotations

import re

__all__ = ["describe_figure", "figure_description"]


# Where a Figure carries its description until `run_cell` turns it into an output.
_DESCRIPTION_ATTRIBUTE = "_dpdeck_description"


def describe_figure(figure, description: str):
    """Da a una figura de matplotlib la frase que dice lo que muestra; devuelve la figura.

    Las funciones de `dpdeck.figures` la ponen en cada figura que dibujan (en
    español, con el número clave escrito según `dpdeck.numbers`); `run_cell`
    la lleva al campo ``description`` de la salida, y la página y la
    construcción la usan como texto alternativo (`figure_alt`).
    """
    # Line breaks and runs of spaces go; a no-break space (``73 %``) stays.
    text = re.sub(r"[ \t\r\n]+", " ", str(description)).strip()
    if not text:
        raise ValueError("la descripción de una figura no puede estar vacía")
    setattr(figure, _DESCRIPTION_ATTRIBUTE, text)
    return figure


def figure_description(figure) -> str | None:
    """La frase que `describe_figure` dio a una figura, o None si no tiene."""
    return getattr(figure, _DESCRIPTION_ATTRIBUTE, None)
