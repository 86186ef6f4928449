"""Capítulo 2: repartir un presupuesto ε entre k conteos (``presupuesto``)."""

from __future__ import annotations

import math
from typing import Mapping

import numpy as np

from .toolkit import (
    Z_TOLERANCE,
    _Findings,
    Verdict,
    _as_vector,
    _call,
    _check_uses_rng,
    _mean_absolute_error_band,
    _num,
    _require_function,
    _run,
    seeded_rng,
)


# ------------------------------------------------ capítulo 2: el presupuesto --

BUDGET_CASES = (((42, 17, 99, 5), 1.0), ((300, 120, 7), 0.3))   # (conteos, ε total)
BUDGET_SAMPLES = 1000


def check_budget_split(defined: Mapping) -> Verdict:
    """Capítulo 2: `publicar(conteos, *, epsilon_total, rng)` reparte ε en partes iguales.

    Los k conteos son sobre las mismas personas: por composición secuencial
    sus ε se suman, así que cada uno recibe ε_total/k y ruido Lap(k/ε_total)
    (sensibilidad 1). Para dos casos publica ``BUDGET_SAMPLES`` veces, mide la
    escala b̂ᵢ de cada conteo como E|Mᵢ − cᵢ| (error relativo 1/√n: acepta
    ±5/√n, 16 % con n = 1000) y suma lo gastado, Σ 1/b̂ᵢ.

    Los ruidos de los conteos deben ser independientes (correlación muestral
    ≤ 5/√n): uno solo sumado a todos publica exactas sus diferencias.

    Errores que reconoce: gastar ε_total en cada conteo (k veces el
    presupuesto), dividir la escala en vez de ε, un reparto desigual, un mismo
    ruido para todos, una salida que no es un número por conteo.
    Referencia: Dwork y Roth (2014), Teorema 3.14 (composición secuencial).
    """
    name = "publicar"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "conteos, *, epsilon_total, rng")
        counts, budget = BUDGET_CASES[0]

        def release(rng, counts=counts, budget=budget):
            output = _call(findings, function, name, np.array(counts), epsilon_total=budget, rng=rng)
            return _as_vector(findings, output, name, len(counts))

        _check_uses_rng(findings, release, name)
        band = _mean_absolute_error_band(BUDGET_SAMPLES)
        for index, (counts, budget) in enumerate(BUDGET_CASES):
            rng = seeded_rng(20 + index)
            outputs = np.array([release(rng, counts, budget) for _ in range(BUDGET_SAMPLES)])
            scales = np.abs(outputs - np.array(counts)).mean(axis=0)
            k = len(counts)
            case = f"{k} conteos y ε total = {_num(budget, None)}"
            if np.any(scales == 0):
                findings.fail(f"Con {case} algún conteo sale sin ruido: cada publicación necesita su ruido.",
                              stop=True)
            spent = float(np.sum(1.0 / scales))
            wanted = k / budget
            # Σ 1/b̂ᵢ has relative error about 1/√(k·n) around the truth: the band covers it.
            spent_band = Z_TOLERANCE / math.sqrt(k * BUDGET_SAMPLES)
            if spent > budget * (1 + spent_band):
                hint = (" Cada conteo gasta el presupuesto entero: las consultas sobre las mismas personas "
                        "se suman (composición secuencial), así que a cada una le toca ε_total/k."
                        if abs(spent / (k * budget) - 1) <= spent_band + band else "")
                findings.fail(f"Con {case} gastas ε ≈ {_num(spent)}: más que el presupuesto.{hint}")
            else:
                findings.ok(f"Con {case} gastas ε ≈ {_num(spent)}: no te pasas del presupuesto.")
            noise = outputs - np.array(counts)
            # Independent noises have sample correlation about N(0, 1/n): the band is 5/√n.
            correlation = np.corrcoef(noise, rowvar=False)[np.triu_indices(k, 1)]
            findings.expect(np.all(np.abs(correlation) <= Z_TOLERANCE / math.sqrt(BUDGET_SAMPLES)),
                            f"Con {case} cada conteo lleva su propio ruido, independiente de los demás.",
                            f"Con {case} los conteos comparten el ruido (correlación "
                            f"{_num(float(np.max(np.abs(correlation))))}): así las diferencias entre conteos "
                            "se publican exactas. Saca un ruido para cada conteo.")
            equal = np.all(np.abs(scales / wanted - 1) <= band)
            findings.expect(equal,
                            f"Con {case} cada conteo lleva ruido de escala ≈ k/ε = {_num(wanted, None)}.",
                            f"Con {case} las escalas medidas son {', '.join(_num(s) for s in scales)}; "
                            f"repartiendo en partes iguales cada una es k/ε_total = {_num(wanted, None)}.")

    return _run("presupuesto", body)
