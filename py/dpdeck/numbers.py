"""Cómo escribe números el mazo: una sola regla para todo lo que lee un estudiante.

Todo texto en español que lee un estudiante (la prosa y las notas de las
diapositivas, las etiquetas y marcas de las figuras, las frases en español que
imprimen las celdas y los hechos del laboratorio) escribe los números así:

* coma decimal: ``0,5``, ``36,5``;
* los miles, agrupados con un espacio desde cinco cifras: ``79 433``,
  ``4 588 248``; un número de cuatro cifras no se agrupa (``5000``, ``3236``),
  salvo alineado en una misma leyenda o columna junto a otros mayores
  (``group_thousands=True``: ``9 594`` junto a ``99 999``);
* el signo menos tipográfico (``−2``) y el porcentaje separado por un espacio
  que no se corta (``73 %``); una probabilidad que no es 0 ni 1 nunca se
  escribe «0 %» ni «100 %» (``99,995 %``);
* las potencias de diez con un punto medio y superíndices: ``2·10⁻⁴``;
* un vector entre corchetes, con sus elementos separados por «; », porque la
  coma ya es la decimal: ``[43,6; 41,7; 38,7]``.

Es la recomendación de la RAE y de la norma ISO 80000: el espacio no se
confunde con una coma ni con un punto decimal. Lo que el estudiante escribe
como código va en sintaxis de Python (``1_000``, ``0.01``), y lo que se
muestra en un formato de máquina, rotulado como tal (el JSON del laboratorio),
se deja en ese formato: esas dos cosas no pasan por este módulo. Un arreglo
que una frase en español muestra sí pasa: ``format_vector``.

Funciones puras, sin dependencias: las usan las figuras, las celdas, el censo
y el laboratorio, y así el formato se define una sola vez.
"""

from __future__ import annotations

import math

__all__ = [
    "THOUSANDS_SEPARATOR",
    "PERCENT_SIGN",
    "MINUS_SIGN",
    "format_number",
    "format_significant",
    "format_percent",
    "format_power_of_ten",
    "format_vector",
    "ELEMENT_SEPARATOR",
]

#: Separador de miles: un espacio común, que se ve igual en la fuente de las
#: figuras y en la de la salida de las celdas.
THOUSANDS_SEPARATOR = " "

#: El signo de porcentaje, precedido de un espacio que no se corta.
PERCENT_SIGN = "\u00a0%"

#: El signo menos tipográfico (el guion «-» es el de los programas).
MINUS_SIGN = "\u2212"

#: Separa los elementos de un vector: con coma decimal, la coma no puede hacerlo.
ELEMENT_SEPARATOR = "; "

_SUPERSCRIPTS = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _group_digits(digits: str) -> str:
    groups = []
    while digits:
        groups.insert(0, digits[-3:])
        digits = digits[:-3]
    return THOUSANDS_SEPARATOR.join(groups)


def format_number(value, decimals: int | None = None, *, group_thousands: bool = False) -> str:
    """Escribe un número en español: ``format_number(0.5) == "0,5"``.

    Sin ``decimals`` usa la representación más corta (sin ceros sobrantes:
    ``2.0`` se escribe ``2``); con ``decimals`` redondea a esa cantidad de
    cifras. Los miles se separan con un espacio desde cinco cifras
    (``79 433``; ``3236`` queda junto); con ``group_thousands=True`` también
    desde cuatro (``9 594``), para que una columna que mezcla tamaños se lea
    pareja. Un negativo lleva el signo menos tipográfico (``−2``).
    """
    number = float(value)
    if not math.isfinite(number):
        return "∞" if number > 0 else ("−∞" if number < 0 else "NaN")
    if decimals is None:
        text = f"{number:.12g}" if abs(number) < 1e15 else f"{number:.0f}"
        if "e" in text:  # muy chico: sin notación científica, hasta 12 cifras
            text = f"{number:.12f}".rstrip("0").rstrip(".")
    else:
        text = f"{number:.{int(decimals)}f}"
    whole, _, fraction = text.partition(".")
    negative = whole.startswith("-")
    digits = whole[1:] if negative else whole
    if negative and set(digits + fraction) <= {"0"}:
        negative = False  # «−0» no se escribe
    if len(digits) > (3 if group_thousands else 4):
        digits = _group_digits(digits)
    return (MINUS_SIGN if negative else "") + digits + ("," + fraction if fraction else "")


def format_significant(value, digits: int = 3) -> str:
    """Escribe un número con ``digits`` cifras significativas, sin ceros de más.

    ``format_significant(0.095) == "0,095"``, ``format_significant(55.83) ==
    "55,8"``, ``format_significant(3236.4) == "3236"``: lo justo para leerlo de
    un vistazo en una tabla. Los enteros grandes no pierden cifras.
    """
    number = float(value)
    if number == 0 or not math.isfinite(number):
        return format_number(number)
    decimals = max(0, int(digits) - 1 - math.floor(math.log10(abs(number))))
    text = f"{number:.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    decimals = len(text.partition(".")[2])
    return format_number(number, decimals)


def format_percent(fraction, decimals: int = 0, *, avoid_ends: bool = False) -> str:
    """Escribe una proporción como porcentaje: ``format_percent(0.731, 1) == "73,1 %"``.

    El espacio antes de «%» no se corta (``PERCENT_SIGN``). Con
    ``avoid_ends=True``, una proporción que no es exactamente 0 ni 1 nunca se
    escribe «0 %» ni «100 %»: se agregan decimales hasta que se vea que no lo
    es (``format_percent(0.9999546, 1, avoid_ends=True) == "99,995 %"``). Es
    para una probabilidad o una creencia, donde «100 %» diría certeza.
    """
    fraction = float(fraction)
    decimals = int(decimals)
    if avoid_ends and 0.0 < fraction < 1.0:
        while decimals < 15 and round(100.0 * fraction, decimals) in (0.0, 100.0):
            decimals += 1
    return format_number(100.0 * fraction, decimals) + PERCENT_SIGN


def format_vector(values, decimals: int | None = None, *, group_thousands: bool = False) -> str:
    """Escribe un vector o una matriz en español: ``format_vector([0.5, -2]) == "[0,5; −2]"``.

    Cada elemento con ``format_number`` (con los mismos ``decimals`` y
    ``group_thousands``), separados por «; » (``ELEMENT_SEPARATOR``) porque la
    coma ya es la decimal. Una matriz (una secuencia de filas, o un arreglo de
    numpy de dos dimensiones) va como la escribe numpy: una fila por línea,
    cada columna alineada a la derecha.
    """
    rows = [list(row) if _is_sequence(row) else row for row in values]
    if not any(isinstance(row, list) for row in rows):
        return "[" + ELEMENT_SEPARATOR.join(format_number(value, decimals, group_thousands=group_thousands)
                                            for value in rows) + "]"
    if not all(isinstance(row, list) for row in rows) or any(_is_sequence(v) for row in rows for v in row):
        raise ValueError("format_vector escribe un vector o una matriz (filas de números), no otra forma")
    texts = [[format_number(value, decimals, group_thousands=group_thousands) for value in row] for row in rows]
    columns = max((len(row) for row in texts), default=0)
    widths = [max((len(row[i]) for row in texts if i < len(row)), default=0) for i in range(columns)]
    lines = ["[" + ELEMENT_SEPARATOR.join(text.rjust(width) for text, width in zip(row, widths)) + "]"
             for row in texts]
    return "[" + "\n ".join(lines) + "]"


def _is_sequence(value) -> bool:
    return hasattr(value, "__iter__") and not isinstance(value, (str, bytes))


def format_power_of_ten(value, digits: int = 2) -> str:
    """Escribe un número pequeño o grande como potencia de diez: ``2e-4`` → ``"2·10⁻⁴"``.

    Con ``digits`` cifras significativas como máximo; una mantisa 1 se omite
    (``1e-5`` → ``"10⁻⁵"``).
    """
    number = float(value)
    if number == 0 or not math.isfinite(number):
        return format_number(number)
    exponent = math.floor(math.log10(abs(number)))
    mantissa = round(number / 10.0**exponent, max(int(digits) - 1, 0))
    if abs(mantissa) >= 10:
        mantissa /= 10
        exponent += 1
    power = "10" + str(exponent).translate(_SUPERSCRIPTS)
    if mantissa == 1:
        return power
    if mantissa == -1:
        return MINUS_SIGN + power
    return f"{format_number(mantissa)}·{power}"
