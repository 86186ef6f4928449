"""El contrato de las celdas en vivo y del aula, visto desde Python.

Qué se dicen la página, el *worker* de Pyodide y `dpdeck.classroom.cellrun.run_cell`:
los límites de una celda (caracteres de salida, figuras, ritmo de los eventos),
los tipos de petición y de evento, las etapas del arranque, los estados de una
ejecución y los tipos de salida con su marcado HTML. Y lo del aula: los
mensajes entre el mazo y su vista del presentador (``MIRROR_*``), el canal con
el que los estudiantes siguen al profesor (``FOLLOW``, que sirve
``deckbuild.server``) y el formato del trabajo que exporta un estudiante
(``WORK_*``, que lee ``dpdeck.classroom.work``).

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
    "error_text",
    "MIRROR_CHANNEL",
    "MIRROR_TO_SPEAKER",
    "MIRROR_TO_DECK",
    "FOLLOW",
    "WORK_FORMAT",
    "WORK_VERSION",
    "WORK_MAX_BYTES",
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


def _constant_name(value: str) -> str:
    """"run" → "RUN"; "runSlide" → "RUN_SLIDE" (protocol.js names them the same way)."""
    return re.sub(r"([a-z])([A-Z])", r"\1_\2", value).upper()


def _names(kind: str, values: list[str]) -> tuple:
    """`["boot", "runSlide"]` → a read-only record with BOOT == "boot", RUN_SLIDE == "runSlide", in order."""
    record = namedtuple(kind, [_constant_name(value) for value in values])
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

# The deck and its speaker view (reveal's notes window, whose previews load the
# deck with ?receiver) talk through window.postMessage, each message
# {channel: MIRROR_CHANNEL, type, ...}: the deck tells the previews what its
# cells show (MIRROR_TO_SPEAKER), and the previews ask the deck's one Python
# to run, stop or reset them (MIRROR_TO_DECK).
MIRROR_CHANNEL: str = _CONTRACT["mirror"]["channel"]
MIRROR_TO_SPEAKER = _names("MirrorToSpeaker", _CONTRACT["mirror"]["toSpeaker"])
MIRROR_TO_DECK = _names("MirrorToDeck", _CONTRACT["mirror"]["toDeck"])

# Following the lecturer (`build.py serve`): the routes, relative to the deck's
# folder; the header that says a server offers them; the lecturer's key (its
# header, and the query parameter of the address the terminal prints); the
# server-sent event's name; and the channel's bounds.
FOLLOW: Mapping[str, object] = MappingProxyType(dict(_CONTRACT["follow"]))

# A student's exported work (dpdeck.classroom.work): its format's name and
# version, and the most bytes a file of it may have.
WORK_FORMAT: str = _CONTRACT["work"]["format"]
WORK_VERSION: int = _CONTRACT["work"]["version"]
WORK_MAX_BYTES: int = _CONTRACT["work"]["maxBytes"]


def output_class(kind: str, *, stream: str = "") -> str:
    """Las clases HTML de una salida: `output_class("stream", stream="stderr")` → "out-stream out-stderr".

    Un nombre de flujo que no sea stderr se muestra como stdout.
    """
    shown = STREAM.STDERR if stream == STREAM.STDERR else STREAM.STDOUT
    return OUTPUT_MARKUP[kind]["class"].format(stream=shown)


def figure_alt(number: int, description: str) -> str:
    """El texto alternativo de la figura `number` (desde 1) de una celda, con lo que muestra.

    ``description`` es el campo del mismo nombre de la salida de la figura
    (ver ``dpdeck.figure_descriptions.describe_figure``): qué curvas, qué ejes y el número clave.
    """
    return OUTPUT_MARKUP[OUTPUT.FIGURE]["alt"].format(number=number, description=description)


def error_text(output: Mapping) -> str:
    """El texto que muestra una salida de error: su traza, o «nombre: mensaje» si no la tiene."""
    return output.get("traceback") or f"{output.get('ename')}: {output.get('evalue')}"
