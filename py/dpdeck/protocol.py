"""El contrato de las celdas en vivo, visto desde Python.

Qué se dicen la página, el *worker* de Pyodide y `dpdeck.cellrun.run_cell`:
los límites de una celda (caracteres de salida, figuras, ritmo de los eventos),
los tipos de petición y de evento, las etapas del arranque, los estados de una
ejecución y los tipos de salida con su marcado HTML.

Cada valor está escrito una sola vez, en ``protocol.json`` (un archivo de datos
de este paquete, que viaja en su *wheel*). Este módulo lo expone a Python
(``run_cell`` y la construcción del mazo, que escribe las salidas
pre-calculadas); ``deck/js/shared/protocol.js`` lo expone a la página y al worker, y
esbuild lo empaqueta con el JSON dentro. La forma de cada mensaje y el marcado
de cada salida se describen en ``deck/README.md`` («El contrato de las celdas»).

Los conjuntos de nombres son tuplas con nombre, en el orden del contrato::

    OUTPUT.STREAM == "stream"
    tuple(BOOT_STAGE) == ("runtime", "core", "packages", "wheel", "warmup", "ready")
"""

from __future__ import annotations

import json
import re
from collections import namedtuple
from importlib import resources
from types import MappingProxyType
from typing import Mapping

__all__ = [
    "MAX_OUTPUT_CHARS",
    "MAX_FIGURES",
    "STREAM_EVENTS_PER_SECOND",
    "STREAM_EVENT_BURST",
    "REQUEST",
    "EVENT",
    "BOOT_STAGE",
    "RUN_STATUS",
    "STREAM",
    "OUTPUT",
    "OUTPUT_MARKUP",
    "NOTICE_CLASS",
    "OUTPUT_AREA_CLASS",
    "ORIGIN",
    "CELL_STATUS",
    "output_class",
    "figure_alt",
    "describe_figure",
    "figure_description",
    "error_text",
]

CONTRACT_FILE = "protocol.json"


def _read_contract() -> dict:
    try:
        text = resources.files(__package__).joinpath(CONTRACT_FILE).read_text(encoding="utf-8")
    except FileNotFoundError as error:
        # A wheel built without its data files: say which one, not just "no such file".
        raise ImportError(f"el paquete dpdeck está incompleto: le falta {CONTRACT_FILE}, "
                          "el contrato de las celdas, que debe viajar junto a sus módulos") from error
    return json.loads(text)


def _names(kind: str, values: list[str]) -> tuple:
    """`["boot", "run"]` → a read-only record with BOOT == "boot", RUN == "run", in order."""
    record = namedtuple(kind, [value.upper() for value in values])
    return record(*values)


_CONTRACT = _read_contract()
_LIMITS = _CONTRACT["limits"]

# Stream text a run may print; past it the rest is dropped with a notice.
MAX_OUTPUT_CHARS: int = _LIMITS["maxOutputChars"]
# Figures a run may show; the rest are closed with a notice.
MAX_FIGURES: int = _LIMITS["maxFigures"]
# The worker posts "stream" events at most this often on average, after a burst.
STREAM_EVENTS_PER_SECOND: int = _LIMITS["streamEventsPerSecond"]
STREAM_EVENT_BURST: int = _LIMITS["streamEventBurst"]

REQUEST = _names("Request", _CONTRACT["requests"])
EVENT = _names("Event", _CONTRACT["events"])
BOOT_STAGE = _names("BootStage", _CONTRACT["bootStages"])
# How a run ended, as `run_cell` says it.
RUN_STATUS = _names("RunStatus", _CONTRACT["runStatuses"])
STREAM = _names("Stream", _CONTRACT["streams"])
OUTPUT = _names("Output", list(_CONTRACT["outputs"]))
ORIGIN = _names("Origin", _CONTRACT["outputArea"]["origins"])
# A cell's `data-status` in the page.
CELL_STATUS = _names("CellStatus", _CONTRACT["cellStatuses"])

# Output kind → {"tag", "class", and for figures "alt"}.
OUTPUT_MARKUP: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {kind: MappingProxyType(dict(markup)) for kind, markup in _CONTRACT["outputs"].items()}
)
NOTICE_CLASS: str = _CONTRACT["notice"]["class"]
OUTPUT_AREA_CLASS: str = _CONTRACT["outputArea"]["class"]


def output_class(kind: str, *, stream: str = "") -> str:
    """Las clases HTML de una salida: `output_class("stream", stream="stderr")` → "out-stream out-stderr".

    Un nombre de flujo que no sea stderr se muestra como stdout.
    """
    shown = STREAM.STDERR if stream == STREAM.STDERR else STREAM.STDOUT
    return OUTPUT_MARKUP[kind]["class"].format(stream=shown)


def figure_alt(number: int, description: str) -> str:
    """El texto alternativo de la figura `number` (desde 1) de una celda, con lo que muestra.

    ``description`` es el campo del mismo nombre de la salida de la figura
    (ver `describe_figure`): qué curvas, qué ejes y el número clave.
    """
    return OUTPUT_MARKUP[OUTPUT.FIGURE]["alt"].format(number=number, description=description)


# Where a Figure carries its description until `run_cell` turns it into an output.
_DESCRIPTION_ATTRIBUTE = "_dpdeck_description"


def describe_figure(figure, description: str):
    """Da a una figura de matplotlib la frase que dice lo que muestra; devuelve la figura.

    Las funciones de `dpdeck.figures` la ponen en cada figura que dibujan (en
    español, con el número clave escrito según `dpdeck.numbers`); `run_cell`
    la lleva al campo ``description`` de la salida, y la página y la
    construcción la usan como texto alternativo (`figure_alt`).
    """
    # Line breaks and runs of spaces go; a no-break space (``73 %``) stays.
    text = re.sub(r"[ \t\r\n]+", " ", str(description)).strip()
    if not text:
        raise ValueError("la descripción de una figura no puede estar vacía")
    setattr(figure, _DESCRIPTION_ATTRIBUTE, text)
    return figure


def figure_description(figure) -> str | None:
    """La frase que `describe_figure` dio a una figura, o None si no tiene."""
    return getattr(figure, _DESCRIPTION_ATTRIBUTE, None)


def error_text(output: Mapping) -> str:
    """El texto que muestra una salida de error: su traza, o «nombre: mensaje» si no la tiene."""
    return output.get("traceback") or f"{output.get('ename')}: {output.get('evalue')}"
