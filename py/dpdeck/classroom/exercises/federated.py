"""Capítulo 6: el promedio ponderado de FedAvg (``promedio-fedavg``) y las máscaras por pares (``mascaras-pares``)."""

from __future__ import annotations

from typing import Mapping

import numpy as np

from ..._checks import describe
from .toolkit import _Findings, Verdict, _call, _num, _require_function, _run, seeded_rng


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
    como uno con 2000), la suma ponderada sin dividir por n, dividir por el
    número de clientes, pesos 1/n_k o n_k², olvidar el primer o el último
    cliente, la mediana, devolver una fila por cliente.
    Referencia: McMahan et al. (2017), Algoritmo 1 (FederatedAveraging).
    """
    name = "promediar"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "actualizaciones, tamanos")
        changed = False
        for index, sizes in enumerate(FEDAVG_SIZES):
            updates = _updates_fixture(len(sizes), index)
            weights = np.array(sizes, dtype=float)
            expected = (weights[:, None] * updates).sum(axis=0) / weights.sum()
            given = updates.copy()
            output = _call(findings, function, name, given, np.array(sizes))
            changed = changed or not np.array_equal(given, updates)
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
            with np.errstate(all="ignore"):   # one client: «without the last one» divides by zero
                diagnosis = _average_mistakes(updates, weights)
            hint = next((text for value, text in diagnosis
                         if value.shape == average.shape and np.allclose(average, value, rtol=1e-9)), "")
            findings.fail(f"Con {case} tu promedio no es Σ (n_k/n)·Δ_k.{hint}", stop=True)
        if changed:
            findings.ok("(Ojo: tu función modifica las actualizaciones que recibe; no cambia el promedio, "
                        "pero es más seguro no tocarlas.)")

    return _run("promedio-fedavg", body)


def _average_mistakes(updates, weights) -> list:
    """What each typical mistake averages to, with what is wrong with it."""
    weighted = weights[:, None] * updates
    return [
        (updates.mean(axis=0), " Es el promedio simple: todos los clientes pesan igual, y uno con "
                               "10 ejemplos cuenta como uno con 2000. Pondera por n_k/n."),
        (weighted.sum(axis=0), " Es la suma ponderada: falta dividir por n = Σ n_k (los pesos n_k/n suman 1)."),
        (weighted.sum(axis=0) / len(weights), " Divides por el número de clientes; se divide por n = Σ n_k."),
        ((updates / weights[:, None]).sum(axis=0) / (1 / weights).sum(),
         " Pesas al revés, por 1/n_k: los clientes pequeños pesarían más que los grandes. El peso es n_k/n."),
        ((weights[:, None] ** 2 * updates).sum(axis=0) / (weights ** 2).sum(),
         " Pesas por n_k²: el peso de cada cliente es n_k/n."),
        (weighted[:-1].sum(axis=0) / weights[:-1].sum(),
         " Falta el último cliente: ¿tu bucle se detiene uno antes (`range(len(tamanos) - 1)`)?"),
        (weighted[1:].sum(axis=0) / weights[1:].sum(),
         " Falta el primer cliente: el promedio es sobre todos los de la ronda."),
        (np.median(updates, axis=0), " Es la mediana de las actualizaciones: FedAvg promedia, ponderando por n_k."),
    ]


# ------------------------------------------ capítulo 6: la agregación segura --

MASK_CASES = ((4, 3), (2, 5), (7, 3))   # (clientes, coeficientes) de cada ronda
# A masked update hides its data when its mask moves it this many times the largest datum.
MASK_COVER = 100.0
# The masks cancel when the masked sum is the true one up to rounding of masks near 10³.
MASK_SUM_TOLERANCE = 1e-6


def _deltas_fixture(clients: int, coefficients: int, seed_offset: int) -> np.ndarray:
    """Client updates Δ_k of size below ½, seeded (uniform: these are data, not masks)."""
    return seeded_rng(70 + seed_offset).uniform(-0.5, 0.5, size=(clients, coefficients))


def _seeds_fixture(clients: int, seed_offset: int) -> dict:
    """The seed each pair (i, j), i < j, shares: {(i, j): entero}."""
    values = seeded_rng(90 + seed_offset).integers(2**62, size=clients * (clients - 1) // 2)
    pairs = [(i, j) for i in range(clients) for j in range(i + 1, clients)]
    return {pair: int(value) for pair, value in zip(pairs, values)}


def check_pairwise_masks(defined: Mapping) -> Verdict:
    """Capítulo 6: `enmascarar(deltas, *, semillas)` suma a cada actualización las máscaras de sus pares.

    Cada par i < j comparte una semilla ``semillas[(i, j)]`` que nadie más
    conoce; de ella sale la máscara del par, m_ij, que el cliente i suma y el j
    resta: el envío de i es Δ_i + Σ_{j>i} m_ij − Σ_{j<i} m_ji y la suma de los
    envíos es Σ_i Δ_i, exacta. Es la idea de Bonawitz et al. (2017), sección 4,
    sin la aritmética módulo 2³² que hace uniforme a cada envío. Tres rondas
    (4 clientes × 3 coeficientes, 2 × 5, 7 × 3): la forma, la suma igual a la
    real (error ≤ 10⁻⁶) y cada envío lejos de su dato (algún coeficiente a más
    de ``MASK_COVER`` veces el mayor |Δ|). Y que las máscaras sean de los
    pares, con cuatro clientes:

    * con las mismas semillas, los mismos envíos: la máscara sale de la
      semilla (el otro del par la rehace igual), no de otro azar;
    * cambiar la semilla de un par cambia los envíos de sus dos clientes: la
      máscara no es una constante ni sale de una semilla pública;
    * y no cambia ningún otro envío: el cliente k solo usa las semillas de
      sus pares. Unas máscaras que suman cero repartidas por un tercero (o
      sacadas de todas las semillas) pasarían las pruebas de arriba, pero
      alguien conocería todas: el servidor, si es él, las quita.

    Errores que reconoce: no enmascarar, olvidar restar la máscara al otro del
    par, sumarla a los dos, una misma máscara para todos, máscaras tan pequeñas
    que dejan ver el dato, azar que no sale de las semillas, una semilla
    pública, máscaras de un solo repartidor.
    """
    name = "enmascarar"

    def body(findings: _Findings) -> None:
        function = _require_function(findings, defined, name, "deltas, *, semillas")

        def mask(deltas, seeds):
            output = _call(findings, function, name, deltas.copy(), semillas=dict(seeds))
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
            sent = mask(deltas, _seeds_fixture(clients, index))
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
        if not findings.passed_so_far():
            return   # without masks that hide and cancel, who knows them is beside the point
        _check_masks_belong_to_pairs(findings, mask)

    return _run("mascaras-pares", body)


def _check_masks_belong_to_pairs(findings: _Findings, mask) -> None:
    """Same seeds, same sends; a pair's new seed moves exactly that pair's two sends."""
    clients, coefficients = MASK_CASES[0]
    deltas = _deltas_fixture(clients, coefficients, 0)
    seeds = _seeds_fixture(clients, 0)
    first, again = mask(deltas, seeds), mask(deltas, seeds)
    if not np.array_equal(first, again):
        findings.fail("Con las mismas semillas tus envíos cambian: las máscaras no salen solo de las semillas de "
                      "los pares (¿usas `np.random` o otro generador?). Cada par rehace su máscara desde su "
                      "semilla, `np.random.default_rng(semilla)`: si sale de otro azar, alguien más la conoce.",
                      stop=True)
    for pair in seeds:
        changed = mask(deltas, {**seeds, pair: seeds[pair] + 1})
        moved = [k for k in range(clients) if not np.allclose(changed[k], first[k], rtol=0, atol=1e-9)]
        if not moved:
            findings.fail(f"Cambio la semilla del par {pair} y ningún envío cambia: tus máscaras no salen de las "
                          "semillas de los pares (¿una constante, o una semilla fija en el código?). Quien lea el "
                          "código puede rehacerlas y quitarlas: el servidor vería cada dato.", stop=True)
        strangers = [k for k in moved if k not in pair]
        if strangers:
            findings.fail(f"Cambio la semilla del par {pair} y cambia el envío del cliente {strangers[0]}, que no "
                          "es de ese par y no conoce esa semilla: tus máscaras no son de los pares. Si las reparte "
                          "uno solo (aunque sumen cero), ese alguien las conoce todas y puede quitarlas. Cada "
                          "cliente usa solo las semillas de sus pares.", stop=True)
        if sorted(moved) != sorted(pair):
            findings.fail(f"Cambio la semilla del par {pair} y solo cambia el envío del cliente {moved[0]}: la "
                          "máscara del par la usan los dos, uno sumándola y el otro restándola.", stop=True)
    findings.ok("Cada máscara es de un par: sale de su semilla y solo mueve los envíos de sus dos clientes.")
