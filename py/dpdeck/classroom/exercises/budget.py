"""Capítulo 2: repartir un presupuesto ε entre k conteos (``presupuesto``)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from ...audits import normal_bound
from .toolkit import (
    FALSE_ALARM,
    _Findings,
    Verdict,
    _as_vector,
    _call,
    _num,
    _require_function,
    _run,
    check_draws_from_rng,
    check_laplace_noise,
    scale_bounds,
    seeded_rng,
)


# ------------------------------------------------ capítulo 2: el presupuesto --

# (conteos, ε total); every count lies more than 6 noise scales above 0, so clipping the release at 0
# (post-processing) changes nothing the check measures.
BUDGET_CASES = (((420, 170, 990, 50), 1.0), ((300, 120, 70), 0.3))
BUDGET_SAMPLES = 2000


def check_budget_split(defined: Mapping) -> Verdict:
    """Capítulo 2: `publicar(conteos, *, epsilon_total, rng)` reparte ε en partes iguales, sin pasarse.

    Los k conteos son sobre las mismas personas: por composición secuencial
    sus ε se suman, así que la tarea es darle a cada uno la misma parte de
    ε_total sin pasarse: ε_total/k es lo justo (ruido Lap(k/ε_total),
    sensibilidad 1), y gastar menos (más ruido) también es privado. Para dos
    casos publica ``BUDGET_SAMPLES`` veces y mide, con
    ``toolkit.check_laplace_noise``, el centro, la escala b̂ᵢ de cada conteo y
    la cola lejana; lo gastado es Σ 1/b̂ᵢ, que no pasa de ε_total más el error
    de la medida (cota de gamma, falsa alarma ≤ 10⁻⁶), y las escalas son
    iguales entre sí.

    Los ruidos de los conteos deben ser independientes: la correlación
    muestral de dos ruidos independientes, por √n, es casi normal estándar
    (falsa alarma ≤ 10⁻⁶, aproximación normal); uno solo sumado a todos
    publica exactas sus diferencias.

    Errores que reconoce: gastar ε_total en cada conteo (k veces el
    presupuesto), dividir la escala en vez de ε, k − 1 partes, un reparto
    desigual, un mismo ruido para todos, ruido truncado o gaussiano, ruido que
    no sale de ``rng``, una salida que no es un número por conteo.
    Referencia: Dwork y Roth (2014), Teorema 3.14 (composición secuencial).
    """
    name = "publicar"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "conteos, *, epsilon_total, rng")
        counts, budget = BUDGET_CASES[0]

        def release(rng, counts=counts, budget=budget):
            output = _call(findings, function, name, np.array(counts), epsilon_total=budget, rng=rng)
            return _as_vector(findings, output, name, len(counts))

        check_draws_from_rng(findings, release, name, truth=np.array(counts, dtype=float))
        low, high = scale_bounds(BUDGET_SAMPLES)
        for index, (counts, budget) in enumerate(BUDGET_CASES):
            rng = seeded_rng(20 + index)
            outputs = np.array([release(rng, counts, budget) for _ in range(BUDGET_SAMPLES)])
            noise = outputs - np.array(counts, dtype=float)
            k = len(counts)
            fair = k / budget
            case = f"{k} conteos y ε total = {_num(budget, None)}"
            scales = np.abs(noise).mean(axis=0)
            if np.any(scales == 0):
                findings.fail(f"Con {case} algún conteo sale sin ruido: cada publicación necesita su ruido.",
                              stop=True)
            # Each count's spend, ε_i = 1/b̂_i; the spend is measured within the gamma bounds of each scale.
            spent = float(np.sum(1.0 / scales))
            if spent > budget / low:
                hint = (" Cada conteo gasta el presupuesto entero: las consultas sobre las mismas personas "
                        "se suman (composición secuencial), así que a cada una le toca ε_total/k."
                        if low <= spent / (k * budget) <= high else
                        f" Parece ε_total/{k - 1} por conteo: son {k} conteos, k = {k}."
                        if k > 1 and low <= spent / (budget * k / (k - 1)) <= high else
                        " Parece que divides la escala por k en vez de ε: la escala de cada conteo es "
                        "k/ε_total (más conteos, más ruido en cada uno)."
                        if low <= spent / (k * k * budget) <= high else "")
                findings.fail(f"Con {case} gastas ε ≈ {_num(spent)}: más que el presupuesto.{hint}", stop=True)
            findings.ok(f"Con {case} gastas ε ≈ {_num(spent)}: no te pasas del presupuesto.")
            even = bool(np.max(scales) / np.min(scales) <= high / low)
            findings.expect(even,
                            f"Con {case} cada conteo lleva la misma parte del presupuesto.",
                            f"Con {case} las escalas medidas son {', '.join(_num(s) for s in scales)}: el reparto no "
                            f"es en partes iguales (a cada conteo, ε_total/k, escala k/ε_total = {_num(fair, None)}).",
                            stop=True)
            # Independent noises have sample correlation about N(0, 1/n).
            correlation = np.corrcoef(noise, rowvar=False)[np.triu_indices(k, 1)]
            pairs = k * (k - 1) // 2
            limit = normal_bound(false_alarm=FALSE_ALARM / pairs) / math.sqrt(BUDGET_SAMPLES)
            findings.expect(np.all(np.abs(correlation) <= limit),
                            f"Con {case} cada conteo lleva su propio ruido, independiente de los demás.",
                            f"Con {case} los conteos comparten el ruido (correlación "
                            f"{_num(float(np.max(np.abs(correlation))))}): así las diferencias entre conteos "
                            "se publican exactas. Saca un ruido para cada conteo.", stop=True)
            common = float(np.mean(scales))
            check_laplace_noise(findings, noise, scales=np.broadcast_to(max(common, fair), noise.shape), case=case,
                                minimal=False, truth=np.array(counts, dtype=float),
                                diagnose=lambda measured: "")
            if common > fair * high:
                findings.ok(f"(Con {case} gastas menos de lo que tienes: cada conteo lleva escala ≈ {_num(common)}, "
                            f"más de k/ε_total = {_num(fair, None)}. Es privado, con más ruido del necesario: "
                            "repartir ε_total/k no desperdicia nada.)")

    return _run("presupuesto", body)
