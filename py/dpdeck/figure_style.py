"""El estilo común de las figuras de la clase: tamaños, colores, comas decimales y piezas de ejes.

Lo usan ``dpdeck.figures`` (capítulos 1–5) y ``dpdeck.figures_federated``
(capítulo 6), para que todas las figuras se vean iguales en el proyector:

* tamaño pensado para caber junto al código en una diapositiva de 1280×720
  (``FIGSIZE`` en pulgadas; el ejecutor guarda el PNG a 120 ppp y la
  diapositiva lo muestra a unos 486 de sus 1280 px: 0,81 px por px). Con
  ``TICK_SIZE`` = 13,5 pt las cifras de las marcas miden unos 13 px de alto
  en la diapositiva, y los rótulos de los ejes unos 15 px;
* colores de alto contraste que se distinguen también en escala de grises y
  con daltonismo (azul, naranja, verde, gris);
* coma decimal en las marcas numéricas de los ejes (``0,5``, no ``0.5``), con
  un formateador propio que envuelve al de matplotlib (sin ``locale``, que no
  existe igual en el navegador); las marcas que son nombres se dejan tal cual.

Los números que una figura escribe ella misma (leyendas, rótulos) pasan por
``dpdeck.numbers``. Nada aquí calcula ni mira datos.

Dibujar rápido (una celda que vuelve a correr en el navegador dibuja otra
vez): las figuras miden sus márgenes con ``fit_margins`` en vez del diseño
«constrained», que las dibujaba dos veces; las marcas se escriben como texto
simple, sin mathtext; los ejes logarítmicos no llevan marcas secundarias.
"""

from __future__ import annotations

import math
import re
from functools import wraps

import matplotlib
import numpy as np
from matplotlib import cbook, ticker
from matplotlib.figure import Figure
from matplotlib.font_manager import FontProperties
from matplotlib.textpath import text_to_path

from .numbers import MINUS_SIGN, PERCENT_SIGN, format_number

__all__ = [
    "FIGSIZE",
    "COLORS",
    "SEQUENCE",
    "FONT_SIZE",
    "LABEL_SIZE",
    "TICK_SIZE",
    "LEGEND_SIZE",
    "LINE_WIDTH",
    "STYLE",
    "use_decimal_comma",
    "styled",
    "new_figure",
    "style_axes",
    "integer_ticks",
    "plain_log_ticks",
    "percent_ticks",
    "as_float_array",
    "check_same_length",
    "fix_margins",
    "fit_margins",
    "legend_above",
    "number_ticks",
    "spanish_list",
]

# Ancho × alto en pulgadas: a 120 ppp son 600×426 píxeles, que la diapositiva
# muestra a unos 486 px de ancho junto a un bloque de código de 16 líneas.
FIGSIZE = (5.0, 3.55)

COLORS = {
    "azul": "#1f5fa8",
    "naranja": "#d9730d",
    "verde": "#1e7a4f",
    "rojo": "#b3261e",
    "morado": "#6a3d9a",
    "gris": "#6b7280",
    "gris_claro": "#c9ced6",
    "tinta": "#15202e",
}

# Secuencia para familias de curvas (varios ε, varias contabilidades).
SEQUENCE = ["#1f5fa8", "#d9730d", "#1e7a4f", "#6a3d9a", "#b3261e"]

# Tamaños en puntos. Ningún texto de una figura baja de TICK_SIZE: a 120 ppp
# y mostrada a 0,81, una letra de 13,5 pt ocupa 18 px de la diapositiva
# (cifras de unos 13 px de alto), legible desde el fondo del salón.
FONT_SIZE = 14.5
LABEL_SIZE = 15.5
TICK_SIZE = 13.5
LEGEND_SIZE = 13.5
LINE_WIDTH = 2.6
# Largo de las marcas principales, en puntos (``style_axes``; ``fit_margins`` lo cuenta).
TICK_LENGTH = 5.0
# Aire entre la leyenda de arriba y el borde de la figura, en unidades de su letra.
LEGEND_BORDER_PAD = 0.25

# Solo lo que se lee al crear los artistas; lo que se lee al dibujar (marcas,
# rejilla) se fija explícitamente en `style_axes`, porque el PNG se guarda
# fuera de este contexto.
STYLE = {
    "font.size": FONT_SIZE,
    "axes.labelsize": LABEL_SIZE,
    "axes.titlesize": LABEL_SIZE,
    "axes.linewidth": 1.2,
    "axes.edgecolor": COLORS["tinta"],
    "axes.labelcolor": COLORS["tinta"],
    "axes.prop_cycle": matplotlib.cycler(color=SEQUENCE),
    "axes.unicode_minus": True,
    "legend.fontsize": LEGEND_SIZE,
    "legend.frameon": False,
    "lines.linewidth": LINE_WIDTH,
    "text.color": COLORS["tinta"],
    "figure.facecolor": "white",
    "savefig.facecolor": "white",
    "mathtext.default": "regular",
}


# ------------------------------------------------------------------ formato --


def _comma(text: str) -> str:
    if "$" in text:
        # En mathtext una coma suelta lleva espacio detrás; entre llaves no.
        return text.replace(".", "{,}")
    return text.replace(".", ",")


_SUPERSCRIPT_DIGITS = str.maketrans("-\u22120123456789", "⁻⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
_MATHDEFAULT = re.compile(r"\\mathdefault\{((?:[^{}]|\{[^{}]*\})*)\}")
_POWER = re.compile(r"\^\{([-\u2212]?\d+)\}")


def _plain_text(text: str) -> str:
    """Una marca de matplotlib en mathtext (``$\\mathdefault{10^{4}}$``) como texto simple (``10⁴``).

    Los formateadores de matplotlib escriben las marcas en mathtext (cifras,
    potencias de diez, «×»); interpretarlo es lo más caro de dibujar cada
    marca, y aquí no hace falta: las mismas cifras, con superíndices Unicode,
    se leen igual. Lo que no sea solo eso se deja en mathtext.
    """
    if len(text) < 2 or not (text.startswith("$") and text.endswith("$")) or text.count("$") != 2:
        return text
    body = _MATHDEFAULT.sub(r"\1", text[1:-1])
    body = _POWER.sub(lambda match: match[1].translate(_SUPERSCRIPT_DIGITS), body)
    body = re.sub(r"\s*\\times\s*", "×", body).replace("-", MINUS_SIGN)
    if re.search(r"[\\{}^_$]", body):
        return text
    return body


class _DecimalCommaFormatter(ticker.Formatter):
    """Envuelve un formateador de matplotlib y cambia el punto decimal por coma."""

    def __init__(self, inner: ticker.Formatter):
        self.inner = inner

    def set_axis(self, axis):
        super().set_axis(axis)
        self.inner.set_axis(axis)

    def set_locs(self, locs):
        super().set_locs(locs)
        self.inner.set_locs(locs)

    def __call__(self, x, pos=None):
        return _comma(_plain_text(self.inner(x, pos)))

    def format_ticks(self, values):
        self.set_locs(values)
        return [self(value, index) for index, value in enumerate(values)]

    def get_offset(self):
        return _comma(_plain_text(self.inner.get_offset()))

    def format_data(self, value):
        return _comma(self.inner.format_data(value))

    def format_data_short(self, value):
        return _comma(self.inner.format_data_short(value))


# Solo estos formateadores escriben números; los demás (los nombres que pone
# `set_yticks(posiciones, nombres)`, que según la versión de matplotlib son un
# FixedFormatter o un FuncFormatter, o un eje de categorías) se dejan tal cual:
# «1.º a 4.º» no lleva coma decimal.
_NUMBER_FORMATTERS = (
    ticker.ScalarFormatter,
    ticker.LogFormatter,
    ticker.FormatStrFormatter,
    ticker.StrMethodFormatter,
    ticker.PercentFormatter,
    ticker.EngFormatter,
    ticker.LogitFormatter,
)


def use_decimal_comma(ax) -> None:
    """Pone coma decimal en las marcas numéricas de los dos ejes de ``ax``.

    Las marcas que son nombres (``ax.set_yticks(posiciones, nombres)`` o un
    eje de categorías) quedan como están. Se llama después de fijar la escala
    (lineal o logarítmica), porque cambiar la escala reemplaza los
    formateadores.
    """
    for axis in (ax.xaxis, ax.yaxis):
        for getter, setter in (
            (axis.get_major_formatter, axis.set_major_formatter),
            (axis.get_minor_formatter, axis.set_minor_formatter),
        ):
            current = getter()
            if isinstance(current, _NUMBER_FORMATTERS):
                if isinstance(current, ticker.ScalarFormatter):
                    current.set_useMathText(True)
                setter(_DecimalCommaFormatter(current))


def styled(function):
    """Construye la figura dentro del estilo común, sin tocar el estado global."""

    @wraps(function)
    def wrapper(*args, **kwargs):
        with matplotlib.rc_context(STYLE):
            return function(*args, **kwargs)

    return wrapper


def new_figure(figsize=FIGSIZE) -> tuple[Figure, object]:
    """Una figura nueva con un solo par de ejes, sin pasar por pyplot: ``(figure, ax)``.

    Sin diseño automático: la figura fija sus márgenes al final con
    ``fit_margins``.
    """
    figure = Figure(figsize=figsize)
    ax = figure.add_subplot()
    return figure, ax


def style_axes(ax, *, grid_axis: str = "both") -> None:
    """Ejes para proyector: sin marco arriba ni a la derecha, marcas grandes, rejilla suave, coma decimal.

    Un eje logarítmico queda sin marcas secundarias (sin rótulo, ocho por
    década): eran la mayor parte del tiempo de dibujar la figura.
    """
    ax.spines["top"].set_visible(False)
    ax.spines["right"].set_visible(False)
    ax.tick_params(
        which="major", labelsize=TICK_SIZE, length=TICK_LENGTH, width=1.1,
        colors=COLORS["tinta"], labelcolor=COLORS["tinta"],
    )
    ax.tick_params(which="minor", labelsize=TICK_SIZE, length=3, width=0.8)
    for axis in (ax.xaxis, ax.yaxis):
        if axis.get_scale() == "log":
            axis.set_minor_locator(ticker.NullLocator())
    if grid_axis:
        ax.grid(True, axis=grid_axis, which="major", color="#e3e7ec", linewidth=1.0)
        ax.set_axisbelow(True)
    use_decimal_comma(ax)


def integer_ticks(axis) -> None:
    """Pocas marcas en valores redondos (1, 2, 5 × 10ⁿ): legibles desde lejos."""
    axis.set_major_locator(ticker.MaxNLocator(nbins=5, steps=[1, 2, 5, 10]))


def plain_log_ticks(axis) -> None:
    """En un eje logarítmico de pocas décadas, «0,1  1  10  100» en vez de potencias de diez.

    Solo para ejes que no pasan de 1000: más arriba, las potencias de diez se
    leen mejor que «10 000» junto a un «3236» de la clase.
    """
    axis.set_major_formatter(ticker.FuncFormatter(lambda value, _position: format_number(value)))


def percent_ticks(axis) -> None:
    """Proporciones (0,76) escritas como porcentajes («76 %»), como las dice la clase.

    Las marcas caen en porcentajes enteros (pasos de 1, 2 o 5 puntos): así la
    etiqueta sin decimales nunca redondea (0,775 no se escribe «78 %»).
    """
    axis.set_major_locator(ticker.MaxNLocator(nbins=5, steps=[1, 2, 5, 10]))
    axis.set_major_formatter(ticker.PercentFormatter(xmax=1, decimals=0, symbol=PERCENT_SIGN))


def as_float_array(values, *, name: str) -> np.ndarray:
    """Una lista de números no vacía como arreglo ``float``; si no lo es, un error que nombra ``name``."""
    array = np.asarray(values, dtype=float)
    if array.ndim != 1 or array.size == 0:
        raise ValueError(f"{name} debe ser una lista de números no vacía; se recibió forma {array.shape}")
    return array


def check_same_length(**arrays) -> None:
    """Exige que las listas tengan la misma longitud; el error nombra cada una con su largo."""
    sizes = {name: len(array) for name, array in arrays.items()}
    if len(set(sizes.values())) > 1:
        detail = ", ".join(f"{name}: {size}" for name, size in sizes.items())
        raise ValueError(f"las listas deben tener la misma longitud ({detail})")


# ------------------------------------------------------- márgenes fijos --
# El diseño «constrained» de matplotlib mide cada texto antes de dibujar y es
# la mitad del tiempo de una figura; en el navegador, eso se nota al volver a
# ejecutar una celda. Una figura con ejes de rótulos conocidos puede fijar sus
# márgenes y ahorrarlo.


def fix_margins(figure, *, left=0.95, right=0.15, bottom=0.68, top=0.5, hspace=None) -> None:
    """Márgenes fijos en pulgadas alrededor de los ejes (sin el diseño «constrained»).

    ``top`` deja lugar a una fila de leyenda (``legend_above``); ``hspace`` es
    el espacio entre paneles apilados, en pulgadas.
    """
    width, height = figure.get_size_inches()
    panels = max(1, len(figure.axes))
    spacing = None if hspace is None else hspace / ((height - top - bottom) / panels)
    figure.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height,
                           top=1 - top / height, hspace=spacing)


def legend_above(figure, ax, *, ncols: int = 2) -> None:
    """Leyenda arriba de la figura, fuera de los ejes (nunca tapa una curva), en el margen de ``fix_margins`` o ``fit_margins``."""
    handles, labels = ax.get_legend_handles_labels()
    figure.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 1.0), ncols=ncols,
                  fontsize=LEGEND_SIZE, frameon=False, handlelength=1.8, columnspacing=1.2,
                  borderaxespad=LEGEND_BORDER_PAD)


# ------------------------------------------------------- márgenes medidos --
# ``fit_margins`` hace lo que hacía el diseño «constrained» con lo poco que
# cambia de una figura a otra: mide los textos que rodean a los ejes (los
# rótulos de las marcas que se verán, los de los ejes, la leyenda de arriba)
# y deja justo ese lugar. No crea las marcas ni dibuja la figura una vez de
# más para medirla, así que una celda que vuelve a correr en el navegador no
# paga dos dibujos; y como mide, un rótulo más ancho (otro ε, otra escala)
# sigue cabiendo.

# Aire entre un texto y el borde de la figura, y entre la leyenda de arriba y
# los ejes, en pulgadas.
EDGE = 0.06
LEGEND_GAP = 0.06
POINTS_PER_INCH = 72.0


def _text_size(text: str, size: float) -> tuple[float, float]:
    """Ancho y alto (pulgadas) de un texto de una línea a ``size`` puntos, como lo dispone matplotlib."""
    if not text:
        return 0.0, 0.0
    properties = FontProperties(size=size)
    width, height, _descent = text_to_path.get_text_width_height_descent(
        text, properties, ismath=cbook.is_math_text(text))
    # matplotlib da a cada línea al menos el alto de «lp» (ascendentes y descendentes).
    line = text_to_path.get_text_width_height_descent("lp", properties, ismath=False)[1]
    return width / POINTS_PER_INCH, max(height, line) / POINTS_PER_INCH


def _visible_tick_labels(axis) -> list[tuple[float, str]]:
    """(posición en fracción del eje, rótulo) de cada marca principal que se dibujará."""
    low, high = sorted(axis.get_view_interval())
    locations = [value for value in axis.get_majorticklocs()
                 if low - 1e-9 * (abs(low) + abs(high)) <= value <= high + 1e-9 * (abs(low) + abs(high))]
    labels = axis.get_major_formatter().format_ticks(locations)
    transform = axis.get_transform()
    start, end = transform.transform([low, high])
    span = (end - start) or 1.0
    return [((transform.transform([value])[0] - start) / span, label)
            for value, label in zip(locations, labels) if label]


def _legend_height(legend) -> float:
    """Alto (pulgadas) de una leyenda sin marco: filas de texto, el espacio entre ellas y su borde."""
    size = legend.prop.get_size_in_points() / POINTS_PER_INCH
    texts = [text.get_text() for text in legend.get_texts()]
    if not texts:
        return 0.0
    columns = max(1, int(getattr(legend, "_ncols", 1)))
    rows = math.ceil(len(texts) / columns)
    row = max(max(_text_size(text, legend.prop.get_size_in_points())[1] for text in texts),
              legend.handleheight * size)
    return (rows * row + (rows - 1) * legend.labelspacing * size
            + 2 * legend.borderpad * size + legend.borderaxespad * size)


def _overhang(ticks, length: float) -> tuple[float, float]:
    """Cuánto sobresalen del eje (antes del inicio, después del final) rótulos centrados en sus marcas.

    ``ticks`` son pares (medio largo del rótulo, posición en fracción del eje)
    y ``length`` el largo del eje, todo en pulgadas.
    """
    before = max((half - place * length for half, place in ticks), default=0.0)
    after = max((half - (1 - place) * length for half, place in ticks), default=0.0)
    return max(before, 0.0), max(after, 0.0)


def fit_margins(figure, ax) -> None:
    """Márgenes de ``ax`` (el único par de ejes) justos para sus textos, medidos sin dibujar.

    Abajo: el rótulo del eje x, sus marcas y sus rótulos; arriba, la leyenda
    de la figura (``legend_above``) y lo que sobresale el rótulo de marca más
    alto; a la izquierda, el rótulo del eje y y el rótulo de marca más ancho;
    a la derecha, lo que sobresale el último rótulo del eje x. Los rótulos
    son los que se dibujarán: cuántas marcas caben depende del largo del eje,
    así que se mide primero el alto y después el ancho. Se llama al final,
    con los límites, las escalas y los formateadores ya puestos.
    """
    width, height = figure.get_size_inches()
    tick_room = (TICK_LENGTH + matplotlib.rcParams["xtick.major.pad"]) / POINTS_PER_INCH
    label_pad = matplotlib.rcParams["axes.labelpad"] / POINTS_PER_INCH

    def measure(axis):
        return [(_text_size(label, TICK_SIZE), place) for place, label in _visible_tick_labels(axis)]

    def place_axes(left, right, bottom, top):
        figure.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height,
                               top=1 - top / height)

    x_label = _text_size(ax.xaxis.label.get_text(), ax.xaxis.label.get_fontsize())[1]
    y_label = _text_size(ax.yaxis.label.get_text(), ax.yaxis.label.get_fontsize())[1]
    legend = max((_legend_height(legend) for legend in figure.legends), default=0.0)
    above = legend + LEGEND_GAP if legend else EDGE
    left, right = 1.0, EDGE

    # 1. Vertical: the x tick labels are one line, whatever their number.
    x_ticks = measure(ax.xaxis)
    bottom = (EDGE + (x_label + label_pad if x_label else 0.0)
              + max((size[1] for size, _ in x_ticks), default=0.0) + tick_room)
    place_axes(left, right, bottom, above)
    y_ticks = measure(ax.yaxis)
    tallest = max((size[1] for size, _ in y_ticks), default=0.0)
    top = above + _overhang([(size[1] / 2, place) for size, place in y_ticks], height - above - bottom)[1]
    if ax.yaxis.get_major_formatter().get_offset():
        top += tallest  # the offset («×10⁴») stands above the axis
    place_axes(left, right, bottom, top)

    # 2. Horizontal, with the final height (it sets how many y ticks there are).
    y_ticks = measure(ax.yaxis)
    left = (EDGE + (y_label + label_pad if y_label else 0.0)
            + max((size[0] for size, _ in y_ticks), default=0.0) + tick_room)
    place_axes(left, right, bottom, top)
    x_ticks = measure(ax.xaxis)
    before, after = _overhang([(size[0] / 2, place) for size, place in x_ticks], width - left - right)
    place_axes(max(left, EDGE + before), EDGE + after, bottom, top)


def number_ticks(axis, *, steps=(1, 2, 5, 10)) -> None:
    """Marcas en valores redondos escritas con ``format_number`` («0,5», «42»): texto simple, sin mathtext."""
    axis.set_major_locator(ticker.MaxNLocator(nbins=5, steps=list(steps)))
    axis.set_major_formatter(ticker.FuncFormatter(lambda value, _position: format_number(value)))


# ------------------------------------------------------- descripciones --


def spanish_list(items) -> str:
    """«a», «a y b», «a, b y c»: una enumeración en español, para las frases que describen una figura."""
    items = [str(item) for item in items]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " y " + items[-1]
