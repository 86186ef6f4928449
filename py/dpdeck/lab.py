"""Laboratorio reproducible de la clase: cada número de la clase, recalculado con una semilla.

``run_lab(seed)`` recorre los cinco capítulos y devuelve un diccionario con el
contrato del laboratorio:

* ``kind``: ``"privacidad-diferencial"``;
* ``seed``: la semilla recibida;
* ``inputs``: las decisiones observables (censo, δ, hiperparámetros);
* ``results``: los números con nombre de cada capítulo (ataque diferencial,
  ejemplo del hospital, factor del Gaussiano, las tres contabilidades, cruce
  Laplace–Gauss, pendiente 1/√k, histograma, codo del recorte, promedio
  privado, descenso de gradiente privado…);
* ``evidence``: hechos que un lector puede verificar, cada uno con sus
  números y si se cumplen (``holds``);
* ``limitations``: lo que este laboratorio no es.

Misma semilla, mismo JSON byte a byte::

    python -m dpdeck.lab --seed 0

Cada paso recibe su propio generador, derivado de la semilla con
``numpy.random.SeedSequence.spawn``: cambiar un paso no mueve el azar de los
demás. Para extender el laboratorio (el reto de la clase), agregue al
resultado una clave ``student_extension`` con el supuesto, la medición, la
conclusión y una limitación.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import numbers
import sys

import numpy as np

from . import accounting, federated, learning, mechanisms, queries
from ._checks import describe
from .data import CENSUS_SEED, EDUCATION_LEVELS, KAREN_NAME, MAX_AGE, find_census_csv, load_census

__all__ = [
    "KIND",
    "DELTA",
    "LIMITATIONS",
    "STEPS",
    "check_seed",
    "run_lab",
    "format_lab",
    "main",
]

KIND = "privacidad-diferencial"
DELTA = 1e-5
SIGNIFICANT_DIGITS = 6

LIMITATIONS = [
    "Ruido en punto flotante: muestrear Laplace con números de punto flotante deja huecos en las "
    "salidas posibles que un atacante puede explotar (Mironov 2012, 'On Significance of the Least "
    "Significant Bits for Differential Privacy'); una implementación real usa snapping o muestreo "
    "discreto exacto.",
    "El mecanismo Gaussiano clásico (Dwork y Roth 2014, Teorema A.1) solo vale para ε < 1; por eso "
    "el descenso privado exige ε/T < 1 y el laboratorio no usa el Gaussiano analítico.",
    "Privacidad por registro, no por usuario: cada fila es una persona distinta; si una persona "
    "aportara varias filas, la sensibilidad y toda la contabilidad cambiarían.",
    "Datos sintéticos: el censo imita la estructura del dataset Adult pero nadie en él existe; las "
    "exactitudes y los codos dependen de cómo se generó.",
    "Código de enseñanza, no de producción: descenso de gradiente de lote completo con composición "
    "secuencial (no DP-SGD con muestreo de Poisson ni contabilidad de Rényi en el entrenamiento), "
    "n tratado como público y sin auditoría de seguridad.",
    "Los números 'ideales' (codo del recorte, modelo sin privacidad) miran los datos sin ruido: "
    "sirven para comparar, no son publicables.",
    "Las tasas medidas (errores, exactitudes) son estimaciones con la semilla dada: otra semilla "
    "da valores cercanos, no idénticos.",
]


# ------------------------------------------------------------ utilidades --


def check_seed(seed) -> int:
    """Exige una semilla entera ≥ 0 (acepta 3 o 3.0, no True ni −1)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Real):
        raise ValueError(f"seed debe ser un entero mayor o igual que 0; se recibió {describe(seed)}")
    value = float(seed)
    if not (math.isfinite(value) and value.is_integer() and value >= 0):
        raise ValueError(f"seed debe ser un entero mayor o igual que 0; se recibió {describe(seed)}")
    return int(value)


def _plain(value):
    """Convierte a tipos de JSON y redondea los reales a 6 cifras significativas."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, np.ndarray):
        return [_plain(item) for item in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            return None
        if number == 0:
            return 0.0
        return float(f"{number:.{SIGNIFICANT_DIGITS}g}")
    if isinstance(value, str) or value is None:
        return value
    raise TypeError(f"valor no serializable en el laboratorio: {describe(value)}")


def _fact(result: str, fact: str, holds: bool, **values) -> dict:
    return {"result": result, "fact": fact, "holds": bool(holds), "values": values}


# ------------------------------------------------------------------ pasos --
# Cada paso recibe el censo y su propio generador y devuelve
# (resultados, lista de hechos). El orden y los nombres forman el contrato.


def describe_census(census, rng):
    """Capítulo 0: el dato de partida."""
    rich = census.high_income
    results = {
        "people": len(census),
        "columns": list(census.columns),
        "high_income_count": int(rich.sum()),
        "high_income_rate": float(rich.mean()),
        "census_seed": CENSUS_SEED,
        "csv_sha256": hashlib.sha256(find_census_csv().read_bytes()).hexdigest(),
    }
    evidence = [
        _fact(
            "census",
            "El censo sintético tiene 5.000 personas y cerca de una de cada cuatro tiene ingreso alto, "
            "como el dataset Adult.",
            len(census) == 5000 and 0.2 <= results["high_income_rate"] <= 0.3,
            people=len(census),
            high_income_rate=results["high_income_rate"],
        )
    ]
    return results, evidence


def measure_differencing_attack(census, rng, *, epsilon=0.5, releases=2000):
    """Capítulo 0–1: dos conteos exactos restados revelan a Karen; con ruido, no."""
    karen = census.name == KAREN_NAME
    everyone = queries.count(census.high_income)
    without_karen = queries.count(census.high_income & ~karen)
    noisy_everyone = mechanisms.laplace_mechanism(
        np.full(releases, float(everyone)), sensitivity=1, epsilon=epsilon, rng=rng)
    noisy_without = mechanisms.laplace_mechanism(
        np.full(releases, float(without_karen)), sensitivity=1, epsilon=epsilon, rng=rng)
    differences = noisy_everyone - noisy_without
    # Cada conteo lleva Lap(1/ε) (varianza 2/ε²): la diferencia tiene desviación 2/ε.
    expected_std = 2.0 / epsilon
    measured_std = float(differences.std())
    results = {
        "karen_found": int(karen.sum()),
        "count_everyone": everyone,
        "count_without_karen": without_karen,
        "difference": everyone - without_karen,
        "karen_high_income_revealed": everyone - without_karen == 1,
        "epsilon_per_query": epsilon,
        "noisy_difference_std": measured_std,
        "noisy_difference_std_expected": expected_std,
        "first_noisy_difference": float(differences[0]),
    }
    evidence = [
        _fact(
            "differencing_attack",
            "Restar dos conteos exactos (todos y todos menos Karen) revela que Karen tiene ingreso alto.",
            results["difference"] == 1,
            count_everyone=everyone,
            count_without_karen=without_karen,
        ),
        _fact(
            "differencing_attack",
            "Con Lap(1/ε) en cada conteo (ε = 0,5) la diferencia tiene desviación estándar 2/ε = 4, "
            "cuatro veces la señal de 1 que busca el atacante.",
            abs(measured_std / expected_std - 1) < 0.1,
            measured_std=measured_std,
            expected_std=expected_std,
            releases=releases,
        ),
    ]
    return results, evidence


def work_hospital_example(census, rng, *, count=42, epsilon=0.5, samples=100_000):
    """Capítulo 1 (página de la clase): el conteo del hospital con Δ = 1 y ε = 0,5."""
    scale = mechanisms.laplace_scale(sensitivity=1, epsilon=epsilon)
    bound = mechanisms.laplace_density_ratio_bound(epsilon=epsilon)
    outputs = np.linspace(count - 30, count + 30, 6001)
    ratio = (mechanisms.laplace_density(outputs, loc=count, scale=scale)
             / mechanisms.laplace_density(outputs, loc=count - 1, scale=scale))
    noise = mechanisms.laplace_mechanism(np.zeros(samples), sensitivity=1, epsilon=epsilon, rng=rng)
    mean_abs = float(np.mean(np.abs(noise)))
    # |Lap(b)| es exponencial de media b y desviación b: error estándar b/√muestras.
    standard_error = scale / math.sqrt(samples)
    three = accounting.sequential_composition([epsilon] * 3)
    release = mechanisms.laplace_mechanism(float(count), sensitivity=1, epsilon=epsilon, rng=rng)
    results = {
        "count": count,
        "sensitivity": 1,
        "epsilon": epsilon,
        "scale_b": scale,
        "density_ratio_bound": bound,
        "density_ratio_max_on_grid": float(ratio.max()),
        "expected_abs_error": scale,
        "measured_abs_error": mean_abs,
        "relative_error": scale / count,
        "epsilon_three_queries": three,
        "one_release": release,
    }
    evidence = [
        _fact("hospital", "Con Δf = 1 y ε = 0,5 la escala del ruido es b = Δf/ε = 2.",
              scale == 2.0, scale_b=scale),
        _fact("hospital",
              "La razón de densidades entre f(D) = 42 y f(D') = 41 nunca supera e^0,5 ≈ 1,65 "
              "(máximo sobre 6.001 salidas entre 12 y 72).",
              ratio.max() <= bound * (1 + 1e-12), bound=bound, max_ratio=float(ratio.max())),
        _fact("hospital",
              "El error medio |Lap(2)| medido en 100.000 muestras es ≈ b = 2 (±5 errores estándar).",
              abs(mean_abs - scale) <= 5 * standard_error, measured=mean_abs, expected=scale,
              standard_error=standard_error),
        _fact("hospital", "Tres consultas con ε = 0,5 gastan ε = 1,5 (composición secuencial).",
              abs(three - 1.5) < 1e-12, epsilon_total=three),
    ]
    return results, evidence


def compute_gaussian_price(census, rng):
    """Capítulo 4: el factor √(2 ln(1,25/δ)) del Gaussiano clásico."""
    factor = mechanisms.gaussian_sigma_factor(delta=DELTA)
    expected = math.sqrt(2 * math.log(1.25 / DELTA))
    sigma = mechanisms.gaussian_sigma(sensitivity=1, epsilon=0.5, delta=DELTA)
    results = {
        "delta": DELTA,
        "sigma_factor": factor,
        "sigma_scalar_epsilon_0_5": sigma,
        "laplace_std_epsilon_0_5": mechanisms.laplace_std(sensitivity=1, epsilon=0.5),
    }
    evidence = [
        _fact("gaussian", "Con δ = 10⁻⁵ el Gaussiano paga el factor √(2 ln(1,25/δ)) ≈ 4,84.",
              abs(factor - expected) < 1e-12 and round(factor, 2) == 4.84, factor=factor),
        _fact("gaussian",
              "En una consulta escalar con ε = 0,5 Laplace gana: su desviación estándar (2,83) es "
              "menor que la σ del Gaussiano (9,69).",
              results["laplace_std_epsilon_0_5"] < sigma,
              laplace_std=results["laplace_std_epsilon_0_5"], gaussian_sigma=sigma),
    ]
    return results, evidence


def compare_accountants(census, rng, *, sigma=20.0, steps=10_000):
    """Capítulo 4: el mismo Gaussiano repetido 10⁴ veces, con tres contabilidades."""
    compared = accounting.compare_gaussian_accountants(sigma=sigma, steps=steps, delta=DELTA)
    results = {"sigma": sigma, "steps": steps, "delta": DELTA, "sensitivity": 1.0, **compared}
    evidence = [
        _fact("composition",
              "σ = 20, Δ = 1, δ = 10⁻⁵, k = 10⁴: composición secuencial ≈ 3236, Rényi DP ≈ 36 "
              "(36,5 en α ≈ 1,96) y la composición avanzada queda entre ambas.",
              round(compared["sequential"]) == 3236 and round(compared["rdp"]) in (36, 37)
              and compared["rdp"] < compared["advanced"] < compared["sequential"]
              and abs(compared["alpha"] - 1.96) < 0.01,
              sequential=compared["sequential"], advanced=compared["advanced"], rdp=compared["rdp"],
              alpha=compared["alpha"], rdp_tight=compared["rdp_tight"]),
    ]
    return results, evidence


def find_vector_crossing(census, rng, *, epsilon=0.5, largest_k=40):
    """Capítulo 4: con k componentes movidas en 1, Gauss le gana a Laplace desde k = 12."""
    ks = np.arange(1, largest_k + 1)
    noise = queries.laplace_vs_gaussian_vector_error(ks, epsilon=epsilon, delta=DELTA)
    first_gauss_wins = int(ks[np.argmax(noise["gauss"] < noise["laplace"])])
    formula = queries.vector_crossover_k(delta=DELTA)
    results = {
        "epsilon": epsilon,
        "delta": DELTA,
        "crossing_k": first_gauss_wins,
        "crossing_k_formula": formula,
        "laplace_std_k11": float(noise["laplace"][10]),
        "gauss_std_k11": float(noise["gauss"][10]),
        "laplace_std_k12": float(noise["laplace"][11]),
        "gauss_std_k12": float(noise["gauss"][11]),
    }
    evidence = [
        _fact("vector",
              "Consulta de k componentes movidas en 1 (Δ₁ = k, Δ₂ = √k): la desviación del Gaussiano "
              "es menor que la de Laplace desde k = 12 (δ = 10⁻⁵).",
              first_gauss_wins == 12 == formula,
              crossing_k=first_gauss_wins, laplace_k11=results["laplace_std_k11"],
              gauss_k11=results["gauss_std_k11"], laplace_k12=results["laplace_std_k12"],
              gauss_k12=results["gauss_std_k12"]),
    ]
    return results, evidence


def measure_averaging(census, rng, *, epsilon=0.5, trials=400):
    """Capítulo 2: promediar k publicaciones ruidosas; el error cae como 1/√k."""
    ks = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000]
    measured = queries.measure_averaging_error(42, ks=ks, epsilon=epsilon, rng=rng, trials=trials)
    slope, _ = np.polyfit(np.log(measured["ks"]), np.log(measured["error"]), 1)
    results = {
        "epsilon": epsilon,
        "ks": ks,
        "error": measured["error"],
        "expected": measured["expected"],
        "loglog_slope": float(slope),
        "epsilon_spent": measured["epsilon_spent"],
    }
    evidence = [
        _fact("averaging",
              "El error de promediar k publicaciones cae como 1/√k: pendiente log-log ≈ −0,5 "
              "(1 ≤ k ≤ 1000, 400 ensayos por k); con k = 1000 el atacante gastó ε = 500.",
              abs(slope + 0.5) < 0.05, slope=float(slope), error_k1=float(measured["error"][0]),
              error_k1000=float(measured["error"][-1])),
    ]
    return results, evidence


def measure_histogram(census, rng, *, epsilon=0.5, repeats=200):
    """Capítulo 2: histograma educativo privado (composición paralela)."""
    counts = queries.histogram_counts(census.education, categories=EDUCATION_LEVELS)
    release = queries.private_histogram(census.education, categories=EDUCATION_LEVELS,
                                        epsilon=epsilon, rng=rng)
    many = mechanisms.laplace_mechanism(np.tile(counts.astype(float), (repeats, 1)),
                                        sensitivity=1, epsilon=epsilon, rng=rng)
    mean_abs = float(np.mean(np.abs(many - counts)))
    standard_error = (1 / epsilon) / math.sqrt(many.size)
    results = {
        "epsilon": epsilon,
        "epsilon_total": accounting.parallel_composition([epsilon] * len(EDUCATION_LEVELS)),
        "categories": list(EDUCATION_LEVELS),
        "true_counts": counts,
        "private_counts": release,
        "mean_abs_error_per_bar": mean_abs,
        "expected_abs_error_per_bar": 1 / epsilon,
        "largest_bar": int(counts.max()),
        "bars_over_100": int(np.sum(counts > 100)),
    }
    evidence = [
        _fact("histogram",
              "El histograma privado de educación con ε = 0,5 se equivoca en ≈ 2 personas por barra "
              "(E|Lap(2)| = 2), sobre barras de cientos; cuesta ε = 0,5 en total, no 16 × 0,5.",
              abs(mean_abs - 2.0) <= 5 * standard_error and results["epsilon_total"] == epsilon,
              mean_abs_error=mean_abs, expected=2.0, largest_bar=results["largest_bar"],
              bars_over_100=results["bars_over_100"], epsilon_total=results["epsilon_total"]),
    ]
    return results, evidence


def find_clipping_elbow(census, rng, *, epsilons=(0.01, 0.1), trials=300):
    """Capítulo 3: el codo del recorte de la suma de ganancias de capital."""
    gains = census.capital_gain.astype(float)
    bounds = np.geomspace(100, 1_000_000, 41)
    results = {"bounds_min": 100.0, "bounds_max": 1_000_000.0, "bounds_count": 41,
               "true_sum": float(gains.sum()), "max_value": float(gains.max()), "by_epsilon": {}}
    evidence = []
    for epsilon in epsilons:
        elbow = queries.measure_clipping_error(gains, bounds=bounds, epsilon=epsilon, rng=rng, trials=trials)
        total = elbow["total"]
        best = int(np.argmin(total))
        ideal = queries.ideal_clipping_bound(gains, epsilon=epsilon)
        entry = {
            "best_bound": elbow["best_bound"],
            "ideal_bound": ideal,
            "min_total_error": float(total[best]),
            "total_error_smallest_bound": float(total[0]),
            "total_error_largest_bound": float(total[-1]),
        }
        results["by_epsilon"][f"{epsilon:g}"] = entry
        evidence.append(_fact(
            "clipping",
            f"Suma de ganancias de capital con ε = {epsilon:g}: el error total (sesgo + ruido) tiene "
            "un mínimo interior en la rejilla de cotas 10² … 10⁶.",
            0 < best < bounds.size - 1 and total[best] < 0.7 * min(total[0], total[-1]),
            epsilon=epsilon, **entry))
    return results, evidence


def choose_bound_privately(census, rng, *, search_epsilon=0.2, sum_epsilon=0.8):
    """Capítulo 3: elegir b en privado y declarar lo que costó."""
    gains = census.capital_gain.astype(float)
    choice = queries.choose_clipping_bound(gains, epsilon=search_epsilon, final_epsilon=sum_epsilon, rng=rng)
    released = queries.private_clipped_sum(gains, bound=choice.bound, epsilon=sum_epsilon, rng=rng)
    total = accounting.sequential_composition([choice.epsilon_spent, sum_epsilon])
    results = {
        "search_epsilon": choice.epsilon_spent,
        "sum_epsilon": sum_epsilon,
        "epsilon_total": total,
        "chosen_bound": choice.bound,
        "private_sum": released,
        "true_sum": float(gains.sum()),
    }
    evidence = [
        _fact("private_bound",
              "Buscar b en privado cuesta: ε = 0,2 para la búsqueda más 0,8 para la suma dan ε = 1,0 "
              "(composición secuencial).",
              abs(total - 1.0) < 1e-12, chosen_bound=choice.bound, epsilon_total=total),
    ]
    return results, evidence


def compute_private_mean(census, rng, *, epsilon=1.0):
    """Capítulo 3: promedio de edad = suma (ε/2, Δ = 90) / conteo (ε/2, Δ = 1)."""
    ages = census.age.astype(float)
    private = queries.private_mean(ages, upper=MAX_AGE, epsilon=epsilon, rng=rng)
    split = [epsilon / 2, epsilon / 2]
    results = {
        "epsilon": epsilon,
        "epsilon_sum": split[0],
        "epsilon_count": split[1],
        "sum_sensitivity": MAX_AGE,
        "count_sensitivity": 1,
        "private_mean_age": private,
        "true_mean_age": float(ages.mean()),
    }
    evidence = [
        _fact("mean",
              "El promedio privado de edad gasta ε/2 en la suma (sensibilidad 90, la edad máxima) y "
              "ε/2 en el conteo (sensibilidad 1): ε = 1 en total.",
              accounting.sequential_composition(split) == epsilon and abs(private - ages.mean()) < 1.0,
              private=private, true=float(ages.mean()), epsilon_sum=split[0], epsilon_count=split[1]),
    ]
    return results, evidence


def measure_local_sensitivity(census, rng, *, epsilon=1.0, extreme=99_999):
    """Capítulo 3: calibrar a la sensibilidad local rompe la garantía."""
    gains = census.capital_gain.astype(float)
    base = gains[gains < 10_000]
    leak = queries.measure_local_sensitivity_leak(base, extreme_value=extreme, epsilon=epsilon, rng=rng)
    results = {"epsilon": epsilon, "extreme_value": extreme, **leak}
    evidence = [
        _fact("local_sensitivity",
              "Con ruido calibrado a la sensibilidad local, un atacante detecta al extremo de 99.999 "
              "mucho más de lo que ε-DP permite (e^ε × tasa de falsas alarmas).",
              leak["true_positive_rate"] > leak["dp_limit"],
              true_positive_rate=leak["true_positive_rate"], dp_limit=leak["dp_limit"],
              false_positive_rate=leak["false_positive_rate"]),
    ]
    return results, evidence


def check_delta_rule(census, rng):
    """Capítulo 4: δ ≪ 1/n, o 'publicar una persona al azar' sería aceptable."""
    n = len(census)
    random_person = queries.random_person_delta(n=n)
    results = {"n": n, "delta_random_person": random_person, "delta_used": DELTA,
               "ratio": random_person / DELTA}
    evidence = [
        _fact("delta_rule",
              "Publicar una persona al azar es (0, 1/n)-DP con 1/n = 2·10⁻⁴; el δ = 10⁻⁵ de la clase "
              "es 20 veces menor.",
              DELTA < random_person / 10, delta_random_person=random_person, delta=DELTA),
    ]
    return results, evidence


def train_private_models(census, rng, *, repeats=10):
    """Capítulo 5: descenso de gradiente privado, exactitud contra ε y contra T."""
    X, y = learning.make_dataset(census)
    epsilons = [0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0]
    curve = learning.privacy_utility_curve(X, y, epsilons=epsilons, rng=rng, repeats=repeats)
    grid = [1, 2, 3, 5, 8, 12, 20, 35, 60, 100]
    fixed_epsilon = 0.5
    by_t = learning.iterations_curve(X, y, epsilon=fixed_epsilon, iterations_grid=grid, rng=rng, repeats=repeats)
    sigma = learning.compute_noise_sigma(epsilon=1.0, delta=DELTA, iterations=learning.DEFAULT_ITERATIONS,
                                         clip_norm=learning.DEFAULT_CLIP_NORM)
    mean = curve["mean"]
    results = {
        "features": ["intercepto", "(edad − 40)/15", "(educación − 10)/3"],
        "delta": DELTA,
        "iterations": learning.DEFAULT_ITERATIONS,
        "clip_norm": learning.DEFAULT_CLIP_NORM,
        "learning_rate": learning.DEFAULT_LEARNING_RATE,
        "noise_radius": learning.DEFAULT_NOISE_RADIUS,
        "repeats": repeats,
        "nonprivate_accuracy": curve["nonprivate"],
        "majority_baseline": curve["majority"],
        "epsilons": epsilons,
        "accuracy_mean": mean,
        "accuracy_std": curve["std"],
        "sigma_per_step_epsilon_1": sigma,
        "iterations_epsilon": fixed_epsilon,
        "iterations_grid": grid,
        "iterations_accuracy_mean": by_t["mean"],
        "best_iterations": by_t["best_iterations"],
    }
    high = {f"{e:g}": m for e, m in zip(epsilons, mean) if e >= 1}
    low = {f"{e:g}": m for e, m in zip(epsilons, mean) if e <= 0.1}
    best = int(np.argmax(by_t["mean"]))
    evidence = [
        _fact("learning",
              "Con ε ≥ 1 la exactitud privada queda a menos de 2 puntos del modelo sin privacidad.",
              min(high.values()) >= curve["nonprivate"] - 0.02, nonprivate=curve["nonprivate"],
              private=high),
        _fact("learning",
              "Con ε ≤ 0,1 el modelo no se mueve de la clase mayoritaria (exactitud = línea base "
              "± 1 punto): el ruido obliga a pasos tan cortos que no aprende nada.",
              max(abs(m - curve["majority"]) for m in low.values()) <= 0.01, majority=curve["majority"],
              private=low),
        _fact("learning",
              f"Con ε = 0,5 fijo la exactitud contra el número de iteraciones tiene un óptimo interior "
              f"(T = {by_t['best_iterations']}): más iteraciones gastan ε/T cada una.",
              0 < best < len(grid) - 1, best_iterations=by_t["best_iterations"],
              accuracy_best=float(by_t["mean"][best]), accuracy_t1=float(by_t["mean"][0]),
              accuracy_t100=float(by_t["mean"][-1])),
    ]
    return results, evidence


STEPS = (
    ("census", describe_census),
    ("differencing_attack", measure_differencing_attack),
    ("hospital", work_hospital_example),
    ("averaging", measure_averaging),
    ("histogram", measure_histogram),
    ("clipping", find_clipping_elbow),
    ("private_bound", choose_bound_privately),
    ("mean", compute_private_mean),
    ("local_sensitivity", measure_local_sensitivity),
    ("gaussian", compute_gaussian_price),
    ("delta_rule", check_delta_rule),
    ("vector", find_vector_crossing),
    ("composition", compare_accountants),
    ("learning", train_private_models),
    ("federated", federated.run_lab_chapter),
)
"""Los pasos del laboratorio, en el orden de la clase: (nombre, función(censo, rng))."""


def run_lab(seed=0) -> dict:
    """Corre todo el laboratorio con ``seed`` y devuelve el contrato como diccionario.

    Claves: ``kind``, ``seed``, ``inputs``, ``results`` (un diccionario por
    paso de ``STEPS``), ``evidence`` (lista de hechos con ``result``,
    ``fact``, ``holds`` y ``values``) y ``limitations``. Solo contiene tipos de
    JSON, con los reales redondeados a 6 cifras significativas: la misma
    semilla da el mismo JSON byte a byte (``format_lab``).
    """
    seed = check_seed(seed)
    census = load_census()
    streams = np.random.SeedSequence(seed).spawn(len(STEPS))
    results = {}
    evidence = []
    for (name, step), stream in zip(STEPS, streams):
        step_results, step_evidence = step(census, np.random.default_rng(stream))
        results[name] = step_results
        evidence.extend(step_evidence)
    inputs = {
        "census": "dpdeck.data.load_census()",
        "people": len(census),
        "delta": DELTA,
        "rng": "numpy.random.SeedSequence(seed).spawn(pasos)",
        "steps": [name for name, _ in STEPS],
    }
    return _plain({
        "kind": KIND,
        "seed": seed,
        "inputs": inputs,
        "results": results,
        "evidence": evidence,
        "limitations": LIMITATIONS + federated.LAB_LIMITATIONS,
    })


def format_lab(result: dict) -> str:
    """El resultado como JSON estable: claves ordenadas, UTF-8 legible, sangría 2."""
    return json.dumps(result, sort_keys=True, ensure_ascii=False, indent=2)


def main(argv=None) -> int:
    """``python -m dpdeck.lab --seed N``: imprime el JSON del laboratorio."""
    parser = argparse.ArgumentParser(prog="python -m dpdeck.lab", description=main.__doc__)
    parser.add_argument("--seed", type=int, default=0, help="semilla (entero ≥ 0; por defecto 0)")
    args = parser.parse_args(argv)
    try:
        result = run_lab(args.seed)
    except ValueError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    sys.stdout.write(format_lab(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
