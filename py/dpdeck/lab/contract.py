"""El contrato del laboratorio: qué es, qué no es, la extensión del reto y el JSON de una semilla.

Las constantes del resultado (``KIND``, ``DELTA``, ``LIMITATIONS``), los
cuatro campos del reto (``EXTENSION_FIELDS``) con su validación, y cómo se
escribe cada número (``_plain``: 6 cifras significativas, y 0 por debajo de
10⁻¹², para que la misma semilla dé el mismo JSON byte a byte en Python nativo
y en Pyodide). Cada hecho de la evidencia tiene la forma de ``_fact``.
"""

from __future__ import annotations

import json
import math
import numbers

import numpy as np

from .._checks import describe


KIND = "privacidad-diferencial"
DELTA = 1e-5
SIGNIFICANT_DIGITS = 6
# A real smaller than this is floating-point rounding (the difference between two computations
# of the same model, the spread of equal accuracies): its last bits depend on the machine's order
# of summation (native numpy and Pyodide's differ), so it is published as 0 and the same seed
# gives the same JSON byte for byte everywhere.
ROUNDING_NOISE = 1e-12

LIMITATIONS = [
    "Ruido en punto flotante: muestrear Laplace con números de punto flotante deja huecos en las "
    "salidas posibles que un atacante puede explotar (Mironov 2012, 'On Significance of the Least "
    "Significant Bits for Differential Privacy'); una implementación real usa snapping o muestreo "
    "discreto exacto.",
    "El mecanismo gaussiano clásico (Dwork y Roth 2014, Teorema A.1) solo vale para ε < 1; por eso "
    "el descenso privado exige ε/T < 1 y el laboratorio no usa el gaussiano analítico para calibrar "
    "(solo para medir el ε exacto de una composición).",
    "Privacidad por registro, no por usuario, en los pasos de los capítulos 1 a 5: cada fila es una "
    "persona distinta; si una persona aportara varias filas, la sensibilidad y toda la contabilidad "
    "cambiarían. El capítulo 6 protege clientes enteros (sus limitaciones lo detallan).",
    "Datos sintéticos: el censo imita la estructura del conjunto de datos Adult pero nadie en él "
    "existe; las exactitudes y los codos dependen de cómo se generó.",
    "Código de enseñanza, no de producción: descenso de gradiente de lote completo con composición "
    "secuencial (no DP-SGD con muestreo de Poisson ni contabilidad de Rényi en el entrenamiento), "
    "con el tamaño n estimado en privado con el 5 % del presupuesto, y sin auditoría de seguridad.",
    "Los hiperparámetros del descenso privado (T = 10 iteraciones, C = 1, el paso máximo 4, el radio "
    "de ruido 0,2, el 5 % del presupuesto para n) y las constantes de las variables se fijaron "
    "probando sobre este mismo censo: esa elección miró los datos sin ruido y no está en la cuenta. "
    "Un análisis real los fija antes de ver los datos o paga su búsqueda con presupuesto.",
    "Los números 'ideales' (codo del recorte, modelo sin privacidad, ε exacto) miran los datos sin "
    "ruido o el mecanismo por dentro: sirven para comparar, no son publicables.",
    "Las tasas medidas (errores, exactitudes, razones de probabilidad) son estimaciones con la "
    "semilla dada, con tolerancias de varios errores estándar: otra semilla da valores cercanos, no "
    "idénticos.",
]


# La clave del reto en el resultado, y sus cuatro campos: clave → (rótulo, qué se escribe).
EXTENSION_KEY = "student_extension"
EXTENSION_FIELDS = {
    "assumption": ("Supuesto", "la afirmación sobre el laboratorio que vas a poner a prueba"),
    "measurement": ("Medición", "qué mediste o comprobaste, con los números que imprimió el laboratorio"),
    "conclusion": ("Conclusión", "lo que esa medición permite decir, sin ir más allá de los datos"),
    "limitation": ("Limitación", "un riesgo, un caso límite o una condición en que la conclusión no vale"),
}
# Un campo más largo que esto no es una respuesta, es un archivo pegado por error.
MAX_EXTENSION_CHARS = 4000


# ------------------------------------------------------------ utilidades --


def check_seed(seed) -> int:
    """Exige una semilla entera ≥ 0 (acepta 3 o 3.0, no True ni −1)."""
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, numbers.Real):
        raise ValueError(f"seed debe ser un entero mayor o igual que 0; se recibió {describe(seed)}")
    value = float(seed)
    if not (math.isfinite(value) and value.is_integer() and value >= 0):
        raise ValueError(f"seed debe ser un entero mayor o igual que 0; se recibió {describe(seed)}")
    return int(value)


def check_student_extension(extension) -> dict:
    """Exige la extensión del reto: un diccionario con las cuatro claves de ``EXTENSION_FIELDS``.

    Cada valor es un texto no vacío (sin contar los espacios) de a lo sumo
    ``MAX_EXTENSION_CHARS`` caracteres; una clave que falta, sobra o está vacía
    se nombra en el ``ValueError``. Devuelve una copia con los textos sin los
    espacios de los extremos, en el orden de ``EXTENSION_FIELDS``.
    """
    if not isinstance(extension, dict):
        raise ValueError(f"{EXTENSION_KEY} debe ser un objeto con las claves "
                         f"{', '.join(EXTENSION_FIELDS)}; se recibió {describe(extension)}")
    missing = [key for key in EXTENSION_FIELDS if key not in extension]
    extra = sorted(str(key) for key in extension if key not in EXTENSION_FIELDS)
    if missing:
        raise ValueError(f"a {EXTENSION_KEY} le falta la clave «{missing[0]}» "
                         f"({EXTENSION_FIELDS[missing[0]][0].lower()}); se esperan {', '.join(EXTENSION_FIELDS)}")
    if extra:
        raise ValueError(f"{EXTENSION_KEY} tiene una clave desconocida «{extra[0]}»; "
                         f"se esperan {', '.join(EXTENSION_FIELDS)}")
    checked = {}
    for key, (label, _) in EXTENSION_FIELDS.items():
        value = extension[key]
        if not isinstance(value, str):
            raise ValueError(f"{EXTENSION_KEY}.{key} ({label.lower()}) debe ser un texto; "
                             f"se recibió {describe(value)}")
        text = value.strip()
        if not text:
            raise ValueError(f"{EXTENSION_KEY}.{key} ({label.lower()}) está vacío")
        if len(text) > MAX_EXTENSION_CHARS:
            raise ValueError(f"{EXTENSION_KEY}.{key} ({label.lower()}) tiene {len(text)} caracteres; "
                             f"el máximo es {MAX_EXTENSION_CHARS}")
        checked[key] = text
    return checked


def read_extension_file(path) -> dict:
    """La extensión guardada en un archivo JSON, validada.

    El archivo tiene el objeto de cuatro claves, o un laboratorio exportado que
    lo lleva en ``student_extension``. Lanza ``ValueError`` (en español, con el
    nombre del archivo) si no se puede leer o no es válido.
    """
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except OSError as error:
        raise ValueError(f"no se pudo leer {path}: {error.strerror or error}") from error
    except json.JSONDecodeError as error:
        raise ValueError(f"{path} no es JSON válido (línea {error.lineno}): {error.msg}") from error
    if isinstance(data, dict) and EXTENSION_KEY in data:
        data = data[EXTENSION_KEY]
    try:
        return check_student_extension(data)
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from error


def _plain(value):
    """Convierte a tipos de JSON y redondea los reales a 6 cifras significativas (por debajo de 10⁻¹², 0)."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, np.ndarray):
        return [_plain(item) for item in value.tolist()]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        number = float(value)
        if not math.isfinite(number):
            return None
        if abs(number) < ROUNDING_NOISE:
            return 0.0
        return float(f"{number:.{SIGNIFICANT_DIGITS}g}")
    if isinstance(value, str) or value is None:
        return value
    raise TypeError(f"valor no serializable en el laboratorio: {describe(value)}")


def _fact(result: str, fact: str, holds: bool, **values) -> dict:
    return {"result": result, "fact": fact, "holds": bool(holds), "values": values}
