"""Los clientes del capítulo 6 y sus datos: quién tiene cada fila, y los validadores comunes.

El censo se reparte entre K clientes (hospitales, teléfonos): ``owner[i]`` es
el cliente de la fila i. ``split_iid`` reparte al azar; ``split_by_group``
hace un cliente por grupo (por ejemplo, por nivel de estudios: datos no IID).
Los validadores de aquí los comparten FedAvg, las fugas, la agregación segura
y DP-FedAvg.
"""

from __future__ import annotations

import numpy as np

from .. import learning
from .._checks import check_dataset, check_finite, check_positive, check_positive_int, check_rng, describe


# Columnas de ``learning.make_features``: (1, (edad − 40)/15, (educación − 10)/3).
AGE_COLUMN = 1
EDUCATION_COLUMN = 2

DEFAULT_UPDATE_CLIP = learning.DEFAULT_LEARNING_RATE * learning.DEFAULT_CLIP_NORM
"""Cota S de la norma de una actualización: η · C = 4.

Con ella, un paso local sobre una sola persona recorta exactamente como el
descenso privado del capítulo 5 (gradiente recortado a C = 1, paso η = 4).
"""

# ----------------------------------------------------------- validadores --
# Los índices (cliente de cada fila, tamaños, posiciones) son np.intp: en Pyodide
# (wasm32) intp tiene 32 bits, y np.bincount, np.repeat y np.add.reduceat se niegan a
# convertir índices int64. Las máscaras y lo codificado sí son int64: llegan a 2³².


def _check_owner(owner) -> np.ndarray:
    """Exige un arreglo de enteros ≥ 0 (el cliente de cada fila) sin clientes vacíos."""
    array = np.asarray(owner)
    if array.ndim != 1 or array.size == 0 or array.dtype.kind not in "iu":
        raise ValueError(
            f"owner debe ser un arreglo unidimensional no vacío de enteros (el cliente de cada "
            f"fila); se recibió {describe(owner)}"
        )
    if array.min() < 0:
        raise ValueError(f"owner no puede tener clientes negativos; se recibió {describe(int(array.min()))}")
    array = array.astype(np.intp)
    sizes = np.bincount(array)
    if (sizes == 0).any():
        empty = int(np.argmax(sizes == 0))
        raise ValueError(f"cada cliente debe tener al menos una fila; el cliente {empty} no tiene ninguna")
    return array


def _check_task(X, y, owner) -> tuple:
    X, y = check_dataset(X, y)
    owner = _check_owner(owner)
    if owner.shape[0] != X.shape[0]:
        raise ValueError(
            f"owner debe tener un cliente por fila de X ({X.shape[0]}); tiene {owner.shape[0]}"
        )
    return X, y, owner


def _check_theta(theta, dimension: int) -> np.ndarray:
    theta = check_finite(theta, name="theta")
    if np.ndim(theta) != 1 or np.shape(theta)[0] != dimension:
        raise ValueError(f"theta debe tener {dimension} coeficientes; tiene forma {np.shape(theta)}")
    return np.asarray(theta, dtype=float)


def _check_noise_multiplier(noise_multiplier) -> float:
    return check_positive(noise_multiplier, name="noise_multiplier")


# ---------------------------------------------------- reparto de los datos --


def split_iid(size, *, clients, rng) -> np.ndarray:
    """Reparto IID: una permutación al azar cortada en K partes casi iguales.

    Devuelve ``owner``, el cliente (0 … K − 1) de cada fila. Cada cliente
    recibe ⌊n/K⌋ o ⌈n/K⌉ filas, una muestra al azar de toda la base: su
    distribución es la de la población (McMahan et al. 2017, sección 3).
    """
    size = check_positive_int(size, name="size")
    clients = check_positive_int(clients, name="clients")
    if clients > size:
        raise ValueError(f"clients ({clients}) no puede superar el número de filas ({size})")
    rng = check_rng(rng)
    owner = np.empty(size, dtype=np.intp)
    owner[rng.permutation(size)] = np.arange(size) % clients
    return owner


def split_by_group(groups) -> np.ndarray:
    """Reparto no IID: un cliente por cada valor distinto de ``groups``.

    Con ``groups`` = nivel educativo, cada hospital atiende a un solo nivel: los
    clientes tienen tamaños muy distintos y distribuciones que no se parecen a
    la de la población (el caso "no IID" de McMahan et al. 2017). Los clientes
    se numeran en el orden de los valores.
    """
    groups = np.asarray(groups)
    if groups.ndim != 1 or groups.size == 0:
        raise ValueError(f"groups debe ser un arreglo unidimensional no vacío; se recibió {describe(groups)}")
    _, owner = np.unique(groups, return_inverse=True)
    return owner.reshape(-1).astype(np.intp)


def count_examples(owner) -> np.ndarray:
    """Tamaño n_k de cada cliente (filas por cliente)."""
    return np.bincount(_check_owner(owner)).astype(float)
