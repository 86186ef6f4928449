"""Los experimentos de la clase: cada uno definido una sola vez, con los parámetros de su diapositiva.

Cada experimento que dibuja una figura en la clase es aquí una función
``run_<nombre>`` que calcula sus resultados con las funciones de ``dpdeck``
(las consultas, los mecanismos, la contabilidad) y devuelve un diccionario.
Sus valores por defecto son los de la diapositiva; los experimentos con azar
reciben el generador (``rng``), y ``EXPERIMENTS`` guarda la semilla que usa la
diapositiva. Los usan:

* las celdas de las diapositivas, que muestran el algoritmo en pocas líneas
  (las pruebas de consistencia comprueban que la celda y el experimento dan
  lo mismo);
* el laboratorio (``dpdeck.lab``), que los corre con sus propias semillas y
  los convierte en evidencia;
* el banco de tiempos (``dpdeck.classroom.bench``), que mide cada experimento con su
  figura (``draw_experiment``).

Este módulo no importa matplotlib: la figura de cada experimento se dibuja
con ``dpdeck.figures`` (o ``dpdeck.figures_federated``, capítulo 6) solo al
llamar ``draw_experiment``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import accounting, federated, learning, queries
from ._checks import check_rng, describe
from .data import EDUCATION_LEVELS, KAREN_NAME, load_census
from .mechanisms import (
    gaussian_density,
    gaussian_sigma,
    laplace_density,
    laplace_mechanism,
    laplace_scale,
)

__all__ = [
    "ELBOW_BOUNDS",
    "Experiment",
    "EXPERIMENTS",
    "run_laplace_densities",
    "run_attack_through_noise",
    "run_averaging_error",
    "run_private_histogram",
    "run_clipping_elbow",
    "run_local_sensitivity_leak",
    "run_laplace_vs_gauss",
    "run_vector_noise",
    "run_accountants",
    "run_rdp_conversion",
    "run_gradient_norms",
    "run_privacy_utility",
    "run_iterations_cost",
    "run_hospital_example",
    "run_fedavg_rounds",
    "run_local_epochs",
    "run_privacy_units",
    "PRIVACY_UNITS_EPSILONS",
    "FIGURE_MODULES",
    "run_experiment",
    "draw_experiment",
]

#: Las cotas candidatas del codo del recorte: 41 pasos geométricos de 10² a 10⁶.
ELBOW_BOUNDS = np.geomspace(100, 1_000_000, 41)


# ---------------------------------------------------- capítulo 1: Laplace --


def run_laplace_densities(*, epsilons=(0.25, 0.5, 1, 2), sensitivity=1, x=None) -> dict:
    """Densidades de Laplace Lap(Δ/ε) para varios ε (diapositiva «ε determina la dispersión del ruido»).

    Devuelve ``x``, ``scales`` y ``densities`` (por ε) y ``mass_within_one``:
    la probabilidad exacta de que el ruido caiga a ±1 del valor verdadero,
    1 − e^{−1/b} (86 % con ε = 2).
    """
    x = np.linspace(-10, 10, 801) if x is None else np.asarray(x, dtype=float)
    scales = {epsilon: laplace_scale(sensitivity=sensitivity, epsilon=epsilon) for epsilon in epsilons}
    return {
        "x": x,
        "scales": scales,
        "densities": {epsilon: laplace_density(x, scale=scale) for epsilon, scale in scales.items()},
        "mass_within_one": {epsilon: float(-np.expm1(-1.0 / scale)) for epsilon, scale in scales.items()},
    }


def run_attack_through_noise(*, rng, epsilon=0.5, releases=2000) -> dict:
    """El ataque diferencial contra Karen, repetido ``releases`` veces con los dos conteos ruidosos.

    Devuelve los dos conteos exactos (``queries``), las restas publicadas
    (``differences``), su desviación estándar medida (``std``) y la teórica:
    cada conteo lleva Lap(b), de varianza 2b², así que la resta tiene
    desviación √(2·2b²) = 2b (``expected_std``, 4 con ε = 0,5).
    """
    rng = check_rng(rng)
    census = load_census()
    karen = census.name == KAREN_NAME
    exact = np.array([census.high_income.sum(), census.high_income[~karen].sum()], dtype=float)
    released = laplace_mechanism(np.tile(exact, (releases, 1)), sensitivity=1, epsilon=epsilon, rng=rng)
    differences = released[:, 0] - released[:, 1]
    return {
        "queries": exact,
        "differences": differences,
        "std": float(differences.std()),
        "expected_std": 2.0 * laplace_scale(sensitivity=1, epsilon=epsilon),
        "signal": float(exact[0] - exact[1]),
    }


# ------------------------------------------------- capítulo 2: propiedades --


def run_averaging_error(*, rng, count=42, epsilon=0.5, ks=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000),
                        trials=400) -> dict:
    """El ataque por repetición: error del promedio de k publicaciones del mismo conteo.

    Es ``queries.measure_averaging_error`` con los números de la diapositiva
    (el hospital: 42 pacientes, ε = 0,5 por publicación, 400 ensayos por k).
    """
    return queries.measure_averaging_error(count, ks=list(ks), epsilon=epsilon, rng=rng, trials=trials)


def run_private_histogram(*, rng, epsilon=0.5) -> dict:
    """El histograma educativo privado (composición paralela: un solo ε para las 16 barras)."""
    education = load_census().education
    true_counts = queries.histogram_counts(education, categories=EDUCATION_LEVELS)
    private = queries.private_histogram(education, categories=EDUCATION_LEVELS, epsilon=epsilon, rng=rng)
    return {
        "levels": EDUCATION_LEVELS,
        "true_counts": true_counts,
        "private_counts": private,
        "mean_abs_error": float(np.abs(private - true_counts).mean()),
    }


# ------------------------------------------------ capítulo 3: sensibilidad --


def run_clipping_elbow(*, epsilon=0.01, bounds=ELBOW_BOUNDS) -> dict:
    """El codo del recorte de la suma de ganancias de capital: sesgo, ruido y error esperado exactos.

    Es ``queries.expected_clipping_error`` sobre el censo, más el máximo de los
    datos (``max_value``) y el error sin recortar a nadie
    (``no_clipping_error``, la menor cota de la rejilla que no recorta). Con
    ε = 0,01 el codo cae en b ≈ 15 849 y ahorra un 71 % del error frente a no
    recortar; con ε = 0,1, en 79 433 y solo un 4 %.
    """
    gains = load_census().capital_gain
    elbow = queries.expected_clipping_error(gains, bounds=bounds, epsilon=epsilon)
    no_clipping = elbow["bounds"] >= gains.max()
    elbow["max_value"] = float(gains.max())
    elbow["no_clipping_error"] = float(elbow["total"][no_clipping].min()) if no_clipping.any() else None
    return elbow


def run_local_sensitivity_leak(*, rng, epsilon=1.0, extreme_value=99_999, below=10_000) -> dict:
    """Ruido calibrado a la sensibilidad local: D (ganancias < ``below``) contra D más un extremo.

    Dos publicaciones de la misma suma en cada base (``queries.measure_local_sensitivity_leak``):
    su resta solo ve la escala del ruido.
    """
    gains = load_census().capital_gain
    leak = queries.measure_local_sensitivity_leak(gains[gains < below], extreme_value=extreme_value,
                                                  epsilon=epsilon, rng=rng)
    leak["extreme_value"] = float(extreme_value)
    return leak


# ------------------------------------------ capítulo 4: DP aproximada --


def run_laplace_vs_gauss(*, epsilon=0.5, delta=1e-5, x=None, window=2.0) -> dict:
    """Laplace contra Gauss en una consulta escalar (Δ₁ = Δ₂ = 1), con el mismo ε.

    Devuelve las densidades y la masa exacta a ±``window`` del valor
    verdadero: 1 − e^{−w/b} para Laplace y erf(w/(σ√2)) para Gauss (63 % y
    16 % con ε = 0,5, δ = 10⁻⁵, w = 2).
    """
    x = np.linspace(-30, 30, 1201) if x is None else np.asarray(x, dtype=float)
    scale = laplace_scale(sensitivity=1, epsilon=epsilon)
    sigma = gaussian_sigma(sensitivity=1, epsilon=epsilon, delta=delta)
    return {
        "x": x,
        "laplace": laplace_density(x, scale=scale),
        "gauss": gaussian_density(x, sigma=sigma),
        "scale": scale,
        "sigma": sigma,
        "laplace_mass": 1.0 - math.exp(-window / scale),
        "gauss_mass": math.erf(window / (sigma * math.sqrt(2.0))),
    }


def run_vector_noise(*, epsilon=0.5, delta=1e-5, ks=None) -> dict:
    """Ruido por componente de Laplace (Δ₁ = k) y de Gauss (Δ₂ = √k) para k = 1 … 40, y el cruce."""
    ks = np.arange(1, 41) if ks is None else np.asarray(ks)
    noise = queries.laplace_vs_gaussian_vector_error(ks, epsilon=epsilon, delta=delta)
    gauss_wins = noise["gauss"] < noise["laplace"]
    noise["crossing"] = int(ks[np.argmax(gauss_wins)]) if gauss_wins.any() else None
    return noise


def run_accountants(*, sigma=20, delta=1e-5, sensitivity=1, ks=None) -> dict:
    """Las tres contabilidades del mismo gaussiano repetido k veces, de k = 1 a 10⁴.

    Devuelve ``ks`` y las curvas ``secuencial``, ``avanzada`` y ``renyi`` (ε
    total para cada k), más ``exact``: el ε verdadero del mecanismo en el último
    k (``accounting.gaussian_exact_epsilon``), por debajo de las tres.
    """
    ks = np.unique(np.geomspace(1, 10_000, 30).astype(int)) if ks is None else np.asarray(ks)
    noise = {"sigma": sigma, "delta": delta, "sensitivity": sensitivity}
    curves = {
        "secuencial": [accounting.gaussian_sequential_epsilon(steps=k, **noise) for k in ks.tolist()],
        "avanzada": [accounting.gaussian_advanced_epsilon(steps=k, **noise) for k in ks.tolist()],
        "renyi": [accounting.gaussian_rdp_epsilon(steps=k, **noise)[0] for k in ks.tolist()],
    }
    return {
        "ks": ks,
        "curves": curves,
        "exact": accounting.gaussian_exact_epsilon(delta=delta, sigma=sigma, sensitivity=sensitivity,
                                                   steps=int(ks[-1])),
    }


def run_rdp_conversion(*, sigma=20, delta=1e-5, steps=10_000, alphas=None) -> dict:
    """Las dos piezas de la conversión RDP → (ε, δ) sobre una rejilla de α, y el óptimo exacto."""
    alphas = np.linspace(1.2, 6, 481) if alphas is None else np.asarray(alphas, dtype=float)
    epsilon, best_alpha = accounting.gaussian_rdp_epsilon(sigma=sigma, steps=steps, delta=delta)
    return {
        "alphas": alphas,
        "rdp": steps * accounting.gaussian_rdp(alpha=alphas, sigma=sigma),
        "conversion": np.log(1 / delta) / (alphas - 1),
        "epsilon": epsilon,
        "best_alpha": best_alpha,
        "sequential": accounting.gaussian_sequential_epsilon(sigma=sigma, steps=steps, delta=delta),
    }


# ------------------------------------------- capítulo 5: aprendizaje --


def run_gradient_norms(*, clip_norm=1.0) -> dict:
    """Normas L2 de los gradientes por persona en el punto de partida público, y a quién recorta C."""
    census = load_census()
    X, y = learning.make_dataset(census)
    norms = learning.compute_gradient_norms(learning.make_initial_theta(), X, y)
    clipped = norms > clip_norm
    return {
        "norms": norms,
        "clip_norm": clip_norm,
        "clipped_fraction": float(clipped.mean()),
        "high_income_share_of_clipped": float(y[clipped].mean()) if clipped.any() else 0.0,
        "clipped_share_of_high_income": float(clipped[y == 1].mean()),
    }


def run_privacy_utility(*, rng, epsilons=None, repeats=10) -> dict:
    """Exactitud del descenso privado contra ε (T = 10, C = 1, δ = 10⁻⁵), ``repeats`` modelos por ε."""
    epsilons = np.geomspace(0.02, 8, 12) if epsilons is None else np.asarray(epsilons, dtype=float)
    X, y = learning.make_dataset(load_census())
    return learning.privacy_utility_curve(X, y, epsilons=epsilons, rng=rng, repeats=repeats)


def run_iterations_cost(*, rng, epsilon=0.5, iterations_grid=(1, 2, 3, 5, 8, 13, 20, 30, 50, 80, 130, 200),
                        repeats=10) -> dict:
    """Exactitud del descenso privado contra el número de iteraciones T, con ε fijo."""
    X, y = learning.make_dataset(load_census())
    return learning.iterations_curve(X, y, epsilon=epsilon, iterations_grid=list(iterations_grid), rng=rng,
                                     repeats=repeats)


# --------------------------------------- capítulo 6: aprendizaje federado --


def run_hospital_example(*, count=42, sensitivity=1, epsilon=0.5, outputs=None) -> dict:
    """El ejemplo del hospital de la página de clase, con todos sus números (diapositiva ``hospital-completo``).

    Lap(b) con b = Δf/ε: la densidad de la salida con la persona X (centrada
    en f(D) = ``count``) y sin ella (en f(D′) = ``count`` − Δf), su razón, que
    nunca pasa de e^ε (``max_ratio``), el error medio E|Lap(b)| = b y su parte
    del conteo (``relative_error``, 2/42 ≈ 4,8 %), y lo que gastan tres
    consultas (``three_queries``: 3ε = 1,5). Las salidas van de f(D) − 12 a
    f(D) + 12 en pasos de 1/4, que pasan por los dos quiebres de la razón.
    """
    scale = laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    outputs = np.linspace(count - 12, count + 12, 97) if outputs is None else np.asarray(outputs, dtype=float)
    with_x = laplace_density(outputs, loc=count, scale=scale)
    without_x = laplace_density(outputs, loc=count - sensitivity, scale=scale)
    return {
        "outputs": outputs,
        "with_x": with_x,
        "without_x": without_x,
        "scale": scale,
        "max_ratio": float(np.max(with_x / without_x)),
        "relative_error": scale / count,
        "three_queries": accounting.sequential_composition([epsilon] * 3),
        "count": count,
        "epsilon": epsilon,
    }


def run_fedavg_rounds(*, rng, clients=16, client_fraction=0.25, local_epochs=5, rounds=20, repeats=5) -> dict:
    """FedAvg ronda a ronda con reparto IID y con un hospital por nivel educativo (diapositiva ``fedavg-no-iid``).

    Es ``federated.compare_splits`` con los números de la diapositiva: 16
    clientes IID, C = 0,25, E = 5, 20 rondas y 5 corridas.
    """
    return federated.compare_splits(load_census(), clients=clients, client_fraction=client_fraction,
                                    local_epochs=local_epochs, rounds=rounds, rng=rng, repeats=repeats)


def run_local_epochs(*, rng, epochs_grid=(1, 2, 5, 10), within=0.005, max_rounds=30) -> dict:
    """Rondas hasta medio punto del modelo centralizado para cada E (diapositiva ``fedavg-epocas``)."""
    return federated.compare_local_epochs(load_census(), epochs_grid=list(epochs_grid), within=within,
                                          max_rounds=max_rounds, rng=rng)


PRIVACY_UNITS_EPSILONS = (0.1, 0.3, 1, 3, 10)
"""Los ε de la diapositiva ``dp-agregado``: de casi nada de señal a casi nada de ruido."""


def run_privacy_units(*, rng, epsilons=PRIVACY_UNITS_EPSILONS, repeats=3) -> dict:
    """DP-FedAvg protegiendo personas, clínicas de 10 o hospitales, contra ε (diapositiva ``dp-agregado``).

    Es ``federated.compare_privacy_units`` con los números de la diapositiva:
    10 rondas, δ = 10⁻⁵ y 3 modelos por ε y por unidad.
    """
    return federated.compare_privacy_units(load_census(), epsilons=list(epsilons), rng=rng, repeats=repeats)


# ------------------------------------------------------------- registro --


@dataclass(frozen=True)
class Experiment:
    """Un experimento de la clase: cómo correrlo, con qué semilla, en qué celda y con qué figura."""

    run: Callable[..., dict]
    cell: str
    seed: int | None
    plot: str
    draw: Callable
    figures: str = "figures"
    """El módulo de ``dpdeck`` que tiene su ``plot``: ``figures`` (capítulos 1–5) o ``figures_federated``."""


def _draw_laplace_densities(figures, r):
    return figures.plot_laplace_densities(r["x"], r["densities"])


def _draw_attack_through_noise(figures, r):
    return figures.plot_attack_through_noise(r["differences"], signal=r["signal"])


def _draw_averaging_error(figures, r):
    return figures.plot_averaging_error(r["ks"], r["error"], expected=r["expected"])


def _draw_private_histogram(figures, r):
    return figures.plot_private_histogram(r["levels"], r["true_counts"], r["private_counts"])


def _draw_clipping_elbow(figures, r):
    return figures.plot_clipping_elbow(r["bounds"], r["bias"], r["noise"], r["total"])


def _draw_local_sensitivity_leak(figures, r):
    return figures.plot_local_sensitivity_leak(r["scale_without"], r["scale_with"], threshold=r["threshold"])


def _draw_laplace_vs_gauss(figures, r):
    return figures.plot_laplace_vs_gauss(r["x"], r["laplace"], r["gauss"])


def _draw_vector_noise(figures, r):
    return figures.plot_vector_noise(r["k"], r["laplace"], r["gauss"], crossing=r["crossing"])


def _draw_accountants(figures, r):
    return figures.plot_accountants(r["ks"], r["curves"])


def _draw_rdp_conversion(figures, r):
    return figures.plot_rdp_conversion(r["alphas"], r["rdp"], r["conversion"])


def _draw_gradient_norms(figures, r):
    return figures.plot_gradient_norms(r["norms"], clip_norm=r["clip_norm"])


def _draw_privacy_utility(figures, r):
    return figures.plot_privacy_utility(r["epsilons"], r["accuracies"], nonprivate=r["nonprivate"],
                                        majority=r["majority"])


def _draw_iterations_cost(figures, r):
    return figures.plot_iterations_cost(r["iterations"], r["accuracies"], epsilon=r["epsilon"],
                                        majority=r["majority"])


def _draw_hospital_example(figures, r):
    return figures.plot_hospital_example(r["outputs"], r["with_x"], r["without_x"], epsilon=r["epsilon"],
                                         count=r["count"])


def _draw_fedavg_rounds(figures, r):
    return figures.plot_fedavg_rounds(r["rounds"], r["iid"], r["non_iid"], nonprivate=r["nonprivate"],
                                      majority=r["majority"])


def _draw_local_epochs(figures, r):
    return figures.plot_local_epochs(r["epochs"], r["rounds_iid"], r["rounds_non_iid"], max_rounds=r["max_rounds"],
                                     target=r["target"])


def _draw_privacy_units(figures, r):
    curves = {"personas (cap. 5)": r["persons"], "clínicas de 10": r["clinics"], "16 hospitales": r["hospitals"]}
    return figures.plot_privacy_units(r["epsilons"], curves, nonprivate=r["nonprivate"], majority=r["majority"])


FIGURE_MODULES = ("figures", "figures_federated")
"""Los módulos de figuras de ``dpdeck``: cada ``plot_*`` de ellos dibuja un experimento de ``EXPERIMENTS``."""

EXPERIMENTS = {
    "laplace_densities": Experiment(run_laplace_densities, "densidades-laplace", None,
                                    "plot_laplace_densities", _draw_laplace_densities),
    "attack_through_noise": Experiment(run_attack_through_noise, "ataque-laplace", 3,
                                       "plot_attack_through_noise", _draw_attack_through_noise),
    "averaging_error": Experiment(run_averaging_error, "promediar-publicaciones", 8,
                                  "plot_averaging_error", _draw_averaging_error),
    "private_histogram": Experiment(run_private_histogram, "histograma-educacion", 10,
                                    "plot_private_histogram", _draw_private_histogram),
    "clipping_elbow": Experiment(run_clipping_elbow, "codo", None,
                                 "plot_clipping_elbow", _draw_clipping_elbow),
    "local_sensitivity_leak": Experiment(run_local_sensitivity_leak, "sensibilidad-local", 17,
                                         "plot_local_sensitivity_leak", _draw_local_sensitivity_leak),
    "laplace_vs_gauss": Experiment(run_laplace_vs_gauss, "laplace-gauss-escalar", None,
                                   "plot_laplace_vs_gauss", _draw_laplace_vs_gauss),
    "vector_noise": Experiment(run_vector_noise, "laplace-gauss-vectorial", None,
                               "plot_vector_noise", _draw_vector_noise),
    "accountants": Experiment(run_accountants, "tres-contabilidades", None,
                              "plot_accountants", _draw_accountants),
    "rdp_conversion": Experiment(run_rdp_conversion, "cuanto-se-gana", None,
                                 "plot_rdp_conversion", _draw_rdp_conversion),
    "gradient_norms": Experiment(run_gradient_norms, "recorte-gradientes", None,
                                 "plot_gradient_norms", _draw_gradient_norms),
    "privacy_utility": Experiment(run_privacy_utility, "privacidad-utilidad", 0,
                                  "plot_privacy_utility", _draw_privacy_utility),
    "iterations_cost": Experiment(run_iterations_cost, "costo-iterar", 0,
                                  "plot_iterations_cost", _draw_iterations_cost),
    "hospital_example": Experiment(run_hospital_example, "hospital-completo", None,
                                   "plot_hospital_example", _draw_hospital_example, "figures_federated"),
    "fedavg_rounds": Experiment(run_fedavg_rounds, "fedavg-no-iid", 0,
                                "plot_fedavg_rounds", _draw_fedavg_rounds, "figures_federated"),
    "local_epochs": Experiment(run_local_epochs, "fedavg-epocas", 0,
                               "plot_local_epochs", _draw_local_epochs, "figures_federated"),
    "privacy_units": Experiment(run_privacy_units, "dp-agregado", 0,
                                "plot_privacy_units", _draw_privacy_units, "figures_federated"),
}
"""Cada experimento de la clase por nombre: su función, su celda, la semilla de la celda y su figura."""


def run_experiment(name: str) -> dict:
    """Corre el experimento ``name`` exactamente como su diapositiva (misma semilla, mismos parámetros)."""
    if name not in EXPERIMENTS:
        raise ValueError(f"no hay un experimento llamado {describe(name)}; hay: {', '.join(EXPERIMENTS)}")
    experiment = EXPERIMENTS[name]
    if experiment.seed is None:
        return experiment.run()
    return experiment.run(rng=np.random.default_rng(experiment.seed))


def draw_experiment(name: str):
    """Corre el experimento ``name`` como su diapositiva y devuelve su figura (importa matplotlib)."""
    import importlib

    experiment = EXPERIMENTS[name]
    figures = importlib.import_module(f"{__package__}.{experiment.figures}")
    return experiment.draw(figures, run_experiment(name))
