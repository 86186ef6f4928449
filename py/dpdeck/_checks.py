"""Validadores de parámetros: uno por parámetro, con mensajes en español.

Cada función pública del paquete valida sus argumentos en la frontera con estas
funciones. Todas lanzan ``ValueError`` con un mensaje que nombra el parámetro y
el valor recibido, por ejemplo::

    epsilon debe ser positivo y finito; se recibió -1

Un error claro en la primera línea evita que un valor inválido (un ε negativo,
un δ igual a 1, un NaN en los datos) produzca en silencio un resultado que
parece privado y no lo es.
"""

from __future__ import annotations

import decimal
import math
import numbers
import sys
from fractions import Fraction

import numpy as np

from .numbers import format_number

__all__ = [
    "describe",
    "check_number",
    "check_positive",
    "check_epsilon",
    "check_delta",
    "check_sensitivity",
    "check_sigma",
    "check_alpha",
    "check_positive_int",
    "check_fraction",
    "check_finite",
    "check_nonempty",
    "check_values",
    "check_dataset",
    "check_rng",
    "NOISE_RESOLUTION_FACTOR",
    "NOISE_RANGE_FACTOR",
    "check_noise_resolution",
    "check_noise_range",
    "check_noise_fits",
    "check_positive_rational",
    "check_integers",
    "check_probability",
    "check_nonnegative",
    "check_finite_result",
    "compute_finite",
    "MAX_ARRAY_VALUES",
    "check_array_fits",
]


# Integers longer than this are described by their number of digits.
LONG_INTEGER_DIGITS = 30


def describe(value) -> str:
    """Devuelve una representación corta y legible de ``value`` para los mensajes."""
    if isinstance(value, np.generic) and not isinstance(value, np.bool_):
        value = value.item()
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, numbers.Integral):
        text = str(int(value))
        # A Python int may have hundreds of digits (k = 10**400): its size, not all of them.
        return text if len(text.lstrip("-")) <= LONG_INTEGER_DIGITS else f"un entero de {len(text.lstrip('-'))} cifras"
    if isinstance(value, numbers.Real):
        number = float(value)
        if math.isnan(number):
            return "nan"
        if math.isinf(number):
            return "inf" if number > 0 else "-inf"
        return repr(number) if number != int(number) or abs(number) >= 1e16 else str(int(number))
    if isinstance(value, np.ndarray):
        text = np.array2string(value, threshold=6, edgeitems=2)
        return f"un arreglo de forma {value.shape}: {text}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


# The plain numbers that reach the checkers thousands of times in one run of the lab (every
# noisy release checks its value, its sensitivity, its ε and its scale). For these types the
# general test below, an isinstance against the abstract numbers.Real, costs more than the work
# it guards; bool is a subclass of int but not this type, so it still takes the general path.
_PLAIN_REAL_TYPES = (float, int, np.float64)


def check_number(value, *, name: str) -> float:
    """Exige un número real (no booleano, no texto) y lo devuelve como ``float``."""
    if type(value) in _PLAIN_REAL_TYPES:
        return float(value)
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name} debe ser un número real; se recibió {describe(value)}")
    return float(value)


def check_positive(value, *, name: str) -> float:
    """Exige un número real positivo y finito."""
    number = check_number(value, name=name)
    if not (math.isfinite(number) and number > 0):
        raise ValueError(f"{name} debe ser positivo y finito; se recibió {describe(value)}")
    return number


def check_epsilon(epsilon, *, name: str = "epsilon") -> float:
    """Exige un presupuesto de privacidad ε > 0 finito.

    ε = 0 exigiría ruido infinito; ε negativo o NaN no tienen sentido.
    """
    return check_positive(epsilon, name=name)


def check_delta(delta, *, name: str = "delta") -> float:
    """Exige una probabilidad de falla δ en el intervalo abierto (0, 1).

    δ = 0 es ε-DP pura (el mecanismo gaussiano no la alcanza) y δ ≥ 1 no
    garantiza nada.
    """
    number = check_number(delta, name=name)
    if not (0.0 < number < 1.0):
        raise ValueError(
            f"{name} debe estar en el intervalo abierto (0, 1); se recibió {describe(delta)}"
        )
    return number


def check_sensitivity(sensitivity, *, name: str = "sensibilidad") -> float:
    """Exige una sensibilidad Δ > 0 finita (sin cota no hay privacidad)."""
    return check_positive(sensitivity, name=name)


def check_sigma(sigma, *, name: str = "sigma") -> float:
    """Exige una desviación estándar de ruido σ > 0 finita."""
    return check_positive(sigma, name=name)


def check_alpha(alpha, *, name: str = "alpha") -> float:
    """Exige un orden de Rényi α > 1 finito."""
    number = check_number(alpha, name=name)
    if not (math.isfinite(number) and number > 1.0):
        raise ValueError(f"{name} debe ser mayor que 1 y finito; se recibió {describe(alpha)}")
    return number


def check_positive_int(value, *, name: str) -> int:
    """Exige un entero ≥ 1 (acepta 3.0 pero no 2.5 ni True)."""
    if type(value) is int and value >= 1:  # the common case, without the abstract-class tests below
        return value
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} debe ser un entero positivo; se recibió {describe(value)}")
    if isinstance(value, numbers.Integral):
        number = int(value)
    elif isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        number = int(value)
    else:
        raise ValueError(f"{name} debe ser un entero positivo; se recibió {describe(value)}")
    if number < 1:
        raise ValueError(f"{name} debe ser un entero positivo; se recibió {describe(value)}")
    return number


def check_fraction(value, *, name: str) -> float:
    """Exige una fracción en (0, 1]: la parte de los clientes que participa en una ronda."""
    number = check_number(value, name=name)
    if not (0.0 < number <= 1.0):
        raise ValueError(f"{name} debe estar en el intervalo (0, 1]; se recibió {describe(value)}")
    return number


def _as_float_array(values, *, name: str) -> np.ndarray:
    try:
        # numpy would drop an imaginary part with nothing but a warning.
        is_complex = np.iscomplexobj(values)
        array = None if is_complex else np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} debe contener solo números; se recibió {describe(values)}") from None
    if is_complex:
        raise ValueError(f"{name} debe contener solo números reales; se recibió {describe(values)}")
    return array


def _is_scalar(values) -> bool:
    try:
        return np.ndim(values) == 0 and not isinstance(values, np.ndarray)
    except ValueError:  # a ragged list: _as_float_array names it in Spanish
        return False


def check_finite(values, *, name: str = "valores"):
    """Exige que ``values`` (número o arreglo) no contenga NaN ni infinitos.

    Devuelve un ``float`` si recibió un escalar y un arreglo ``float`` si no.
    """
    if type(values) in _PLAIN_REAL_TYPES:
        # What the general path below returns for these types, without its np.ndim; a value
        # that is not finite goes on to it for the message.
        number = float(values)
        if math.isfinite(number):
            return number
    if type(values) is np.ndarray and values.dtype == np.float64:
        array = values  # what _as_float_array returns for it, without its two calls
    elif _is_scalar(values):
        number = check_number(values, name=name)
        if not math.isfinite(number):
            raise ValueError(f"{name} debe ser finito; se recibió {describe(values)}")
        return number
    else:
        array = _as_float_array(values, name=name)
    if not np.isfinite(array).all():
        bad = ~np.isfinite(array)
        position = tuple(int(i) for i in np.argwhere(bad)[0])
        where = position[0] if len(position) == 1 else position
        raise ValueError(
            f"{name} contiene valores no finitos (NaN o infinito): {int(bad.sum())} en total, "
            f"el primero en la posición {where}; se recibió {describe(array.flat[bad.argmax()])}"
        )
    return array


def check_nonempty(values, *, name: str = "datos"):
    """Exige al menos un elemento (una consulta sobre una base vacía no tiene respuesta)."""
    if np.size(values) == 0:
        raise ValueError(f"{name} no puede estar vacío; se recibió {describe(values)}")
    return values


def check_values(values, *, name: str = "valores") -> np.ndarray:
    """Exige un arreglo unidimensional, no vacío y finito, y lo devuelve como ``float``."""
    array = _as_float_array(values, name=name)
    if array.ndim != 1:
        raise ValueError(
            f"{name} debe ser un arreglo unidimensional; se recibió uno de forma {array.shape}"
        )
    check_nonempty(array, name=name)
    return check_finite(array, name=name)


def check_dataset(X, y, *, names: tuple = ("X", "y")) -> tuple:
    """Exige un conjunto de entrenamiento: X una matriz finita no vacía (personas × variables) e y sus etiquetas 0/1.

    Devuelve ``(X, y)`` como arreglos ``float``. ``names`` nombra los dos
    argumentos en los mensajes (por ejemplo ``("X_test", "y_test")``).
    """
    x_name, y_name = names
    X = check_finite(X, name=x_name)
    if np.ndim(X) != 2:
        raise ValueError(f"{x_name} debe ser una matriz (personas × variables); tiene forma {np.shape(X)}")
    check_nonempty(X, name=x_name)
    y = check_finite(y, name=y_name)
    if np.ndim(y) != 1 or np.shape(y)[0] != X.shape[0]:
        raise ValueError(
            f"{y_name} debe tener una etiqueta por fila de {x_name} ({X.shape[0]}); tiene forma {np.shape(y)}"
        )
    if not np.all((y == 0) | (y == 1)):
        bad = y[(y != 0) & (y != 1)][0]
        raise ValueError(f"{y_name} debe contener solo 0 y 1; se recibió {describe(bad)}")
    return X, y


def check_rng(rng, *, name: str = "rng") -> np.random.Generator:
    """Exige un generador ``numpy.random.Generator`` explícito.

    Pedir el generador hace que cada resultado sea reproducible con su semilla
    y que ningún azar quede oculto en un estado global.
    """
    if not isinstance(rng, np.random.Generator):
        raise ValueError(
            f"{name} debe ser un numpy.random.Generator, por ejemplo "
            f"np.random.default_rng(0); se recibió {describe(rng)}"
        )
    return rng


# ------------------------------------------------ ruido en punto flotante --

# Cuántos dobles, como mínimo, debe haber por unidad de escala del ruido cerca
# del valor publicado: el redondeo de x + Z mueve el ruido a lo sumo ulp/2,
# así que con ulp ≤ b/64 el error de redondeo no pasa de b/128.
NOISE_RESOLUTION_FACTOR = 64

# Cota del ruido más grande que producen los muestreadores de numpy, en
# unidades de escala: Laplace por inversa de la CDF desde un doble uniforme de
# 53 bits da |Z| ≤ 52 ln 2 · b ≈ 36 b; la normal por zigurat, |Z| < 14 σ.
NOISE_RANGE_FACTOR = 64


def _largest_magnitude(value, *, name: str) -> tuple:
    """(valor validado, max |xᵢ|, función que nombra ese máximo) de un número o arreglo finito.

    El valor validado es el de ``check_finite``; el máximo es 0 si está vacío.
    El nombre se escribe solo si hace falta un mensaje de error: cada ruido que
    se suma pasa por aquí, y escribir el valor cuesta más que compararlo.
    """
    try:
        finite = check_finite(value, name=name)
    except OverflowError:  # an int beyond the largest double
        raise ValueError(
            f"{name} no cabe en un número de punto flotante (máximo ≈ 1.8e308); "
            f"se recibió {describe(value)}"
        ) from None
    if isinstance(finite, float):
        return finite, abs(finite), lambda: describe(value)
    if finite.size == 0:
        return finite, 0.0, lambda: describe(value)
    magnitudes = np.abs(finite)
    largest = float(magnitudes.max())

    def shown() -> str:
        position = int(np.argmax(magnitudes))
        where = np.unravel_index(position, finite.shape)
        where = int(where[0]) if len(where) == 1 else tuple(int(i) for i in where)
        return f"{describe(finite.flat[position])} (en la posición {where})"

    return finite, largest, shown


def _require_resolution(largest: float, shown, *, scale: float, name: str, scale_name: str) -> None:
    """El criterio de ``check_noise_resolution`` sobre un máximo ya calculado."""
    limit = scale / NOISE_RESOLUTION_FACTOR  # only shown: it rounds among subnormals
    # ulp · 64 is exact (a power of two times 64), so the comparison is too.
    if math.ulp(scale) * NOISE_RESOLUTION_FACTOR > scale:
        raise ValueError(
            f"escala del ruido demasiado pequeña: {scale_name} = {describe(scale)} es subnormal y los "
            f"dobles cerca de ella distan {describe(math.ulp(scale))}, más que {scale_name}/"
            f"{NOISE_RESOLUTION_FACTOR}; usa {scale_name} ≥ {describe(NOISE_RESOLUTION_FACTOR * math.ulp(0.0))}"
        )
    spacing = math.ulp(largest)
    if spacing * NOISE_RESOLUTION_FACTOR > scale:
        raise ValueError(
            f"{name} demasiado grande para la escala del ruido; se recibió {shown()}: cerca de él los dobles "
            f"distan {describe(spacing)}, más que {scale_name}/{NOISE_RESOLUTION_FACTOR} = {describe(limit)} "
            f"({scale_name} = {describe(scale)}), y el redondeo se tragaría el ruido; publica el valor "
            f"en otra unidad (por ejemplo, en miles) o usa más ruido"
        )


def _require_range(largest: float, shown, *, scale: float, name: str, scale_name: str) -> None:
    """El criterio de ``check_noise_range`` sobre un máximo ya calculado."""
    reach = largest + NOISE_RANGE_FACTOR * scale
    if reach > sys.float_info.max:
        raise ValueError(
            f"{name} y escala demasiado grandes; se recibió {shown()} y {scale_name} = {describe(scale)}: "
            f"|x| + {NOISE_RANGE_FACTOR}·{scale_name} = {describe(reach)} supera el mayor doble "
            f"({describe(sys.float_info.max)}) y la publicación podría ser infinita"
        )


def check_noise_resolution(value, *, scale: float, name: str = "valor", scale_name: str = "b") -> None:
    """Exige que el espaciado de los dobles cerca de ``value`` no se trague el ruido de escala ``scale``.

    Criterio: ulp(m) ≤ b/64, con m = max(máxᵢ |xᵢ|, b) y ulp(m) la distancia
    de m al doble siguiente (``math.ulp``). Con b = 2 se aceptan los |x| < 2⁴⁸
    y se rechaza 2⁴⁸, cuyos vecinos distan 1/16 > 2/64; en general, el borde
    está en |x| = 2⁴⁷·b para b potencia de 2.

    Por qué: el resultado x + Z se redondea al doble más cercano. Si los dobles
    cerca de x distan más que el ruido típico, el redondeo lo borra: con
    ulp(x) ≥ b, P(|Z| < ulp/2) = 1 − e^{−ulp/(2b)} ≥ 39 % de las publicaciones
    devuelven x exacto (con x = 2⁶⁰ y b = 2, todas). El máximo con b cubre una
    escala subnormal, cuyo propio ruido no tiene bits.
    """
    _, largest, shown = _largest_magnitude(value, name=name)
    _require_resolution(largest, shown, scale=scale, name=name, scale_name=scale_name)


def check_noise_range(value, *, scale: float, name: str = "valor", scale_name: str = "b") -> None:
    """Exige que toda publicación x + Z posible sea un doble finito.

    Criterio: máxᵢ |xᵢ| + 64·b ≤ 1,797…·10³⁰⁸ (``sys.float_info.max``), con
    64·b mayor que cualquier ruido de los muestreadores de numpy
    (``NOISE_RANGE_FACTOR``). Sin esta cota, un valor o una escala enormes
    publican ``inf`` (y después ``nan`` en cualquier resta).
    """
    _, largest, shown = _largest_magnitude(value, name=name)
    _require_range(largest, shown, scale=scale, name=name, scale_name=scale_name)


def check_noise_fits(value, *, scale: float, name: str = "valor", scale_name: str = "b"):
    """Exige las dos condiciones para sumar ruido de escala ``scale`` a ``value``, y devuelve ``value`` validado.

    Es ``check_noise_resolution`` y después ``check_noise_range`` (los mismos
    criterios y mensajes, en ese orden) recorriendo el valor una sola vez:
    cada publicación ruidosa pasa por aquí. Devuelve lo que ``check_finite``:
    un ``float`` si recibió un escalar y un arreglo ``float`` si no.
    """
    finite, largest, shown = _largest_magnitude(value, name=name)
    _require_resolution(largest, shown, scale=scale, name=name, scale_name=scale_name)
    _require_range(largest, shown, scale=scale, name=name, scale_name=scale_name)
    return finite


# ------------------------------------------------------ aritmética exacta --


def check_positive_rational(value, *, name: str) -> Fraction:
    """Exige un racional positivo y lo devuelve como ``Fraction`` exacta.

    Acepta enteros, ``Fraction``, ``Decimal`` y ``float``. Un ``float`` se toma
    por su representación decimal más corta, la que se escribió: ``0.1`` es
    1/10, no el doble 0,1000000000000000055…; para un tercio exacto, usar
    ``Fraction(1, 3)``.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} debe ser un número racional positivo; se recibió {describe(value)}")
    if isinstance(value, Fraction):
        fraction = value
    elif isinstance(value, numbers.Rational):
        fraction = Fraction(int(value.numerator), int(value.denominator))
    elif isinstance(value, decimal.Decimal) and value.is_finite():
        fraction = Fraction(value)
    elif isinstance(value, numbers.Real) and not isinstance(value, decimal.Decimal) and math.isfinite(float(value)):
        fraction = Fraction(repr(float(value)))
    else:
        raise ValueError(f"{name} debe ser un número racional positivo y finito; se recibió {describe(value)}")
    if fraction <= 0:
        raise ValueError(f"{name} debe ser un número racional positivo y finito; se recibió {describe(value)}")
    return fraction


_INT64 = np.iinfo(np.int64)


def _integral_scalar(value, *, name: str) -> int:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} debe ser un entero; se recibió {describe(value)}")
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(float(value)) and float(value).is_integer():
        return int(float(value))
    if isinstance(value, numbers.Real):
        raise ValueError(
            f"{name} debe ser un entero (el mecanismo discreto suma ruido entero a un valor entero); "
            f"se recibió {describe(value)}"
        )
    raise ValueError(f"{name} debe ser un entero; se recibió {describe(value)}")


def check_integers(values, *, name: str = "valor"):
    """Exige un entero o un arreglo de enteros, y los devuelve exactos.

    Un escalar vuelve como ``int`` de Python (sin límite de tamaño); un arreglo,
    como ``int64``. Se aceptan flotantes con valor entero (``42.0``), no
    ``41.5`` ni booleanos ni valores que no caben en 64 bits.
    """
    if _is_scalar(values):
        return _integral_scalar(values, name=name)
    try:
        array = np.asarray(values)
        if array.dtype == object:  # Python ints beyond 64 bits, or a mixture
            array = np.asarray(values, dtype=np.int64)
    except OverflowError:
        raise ValueError(
            f"{name} no cabe en enteros de 64 bits; se recibió {describe(values)} "
            f"(un escalar de Python no tiene ese límite)"
        ) from None
    except (TypeError, ValueError):
        raise ValueError(f"{name} debe contener solo enteros; se recibió {describe(values)}") from None
    if array.dtype == np.bool_ or not (np.issubdtype(array.dtype, np.integer)
                                       or np.issubdtype(array.dtype, np.floating)):
        raise ValueError(f"{name} debe contener solo enteros; se recibió {describe(values)}")
    if np.issubdtype(array.dtype, np.floating):
        check_finite(array, name=name)
        fractional = array != np.round(array)
        if fractional.any():
            raise ValueError(
                f"{name} debe contener solo enteros; el primero que no lo es: "
                f"{describe(array.flat[fractional.argmax()])}"
            )
        too_large = (array < _INT64.min) | (array >= 2.0**63)
    else:
        too_large = array > _INT64.max if array.dtype == np.uint64 else np.zeros(array.shape, bool)
    if too_large.any():
        raise ValueError(
            f"{name} no cabe en enteros de 64 bits; se recibió {describe(array.flat[too_large.argmax()])} "
            f"(un escalar de Python no tiene ese límite)"
        )
    return array.astype(np.int64)
def check_probability(value, *, name: str) -> float:
    """Exige una probabilidad en (0, 1] (por ejemplo, la de entrar a una muestra)."""
    number = check_positive(value, name=name)
    if number > 1.0:
        raise ValueError(f"{name} debe estar en el intervalo (0, 1]; se recibió {describe(value)}")
    return number


def check_nonnegative(value, *, name: str) -> float:
    """Exige un número real finito mayor o igual que 0."""
    number = check_number(value, name=name)
    if not (math.isfinite(number) and number >= 0):
        raise ValueError(f"{name} debe ser un número mayor o igual que 0; se recibió {describe(value)}")
    return number


def check_finite_result(value, *, name: str, inputs: dict):
    """``value``, el ``name`` que una fórmula sacó de ``inputs``, si es finito; si no, un error que nombra esas entradas.

    Entradas válidas una a una pueden dar un resultado que un doble no
    representa (b = Δ/ε con ε = 1e-320 es infinito): el mensaje dice con qué
    valores pasó, no el valor derivado (``inf``), que no le dice nada a quien
    llamó. Sirve para un número y para un arreglo.
    """
    if type(value) is float and math.isfinite(value):  # the common case, on every noisy release
        return value
    finite = math.isfinite(value) if isinstance(value, numbers.Real) else bool(np.all(np.isfinite(value)))
    if not finite:
        given = ", ".join(f"{key} = {describe(item)}" for key, item in inputs.items())
        raise ValueError(f"{name} no es un número finito con {given}: son valores demasiado extremos para "
                         "un número de coma flotante; usa otros más moderados")
    return value


def compute_finite(formula, *, name: str, inputs: dict):
    """``formula()`` comprobado por ``check_finite_result``; un desborde de ``math`` (e^1000) o una división por cero cuentan como infinito."""
    try:
        with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
            value = formula()
    except (OverflowError, ZeroDivisionError):
        value = math.inf
    return check_finite_result(value, name=name, inputs=inputs)


# The most values one array of a query may hold: 8 bytes each, 400 MB, a fifth of what
# Python has in a browser tab.
MAX_ARRAY_VALUES = 50_000_000


def check_array_fits(count: int, *, name: str, given: str) -> None:
    """Exige que un arreglo de ``count`` valores quepa en memoria; el mensaje nombra la entrada (``given``)."""
    if count > MAX_ARRAY_VALUES:
        limit = format_number(MAX_ARRAY_VALUES, group_thousands=True)
        raise ValueError(f"{given} pide {name} de {describe(count)} valores, que no caben en la memoria "
                         f"(el máximo es {limit}); usa un valor más pequeño")
