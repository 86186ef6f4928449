"""Mecanismos de Laplace y gaussiano: fórmulas de calibración y muestreo.

Las funciones de calibración (``laplace_scale``, ``gaussian_sigma``, las
densidades) son fórmulas puras, sin azar. Las que publican un valor ruidoso
(``laplace_mechanism``, ``gaussian_mechanism`` y sus variantes de bajo nivel)
reciben siempre un generador explícito ``rng: numpy.random.Generator``.

Limitaciones que comparten todas las funciones de este módulo (código de
enseñanza, no de producción):

* Ataque de punto flotante (Mironov 2012, "On Significance of the Least
  Significant Bits for Differential Privacy", CCS 2012): muestrear Laplace con
  aritmética de punto flotante deja huecos en los valores posibles, y un
  atacante que observa los bits bajos de la salida puede distinguir bases
  vecinas. Una implementación real usa el mecanismo "snapping" o muestreo
  discreto exacto (Canonne, Kamath y Steinke 2020), como
  ``discrete_laplace_mechanism`` y ``discrete_gaussian_mechanism`` de este módulo.
* Privacidad por registro (record-level): la garantía protege a una fila; una
  persona con varias filas necesita una sensibilidad por usuario.
* El gaussiano clásico (Dwork y Roth 2014, Teorema A.1) solo vale para ε < 1.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ._checks import (
    check_delta,
    check_epsilon,
    check_finite,
    check_integers,
    check_noise_fits,
    check_nonempty,
    check_positive,
    check_positive_int,
    check_positive_rational,
    check_rng,
    check_sensitivity,
    check_sigma,
    check_finite_result,
    compute_finite,
)

__all__ = [
    "laplace_scale",
    "laplace_std",
    "laplace_density",
    "laplace_density_ratio_bound",
    "add_laplace_noise",
    "laplace_mechanism",
    "gaussian_sigma_factor",
    "gaussian_sigma",
    "gaussian_density",
    "add_gaussian_noise",
    "gaussian_mechanism",
    "discrete_laplace_scale",
    "add_discrete_laplace_noise",
    "discrete_laplace_mechanism",
    "discrete_gaussian_sigma_squared",
    "add_discrete_gaussian_noise",
    "discrete_gaussian_mechanism",
]


def _add_noise(value, draw):
    """``value`` más ``draw(size)``: un ``float`` para un escalar, un arreglo de su forma si no.

    ``value`` llega validado por ``check_noise_fits`` (un ``float`` o un arreglo ``float`` finito).
    """
    if isinstance(value, float):
        return value + float(draw(None))
    check_nonempty(value, name="valor")
    return value + draw(value.shape)


# ---------------------------------------------------------------- Laplace --


def laplace_scale(*, sensitivity, epsilon) -> float:
    """Escala del ruido de Laplace que da ε-DP a una consulta de sensibilidad Δ₁.

    Fórmula: b = Δ₁ / ε.

    Garantía: f(D) + Lap(b) satisface ε-privacidad diferencial pura.
    Referencia: Dwork, McSherry, Nissim y Smith (2006), "Calibrating Noise to
    Sensitivity in Private Data Analysis"; Dwork y Roth (2014), Teorema 3.6.

    Ejemplo del hospital: Δ = 1, ε = 0,5 → b = 2.
    """
    sensitivity = check_sensitivity(sensitivity)
    epsilon = check_epsilon(epsilon)
    return check_finite_result(sensitivity / epsilon, name="la escala b = Δ/ε",
                               inputs={"sensibilidad": sensitivity, "epsilon": epsilon})


def laplace_std(*, sensitivity, epsilon) -> float:
    """Desviación estándar del ruido de Laplace calibrado: √2 · Δ₁ / ε.

    Sirve para comparar con el gaussiano (cuya σ es su desviación estándar).
    El error absoluto esperado, en cambio, es E|Lap(b)| = b.
    """
    return math.sqrt(2.0) * laplace_scale(sensitivity=sensitivity, epsilon=epsilon)


def laplace_density(x, *, loc=0.0, scale):
    """Densidad de Laplace centrada en ``loc`` con escala b: exp(−|x − loc|/b) / (2b).

    Fórmula pura, vectorizada en ``x``. Con ella se verifica que la razón de
    densidades entre bases vecinas, p_D(s)/p_D'(s) = exp((|s − f(D')| − |s − f(D)|)/b),
    nunca supera e^{Δ/b} = e^ε.
    """
    loc = check_finite(loc, name="loc")
    scale = check_positive(scale, name="escala")
    x = check_finite(x, name="x")
    return np.exp(-np.abs(np.asarray(x) - loc) / scale) / (2.0 * scale)


def laplace_density_ratio_bound(*, epsilon) -> float:
    """Cota de la razón de densidades del mecanismo de Laplace: e^ε.

    Es la forma multiplicativa de la definición de ε-DP (Dwork y Roth 2014,
    Definición 2.4). Con ε = 0,5: e^0,5 ≈ 1,65.
    """
    epsilon = check_epsilon(epsilon)
    return compute_finite(lambda: math.exp(epsilon), name="e^ε", inputs={"epsilon": epsilon})


def add_laplace_noise(value, *, scale, rng):
    """Suma ruido Lap(scale) a ``value`` (escalar o arreglo), sin calibrar nada.

    Es la pieza de bajo nivel: la privacidad depende de que quien llama haya
    elegido ``scale`` ≥ Δ₁/ε con una sensibilidad global (no local, que filtra
    información a través de la escala misma). Devuelve ``float`` para un escalar
    y un arreglo de la misma forma para un arreglo.

    Se niega (``ValueError``) si el ruido no cabe en punto flotante: si
    ulp(max(máxᵢ |xᵢ|, b)) > b/64, el espaciado de los dobles cerca del valor
    se tragaría el ruido (con x = 2⁶⁰ y b = 2 se publicaría x exacto); si
    máxᵢ |xᵢ| + 64·b supera el mayor doble, la publicación podría ser ``inf``.
    Ver ``_checks.check_noise_resolution`` y ``_checks.check_noise_range``.
    """
    scale = check_positive(scale, name="escala")
    rng = check_rng(rng)
    value = check_noise_fits(value, scale=scale)
    return _add_noise(value, lambda size: rng.laplace(0.0, scale, size=size))


def laplace_mechanism(value, *, sensitivity, epsilon, rng):
    """Mecanismo de Laplace: publica f(D) + Lap(Δ₁/ε) en cada componente.

    Fórmula: M(D) = f(D) + Z, con Z_i ~ Lap(b) independientes y b = Δ₁/ε.

    Garantía: ε-privacidad diferencial pura si ``sensitivity`` es la
    sensibilidad L1 global de f (cuánto mueve una persona, en el peor caso, la
    suma de los cambios de todas las componentes).
    Referencia: Dwork, McSherry, Nissim y Smith (2006); Dwork y Roth (2014),
    Teorema 3.6.

    Limitaciones: ruido de punto flotante (ataque de Mironov 2012; la versión
    exacta es ``discrete_laplace_mechanism``); privacidad por registro, no por
    usuario. Se niega si el valor es tan grande frente a b que el redondeo se
    tragaría el ruido (ulp > b/64) o si la publicación podría ser ``inf``.

    Ejemplo: ``laplace_mechanism(42, sensitivity=1, epsilon=0.5, rng=np.random.default_rng(0))``
    publica el conteo del hospital con ruido Lap(2).
    """
    scale = laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    return add_laplace_noise(value, scale=scale, rng=rng)


# --------------------------------------------------------------- Gaussiano --


def gaussian_sigma_factor(*, delta) -> float:
    """Factor de la calibración Gaussiana clásica: √(2 ln(1,25/δ)).

    Con δ = 10⁻⁵ vale ≈ 4,84: es el precio que el gaussiano paga por δ en una
    consulta escalar. Referencia: Dwork y Roth (2014), Teorema A.1.
    """
    delta = check_delta(delta)
    return compute_finite(lambda: math.sqrt(2.0 * math.log(1.25 / delta)), name="el factor √(2 ln(1,25/δ))",
                          inputs={"delta": delta})


def gaussian_sigma(*, sensitivity, epsilon, delta) -> float:
    """Desviación estándar del mecanismo gaussiano clásico.

    Fórmula: σ = Δ₂ · √(2 ln(1,25/δ)) / ε.

    Garantía: f(D) + N(0, σ² I) satisface (ε, δ)-privacidad diferencial si
    Δ₂ es la sensibilidad L2 global de f y 0 < ε < 1.
    Referencia: Dwork y Roth (2014), Teorema A.1.

    Limitación: el análisis clásico exige ε < 1; para ε ≥ 1 esta función se
    niega (el gaussiano "analítico" de Balle y Wang 2018 cubre ese caso).
    """
    sensitivity = check_sensitivity(sensitivity, name="sensibilidad (L2)")
    epsilon = check_epsilon(epsilon)
    if epsilon >= 1.0:
        raise ValueError(
            "epsilon debe ser menor que 1 para el mecanismo gaussiano clásico: el análisis "
            "de Dwork y Roth (2014, Teorema A.1) solo vale para ε < 1; "
            f"se recibió {epsilon:g}"
        )
    return check_finite_result(sensitivity * gaussian_sigma_factor(delta=delta) / epsilon,
                               name="σ = Δ₂·√(2 ln(1,25/δ))/ε",
                               inputs={"sensibilidad (L2)": sensitivity, "epsilon": epsilon, "delta": delta})


def gaussian_density(x, *, loc=0.0, sigma):
    """Densidad normal N(loc, σ²): exp(−(x − loc)²/(2σ²)) / (σ√(2π)). Fórmula pura."""
    loc = check_finite(loc, name="loc")
    sigma = check_sigma(sigma)
    x = check_finite(x, name="x")
    def density():
        z = (np.asarray(x) - loc) / sigma
        return np.exp(-0.5 * z * z) / (sigma * math.sqrt(2.0 * math.pi))

    return compute_finite(density, name="la densidad", inputs={"sigma": sigma})


def add_gaussian_noise(value, *, sigma, rng):
    """Suma ruido N(0, σ²) independiente a ``value`` (escalar o arreglo), sin calibrar nada.

    Pieza de bajo nivel para quien ya eligió σ (por ejemplo, para contabilizar
    con Rényi DP k publicaciones con el mismo σ). Devuelve ``float`` para un
    escalar y un arreglo de la misma forma para un arreglo.

    Se niega si ulp(max(máxᵢ |xᵢ|, σ)) > σ/64 (el redondeo se tragaría el
    ruido) o si máxᵢ |xᵢ| + 64·σ supera el mayor doble (podría publicar ``inf``).
    """
    sigma = check_sigma(sigma)
    rng = check_rng(rng)
    value = check_noise_fits(value, scale=sigma, scale_name="σ")
    return _add_noise(value, lambda size: rng.normal(0.0, sigma, size=size))


def gaussian_mechanism(value, *, sensitivity, epsilon, delta, rng):
    """Mecanismo gaussiano: publica f(D) + N(0, σ² I) con la calibración clásica.

    Fórmula: M(D) = f(D) + Z, Z ~ N(0, σ² I_k), σ = Δ₂ √(2 ln(1,25/δ)) / ε.

    Garantía: (ε, δ)-privacidad diferencial para 0 < ε < 1, si ``sensitivity``
    es la sensibilidad L2 global de f. Frente a Laplace usa Δ₂ en vez de Δ₁:
    con k componentes movidas en 1, Δ₂ = √k contra Δ₁ = k.
    Referencia: Dwork y Roth (2014), Teorema A.1.

    Limitaciones: ε < 1; ruido de punto flotante (Mironov 2012; la versión
    exacta es ``discrete_gaussian_mechanism``); privacidad por registro. Se
    niega si ulp del valor > σ/64 o si la publicación podría ser ``inf``.
    """
    sigma = gaussian_sigma(sensitivity=sensitivity, epsilon=epsilon, delta=delta)
    return add_gaussian_noise(value, sigma=sigma, rng=rng)


# ----------------------------------------------------- discretos, exactos --
#
# Estos mecanismos suman ruido entero a un valor entero y lo muestrean
# exactamente: solo enteros de Python y bits uniformes de ``rng``, sin un solo
# número de punto flotante entre la semilla y la publicación. La distribución
# publicada es la de la fórmula, sin huecos, así que la garantía vale tal cual
# está escrita (Canonne, Kamath y Steinke 2020, "The Discrete Gaussian for
# Differential Privacy", NeurIPS 2020, Algoritmos 1 a 3).


class _RandomBits:
    """Bits uniformes e independientes de ``rng``, pedidos en bloques de 64 bits."""

    _WORDS_PER_REFILL = 16

    def __init__(self, rng: np.random.Generator):
        self._rng = rng
        self._pool = 0
        self._size = 0

    def take(self, count: int) -> int:
        """Un entero uniforme en {0, …, 2^count − 1}."""
        while self._size < count:
            words = self._rng.integers(0, 2**64, size=self._WORDS_PER_REFILL, dtype=np.uint64)
            # Word i lands at bits 64·i and up, the same on any byte order.
            block = int.from_bytes(words.astype("<u8", copy=False).tobytes(), "little")
            self._pool |= block << self._size
            self._size += 64 * self._WORDS_PER_REFILL
        value = self._pool & ((1 << count) - 1)
        self._pool >>= count
        self._size -= count
        return value

    def below(self, bound: int) -> int:
        """Un entero uniforme en {0, …, bound − 1}, por rechazo (acepta con probabilidad > 1/2)."""
        count = (bound - 1).bit_length()
        while True:
            value = self.take(count)
            if value < bound:
                return value


def _bernoulli(numerator: int, denominator: int, bits: _RandomBits) -> bool:
    """Bernoulli(n/d): un uniforme de {0, …, d − 1} cae por debajo de n."""
    return bits.below(denominator) < numerator


def _bernoulli_exp_minus_at_most_one(numerator: int, denominator: int, bits: _RandomBits) -> bool:
    """Bernoulli(e^{−γ}) para γ = n/d ∈ [0, 1] (CKS 2020, Algoritmo 1; von Neumann 1951).

    Se cuenta K = 1, 2, … mientras salga Bernoulli(γ/K) = 1. El primer fracaso
    llega en K con probabilidad γ^{K−1}/(K−1)! − γ^K/K!, así que
    P(K impar) = Σ_k (−γ)^k/k! = e^{−γ}.
    """
    k = 1
    while _bernoulli(numerator, denominator * k, bits):
        k += 1
    return k % 2 == 1


def _bernoulli_exp_minus(numerator: int, denominator: int, bits: _RandomBits) -> bool:
    """Bernoulli(e^{−γ}) para un racional γ = n/d ≥ 0, sin calcular ninguna exponencial.

    e^{−γ} = (e^{−1})^{⌊γ⌋} · e^{−(γ − ⌊γ⌋)}: el producto de ⌊γ⌋ + 1 Bernoulli
    independientes del caso γ ≤ 1; se corta en el primer cero (CKS 2020, §5.1).
    """
    whole, remainder = divmod(numerator, denominator)
    for _ in range(whole):
        if not _bernoulli_exp_minus_at_most_one(1, 1, bits):
            return False
    return _bernoulli_exp_minus_at_most_one(remainder, denominator, bits)


def _sample_discrete_laplace(scale: Fraction, bits: _RandomBits) -> int:
    """Una muestra de Lap_ℤ(t), P(Z = z) ∝ e^{−|z|/t}, con t = scale (CKS 2020, Algoritmo 2).

    Con t = n/s: U uniforme en {0, …, n − 1} aceptado con probabilidad e^{−U/n}
    y V geométrico con P(V = v) ∝ e^{−v} dan X = U + n·V con P(X = x) ∝ e^{−x/n};
    Y = ⌊X/s⌋ tiene P(Y = y) ∝ e^{−y·s/n}, y un signo al azar (descartando el
    «−0», que contaría el cero dos veces) da Z.
    """
    n, s = scale.numerator, scale.denominator
    while True:
        u = bits.below(n)
        if not _bernoulli_exp_minus(u, n, bits):
            continue
        v = 0
        while _bernoulli_exp_minus(1, 1, bits):
            v += 1
        magnitude = (u + n * v) // s
        negative = bits.take(1) == 1
        if negative and magnitude == 0:
            continue
        return -magnitude if negative else magnitude


def _sample_discrete_gaussian(sigma_squared: Fraction, bits: _RandomBits) -> int:
    """Una muestra de N_ℤ(0, σ²), P(Z = z) ∝ e^{−z²/(2σ²)} (CKS 2020, Algoritmo 3).

    Rechazo desde Lap_ℤ(t) con t = ⌊σ⌋ + 1: se acepta Y con probabilidad
    exp(−(|Y| − σ²/t)² / (2σ²)). Con σ² = p/q ese exponente es el racional
    (|Y|·q·t − p)² / (2·p·q·t²), y ⌊σ⌋ = isqrt(⌊p/q⌋).
    """
    p, q = sigma_squared.numerator, sigma_squared.denominator
    t = math.isqrt(p // q) + 1
    laplace_scale = Fraction(t)
    while True:
        y = _sample_discrete_laplace(laplace_scale, bits)
        gap = abs(y) * q * t - p
        if _bernoulli_exp_minus(gap * gap, 2 * p * q * t * t, bits):
            return y


def _add_integer_noise(value, sample):
    """``value`` (entero o arreglo de enteros) más ruido entero ``sample()`` en cada componente."""
    value = check_integers(value, name="valor")
    if isinstance(value, int):
        return value + sample()
    check_nonempty(value, name="valor")
    noisy = [x + sample() for x in value.ravel().tolist()]
    try:
        return np.array(noisy, dtype=np.int64).reshape(value.shape)
    except OverflowError:
        raise ValueError(
            "el resultado con ruido no cabe en enteros de 64 bits; publica cada componente "
            "como un int de Python (sin límite de tamaño) o usa menos ruido"
        ) from None


def discrete_laplace_scale(*, sensitivity, epsilon) -> Fraction:
    """Escala exacta del Laplace discreto que da ε-DP a una consulta entera de sensibilidad Δ₁.

    Fórmula: t = Δ₁/ε, como ``Fraction``. ``sensitivity`` es un entero positivo
    (una consulta entera cambia en enteros); ``epsilon``, un racional positivo:
    un ``float`` vale lo que se escribió (``0.5`` es 1/2, ``0.1`` es 1/10).

    Ejemplo del hospital: Δ₁ = 1, ε = 0,5 → t = 2.
    """
    sensitivity = check_positive_int(sensitivity, name="sensibilidad")
    epsilon = check_positive_rational(epsilon, name="epsilon")
    return Fraction(sensitivity) / epsilon


def add_discrete_laplace_noise(value, *, scale, rng):
    """Suma ruido Laplace discreto Lap_ℤ(t) exacto a un entero o a cada componente de un arreglo.

    Fórmula: P(Z = z) = (e^{1/t} − 1)/(e^{1/t} + 1) · e^{−|z|/t}, z ∈ ℤ; la
    escala t es un racional positivo (``scale``). Pieza de bajo nivel: la
    privacidad depende de que t ≥ Δ₁/ε.

    Muestreo exacto con enteros (Canonne, Kamath y Steinke 2020, Algoritmos 1
    y 2): ningún redondeo deja huecos en las salidas posibles. Devuelve un
    ``int`` de Python para un escalar y un arreglo ``int64`` de la misma forma
    para un arreglo.
    """
    scale = check_positive_rational(scale, name="escala")
    bits = _RandomBits(check_rng(rng))
    return _add_integer_noise(value, lambda: _sample_discrete_laplace(scale, bits))


def discrete_laplace_mechanism(value, *, sensitivity, epsilon, rng):
    """Mecanismo de Laplace discreto: publica f(D) + Lap_ℤ(Δ₁/ε) en cada componente, exacto.

    Fórmula: M(D) = f(D) + Z, Z_i independientes con P(Z_i = z) ∝ e^{−ε|z|/Δ₁}.

    Garantía: ε-privacidad diferencial pura, exacta, si f toma valores enteros
    y ``sensitivity`` es su sensibilidad L1 global: para salidas y y bases
    vecinas, P[M(D) = y] / P[M(D') = y] = exp(ε(‖y − f(D')‖₁ − ‖y − f(D)‖₁)/Δ₁)
    ≤ e^ε. El muestreo usa solo enteros, así que esa razón vale para cada salida
    posible (sin el ataque de punto flotante de Mironov 2012).
    Referencias: Ghosh, Roughgarden y Sundararajan (2009), "Universally
    Utility-Maximizing Privacy Mechanisms" (mecanismo geométrico); Canonne,
    Kamath y Steinke (2020), Algoritmos 1 y 2 (muestreo exacto).

    ``epsilon`` es racional (un ``float`` vale lo que se escribió: ``0.5`` es
    1/2). Ejemplo: ``discrete_laplace_mechanism(42, sensitivity=1, epsilon=0.5,
    rng=np.random.default_rng(0))`` publica el conteo del hospital con ruido
    Lap_ℤ(2).
    """
    scale = discrete_laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    return add_discrete_laplace_noise(value, scale=scale, rng=rng)


def discrete_gaussian_sigma_squared(*, sensitivity, rho) -> Fraction:
    """Parámetro σ² exacto del gaussiano discreto que da ρ-zCDP con sensibilidad L2 Δ₂.

    Fórmula: σ² = Δ₂² / (2ρ), como ``Fraction``. ``sensitivity`` es un entero
    positivo; ``rho``, un racional positivo (un ``float`` vale lo que se
    escribió). Ejemplo: Δ₂ = 1, ρ = 1/8 → σ² = 4.
    """
    sensitivity = check_positive_int(sensitivity, name="sensibilidad (L2)")
    rho = check_positive_rational(rho, name="rho")
    return Fraction(sensitivity * sensitivity) / (2 * rho)


def add_discrete_gaussian_noise(value, *, sigma_squared, rng):
    """Suma ruido gaussiano discreto N_ℤ(0, σ²) exacto a un entero o a cada componente de un arreglo.

    Fórmula: P(Z = z) = e^{−z²/(2σ²)} / Σ_{k∈ℤ} e^{−k²/(2σ²)}, z ∈ ℤ, con σ²
    racional positivo (``sigma_squared``); su varianza es a lo sumo σ².

    Muestreo exacto con enteros por rechazo desde el Laplace discreto
    (Canonne, Kamath y Steinke 2020, Algoritmo 3). Devuelve un ``int`` de
    Python para un escalar y un arreglo ``int64`` para un arreglo.
    """
    sigma_squared = check_positive_rational(sigma_squared, name="sigma_squared")
    bits = _RandomBits(check_rng(rng))
    return _add_integer_noise(value, lambda: _sample_discrete_gaussian(sigma_squared, bits))


def discrete_gaussian_mechanism(value, *, sensitivity, rho, rng):
    """Mecanismo gaussiano discreto: publica f(D) + N_ℤ(0, σ²) con σ² = Δ₂²/(2ρ), exacto.

    Garantía: ρ-privacidad diferencial concentrada (zCDP) si f toma valores
    enteros y ``sensitivity`` es su sensibilidad L2 global: la divergencia de
    Rényi de orden α entre las salidas de bases vecinas es a lo sumo αρ, igual
    que con ruido continuo (Canonne, Kamath y Steinke 2020). Implica
    (ε, δ)-DP con ε = ρ + 2√(ρ ln(1/δ)) para todo δ > 0 (Bun y Steinke 2016,
    "Concentrated Differential Privacy: Simplifications, Extensions, and Lower
    Bounds", Proposición 1.3).

    Para una consulta vectorial con Δ₂ = √k (no entero), usar
    ``add_discrete_gaussian_noise`` con σ² = k/(2ρ).
    """
    sigma_squared = discrete_gaussian_sigma_squared(sensitivity=sensitivity, rho=rho)
    return add_discrete_gaussian_noise(value, sigma_squared=sigma_squared, rng=rng)
