"""Mecanismos de Laplace y Gaussiano: fórmulas de calibración y muestreo.

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
  discreto exacto (Canonne, Kamath y Steinke 2020).
* Privacidad por registro (record-level): la garantía protege a una fila; una
  persona con varias filas necesita una sensibilidad por usuario.
* El Gaussiano clásico (Dwork y Roth 2014, Teorema A.1) solo vale para ε < 1.
"""

from __future__ import annotations

import math

import numpy as np

from ._checks import (
    check_delta,
    check_epsilon,
    check_finite,
    check_noise_range,
    check_noise_resolution,
    check_nonempty,
    check_positive,
    check_rng,
    check_sensitivity,
    check_sigma,
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
]


def _add_noise(value, draw):
    """``value`` más ``draw(size)``: un ``float`` para un escalar, un arreglo de su forma si no."""
    value = check_finite(value, name="valor")
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
    return sensitivity / epsilon


def laplace_std(*, sensitivity, epsilon) -> float:
    """Desviación estándar del ruido de Laplace calibrado: √2 · Δ₁ / ε.

    Sirve para comparar con el Gaussiano (cuya σ es su desviación estándar).
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
    return math.exp(check_epsilon(epsilon))


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
    check_noise_resolution(value, scale=scale)
    check_noise_range(value, scale=scale)
    return _add_noise(value, lambda size: rng.laplace(0.0, scale, size=size))


def laplace_mechanism(value, *, sensitivity, epsilon, rng):
    """Mecanismo de Laplace: publica f(D) + Lap(Δ₁/ε) en cada componente.

    Fórmula: M(D) = f(D) + Z, con Z_i ~ Lap(b) independientes y b = Δ₁/ε.

    Garantía: ε-privacidad diferencial pura si ``sensitivity`` es la
    sensibilidad L1 global de f (cuánto mueve una persona, en el peor caso, la
    suma de los cambios de todas las componentes).
    Referencia: Dwork, McSherry, Nissim y Smith (2006); Dwork y Roth (2014),
    Teorema 3.6.

    Limitaciones: ruido de punto flotante (ataque de Mironov 2012); privacidad
    por registro, no por usuario. Se niega si el valor es tan grande frente a
    b que el redondeo se tragaría el ruido (ulp > b/64) o si la publicación
    podría ser ``inf``.

    Ejemplo: ``laplace_mechanism(42, sensitivity=1, epsilon=0.5, rng=np.random.default_rng(0))``
    publica el conteo del hospital con ruido Lap(2).
    """
    scale = laplace_scale(sensitivity=sensitivity, epsilon=epsilon)
    return add_laplace_noise(value, scale=scale, rng=rng)


# --------------------------------------------------------------- Gaussiano --


def gaussian_sigma_factor(*, delta) -> float:
    """Factor de la calibración Gaussiana clásica: √(2 ln(1,25/δ)).

    Con δ = 10⁻⁵ vale ≈ 4,84: es el precio que el Gaussiano paga por δ en una
    consulta escalar. Referencia: Dwork y Roth (2014), Teorema A.1.
    """
    delta = check_delta(delta)
    return math.sqrt(2.0 * math.log(1.25 / delta))


def gaussian_sigma(*, sensitivity, epsilon, delta) -> float:
    """Desviación estándar del mecanismo Gaussiano clásico.

    Fórmula: σ = Δ₂ · √(2 ln(1,25/δ)) / ε.

    Garantía: f(D) + N(0, σ² I) satisface (ε, δ)-privacidad diferencial si
    Δ₂ es la sensibilidad L2 global de f y 0 < ε < 1.
    Referencia: Dwork y Roth (2014), Teorema A.1.

    Limitación: el análisis clásico exige ε < 1; para ε ≥ 1 esta función se
    niega (el Gaussiano "analítico" de Balle y Wang 2018 cubre ese caso).
    """
    sensitivity = check_sensitivity(sensitivity, name="sensibilidad (L2)")
    epsilon = check_epsilon(epsilon)
    if epsilon >= 1.0:
        raise ValueError(
            "epsilon debe ser menor que 1 para el mecanismo Gaussiano clásico: el análisis "
            "de Dwork y Roth (2014, Teorema A.1) solo vale para ε < 1; "
            f"se recibió {epsilon:g}"
        )
    return sensitivity * gaussian_sigma_factor(delta=delta) / epsilon


def gaussian_density(x, *, loc=0.0, sigma):
    """Densidad normal N(loc, σ²): exp(−(x − loc)²/(2σ²)) / (σ√(2π)). Fórmula pura."""
    loc = check_finite(loc, name="loc")
    sigma = check_sigma(sigma)
    x = check_finite(x, name="x")
    z = (np.asarray(x) - loc) / sigma
    return np.exp(-0.5 * z * z) / (sigma * math.sqrt(2.0 * math.pi))


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
    check_noise_resolution(value, scale=sigma, scale_name="σ")
    check_noise_range(value, scale=sigma, scale_name="σ")
    return _add_noise(value, lambda size: rng.normal(0.0, sigma, size=size))


def gaussian_mechanism(value, *, sensitivity, epsilon, delta, rng):
    """Mecanismo Gaussiano: publica f(D) + N(0, σ² I) con la calibración clásica.

    Fórmula: M(D) = f(D) + Z, Z ~ N(0, σ² I_k), σ = Δ₂ √(2 ln(1,25/δ)) / ε.

    Garantía: (ε, δ)-privacidad diferencial para 0 < ε < 1, si ``sensitivity``
    es la sensibilidad L2 global de f. Frente a Laplace usa Δ₂ en vez de Δ₁:
    con k componentes movidas en 1, Δ₂ = √k contra Δ₁ = k.
    Referencia: Dwork y Roth (2014), Teorema A.1.

    Limitaciones: ε < 1; ruido de punto flotante (Mironov 2012); privacidad por
    registro. Se niega si ulp del valor > σ/64 o si la publicación podría ser
    ``inf``.
    """
    sigma = gaussian_sigma(sensitivity=sensitivity, epsilon=epsilon, delta=delta)
    return add_gaussian_noise(value, sigma=sigma, rng=rng)
