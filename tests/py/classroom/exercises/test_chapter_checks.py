"""Tests of the chapters' checks (dpdeck.classroom.exercises): each accepts right answers and rejects the typical wrong ones.

A check that accepts a wrong answer is a failed test. Each exercise has its
right implementations (written differently: by hand, vectorised, through
dpdeck) and the mistakes students make, each with the words the verdict must
say about it. Statistical checks are also run with other seeds: a correct
answer must pass them all (the tolerance is five standard errors of
dpdeck.classroom.exercises.toolkit).
"""

from __future__ import annotations

import re
import math

import numpy as np
import pytest

from dpdeck import mechanisms
from dpdeck.classroom.exercises import CHECKS, Verdict, check, toolkit


def failing_texts(verdict: Verdict) -> str:
    return " ".join(finding.text for finding in verdict.findings if not finding.ok)


# ----------------------------------------------------------- capítulo 1 --


def laplace_right(valor, *, sensibilidad, epsilon, rng):
    return valor + rng.laplace(0.0, sensibilidad / epsilon)


def laplace_through_dpdeck(valor, *, sensibilidad, epsilon, rng):
    return mechanisms.laplace_mechanism(valor, sensitivity=sensibilidad, epsilon=epsilon, rng=rng)


def laplace_inverse_scale(valor, *, sensibilidad, epsilon, rng):
    return valor + rng.laplace(0.0, epsilon / sensibilidad)


def laplace_without_sensitivity(valor, *, sensibilidad, epsilon, rng):
    return valor + rng.laplace(0.0, 1 / epsilon)


def laplace_times_epsilon(valor, *, sensibilidad, epsilon, rng):
    return valor + rng.laplace(0.0, sensibilidad * epsilon)


def laplace_gaussian_same_spread(valor, *, sensibilidad, epsilon, rng):
    # Same mean absolute error as Lap(b): only the shape of the tail tells them apart.
    return valor + rng.normal(0.0, sensibilidad / epsilon * math.sqrt(math.pi / 2))


def laplace_gaussian(valor, *, sensibilidad, epsilon, rng):
    return valor + rng.normal(0.0, sensibilidad / epsilon)


def laplace_global_rng(valor, *, sensibilidad, epsilon, rng):
    return valor + np.random.laplace(0.0, sensibilidad / epsilon)


def laplace_no_noise(valor, *, sensibilidad, epsilon, rng):
    return valor


def laplace_only_noise(valor, *, sensibilidad, epsilon, rng):
    return rng.laplace(0.0, sensibilidad / epsilon)


def laplace_centred_on_value(valor, *, sensibilidad, epsilon, rng):
    return valor + rng.laplace(valor, sensibilidad / epsilon)


def laplace_returns_text(valor, *, sensibilidad, epsilon, rng):
    return f"{valor + rng.laplace(0.0, sensibilidad / epsilon):.1f}"


def laplace_raises(valor, *, sensibilidad, epsilon, rng):
    raise ZeroDivisionError("división por cero")


def laplace_positional(valor, sensibilidad, epsilon, rng):   # keyword-only is the task, positional is fine too
    return valor + rng.laplace(0.0, sensibilidad / epsilon)


LAPLACE_WRONG = [
    (laplace_inverse_scale, "Parece ε/Δf"),
    (laplace_without_sensitivity, "Parece 1/ε"),
    (laplace_times_epsilon, "Parece Δf·ε"),
    (laplace_gaussian_same_spread, "no es la de Laplace"),
    (laplace_gaussian, "Parece ruido gaussiano"),
    (laplace_global_rng, "no saca su azar del `rng`"),
    (laplace_no_noise, "publica siempre lo mismo"),
    (laplace_only_noise, "¿devuelves solo el ruido?"),
    (laplace_centred_on_value, "centrado en 0"),
    (laplace_returns_text, "se espera un número"),
    (laplace_raises, "lanzó ZeroDivisionError"),
]


@pytest.mark.parametrize("function", [laplace_right, laplace_through_dpdeck, laplace_positional])
def test_laplace_accepts_a_right_mechanism(function):
    verdict = check("laplace-escala", {"mecanismo_laplace": function})
    assert verdict.passed, verdict


@pytest.mark.parametrize("function, says", LAPLACE_WRONG, ids=[f.__name__ for f, _ in LAPLACE_WRONG])
def test_laplace_rejects_the_typical_mistakes(function, says):
    verdict = check("laplace-escala", {"mecanismo_laplace": function})
    assert not verdict.passed
    assert says in failing_texts(verdict)


def test_laplace_needs_the_function():
    verdict = check("laplace-escala", {"mecanismo": laplace_right})
    assert not verdict.passed and "No encuentro la función `mecanismo_laplace`" in failing_texts(verdict)
    verdict = check("laplace-escala", {"mecanismo_laplace": 3})
    assert not verdict.passed and "no es una función" in failing_texts(verdict)


@pytest.mark.parametrize("seed", range(12))
def test_a_right_answer_passes_every_statistical_check_whatever_the_seed(monkeypatch, seed):
    # Five standard errors: a right answer fails with probability < 10⁻⁶ per measure.
    monkeypatch.setattr(toolkit, "SEED", 1000 + 97 * seed)
    assert check("laplace-escala", {"mecanismo_laplace": laplace_right}).passed
    assert check("presupuesto", {"publicar": budget_right}).passed
    assert check("suma-recortada", {"suma_privada": clipped_sum_right}).passed


# ----------------------------------------------------------- capítulo 2 --


def budget_right(conteos, *, epsilon_total, rng):
    por_consulta = epsilon_total / len(conteos)
    return np.array([c + rng.laplace(0.0, 1 / por_consulta) for c in conteos])


def budget_through_dpdeck(conteos, *, epsilon_total, rng):
    return mechanisms.laplace_mechanism(np.asarray(conteos, dtype=float), sensitivity=1,
                                        epsilon=epsilon_total / len(conteos), rng=rng)


def budget_whole_budget_each(conteos, *, epsilon_total, rng):
    return np.asarray(conteos) + rng.laplace(0.0, 1 / epsilon_total, size=len(conteos))


def budget_divides_the_scale(conteos, *, epsilon_total, rng):
    return np.asarray(conteos) + rng.laplace(0.0, 1 / (epsilon_total * len(conteos)), size=len(conteos))


def budget_uneven(conteos, *, epsilon_total, rng):
    # Spends exactly the budget, but not in equal parts: half on the first count.
    k = len(conteos)
    shares = np.array([0.5] + [0.5 / (k - 1)] * (k - 1)) * epsilon_total
    return np.asarray(conteos) + rng.laplace(0.0, 1 / shares)


def budget_one_noise_for_all(conteos, *, epsilon_total, rng):
    return np.asarray(conteos) + rng.laplace(0.0, len(conteos) / epsilon_total)


def budget_total_only(conteos, *, epsilon_total, rng):
    return float(np.sum(conteos) + rng.laplace(0.0, len(conteos) / epsilon_total))


BUDGET_WRONG = [
    (budget_whole_budget_each, "se suman (composición secuencial)"),
    (budget_divides_the_scale, "más que el presupuesto"),
    (budget_uneven, "repartiendo en partes iguales"),
    (budget_total_only, "una publicación por consulta"),
    # Each count alone looks right and the spend adds up, but their differences are published exactly.
    (budget_one_noise_for_all, "comparten el ruido"),
]


@pytest.mark.parametrize("function", [budget_right, budget_through_dpdeck])
def test_budget_accepts_an_even_split(function):
    verdict = check("presupuesto", {"publicar": function})
    assert verdict.passed, verdict


@pytest.mark.parametrize("function, says", BUDGET_WRONG, ids=[f.__name__ for f, _ in BUDGET_WRONG])
def test_budget_rejects_overspending_and_uneven_splits(function, says):
    verdict = check("presupuesto", {"publicar": function})
    assert not verdict.passed
    assert says in failing_texts(verdict)


# ----------------------------------------------------------- capítulo 3 --


def clipped_sum_right(valores, *, cota, epsilon, rng):
    recortados = np.clip(valores, 0, cota)
    return float(recortados.sum() + rng.laplace(0.0, cota / epsilon))


def clipped_sum_through_dpdeck(valores, *, cota, epsilon, rng):
    from dpdeck.queries import private_clipped_sum
    return private_clipped_sum(valores, bound=cota, epsilon=epsilon, rng=rng)


def clipped_sum_without_clipping(valores, *, cota, epsilon, rng):
    return float(np.sum(valores) + rng.laplace(0.0, cota / epsilon))


def clipped_sum_clips_the_sum(valores, *, cota, epsilon, rng):
    return float(min(np.sum(valores), cota) + rng.laplace(0.0, cota / epsilon))


def clipped_sum_only_from_above(valores, *, cota, epsilon, rng):
    return float(np.minimum(valores, cota).sum() + rng.laplace(0.0, cota / epsilon))


def clipped_sum_count_sensitivity(valores, *, cota, epsilon, rng):
    return float(np.clip(valores, 0, cota).sum() + rng.laplace(0.0, 1 / epsilon))


def clipped_sum_local_sensitivity(valores, *, cota, epsilon, rng):
    recortados = np.clip(valores, 0, cota)
    return float(recortados.sum() + rng.laplace(0.0, recortados.max() / epsilon))


def clipped_sum_inverse_scale(valores, *, cota, epsilon, rng):
    return float(np.clip(valores, 0, cota).sum() + rng.laplace(0.0, epsilon / cota))


CLIPPED_SUM_WRONG = [
    (clipped_sum_without_clipping, "no recortas"),
    (clipped_sum_clips_the_sum, "recortas la suma, no a cada persona"),
    (clipped_sum_only_from_above, "recortas solo por arriba"),
    (clipped_sum_count_sensitivity, "Parece 1/ε"),
    (clipped_sum_local_sensitivity, "sensibilidad local"),
    (clipped_sum_inverse_scale, "Parece ε/cota"),
]


@pytest.mark.parametrize("function", [clipped_sum_right, clipped_sum_through_dpdeck])
def test_clipped_sum_accepts_per_person_clipping_and_noise_of_the_bound(function):
    verdict = check("suma-recortada", {"suma_privada": function})
    assert verdict.passed, verdict


@pytest.mark.parametrize("function, says", CLIPPED_SUM_WRONG, ids=[f.__name__ for f, _ in CLIPPED_SUM_WRONG])
def test_clipped_sum_rejects_the_typical_mistakes(function, says):
    verdict = check("suma-recortada", {"suma_privada": function})
    assert not verdict.passed
    assert says in failing_texts(verdict)


# ----------------------------------------------------------- capítulo 4 --


def sigma_right(*, sensibilidad, epsilon, delta):
    if epsilon >= 1:
        raise ValueError("la fórmula clásica exige ε < 1")
    return sensibilidad * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def sigma_through_dpdeck(*, sensibilidad, epsilon, delta):
    return mechanisms.gaussian_sigma(sensitivity=sensibilidad, epsilon=epsilon, delta=delta)


def sigma_without_refusal(*, sensibilidad, epsilon, delta):
    return sensibilidad * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


def sigma_log_one_over_delta(*, sensibilidad, epsilon, delta):
    if epsilon >= 1:
        raise ValueError("ε < 1")
    return sensibilidad * math.sqrt(2 * math.log(1 / delta)) / epsilon


def sigma_without_root(*, sensibilidad, epsilon, delta):
    if epsilon >= 1:
        raise ValueError("ε < 1")
    return sensibilidad * 2 * math.log(1.25 / delta) / epsilon


def sigma_laplace_scale(*, sensibilidad, epsilon, delta):
    if epsilon >= 1:
        raise ValueError("ε < 1")
    return sensibilidad / epsilon


def sigma_refuses_with_another_error(*, sensibilidad, epsilon, delta):
    assert epsilon < 1
    return sensibilidad * math.sqrt(2 * math.log(1.25 / delta)) / epsilon


SIGMA_WRONG = [
    ({"delta_2": 16, "sigma_gaussiano": sigma_right}, "es Δ₁"),
    ({"delta_2": 4, "sigma_gaussiano": sigma_without_refusal}, "lanza un ValueError"),
    ({"delta_2": 4, "sigma_gaussiano": sigma_log_one_over_delta}, "¿Usaste ln(1/δ)?"),
    ({"delta_2": 4, "sigma_gaussiano": sigma_without_root}, "Falta la raíz cuadrada"),
    ({"delta_2": 4, "sigma_gaussiano": sigma_laplace_scale}, "la escala de Laplace"),
    ({"delta_2": 4, "sigma_gaussiano": sigma_refuses_with_another_error}, "se espera ValueError"),
    ({"delta_2": 2, "sigma_gaussiano": sigma_right}, "norma L2"),
    ({"sigma_gaussiano": sigma_right}, "No encuentro `delta_2`"),
]


@pytest.mark.parametrize("function", [sigma_right, sigma_through_dpdeck])
def test_gaussian_sigma_accepts_the_classic_calibration(function):
    verdict = check("sigma-gaussiano", {"delta_2": 4, "sigma_gaussiano": function})
    assert verdict.passed, verdict
    assert check("sigma-gaussiano", {"delta_2": math.sqrt(16), "sigma_gaussiano": function}).passed


@pytest.mark.parametrize("defined, says", SIGMA_WRONG, ids=[says for _, says in SIGMA_WRONG])
def test_gaussian_sigma_rejects_the_typical_mistakes(defined, says):
    verdict = check("sigma-gaussiano", defined)
    assert not verdict.passed
    assert says in failing_texts(verdict)


# ----------------------------------------------------------- capítulo 5 --


def clip_right(gradientes, *, C):
    normas = np.linalg.norm(gradientes, axis=1, keepdims=True)
    return gradientes * np.minimum(1.0, C / np.maximum(normas, 1e-12))


def clip_in_a_loop(gradientes, *, C):
    filas = []
    for g in gradientes:
        norma = float(np.sqrt(np.sum(g ** 2)))
        filas.append(g * C / norma if norma > C else g)
    return np.array(filas)


def clip_through_dpdeck(gradientes, *, C):
    from dpdeck.learning import clip_gradients
    return clip_gradients(gradientes, clip_norm=C)


def clip_the_sum(gradientes, *, C):
    suma = gradientes.sum(axis=0)
    return suma * min(1.0, C / np.linalg.norm(suma))


def clip_each_coordinate(gradientes, *, C):
    return np.clip(gradientes, -C, C)


def clip_normalize_everyone(gradientes, *, C):
    normas = np.linalg.norm(gradientes, axis=1, keepdims=True)
    return gradientes * C / np.maximum(normas, 1e-12)


def clip_divides_by_zero(gradientes, *, C):
    normas = np.linalg.norm(gradientes, axis=1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return gradientes * np.minimum(1.0, C / normas) * (normas / normas)


def clip_to_a_fixed_bound(gradientes, *, C):
    normas = np.linalg.norm(gradientes, axis=1, keepdims=True)
    return gradientes * np.minimum(1.0, 1.0 / np.maximum(normas, 1e-12))


def clip_squared_norm(gradientes, *, C):
    normas = np.sum(gradientes ** 2, axis=1, keepdims=True)   # forgot the square root
    return gradientes * np.minimum(1.0, C / np.maximum(normas, 1e-12))


CLIP_WRONG = [
    (clip_the_sum, "recortas la suma"),
    (clip_each_coordinate, "Recortas cada coordenada"),
    (clip_normalize_everyone, "el recorte solo achica"),
    (clip_divides_by_zero, "divides por ‖g‖ = 0"),
    (clip_to_a_fixed_bound, "usa el C que recibe"),
    (clip_squared_norm, "norma"),
]


@pytest.mark.parametrize("function", [clip_right, clip_in_a_loop, clip_through_dpdeck])
def test_clipping_accepts_per_person_clipping(function):
    verdict = check("recorte-por-persona", {"recortar": function})
    assert verdict.passed, verdict


@pytest.mark.parametrize("function, says", CLIP_WRONG, ids=[f.__name__ for f, _ in CLIP_WRONG])
def test_clipping_rejects_the_typical_mistakes(function, says):
    verdict = check("recorte-por-persona", {"recortar": function})
    assert not verdict.passed
    assert says in failing_texts(verdict)


def test_clipping_in_place_still_passes_with_a_remark():
    def clip_in_place(gradientes, *, C):
        normas = np.linalg.norm(gradientes, axis=1, keepdims=True)
        gradientes *= np.minimum(1.0, C / np.maximum(normas, 1e-12))
        return gradientes

    verdict = check("recorte-por-persona", {"recortar": clip_in_place})
    assert verdict.passed
    assert "modifica el arreglo que recibe" in str(verdict)


# ----------------------------------------------------------- capítulo 6 --


def fedavg_right(actualizaciones, tamanos):
    pesos = np.asarray(tamanos) / np.sum(tamanos)
    return pesos @ actualizaciones


def fedavg_in_a_loop(actualizaciones, tamanos):
    n = sum(tamanos)
    total = np.zeros(actualizaciones.shape[1])
    for delta, n_k in zip(actualizaciones, tamanos):
        total += (n_k / n) * delta
    return total


def fedavg_plain_mean(actualizaciones, tamanos):
    return actualizaciones.mean(axis=0)


def fedavg_weighted_sum(actualizaciones, tamanos):
    return np.asarray(tamanos) @ actualizaciones


def fedavg_by_clients(actualizaciones, tamanos):
    return np.asarray(tamanos) @ actualizaciones / len(tamanos)


def fedavg_one_row_each(actualizaciones, tamanos):
    return actualizaciones * (np.asarray(tamanos) / np.sum(tamanos))[:, None]


def fedavg_inverse_weights(actualizaciones, tamanos):
    pesos = 1 / np.asarray(tamanos, dtype=float)
    return pesos / pesos.sum() @ actualizaciones


FEDAVG_WRONG = [
    (fedavg_plain_mean, "Es el promedio simple"),
    (fedavg_weighted_sum, "falta dividir por n"),
    (fedavg_by_clients, "Divides por el número de clientes"),
    (fedavg_one_row_each, "una fila por cliente"),
    (fedavg_inverse_weights, "no es Σ (n_k/n)·Δ_k"),
]


@pytest.mark.parametrize("function", [fedavg_right, fedavg_in_a_loop])
def test_fedavg_accepts_the_weighted_average(function):
    verdict = check("promedio-fedavg", {"promediar": function})
    assert verdict.passed, verdict


@pytest.mark.parametrize("function, says", FEDAVG_WRONG, ids=[f.__name__ for f, _ in FEDAVG_WRONG])
def test_fedavg_rejects_the_typical_mistakes(function, says):
    verdict = check("promedio-fedavg", {"promediar": function})
    assert not verdict.passed
    assert says in failing_texts(verdict)


def masks_right(deltas, *, rng):
    clients, size = deltas.shape
    sent = deltas.copy()
    for i in range(clients):
        for j in range(i + 1, clients):
            mask = rng.uniform(-1000, 1000, size)
            sent[i] += mask
            sent[j] -= mask
    return sent


def masks_as_a_matrix(deltas, *, rng):
    # All pairs at once: M[i, j] = m_ij above the diagonal, −m_ji below it.
    clients, size = deltas.shape
    masks = rng.uniform(-1000, 1000, (clients, clients, size))
    pairs = np.triu(np.ones((clients, clients)), 1)[..., None] * masks
    return deltas + pairs.sum(axis=1) - pairs.sum(axis=0)


def masks_none(deltas, *, rng):
    rng.uniform()
    return deltas.copy()


def masks_only_added(deltas, *, rng):
    sent = deltas.copy()
    for i in range(len(deltas)):
        for j in range(i + 1, len(deltas)):
            sent[i] += rng.uniform(-1000, 1000, deltas.shape[1])
    return sent


def masks_added_to_both(deltas, *, rng):
    sent = deltas.copy()
    for i in range(len(deltas)):
        for j in range(i + 1, len(deltas)):
            mask = rng.uniform(-1000, 1000, deltas.shape[1])
            sent[i] += mask
            sent[j] += mask
    return sent


def masks_one_for_all(deltas, *, rng):
    return deltas + rng.uniform(-1000, 1000, deltas.shape[1])


def masks_too_small(deltas, *, rng):
    sent = deltas.copy()
    for i in range(len(deltas)):
        for j in range(i + 1, len(deltas)):
            mask = rng.uniform(-0.01, 0.01, deltas.shape[1])
            sent[i] += mask
            sent[j] -= mask
    return sent


def masks_from_numpys_global_generator(deltas, *, rng):
    return masks_right(deltas, rng=np.random.default_rng())


def masks_one_pair_only(deltas, *, rng):
    sent = deltas.copy()
    mask = rng.uniform(-1000, 1000, deltas.shape[1])
    sent[0] += mask
    sent[1] -= mask
    return sent


def masks_one_row(deltas, *, rng):
    return masks_right(deltas, rng=rng).sum(axis=0)


MASKS_WRONG = [
    (masks_none, "envía su actualización tal cual"),
    (masks_only_added, "¿Falta restarla, o se la sumas a los dos?"),
    (masks_added_to_both, "las máscaras no se cancelan"),
    (masks_one_for_all, "Todos llevan la misma máscara"),
    (masks_too_small, "tienen que ser mucho más grandes que los datos"),
    (masks_from_numpys_global_generator, "no saca su azar del `rng`"),
    (masks_one_pair_only, "el cliente 2 envía su actualización tal cual"),
    (masks_one_row, "se espera un envío por cliente"),
]


@pytest.mark.parametrize("function", [masks_right, masks_as_a_matrix])
def test_masks_accept_pairs_that_cancel(function):
    verdict = check("mascaras-pares", {"enmascarar": function})
    assert verdict.passed, verdict


@pytest.mark.parametrize("function, says", MASKS_WRONG, ids=[f.__name__ for f, _ in MASKS_WRONG])
def test_masks_reject_the_typical_mistakes(function, says):
    verdict = check("mascaras-pares", {"enmascarar": function})
    assert not verdict.passed
    assert says in failing_texts(verdict)


def test_verdicts_read_in_spanish_with_their_marks():
    verdict = check("laplace-escala", {"mecanismo_laplace": laplace_inverse_scale})
    text = str(verdict)
    assert text.startswith("✗ Todavía no") and "  ✓ " in text and "  ✗ " in text
    assert repr(verdict) == text
    assert str(check("laplace-escala", {"mecanismo_laplace": laplace_right})).startswith("✓ ¡Correcto!")
    assert Verdict("x", ()).passed is False


def test_every_check_has_a_right_answer_here():
    right = {"laplace-escala": {"mecanismo_laplace": laplace_right},
             "presupuesto": {"publicar": budget_right},
             "suma-recortada": {"suma_privada": clipped_sum_right},
             "sigma-gaussiano": {"delta_2": 4, "sigma_gaussiano": sigma_right},
             "recorte-por-persona": {"recortar": clip_right},
             "promedio-fedavg": {"promediar": fedavg_right},
             "mascaras-pares": {"enmascarar": masks_right}}
    assert set(right) == set(CHECKS) - {"reto-laboratorio"}
    for name, defined in right.items():
        assert check(name, defined).passed, name


def test_verdicts_write_numbers_in_the_decks_format():
    # Decimal comma, grouped thousands, percent after a non-breaking space (dpdeck.numbers).
    texts = " ".join(str(check(name, defined)) for name, defined in [
        ("laplace-escala", {"mecanismo_laplace": laplace_right}),
        ("laplace-escala", {"mecanismo_laplace": laplace_inverse_scale}),
        ("presupuesto", {"publicar": budget_whole_budget_each}),
        ("suma-recortada", {"suma_privada": clipped_sum_without_clipping}),
        ("sigma-gaussiano", {"delta_2": 16, "sigma_gaussiano": sigma_without_refusal}),
    ])
    assert re.findall(r"\d\.\d", texts) == []
    assert re.findall(r"(?<![\d,])\d{5,}", texts) == []
    assert re.findall(r"\d ?%", texts) == [] and "\u00a0%" in texts
