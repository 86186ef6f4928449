"""Figuras del capítulo 6 (aprendizaje federado): una función por figura, cada una devuelve una ``Figure``.

Mismas convenciones que ``dpdeck.figures`` (y sus mismas piezas de estilo):
etiquetas en español, coma decimal en las marcas, letra para proyector y
tamaño para caber junto al código de una diapositiva de 1280×720. Nada aquí
calcula: cada función dibuja los resultados que la celda obtuvo con
``dpdeck.federated``.

``DEMOS`` asocia un nombre a una función sin argumentos que construye cada
figura con los mismos experimentos y parámetros que su celda (las funciones
de ``dpdeck.federated``); sirve al banco de tiempos y a las pruebas.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib import ticker
from matplotlib.figure import Figure

from .figures import (
    COLORS,
    FIGSIZE,
    LEGEND_SIZE,
    _as_float_array,
    _legend_on_top,
    _percent_ticks,
    _plain_log_ticks,
    _same_length,
    _style_axes,
    _styled,
    format_number,
)

__all__ = [
    "plot_hospital_example",
    "plot_fedavg_rounds",
    "plot_local_epochs",
    "plot_privacy_units",
    "DEMOS",
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


@_styled
def plot_hospital_example(outputs, density_with, density_without, *, epsilon, count) -> Figure:
    """El ejemplo del hospital: las dos densidades de Laplace y su razón, acotada por e^ε.

    Arriba, la densidad de la salida con la persona X (centrada en ``count``) y
    sin ella (centrada en ``count − 1``). Abajo, su razón en cada salida s:
    nunca sale de la franja [e^−ε, e^ε].
    """
    outputs = _as_float_array(outputs, name="outputs")
    density_with = _as_float_array(density_with, name="density_with")
    density_without = _as_float_array(density_without, name="density_without")
    _same_length(salidas=outputs, con_X=density_with, sin_X=density_without)
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    top, bottom = figure.subplots(2, 1, sharex=True, height_ratios=[3, 2])
    top.plot(outputs, density_with, color=COLORS["azul"], label=f"con X: f(D) = {format_number(count)}")
    top.plot(outputs, density_without, color=COLORS["naranja"], linestyle="--",
             label=f"sin X: f(D′) = {format_number(count - 1)}")
    top.set_ylabel("densidad")
    top.set_ylim(bottom=0)
    ratio = density_with / density_without
    bound = math.exp(epsilon)
    bottom.plot(outputs, ratio, color=COLORS["tinta"])
    for level in (bound, 1 / bound):
        bottom.axhline(level, color=COLORS["rojo"], linestyle=":", linewidth=2.2)
    bottom.annotate(rf"$e^{{\varepsilon}}$ ≈ {format_number(bound, 2)}", xy=(outputs[0], bound), xytext=(4, -4),
                    textcoords="offset points", va="top", color=COLORS["rojo"], fontsize=LEGEND_SIZE)
    bottom.set_ylim(1 / bound - 0.25 * (bound - 1 / bound), bound + 0.25 * (bound - 1 / bound))
    bottom.set_ylabel("razón")
    bottom.set_xlabel("salida publicada, s")
    bottom.set_xlim(outputs.min(), outputs.max())
    _legend_on_top(figure, top, ncols=2)
    _style_axes(top)
    _style_axes(bottom)
    return figure


@_styled
def plot_fedavg_rounds(rounds, iid, non_iid, *, nonprivate, majority) -> Figure:
    """Exactitud de FedAvg ronda a ronda con reparto IID y no IID (media y franja de las corridas).

    ``iid`` y ``non_iid`` son listas (una exactitud por ronda) o matrices
    (corridas × rondas). Las líneas de referencia son el modelo centralizado
    sin privacidad y la clase mayoritaria.
    """
    rounds = _as_float_array(rounds, name="rounds")
    iid = _as_curves(iid, name="iid")
    non_iid = _as_curves(non_iid, name="non_iid")
    _same_length(rondas=rounds, iid=iid[0], no_iid=non_iid[0])
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    ax = figure.add_subplot()
    ax.axhline(float(nonprivate), color=COLORS["verde"], linestyle="--", linewidth=2.2, label="centralizado")
    ax.axhline(float(majority), color=COLORS["gris"], linestyle=":", linewidth=2.4, label="clase mayoritaria")
    _draw_band(ax, rounds, iid, color=COLORS["azul"], label="IID")
    _draw_band(ax, rounds, non_iid, color=COLORS["naranja"], label="un hospital por nivel")
    ax.set_xlabel("ronda de comunicación")
    ax.set_ylabel("exactitud")
    ax.set_xlim(rounds.min(), rounds.max())
    low = min(float(majority), float(iid.min()), float(non_iid.min()))
    ax.set_ylim(low - 0.01, max(float(nonprivate), float(iid.max()), float(non_iid.max())) + 0.01)
    _percent_ticks(ax.yaxis)
    _legend_on_top(figure, ax, ncols=2)
    _style_axes(ax)
    return figure


@_styled
def plot_local_epochs(epochs, rounds_iid, rounds_non_iid, *, max_rounds, target) -> Figure:
    """Rondas de comunicación hasta la exactitud ``target`` contra las épocas locales E, IID y no IID.

    Un ``None`` (no llegó en ``max_rounds``) se dibuja en ``max_rounds`` con un
    marcador hueco.
    """
    epochs = _as_float_array(epochs, name="epochs")
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    ax = figure.add_subplot()
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
    ax.yaxis.set_major_locator(ticker.MaxNLocator(nbins=5, integer=True))
    ax.set_xlabel("épocas locales por ronda, E")
    ax.set_ylabel(f"rondas hasta {format_number(100 * target, 1)} %")
    _legend_on_top(figure, ax, ncols=2)
    _style_axes(ax)
    return figure


_UNIT_COLORS = (COLORS["azul"], COLORS["morado"], COLORS["naranja"], COLORS["verde"])


@_styled
def plot_privacy_units(epsilons, curves, *, nonprivate, majority) -> Figure:
    """Exactitud contra ε del mismo algoritmo privado con distintas unidades protegidas.

    ``curves`` asocia el nombre de cada unidad ("personas", "hospitales"…) a
    sus exactitudes, una por ε o una matriz (repeticiones × ε): se dibuja la
    media y la franja entre la peor y la mejor.
    """
    epsilons = _as_float_array(epsilons, name="epsilons")
    figure = Figure(figsize=FIGSIZE, layout="constrained")
    ax = figure.add_subplot()
    ax.axhline(float(nonprivate), color=COLORS["verde"], linestyle="--", linewidth=2.2, label="sin privacidad")
    ax.axhline(float(majority), color=COLORS["gris"], linestyle=":", linewidth=2.4)
    lowest = float(majority)
    for index, (label, values) in enumerate(curves.items()):
        values = _as_curves(values, name=f"curva {label}")
        _same_length(epsilons=epsilons, curva=values[0])
        _draw_band(ax, epsilons, values, color=_UNIT_COLORS[index % len(_UNIT_COLORS)], label=str(label),
                   marker="o")
        lowest = min(lowest, float(values.min()))
    ax.set_xscale("log")
    _plain_log_ticks(ax.xaxis)
    ax.set_xlabel("presupuesto ε (10 rondas)")
    ax.set_ylabel("exactitud")
    ax.set_ylim(lowest - 0.02, float(nonprivate) + 0.02)
    _percent_ticks(ax.yaxis)
    _legend_on_top(figure, ax, ncols=2)
    _style_axes(ax)
    return figure


# ------------------------------------------------------------------ demos --
# Cada demostración corre el experimento de su celda (misma función de
# ``dpdeck.federated``, mismos parámetros y semilla) y dibuja la figura.


def _demo_hospital_example() -> Figure:
    from .mechanisms import laplace_density, laplace_scale

    b = laplace_scale(sensitivity=1, epsilon=0.5)
    outputs = np.linspace(30, 54, 481)
    return plot_hospital_example(outputs, laplace_density(outputs, loc=42, scale=b),
                                 laplace_density(outputs, loc=41, scale=b), epsilon=0.5, count=42)


def _demo_fedavg_rounds() -> Figure:
    from .data import load_census
    from .federated import compare_splits

    result = compare_splits(load_census(), clients=16, client_fraction=0.25, local_epochs=5, rounds=20,
                            rng=np.random.default_rng(0))
    return plot_fedavg_rounds(result["rounds"], result["iid"], result["non_iid"],
                              nonprivate=result["nonprivate"], majority=result["majority"])


def _demo_local_epochs() -> Figure:
    from .data import load_census
    from .federated import compare_local_epochs

    result = compare_local_epochs(load_census(), epochs_grid=[1, 2, 5, 10, 20], within=0.005, max_rounds=30,
                                  rng=np.random.default_rng(0))
    return plot_local_epochs(result["epochs"], result["rounds_iid"], result["rounds_non_iid"],
                             max_rounds=result["max_rounds"], target=result["target"])


def _demo_privacy_units() -> Figure:
    from .data import load_census
    from .federated import compare_privacy_units

    result = compare_privacy_units(load_census(), epsilons=[0.05, 0.1, 0.2, 0.5, 1, 2, 5],
                                   rng=np.random.default_rng(0))
    curves = {"personas (cap. 5)": result["central"], "clínicas de 10": result["clinics"],
              "16 hospitales": result["hospitals"]}
    return plot_privacy_units(result["epsilons"], curves, nonprivate=result["nonprivate"],
                              majority=result["majority"])


DEMOS = {
    "hospital_example": _demo_hospital_example,
    "fedavg_rounds": _demo_fedavg_rounds,
    "local_epochs": _demo_local_epochs,
    "privacy_units": _demo_privacy_units,
}
