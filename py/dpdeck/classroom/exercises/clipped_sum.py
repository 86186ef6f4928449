"""Capítulo 3: la suma recortada, con ruido de escala cota/ε (``suma-recortada``)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from ...numbers import format_number
from .toolkit import (
    Z_TOLERANCE,
    _Findings,
    Verdict,
    _as_real,
    _call,
    _check_uses_rng,
    _mean_absolute_error_band,
    _num,
    _require_function,
    _run,
    seeded_rng,
)


# --------------------------------------------- capítulo 3: la suma recortada --

# Clipping: one huge value and one negative one; ε so large that noise is about 10⁻³.
CLIP_VALUES = (5.0, 3.0, 2_000_000_000.0, -7.0, 9.5)
CLIP_BOUND = 10.0
CLIP_EPSILON = 10_000.0
# Scale: values well below the bound, so a data-dependent scale (max |x|) shows.
SCALE_VALUES = tuple(float(v) for v in (1, 4, 2, 0, 3, 2.5, 1.5, 4, 0.5, 3))
SCALE_BOUND = 10.0
SCALE_EPSILON = 0.5
SUM_SAMPLES = 2000


def check_clipped_sum(defined: Mapping) -> Verdict:
    """Capítulo 3: `suma_privada(valores, *, cota, epsilon, rng)` = Σ clip(xᵢ, 0, cota) + Lap(cota/ε).

    Con valores entre 0 y 4, cota 10 y ε = 0,5 mide la escala como E|M − Σ|
    sobre ``SUM_SAMPLES`` publicaciones y acepta ±5/√n (11 %) alrededor de
    b = cota/ε = 20: la sensibilidad de la suma recortada es la cota, no 1
    (un conteo) ni max|xᵢ| (la sensibilidad local, que depende de los
    datos). Después, con ε = 10⁴ (ruido de escala 10⁻³) y valores
    (5, 3, 2·10⁹, −7, 9,5) recortados a [0, 10], la suma debe ser 27,5: sin
    recortar sale 2·10⁹; recortando la suma, 10; recortando solo por arriba, 20,5.
    Referencia: Near y Abuah (2021), cap. 5; Dwork y Roth (2014), Teorema 3.6.
    """
    name = "suma_privada"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "valores, *, cota, epsilon, rng")

        def release(rng, values, bound, epsilon):
            output = _call(findings, function, name, np.array(values), cota=bound, epsilon=epsilon, rng=rng)
            return _as_real(findings, output, name)

        _check_uses_rng(findings, lambda rng: release(rng, SCALE_VALUES, SCALE_BOUND, SCALE_EPSILON), name)
        rng = seeded_rng(31)
        true_sum = float(np.clip(SCALE_VALUES, 0.0, SCALE_BOUND).sum())
        outputs = np.array([release(rng, SCALE_VALUES, SCALE_BOUND, SCALE_EPSILON) for _ in range(SUM_SAMPLES)])
        expected = SCALE_BOUND / SCALE_EPSILON
        measured = float(np.abs(outputs - true_sum).mean())
        band = _mean_absolute_error_band(SUM_SAMPLES)
        case = f"cota {_num(SCALE_BOUND, None)} y ε = {_num(SCALE_EPSILON, None)}"
        if abs(measured / expected - 1) <= band:
            findings.ok(f"Con {case} la escala del ruido es {_num(measured)} ≈ cota/ε = {_num(expected, None)}: "
                        "la sensibilidad de la suma recortada es la cota.")
        else:
            hints = [
                (1.0 / SCALE_EPSILON, "Parece 1/ε: esa es la sensibilidad de un conteo; la de la suma "
                                      "recortada es la cota."),
                (max(SCALE_VALUES) / SCALE_EPSILON, "Parece max(valores)/ε: es la sensibilidad local, "
                                                    "depende de los datos y filtra; usa la cota."),
                (SCALE_EPSILON / SCALE_BOUND, "Parece ε/cota: la escala es cota/ε."),
            ]
            hint = next((text for scale, text in hints if abs(measured / scale - 1) <= band), "")
            findings.fail(f"Con {case} la escala medida es {_num(measured)}, pero debería ser "
                          f"cota/ε = {_num(expected, None)}. {hint}".rstrip())
        offset = float(outputs.mean() - true_sum)
        limit = Z_TOLERANCE * math.sqrt(2.0) * expected / math.sqrt(SUM_SAMPLES)
        findings.expect(abs(offset) <= limit,
                        "El ruido está centrado en la suma recortada.",
                        f"En promedio te alejas {_num(offset)} de la suma recortada: el ruido debe estar "
                        "centrado en 0.")
        clipped = float(np.clip(CLIP_VALUES, 0.0, CLIP_BOUND).sum())
        total = release(seeded_rng(30), CLIP_VALUES, CLIP_BOUND, CLIP_EPSILON)
        tolerance = 0.05   # 50 noise scales: a correct sum misses it with probability e⁻⁵⁰
        if abs(total - clipped) <= tolerance:
            findings.ok(f"Cada persona se recorta a [0, cota]: con valores {_values_text(CLIP_VALUES)} y "
                        f"cota {_num(CLIP_BOUND, None)} la suma (casi sin ruido) es {_num(clipped, None)}.")
        else:
            diagnosis = {
                float(np.sum(CLIP_VALUES)): "no recortas: una sola persona mueve la suma tanto como quiera "
                                            "(la sensibilidad sería infinita).",
                min(float(np.sum(CLIP_VALUES)), CLIP_BOUND): "recortas la suma, no a cada persona: "
                                                             "recorta cada valor y después suma.",
                float(np.minimum(CLIP_VALUES, CLIP_BOUND).sum()): "recortas solo por arriba: un valor "
                                                                  "negativo también mueve la suma; recorta a [0, cota].",
            }
            reason = next((text for value, text in diagnosis.items() if abs(total - value) <= tolerance),
                          f"debería ser {_num(clipped, None)}, la suma de los valores recortados a [0, cota].")
            findings.fail(f"Con valores {_values_text(CLIP_VALUES)}, cota {_num(CLIP_BOUND, None)} y ε enorme "
                          f"tu suma es {_num(total)}: {reason}")

    return _run("suma-recortada", body)


def _values_text(values) -> str:
    return "(" + "; ".join(format_number(value) for value in values) + ")"
