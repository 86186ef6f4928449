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

import math
import numbers

import numpy as np

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
    "check_rng",
]


def describe(value) -> str:
    """Devuelve una representación corta y legible de ``value`` para los mensajes."""
    if isinstance(value, np.generic) and not isinstance(value, np.bool_):
        value = value.item()
    if isinstance(value, (bool, np.bool_)):
        return repr(bool(value))
    if isinstance(value, numbers.Integral):
        return str(int(value))
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


def check_number(value, *, name: str) -> float:
    """Exige un número real (no booleano, no texto) y lo devuelve como ``float``."""
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

    δ = 0 es ε-DP pura (el mecanismo Gaussiano no la alcanza) y δ ≥ 1 no
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
        array = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} debe contener solo números; se recibió {describe(values)}") from None
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
    if _is_scalar(values):
        number = check_number(values, name=name)
        if not math.isfinite(number):
            raise ValueError(f"{name} debe ser finito; se recibió {describe(values)}")
        return number
    array = _as_float_array(values, name=name)
    bad = ~np.isfinite(array)
    if bad.any():
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
