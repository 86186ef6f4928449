"""Agregación segura: máscaras por pares que se cancelan en la suma; Shamir si un cliente se cae.

Bonawitz et al. (2017), "Practical Secure Aggregation for Privacy-Preserving
Machine Learning", CCS, con las semillas repartidas por el esquema de Shamir
(1979) para recuperar la suma cuando un cliente se cae a mitad de ronda. Es un
MODELO DE ENSEÑANZA: sin criptografía (la "PRG" es numpy, no un cifrador), sin
acuerdo de claves (las semillas se sortean como si los pares las hubieran
acordado), sin doble máscara, y con un servidor honesto pero curioso. Las
máscaras y los coeficientes usan ``rng`` directamente: son el azar del
protocolo, no ruido de privacidad.
"""

from __future__ import annotations

import numpy as np

from .._checks import check_finite, check_positive_int, check_rng, describe


MASK_MODULUS = 2**32
"""Las máscaras y las actualizaciones codificadas viven en los enteros módulo 2³²."""

FIXED_POINT_SCALE = 2**16
"""Un real x se codifica como round(x · 2¹⁶) mod 2³²: resolución 2⁻¹⁶ ≈ 1,5·10⁻⁵, |suma| < 2¹⁵."""

SHARE_PRIME = 2**61 - 1
"""Primo de Mersenne del esquema de Shamir: las semillas y sus partes son enteros módulo p."""
# ------------------------------------------------------ agregación segura --


def encode_fixed_point(values) -> np.ndarray:
    """Codifica reales como enteros módulo 2³²: q = round(x · 2¹⁶) mod 2³².

    Las máscaras solo se cancelan exactamente en aritmética entera; la suma se
    decodifica bien mientras |Σ x| < 2¹⁵ (``decode_fixed_point``).
    """
    values = check_finite(values, name="values")
    scaled = np.rint(np.asarray(values, dtype=float) * FIXED_POINT_SCALE)
    if (np.abs(scaled) >= MASK_MODULUS // 2).any():
        raise ValueError(f"values debe estar en (−2¹⁵, 2¹⁵) para codificarse; se recibió {describe(values)}")
    return np.mod(scaled.astype(np.int64), MASK_MODULUS)


def decode_fixed_point(encoded) -> np.ndarray:
    """Inverso de ``encode_fixed_point``: de [0, 2³²) a reales, con la mitad superior negativa."""
    encoded = np.mod(np.asarray(encoded, dtype=np.int64), MASK_MODULUS)
    centered = np.where(encoded >= MASK_MODULUS // 2, encoded - MASK_MODULUS, encoded)
    return centered / FIXED_POINT_SCALE


def share_secret(secret, *, shares, threshold, rng) -> list:
    """Reparte ``secret`` en ``shares`` partes de Shamir: cualquier ``threshold`` lo reconstruyen.

    Fórmula: f(x) = s + a₁x + … + a_{t−1}x^{t−1} mod p con aᵢ al azar; la parte j
    es (j, f(j)), j = 1 … n. Garantía: t − 1 partes no dicen nada de s (todo
    valor de s es igual de compatible con ellas). Referencia: Shamir (1979),
    "How to Share a Secret", CACM. Devuelve una lista de pares (x, y).
    """
    shares = check_positive_int(shares, name="shares")
    threshold = check_positive_int(threshold, name="threshold")
    if threshold > shares:
        raise ValueError(f"threshold ({threshold}) no puede superar shares ({shares})")
    rng = check_rng(rng)
    secret = int(secret)
    if not 0 <= secret < SHARE_PRIME:
        raise ValueError(f"secret debe estar en [0, 2⁶¹ − 1); se recibió {describe(secret)}")
    return _evaluate_shares([secret, *rng.integers(0, SHARE_PRIME, size=threshold - 1).tolist()], shares)


def _evaluate_shares(coefficients, shares: int) -> list:
    """Las partes (x, f(x)), x = 1 … n, del polinomio f de coeficientes [s, a₁, …] módulo p."""
    return _evaluate_polynomials([[int(coefficient) for coefficient in coefficients]], shares)[0]


def _evaluate_polynomials(polynomials, shares: int) -> list:
    """``_evaluate_shares`` de cada polinomio de ``polynomials`` (listas de enteros de Python [s, a₁, …])."""
    # Horner in exact Python integers, reduced modulo p once at the end (the same value as reducing
    # at every step). A round's setup evaluates one polynomial per pair of clients: all in one
    # loop, and the few large reductions left for last.
    xs = range(1, shares + 1)
    table = []
    for coefficients in polynomials:
        highest_first = coefficients[::-1]
        parts = []
        for x in xs:
            value = 0
            for coefficient in highest_first:
                value = value * x + coefficient
            parts.append((x, value % SHARE_PRIME))
        table.append(parts)
    return table


def reconstruct_secret(parts) -> int:
    """Reconstruye el secreto desde partes de Shamir: interpolación de Lagrange en 0.

    Fórmula: s = Σⱼ yⱼ Π_{m≠j} x_m / (x_m − xⱼ) mod p. Con al menos ``threshold``
    partes devuelve el secreto; con menos, un número sin relación con él.
    """
    parts = [(int(x), int(y)) for x, y in parts]
    if not parts or len({x for x, _ in parts}) != len(parts):
        raise ValueError(f"parts debe ser una lista no vacía de partes (x, y) con x distintos; se recibió {describe(parts)}")
    secret = 0
    for j, (xj, yj) in enumerate(parts):
        numerator, denominator = 1, 1
        for m, (xm, _) in enumerate(parts):
            if m != j:
                numerator = numerator * xm % SHARE_PRIME
                denominator = denominator * (xm - xj) % SHARE_PRIME
        secret = (secret + yj * numerator * pow(denominator, -1, SHARE_PRIME)) % SHARE_PRIME
    return secret


def setup_secure_aggregation(clients, *, threshold, rng) -> dict:
    """Preparación de la ronda: una semilla por par de clientes y sus partes de Shamir.

    Modelo simplificado de Bonawitz et al. (2017), rondas 0 y 1: cada par
    {i, j} comparte una semilla s_ij (en el protocolo real sale de un acuerdo de
    claves Diffie–Hellman; aquí se sortea), y el cliente i reparte cada una de
    sus semillas en K partes de Shamir, una por cliente, de las que bastan
    ``threshold``. Devuelve ``clients``, ``threshold``, ``seeds`` {(i, j): s_ij}
    con i < j y ``shares`` {(i, j): [(x, y), …]} (la parte x la guarda el
    cliente x − 1).
    """
    clients = check_positive_int(clients, name="clients")
    if clients < 2:
        raise ValueError(f"la agregación segura necesita al menos 2 clientes; se recibió {clients}")
    threshold = check_positive_int(threshold, name="threshold")
    if threshold > clients:
        raise ValueError(f"threshold ({threshold}) no puede superar el número de clientes ({clients})")
    rng = check_rng(rng)
    pairs = [(i, j) for i in range(clients) for j in range(i + 1, clients)]
    values = rng.integers(0, SHARE_PRIME, size=len(pairs)).tolist()
    seeds = dict(zip(pairs, values))
    # Los coeficientes de todos los polinomios de una vez (lo mismo que share_secret, par por par).
    coefficients = rng.integers(0, SHARE_PRIME, size=(len(pairs), threshold - 1)).tolist()
    shares = dict(zip(pairs, _evaluate_polynomials([[seeds[pair], *row] for pair, row in zip(pairs, coefficients)],
                                                   clients)))
    return {"clients": clients, "threshold": threshold, "seeds": seeds, "shares": shares}


def expand_mask(seed, *, size) -> np.ndarray:
    """La máscara de una semilla: ``size`` enteros uniformes en [0, 2³²) (una "PRG").

    Los dos clientes del par generan la misma máscara desde la misma semilla.
    Aquí la PRG es el generador PCG64 de numpy: las palabras de 32 bits de su
    salida, de cada número de 64 bits primero la mitad baja y después la alta
    (los mismos enteros que ``numpy.random.default_rng(seed).integers(0, 2**32,
    size)``). Reproducible, no criptográfica.
    """
    size = check_positive_int(size, name="size")
    # The raw stream, split by hand: a round of secure aggregation expands one mask per pair of
    # clients, and a Generator's integers costs more to set up than the words it returns. Read as
    # little-endian 32-bit words, each 64-bit output gives its low half first, then its high half.
    raw = np.random.PCG64(int(seed)).random_raw((size + 1) // 2)
    return raw.astype("<u8", copy=False).view("<u4")[:size].astype(np.int64)


def _pair_masks(client, setup, *, size, others) -> np.ndarray:
    """Σ_{j>i} PRG(s_ij) − Σ_{j<i} PRG(s_ji) mod 2³² sobre los j de ``others``."""
    total = np.zeros(size, dtype=np.int64)
    for other in others:
        if other == client:
            continue
        pair = (min(client, other), max(client, other))
        mask = expand_mask(setup["seeds"][pair], size=size)
        total = total + mask if client < other else total - mask
    return np.mod(total, MASK_MODULUS)


def mask_update(update, *, client, setup) -> np.ndarray:
    """Lo que el cliente envía: y_i = q_i + Σ_{j>i} PRG(s_ij) − Σ_{j<i} PRG(s_ji) mod 2³².

    Garantía (servidor honesto pero curioso, sin colusión): con al menos una
    máscara uniforme e independiente, y_i es uniforme en [0, 2³²)^d sea cual sea
    la actualización: un solo y_i no dice nada del cliente. En la suma de todos
    los clientes cada máscara aparece una vez con + y otra con −, y se cancela.
    Referencia: Bonawitz et al. (2017), sección 3.
    """
    encoded = encode_fixed_point(np.atleast_1d(update))
    client = int(client)
    if not 0 <= client < setup["clients"]:
        raise ValueError(f"client debe estar entre 0 y {setup['clients'] - 1}; se recibió {describe(client)}")
    masks = _pair_masks(client, setup, size=encoded.size, others=range(setup["clients"]))
    return np.mod(encoded + masks, MASK_MODULUS)


def sum_masked(masked) -> np.ndarray:
    """Suma (módulo 2³²) de las actualizaciones enmascaradas recibidas: {cliente: y_i}."""
    if not masked:
        raise ValueError("masked no puede estar vacío: el servidor no recibió ninguna actualización")
    total = np.zeros_like(next(iter(masked.values())))
    for value in masked.values():
        total = np.mod(total + value, MASK_MODULUS)
    return total


def unmask_sum(masked, *, setup) -> np.ndarray:
    """Suma real de los sobrevivientes, quitando las máscaras que dejaron los caídos.

    Modelo simplificado de la ronda 3 de Bonawitz et al. (2017): si el cliente
    j se cayó después de repartir sus semillas y antes de enviar y_j, en la
    suma quedan sin pareja las máscaras ±PRG(s_ij) de cada sobreviviente i. Los
    sobrevivientes entregan sus partes de Shamir de esas semillas; con
    ``threshold`` partes el servidor reconstruye s_ij, regenera las máscaras y
    las resta. Con menos sobrevivientes que ``threshold`` no hay suma.

    Lo que este modelo omite: la doble máscara del protocolo real (sin ella,
    un cliente lento declarado caído quedaría expuesto al llegar tarde).
    """
    survivors = sorted(int(client) for client in masked)
    dropped = [client for client in range(setup["clients"]) if client not in survivors]
    if len(survivors) < setup["threshold"]:
        raise ValueError(
            f"solo quedan {len(survivors)} clientes y hacen falta {setup['threshold']} partes para "
            "recuperar las semillas de los caídos: la ronda se descarta"
        )
    total = sum_masked(masked)
    size = total.size
    for gone in dropped:
        recovered = {}
        for survivor in survivors:
            pair = (min(survivor, gone), max(survivor, gone))
            parts = [setup["shares"][pair][holder] for holder in survivors[: setup["threshold"]]]
            recovered[pair] = reconstruct_secret(parts)
        dangling = {"clients": setup["clients"], "seeds": recovered}
        for survivor in survivors:
            total = np.mod(total - _pair_masks(survivor, dangling, size=size, others=[gone]), MASK_MODULUS)
    return decode_fixed_point(total)


def run_secure_aggregation(updates, *, threshold, rng, dropped=()) -> dict:
    """Una ronda de agregación segura de punta a punta, con clientes que se caen.

    ``updates`` tiene una fila por cliente. Devuelve ``true_sum`` (Σ de todas
    las actualizaciones), ``views`` (lo que el servidor ve de cada cliente,
    decodificado como si fuera un número: ruido), ``secure_sum`` (suma
    desenmascarada si nadie se cae), ``survivors_sum`` (Σ real de los que
    enviaron), ``naive_sum`` (suma de lo recibido sin quitar las máscaras
    huérfanas) y ``recovered_sum`` (con las semillas recuperadas).
    """
    updates = check_finite(updates, name="updates")
    if updates.ndim != 2:
        raise ValueError(f"updates debe ser una matriz (clientes × coeficientes); tiene forma {updates.shape}")
    clients = updates.shape[0]
    setup = setup_secure_aggregation(clients, threshold=threshold, rng=rng)
    masked = {client: mask_update(updates[client], client=client, setup=setup) for client in range(clients)}
    dropped = sorted({int(client) for client in dropped})
    received = {client: value for client, value in masked.items() if client not in dropped}
    survivors = sorted(received)
    return {
        "clients": clients,
        "threshold": setup["threshold"],
        "dropped": dropped,
        "true_sum": updates.sum(axis=0),
        "views": np.array([decode_fixed_point(masked[client]) for client in range(clients)]),
        "secure_sum": decode_fixed_point(sum_masked(masked)),
        "survivors_sum": updates[survivors].sum(axis=0),
        "naive_sum": decode_fixed_point(sum_masked(received)),
        "recovered_sum": unmask_sum(received, setup=setup),
    }
