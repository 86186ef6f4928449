"""Figuras del capítulo 6 (aprendizaje federado): una función por figura, cada una devuelve una ``Figure``.

Mismas convenciones que ``dpdeck.figures``, con las mismas piezas de estilo
(``dpdeck.figure_style``): etiquetas en español, coma decimal en las marcas,
letra para proyector y tamaño para caber junto al código de una diapositiva
de 1280×720. Nada aquí calcula: cada función dibuja los resultados que la
celda obtuvo con ``dpdeck.federated``; los experimentos de cada figura, con
los parámetros de su diapositiva, están en ``dpdeck.experiments``.

Estas figuras fijan sus márgenes (``figure_style.fix_margins``) en vez de
usar el diseño «constrained»: sus rótulos tienen un largo conocido, y así
cada una se dibuja en la mitad del tiempo cuando la celda vuelve a correr en
el navegador.

Como las de ``dpdeck.figures``, cada figura dice lo que muestra (qué curvas,
qué ejes y el número clave) con ``dpdeck.figure_descriptions.describe_figure``: es el
texto alternativo de la imagen en la diapositiva.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib import ticker
from matplotlib.figure import Figure

from .figure_descriptions import describe_figure
from .figure_style import (
    COLORS,
    FIGSIZE,
    LEGEND_SIZE,
    as_float_array,
    check_same_length,
    fix_margins,
    legend_above,
    number_ticks,
    percent_ticks,
    plain_log_ticks,
    style_axes,
    spanish_list,
    styled,
)
from .numbers import format_number, format_percent

__all__ = [
    "plot_hospital_example",
    "plot_fedavg_rounds",
    "plot_local_epochs",
    "plot_privacy_units",
]


def _as_curves(values, *, name: str) -> np.ndarray:
    """Una curva (lista) o varias (repeticiones × puntos), siempre como matriz."""
    array = np.asarray(values, dtype=float)
    if array.ndim == 1:
        array = array[None, :]
    if array.ndim != 2 or array.size == 0:
        raise ValueError(f"{name} debe ser una lista o una matriz (repeticiones × puntos); tiene forma {array.shape}")
    return array


def _draw_band(ax, xs, curves, *, color, label, marker=None):
    """La media de ``curves`` y, si hay varias, la franja entre la peor y la mejor."""
    if curves.shape[0] > 1:
        ax.fill_between(xs, curves.min(axis=0), curves.max(axis=0), color=color, alpha=0.16, linewidth=0)
    ax.plot(xs, curves.mean(axis=0), color=color, marker=marker, markersize=6, label=label)


def _new_axes(**margins):
    """Una figura del tamaño de la clase con un par de ejes y márgenes fijos."""
    figure = Figure(figsize=FIGSIZE)
    ax = figure.add_subplot()
    fix_margins(figure, **margins)
    return figure, ax


@styled
def plot_hospital_example(outputs, density_with, density_without, *, epsilon, count) -> Figure:
    """El ejemplo del hospital: las dos densidades de Laplace y su razón, acotada por e^ε.

    Arriba, la densidad de la salida con la persona X (centrada en ``count``) y
    sin ella (centrada en ``count − 1``). Abajo, su razón en cada salida s:
    nunca sale de la franja [e^−ε, e^ε].
    """
    outputs = as_float_array(outputs, name="outputs")
    density_with = as_float_array(density_with, name="density_with")
    density_without = as_float_array(density_without, name="density_without")
    check_same_length(salidas=outputs, con_X=density_with, sin_X=density_without)
    figure = Figure(figsize=FIGSIZE)
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    fix_margins(figure, left=0.85, bottom=0.62, top=0.42, hspace=0.12)
    top.plot(outputs, density_with, color=COLORS["azul"], label=f"con X: f(D) = {format_number(count)}")
    top.plot(outputs, density_without, color=COLORS["naranja"], linestyle="--",
             label=f"sin X: f(D′) = {format_number(count - 1)}")
    top.set_ylabel("densidad")
    top.set_ylim(bottom=0)
    number_ticks(top.yaxis)
    ratio = density_with / density_without
    bound = math.exp(epsilon)
    bottom.plot(outputs, ratio, color=COLORS["tinta"])
    for level in (bound, 1 / bound):
        bottom.axhline(level, color=COLORS["rojo"], linestyle=":", linewidth=2.2)
    bottom.annotate(rf"$e^{{\varepsilon}}$ ≈ {format_number(bound, 2)}", xy=(outputs[0], bound), xytext=(4, -4),
                    textcoords="offset points", va="top", color=COLORS["rojo"], fontsize=LEGEND_SIZE)
    bottom.set_ylim(1 / bound - 0.25 * (bound - 1 / bound), bound + 0.25 * (bound - 1 / bound))
    bottom.yaxis.set_major_locator(ticker.FixedLocator([1 / bound, 1, bound]))
    bottom.yaxis.set_major_formatter(ticker.FuncFormatter(lambda value, _position: format_number(round(value, 2))))
    bottom.set_ylabel("razón")
    bottom.set_xlabel("salida publicada, s")
    bottom.set_xlim(outputs.min(), outputs.max())
    number_ticks(bottom.xaxis)
    legend_above(figure, top, ncols=2)
    style_axes(top)
    style_axes(bottom)
    describe_figure(figure, (
        "Arriba, la densidad de la salida publicada s (eje horizontal, de "
        f"{format_number(outputs.min(), 0)} a {format_number(outputs.max(), 0)}) con la persona X, centrada en "
        f"f(D) = {format_number(count)}, y sin ella, centrada en {format_number(count - 1)}: dos picos de "
        f"Laplace casi superpuestos. Abajo, su razón: nunca sale de la franja entre "
        f"{format_number(1 / bound, 2)} y {format_number(bound, 2)} (e elevado a −ε y a ε, con "
        f"ε = {format_number(epsilon)}); la mayor es {format_number(float(ratio.max()), 2)}."))
    return figure


@styled
def plot_fedavg_rounds(rounds, iid, non_iid, *, nonprivate, majority) -> Figure:
    """Exactitud de FedAvg ronda a ronda con reparto IID y no IID (media y franja de las corridas).

    ``iid`` y ``non_iid`` son listas (una exactitud por ronda) o matrices
    (corridas × rondas). Las líneas de referencia son el modelo centralizado
    sin privacidad y la clase mayoritaria.
    """
    rounds = as_float_array(rounds, name="rounds")
    iid = _as_curves(iid, name="iid")
    non_iid = _as_curves(non_iid, name="non_iid")
    check_same_length(rondas=rounds, iid=iid[0], no_iid=non_iid[0])
    figure, ax = _new_axes(top=0.72)
    ax.axhline(float(nonprivate), color=COLORS["verde"], linestyle="--", linewidth=2.2, label="centralizado")
    ax.axhline(float(majority), color=COLORS["gris"], linestyle=":", linewidth=2.4, label="clase mayoritaria")
    _draw_band(ax, rounds, iid, color=COLORS["azul"], label="IID")
    _draw_band(ax, rounds, non_iid, color=COLORS["naranja"], label="un hospital por nivel")
    ax.set_xlabel("ronda de comunicación")
    ax.set_ylabel("exactitud")
    ax.set_xlim(rounds.min(), rounds.max())
    number_ticks(ax.xaxis)
    low = min(float(majority), float(iid.min()), float(non_iid.min()))
    ax.set_ylim(low - 0.01, max(float(nonprivate), float(iid.max()), float(non_iid.max())) + 0.01)
    percent_ticks(ax.yaxis)
    legend_above(figure, ax, ncols=2)
    style_axes(ax)
    runs = f"media de {iid.shape[0]} corridas y franja de la peor a la mejor" if iid.shape[0] > 1 else "una corrida"
    describe_figure(figure, (
        f"Exactitud de FedAvg contra la ronda de comunicación (de {format_number(rounds[0])} a "
        f"{format_number(rounds[-1])}; {runs}) con clientes IID y con un hospital por nivel: en la primera "
        f"ronda, {format_percent(iid[:, 0].mean(), 1)} IID y {format_percent(non_iid[:, 0].mean(), 1)} "
        f"con un hospital por nivel, cuya peor ronda cae a {format_percent(non_iid.min(), 1)}; líneas del "
        f"modelo centralizado ({format_percent(nonprivate, 1)}) y de la clase mayoritaria "
        f"({format_percent(majority, 1)})."))
    return figure


@styled
def plot_local_epochs(epochs, rounds_iid, rounds_non_iid, *, max_rounds, target) -> Figure:
    """Rondas de comunicación hasta la exactitud ``target`` contra las épocas locales E, IID y no IID.

    Un ``None`` (no llegó en ``max_rounds``) se dibuja en ``max_rounds`` con un
    marcador hueco.
    """
    epochs = as_float_array(epochs, name="epochs")
    figure, ax = _new_axes(left=0.8)
    highest = 1
    for values, color, marker, label in ((rounds_iid, COLORS["azul"], "o", "IID"),
                                         (rounds_non_iid, COLORS["naranja"], "s", "un hospital por nivel")):
        if len(values) != len(epochs):
            raise ValueError(f"las listas deben tener la misma longitud (épocas: {len(epochs)}, rondas: {len(values)})")
        reached = np.array([v is not None for v in values])
        shown = np.array([max_rounds if v is None else v for v in values], dtype=float)
        highest = max(highest, float(shown.max()))
        ax.plot(epochs, shown, color=color, marker=marker, markersize=8, label=label)
        if not reached.all():
            ax.plot(epochs[~reached], shown[~reached], linestyle="none", marker=marker, markersize=11,
                    markerfacecolor="white", markeredgecolor=color, markeredgewidth=2.2)
    ax.set_xscale("log")
    ax.set_xticks(epochs, [format_number(e) for e in epochs])
    ax.minorticks_off()
    ax.set_ylim(0, highest * 1.1)
    number_ticks(ax.yaxis)
    ax.set_xlabel("épocas locales por ronda, E")
    ax.set_ylabel(f"rondas hasta {format_percent(target, 1)}")
    legend_above(figure, ax, ncols=2)
    style_axes(ax)
    describe_figure(figure, (
        f"Rondas de comunicación hasta una exactitud de {format_percent(target, 1)} contra las épocas "
        f"locales por ronda E ({spanish_list(format_number(e) for e in epochs)}; eje logarítmico): con "
        f"clientes IID, {_rounds_text(rounds_iid, max_rounds)}; con un hospital por nivel, "
        f"{_rounds_text(rounds_non_iid, max_rounds)}."))
    return figure


def _rounds_text(rounds, max_rounds) -> str:
    """«10, 5, 2 y 1 rondas», con «no llega en 30» donde una corrida no alcanzó el objetivo."""
    return spanish_list(f"no llega en {format_number(max_rounds)}" if value is None else format_number(value)
                        for value in rounds) + " rondas"


_UNIT_COLORS = (COLORS["azul"], COLORS["morado"], COLORS["naranja"], COLORS["verde"])


@styled
def plot_privacy_units(epsilons, curves, *, nonprivate, majority) -> Figure:
    """Exactitud contra ε del mismo algoritmo privado con distintas unidades protegidas.

    ``curves`` asocia el nombre de cada unidad ("personas", "hospitales"…) a
    sus exactitudes, una por ε o una matriz (repeticiones × ε): se dibuja la
    media y la franja entre la peor y la mejor.
    """
    epsilons = as_float_array(epsilons, name="epsilons")
    figure, ax = _new_axes(top=0.72)
    ax.axhline(float(nonprivate), color=COLORS["verde"], linestyle="--", linewidth=2.2, label="sin privacidad")
    ax.axhline(float(majority), color=COLORS["gris"], linestyle=":", linewidth=2.4)
    lowest = float(majority)
    for index, (label, values) in enumerate(curves.items()):
        values = _as_curves(values, name=f"curva {label}")
        check_same_length(epsilons=epsilons, curva=values[0])
        _draw_band(ax, epsilons, values, color=_UNIT_COLORS[index % len(_UNIT_COLORS)], label=str(label),
                   marker="o")
        lowest = min(lowest, float(values.min()))
    ax.set_xscale("log")
    ax.xaxis.set_major_locator(ticker.FixedLocator(epsilons))
    ax.minorticks_off()
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("presupuesto ε (10 rondas)")
    ax.set_ylabel("exactitud")
    ax.set_ylim(lowest - 0.02, float(nonprivate) + 0.02)
    percent_ticks(ax.yaxis)
    legend_above(figure, ax, ncols=2)
    style_axes(ax)
    means = {str(label): _as_curves(values, name=f"curva {label}").mean(axis=0) for label, values in curves.items()}
    lowest_epsilon = spanish_list(f"{format_percent(m[0], 1)} para {label}" for label, m in means.items())
    describe_figure(figure, (
        f"Exactitud del mismo DP-FedAvg contra el presupuesto ε (de {format_number(epsilons[0])} a "
        f"{format_number(epsilons[-1])}, eje logarítmico) según qué protege el ruido: "
        f"{spanish_list(means)}; con líneas del modelo sin privacidad ({format_percent(nonprivate, 1)}) y de "
        f"la clase mayoritaria ({format_percent(majority, 1)}). Con ε = {format_number(epsilons[0])} la "
        f"exactitud media es de {lowest_epsilon}; "
        f"con ε = {format_number(epsilons[-1])}, de "
        f"{spanish_list(format_percent(m[-1], 1) for m in means.values())}."))
    return figure
