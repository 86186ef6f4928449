"""Las consultas de la clase: conteos, sumas recortadas, promedios, histogramas.

Capa "mecanismos y datos": cada función recibe arreglos de numpy (una columna
del censo, no el censo entero) y, si publica algo ruidoso, un generador
explícito ``rng: numpy.random.Generator``. Todo está vectorizado: ningún bucle
de Python recorre personas.

Limitaciones comunes (código de enseñanza):

* Privacidad por registro: cada fila es una persona distinta.
* Ruido en punto flotante (ataque de Mironov 2012; ver ``dpdeck.mechanisms``).
* Las cotas (``bound``, ``upper``, las categorías, los candidatos) deben ser
  conocimiento público: si se eligen mirando los datos, esa mirada también
  gasta presupuesto (ver ``choose_clipping_bound``).

Todo el ruido se muestrea en ``dpdeck.mechanisms``. Las consultas que publican
algo aceptan ``ledger=libro`` (un ``dpdeck.accounting.PrivacyLedger``) y anotan
ahí cada publicación con su mecanismo, su sensibilidad y su ruido.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from ._checks import (
    check_array_fits,
    check_delta,
    check_epsilon,
    check_finite,
    check_nonempty,
    check_positive,
    check_positive_int,
    check_rng,
    check_values,
    describe,
)
from .mechanisms import (
    add_laplace_noise,
    gaussian_sigma,
    laplace_mechanism,
    laplace_scale,
)


def _record_laplace(ledger, what: str, *, sensitivity: float, epsilon: float, count: int = 1) -> None:
    """Anota en ``ledger`` (si hay uno) una publicación de Laplace con la escala que se usó."""
    if ledger is not None:
        ledger.record_laplace(what, sensitivity=sensitivity,
                              scale=laplace_scale(sensitivity=sensitivity, epsilon=epsilon), count=count)

__all__ = [
    "count",
    "private_count",
    "clip",
    "private_clipped_sum",
    "measure_clipping_error",
    "expected_clipping_error",
    "ideal_clipping_bound",
    "ClippingChoice",
    "choose_clipping_bound",
    "private_mean",
    "histogram_counts",
    "private_histogram",
    "average_releases",
    "measure_averaging_error",
    "local_sensitivity_of_sum",
    "unsafe_sum_with_local_sensitivity",
    "measure_local_sensitivity_leak",
    "publish_random_person",
    "random_person_delta",
    "laplace_vs_gaussian_vector_error",
    "vector_crossover_k",
]


# ------------------------------------------------------------------ conteos --


def _check_condition(condition, *, name: str = "condicion") -> np.ndarray:
    array = np.asarray(condition)
    if array.dtype != bool:
        raise ValueError(
            f"{name} debe ser un arreglo booleano (por ejemplo edad > 40); "
            f"se recibió un arreglo de tipo {array.dtype}: {describe(array)}"
        )
    if array.ndim != 1:
        raise ValueError(f"{name} debe ser unidimensional; se recibió forma {array.shape}")
    check_nonempty(array, name=name)
    return array


def count(condition) -> int:
    """Cuenta cuántas personas cumplen una condición (arreglo booleano). Sin privacidad.

    Sensibilidad: 1. Agregar o quitar a una persona cambia el conteo en 0 o 1,
    sea cual sea el tamaño de la base (Dwork y Roth 2014, sección 3.3).
    """
    return int(np.count_nonzero(_check_condition(condition)))


def private_count(condition, *, epsilon, rng, ledger=None, what="conteo") -> float:
    """Conteo privado: número de ``True`` en ``condition`` más ruido Lap(1/ε).

    Fórmula: M(D) = #{i : condición_i} + Lap(1/ε).
    Garantía: ε-DP, porque el conteo tiene sensibilidad 1 (Dwork y Roth 2014,
    Teorema 3.6). El error absoluto esperado es 1/ε, independiente de n.
    Con ``ledger`` anota la publicación (``what`` la describe).
    """
    released = laplace_mechanism(float(count(condition)), sensitivity=1.0, epsilon=epsilon, rng=rng)
    _record_laplace(ledger, what, sensitivity=1.0, epsilon=epsilon)
    return released


# ------------------------------------------------------------ sumas y codo --


def _check_all_positive(values: np.ndarray, *, name: str) -> np.ndarray:
    """Exige que cada entrada sea positiva; el error nombra la primera que no lo es."""
    bad = values <= 0
    if bad.any():
        check_positive(float(values[bad][0]), name=name)
    return values


def clip(values, *, bound) -> np.ndarray:
    """Recorta cada valor al intervalo [0, b]: min(max(x, 0), b).

    Después del recorte, una persona mueve la suma en a lo sumo b: la
    sensibilidad de la suma pasa a ser b "por construcción". Los valores
    negativos se llevan a 0 (las columnas de la clase —edad, ganancias de
    capital— son no negativas).
    """
    values = check_values(values)
    bound = check_positive(bound, name="bound")
    return np.clip(values, 0.0, bound)


def private_clipped_sum(values, *, bound, epsilon, rng, ledger=None, what="suma recortada") -> float:
    """Suma recortada y privada: Σ clip(x_i, 0, b) + Lap(b/ε).

    Garantía: ε-DP, porque la suma recortada tiene sensibilidad b (agregar o
    quitar una persona la mueve en a lo sumo b). Referencia: Dwork y Roth
    (2014), Teorema 3.6; Near y Abuah (2021), cap. 5.

    El precio: sesgo Σ max(x_i − b, 0) hacia abajo si b es pequeño, ruido de
    escala b/ε si b es grande (ver ``expected_clipping_error``). Con
    ``ledger`` anota la publicación (``what`` la describe).
    """
    clipped_sum = float(np.sum(clip(values, bound=bound)))
    released = laplace_mechanism(clipped_sum, sensitivity=bound, epsilon=epsilon, rng=rng)
    _record_laplace(ledger, what, sensitivity=float(bound), epsilon=epsilon)
    return released


def measure_clipping_error(values, *, bounds, epsilon, rng, trials=200) -> dict:
    """Mide el dilema del recorte: sesgo, ruido y error total para cada cota b.

    Para cada b de ``bounds``, publica ``trials`` veces la suma recortada con
    ``private_clipped_sum`` (el mismo mecanismo, ruido Lap(b/ε)) y mide:

    * ``bias`` = Σ x_i − Σ clip(x_i, 0, b) (cuánto se pierde al recortar,
      exacto);
    * ``noise`` = promedio de |ruido| en las repeticiones (≈ b/ε);
    * ``total`` = promedio de |suma privada − suma verdadera|.

    Es la medición; su valor esperado exacto es ``expected_clipping_error``.
    El sesgo decrece y el ruido crece con b, así que ``total`` tiene un mínimo
    interior (el "codo") si las cotas van desde valores pequeños hasta más allá
    del máximo; ``best_bound`` es la b que lo alcanza. Ojo: elegir b así mira
    la suma verdadera, no es privado; la versión privada es
    ``choose_clipping_bound``.

    Devuelve un diccionario con ``bounds``, ``bias``, ``noise``, ``total``
    (arreglos) y ``best_bound``.
    """
    values = check_values(values)
    bounds = _check_all_positive(check_values(bounds, name="bounds"), name="cada bound")
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    trials = check_positive_int(trials, name="trials")
    true_sum = float(np.sum(values))
    clipped_sums = np.array([np.sum(clip(values, bound=bound)) for bound in bounds])
    released = np.column_stack([
        laplace_mechanism(np.full(trials, clipped), sensitivity=bound, epsilon=epsilon, rng=rng)
        for clipped, bound in zip(clipped_sums, bounds)
    ])
    total = np.mean(np.abs(released - true_sum), axis=0)
    return {
        "bounds": bounds,
        "bias": true_sum - clipped_sums,
        "noise": np.mean(np.abs(released - clipped_sums), axis=0),
        "total": total,
        "best_bound": float(bounds[int(np.argmin(total))]),
    }


def expected_clipping_error(values, *, bounds, epsilon) -> dict:
    """Error esperado exacto de la suma recortada y privada, para cada cota b. NO es privado.

    Con sesgo B(b) = Σ max(x_i − b, 0) ≥ 0 y ruido Z ~ Lap(s), s = b/ε, la
    suma publicada se equivoca en Z − B, y para la distribución de Laplace

        E|Z − B| = B + s·e^{−B/s}

    (el ruido, simétrico, a veces compensa el sesgo: el total es menor que
    B + s). Devuelve ``bounds``, ``bias`` (B), ``noise`` (E|Z| = s),
    ``total`` (E|Z − B|) y ``best_bound``, la b de la rejilla con menor error
    total: el codo, sin simular nada. Para ε = 0,01 y las ganancias del censo
    cae en b ≈ 15 849; con ε = 0,1, en 79 433, y con ε ≥ 0,8 ya no conviene
    recortar. Calcularlo mira los datos sin ruido: sirve para entender el
    dilema, no para elegir b (``choose_clipping_bound``).
    """
    values = check_values(values)
    bounds = _check_all_positive(check_values(bounds, name="bounds"), name="cada bound")
    epsilon = check_epsilon(epsilon)
    bias = np.maximum(values[:, None] - bounds[None, :], 0.0).sum(axis=0)
    noise = bounds / epsilon
    total = bias + noise * np.exp(-bias / noise)
    return {
        "bounds": bounds,
        "bias": bias,
        "noise": noise,
        "total": total,
        "best_bound": float(bounds[int(np.argmin(total))]),
    }


def ideal_clipping_bound(values, *, epsilon) -> float:
    """Cota que minimiza la cota superior sesgo + E|ruido| del error. NO es privada.

    Con g(b) = Σ max(x_i − b, 0) + b/ε (sesgo más E|Lap(b/ε)|, una cota
    superior del error esperado), la derivada es g'(b) = 1/ε − #{i : x_i > b}:
    el óptimo de g está donde quedan 1/ε personas por encima de b, es decir, en
    el ⌈1/ε⌉-ésimo valor más grande. Con ε = 1 es el máximo (no conviene
    recortar); con ε = 0,05, el vigésimo más grande. Es el blanco de
    ``choose_clipping_bound``. El error esperado exacto
    (``expected_clipping_error``) es menor que g y su mínimo cae algo más
    arriba (deja menos personas por encima). Calcularla mira los datos sin
    ruido.
    """
    values = check_values(values)
    rank = math.ceil(1.0 / check_epsilon(epsilon))
    if rank > values.size:
        return 0.0
    return float(max(np.sort(values)[-rank], 0.0))


class ClippingChoice(NamedTuple):
    """Cota elegida en privado y el presupuesto que costó elegirla."""

    bound: float
    epsilon_spent: float


DEFAULT_CLIPPING_CANDIDATES = np.logspace(0.0, 6.0, 25)


def choose_clipping_bound(values, *, epsilon, rng, candidates=None, final_epsilon=None,
                          ledger=None, size=None):
    """Busca en privado la cota de recorte b, y declara el ε que gastó.

    Meta: el error esperado de la suma recortada, sesgo + b/ε_final, es mínimo
    donde quedan unas 1/ε_final personas por encima de b (ver
    ``ideal_clipping_bound``). La búsqueda estima en privado cuántas personas
    superan cada candidato b_1 < … < b_m:

    1. histograma de los valores sobre los tramos (−∞, b_1], (b_1, b_2], …,
       (b_m, ∞) con ruido Lap(1/ε) en cada barra — cada persona cae en una
       sola barra, así que todo el histograma cuesta ε (composición paralela);
    2. posprocesamiento (gratis): se conservan solo las barras «claramente
       pobladas», con más de dos desviaciones estándar del ruido (2√2/ε); las
       demás se toman como vacías. Sumar las barras ruidosas sin ese filtro
       acumularía el ruido de todas las barras vacías de arriba;
    3. N̂(b_j) = suma de las barras conservadas por encima de b_j, y b es el
       menor candidato con N̂(b_j) ≤ 1/ε_final, donde ε_final
       (``final_epsilon``, por defecto ``epsilon``) es el presupuesto de la
       suma que vendrá después.

    Si ninguna barra por encima del primer tramo queda claramente poblada, la
    búsqueda no vio la cola de los datos: no sabe dónde terminan y no recorta
    (b = el mayor candidato).

    Garantía: la búsqueda es ε-DP. Honestidad contable: publicar después la
    suma con ε_final cuesta en total ε + ε_final (composición secuencial,
    Dwork y Roth 2014, Teorema 3.16); la búsqueda no es un preprocesamiento
    gratuito.

    Limitaciones: los candidatos deben venir del rango público de la variable
    (por defecto 10⁰ … 10⁶ en 25 pasos geométricos), no de los datos. Una
    cola con menos personas que el ruido de una barra es invisible: con las
    ganancias del censo y ε = 0,2, las 29 personas por encima de 56 234 se
    ven y la búsqueda elige 100 000 en unas 85 de cada 100 corridas; con
    ε = 0,05 (ruido de ±28 por barra) ya no se ven y la búsqueda recorta de
    más. Con ``ledger`` anota el histograma (una publicación de Laplace de
    sensibilidad 1).

    Devuelve ``ClippingChoice(bound, epsilon_spent)``. Con ``size`` hace
    ``size`` búsquedas independientes y devuelve una lista de ``size``
    elecciones: las mismas, sorteo por sorteo, que ``size`` llamadas seguidas
    con el mismo generador, contando los tramos una sola vez. Cada búsqueda
    cuesta ε: con ``ledger`` anota ``size`` histogramas.
    """
    values = check_values(values)
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    final_epsilon = epsilon if final_epsilon is None else check_epsilon(final_epsilon, name="final_epsilon")
    if candidates is None:
        edges = DEFAULT_CLIPPING_CANDIDATES
    else:
        edges = _check_all_positive(check_values(candidates, name="candidates"), name="cada candidato")
    releases = 1 if size is None else check_positive_int(size, name="size")
    edges = np.unique(edges)
    bucket = np.searchsorted(edges, values, side="left")  # bucket j holds b_j < x <= b_{j+1}
    counts = np.bincount(bucket, minlength=edges.size + 1).astype(float)
    # One row of noisy counts per search; numpy fills them in row order, the draws of that many calls.
    noisy = laplace_mechanism(np.broadcast_to(counts, (releases, counts.size)), sensitivity=1.0, epsilon=epsilon,
                              rng=rng)
    _record_laplace(ledger, "histograma para elegir b", sensitivity=1.0, epsilon=epsilon, count=releases)
    populated = np.where(noisy > 2.0 * math.sqrt(2.0) / epsilon, noisy, 0.0)
    above = np.cumsum(populated[:, ::-1], axis=1)[:, ::-1][:, 1:]  # above[:, j] estimates #{x > b_j}
    acceptable = above <= 1.0 / final_epsilon
    # Sin cola visible (o con gente aparente por encima de todo): no recortar.
    sees_the_tail = populated[:, 1:].any(axis=1) & acceptable.any(axis=1)
    bounds = np.where(sees_the_tail, edges[acceptable.argmax(axis=1)], edges[-1])
    choices = [ClippingChoice(bound=float(bound), epsilon_spent=epsilon) for bound in bounds]
    return choices[0] if size is None else choices


# ---------------------------------------------------------------- promedios --


def private_mean(values, *, upper, epsilon, rng, ledger=None, size=None):
    """Promedio privado como cociente de dos consultas privadas.

    Fórmula: (Σ clip(x_i, 0, U) + Lap(U/(ε/2))) / (n + Lap(1/(ε/2))).

    Garantía: ε-DP por composición secuencial: ε/2 para la suma (sensibilidad
    U, la cota superior pública —90 para la edad—) y ε/2 para el conteo
    (sensibilidad 1); el cociente es posprocesamiento. Referencia: Near y
    Abuah (2021), cap. 5; Dwork y Roth (2014), Teorema 3.16.

    El conteo ruidoso se lleva a un mínimo de 1 antes de dividir
    (posprocesamiento, no cuesta presupuesto). Con ``ledger`` anota las dos
    publicaciones.

    Con ``size`` hace ``size`` publicaciones independientes y devuelve un
    arreglo: los mismos promedios, sorteo por sorteo, que ``size`` llamadas
    seguidas con el mismo generador (suma, conteo, suma, conteo…), con los
    datos validados, recortados y sumados una sola vez. Cada una cuesta ε:
    con ``ledger`` anota ``size`` sumas y ``size`` conteos.
    """
    values = check_values(values)
    upper = check_positive(upper, name="upper")
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    releases = 1 if size is None else check_positive_int(size, name="size")
    half = epsilon / 2.0
    # The two exact answers do not change between releases: clip, sum and count once.
    clipped_sum = float(np.sum(clip(values, bound=upper)))
    everyone = float(count(np.ones(values.size, dtype=bool)))
    means = np.empty(releases)
    for release in range(releases):
        # Sum, then count, release after release: the order of the draws of that many calls.
        noisy_sum = laplace_mechanism(clipped_sum, sensitivity=upper, epsilon=half, rng=rng)
        noisy_count = laplace_mechanism(everyone, sensitivity=1.0, epsilon=half, rng=rng)
        means[release] = noisy_sum / max(noisy_count, 1.0)
    _record_laplace(ledger, "suma recortada", sensitivity=upper, epsilon=half, count=releases)
    _record_laplace(ledger, "conteo de personas", sensitivity=1.0, epsilon=half, count=releases)
    return float(means[0]) if size is None else means


# --------------------------------------------------------------- histograma --


def _check_labels(labels, categories):
    labels = np.asarray(labels)
    if labels.ndim != 1:
        raise ValueError(f"labels debe ser unidimensional; se recibió forma {labels.shape}")
    check_nonempty(labels, name="labels")
    categories = np.asarray(categories)
    check_nonempty(categories, name="categories")
    if np.unique(categories).size != categories.size:
        raise ValueError(f"categories no puede repetir categorías; se recibió {describe(categories)}")
    return labels, categories


def histogram_counts(labels, *, categories) -> np.ndarray:
    """Cuántas personas hay en cada categoría, en el orden de ``categories``. Sin privacidad.

    Una etiqueta fuera de ``categories`` es un error: la lista de categorías es
    pública y fija, no se deduce de los datos.
    """
    labels, categories = _check_labels(labels, categories)
    order = np.argsort(categories, kind="stable")
    sorted_categories = categories[order]
    position = np.searchsorted(sorted_categories, labels)
    position_in_range = np.minimum(position, sorted_categories.size - 1)
    unknown = (position >= sorted_categories.size) | (sorted_categories[position_in_range] != labels)
    if unknown.any():
        raise ValueError(
            f"labels contiene una categoría que no está en categories: {describe(labels[unknown.argmax()])}"
        )
    counts_sorted = np.bincount(position_in_range, minlength=categories.size)
    counts = np.empty(categories.size, dtype=int)
    counts[order] = counts_sorted
    return counts


def private_histogram(labels, *, categories, epsilon, rng, ledger=None, size=None) -> np.ndarray:
    """Histograma privado: cada barra más ruido Lap(1/ε) independiente.

    Garantía: ε-DP en total, no kε (composición paralela): cada persona cae en
    una sola categoría y solo mueve una barra en 1. Referencia: McSherry
    (2009), PINQ; Dwork y Roth (2014), sección 3.3.

    Con ε = 0,5 cada barra se equivoca en promedio E|Lap(2)| = 2 personas,
    tenga la barra 7 personas o 1594. Devuelve conteos ruidosos (``float``) en
    el orden de ``categories``. Con ``ledger`` anota el histograma como una
    publicación de sensibilidad L1 igual a 1.

    Con ``size`` hace ``size`` histogramas independientes (una fila cada uno):
    los mismos, sorteo por sorteo, que ``size`` llamadas seguidas con el mismo
    generador, contando las categorías una sola vez. Con ``ledger`` anota
    ``size`` publicaciones.
    """
    releases = 1 if size is None else check_positive_int(size, name="size")
    counts = histogram_counts(labels, categories=categories).astype(float)
    if size is not None:
        # numpy fills an array of draws in row order: row j holds the draws of the j-th call.
        counts = np.broadcast_to(counts, (releases, counts.size))
    released = laplace_mechanism(counts, sensitivity=1.0, epsilon=epsilon, rng=rng)
    _record_laplace(ledger, "histograma", sensitivity=1.0, epsilon=epsilon, count=releases)
    return released


# ------------------------------------------------------------- promediar --


def average_releases(value, *, k, epsilon, rng, sensitivity=1.0) -> float:
    """Promedio de k publicaciones ruidosas del mismo valor: el ataque por repetición.

    Fórmula: (1/k) Σ_j (f(D) + Lap(Δ/ε)); su desviación estándar es √2 Δ/(ε√k),
    así que el error cae como 1/√k y con k grande el atacante recupera f(D).

    Garantía: solo kε-DP (composición secuencial, Dwork y Roth 2014, Teorema
    3.16): por eso el presupuesto debe sumar.
    """
    value = check_finite(value, name="valor")
    k = check_positive_int(k, name="k")
    check_array_fits(k, name="un arreglo de publicaciones", given=f"k = {k}")
    releases = laplace_mechanism(np.full(k, value), sensitivity=sensitivity, epsilon=epsilon, rng=rng)
    return float(np.mean(releases))


def measure_averaging_error(value, *, ks, epsilon, rng, trials=2000, sensitivity=1.0) -> dict:
    """Error del ataque por repetición para cada k: raíz del error cuadrático medio.

    Para cada k de ``ks`` repite ``trials`` veces ``average_releases`` y mide
    √(promedio de (estimación − f(D))²). Devuelve ``ks``, ``error`` (medido),
    ``expected`` = √2 Δ/(ε√k) y ``epsilon_spent`` = kε (lo que costó cada
    estimación).
    """
    value = check_finite(value, name="valor")
    ks = np.array([check_positive_int(k, name="cada k") for k in np.atleast_1d(ks)], dtype=int)
    check_nonempty(ks, name="ks")
    scale = laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    rng = check_rng(rng)
    trials = check_positive_int(trials, name="trials")
    for k in ks:
        check_array_fits(trials * int(k), name="un arreglo de publicaciones (trials × k)",
                         given=f"k = {int(k)} con trials = {trials}")
    errors = np.array([
        math.sqrt(np.mean((laplace_mechanism(np.full((trials, k), value), sensitivity=sensitivity,
                                             epsilon=epsilon, rng=rng).mean(axis=1) - value) ** 2))
        for k in ks
    ])
    return {
        "ks": ks,
        "error": errors,
        "expected": math.sqrt(2.0) * scale / np.sqrt(ks),
        "epsilon_spent": ks * check_epsilon(epsilon),
    }


# ------------------------------------------------------- sensibilidad local --


def local_sensitivity_of_sum(values) -> float:
    """Sensibilidad "local" de la suma en esta base, mirando solo a quién quitar: max |x_i|.

    Es cuánto cambia la suma al quitar a la persona de esta base que más
    aporta. Con bases vecinas que también agregan a alguien, la sensibilidad
    local de una suma sin cota es infinita, como la global: en la base de al
    lado cabe cualquier valor. Esta es la versión más tentadora, y depende de
    los datos.
    """
    return float(np.max(np.abs(check_values(values))))


def unsafe_sum_with_local_sensitivity(values, *, epsilon, rng) -> tuple:
    """NO es privado: suma con ruido calibrado a la sensibilidad local.

    Fórmula: Σ x_i + Lap(LS(D)/ε), LS(D) = max |x_i|.

    Por qué falla: la escala del ruido depende de los datos. Una base con un
    valor extremo recibe mucho más ruido que su vecina sin él, y una salida
    lejos de la suma delata al extremo: la razón de probabilidades entre
    vecinas no está acotada por e^ε. Las alternativas legítimas son smooth
    sensitivity (Nissim, Raskhodnikova y Smith 2007), sample-and-aggregate y
    propose-test-release (Dwork y Lei 2009).

    Devuelve ``(suma_ruidosa, escala)``: la escala es justo lo que filtra.
    """
    values = check_values(values)
    rng = check_rng(rng)
    scale = local_sensitivity_of_sum(values) / check_epsilon(epsilon)
    if scale == 0.0:
        return float(np.sum(values)), 0.0
    return add_laplace_noise(float(np.sum(values)), scale=scale, rng=rng), scale


def _laplace_difference_tail(ratio: float) -> float:
    """P(|X₁ − X₂| > ratio·s) para X₁, X₂ ~ Lap(s) independientes: e^{−ratio}(1 + ratio/2)."""
    return math.exp(-ratio) * (1.0 + ratio / 2.0)


def _laplace_difference_threshold(tail: float) -> float:
    """El u con P(|X₁ − X₂| > u·s) = ``tail`` (bisección: la cola decrece en u)."""
    low, high = 0.0, 1.0
    while _laplace_difference_tail(high) > tail:
        high *= 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        low, high = (middle, high) if _laplace_difference_tail(middle) > tail else (low, middle)
    return high


def measure_local_sensitivity_leak(values, *, extreme_value, epsilon, rng, releases=2000,
                                   false_positive_rate=0.01) -> dict:
    """Muestra que calibrar a la sensibilidad local rompe la garantía: la escala misma delata.

    Bases vecinas: D = ``values`` y D′ = D más una persona con
    ``extreme_value``. El mecanismo tentador publica la suma con ruido
    Lap(LS/ε), LS = max |x| de la base (``unsafe_sum_with_local_sensitivity``),
    y la publica dos veces. La resta de las dos publicaciones, r₁ − r₂, no
    depende de la suma, solo de la escala: el atacante decide «el extremo
    está» si |r₁ − r₂| > τ, con τ = u·s_D y e^{−u}(1 + u/2) =
    ``false_positive_rate``, la probabilidad exacta de una falsa alarma en D.
    Se simulan ``releases`` pares de publicaciones en cada base.

    Si cada publicación fuera ε-DP, el par sería 2ε-DP y la tasa de aciertos
    no podría superar e^{2ε} · ``false_positive_rate`` (la definición
    aplicada al conjunto S de pares que hacen decir «está»: la lectura de DP
    como prueba de hipótesis, Wasserman y Zhou 2010): es ``dp_limit``.

    ``same_scale_rate`` es el contrafáctico: la misma prueba si D′ tuviera la
    escala de D. La resta tendría entonces la misma ley que en D y el atacante
    acertaría lo mismo que se equivoca: lo que delata a la persona es la
    escala, no el cambio de la suma (que la resta borra).

    Devuelve las dos escalas, ``threshold`` (τ), ``false_positive_rate`` y
    ``true_positive_rate`` medidas, ``same_scale_rate`` y ``dp_limit``.
    """
    values = check_values(values)
    extreme_value = check_finite(extreme_value, name="extreme_value")
    epsilon = check_epsilon(epsilon)
    rng = check_rng(rng)
    releases = check_positive_int(releases, name="releases")
    target = check_delta(false_positive_rate, name="false_positive_rate")
    scale_without = local_sensitivity_of_sum(values) / epsilon
    scale_with = local_sensitivity_of_sum(np.append(values, extreme_value)) / epsilon
    threshold = _laplace_difference_threshold(target) * scale_without

    def detection_rate(scale: float) -> float:
        # Only the noise enters the difference of two releases of the same sum.
        pairs = add_laplace_noise(np.zeros((releases, 2)), scale=scale, rng=rng)
        return float(np.mean(np.abs(pairs[:, 0] - pairs[:, 1]) > threshold))

    false_positives = detection_rate(scale_without)
    true_positives = detection_rate(scale_with)
    same_scale = detection_rate(scale_without)
    return {
        "scale_without": scale_without,
        "scale_with": scale_with,
        "threshold": threshold,
        "false_positive_rate": false_positives,
        "true_positive_rate": true_positives,
        "same_scale_rate": same_scale,
        "dp_limit": math.exp(2.0 * epsilon) * target,
    }


# ------------------------------------------------------ la regla δ ≪ 1/n --


def publish_random_person(records, *, rng, size=None):
    """Publica el registro completo de una persona elegida al azar. Evidentemente inaceptable.

    Y sin embargo es (0, 1/n)-DP: entre bases vecinas la distribución de la
    salida cambia en variación total a lo sumo 1/n (ver
    ``random_person_delta``). Por eso δ debe ser mucho menor que 1/n.
    Referencia: Dwork y Roth (2014), discusión tras la Definición 2.4.

    Con ``size`` hace ``size`` publicaciones independientes y devuelve un
    arreglo (para medir con qué frecuencia expone a cada persona).
    """
    records = np.asarray(records)
    check_nonempty(records, name="records")
    rng = check_rng(rng)
    if size is not None:
        return records[rng.integers(records.shape[0], size=check_positive_int(size, name="size"))]
    chosen = records[int(rng.integers(records.shape[0]))]
    return chosen.item() if isinstance(chosen, np.generic) else chosen


def random_person_delta(*, n) -> float:
    """δ con que "publicar una persona al azar" satisface (0, δ)-DP: 1/n.

    Para bases vecinas D (n personas) y D' (una más o una menos), y todo
    conjunto de salidas S: Pr[M(D) ∈ S] ≤ Pr[M(D') ∈ S] + 1/n. La regla
    práctica δ ≪ 1/n (por ejemplo δ ≈ 1/n²) descarta este mecanismo.
    """
    return 1.0 / check_positive_int(n, name="n")


# --------------------------------------------- Laplace contra Gauss, vector --


def laplace_vs_gaussian_vector_error(k, *, epsilon, delta, measure="std") -> dict:
    """Ruido por componente de Laplace y de Gauss para una consulta de k componentes.

    Una persona mueve cada una de las k componentes en 1: Δ₁ = k, Δ₂ = √k.

    * Laplace: escala k/ε, desviación estándar √2·k/ε, error absoluto medio k/ε.
    * Gauss (clásico, ε < 1): σ = √k·√(2 ln(1,25/δ))/ε, error absoluto medio σ√(2/π).

    ``measure="std"`` compara desviaciones estándar y ``"mean_abs"`` errores
    absolutos medios. La razón Gauss/Laplace no depende de ε (ambas escalan
    como 1/ε), así que el cruce solo depende de δ (ver ``vector_crossover_k``).
    Referencias: Dwork y Roth (2014), Teoremas 3.6 y A.1.

    Devuelve ``k``, ``laplace`` y ``gauss`` (números o arreglos, según ``k``).
    """
    scalar = np.ndim(k) == 0
    ks = np.array([check_positive_int(x, name="k") for x in np.atleast_1d(k)], dtype=float)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    sigma = np.sqrt(ks) * gaussian_sigma(sensitivity=1.0, epsilon=epsilon, delta=delta)
    if measure == "std":
        laplace, gauss = math.sqrt(2.0) * ks / epsilon, sigma
    elif measure == "mean_abs":
        laplace, gauss = ks / epsilon, sigma * math.sqrt(2.0 / math.pi)
    else:
        raise ValueError(f"measure debe ser 'std' o 'mean_abs'; se recibió {measure!r}")
    if scalar:
        return {"k": int(ks[0]), "laplace": float(laplace[0]), "gauss": float(gauss[0])}
    return {"k": ks.astype(int), "laplace": laplace, "gauss": gauss}


def vector_crossover_k(*, delta, measure="std") -> int:
    """Menor número de componentes k desde el cual el ruido de Gauss es menor que el de Laplace.

    Con c = √(2 ln(1,25/δ)):

    * desviación estándar: c√k < √2·k ⇔ k > c²/2 = ln(1,25/δ); con δ = 10⁻⁵,
      k > 11,74 → desde k = 12 (el número de la clase);
    * error absoluto medio: c√k·√(2/π) < k ⇔ k > (4/π) ln(1,25/δ) ≈ 14,9 →
      desde k = 15.

    No depende de ε: Laplace y Gauss escalan ambos como 1/ε.
    """
    log_term = math.log(1.25 / check_delta(delta))
    if measure == "std":
        threshold = log_term
    elif measure == "mean_abs":
        threshold = 4.0 * log_term / math.pi
    else:
        raise ValueError(f"measure debe ser 'std' o 'mean_abs'; se recibió {measure!r}")
    return int(math.floor(threshold)) + 1
