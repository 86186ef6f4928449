"""Capítulo 3: la suma recortada, con ruido de escala cota/ε (``suma-recortada``)."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ...numbers import format_number
from .toolkit import (
    _Findings,
    Verdict,
    _as_real,
    _call,
    _num,
    _require_function,
    _run,
    check_draws_from_rng,
    check_laplace_noise,
    scale_bounds,
    seeded_rng,
)


# --------------------------------------------- capítulo 3: la suma recortada --

# Clipping: one huge value, one negative, one below −cota and one above it; every clipping rule a
# student may write gives another integer sum. ε so large that the noise is about 10⁻³.
CLIP_VALUES = (5.0, 3.0, 2_000_000_000.0, -7.0, 9.0, -15.0, 12.0)
CLIP_BOUND = 10.0
CLIP_EPSILON = 10_000.0
# Scale: 30 whole values well below the bound (a data-dependent scale, max |x|, shows), whose sum lies
# far above 0 (clipping the release at 0, post-processing, changes nothing measured).
SCALE_VALUES = tuple(float(v) for v in (1, 4, 2, 0, 3, 2, 1, 4, 0, 3) * 3)
SCALE_BOUND = 10.0
SCALE_EPSILON = 2.0
SUM_SAMPLES = 4000
# 50 noise scales of the clipping case: a right sum misses it with probability e⁻⁵⁰.
CLIP_TOLERANCE = 0.05


def _clipping_mistakes() -> dict:
    """The sum each typical clipping rule gives on ``CLIP_VALUES``, with what is wrong with it."""
    values, bound = np.array(CLIP_VALUES), CLIP_BOUND
    return {
        float(values.sum()): "no recortas: una sola persona mueve la suma tanto como quiera (la sensibilidad "
                             "sería infinita).",
        min(float(values.sum()), bound): "recortas la suma, no a cada persona: recorta cada valor y después suma.",
        float(np.clip(values, -bound, bound).sum()): "recortas a [−cota, cota]; la tarea pide [0, cota]: con "
                                                     "negativos, una persona movería la suma hasta 2·cota.",
        float(np.minimum(values, bound).sum()): "recortas solo por arriba: un valor negativo también mueve la "
                                                "suma; recorta a [0, cota].",
        float(np.clip(np.abs(values), 0, bound).sum()): "recortas |x|: un valor negativo cuenta como positivo; "
                                                        "recorta x a [0, cota].",
        float(np.clip(values, 0, bound - 1).sum()): "recortas a [0, cota − 1]: el intervalo llega hasta la cota.",
        float(np.clip(values, 1, bound).sum()): "recortas a [1, cota]: el intervalo empieza en 0.",
    }


def check_clipped_sum(defined: Mapping) -> Verdict:
    """Capítulo 3: `suma_privada(valores, *, cota, epsilon, rng)` = Σ clip(xᵢ, 0, cota) + Lap(cota/ε).

    Con 30 valores enteros entre 0 y 4, cota 10 y ε = 2 publica ``SUM_SAMPLES``
    veces y mide el ruido con ``toolkit.check_laplace_noise`` (centro, escala
    y cola lejana; falsa alarma ≤ 10⁻⁶ cada prueba): la escala es
    b = cota/ε = 5, la mínima para ε-DP: la sensibilidad de la suma recortada
    es la cota, no 1 (un conteo) ni max|xᵢ| (la sensibilidad local, que
    depende de los datos). Después, con ε = 10⁴ (ruido de escala 10⁻³) y
    valores (5, 3, 2·10⁹, −7, 9, −15, 12) recortados a [0, 10], la suma debe ser
    37: cada forma equivocada de recortar da otra suma, y la comprobación dice
    cuál. Redondear lo publicado es posprocesamiento y pasa.
    Referencia: Near y Abuah (2021), cap. 5; Dwork y Roth (2014), Teorema 3.6.
    """
    name = "suma_privada"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "valores, *, cota, epsilon, rng")

        def release(rng, values, bound, epsilon):
            output = _call(findings, function, name, np.array(values), cota=bound, epsilon=epsilon, rng=rng)
            return _as_real(findings, output, name)

        true_sum = float(np.clip(SCALE_VALUES, 0.0, SCALE_BOUND).sum())
        check_draws_from_rng(findings, lambda rng: release(rng, SCALE_VALUES, SCALE_BOUND, SCALE_EPSILON), name,
                             truth=true_sum)
        clipped = float(np.clip(CLIP_VALUES, 0.0, CLIP_BOUND).sum())
        total = release(seeded_rng(30), CLIP_VALUES, CLIP_BOUND, CLIP_EPSILON)
        if abs(total - clipped) <= CLIP_TOLERANCE:
            findings.ok(f"Cada persona se recorta a [0, cota]: con valores {_values_text(CLIP_VALUES)} y "
                        f"cota {_num(CLIP_BOUND, None)} la suma (casi sin ruido) es {_num(clipped, None)}.")
        else:
            reason = next((text for value, text in _clipping_mistakes().items()
                           if abs(total - value) <= CLIP_TOLERANCE),
                          f"debería ser {_num(clipped, None)}, la suma de los valores recortados a [0, cota].")
            findings.fail(f"Con valores {_values_text(CLIP_VALUES)}, cota {_num(CLIP_BOUND, None)} y ε enorme "
                          f"tu suma es {_num(total)}: {reason}")
        rng = seeded_rng(31)
        outputs = np.array([release(rng, SCALE_VALUES, SCALE_BOUND, SCALE_EPSILON) for _ in range(SUM_SAMPLES)])
        expected = SCALE_BOUND / SCALE_EPSILON
        case = f"cota {_num(SCALE_BOUND, None)} y ε = {_num(SCALE_EPSILON, None)}"
        measured = check_laplace_noise(findings, outputs - true_sum, scales=expected, case=case, truth=true_sum,
                                       diagnose=_diagnose_scale)
        low, high = scale_bounds(SUM_SAMPLES)
        if measured is not None and low <= measured <= high:
            findings.ok("La sensibilidad de la suma recortada es la cota: b = cota/ε.")

    return _run("suma-recortada", body)


def _diagnose_scale(measured: float) -> str:
    """The typical mistake a measured scale (in units of cota/ε) matches, if any."""
    low, high = scale_bounds(SUM_SAMPLES)
    expected = SCALE_BOUND / SCALE_EPSILON
    hints = [
        (1.0 / SCALE_EPSILON, " Parece 1/ε: es la escala del ruido de un conteo (sensibilidad 1); la de la suma "
                              "recortada es cota/ε, porque una persona la mueve hasta la cota."),
        (max(SCALE_VALUES) / SCALE_EPSILON, " Parece max(valores)/ε: es la sensibilidad local, depende de los "
                                            "datos y filtra; usa la cota."),
        (SCALE_EPSILON / SCALE_BOUND, " Parece ε/cota: la escala es cota/ε."),
        (SCALE_BOUND * SCALE_EPSILON, " Parece cota·ε: se divide por ε, no se multiplica."),
        (2 * SCALE_BOUND / SCALE_EPSILON, " Parece 2·cota/ε: con valores en [0, cota], una persona mueve la suma "
                                          "a lo sumo cota, no 2·cota. Es privado, pero con el doble del ruido "
                                          "necesario; la tarea pide la escala mínima."),
    ]
    for scale, text in hints:
        if low <= measured * expected / scale <= high:
            return text
    if measured > high:
        return " Tu ruido es más grande que el necesario: la tarea pide la escala mínima, cota/ε."
    return ""


def _values_text(values) -> str:
    return "(" + "; ".join(format_number(value) for value in values) + ")"
