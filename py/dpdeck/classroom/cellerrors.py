"""Lo que dice una celda que falla: un error de Python en español, con la traza de sus propias líneas.

``run_cell`` (``dpdeck.classroom.cellrun``) convierte aquí cada excepción en una
salida de error del contrato: una frase en español por excepción común
(``ERROR_HINTS``), mensajes propios para lo que en las diapositivas no existe
(``input()``, la red, ``sys.exit()``, paquetes que no vienen con el mazo, la
memoria) y la traza recortada a los marcos de la celda, con las repeticiones
resumidas y un tope de líneas y caracteres.
"""

from __future__ import annotations

import errno
import os
import sys
import traceback

from .protocol import OUTPUT


MISSING_PACKAGE_MESSAGE = (
    "El paquete «{name}» no está disponible. Estas diapositivas funcionan sin "
    "conexión y solo incluyen numpy, matplotlib y dpdeck; no se descarga nada "
    "de internet."
)
INPUT_MESSAGE = (
    "input() no está disponible en las diapositivas: una celda no puede pedir "
    "datos por teclado. Escribe el valor directamente en el código, por ejemplo "
    "«epsilon = 0.5», y vuelve a ejecutar."
)
MEMORY_MESSAGE = (
    "No hay memoria suficiente para esta operación: Python tiene un límite de "
    "memoria (en el navegador, unos 2 GB). Prueba con un tamaño más pequeño."
)
EXIT_MESSAGE = (
    "La celda llamó a sys.exit() (o exit()). Aquí Python no se puede cerrar: "
    "la ejecución de la celda terminó en ese punto."
)
STOPPED_MESSAGE = "Ejecución detenida."
# What a failed connection means depends on where the cell runs. In the
# browser the worker refuses every connection before it exists (and the page's
# security policy would block it anyway): nothing left the browser. In native
# Python (the build) the connection was really tried, and it failed.
NETWORK_MESSAGE = (
    "una celda no puede conectarse a internet ni a otros servidores, y no salió "
    "nada del navegador. Las diapositivas funcionan sin conexión y solo leen "
    "archivos de su propia carpeta; los datos de la clase vienen con dpdeck (por "
    "ejemplo, «from dpdeck.data import load_census»)."
)
NATIVE_NETWORK_MESSAGE = (
    "la celda intentó conectarse a otro servidor y no lo consiguió. Las celdas "
    "de las diapositivas funcionan sin conexión; los datos de la clase vienen con "
    "dpdeck (por ejemplo, «from dpdeck.data import load_census»)."
)

TRACEBACK_CAP_NOTICE = "  [… se omitieron {count} líneas de la traza …]"
# One Spanish sentence per common exception, so the first line of an error says
# in plain words what went wrong before the (English) Python message.
ERROR_HINTS = {
    "NameError": (
        "ese nombre no está definido. Cada celda empieza vacía: importa y "
        "define en ella todo lo que uses"
    ),
    "ZeroDivisionError": "división por cero",
    "TypeError": "un valor no es del tipo que la operación espera",
    "ValueError": "un valor no es válido para esta operación",
    "IndexError": "índice fuera de rango",
    "KeyError": "esa clave no existe",
    "AttributeError": "ese objeto no tiene ese atributo o método",
    "RecursionError": "demasiadas llamadas anidadas (¿una recursión sin fin?)",
    "AssertionError": "una comprobación con assert no se cumplió",
    "OverflowError": "el número es demasiado grande",
    "FloatingPointError": "error de coma flotante",
    "ImportError": "no se pudo importar ese nombre",
}

# Python collapses runs of identical frames the same way ("[Previous line repeated…]").
REPEATED_FRAME_LIMIT = 3
# A traceback longer than this (mutual recursion: f → g → f → …) keeps its
# first and last lines; whatever the student needs is at one end or the other.
TRACEBACK_MAX_LINES = 60
TRACEBACK_MAX_CHARS = 6_000


def _in_browser() -> bool:
    """Pyodide (the deck's worker) or native Python (the build)."""
    return sys.platform == "emscripten"


# --------------------------------------------------------------------------- errors


def _format_syntax_error(error: SyntaxError, source: str) -> dict:
    kind = "indentación" if isinstance(error, IndentationError) else "sintaxis"
    lineno = error.lineno or 1
    lines = source.splitlines()
    text_lines = [f"Error de {kind} en la línea {lineno}:"]
    code = lines[lineno - 1] if 0 < lineno <= len(lines) else (error.text or "").rstrip("\n")
    if code.strip():
        stripped = code.lstrip()
        indent = len(code) - len(stripped)
        text_lines.append(f"    {stripped.rstrip()}")
        if error.offset:
            caret_start = max(error.offset - 1 - indent, 0)
            end = error.end_offset if error.end_lineno == error.lineno else None
            width = max((end or error.offset + 1) - error.offset, 1)
            text_lines.append("    " + " " * caret_start + "^" * width)
    text_lines.append(f"{type(error).__name__}: {error.msg}")
    return {
        "type": OUTPUT.ERROR,
        "ename": type(error).__name__,
        "evalue": error.msg,
        "traceback": "\n".join(text_lines),
    }


# The files of the cell runner itself: this module and dpdeck.classroom.cellrun and cellguard, beside it.
_RUNNER_FILES = frozenset({__file__, *(os.path.join(os.path.dirname(__file__), name)
                                       for name in ("cellrun.py", "cellguard.py"))})


def _cell_frames(error: BaseException, filename: str):
    """Marcos de la traza que pertenecen a la celda, y el último marco en total."""
    summary = traceback.extract_tb(error.__traceback__)
    cell_frames = [frame for frame in summary if frame.filename == filename]
    # The runner's own frames (exec, the input() stand-in) mean nothing to a
    # student, nor do the JavaScript frames Pyodide adds to a JsException (the
    # deck's minified worker.js, the browser's «<anonymous>»).
    foreign = [frame for frame in summary
               if frame.filename not in _RUNNER_FILES and not _is_javascript_frame(frame)]
    last_frame = foreign[-1] if foreign else None
    return cell_frames, last_frame


def _is_javascript_frame(frame: traceback.FrameSummary) -> bool:
    """Un marco de JavaScript que Pyodide añade a la traza (archivo .js, una URL o «<anonymous>»)."""
    name = frame.filename
    return name.endswith((".js", ".mjs")) or "://" in name or name == "<anonymous>"


def _format_exception(error: BaseException, filename: str, lines: list[str],
                      max_chars: int = TRACEBACK_MAX_CHARS) -> dict:
    ename = type(error).__name__
    cell_frames, last_frame = _cell_frames(error, filename)
    error_line = cell_frames[-1].lineno if cell_frames else None
    where = f"en la línea {error_line}" if error_line else "en la celda"

    if isinstance(error, SystemExit):
        evalue = EXIT_MESSAGE
        header = f"sys.exit() {where}: {EXIT_MESSAGE}"
    elif isinstance(error, ModuleNotFoundError):
        name = (error.name or str(error)).split(".")[0]
        evalue = MISSING_PACKAGE_MESSAGE.format(name=name)
        header = f"Paquete no disponible {where}: {evalue}"
    elif isinstance(error, MemoryError) or _is_oversized_array(error):
        evalue = MEMORY_MESSAGE + (f" ({error})" if str(error) else "")
        header = f"Memoria insuficiente {where}: {MEMORY_MESSAGE}"
    elif isinstance(error, RuntimeError) and str(error) == INPUT_MESSAGE:
        evalue = INPUT_MESSAGE
        header = f"Entrada por teclado no disponible {where}."
    elif _is_network_error(error):
        evalue = NETWORK_MESSAGE if _in_browser() else NATIVE_NETWORK_MESSAGE
        header = f"Sin conexión {where}: {evalue}"
    else:
        evalue = str(error)
        hint = _hint_for(error)
        header = f"Error {where}" + (f": {hint}." if hint else ".")

    text_lines = [header]
    if cell_frames:
        text_lines.append("Traceback (la llamada más reciente al final):")
        text_lines.extend(_cap_lines(_format_frames(cell_frames, lines)))
    if last_frame is not None and last_frame.filename != filename:
        text_lines.append(f"  (el error se produjo dentro de {_describe_frame(last_frame)})")
    text_lines.extend(traceback.format_exception_only(type(error), error)[-1:])
    text = "\n".join(line.rstrip("\n") for line in text_lines)
    return {
        "type": OUTPUT.ERROR,
        "ename": ename,
        "evalue": evalue,
        "traceback": _cap_text(text, min(max_chars, TRACEBACK_MAX_CHARS)),
    }


def _cap_lines(lines: list[str], limit: int = TRACEBACK_MAX_LINES) -> list[str]:
    """Las primeras y las últimas líneas de una traza larga, con un aviso en medio."""
    if len(lines) <= limit:
        return lines
    head = limit // 2
    tail = limit - head
    notice = TRACEBACK_CAP_NOTICE.format(count=_thousands(len(lines) - head - tail))
    return lines[:head] + [notice] + lines[-tail:]


def _cap_text(text: str, limit: int) -> str:
    """El principio y el final de un texto de error más largo que `limit` caracteres."""
    if len(text) <= limit:
        return text
    head = limit * 2 // 3
    tail = limit - head
    omitted = len(text) - head - tail
    notice = f"\n[… se omitieron {_thousands(omitted)} caracteres del error …]\n"
    return text[:head] + notice + text[-tail:]


# Where Python's own networking lives: an OSError raised in there is a connection attempt.
_NETWORK_SOURCES = ("socket.py", "ssl.py", "urllib/", "http/")
# What a socket's connect() answers when the connection does not happen. In
# the browser: EHOSTUNREACH when the worker refuses the WebSocket that
# Emscripten's sockets use, EINPROGRESS if one were ever opened.
_NETWORK_ERRNOS = frozenset(
    getattr(errno, name) for name in ("EHOSTUNREACH", "ENETUNREACH", "ECONNREFUSED", "ECONNRESET",
                                      "ECONNABORTED", "ETIMEDOUT", "EINPROGRESS")
    if hasattr(errno, name)
)


def _is_network_error(error: BaseException) -> bool:
    """Un intento de conexión (en el navegador, el socket rechazado: «[Errno 23] Host is unreachable»)."""
    urllib_error = sys.modules.get("urllib.error")
    if urllib_error is not None and isinstance(error, urllib_error.URLError):
        return True
    if not isinstance(error, OSError):
        return False
    socket = sys.modules.get("socket")
    if isinstance(error, ConnectionError) or (socket is not None and isinstance(error, socket.gaierror)):
        return True
    if error.errno in _NETWORK_ERRNOS:
        return True
    # A socket's own time limit (`settimeout`): «timed out», without an errno.
    if isinstance(error, TimeoutError) and socket is not None and error.errno is None and str(error) == "timed out":
        return True
    for frame in traceback.extract_tb(error.__traceback__):
        path = frame.filename.replace("\\", "/")
        if any(path.endswith(source) or f"/{source}" in path for source in _NETWORK_SOURCES):
            return True
    return False


def _format_stop(error: BaseException, filename: str) -> dict:
    cell_frames, _ = _cell_frames(error, filename)
    where = f" en la línea {cell_frames[-1].lineno}" if cell_frames else ""
    return {
        "type": OUTPUT.ERROR,
        "ename": "KeyboardInterrupt",
        "evalue": STOPPED_MESSAGE,
        "traceback": f"Ejecución detenida{where} (KeyboardInterrupt).",
    }


def _is_oversized_array(error: BaseException) -> bool:
    """El ValueError de numpy para un arreglo más grande que el espacio de direcciones.

    En el navegador (WebAssembly de 32 bits) `np.ones(10**10)` falla así y no
    con MemoryError; para quien estudia es el mismo problema.
    """
    if not isinstance(error, ValueError):
        return False
    message = str(error)
    return "Maximum allowed dimension exceeded" in message or message.startswith("array is too big")


def _hint_for(error: BaseException) -> str | None:
    for klass in type(error).__mro__:
        hint = ERROR_HINTS.get(klass.__name__)
        if hint is not None:
            return hint
    return None


def _format_frames(frames, lines: list[str]) -> list[str]:
    formatted: list[str] = []
    previous = None
    repeats = 0
    for frame in frames:
        key = (frame.lineno, frame.name)
        if key == previous:
            repeats += 1
            if repeats >= REPEATED_FRAME_LIMIT:
                continue
        else:
            if repeats >= REPEATED_FRAME_LIMIT:
                formatted.append(_format_repetition(repeats))
            previous = key
            repeats = 0
        where = "" if frame.name == "<module>" else f", en {frame.name}"
        formatted.append(f"  Línea {frame.lineno}{where}")
        code = _source_line(lines, frame.lineno)
        if code:
            formatted.append(f"    {code}")
    if repeats >= REPEATED_FRAME_LIMIT:
        formatted.append(_format_repetition(repeats))
    return formatted


def _format_repetition(repeats: int) -> str:
    more = repeats - REPEATED_FRAME_LIMIT + 1
    times = "vez" if more == 1 else "veces"
    return f"  [La línea anterior se repitió {_thousands(more)} {times} más]"


def _describe_frame(frame: traceback.FrameSummary) -> str:
    path = frame.filename.replace("\\", "/")
    parts = path.split("/")
    # Show "numpy/_core/fromnumeric.py" rather than a machine-specific absolute path.
    for anchor in ("site-packages", "dpdeck", "lib"):
        if anchor in parts:
            index = parts.index(anchor)
            start = index + 1 if anchor != "dpdeck" else index
            parts = parts[start:]
            break
    short = "/".join(parts[-3:]) if len(parts) > 3 else "/".join(parts)
    return f"{frame.name} ({short}, línea {frame.lineno})"


def _source_line(lines: list[str], lineno: int | None) -> str:
    if lineno is None or not 0 < lineno <= len(lines):
        return ""
    return lines[lineno - 1].strip()


def _thousands(number: int) -> str:
    # Spanish groups thousands with a (thin) space: 20 000.
    return f"{number:,}".replace(",", "\u202f")
