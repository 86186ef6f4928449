"""Figuras de la clase: una función por figura, cada una devuelve una ``Figure``.

Cada función recibe resultados ya calculados (arreglos y números que la celda
obtuvo con ``dpdeck``) y devuelve una ``matplotlib.figure.Figure`` nueva, sin
pasar por pyplot: la celda la deja como última expresión y el ejecutor de
celdas la convierte en PNG. Nada aquí calcula privacidad ni toca datos: las
figuras solo dibujan.

Convenciones compartidas por todas las figuras (el estilo, escrito una vez en
``dpdeck.figure_style``, que también usa ``dpdeck.figures_federated``):

* etiquetas en español y comas decimales en las marcas numéricas de los
  ejes (``0,5``, no ``0.5``), con un formateador propio que envuelve al de
  matplotlib (sin ``locale``, que no existe igual en el navegador); las
  marcas que son nombres (los niveles educativos) se dejan tal cual;
* un estilo para proyector: letra grande, líneas gruesas, colores de alto
  contraste que se distinguen también en escala de grises y con daltonismo
  (azul, naranja, verde, gris);
* tamaño pensado para caber junto al código en una diapositiva de 1280×720
  (``FIGSIZE`` en pulgadas; el ejecutor guarda el PNG a 120 ppp y la
  diapositiva lo muestra a unos 486 de sus 1280 px: 0,81 px por px). Con
  ``TICK_SIZE`` = 13,5 pt las cifras de las marcas miden unos 13 px de alto
  en la diapositiva, y los rótulos de los ejes unos 15 px.

Los números de las leyendas, rótulos y marcas siguen la regla del mazo,
definida una sola vez en ``dpdeck.numbers``: coma decimal (``0,5``), miles
agrupados con un espacio desde cinco cifras (``79 433``; ``3236`` queda
junto) y, donde un número de cuatro cifras convive con otros mayores en la
misma leyenda, también agrupado (``9 594`` junto a ``99 999``).

Cada figura lleva una frase que dice lo que muestra (qué curvas, qué ejes y
el número clave, con el mismo formato): ``dpdeck.figure_descriptions.describe_figure``.
``run_cell`` la lleva a su salida y es el texto alternativo de la imagen en la
diapositiva, para quien no la ve.

Los experimentos que producen los datos de cada figura (con los parámetros de
su diapositiva) viven en ``dpdeck.experiments``; aquí solo se dibuja.
"""

from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from .figure_descriptions import describe_figure
from .figure_style import (
    COLORS,
    FIGSIZE,
    LABEL_SIZE,
    LEGEND_SIZE,
    LINE_WIDTH,
    SEQUENCE,
    TICK_SIZE,
    as_float_array,
    check_same_length,
    fit_margins,
    integer_ticks,
    legend_above,
    new_figure,
    percent_ticks,
    plain_log_ticks,
    style_axes,
    styled,
    spanish_list,
    use_decimal_comma,
)
from .numbers import PERCENT_SIGN, format_number, format_percent, format_significant

__all__ = [
    # el estilo de dpdeck.figure_style, también aquí para quien mide las figuras de la clase
    "FIGSIZE",
    "COLORS",
    "TICK_SIZE",
    "LABEL_SIZE",
    "use_decimal_comma",
    "plot_laplace_densities",
    "plot_attack_through_noise",
    "plot_averaging_error",
    "plot_private_histogram",
    "plot_clipping_elbow",
    "plot_local_sensitivity_leak",
    "plot_laplace_vs_gauss",
    "plot_vector_noise",
    "plot_accountants",
    "plot_rdp_conversion",
    "plot_gradient_norms",
    "plot_privacy_utility",
    "plot_iterations_cost",
]


def _finish_density_axes(ax, x, *, xlabel: str) -> None:
    """Ejes de una figura de densidades: de borde a borde en x, desde 0 en y, leyenda arriba."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel("densidad")
    ax.set_xlim(x.min(), x.max())
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right")
    integer_ticks(ax.xaxis)
    style_axes(ax)


def _draw_histogram(ax, values, bins, *, label: str) -> None:
    """Histograma de barras contiguas como una sola figura escalonada y rellena.

    Se ve como ``ax.hist`` (barras sin borde, una junto a otra), pero es un
    solo objeto en vez de un rectángulo por barra: se dibuja varias veces más
    rápido en el navegador.
    """
    counts, edges = np.histogram(values, bins=bins)
    ax.stairs(counts, edges, fill=True, color=COLORS["azul"], alpha=0.85, linewidth=0, label=label)
    ax.set_ylim(bottom=0)


def _plot_accuracy_band(ax, xs, accuracies, *, xs_name: str) -> np.ndarray:
    """Banda entre el mínimo y el máximo si ``accuracies`` es repeticiones × x; devuelve la media."""
    if accuracies.ndim == 2:
        check_same_length(**{xs_name: xs, "exactitudes": accuracies[0]})
        ax.fill_between(xs, accuracies.min(axis=0), accuracies.max(axis=0),
                        color=COLORS["azul"], alpha=0.15, linewidth=0)
        return accuracies.mean(axis=0)
    mean = as_float_array(accuracies, name="accuracies")
    check_same_length(**{xs_name: xs, "exactitudes": mean})
    return mean


# ------------------------------------------------- capítulo 1: Laplace --


@styled
def plot_laplace_densities(x, densities) -> Figure:
    """Densidades de Laplace para varios ε (diapositiva «ε determina la dispersión del ruido»).

    ``densities`` asocia cada ε a la densidad evaluada en ``x``. Menos ε,
    pico más ancho y más bajo: más privacidad, menos utilidad.
    """
    x = as_float_array(x, name="x")
    figure, ax = new_figure()
    for epsilon, density in densities.items():
        density = as_float_array(density, name=f"densidad de ε = {epsilon}")
        check_same_length(x=x, densidad=density)
        ax.plot(x, density, label=f"ε = {format_number(epsilon)}")
    _finish_density_axes(ax, x, xlabel="ruido añadido al conteo")
    peaks = [format_significant(np.max(as_float_array(density, name="densidad")), 3)
             for density in densities.values()]
    describe_figure(figure, (
        "Densidades de Laplace del ruido añadido al conteo (eje horizontal) para "
        f"ε = {spanish_list(format_number(epsilon) for epsilon in densities)}: cuanto menor es ε, "
        f"más ancha y más baja es la curva; sus alturas máximas son {spanish_list(peaks)}."))
    fit_margins(figure, ax)
    return figure


@styled
def plot_attack_through_noise(differences, *, signal=1.0) -> Figure:
    """Histograma de la resta de dos respuestas ruidosas: la señal enterrada.

    ``differences`` son las restas que obtendría el atacante en muchos ataques
    simulados; las líneas marcan 0 (Karen sin el atributo) y ``signal`` (con él).
    """
    differences = as_float_array(differences, name="differences")
    figure, ax = new_figure()
    limit = float(np.quantile(np.abs(differences - signal), 0.995)) + 1.0
    bins = np.linspace(signal - limit, signal + limit, 61)
    _draw_histogram(ax, differences, bins, label="restas")
    ax.axvline(0.0, color=COLORS["gris"], linewidth=2.2, linestyle="--",
               label="sin señal: 0")
    ax.axvline(float(signal), color=COLORS["naranja"], linewidth=2.6,
               label=f"señal: {format_number(signal)}")
    ax.set_xlabel("consulta 1 − consulta 2 (con ruido)")
    ax.set_ylabel("número de ataques")
    legend_above(figure, ax, ncols=2)
    style_axes(ax, grid_axis="y")
    describe_figure(figure, (
        f"Histograma de {format_number(differences.size)} restas de dos respuestas con ruido "
        "(consulta 1 − consulta 2), con una línea en 0 (sin señal) y otra en "
        f"{format_number(signal)} (la señal): las restas se reparten de "
        f"{format_number(np.quantile(differences, 0.05), 0)} a {format_number(np.quantile(differences, 0.95), 0)} "
        f"(el {format_percent(0.9)} central), así que la señal queda enterrada en el ruido."))
    fit_margins(figure, ax)
    return figure


# --------------------------------------------- capítulo 2: propiedades --


@styled
def plot_averaging_error(ks, errors, *, expected=None) -> Figure:
    """Error del promedio de k publicaciones contra k, en ejes logarítmicos.

    ``expected`` (opcional) es la predicción teórica √2·b/√k; sin ella se
    dibuja la recta ``errors[0]·√(k₀/k)``. En ambos casos, la caída 1/√k que
    predice la varianza del promedio de k ruidos independientes.
    """
    ks = as_float_array(ks, name="ks")
    errors = as_float_array(errors, name="errors")
    check_same_length(ks=ks, errores=errors)
    if expected is None:
        reference = errors[0] * np.sqrt(ks[0] / ks)
    else:
        reference = as_float_array(expected, name="expected")
        check_same_length(ks=ks, esperado=reference)
    figure, ax = new_figure()
    ax.plot(ks, reference, color=COLORS["gris"], linestyle="--", linewidth=2.2,
            label=r"teoría: $\propto 1/\sqrt{k}$")
    ax.plot(ks, errors, marker="o", markersize=7, color=COLORS["azul"],
            label="error medido")
    ax.set_xscale("log")
    ax.set_yscale("log")
    plain_log_ticks(ax.xaxis)
    plain_log_ticks(ax.yaxis)
    ax.set_xlabel("publicaciones promediadas, k")
    ax.set_ylabel("error del promedio")
    ax.legend(loc="upper right")
    style_axes(ax)
    describe_figure(figure, (
        "Error del promedio de k publicaciones contra k, en ejes logarítmicos, medido y según la "
        "teoría (proporcional a 1/√k): el error baja al promediar; con "
        f"k = {format_number(ks[0])} es {format_number(errors[0], 2)} y con "
        f"k = {format_number(ks[-1])}, {format_number(errors[-1], 2)}."))
    fit_margins(figure, ax)
    return figure


@styled
def plot_private_histogram(labels, true_counts, private_counts) -> Figure:
    """Histograma verdadero y privado, barra a barra (composición paralela).

    Barras horizontales: caben dieciséis niveles educativos con su nombre. La
    barra gris es el conteo verdadero; el punto naranja, el publicado.
    """
    labels = [str(label) for label in labels]
    true_counts = as_float_array(true_counts, name="true_counts")
    private_counts = as_float_array(private_counts, name="private_counts")
    check_same_length(etiquetas=labels, verdaderos=true_counts, privados=private_counts)
    figure, ax = new_figure((FIGSIZE[0], 4.1))
    positions = np.arange(len(labels))
    ax.barh(positions, true_counts, height=0.72, color=COLORS["gris_claro"],
            label="verdadero")
    ax.plot(private_counts, positions, linestyle="none", marker="D", markersize=6,
            color=COLORS["naranja"], label="privado")
    ax.set_yticks(positions, labels)
    ax.invert_yaxis()
    ax.set_xlabel("personas")
    ax.legend(loc="lower right")
    style_axes(ax, grid_axis="x")
    ax.tick_params(axis="y", length=0)
    gaps = np.abs(private_counts - true_counts)
    worst = int(np.argmax(gaps))
    describe_figure(figure, (
        f"Histograma de {len(labels)} categorías ({labels[0]} a {labels[-1]}): barras grises con el conteo "
        "verdadero de personas y rombos naranjas con el publicado con ruido; la diferencia media es de "
        f"{format_number(gaps.mean(), 1)} personas por barra y la mayor, {format_number(gaps[worst], 0)}, "
        f"en «{labels[worst]}»."))
    fit_margins(figure, ax)
    return figure


# -------------------------------------------- capítulo 3: sensibilidad --


@styled
def plot_clipping_elbow(bounds, bias, noise, total=None) -> Figure:
    """El codo del recorte: sesgo, ruido y error total contra la cota b.

    Sin ``total`` se usa la suma ``bias + noise``. El mínimo interior del error
    total se marca con su b. El total coincide con el sesgo a la izquierda del
    codo y con el ruido a la derecha: se dibuja debajo, como una franja ancha y
    clara, y el sesgo y el ruido encima, así las tres curvas se ven siempre.
    """
    bounds = as_float_array(bounds, name="bounds")
    bias = as_float_array(bias, name="bias")
    noise = as_float_array(noise, name="noise")
    total = bias + noise if total is None else as_float_array(total, name="total")
    check_same_length(cotas=bounds, sesgo=bias, ruido=noise, total=total)
    figure, ax = new_figure()
    # En escala logarítmica un sesgo nulo (b por encima de todos los valores)
    # no tiene dónde dibujarse: se corta la curva ahí.
    bias = np.where(bias > 0, bias, np.nan)
    ax.plot(bounds, bias, color=COLORS["azul"], zorder=3, label="sesgo del recorte")
    ax.plot(bounds, noise, color=COLORS["naranja"], zorder=3, label="ruido de Laplace")
    ax.plot(bounds, total, color=COLORS["gris_claro"], linewidth=3.6 * LINE_WIDTH,
            solid_capstyle="round", zorder=1, label="error total")
    best = int(np.argmin(total))
    ax.plot([bounds[best]], [total[best]], marker="o", markersize=12,
            color=COLORS["verde"], markeredgecolor="white", markeredgewidth=1.5,
            linestyle="none", zorder=4,
            label=f"mínimo: b ≈ {format_number(round(bounds[best]))}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("cota de recorte, b")
    ax.set_ylabel("error de la suma")
    legend_above(figure, ax)
    style_axes(ax)
    describe_figure(figure, (
        "Error de la suma contra la cota de recorte b, en ejes logarítmicos: el sesgo del recorte baja "
        "al crecer b, el ruido de Laplace sube, y el error total esperado (menor que su suma: el ruido a "
        "veces compensa el sesgo) tiene un mínimo interior en "
        f"b ≈ {format_number(round(bounds[best]))}."))
    fit_margins(figure, ax)
    return figure


@styled
def plot_local_sensitivity_leak(scale_without, scale_with, *, threshold=None) -> Figure:
    """Ruido calibrado a la sensibilidad local en dos bases vecinas: la escala misma delata.

    Dibuja la densidad de la resta de dos publicaciones de la misma suma,
    r₁ − r₂, en cada base, cada una relativa a su propio máximo para que las dos
    se vean: la resta de dos Lap(s) independientes tiene densidad
    (1 + |x|/s) e^{−|x|/s}/(4s), centrada en 0 en las dos bases porque la suma
    se cancela; solo la escala, s_D o s_D′, las distingue. Si se da
    ``threshold`` (τ), marca ±τ: fuera de ahí el atacante responde «la persona
    extrema está».
    """
    scale_without = float(scale_without)
    scale_with = float(scale_with)
    half_width = 4.0 * max(scale_with, scale_without)
    x = np.union1d(np.linspace(-half_width, half_width, 2001), [0.0])

    def relative_density(scale: float) -> np.ndarray:
        ratio = np.abs(x) / scale
        return (1.0 + ratio) * np.exp(-ratio)   # divided by its maximum, 1/(4s) at 0

    figure, ax = new_figure()
    if threshold is not None:
        threshold = float(threshold)
        ax.axvline(threshold, color=COLORS["gris"], linewidth=1.8, linestyle="--")
        ax.axvline(-threshold, color=COLORS["gris"], linewidth=1.8, linestyle="--",
                   label="umbral ±τ del atacante")
    ax.plot(x, relative_density(scale_without), color=COLORS["azul"],
            label=f"D: ruido de escala {format_number(round(scale_without), group_thousands=True)}")
    ax.plot(x, relative_density(scale_with), color=COLORS["naranja"],
            label=f"D′: ruido de escala {format_number(round(scale_with), group_thousands=True)}")
    ax.set_xlim(x.min(), x.max())
    ax.set_ylim(0, 1.05)
    ax.set_xlabel("resta de dos publicaciones, r₁ − r₂")
    ax.set_ylabel("densidad (relativa)")
    legend_above(figure, ax, ncols=1)
    style_axes(ax)
    formatter = ax.xaxis.get_major_formatter().inner
    formatter.set_powerlimits((-3, 4))
    threshold_text = (f"; las líneas en ±{format_number(round(threshold))} marcan el umbral τ con que el "
                      "atacante decide" if threshold is not None else "")
    describe_figure(figure, (
        "Densidad relativa de la resta de dos publicaciones de la misma suma, que no depende de la suma: "
        f"en D el ruido tiene escala {format_number(round(scale_without))} y en D′, con una persona más, "
        f"escala {format_number(round(scale_with))}; las dos curvas están centradas en 0 y solo su ancho "
        f"las distingue: la escala delata a la persona{threshold_text}."))
    fit_margins(figure, ax)
    return figure


# ------------------------------------------ capítulo 4: DP aproximada --


@styled
def plot_laplace_vs_gauss(x, laplace, gauss) -> Figure:
    """Densidades de Laplace y Gauss con el mismo ε para una consulta escalar."""
    x = as_float_array(x, name="x")
    laplace = as_float_array(laplace, name="laplace")
    gauss = as_float_array(gauss, name="gauss")
    check_same_length(x=x, laplace=laplace, gauss=gauss)
    figure, ax = new_figure()
    ax.plot(x, laplace, color=COLORS["azul"], label="Laplace")
    ax.fill_between(x, laplace, color=COLORS["azul"], alpha=0.12)
    ax.plot(x, gauss, color=COLORS["naranja"], label="Gauss")
    ax.fill_between(x, gauss, color=COLORS["naranja"], alpha=0.12)
    _finish_density_axes(ax, x, xlabel="ruido añadido")
    describe_figure(figure, (
        "Densidades del ruido añadido con Laplace y con Gauss para el mismo ε: Laplace tiene el pico "
        f"más alto ({format_significant(laplace.max(), 2)} frente a {format_significant(gauss.max(), 2)}) "
        "y se concentra más cerca de 0; Gauss es más ancha."))
    fit_margins(figure, ax)
    return figure


@styled
def plot_vector_noise(ks, laplace, gauss, *, crossing=None) -> Figure:
    """Ruido por componente contra la dimensión k: Laplace crece como k, Gauss como √k."""
    ks = as_float_array(ks, name="ks")
    laplace = as_float_array(laplace, name="laplace")
    gauss = as_float_array(gauss, name="gauss")
    check_same_length(ks=ks, laplace=laplace, gauss=gauss)
    figure, ax = new_figure()
    ax.plot(ks, laplace, color=COLORS["azul"], label=r"Laplace, $\Delta_1 = k$")
    ax.plot(ks, gauss, color=COLORS["naranja"], label=r"Gauss, $\Delta_2 = \sqrt{k}$")
    if crossing is not None:
        ax.axvline(float(crossing), color=COLORS["gris"], linestyle="--", linewidth=2.0,
                   label=f"cruce: k = {format_number(crossing)}")
    ax.set_xlabel("componentes de la consulta, k")
    ax.set_ylabel("ruido por componente")
    ax.set_xlim(ks.min(), ks.max())
    ax.set_ylim(bottom=0)
    legend_above(figure, ax, ncols=2)
    style_axes(ax)
    crossing_text = f"; Gauss añade menos ruido desde k = {format_number(crossing)}" if crossing is not None else ""
    describe_figure(figure, (
        f"Ruido por componente contra el número de componentes k (de {format_number(ks[0])} a "
        f"{format_number(ks[-1])}): con Laplace crece como k (hasta {format_number(laplace[-1], 0)}) y con "
        f"Gauss como √k (hasta {format_number(gauss[-1], 0)}){crossing_text}."))
    fit_margins(figure, ax)
    return figure


_ACCOUNTANT_LABELS = {
    "secuencial": "secuencial",
    "sequential": "secuencial",
    "avanzada": "avanzada",
    "advanced": "avanzada",
    "rdp": "Rényi DP",
    "renyi": "Rényi DP",
}


@styled
def plot_accountants(ks, curves) -> Figure:
    """ε total contra el número de publicaciones k, una curva por contabilidad.

    ``curves`` asocia un nombre (``"secuencial"``, ``"avanzada"``, ``"rdp"`` u
    otro) a la lista de ε para cada k. El valor final de cada curva se rotula.
    """
    ks = as_float_array(ks, name="ks")
    figure, ax = new_figure()
    finals = []
    for index, (name, values) in enumerate(curves.items()):
        values = as_float_array(values, name=f"curva {name}")
        check_same_length(ks=ks, curva=values)
        color = SEQUENCE[index % len(SEQUENCE)]
        ax.plot(ks, values, color=color, label=_ACCOUNTANT_LABELS.get(name, str(name)))
        finals.append((float(values[-1]), color))
    for final, color in finals:
        # Encima de su curva, salvo que otra termine poco más arriba (menos de
        # un factor 4 en el eje logarítmico): entonces debajo, y no se tapan.
        crowded = any(final < other < 4 * final for other, _ in finals)
        ax.annotate(
            format_number(final, 0 if final >= 100 else 1), xy=(ks[-1], final),
            xytext=(-4, -6 if crowded else 6), textcoords="offset points", ha="right",
            va="top" if crowded else "bottom", color=color, fontsize=LEGEND_SIZE,
            fontweight="bold", zorder=4,
            # Fondo blanco: si otra curva pasa por detrás, la cifra se sigue leyendo.
            bbox={"boxstyle": "round,pad=0.12", "facecolor": "white", "edgecolor": "none",
                  "alpha": 0.85},
        )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("publicaciones gaussianas, k")
    ax.set_ylabel("ε total")
    legend_above(figure, ax, ncols=2)
    low, high = ax.get_ylim()
    ax.set_ylim(low, high * 4)
    style_axes(ax)
    names = [_ACCOUNTANT_LABELS.get(name, str(name)) for name in curves]
    totals = [format_number(final, 0 if final >= 100 else 1) for final, _ in finals]
    describe_figure(figure, (
        f"Presupuesto total ε contra el número de publicaciones gaussianas k, en ejes logarítmicos, con la "
        f"contabilidad {spanish_list(names)}: con k = {format_number(ks[-1])} el ε total es "
        f"{spanish_list(f'{total} ({name})' for total, name in zip(totals, names))}."))
    fit_margins(figure, ax)
    return figure


@styled
def plot_rdp_conversion(alphas, rdp, conversion) -> Figure:
    """Las dos piezas de la conversión RDP → (ε, δ) y su suma, con el α óptimo.

    ``rdp`` es la curva compuesta k·ε̄(α); ``conversion`` es ln(1/δ)/(α − 1).
    """
    alphas = as_float_array(alphas, name="alphas")
    rdp = as_float_array(rdp, name="rdp")
    conversion = as_float_array(conversion, name="conversion")
    check_same_length(alphas=alphas, rdp=rdp, conversion=conversion)
    total = rdp + conversion
    best = int(np.argmin(total))
    figure, ax = new_figure()
    # En este orden la leyenda (dos columnas, por columnas) deja las dos
    # fórmulas, que son anchas, en columnas distintas.
    ax.plot(alphas, rdp, color=COLORS["azul"], label=r"RDP: $k\alpha/2\sigma^2$")
    ax.plot(alphas, total, color=COLORS["tinta"], linewidth=LINE_WIDTH + 0.6, zorder=3,
            label="ε total")
    ax.plot(alphas, conversion, color=COLORS["naranja"],
            label=r"conversión: $\ln(1/\delta)/(\alpha-1)$")
    ax.plot([alphas[best]], [total[best]], marker="o", markersize=11, linestyle="none",
            color=COLORS["verde"], zorder=4,
            label=f"mínimo: α ≈ {format_number(alphas[best], 2)}")
    ax.set_xlabel("orden de Rényi, α")
    ax.set_ylabel("ε")
    ax.set_xlim(alphas.min(), alphas.max())
    ax.set_ylim(0, min(float(total.max()), 2.2 * float(total[best])))
    ax.annotate(f"ε ≈ {format_number(total[best], 1)}", xy=(alphas[best], total[best]),
                xytext=(0, 14), textcoords="offset points", ha="center",
                color=COLORS["verde"], fontsize=LEGEND_SIZE, fontweight="bold")
    legend_above(figure, ax)
    style_axes(ax)
    describe_figure(figure, (
        "Presupuesto ε contra el orden de Rényi α: la curva RDP sube con α, la conversión "
        "ln(1/δ)/(α − 1) baja, y su suma, el ε total, es mínima en "
        f"α ≈ {format_number(alphas[best], 2)}, con "
        f"ε ≈ {format_number(total[best], 1)}."))
    fit_margins(figure, ax)
    return figure


# ------------------------------------------- capítulo 5: aprendizaje --


@styled
def plot_gradient_norms(norms, *, clip_norm) -> Figure:
    """Normas L2 de los gradientes por persona, con la cota de recorte C."""
    norms = as_float_array(norms, name="norms")
    figure, ax = new_figure()
    bins = np.linspace(0.0, float(max(norms.max(), clip_norm)) * 1.02, 41)
    _draw_histogram(ax, norms, bins, label="antes del recorte")
    ax.axvline(float(clip_norm), color=COLORS["naranja"], linewidth=2.8,
               label=f"cota C = {format_number(clip_norm)}")
    clipped = float(np.mean(norms > clip_norm))
    ax.set_xlabel(r"norma $L_2$ de cada gradiente")
    ax.set_ylabel("personas")
    ax.legend(loc="upper right", title=f"recortadas: {format_number(100 * clipped, 0)} %",
              title_fontsize=LEGEND_SIZE)
    style_axes(ax, grid_axis="y")
    describe_figure(figure, (
        f"Histograma de las normas L2 de los gradientes de {format_number(norms.size)} personas, con una "
        f"línea en la cota de recorte C = {format_number(clip_norm)}: la mayor norma es "
        f"{format_number(norms.max(), 2)} y se recortan las del {format_number(100 * clipped, 0)}{PERCENT_SIGN} "
        "de las personas."))
    fit_margins(figure, ax)
    return figure


@styled
def plot_privacy_utility(epsilons, accuracies, *, nonprivate, majority) -> Figure:
    """Exactitud del modelo privado contra ε, con el modelo sin privacidad y la clase mayoritaria.

    ``accuracies`` puede ser una lista (una exactitud por ε) o una matriz
    (repeticiones × ε): entonces se dibuja la media y la banda entre el mínimo
    y el máximo.
    """
    epsilons = as_float_array(epsilons, name="epsilons")
    accuracies = np.asarray(accuracies, dtype=float)
    figure, ax = new_figure()
    mean = _plot_accuracy_band(ax, epsilons, accuracies, xs_name="epsilons")
    ax.axhline(float(nonprivate), color=COLORS["verde"], linestyle="--", linewidth=2.2,
               label="sin privacidad")
    ax.axhline(float(majority), color=COLORS["gris"], linestyle=":", linewidth=2.4,
               label="clase mayoritaria")
    ax.plot(epsilons, mean, marker="o", markersize=7, color=COLORS["azul"],
            label="privado")
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("presupuesto ε")
    ax.set_ylabel("exactitud")
    low = min(float(majority), float(np.min(accuracies)))
    high = max(float(nonprivate), float(np.max(accuracies)))
    ax.set_ylim(low - 0.03, high + 0.02)
    percent_ticks(ax.yaxis)
    legend_above(figure, ax, ncols=2)
    style_axes(ax)
    describe_figure(figure, (
        f"Exactitud del modelo privado contra el presupuesto ε (de {format_significant(epsilons[0], 2)} a "
        f"{format_significant(epsilons[-1], 2)}, eje logarítmico), con líneas para el modelo sin privacidad "
        f"({format_percent(nonprivate)}) y la clase mayoritaria ({format_percent(majority)}): la exactitud "
        f"media va de {format_percent(mean[0])} con el ε menor a {format_percent(mean[-1])} con el mayor."))
    fit_margins(figure, ax)
    return figure


@styled
def plot_iterations_cost(iterations, accuracies, *, epsilon, majority=None) -> Figure:
    """Exactitud contra el número de iteraciones T con ε fijo: el óptimo interior.

    ``accuracies`` es una lista (una exactitud por T) o una matriz
    (repeticiones × T), que se resume con su media.
    """
    iterations = as_float_array(iterations, name="iterations")
    accuracies = np.asarray(accuracies, dtype=float)
    # A little lower than the others: its slide carries two paragraphs of the lecture
    # around the cell, and the figure sets the cell's height.
    figure, ax = new_figure((FIGSIZE[0], FIGSIZE[1] - 0.15))
    mean = _plot_accuracy_band(ax, iterations, accuracies, xs_name="iteraciones")
    if majority is not None:
        ax.axhline(float(majority), color=COLORS["gris"], linestyle=":", linewidth=2.4,
                   label="clase mayoritaria")
    ax.plot(iterations, mean, marker="o", markersize=7, color=COLORS["azul"],
            label=f"privado, ε = {format_number(epsilon)}")
    best = int(np.argmax(mean))
    ax.plot([iterations[best]], [mean[best]], marker="*", markersize=18, linestyle="none",
            color=COLORS["naranja"], label=f"óptimo T = {format_number(iterations[best])}")
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis)
    ax.set_xlabel("iteraciones, T")
    ax.set_ylabel("exactitud")
    percent_ticks(ax.yaxis)
    legend_above(figure, ax, ncols=2)
    style_axes(ax)
    majority_text = f"; la clase mayoritaria da {format_percent(majority)}" if majority is not None else ""
    describe_figure(figure, (
        f"Exactitud del modelo privado contra el número de iteraciones T (de {format_number(iterations[0])} "
        f"a {format_number(iterations[-1])}, eje logarítmico) con ε = {format_number(epsilon)}: la exactitud "
        f"media es máxima, {format_percent(mean[best])}, con T = {format_number(iterations[best])}, y baja "
        f"con más iteraciones{majority_text}."))
    fit_margins(figure, ax)
    return figure
