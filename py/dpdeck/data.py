"""El censo sintético de la clase: 5000 personas con la estructura del conjunto de datos Adult.

El libro de Near y Abuah trabaja con el conjunto de datos "Adult" de la Oficina
del Censo de EE. UU. (Kohavi y Becker 1996, UCI Machine Learning Repository). Aquí usamos un censo
*sintético* con la misma estructura: edad de 17 a 90 años, los 16 niveles
educativos de Adult (en español y en el mismo orden), sexo, horas de trabajo
por semana, ganancia de capital (casi siempre 0, con una cola pesada hasta el
tope de 99 999 que usa Adult) e ingreso alto (verdadero para cerca de una de
cada cuatro personas, más probable con más edad y más educación).

Nadie en este censo existe. Los nombres se arman al azar con nombres y
apellidos comunes del mundo hispanohablante; solo una persona se llama Karen
(``KAREN_NAME``), la protagonista del ataque diferencial del capítulo 1.

Uso::

    from dpdeck.data import load_census
    censo = load_census()
    censo                      # vistazo: una línea por columna
    censo.age.mean()           # columnas como arreglos de numpy
    karen = censo.where(censo.name == "Karen Beltrán Ríos")

El archivo ``assets/data/censo.csv`` se regenera bit a bit con::

    python -m dpdeck.data --write

Leer el CSV usa solo el módulo ``csv`` de la biblioteca estándar y numpy, para
que funcione igual en Pyodide (en el navegador) que en CPython.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

import numpy as np

from ._checks import check_positive_int, check_rng, describe
from .numbers import format_number

__all__ = [
    "CENSUS_SEED",
    "CENSUS_SIZE",
    "COLUMNS",
    "EDUCATION_LEVELS",
    "KAREN_NAME",
    "MAX_AGE",
    "MIN_AGE",
    "MAX_CAPITAL_GAIN",
    "Census",
    "find_census_csv",
    "generate_census",
    "format_census_csv",
    "read_census",
    "load_census",
    "write_census",
    "main",
]

CENSUS_SEED = 20260924
"""Semilla fija del censo: la fecha de la clase (24 de septiembre de 2026)."""

CENSUS_SIZE = 5000
MIN_AGE = 17
MAX_AGE = 90
MAX_CAPITAL_GAIN = 99_999
KAREN_NAME = "Karen Beltrán Ríos"

EDUCATION_LEVELS = (
    "Preescolar",
    "1.º a 4.º",
    "5.º y 6.º",
    "7.º y 8.º",
    "9.º",
    "10.º",
    "11.º",
    "12.º sin título",
    "Bachillerato",
    "Universidad incompleta",
    "Técnico vocacional",
    "Técnico académico",
    "Licenciatura",
    "Maestría",
    "Posgrado profesional",
    "Doctorado",
)
"""Los 16 niveles de Adult, en su orden: ``education_num`` = posición + 1.

Preschool, 1st-4th, 5th-6th, 7th-8th, 9th, 10th, 11th, 12th, HS-grad,
Some-college, Assoc-voc, Assoc-acdm, Bachelors, Masters, Prof-school, Doctorate.
"""

COLUMNS = (
    "name",
    "age",
    "sex",
    "education",
    "education_num",
    "hours_per_week",
    "capital_gain",
    "high_income",
)

# Frecuencias de cada nivel educativo en Adult (conjunto de entrenamiento,
# 32 561 filas). Solo fijan la forma del histograma sintético.
_EDUCATION_COUNTS = np.array(
    [51, 168, 333, 646, 514, 933, 1175, 433, 10501, 7291, 1382, 1067, 5355, 1723, 576, 413],
    dtype=float,
)

_FEMALE_NAMES = (
    "Ana", "María", "Lucía", "Sofía", "Valentina", "Camila", "Isabel", "Carmen",
    "Laura", "Paula", "Daniela", "Gabriela", "Andrea", "Natalia", "Claudia",
    "Patricia", "Rosa", "Elena", "Julia", "Marta", "Verónica", "Adriana",
    "Beatriz", "Silvia", "Lorena", "Mónica", "Teresa", "Alejandra", "Mariana",
    "Fernanda", "Catalina", "Juliana", "Paola", "Diana", "Carolina", "Ximena",
    "Luisa", "Inés", "Pilar", "Rocío", "Gloria", "Esperanza", "Yolanda",
    "Sara", "Victoria", "Regina", "Antonia", "Lina",
)
_MALE_NAMES = (
    "Juan", "José", "Luis", "Carlos", "Jorge", "Miguel", "Andrés", "Pedro",
    "Diego", "Santiago", "Mateo", "Sebastián", "Alejandro", "Daniel", "David",
    "Javier", "Fernando", "Ricardo", "Manuel", "Francisco", "Antonio", "Rafael",
    "Eduardo", "Sergio", "Pablo", "Felipe", "Gabriel", "Hernán", "Óscar",
    "Raúl", "Tomás", "Nicolás", "Julián", "Camilo", "Mauricio", "Gustavo",
    "Álvaro", "Ramón", "Emilio", "Joaquín", "Ignacio", "Martín", "Esteban",
    "Hugo", "Rodrigo", "Iván", "Samuel", "Víctor",
)
_SURNAMES = (
    "García", "Rodríguez", "Martínez", "López", "González", "Hernández",
    "Pérez", "Sánchez", "Ramírez", "Torres", "Flores", "Rivera", "Gómez",
    "Díaz", "Morales", "Reyes", "Cruz", "Ortiz", "Gutiérrez", "Chávez",
    "Ramos", "Vargas", "Castillo", "Jiménez", "Moreno", "Romero", "Herrera",
    "Medina", "Aguilar", "Castro", "Ruiz", "Mendoza", "Álvarez", "Vásquez",
    "Rojas", "Silva", "Suárez", "Navarro", "Domínguez", "Guerrero", "Ríos",
    "Salazar", "Cabrera", "Peña", "Fuentes", "Cortés", "Molina", "Delgado",
    "Ospina", "Cárdenas", "Valencia", "Restrepo", "Mejía", "Londoño", "Osorio",
    "Quintero", "Arango", "Zapata", "Escobar", "Beltrán", "Figueroa", "Pineda",
    "Serrano", "Campos", "Vega", "Soto", "Rubio", "Ibáñez", "Marín", "Santos",
)


# ------------------------------------------------------------------ Census --


class Census:
    """Tabla de solo lectura: columnas con nombre, cada una un arreglo de numpy.

    ``censo["age"]`` y ``censo.age`` devuelven la misma columna (un arreglo de
    solo lectura: el censo cargado se comparte entre celdas, y una celda que lo
    modificara cambiaría los resultados de todas las demás). ``len(censo)`` es
    el número de personas, ``censo.columns`` los nombres de las columnas y
    ``censo.where(mascara)`` el subconjunto de filas donde la máscara booleana
    es verdadera (otro ``Census``).
    """

    __slots__ = ("_data", "_size")

    def __init__(self, columns: dict):
        if not isinstance(columns, dict) or not columns:
            raise ValueError(
                f"columns debe ser un diccionario no vacío de columnas; se recibió {describe(columns)}"
            )
        data = {}
        size = None
        for name, values in columns.items():
            if not isinstance(name, str):
                raise ValueError(f"los nombres de columna deben ser texto; se recibió {describe(name)}")
            array = np.array(values)  # copia: el censo no comparte memoria con quien lo creó
            if array.ndim != 1:
                raise ValueError(
                    f"la columna {name!r} debe ser unidimensional; tiene forma {array.shape}"
                )
            if size is None:
                size = len(array)
            elif len(array) != size:
                raise ValueError(
                    f"todas las columnas deben tener el mismo largo: {name!r} tiene "
                    f"{len(array)} filas y las anteriores {size}"
                )
            array.flags.writeable = False
            data[name] = array
        object.__setattr__(self, "_data", data)
        object.__setattr__(self, "_size", size)

    # -- acceso ------------------------------------------------------------
    @property
    def columns(self) -> tuple:
        """Nombres de las columnas, en orden."""
        return tuple(self._data)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, column: str) -> np.ndarray:
        try:
            return self._data[column]
        except (KeyError, TypeError):
            raise KeyError(
                f"el censo no tiene la columna {column!r}; columnas: {', '.join(self._data)}"
            ) from None

    def __getattr__(self, column: str) -> np.ndarray:
        # Solo se llama si el atributo normal no existe: así censo.age == censo["age"].
        data = object.__getattribute__(self, "_data")
        if column in data:
            return data[column]
        raise AttributeError(
            f"el censo no tiene la columna {column!r}; columnas: {', '.join(data)}"
        )

    def __setattr__(self, name, value):
        raise AttributeError("el censo es de solo lectura; copie una columna con np.array(...) para modificarla")

    def __contains__(self, column) -> bool:
        return column in self._data

    # Es inmutable: copiarlo devuelve el mismo objeto y serializarlo guarda sus columnas.
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        return (Census, (dict(self._data),))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._data))

    def where(self, mask) -> "Census":
        """Devuelve las filas donde ``mask`` es verdadera, como un nuevo ``Census``.

        ``mask`` es un arreglo booleano con una entrada por persona, por ejemplo
        ``censo.where(censo.age >= 65)`` o ``censo.where(censo.name != KAREN_NAME)``.
        """
        mask = np.asarray(mask)
        if mask.dtype != bool or mask.shape != (self._size,):
            raise ValueError(
                f"mask debe ser un arreglo booleano de largo {self._size} (una entrada por "
                f"persona); se recibió {describe(mask)} de tipo {mask.dtype}"
            )
        return Census({name: values[mask] for name, values in self._data.items()})

    def to_columns(self) -> dict:
        """Copia modificable de las columnas, como diccionario de arreglos."""
        return {name: values.copy() for name, values in self._data.items()}

    # -- vistazo -------------------------------------------------------------
    def head(self, rows: int = 5, *, columns=None) -> str:
        """Las primeras ``rows`` filas como tabla de texto.

        ``columns`` elige qué columnas mostrar (todas si es ``None``); con
        pocas columnas la tabla cabe en 80 caracteres.
        """
        rows = check_positive_int(rows, name="rows")
        names = self.columns if columns is None else tuple(columns)
        for name in names:
            self[name]  # nombra la columna inexistente en el error
        cells = [list(names)]
        for i in range(min(rows, self._size)):
            cells.append([_format_value(self._data[name][i]) for name in names])
        widths = [max(len(row[j]) for row in cells) for j in range(len(names))]
        numeric = [self._data[name].dtype.kind in "iuf" for name in names]
        lines = []
        for row in cells:
            parts = [
                cell.rjust(width) if is_number else cell.ljust(width)
                for cell, width, is_number in zip(row, widths, numeric)
            ]
            lines.append("  ".join(parts).rstrip())
        return "\n".join(lines)

    def glimpse(self, width: int = 80) -> str:
        """Una línea por columna: nombre, tipo y los primeros valores (cabe en ``width``)."""
        width = check_positive_int(width, name="width")
        kinds = {"b": "bool", "i": "int", "u": "int", "f": "float", "U": "texto"}
        header = f"Censo sintético: {format_number(self._size)} personas × {len(self._data)} columnas"
        lines = [header]
        name_width = max(len(name) for name in self._data)
        for name, values in self._data.items():
            prefix = f"{name.ljust(name_width)}  {kinds.get(values.dtype.kind, str(values.dtype)):<5}  "
            room = width - len(prefix)
            shown = ""
            for i in range(min(len(values), 12)):
                piece = _format_value(values[i])
                candidate = piece if not shown else f"{shown}, {piece}"
                if len(candidate) + 3 > room:
                    shown += ", …" if shown else "…"
                    break
                shown = candidate
            else:
                if len(values) > 12:
                    shown += ", …"
            lines.append(prefix + shown)
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.glimpse()

    __str__ = __repr__


def _format_value(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "True" if value else "False"
    return str(value)


# -------------------------------------------------------------- generación --


def _sample_unique_names(rng: np.random.Generator, female: np.ndarray) -> np.ndarray:
    """Nombre + dos apellidos, sin repetir ningún nombre completo (vectorizado por rondas)."""
    size = len(female)
    female_names = np.array(_FEMALE_NAMES)
    male_names = np.array(_MALE_NAMES)
    surnames = np.array(_SURNAMES)
    names = np.empty(size, dtype=object)
    pending = np.arange(size)
    while pending.size:
        first = np.where(
            female[pending],
            female_names[rng.integers(0, len(female_names), pending.size)],
            male_names[rng.integers(0, len(male_names), pending.size)],
        )
        last = surnames[rng.integers(0, len(surnames), (pending.size, 2))]
        names[pending] = np.char.add(np.char.add(np.char.add(first, " "), np.char.add(last[:, 0], " ")), last[:, 1])
        # Se queda la primera aparición de cada nombre completo; las demás se vuelven a sortear.
        _, first_index = np.unique(names.astype(str), return_index=True)
        keep = np.zeros(size, dtype=bool)
        keep[first_index] = True
        pending = np.flatnonzero(~keep)
    return names.astype(str)


def generate_census(rng: np.random.Generator, *, size: int = CENSUS_SIZE) -> Census:
    """Genera el censo sintético con ``rng`` (vectorizado; mismo generador, mismo censo).

    Modelo (cada paso es una línea de numpy):

    * edad: 17 + Gamma(forma 3; escala 7,3), redondeada y recortada a [17, 90]
      (media ≈ 39, cola larga como en Adult);
    * educación: los 16 niveles con las frecuencias de Adult;
    * sexo: 67 % hombres, como en Adult;
    * horas por semana: 40 para casi la mitad, el resto N(40, 12²) recortada a [1, 99];
    * ingreso alto: Bernoulli(σ(z)) con
      z = −13,7 + 0,1·min(edad, 62) + 0,75·educación + 0,5·[hombre] + 0,02·(horas − 40),
      de modo que la edad y la educación explican buena parte del ingreso;
    * ganancia de capital: 0 salvo para el 5 % (15 % si el ingreso es alto); el
      resto log-normal con mediana ≈ 3000 y un 6 % topado en 99 999, como Adult.

    Una persona (una mujer con ingreso alto) se renombra ``KAREN_NAME``; nadie
    más se llama Karen.
    """
    rng = check_rng(rng)
    size = check_positive_int(size, name="size")
    if size < 2:
        raise ValueError(f"size debe ser al menos 2; se recibió {describe(size)}")

    age = np.clip(np.rint(MIN_AGE + rng.gamma(3.0, 7.3, size)), MIN_AGE, MAX_AGE).astype(np.int64)
    education_num = rng.choice(16, size=size, p=_EDUCATION_COUNTS / _EDUCATION_COUNTS.sum()) + 1
    education_num = education_num.astype(np.int64)
    female = rng.random(size) >= 0.67
    full_time = rng.random(size) < 0.47
    hours = np.where(full_time, 40.0, rng.normal(40.0, 12.0, size))
    hours_per_week = np.clip(np.rint(hours), 1, 99).astype(np.int64)

    logit = (
        -13.7
        + 0.10 * np.minimum(age, 62)
        + 0.75 * education_num
        + 0.5 * (~female)
        + 0.02 * (hours_per_week - 40)
    )
    high_income = rng.random(size) < 1.0 / (1.0 + np.exp(-logit))

    has_gain = rng.random(size) < np.where(high_income, 0.15, 0.05)
    amount = np.exp(rng.normal(np.log(3000.0), 1.1, size))
    top_coded = rng.random(size) < 0.06
    amount = np.where(top_coded, MAX_CAPITAL_GAIN, np.clip(np.rint(amount), 100, MAX_CAPITAL_GAIN - 1))
    capital_gain = np.where(has_gain, amount, 0).astype(np.int64)

    name = _sample_unique_names(rng, female)
    candidates = np.flatnonzero(female & high_income & (age >= 30) & (age <= 55))
    if candidates.size == 0:  # censos diminutos: cualquier persona sirve
        candidates = np.arange(size)
    karen = candidates[rng.integers(0, candidates.size)]
    name[karen] = KAREN_NAME
    female[karen] = True

    return Census(
        {
            "name": name,
            "age": age,
            "sex": np.where(female, "Mujer", "Hombre"),
            "education": np.array(EDUCATION_LEVELS)[education_num - 1],
            "education_num": education_num,
            "hours_per_week": hours_per_week,
            "capital_gain": capital_gain,
            "high_income": high_income,
        }
    )


# ---------------------------------------------------------------- archivo --


def format_census_csv(census: Census) -> str:
    """El censo como texto CSV (UTF-8, fin de línea "\\n", ingreso alto como 1/0)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(COLUMNS)
    columns = [census[name] for name in COLUMNS]
    as_text = [
        np.where(values, "1", "0") if values.dtype == bool else values.astype(str) for values in columns
    ]
    writer.writerows(zip(*as_text))
    return buffer.getvalue()


def write_census(path, census: Census | None = None) -> Path:
    """Escribe el censo (por defecto, el generado con ``CENSUS_SEED``) en ``path``."""
    if census is None:
        census = generate_census(np.random.default_rng(CENSUS_SEED))
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(format_census_csv(census).encode("utf-8"))
    return path


def _locate_repository_csv() -> Path:
    """Dónde está el CSV en una copia del repositorio (instalación editable)."""
    return Path(__file__).resolve().parents[2] / "assets" / "data" / "censo.csv"


def find_census_csv() -> Path:
    """Ubicación del CSV: junto a este módulo (dentro de la rueda) o en ``assets/data/``."""
    beside = Path(__file__).with_name("censo.csv")
    if beside.is_file():
        return beside
    in_repo = _locate_repository_csv()
    if in_repo.is_file():
        return in_repo
    raise FileNotFoundError(
        f"no se encontró censo.csv ni en {beside} ni en {in_repo}; "
        "se regenera con: python -m dpdeck.data --write"
    )


def read_census(path) -> Census:
    """Lee un CSV con el formato de ``format_census_csv`` (sin caché)."""
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.reader(handle)
        header = next(reader, None)
        if header is None or tuple(header) != COLUMNS:
            raise ValueError(
                f"{path}: la primera línea debe ser {','.join(COLUMNS)}; se leyó {describe(header)}"
            )
        rows = list(reader)
    if not rows:
        raise ValueError(f"{path}: el archivo no tiene filas de datos")
    bad = next((i for i, row in enumerate(rows) if len(row) != len(COLUMNS)), None)
    if bad is not None:
        raise ValueError(f"{path}, línea {bad + 2}: se esperaban {len(COLUMNS)} campos")
    fields = list(zip(*rows))
    columns = {}
    for name, values in zip(COLUMNS, fields):
        if name in ("name", "sex", "education"):
            columns[name] = np.array(values, dtype=str)
        elif name == "high_income":
            columns[name] = np.array(values, dtype=str) == "1"
        else:
            columns[name] = np.array(values, dtype=np.int64)
    return Census(columns)


_CACHE: dict = {}


def load_census() -> Census:
    """Devuelve el censo sintético de 5000 personas (leído una vez, luego desde caché).

    Siempre es el mismo objeto de solo lectura: cada celda puede llamarla sin
    costo y ninguna puede alterar los datos de las demás.
    """
    census = _CACHE.get("census")
    if census is None:
        census = read_census(find_census_csv())
        _CACHE["census"] = census
    return census


def main(argv=None) -> int:
    """``python -m dpdeck.data --write [RUTA]``: regenera el CSV desde ``CENSUS_SEED``."""
    parser = argparse.ArgumentParser(prog="python -m dpdeck.data", description=main.__doc__)
    parser.add_argument("--write", action="store_true", help="escribe el CSV generado")
    parser.add_argument(
        "path",
        nargs="?",
        default=str(_locate_repository_csv()),
        help="destino (por defecto assets/data/censo.csv del repositorio)",
    )
    args = parser.parse_args(argv)
    census = generate_census(np.random.default_rng(CENSUS_SEED))
    if args.write:
        path = write_census(args.path, census)
        print(f"escrito {path} ({format_number(len(census))} personas)")
    else:
        print(census)
    return 0


if __name__ == "__main__":
    sys.exit(main())
