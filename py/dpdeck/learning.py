"""Aprendizaje con privacidad diferencial: regresión logística y descenso de gradiente privado.

Predecimos el ingreso alto del censo a partir de la edad y la educación. El
gradiente de la pérdida logística es una suma sobre personas, y cada término
depende de una sola: publicar el gradiente en cada iteración es publicar una
consulta de suma. La protegemos como a cualquier suma (capítulo 5 de la clase;
Near y Abuah, cap. 11; Abadi et al. 2016):

1. estimar en privado el tamaño n de la base con una parte del presupuesto,
   ε_n = 5 % de ε (un conteo: sensibilidad 1, ruido de Laplace). Con bases
   vecinas que agregan o quitan a una persona, n también es un dato: usar el
   n exacto para dividir la suma o para fijar el paso lo publicaría;
2. recortar el gradiente de cada persona a norma L2 ≤ C (sensibilidad C);
3. sumar ruido gaussiano N(0, σ² I) a la suma, con la calibración clásica
   σ = C·√(2 ln(1,25/δ_t))/ε_t;
4. contabilizar con composición secuencial el conteo y las T iteraciones:
   ε_t = (ε − ε_n)/T y δ_t = δ/T, de modo que el entrenamiento completo es
   (ε, δ)-DP.

Variables explicativas con constantes FIJAS. Centrar y escalar con la media y
la desviación estándar de nuestra base sería otra consulta sobre los datos
(sin ruido, fuera del presupuesto): filtraría información. Usamos números
redondos cercanos a las estadísticas publicadas del Adult real (edad media
38,6 con desviación 13,6; educación media 10,1 con desviación 2,6): edad
(a − 40)/15 y educación (e − 10)/3. No dependen de nadie en la base.

Todo el ruido se muestrea en ``dpdeck.mechanisms``; con ``ledger=libro`` el
descenso anota en un ``dpdeck.accounting.PrivacyLedger`` el conteo y las T
sumas de gradientes que publica.

Código de enseñanza: descenso de gradiente de lote completo y composición
secuencial (no DP-SGD con muestreo de Poisson ni contabilidad de Rényi), ruido
en punto flotante (Mironov 2012) y privacidad por registro, no por usuario.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import (
    check_dataset,
    check_delta,
    check_epsilon,
    check_finite,
    check_nonempty,
    check_positive,
    check_positive_int,
    check_rng,
    describe,
)
from .mechanisms import add_gaussian_noise, gaussian_sigma, laplace_mechanism, laplace_scale

__all__ = [
    "AGE_CENTER",
    "AGE_SCALE",
    "EDUCATION_CENTER",
    "EDUCATION_SCALE",
    "PUBLIC_HIGH_INCOME_RATE",
    "DEFAULT_DELTA",
    "DEFAULT_ITERATIONS",
    "DEFAULT_CLIP_NORM",
    "DEFAULT_LEARNING_RATE",
    "DEFAULT_NOISE_RADIUS",
    "DEFAULT_COUNT_SHARE",
    "make_features",
    "make_dataset",
    "train_test_split",
    "split_census",
    "sigmoid",
    "make_initial_theta",
    "compute_gradients",
    "compute_gradient_norms",
    "clip_gradients",
    "train_logistic",
    "split_budget",
    "compute_noise_sigma",
    "compute_step_size",
    "calibrate_training",
    "noisy_gradient_descent",
    "predict",
    "accuracy",
    "majority_baseline",
    "privacy_utility_curve",
    "iterations_curve",
]

# Constantes públicas de las variables, redondeadas de las estadísticas
# publicadas del Adult real. Ninguna se calcula con nuestra base. Con variables
# de escala ~1 el descenso converge en pocas iteraciones, y cada iteración
# cuesta presupuesto.
AGE_CENTER = 40.0
AGE_SCALE = 15.0
EDUCATION_CENTER = 10.0
EDUCATION_SCALE = 3.0

PUBLIC_HIGH_INCOME_RATE = 0.24
"""Proporción pública de ingreso alto: el 24 % de las 48 842 filas del Adult real.

Es información publicada (no de nuestro censo): el punto de partida del modelo
es "predecir la clase mayoritaria", el que un analista sin datos elegiría.
"""

DEFAULT_DELTA = 1e-5
DEFAULT_ITERATIONS = 10
DEFAULT_CLIP_NORM = 1.0
DEFAULT_LEARNING_RATE = 4.0
DEFAULT_NOISE_RADIUS = 0.2
DEFAULT_COUNT_SHARE = 0.05
"""Fracción de ε que el descenso privado gasta en estimar n (el resto va a los T pasos)."""


# ------------------------------------------------------------------ datos --


def make_features(age, education_num) -> np.ndarray:
    """Matriz de diseño [1, edad escalada, educación escalada], con constantes fijas.

    Fórmula: x = (1, (edad − 40)/15, (educación − 10)/3).

    El centrado y la escala son constantes públicas (redondeo de las
    estadísticas publicadas del Adult real), no estadísticas de nuestra base: una media o una desviación estándar calculadas
    sobre la base serían consultas sin ruido que escapan al presupuesto.
    """
    age = check_finite(np.asarray(age), name="age")
    education_num = check_finite(np.asarray(education_num), name="education_num")
    if age.ndim != 1 or education_num.shape != age.shape:
        raise ValueError(
            "age y education_num deben ser arreglos unidimensionales del mismo largo; "
            f"se recibieron formas {age.shape} y {education_num.shape}"
        )
    check_nonempty(age, name="age")
    return np.column_stack(
        [
            np.ones(age.shape[0]),
            (age - AGE_CENTER) / AGE_SCALE,
            (education_num - EDUCATION_CENTER) / EDUCATION_SCALE,
        ]
    )


def make_dataset(census) -> tuple:
    """(X, y) del censo: variables de ``make_features`` e ingreso alto como 0/1."""
    X = make_features(census["age"], census["education_num"])
    y = np.asarray(census["high_income"], dtype=float)
    return X, y


def _check_theta(theta, dimension: int) -> np.ndarray:
    theta = check_finite(theta, name="theta")
    if theta.shape != (dimension,):
        raise ValueError(
            f"theta debe tener {dimension} coeficientes (uno por columna de X); tiene forma {theta.shape}"
        )
    return theta


def train_test_split(X, y, *, test_fraction=0.2, rng) -> tuple:
    """Separa filas al azar en entrenamiento y prueba: (X_train, X_test, y_train, y_test).

    La exactitud se mide sobre personas que el modelo no vio. La partición
    usa ``rng`` (reproducible con su semilla).
    """
    X, y = check_dataset(X, y)
    test_fraction = check_positive(test_fraction, name="test_fraction")
    if not test_fraction < 1:
        raise ValueError(f"test_fraction debe estar en (0, 1); se recibió {describe(test_fraction)}")
    rng = check_rng(rng)
    n = X.shape[0]
    n_test = int(round(n * test_fraction))
    if not 0 < n_test < n:
        raise ValueError(
            f"con {n} filas, test_fraction={describe(test_fraction)} deja un conjunto vacío"
        )
    order = rng.permutation(n)
    test, train = order[:n_test], order[n_test:]
    return X[train], X[test], y[train], y[test]


def split_census(*, rng, census=None, test_fraction=0.2) -> tuple:
    """(X_train, X_test, y_train, y_test) del censo de la clase: ``make_dataset`` y ``train_test_split``.

    Con ``census=None`` usa ``dpdeck.data.load_census()``.
    """
    if census is None:
        from .data import load_census

        census = load_census()
    X, y = make_dataset(census)
    return train_test_split(X, y, test_fraction=test_fraction, rng=rng)


# ---------------------------------------------------------------- modelo --


def sigmoid(z):
    """Función logística σ(z) = 1/(1 + e^(−z)), en la forma estable (1 + tanh(z/2))/2."""
    try:
        values = np.multiply(np.asarray(z, dtype=float), 0.5)
    except (TypeError, ValueError):
        raise ValueError(f"z debe ser un número o un arreglo de números; se recibió {describe(z)}") from None
    if values.ndim == 0:  # numpy gives back a number, which has nowhere to write
        return 0.5 * (1.0 + np.tanh(values))
    # The same operations in the same order, in place on the one new array: the descents call
    # this thousands of times per run on thousands of values, and every temporary costs.
    np.tanh(values, out=values)
    values += 1.0
    values *= 0.5
    return values


def make_initial_theta(dimension: int = 3) -> np.ndarray:
    """Punto de partida público: intercepto logit(0,24), pendientes 0.

    Ese modelo predice "ingreso bajo" para todos: la clase mayoritaria. Sale de
    una estadística publicada (``PUBLIC_HIGH_INCOME_RATE``), no de la base, así
    que no gasta presupuesto.
    """
    dimension = check_positive_int(dimension, name="dimension")
    theta = np.zeros(dimension)
    theta[0] = math.log(PUBLIC_HIGH_INCOME_RATE / (1 - PUBLIC_HIGH_INCOME_RATE))
    return theta


def compute_gradients(theta, X, y) -> np.ndarray:
    """Gradiente de la pérdida logística de cada persona (una fila por persona).

    Fórmula: g_i = (σ(xᵢ·θ) − yᵢ) · xᵢ. Cada fila depende de una sola persona.
    """
    X, y = check_dataset(X, y)
    theta = _check_theta(theta, X.shape[1])
    return (sigmoid(X @ theta) - y)[:, None] * X


def compute_gradient_norms(theta, X, y) -> np.ndarray:
    """Norma L2 del gradiente de cada persona: |σ(xᵢ·θ) − yᵢ| · ‖xᵢ‖₂.

    Como g_i es un escalar por xᵢ, su norma sale sin formar la matriz de
    gradientes. Es lo que mira la figura del recorte.
    """
    X, y = check_dataset(X, y)
    theta = _check_theta(theta, X.shape[1])
    return np.abs(sigmoid(X @ theta) - y) * np.linalg.norm(X, axis=1)


def clip_gradients(gradients, *, clip_norm) -> np.ndarray:
    """Recorta cada fila a norma L2 ≤ C: g ↦ g · min(1, C/‖g‖₂).

    Después del recorte, agregar o quitar a una persona mueve la suma en a lo
    sumo C (norma L2): la sensibilidad L2 de la suma es C por construcción.
    """
    gradients = check_finite(gradients, name="gradients")
    if gradients.ndim != 2:
        raise ValueError(f"gradients debe ser una matriz; tiene forma {gradients.shape}")
    clip_norm = check_positive(clip_norm, name="clip_norm")
    norms = np.linalg.norm(gradients, axis=1)
    return gradients * np.minimum(1.0, clip_norm / np.maximum(norms, 1e-300))[:, None]


def train_logistic(X, y, *, iterations=200, learning_rate=DEFAULT_LEARNING_RATE, initial_theta=None) -> np.ndarray:
    """Regresión logística sin privacidad por descenso de gradiente de lote completo.

    Fórmula: θ ← θ − η · (1/n) Σᵢ (σ(xᵢ·θ) − yᵢ) xᵢ, ``iterations`` veces.
    Las personas idénticas (mismas variables y etiqueta) se suman una vez, por
    su número mₖ: Σᵢ (σ(xᵢ·θ) − yᵢ) xᵢ = Σₖ mₖ (σ(xₖ·θ) − yₖ) xₖ
    (``_group_identical_rows``).

    Es la referencia contra la que se mide el costo de la privacidad. No da
    ninguna garantía: el modelo puede memorizar detalles de cualquier persona.
    """
    X, y = check_dataset(X, y)
    iterations = check_positive_int(iterations, name="iterations")
    learning_rate = check_positive(learning_rate, name="learning_rate")
    theta = make_initial_theta(X.shape[1]) if initial_theta is None else _check_theta(initial_theta, X.shape[1]).copy()
    n = X.shape[0]
    rows, labels, people = _group_identical_rows(X, y)
    features, where = _distinct_rows(rows)  # the same x with either label: σ once
    for _ in range(iterations):
        theta -= learning_rate * (rows.T @ ((sigmoid(features @ theta).take(where) - labels) * people)) / n
    return theta


def split_budget(*, epsilon, count_share=DEFAULT_COUNT_SHARE) -> tuple:
    """Reparte ε entre el conteo de n y los pasos: (ε_n, ε − ε_n), con ε_n = ``count_share``·ε.

    Composición secuencial (Dwork y Roth 2014, Teorema 3.16): el conteo
    (ε_n, 0)-DP y los pasos (ε − ε_n, δ)-DP suman (ε, δ).
    """
    epsilon = check_epsilon(epsilon)
    share = check_positive(count_share, name="count_share")
    if not share < 1:
        raise ValueError(f"count_share debe estar en (0, 1); se recibió {describe(count_share)}")
    return share * epsilon, (1.0 - share) * epsilon


def compute_noise_sigma(*, epsilon, delta, iterations, clip_norm) -> float:
    """σ del ruido de cada iteración: gaussiano clásico con ε/T y δ/T.

    Fórmula: σ = C · √(2 ln(1,25 T/δ)) · T/ε, con ε el presupuesto de los T
    pasos (en ``noisy_gradient_descent``, lo que queda después del conteo).

    Garantía: cada iteración es (ε/T, δ/T)-DP (sensibilidad L2 = C tras el
    recorte); por composición secuencial las T iteraciones son (ε, δ)-DP.
    Referencia: Dwork y Roth (2014), Teorema A.1 y Teorema 3.16.

    El gaussiano clásico exige ε/T < 1: con ε ≥ T hay que subir T (o usar una
    contabilidad de Rényi, que esta versión didáctica no usa).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    iterations = check_positive_int(iterations, name="iterations")
    clip_norm = check_positive(clip_norm, name="clip_norm")
    if epsilon / iterations >= 1:
        raise ValueError(
            f"epsilon/iterations debe ser menor que 1 para el gaussiano clásico; se recibió "
            f"epsilon={describe(epsilon)} con iterations={iterations} (ε por paso = "
            f"{epsilon / iterations:g}). Use más iteraciones o un ε menor."
        )
    return gaussian_sigma(sensitivity=clip_norm, epsilon=epsilon / iterations, delta=delta / iterations)


def compute_step_size(*, sigma, n, iterations, dimension, learning_rate=DEFAULT_LEARNING_RATE,
                      noise_radius=DEFAULT_NOISE_RADIUS):
    """Paso del descenso privado: η = min(η_max, r · n / (σ √(T d))).

    El ruido que el descenso acumula en θ tras T pasos es η/n · Σ_t Z_t, con
    norma esperada ≈ η σ √(T d)/n. Este paso la limita a ``noise_radius`` (r):
    con poco ruido se usa η_max; con mucho, el paso se achica y el modelo se
    queda cerca de su punto de partida (la clase mayoritaria) en vez de
    moverse al azar. El paso depende solo de números ya públicos (σ, T, d y
    el n estimado en privado), así que no gasta presupuesto. Es la regla
    clásica de descenso estocástico, paso ∝ 1/(G √T) con G la escala del
    gradiente ruidoso (Bassily, Smith y Thakurta 2014).

    ``n`` puede ser un número o un arreglo (un n estimado por corrida): el
    paso es entonces un arreglo.
    """
    sigma = check_finite(sigma, name="sigma")
    if sigma < 0:
        raise ValueError(f"sigma no puede ser negativa; se recibió {describe(sigma)}")
    n = check_finite(n, name="n")
    if np.any(np.asarray(n) <= 0):
        raise ValueError(f"n debe ser positivo; se recibió {describe(n)}")
    iterations = check_positive_int(iterations, name="iterations")
    dimension = check_positive_int(dimension, name="dimension")
    learning_rate = check_positive(learning_rate, name="learning_rate")
    noise_radius = check_positive(noise_radius, name="noise_radius")
    if sigma == 0:
        return learning_rate if np.ndim(n) == 0 else np.full(np.shape(n), learning_rate)
    step = np.minimum(learning_rate, noise_radius * np.asarray(n) / (sigma * math.sqrt(iterations * dimension)))
    return float(step) if np.ndim(n) == 0 else step


def _first_of_each_run(table) -> np.ndarray:
    """True en la primera fila de cada tramo de filas iguales y contiguas de ``table`` (una matriz)."""
    # Column by column: on a narrow table, np.any(table[1:] != table[:-1], axis=1) costs several times more.
    new = np.empty(len(table), dtype=bool)
    new[0] = True
    new[1:] = table[1:, 0] != table[:-1, 0]
    for column in range(1, table.shape[1]):
        new[1:] |= table[1:, column] != table[:-1, column]
    return new


# The last grouping, with the table it came from. One experiment trains many models on the same
# rows (its reference and every setting of a curve; twenty private models in the subgroup
# comparison), and sorting the rows costs more than a short descent: a table equal to the last
# one, byte for byte, gets the same groups back.
_last_grouping = None


def _group_identical_rows(X, y) -> tuple:
    """Las filas distintas de (X, y) y cuántas personas comparten cada una: (X_k, y_k, m_k).

    Dos personas con las mismas variables y la misma etiqueta tienen el mismo
    gradiente, recortado igual: Σᵢ clip_C(gᵢ) = Σₖ mₖ · clip_C(gₖ), la misma
    suma con la misma sensibilidad C (el recorte sigue siendo por persona). El
    censo de la clase tiene 5000 personas y menos de 900 filas distintas
    (edad, educación, ingreso): cada paso cuesta un quinto. Los tres arreglos
    son de solo lectura: la misma tabla, byte por byte, recibe los mismos.
    """
    global _last_grouping
    # The key is read from X and y as they come: building the table first would cost more than
    # the comparison, and most calls find the last grouping.
    key = (X.dtype.str, X.shape, X.tobytes(), y.dtype.str, y.tobytes())
    if _last_grouping is not None and _last_grouping[0] == key:
        return _last_grouping[1]
    table = np.column_stack([X, y])
    # Sorted by every column, equal rows are neighbours (np.unique(axis=0) does the
    # same with a slower sort of structured rows); take costs a fourth of fancy indexing.
    table = table.take(np.lexsort(table.T[::-1]), axis=0)
    starts = np.flatnonzero(_first_of_each_run(table))
    rows = table.take(starts, axis=0)
    grouped = (rows[:, :-1], rows[:, -1], np.diff(np.r_[starts, len(table)]).astype(float))
    for array in grouped:
        array.flags.writeable = False
    _last_grouping = (key, grouped)
    return grouped


# The distinct rows of the last few tables (``_distinct_rows``): an experiment computes σ(x·θ) on the
# same rows step after step, and a few tables take turns (one per partition into clients).
_distinct_tables: list = []
_DISTINCT_TABLES_KEPT = 4


def _distinct_rows(X) -> tuple:
    """Las filas distintas de X y la de cada fila de X: (X_k, índice), con X_k[índice] igual a X.

    σ(x·θ) depende solo de x, y la sigmoide es lo más caro de cada paso del
    descenso: las 4000 personas de entrenamiento del censo tienen unas 650
    filas (edad, educación) distintas, así que basta calcularla sobre X_k y
    repartirla con ``índice``. Es exacto, bit a bit: el producto x·θ de una
    fila no depende de en qué fila ni en qué matriz esté. Los dos arreglos son
    de solo lectura; la misma tabla, byte por byte, recibe los mismos.
    """
    key = (X.shape, X.tobytes())
    for position, (seen, found) in enumerate(_distinct_tables):
        if seen == key:
            _distinct_tables.insert(0, _distinct_tables.pop(position))
            return found
    # Sorted by one number per row, x·w with irrational weights, equal rows are neighbours; two
    # different rows with the same number could interleave, and then a row would be listed twice:
    # still exact, only less shared. One sort instead of one per column (np.lexsort), and take:
    # numpy's fancy indexing costs four times as much on a narrow table.
    order = np.argsort(X @ np.sqrt(np.arange(2.0, X.shape[1] + 2)))
    ordered = X.take(order, axis=0)
    new = _first_of_each_run(ordered)
    where = np.empty(len(X), dtype=np.intp)
    where[order] = np.cumsum(new) - 1
    found = (ordered.take(np.flatnonzero(new), axis=0), where)
    for array in found:
        array.flags.writeable = False
    _distinct_tables.insert(0, (key, found))
    del _distinct_tables[_DISTINCT_TABLES_KEPT:]
    return found


def _descend_noisily(X, y, theta, *, sigma, step_over_n, iterations, clip_norm, rng, repeats, add_noise=True):
    """``repeats`` descensos privados independientes a la vez (filas de ``theta``).

    El gradiente de cada persona es (σ(xᵢ·θ) − yᵢ)·xᵢ, así que su norma es
    |σ(xᵢ·θ) − yᵢ|·‖xᵢ‖: el recorte por persona se aplica como un factor
    escalar y la suma recortada es Xᵀ(residuo · factor), sin bucles sobre
    personas (es exactamente Σᵢ clip_C(gᵢ)); las personas idénticas se suman
    una vez, por su número (``_group_identical_rows``). ``step_over_n`` es
    η/n̂ de cada corrida. Con ``repeats=1`` el flujo aleatorio es el de una
    sola corrida. Con ``add_noise=False`` el ruido se sortea igual pero no se
    suma: el contrafactual sin ruido, con el mismo azar.
    """
    X, y, people = _group_identical_rows(X, y)
    features, where = _distinct_rows(X)  # the same x with either label: σ once
    # The per-row factors as whole (rows × repeats) arrays, made once: a column broadcast across the
    # repeats is copied again by every operation of every step.
    labels, row_norms, people = (np.repeat(column[:, None], repeats, axis=1)
                                 for column in (y, np.linalg.norm(X, axis=1), people))
    thetas = np.repeat(theta[None, :], repeats, axis=0)
    for _ in range(iterations):
        residual = sigmoid(features @ thetas.T).take(where, axis=0) - labels  # filas distintas × repeats
        scale = np.minimum(1.0, clip_norm / np.maximum(np.abs(residual) * row_norms, 1e-300))
        clipped_sum = (X.T @ (residual * scale * people)).T  # repeats × d
        noisy_sum = add_gaussian_noise(clipped_sum, sigma=sigma, rng=rng)
        thetas = thetas - step_over_n[:, None] * (noisy_sum if add_noise else clipped_sum)
    return thetas


def calibrate_training(shape, *, epsilon, delta, iterations, clip_norm, rng,
                       count_share=DEFAULT_COUNT_SHARE, learning_rate=DEFAULT_LEARNING_RATE,
                       noise_radius=DEFAULT_NOISE_RADIUS, repeats=None, ledger=None) -> tuple:
    """Lo que el descenso privado fija antes de su primer paso: (n̂, σ, η).

    ``shape`` es la forma (n, d) de los datos de entrenamiento. Con
    ε_n = ``count_share``·ε y ε_g = ε − ε_n (``split_budget``):

    * n̂ = max(1, n + Lap(1/ε_n)): el tamaño, publicado en privado (un conteo,
      sensibilidad 1; el máximo con 1 es posprocesamiento);
    * σ = ``compute_noise_sigma`` con ε_g y δ para los T pasos;
    * η = ``compute_step_size`` con n̂: solo números ya públicos.

    Garantía: publicar n̂ es (ε_n, 0)-DP; σ y η no miran los datos. Con
    ``repeats`` devuelve n̂ y η como arreglos, uno por corrida independiente.
    Con ``ledger`` anota el conteo.
    """
    n, dimension = (check_positive_int(value, name="shape") for value in shape)
    epsilon_count, epsilon_steps = split_budget(epsilon=epsilon, count_share=count_share)
    sigma = compute_noise_sigma(epsilon=epsilon_steps, delta=delta, iterations=iterations, clip_norm=clip_norm)
    rng = check_rng(rng)
    size = 1 if repeats is None else check_positive_int(repeats, name="repeats")
    noisy_n = np.maximum(laplace_mechanism(np.full(size, float(n)), sensitivity=1.0, epsilon=epsilon_count,
                                           rng=rng), 1.0)
    step = compute_step_size(sigma=sigma, n=noisy_n, iterations=iterations, dimension=dimension,
                             learning_rate=learning_rate, noise_radius=noise_radius)
    if ledger is not None:
        ledger.record_laplace("conteo de personas", sensitivity=1.0,
                              scale=laplace_scale(sensitivity=1.0, epsilon=epsilon_count))
    if repeats is None:
        return float(noisy_n[0]), sigma, float(step[0])
    return noisy_n, sigma, step


def _train_noisily(X, y, *, epsilon, delta, iterations, clip_norm, rng, learning_rate, noise_radius,
                   initial_theta, repeats, count_share=DEFAULT_COUNT_SHARE, ledger=None, add_noise=True):
    """``repeats`` entrenamientos privados con la calibración de ``noisy_gradient_descent``.

    Cada corrida estima su n con ``calibrate_training``, que también da σ y
    η. Lo comparten el descenso de una sola corrida y las dos curvas, para que
    las curvas midan exactamente lo que publica ``noisy_gradient_descent``.
    """
    noisy_n, sigma, step = calibrate_training(
        X.shape, epsilon=epsilon, delta=delta, iterations=iterations, clip_norm=clip_norm, rng=rng,
        count_share=count_share, learning_rate=learning_rate, noise_radius=noise_radius,
        repeats=repeats, ledger=ledger,
    )
    if ledger is not None:
        ledger.record_gaussian("suma de gradientes recortados", sensitivity=float(clip_norm), sigma=sigma,
                               delta=delta / iterations, count=int(iterations))
    theta = make_initial_theta(X.shape[1]) if initial_theta is None else _check_theta(initial_theta, X.shape[1])
    return _descend_noisily(
        X, y, theta, sigma=sigma, step_over_n=step / noisy_n, iterations=int(iterations),
        clip_norm=float(clip_norm), rng=rng, repeats=repeats, add_noise=add_noise,
    )


def noisy_gradient_descent(
    X,
    y,
    *,
    epsilon,
    delta,
    iterations,
    clip_norm,
    rng,
    learning_rate=DEFAULT_LEARNING_RATE,
    noise_radius=DEFAULT_NOISE_RADIUS,
    initial_theta=None,
    count_share=DEFAULT_COUNT_SHARE,
    ledger=None,
) -> np.ndarray:
    """Descenso de gradiente privado (lote completo) para regresión logística.

    Fórmula, con ε_n = ``count_share``·ε y ε_g = ε − ε_n:
        n̂ = max(1, n + Lap(1/ε_n))        (el tamaño, estimado en privado),
        σ = C · √(2 ln(1,25 T/δ)) · T/ε_g (gaussiano clásico con ε_g/T y δ/T),
        η = min(η_max, r n̂/(σ √(T d)))   (``compute_step_size``),
    y T = ``iterations`` veces:
        θ ← θ − η · (Σᵢ clip_C(gᵢ(θ)) + Z) / n̂,   Z ~ N(0, σ² I).

    Garantía: (ε, δ)-privacidad diferencial del vector θ publicado, por registro
    (bases vecinas que agregan o quitan una persona). El conteo es
    (ε_n, 0)-DP; cada iteración publica una suma de sensibilidad L2 = C,
    (ε_g/T, δ/T)-DP; la composición secuencial suma (ε, δ). θ inicial y η
    dependen solo de números públicos o ya publicados, y todo lo demás es
    posprocesamiento. Con ``ledger`` anota el conteo y las T sumas.
    Referencias: Abadi et al. (2016), "Deep Learning with Differential
    Privacy"; Bassily, Smith y Thakurta (2014); Near y Abuah, cap. 11.

    Limitaciones: exige ε/T < 1 (gaussiano clásico); composición secuencial
    (mucho más pesimista que la contabilidad de Rényi); ruido de punto flotante
    (Mironov 2012).
    """
    X, y = check_dataset(X, y)
    thetas = _train_noisily(
        X, y, epsilon=epsilon, delta=delta, iterations=iterations, clip_norm=clip_norm, rng=rng,
        learning_rate=learning_rate, noise_radius=noise_radius, initial_theta=initial_theta, repeats=1,
        count_share=count_share, ledger=ledger,
    )
    return thetas[0]


def train_noise_free_control(X, y, *, epsilon, delta, iterations, clip_norm, rng,
                             learning_rate=DEFAULT_LEARNING_RATE, noise_radius=DEFAULT_NOISE_RADIUS,
                             count_share=DEFAULT_COUNT_SHARE) -> np.ndarray:
    """El contrafactual de ``noisy_gradient_descent``: el mismo descenso, sin sumar el ruido.

    Con el mismo ``rng`` (el mismo estado) sortea lo mismo que
    ``noisy_gradient_descent``: el mismo n̂, el mismo σ y el mismo paso η;
    el ruido de cada paso se sortea y se descarta. Separa lo que hace el paso
    de lo que hace el ruido: si el control tampoco aprende, la culpa es del
    paso. NO es privado: recorta, pero publica sumas sin ruido.
    """
    X, y = check_dataset(X, y)
    thetas = _train_noisily(
        X, y, epsilon=epsilon, delta=delta, iterations=iterations, clip_norm=clip_norm, rng=rng,
        learning_rate=learning_rate, noise_radius=noise_radius, initial_theta=None, repeats=1,
        count_share=count_share, add_noise=False,
    )
    return thetas[0]


# ------------------------------------------------------------- evaluación --


def predict(theta, X) -> np.ndarray:
    """Predicción de ingreso alto: xᵢ·θ > 0 (probabilidad mayor que 1/2)."""
    X = check_finite(X, name="X")
    if X.ndim != 2:
        raise ValueError(f"X debe ser una matriz; tiene forma {X.shape}")
    theta = _check_theta(theta, X.shape[1])
    return X @ theta > 0


def accuracy(theta, X, y) -> float:
    """Exactitud: fracción de personas cuya etiqueta el modelo acierta."""
    X, y = check_dataset(X, y)
    return float(np.mean(predict(theta, X) == (y == 1)))


def majority_baseline(y) -> float:
    """Exactitud de predecir siempre la clase más frecuente: max(p, 1 − p)."""
    y = check_finite(y, name="y")
    check_nonempty(y, name="y")
    rate = float(np.mean(y))
    return max(rate, 1.0 - rate)


def _accuracies(thetas, X, y) -> np.ndarray:
    return np.mean((X @ thetas.T > 0) == (y[:, None] == 1), axis=0)


def _split_for_curve(X, y, rng, test_fraction):
    X_train, X_test, y_train, y_test = train_test_split(X, y, test_fraction=test_fraction, rng=rng)
    reference = train_logistic(X_train, y_train)
    return X_train, X_test, y_train, y_test, accuracy(reference, X_test, y_test)


def _measure_accuracies(split, settings, *, rng, repeats, **training) -> np.ndarray:
    """Exactitudes de prueba (repeticiones × ajustes) del descenso privado, un ajuste (ε, T) por columna."""
    X_train, X_test, y_train, y_test = split
    accuracies = np.empty((repeats, len(settings)))
    for j, (epsilon, iterations) in enumerate(settings):
        thetas = _train_noisily(X_train, y_train, epsilon=epsilon, iterations=int(iterations), rng=rng,
                                initial_theta=None, repeats=repeats, **training)
        accuracies[:, j] = _accuracies(thetas, X_test, y_test)
    return accuracies


def privacy_utility_curve(
    X,
    y,
    *,
    epsilons,
    rng,
    repeats=10,
    delta=DEFAULT_DELTA,
    iterations=DEFAULT_ITERATIONS,
    clip_norm=DEFAULT_CLIP_NORM,
    learning_rate=DEFAULT_LEARNING_RATE,
    noise_radius=DEFAULT_NOISE_RADIUS,
    test_fraction=0.2,
) -> dict:
    """Exactitud del descenso privado para cada ε (``repeats`` corridas por ε).

    Separa entrenamiento y prueba una vez con ``rng``, entrena el modelo sin
    privacidad como referencia y, para cada ε, ``repeats`` modelos privados.

    Devuelve un diccionario: ``epsilons``, ``accuracies`` (repeticiones × ε),
    ``mean`` y ``std`` por ε, ``nonprivate`` (exactitud sin privacidad),
    ``majority`` (clase mayoritaria en prueba) y los hiperparámetros usados.
    """
    epsilons = np.atleast_1d(check_finite(epsilons, name="epsilons"))
    check_nonempty(epsilons, name="epsilons")
    for epsilon in epsilons:
        check_epsilon(float(epsilon))
    repeats = check_positive_int(repeats, name="repeats")
    rng = check_rng(rng)
    X, y = check_dataset(X, y)
    X_train, X_test, y_train, y_test, nonprivate = _split_for_curve(X, y, rng, test_fraction)
    accuracies = _measure_accuracies(
        (X_train, X_test, y_train, y_test), [(epsilon, iterations) for epsilon in epsilons],
        rng=rng, repeats=repeats, delta=delta, clip_norm=clip_norm,
        learning_rate=learning_rate, noise_radius=noise_radius,
    )
    return {
        "epsilons": epsilons,
        "accuracies": accuracies,
        "mean": accuracies.mean(axis=0),
        "std": accuracies.std(axis=0),
        "nonprivate": nonprivate,
        "majority": majority_baseline(y_test),
        "delta": float(delta),
        "iterations": int(iterations),
        "clip_norm": float(clip_norm),
        "repeats": repeats,
    }


def iterations_curve(
    X,
    y,
    *,
    epsilon,
    iterations_grid,
    rng,
    repeats=10,
    delta=DEFAULT_DELTA,
    clip_norm=DEFAULT_CLIP_NORM,
    learning_rate=DEFAULT_LEARNING_RATE,
    noise_radius=DEFAULT_NOISE_RADIUS,
    test_fraction=0.2,
) -> dict:
    """Exactitud del descenso privado contra el número de iteraciones T, con ε fijo.

    Cada iteración gasta ε_g/T: más iteraciones acercan al óptimo, pero el
    ruido por paso crece con T (σ algo más que ∝ T) y el paso se achica para
    contenerlo. La curva
    tiene un máximo interior: T es un hiperparámetro de privacidad.

    Devuelve ``iterations``, ``accuracies`` (repeticiones × T), ``mean``,
    ``std``, ``best_iterations`` (T con la mejor media), ``nonprivate`` y
    ``majority``.
    """
    epsilon = check_epsilon(epsilon)
    grid = np.atleast_1d(np.asarray(iterations_grid))
    check_nonempty(grid, name="iterations_grid")
    grid = np.array([check_positive_int(t.item() if hasattr(t, "item") else t, name="iterations_grid")
                     for t in grid])
    repeats = check_positive_int(repeats, name="repeats")
    rng = check_rng(rng)
    X, y = check_dataset(X, y)
    X_train, X_test, y_train, y_test, nonprivate = _split_for_curve(X, y, rng, test_fraction)
    accuracies = _measure_accuracies(
        (X_train, X_test, y_train, y_test), [(epsilon, iterations) for iterations in grid],
        rng=rng, repeats=repeats, delta=delta, clip_norm=clip_norm,
        learning_rate=learning_rate, noise_radius=noise_radius,
    )
    mean = accuracies.mean(axis=0)
    return {
        "iterations": grid,
        "accuracies": accuracies,
        "mean": mean,
        "std": accuracies.std(axis=0),
        "best_iterations": int(grid[int(np.argmax(mean))]),
        "epsilon": epsilon,
        "nonprivate": nonprivate,
        "majority": majority_baseline(y_test),
        "delta": float(delta),
        "clip_norm": float(clip_norm),
        "repeats": repeats,
    }
