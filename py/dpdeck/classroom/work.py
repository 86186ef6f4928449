"""El trabajo de un estudiante, como lo exporta el mazo («Exportar mi trabajo»): su formato y su lectura.

Un archivo JSON con lo que el estudiante hizo en su navegador::

    {"format": "dpdeck-trabajo", "version": 1,
     "deck": {"id": "privacidad-diferencial", "title": "Privacidad Diferencial"},
     "checkers": "3f2a…",                  # la versión de las comprobaciones del mazo
     "student": "Ana", "exportedAt": "2026-12-06T10:15:00.000Z",
     "edits": {"id de celda": "código", …},                  # cada celda que cambió
     "exercises": {"ejercicio-laplace": {"check": "laplace-escala", "source": "…",
                   "edited": true, "browserVerdict": {"passed": true, "at": "…"} | null}, …},
     "challenge": {"seed": 0, "extension": {…}} | null,      # el reto del laboratorio
     "predictions": {"id de celda": {"choice": "2", "answer": "2"}, …},
     "sha256": "…"}

``sha256`` es el SHA-256 del JSON canónico de todo lo demás (claves
ordenadas, sin espacios, UTF-8: ``canonical_json``), que la página calcula
igual al exportar. Detecta un archivo cortado o retocado a mano después de
exportarlo; no es una firma (quien quiera puede recalcularlo), y nada se
califica con lo que dijo el navegador: ``dpdeck.classroom.grading`` vuelve a
ejecutar cada comprobación sobre el código.

``checker_version()`` es la huella de las comprobaciones (el código de
``dpdeck.classroom.exercises`` y la versión del paquete): la construcción la
escribe en la página y viaja en cada archivo, para saber con qué
comprobaciones vio el estudiante sus veredictos.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Mapping

from .. import __version__
from .protocol import WORK_FORMAT, WORK_MAX_BYTES, WORK_VERSION

__all__ = [
    "WorkError",
    "Work",
    "canonical_json",
    "work_digest",
    "checker_version",
    "deck_id",
    "read_work",
    "parse_work",
]

# A cell or exercise id, as the slides write them (deckbuild.slides.CELL_ID).
_ID = re.compile(r"[a-z0-9-]{1,80}")
# What one file may hold, whatever its size: a deck has tens of cells.
_MAX_ENTRIES = 500
_MAX_TEXT_CHARS = 200_000
_CHECKER_DIGITS = 12


class WorkError(ValueError):
    """Por qué un archivo no es un trabajo exportado que se pueda leer: una frase en español."""


@dataclass(frozen=True)
class Work:
    """Un trabajo exportado, leído y comprobado (los campos del formato, con nombres de Python)."""

    deck_id: str
    deck_title: str
    checkers: str
    student: str
    exported_at: str
    edits: Mapping[str, str]
    exercises: Mapping[str, Mapping]      # id → {"check", "source", "edited", "browserVerdict"}
    challenge: Mapping | None             # {"seed", "extension"} o None
    predictions: Mapping[str, Mapping]    # id de celda → {"choice", "answer"}


def canonical_json(value) -> str:
    """El texto JSON con el que se calcula la huella: claves ordenadas, sin espacios, sin escapar lo que no es ASCII.

    Es lo que escribe ``JSON.stringify`` con las claves ordenadas, para los
    valores que lleva un trabajo (textos, enteros, booleanos, null, listas y
    objetos): la página y Python obtienen los mismos bytes.
    """
    return json.dumps(value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False)


def work_digest(document: Mapping) -> str:
    """El SHA-256 (hexadecimal) del JSON canónico de un trabajo sin su campo ``sha256``."""
    body = {key: value for key, value in document.items() if key != "sha256"}
    return hashlib.sha256(canonical_json(body).encode("utf-8", "surrogatepass")).hexdigest()


def checker_version() -> str:
    """La huella de las comprobaciones: SHA-256 (12 cifras) del código de ``dpdeck.classroom.exercises`` y la versión.

    Cambia cuando cambia cualquier comprobación; la construcción la escribe en la
    página y el corrector compara la de cada archivo con la suya.
    """
    digest = hashlib.sha256(f"dpdeck {__version__}\n".encode())
    package = resources.files("dpdeck.classroom.exercises")
    for name in sorted(entry.name for entry in package.iterdir() if entry.name.endswith(".py")):
        digest.update(name.encode() + b"\n" + package.joinpath(name).read_bytes() + b"\n")
    return digest.hexdigest()[:_CHECKER_DIGITS]


def deck_id(title: str) -> str:
    """El nombre estable de un mazo, de su título: «Privacidad Diferencial» → "privacidad-diferencial"."""
    folded = title.casefold()
    for plain, accented in (("a", "áàä"), ("e", "éèë"), ("i", "íìï"), ("o", "óòö"), ("u", "úùü"), ("n", "ñ")):
        for character in accented:
            folded = folded.replace(character, plain)
    return re.sub(r"[^a-z0-9]+", "-", folded).strip("-") or "mazo"


def read_work(path: Path) -> Work:
    """Lee un archivo exportado; ``WorkError`` con una frase que dice qué tiene de malo."""
    path = Path(path)
    try:
        size = path.stat().st_size
    except OSError as error:
        raise WorkError(f"no se puede leer ({error.strerror or error})") from None
    if size > WORK_MAX_BYTES:
        raise WorkError(f"pesa {size} bytes, más de los {WORK_MAX_BYTES} que puede tener un trabajo exportado")
    try:
        data = path.read_bytes()
    except OSError as error:
        raise WorkError(f"no se puede leer ({error.strerror or error})") from None
    return parse_work(data)


def parse_work(data: bytes) -> Work:
    """Un trabajo exportado desde sus bytes; ``WorkError`` si está cortado, es de otro formato o se retocó."""
    if not data.strip():
        raise WorkError("está vacío")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise WorkError("no es texto UTF-8: no es un trabajo exportado por el mazo") from None
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        cut = error.pos >= len(text.rstrip()) - 1 and error.msg != "Extra data"
        if cut or error.msg.startswith("Unterminated string"):
            raise WorkError("está cortado: el JSON termina antes de cerrarse (¿se copió a medias?)") from None
        raise WorkError(f"no es JSON válido (línea {error.lineno}, columna {error.colno}: {error.msg})") from None
    if not isinstance(document, dict) or document.get("format") != WORK_FORMAT:
        raise WorkError(f"no es un trabajo exportado por el mazo (le falta \"format\": \"{WORK_FORMAT}\")")
    version = document.get("version")
    if version != WORK_VERSION:
        raise WorkError(f"es de la versión {version!r} del formato; este corrector lee la {WORK_VERSION}")
    recorded = document.get("sha256")
    if not isinstance(recorded, str) or recorded != work_digest(document):
        raise WorkError("se modificó después de exportarlo: su huella SHA-256 no coincide con su contenido")
    return _read_fields(document)


def _read_fields(document: dict) -> Work:
    deck = _expect(document, "deck", dict)
    edits = _expect(document, "edits", dict)
    exercises = _expect(document, "exercises", dict)
    predictions = _expect(document, "predictions", dict)
    challenge = document.get("challenge")
    for name, entries in (("edits", edits), ("exercises", exercises), ("predictions", predictions)):
        if len(entries) > _MAX_ENTRIES:
            raise WorkError(f"«{name}» tiene {len(entries)} entradas; un mazo no tiene tantas celdas")
        bad = next((key for key in entries if not _ID.fullmatch(key)), None)
        if bad is not None:
            raise WorkError(f"«{name}» nombra una celda que no puede existir: {bad[:40]!r}")
    for cell, source in edits.items():
        _check_text(source, f"la edición de «{cell}»")
    for exercise, entry in exercises.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("check"), str):
            raise WorkError(f"el ejercicio «{exercise}» no dice qué comprobación lleva")
        _check_text(entry.get("source"), f"el código del ejercicio «{exercise}»")
    for cell, entry in predictions.items():
        if not isinstance(entry, dict) or not isinstance(entry.get("choice"), str):
            raise WorkError(f"la predicción de «{cell}» no dice qué se eligió")
    if challenge is not None and not (isinstance(challenge, dict) and isinstance(challenge.get("extension"), dict)):
        raise WorkError("el reto del laboratorio no tiene la forma {\"seed\", \"extension\"}")
    return Work(
        deck_id=_expect(deck, "id", str), deck_title=_expect(deck, "title", str),
        checkers=_expect(document, "checkers", str), student=_expect(document, "student", str),
        exported_at=_expect(document, "exportedAt", str), edits=edits, exercises=exercises,
        challenge=challenge, predictions=predictions,
    )


def _expect(mapping: dict, key: str, kind: type):
    value = mapping.get(key)
    if not isinstance(value, kind):
        raise WorkError(f"le falta el campo «{key}» (o no es {_KIND_NAMES[kind]})")
    return value


def _check_text(value, what: str) -> None:
    if not isinstance(value, str):
        raise WorkError(f"{what} no es texto")
    if len(value) > _MAX_TEXT_CHARS:
        raise WorkError(f"{what} tiene {len(value)} caracteres; una celda no tiene tantos")


_KIND_NAMES = {dict: "un objeto", str: "un texto", int: "un número"}
