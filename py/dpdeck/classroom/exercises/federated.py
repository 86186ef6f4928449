"""Capítulo 6: el promedio ponderado de FedAvg (``promedio-fedavg``) y las máscaras por pares (``mascaras-pares``)."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..._checks import describe
from .toolkit import _Findings, Verdict, _call, _check_uses_rng, _num, _require_function, _run, seeded_rng


# --------------------------------------------- capítulo 6: el promedio de FedAvg --

FEDAVG_SIZES = ((10, 2000, 350, 40), (7, 7, 7), (1200,))   # n_k of each round's clients


def _updates_fixture(clients: int, seed_offset: int) -> np.ndarray:
    """Client updates Δ_k of 3 coefficients, seeded (uniform: these are not noise)."""
    return seeded_rng(60 + seed_offset).uniform(-1.0, 1.0, size=(clients, 3))


def check_fedavg_average(defined: Mapping) -> Verdict:
    """Capítulo 6: `promediar(actualizaciones, tamanos)` = Σ_k (n_k/n) Δ_k, con n = Σ_k n_k.

    Tres rondas (tamaños 10, 2000, 350 y 40; tres clientes iguales; un solo
    cliente), comparadas con la fórmula (error ≤ 10⁻⁹): una sola
    actualización de salida, ponderada por los ejemplos de cada cliente.

    Errores que reconoce: el promedio simple (un cliente con 10 ejemplos pesa
    como uno con 2000), la suma ponderada sin dividir por n, devolver una fila
    por cliente.
    Referencia: McMahan et al. (2017), Algoritmo 1 (FederatedAveraging).
    """
    name = "promediar"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "actualizaciones, tamanos")
        for index, sizes in enumerate(FEDAVG_SIZES):
            updates = _updates_fixture(len(sizes), index)
            weights = np.array(sizes, dtype=float)
            expected = (weights[:, None] * updates).sum(axis=0) / weights.sum()
            given = updates.copy()
            output = _call(findings, function, name, given, np.array(sizes))
            case = f"tamaños {', '.join(str(size) for size in sizes)}"
            try:
                average = np.asarray(output, dtype=float)
            except (TypeError, ValueError):
                findings.fail(f"`{name}` devuelve {describe(output)}; se espera un vector de "
                              f"{updates.shape[1]} coeficientes.", stop=True)
            if average.shape == updates.shape and len(sizes) > 1:
                findings.fail(f"Con {case} devuelves una fila por cliente: el servidor las combina en una sola "
                              "actualización.", stop=True)
            if average.shape != expected.shape:
                findings.fail(f"Con {case} devuelves forma {average.shape}; se espera ({updates.shape[1]},), "
                              "una sola actualización.", stop=True)
            if np.allclose(average, expected, rtol=1e-9, atol=1e-12):
                findings.ok(f"Con {case} el promedio pondera cada cliente por n_k/n.")
                continue
            diagnosis = [
                (updates.mean(axis=0), " Es el promedio simple: todos los clientes pesan igual, y uno con "
                                       "10 ejemplos cuenta como uno con 2000. Pondera por n_k/n."),
                ((weights[:, None] * updates).sum(axis=0), " Es la suma ponderada: falta dividir por "
                                                            "n = Σ n_k (los pesos n_k/n suman 1)."),
                ((weights[:, None] * updates).sum(axis=0) / len(sizes),
                 " Divides por el número de clientes; se divide por n = Σ n_k."),
            ]
            hint = next((text for value, text in diagnosis if np.allclose(average, value, rtol=1e-9)), "")
            findings.fail(f"Con {case} tu promedio no es Σ (n_k/n)·Δ_k.{hint}", stop=True)
        if not np.array_equal(given, _updates_fixture(len(FEDAVG_SIZES[-1]), len(FEDAVG_SIZES) - 1)):
            findings.ok("(Ojo: tu función modifica las actualizaciones que recibe; no cambia el promedio, "
                        "pero es más seguro no tocarlas.)")

    return _run("promedio-fedavg", body)


# ------------------------------------------ capítulo 6: la agregación segura --

MASK_CASES = ((4, 3), (2, 5), (7, 3))   # (clientes, coeficientes) de cada ronda
# A masked update hides its data when its mask moves it this many times the largest datum.
MASK_COVER = 100.0
# The masks cancel when the masked sum is the true one up to rounding of masks near 10³.
MASK_SUM_TOLERANCE = 1e-6


def _deltas_fixture(clients: int, coefficients: int, seed_offset: int) -> np.ndarray:
    """Client updates Δ_k of size below ½, seeded (uniform: these are data, not masks)."""
    return seeded_rng(70 + seed_offset).uniform(-0.5, 0.5, size=(clients, coefficients))


def check_pairwise_masks(defined: Mapping) -> Verdict:
    """Capítulo 6: `enmascarar(deltas, *, rng)` suma a cada actualización máscaras por pares que se cancelan.

    Para cada par i < j se sortea una máscara m_ij (de ``rng``) que el cliente
    i suma y el j resta: el envío de i es Δ_i + Σ_{j>i} m_ij − Σ_{j<i} m_ji y la
    suma de los envíos es Σ_i Δ_i, exacta. Tres rondas (4 clientes × 3
    coeficientes, 2 × 5, 7 × 3): la forma, el azar de ``rng``, la suma igual a
    la real (error ≤ 10⁻⁶) y cada envío lejos de su dato (algún coeficiente a
    más de ``MASK_COVER`` veces el mayor |Δ|). Es la idea de Bonawitz et al.
    (2017), sección 4, sin la aritmética módulo 2³² que hace uniforme a cada
    envío (aquí, máscaras grandes bastan para la clase).

    Errores que reconoce: no enmascarar, olvidar restar la máscara al otro del
    par, sumarla a los dos, una misma máscara para todos, máscaras tan chicas
    que dejan ver el dato, azar que no sale de ``rng``.
    """
    name = "enmascarar"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "deltas, *, rng")

        def mask(deltas, rng):
            output = _call(findings, function, name, deltas.copy(), rng=rng)
            try:
                sent = np.asarray(output, dtype=float)
            except (TypeError, ValueError):
                findings.fail(f"`{name}` devuelve {describe(output)}; se espera un envío por cliente, "
                              f"una matriz de forma {deltas.shape}.", stop=True)
            if sent.shape != deltas.shape:
                findings.fail(f"`{name}` devuelve forma {sent.shape}; se espera un envío por cliente, "
                              f"de forma {deltas.shape}.", stop=True)
            if not np.all(np.isfinite(sent)):
                findings.fail(f"`{name}` devuelve valores no finitos: {describe(sent)}.", stop=True)
            return sent

        explained = False   # the typical mistake is said once, not in every round
        for index, (clients, coefficients) in enumerate(MASK_CASES):
            deltas = _deltas_fixture(clients, coefficients, index)
            sent = mask(deltas, seeded_rng(80 + index))
            case = f"{clients} clientes"
            added = sent - deltas
            excess = float(np.max(np.abs(sent.sum(axis=0) - deltas.sum(axis=0))))
            if excess <= MASK_SUM_TOLERANCE:
                findings.ok(f"Con {case} las máscaras se cancelan: la suma de los envíos es la suma real.")
            else:
                same = np.allclose(added, added[0], rtol=1e-9, atol=1e-12)
                hint = "" if explained else (
                    " Todos llevan la misma máscara: en la suma aparece una vez por cliente. Cada máscara "
                    "es de un par: uno la suma y el otro la resta." if same else
                    " Cada máscara m_ij la suma un cliente del par y la resta el otro: así se anula en la "
                    "suma. ¿Falta restarla, o se la sumas a los dos?")
                explained = True
                findings.fail(f"Con {case} la suma de los envíos se aleja {_num(excess)} de la suma real: las "
                              f"máscaras no se cancelan.{hint}")
            cover = MASK_COVER * float(np.max(np.abs(deltas)))
            moved = np.max(np.abs(added), axis=1)
            bare = [k for k in range(clients) if moved[k] == 0]
            weak = [k for k in range(clients) if 0 < moved[k] < cover]
            if bare:
                findings.fail(f"Con {case} el cliente {bare[0]} envía su actualización tal cual: el servidor "
                              "la ve." + ("" if len(bare) == clients else
                                          " Cada cliente lleva las máscaras de todos sus pares."))
            elif weak:
                findings.fail(f"Con {case} el envío del cliente {weak[0]} se aleja a lo sumo "
                              f"{_num(float(moved[weak[0]]))} de su actualización, y los datos miden hasta "
                              f"{_num(float(np.max(np.abs(deltas))))}: el servidor casi los ve. Las máscaras "
                              "tienen que ser mucho más grandes que los datos.")
            else:
                findings.ok(f"Con {case} cada envío, solo, queda lejos de su actualización: la máscara la tapa.")
        # Last: without masks at all the rounds above already say what is missing.
        first = _deltas_fixture(*MASK_CASES[0], 0)
        _check_uses_rng(findings, lambda rng: mask(first, rng), name)

    return _run("mascaras-pares", body)
