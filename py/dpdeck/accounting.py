"""Contabilidad del presupuesto de privacidad: fórmulas puras, sin azar.

Tres formas de llevar la cuenta del mismo mecanismo repetido:

* composición secuencial (los ε se suman; Dwork y Roth 2014, Teorema 3.16);
* composición avanzada (crece como √k; Dwork, Rothblum y Vadhan 2010;
  Dwork y Roth 2014, Teorema 3.20);
* Rényi DP (la divergencia de Rényi se suma sin pérdida y se convierte a
  (ε, δ) una sola vez al final; Mironov 2017).

Y un libro de cuentas, ``PrivacyLedger``, al estilo de los eventos de
``dp_accounting``: cada consulta privada anota qué publicó, con qué mecanismo,
qué sensibilidad y qué ruido (``Release``), y el libro compone esas
publicaciones con el teorema que se elija. Como el ε de cada publicación se
deduce del ruido que de verdad se usó, un cálculo de ruido equivocado aparece
en el total.

El ejemplo de la clase: el mecanismo gaussiano con σ = 20, Δ = 1 repetido
k = 10⁴ veces con δ = 10⁻⁵ cuesta ε ≈ 3236 con composición secuencial,
≈ 1444 con composición avanzada y ≈ 36,5 (en α ≈ 1,96) con Rényi DP.

Las curvas de Rényi DP y su conversión a (ε, δ) están en ``dpdeck.renyi``;
este módulo las reexporta, así que ``from dpdeck.accounting import rdp_to_dp``
sigue valiendo.

Todas las cotas son para privacidad por registro (una fila por persona) y
suponen que el ruido se muestrea exactamente; la implementación en punto
flotante tiene sus propias fugas (Mironov 2012).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np

from ._checks import (
    check_delta,
    check_epsilon,
    check_finite,
    check_nonempty,
    check_nonnegative,
    check_positive,
    check_positive_int,
    check_probability,
    check_sensitivity,
    compute_finite,
    check_sigma,
    describe,
)
from .numbers import format_power_of_ten, format_significant
# Rényi DP lives in its own module; its names are re-exported here, where the slides import them.
from .renyi import (
    CONVERSIONS,
    DEFAULT_ALPHAS,
    RdpGridWarning,
    gaussian_rdp,
    gaussian_rdp_epsilon,
    gaussian_rdp_optimal_alpha,
    laplace_rdp,
    rdp_to_dp,
)

__all__ = [
    "DEFAULT_ALPHAS",
    "CONVERSIONS",
    "sequential_composition",
    "parallel_composition",
    "advanced_composition",
    "advanced_composition_simplified",
    "gaussian_rdp",
    "rdp_to_dp",
    "gaussian_rdp_optimal_alpha",
    "gaussian_rdp_epsilon",
    "gaussian_classic_epsilon",
    "gaussian_sequential_epsilon",
    "gaussian_advanced_epsilon",
    "compare_gaussian_accountants",
    "compute_noise_multiplier",
    "amplify_by_subsampling",
    "laplace_rdp",
    "gaussian_exact_delta",
    "gaussian_exact_epsilon",
    "RdpGridWarning",
    "THEOREMS",
    "Release",
    "PrivacyLedger",
]

#: Teoremas con que ``PrivacyLedger.total`` compone sus publicaciones.
THEOREMS = ("sequential", "rdp")


# ------------------------------------------------------------ composición --


def _check_epsilons(epsilons) -> np.ndarray:
    array = np.atleast_1d(check_finite(epsilons, name="epsilons"))
    check_nonempty(array, name="epsilons")
    if array.ndim != 1:
        raise ValueError(f"epsilons debe ser una lista de números; se recibió forma {array.shape}")
    # One comparison for the whole list (a cell composes 100 000 releases); the
    # first bad value is named by the usual checker.
    bad = array <= 0
    if bad.any():
        check_epsilon(array[bad.argmax()], name="cada epsilon")
    return array


def sequential_composition(epsilons) -> float:
    """Presupuesto total de publicar varios resultados ε_i-DP sobre los mismos datos.

    Fórmula: ε = Σ ε_i.

    Garantía: publicar M_1(D), …, M_k(D) es (Σ ε_i)-DP, aunque cada M_i se
    elija mirando las salidas anteriores.
    Referencia: Dwork y Roth (2014), Teorema 3.16.

    Ejemplo del hospital: tres consultas con ε = 0,5 gastan 1,5.
    """
    array = _check_epsilons(epsilons)
    return compute_finite(lambda: float(np.sum(array)), name="la suma de los ε", inputs={"epsilons": epsilons})


def parallel_composition(epsilons) -> float:
    """Presupuesto de consultas sobre subconjuntos disjuntos de los datos.

    Fórmula: ε = max ε_i.

    Garantía: si cada persona cae en un solo subconjunto (una barra del
    histograma), el conjunto de publicaciones es (max ε_i)-DP.
    Referencia: McSherry (2009), "Privacy Integrated Queries", SIGMOD.
    """
    return float(np.max(_check_epsilons(epsilons)))


def advanced_composition(*, epsilon, k, delta_prime) -> float:
    """Cota de composición avanzada de Dwork–Rothblum–Vadhan, forma completa.

    Fórmula: ε' = ε √(2k ln(1/δ')) + k ε (e^ε − 1).

    Garantía: la composición adaptativa de k mecanismos (ε, δ)-DP es
    (ε', kδ + δ')-DP para cualquier δ' > 0 que elijamos.
    Referencia: Dwork, Rothblum y Vadhan (2010), "Boosting and Differential
    Privacy", FOCS; Dwork y Roth (2014), Teorema 3.20.

    Relación con la diapositiva: la clase escribe ε' = 2ε√(2k ln(1/δ')). Es el
    Corolario 3.21 de Dwork y Roth leído al revés: cuando e^ε − 1 ≤
    √(2 ln(1/δ')/k) (ε pequeño frente a 1/√k; en particular si esa ε' es < 1),
    el segundo término no supera al primero y la forma completa queda por
    debajo de 2ε√(2k ln(1/δ')). Fuera de ese régimen (ε por paso grande, como el
    gaussiano con σ = 20 repetido 10⁴ veces, ε ≈ 0,33 por paso) el término
    kε(e^ε − 1) domina y la forma de la diapositiva subestima el costo; por eso
    aquí se usa la forma completa (ver ``advanced_composition_simplified``).
    """
    epsilon = check_epsilon(epsilon)
    k = check_positive_int(k, name="k")
    delta_prime = check_delta(delta_prime, name="delta_prime")
    return compute_finite(
        lambda: epsilon * math.sqrt(2.0 * k * math.log(1.0 / delta_prime)) + k * epsilon * math.expm1(epsilon),
        name="ε' de la composición avanzada", inputs={"epsilon": epsilon, "k": k, "delta_prime": delta_prime})


def advanced_composition_simplified(*, epsilon, k, delta_prime) -> float:
    """Forma simplificada de la diapositiva: ε' = 2ε √(2k ln(1/δ')).

    Es una cota válida (≥ la forma completa de ``advanced_composition``) solo
    si e^ε − 1 ≤ √(2 ln(1/δ')/k); fuera de ese régimen subestima. Se ofrece
    para reproducir la fórmula de la clase, no para contabilizar.
    Referencia: Dwork y Roth (2014), Corolario 3.21.
    """
    epsilon = check_epsilon(epsilon)
    k = check_positive_int(k, name="k")
    delta_prime = check_delta(delta_prime, name="delta_prime")
    return compute_finite(lambda: 2.0 * epsilon * math.sqrt(2.0 * k * math.log(1.0 / delta_prime)),
                          name="ε' de la composición avanzada", inputs={"epsilon": epsilon, "k": k,
                                                                        "delta_prime": delta_prime})


# ------------------------------------- el gaussiano con las cuentas (ε, δ) --


def gaussian_classic_epsilon(*, sigma, delta, sensitivity=1.0) -> float:
    """ε que la calibración clásica asigna a una publicación gaussiana con ruido σ.

    Fórmula (inversa de σ = Δ√(2 ln(1,25/δ))/ε): ε = Δ √(2 ln(1,25/δ)) / σ.

    Garantía: f(D) + N(0, σ²) es (ε, δ)-DP, solo si el ε resultante es < 1.
    Referencia: Dwork y Roth (2014), Teorema A.1. Si σ es tan pequeño que ε ≥ 1,
    el teorema no aplica y la función se niega.
    """
    sigma = check_sigma(sigma)
    delta = check_delta(delta)
    sensitivity = check_sensitivity(sensitivity)
    epsilon = sensitivity * math.sqrt(2.0 * math.log(1.25 / delta)) / sigma
    if epsilon >= 1.0:
        raise ValueError(
            f"con sigma={sigma:g}, delta={delta:g} y sensibilidad={sensitivity:g} la calibración "
            f"clásica daría epsilon={epsilon:.3g} ≥ 1, donde el análisis de Dwork y Roth (2014, "
            "Teorema A.1) no vale; use más ruido o la contabilidad de Rényi DP"
        )
    return epsilon


def gaussian_sequential_epsilon(*, sigma, steps, delta, sensitivity=1.0) -> float:
    """ε de k publicaciones gaussianas con composición secuencial y δ repartido por igual.

    Fórmula: cada paso es (ε_1, δ/k)-DP con ε_1 = Δ√(2 ln(1,25k/δ))/σ, y el
    total es (k ε_1, δ)-DP.
    Referencia: Dwork y Roth (2014), Teorema A.1 y Teorema 3.16.

    Ejemplo de la clase: σ = 20, k = 10⁴, δ = 10⁻⁵ → ε ≈ 3236.
    """
    steps = check_positive_int(steps, name="steps")
    delta = check_delta(delta)
    per_step = gaussian_classic_epsilon(sigma=sigma, delta=delta / steps, sensitivity=sensitivity)
    return steps * per_step


def gaussian_advanced_epsilon(*, sigma, steps, delta, sensitivity=1.0, delta_share=0.5) -> float:
    """ε de k publicaciones gaussianas con composición avanzada (forma completa).

    Reparto de δ: δ' = ``delta_share``·δ para el término de la composición y el
    resto, (1 − delta_share)·δ, repartido por igual entre los k pasos; así
    kδ_paso + δ' = δ. Cada paso es (ε_1, δ_paso)-DP con
    ε_1 = Δ√(2 ln(1,25/δ_paso))/σ, y el total es (ε', δ)-DP con
    ε' = ε_1√(2k ln(1/δ')) + kε_1(e^{ε_1} − 1).

    Referencia: Dwork y Roth (2014), Teoremas A.1 y 3.20.

    Ejemplo de la clase: σ = 20, k = 10⁴, δ = 10⁻⁵, mitad y mitad → ε ≈ 1444,
    entre la composición secuencial (≈ 3236) y Rényi DP (≈ 36,5).
    """
    steps = check_positive_int(steps, name="steps")
    delta = check_delta(delta)
    share = check_finite(delta_share, name="delta_share")
    if not 0.0 < share < 1.0:
        raise ValueError(f"delta_share debe estar en el intervalo abierto (0, 1); se recibió {share:g}")
    per_step_delta = (1.0 - share) * delta / steps
    per_step = gaussian_classic_epsilon(sigma=sigma, delta=per_step_delta, sensitivity=sensitivity)
    return advanced_composition(epsilon=per_step, k=steps, delta_prime=share * delta)


def compare_gaussian_accountants(*, sigma, steps, delta, sensitivity=1.0) -> dict:
    """Las tres contabilidades del mismo gaussiano repetido, lado a lado.

    Devuelve un diccionario con ``sequential`` (composición secuencial),
    ``advanced`` (composición avanzada), ``rdp`` (ε con la conversión clásica,
    la de la diapositiva), ``rdp_tight`` (conversión de Balle et al. 2020) y
    ``alpha`` (orden óptimo de la clásica).
    """
    rdp_epsilon, alpha = gaussian_rdp_epsilon(sigma=sigma, steps=steps, delta=delta, sensitivity=sensitivity)
    tight_epsilon, _ = gaussian_rdp_epsilon(
        sigma=sigma, steps=steps, delta=delta, sensitivity=sensitivity, conversion="tight"
    )
    return {
        "sequential": gaussian_sequential_epsilon(sigma=sigma, steps=steps, delta=delta, sensitivity=sensitivity),
        "advanced": gaussian_advanced_epsilon(sigma=sigma, steps=steps, delta=delta, sensitivity=sensitivity),
        "rdp": rdp_epsilon,
        "rdp_tight": tight_epsilon,
        "alpha": alpha,
    }


def compute_noise_multiplier(*, epsilon, delta, steps, accountant="sequential") -> float:
    """Multiplicador de ruido z = σ/Δ con el que k = ``steps`` publicaciones gaussianas cuestan (ε, δ).

    Es la inversa, en forma cerrada, de la contabilidad elegida (``THEOREMS``):

    * ``"sequential"``: cada paso con ε/k y δ/k (gaussiano clásico) y los k
      sumados: z = k·√(2 ln(1,25·k/δ))/ε. Dwork y Roth (2014), Teorema A.1 y
      Teorema 3.16; exige ε/k < 1, como el teorema.
    * ``"rdp"``: Rényi DP con la conversión clásica y el orden óptimo: con
      ρ = k/(2z²) el costo es ε = ρ + 2√(ρ ln(1/δ)) (ver
      ``gaussian_rdp_optimal_alpha``), así que √ρ = √(ln(1/δ) + ε) − √(ln(1/δ))
      y z = √(k/(2ρ)). Mironov (2017), Proposiciones 1 y 3.

    Garantía: f(D) + N(0, (zΔ)² I) publicado k veces, con f de sensibilidad
    L2 = Δ, es (ε, δ)-DP según ese teorema. Es lo que se calibra en el
    descenso privado (capítulo 5) y en las rondas de DP-FedAvg (capítulo 6).
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    steps = check_positive_int(steps, name="steps")
    if accountant == "sequential":
        if epsilon / steps >= 1.0:
            raise ValueError(
                f"epsilon/steps debe ser menor que 1 para el gaussiano clásico; se recibió "
                f"epsilon={describe(epsilon)} con steps={steps}. Use más pasos, un ε menor o accountant='rdp'."
            )
        return steps * math.sqrt(2.0 * math.log(1.25 * steps / delta)) / epsilon
    if accountant == "rdp":
        log_inverse_delta = math.log(1.0 / delta)
        # √(L + ε) − √L escrito sin restar dos números casi iguales.
        root_rho = epsilon / (math.sqrt(log_inverse_delta + epsilon) + math.sqrt(log_inverse_delta))
        return math.sqrt(steps / 2.0) / root_rho
    raise ValueError(f"accountant debe ser uno de {THEOREMS}; se recibió {describe(accountant)}")


# ------------------------------------------------ amplificación por submuestreo --


def amplify_by_subsampling(*, epsilon, sampling_probability, delta=0.0) -> tuple:
    """(ε, δ) de un mecanismo aplicado a una muestra de Poisson secreta de los datos.

    Fórmula: si M es (ε, δ)-DP y cada persona entra a la muestra con
    probabilidad q, de forma independiente y sin que nadie sepa quién entró,
    M(muestra) es (ln(1 + q(e^ε − 1)), qδ)-DP para bases vecinas que agregan o
    quitan a una persona.

    Para ε pequeño, ln(1 + q(e^ε − 1)) ≈ qε: la amplificación «divide ε por
    1/q». Para ε grande no: con q = 0,01 el ε amplificado es 1,7 veces qε con
    ε = 1 y 18 veces con ε = 5. Si la muestra se publica (o se puede deducir),
    no hay amplificación.
    Referencias: Li, Qardaji y Su (2012), "On Sampling, Anonymization, and
    Differential Privacy"; Balle, Barthe y Gaboardi (2018), "Privacy
    Amplification by Subsampling: Tight Analyses via Couplings and
    Divergences", NeurIPS, Teorema 8.

    Devuelve ``(epsilon, delta)`` amplificados.
    """
    epsilon = check_epsilon(epsilon)
    q = check_probability(sampling_probability, name="sampling_probability")
    delta = 0.0 if delta == 0 else check_delta(delta)
    return math.log1p(q * math.expm1(epsilon)), q * delta



# ---------------------------------------------------- Gaussiano: la cuenta exacta --


def _log_normal_cdf(x: float) -> float:
    """ln Φ(x), estable también en la cola izquierda lejana (donde Φ(x) no cabe en un float)."""
    if x > -30.0:
        return math.log(0.5 * math.erfc(-x / math.sqrt(2.0)))
    # Desarrollo asintótico de Mills: Φ(x) ≈ φ(x)/|x| · (1 − 1/x² + 3/x⁴).
    return -0.5 * x * x - math.log(-x) - 0.5 * math.log(2.0 * math.pi) + math.log1p(-1 / x**2 + 3 / x**4)


def gaussian_exact_delta(*, epsilon, sigma, sensitivity=1.0, steps=1) -> float:
    """δ exacto con que k publicaciones gaussianas son (ε, δ)-DP: ninguna cota, la curva verdadera.

    Fórmula, con μ = √k·Δ/σ (k gaussianos con el mismo σ equivalen a uno solo
    con ruido σ/√k):
        δ(ε) = Φ(μ/2 − ε/μ) − e^ε · Φ(−μ/2 − ε/μ).

    Es el menor δ posible: el mecanismo no es (ε, δ')-DP para ningún δ' < δ(ε).
    Sirve de árbitro para las contabilidades: una cota (ε, δ) correcta cumple
    δ(ε) ≤ δ.
    Referencia: Balle y Wang (2018), "Improving the Gaussian Mechanism for
    Differential Privacy: Analytical Calibration and Optimal Denoising", ICML,
    Teorema 8.
    """
    epsilon = check_nonnegative(epsilon, name="epsilon")
    sigma = check_sigma(sigma)
    sensitivity = check_sensitivity(sensitivity)
    steps = check_positive_int(steps, name="steps")

    def compute_delta():
        mu = math.sqrt(steps) * sensitivity / sigma
        first = _log_normal_cdf(mu / 2 - epsilon / mu)
        second = epsilon + _log_normal_cdf(-mu / 2 - epsilon / mu)
        if second >= first:
            return 0.0
        return math.exp(first) * -math.expm1(second - first)

    return compute_finite(compute_delta, name="δ(ε)", inputs={"epsilon": epsilon, "sigma": sigma,
                                                     "sensibilidad": sensitivity, "steps": steps})


def gaussian_exact_epsilon(*, delta, sigma, sensitivity=1.0, steps=1) -> float:
    """El menor ε con que k publicaciones gaussianas son (ε, δ)-DP (inversa de ``gaussian_exact_delta``).

    δ(ε) decrece con ε: se busca por bisección el ε con δ(ε) = δ, con error
    relativo menor que 10⁻⁹. Para σ = 20, k = 10⁴ y δ = 10⁻⁵ da ≈ 33,1: las
    tres contabilidades de la clase (≈ 3236, ≈ 1444 y ≈ 36,5) son cotas por
    encima de este valor.
    Referencia: Balle y Wang (2018), Teorema 8.
    """
    delta = check_delta(delta)
    low, high = 0.0, 1.0
    while gaussian_exact_delta(epsilon=high, sigma=sigma, sensitivity=sensitivity, steps=steps) > delta:
        low, high = high, 2.0 * high
    if gaussian_exact_delta(epsilon=0.0, sigma=sigma, sensitivity=sensitivity, steps=steps) <= delta:
        return 0.0
    while high - low > 1e-9 * high:
        middle = 0.5 * (low + high)
        if gaussian_exact_delta(epsilon=middle, sigma=sigma, sensitivity=sensitivity, steps=steps) > delta:
            low = middle
        else:
            high = middle
    return high


# ----------------------------------------------------------- libro de cuentas --

_MECHANISM_NAMES = {"laplace": "Laplace", "gaussian": "Gauss"}


@dataclass(frozen=True)
class Release:
    """Una publicación anotada en el libro: qué se publicó, con qué mecanismo y con qué ruido.

    * ``what``: la consulta, en palabras («suma de edades recortada a 90»);
    * ``mechanism``: ``"laplace"`` (ruido de escala ``noise`` = b) o
      ``"gaussian"`` (desviación estándar ``noise`` = σ);
    * ``sensitivity``: la sensibilidad global (L1 para Laplace, L2 para Gauss);
    * ``delta``: solo gaussiano, el δ de su calibración clásica;
    * ``count``: cuántas veces se publicó lo mismo con ese ruido (k pasos).

    El ε no se anota: se deduce del ruido (``epsilon``), así que un ruido mal
    calculado se ve en la cuenta. Es la idea de los eventos de dp_accounting
    (``LaplaceDpEvent``, ``GaussianDpEvent``, ``SelfComposedDpEvent``).
    """

    what: str
    mechanism: str
    sensitivity: float
    noise: float
    delta: float = 0.0
    count: int = 1

    def __post_init__(self):
        if self.mechanism not in _MECHANISM_NAMES:
            raise ValueError(
                f"mechanism debe ser 'laplace' o 'gaussian'; se recibió {describe(self.mechanism)}"
            )
        object.__setattr__(self, "sensitivity", check_sensitivity(self.sensitivity))
        object.__setattr__(self, "noise", check_positive(self.noise, name="noise"))
        object.__setattr__(self, "count", check_positive_int(self.count, name="count"))
        if self.mechanism == "gaussian":
            object.__setattr__(self, "delta", check_delta(self.delta))
        elif self.delta != 0:
            raise ValueError(f"una publicación de Laplace tiene δ = 0; se recibió {describe(self.delta)}")

    @property
    def epsilon(self) -> float:
        """ε de una de las ``count`` publicaciones, deducido de su ruido.

        Laplace: Δ₁/b (Dwork y Roth 2014, Teorema 3.6). Gauss: la calibración
        clásica invertida, Δ₂√(2 ln(1,25/δ))/σ, válida solo si da menos de 1
        (Teorema A.1); si no, la composición secuencial no tiene un ε que
        sumar y se dice.
        """
        if self.mechanism == "laplace":
            return self.sensitivity / self.noise
        return gaussian_classic_epsilon(sigma=self.noise, delta=self.delta, sensitivity=self.sensitivity)

    def rdp(self, alphas) -> np.ndarray:
        """Curva de Rényi DP de las ``count`` publicaciones juntas, en los órdenes ``alphas``."""
        if self.mechanism == "laplace":
            curve = laplace_rdp(alpha=alphas, scale=self.noise, sensitivity=self.sensitivity)
        else:
            curve = gaussian_rdp(alpha=alphas, sigma=self.noise, sensitivity=self.sensitivity)
        return self.count * np.asarray(curve)


class PrivacyLedger:
    """Libro de cuentas del presupuesto: anota cada publicación y compone el total.

    Uso::

        libro = PrivacyLedger()
        queries.private_mean(edades, upper=90, epsilon=1, rng=rng, ledger=libro)
        print(libro)                 # una línea por publicación y el total
        libro.total()                # (ε, δ) por composición secuencial
        libro.total(theorem="rdp", delta=1e-5)

    Las consultas de ``dpdeck.queries`` y el descenso privado de
    ``dpdeck.learning`` anotan aquí lo que publican si reciben
    ``ledger=libro``. El libro solo suma: no decide nada ni mira los datos.
    """

    def __init__(self):
        self._releases: list[Release] = []

    @property
    def releases(self) -> tuple:
        """Las publicaciones anotadas, en orden."""
        return tuple(self._releases)

    def record(self, release: Release) -> Release:
        """Anota una publicación ya hecha y la devuelve."""
        if not isinstance(release, Release):
            raise ValueError(f"release debe ser un Release; se recibió {describe(release)}")
        self._releases.append(release)
        return release

    def record_laplace(self, what: str, *, sensitivity, scale, count=1) -> Release:
        """Anota ``count`` publicaciones f(D) + Lap(``scale``) de sensibilidad L1 ``sensitivity``."""
        return self.record(Release(what, "laplace", sensitivity, scale, 0.0, count))

    def record_gaussian(self, what: str, *, sensitivity, sigma, delta, count=1) -> Release:
        """Anota ``count`` publicaciones f(D) + N(0, σ²I) de sensibilidad L2 ``sensitivity``.

        ``delta`` es el δ con que se calibró cada una (gaussiano clásico).
        """
        return self.record(Release(what, "gaussian", sensitivity, sigma, delta, count))

    def total(self, *, theorem="sequential", delta=None) -> tuple:
        """(ε, δ) del conjunto de las publicaciones anotadas, con el teorema elegido.

        * ``"sequential"``: ε = Σ kᵢεᵢ y δ = Σ kᵢδᵢ (Dwork y Roth 2014,
          Teorema 3.16). ``delta`` no se usa.
        * ``"rdp"``: se suman las curvas de Rényi de todas las publicaciones
          (Laplace y Gauss) y se convierten una vez a (ε, ``delta``) con la
          conversión clásica, minimizando sobre ``DEFAULT_ALPHAS`` (Mironov
          2017, Proposiciones 1 y 3). Exige ``delta``. Si todas son de
          Laplace, el orden α → ∞ (la suma de sus ε puros) también cuenta.

        Un libro vacío cuesta (0, 0).
        """
        if theorem not in THEOREMS:
            raise ValueError(f"theorem debe ser 'sequential' o 'rdp'; se recibió {describe(theorem)}")
        if not self._releases:
            return 0.0, 0.0
        if theorem == "sequential":
            epsilon = math.fsum(release.count * release.epsilon for release in self._releases)
            spent = math.fsum(release.count * release.delta for release in self._releases)
            return epsilon, spent
        if delta is None:
            raise ValueError("theorem='rdp' necesita el delta al que se convierte, por ejemplo delta=1e-5")
        delta = check_delta(delta)
        curve = sum(release.rdp(DEFAULT_ALPHAS) for release in self._releases)
        if any(release.mechanism == "gaussian" for release in self._releases):
            epsilon, _ = rdp_to_dp(rdp=curve, alphas=DEFAULT_ALPHAS, delta=delta)
            return epsilon, delta
        # Solo Laplace: la curva tiende a Σ kᵢεᵢ cuando α → ∞, donde la conversión
        # no cuesta nada; ese «orden infinito» es la composición de la DP pura.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RdpGridWarning)
            epsilon, _ = rdp_to_dp(rdp=curve, alphas=DEFAULT_ALPHAS, delta=delta)
        pure, _ = self.total()
        return (pure, 0.0) if pure <= epsilon else (epsilon, delta)

    def format(self, *, theorem="sequential", delta=None) -> str:
        """El libro como tabla de texto en español: una línea por publicación y el total."""
        header = ("publicación", "mecanismo", "Δ", "ruido", "ε", "δ")
        rows = [header]
        for release in self._releases:
            times = f"{release.count} × " if release.count > 1 else ""
            # The Laplace noise by its name: in chapter 3, b is the clipping bound.
            noise = "escala" if release.mechanism == "laplace" else "σ ="
            rows.append((
                times + release.what,
                _MECHANISM_NAMES[release.mechanism],
                format_significant(release.sensitivity),
                f"{noise} {format_significant(release.noise)}",
                format_significant(release.epsilon),
                "0" if release.delta == 0 else format_power_of_ten(release.delta),
            ))
        widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
        lines = ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows]
        epsilon, spent = self.total(theorem=theorem, delta=delta)
        name = "composición secuencial" if theorem == "sequential" else "Rényi DP"
        spent_text = "0" if spent == 0 else format_power_of_ten(spent)
        lines.append(f"total ({name}): ε = {format_significant(epsilon)}, δ = {spent_text}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.format()

    def __repr__(self) -> str:
        return f"PrivacyLedger({len(self._releases)} publicaciones)"
