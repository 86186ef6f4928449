"""Ejecución de una celda de las diapositivas, como lo haría un cuaderno Jupyter.

`run_cell` ejecuta el código de una celda en un espacio de nombres nuevo y
devuelve sus salidas como datos simples (texto, valor de la última expresión,
figuras PNG y errores en español). Lo usan dos sitios con el mismo resultado:
la construcción del mazo (que pre-calcula cada celda con Python nativo) y el
*worker* de Pyodide en el navegador (que la vuelve a calcular en directo).

Este módulo no importa `js` ni `pyodide`: el navegador le pasa un `on_output`
para ir mostrando el texto a medida que sale. Los tipos de salida, los estados
de una ejecución y los límites son los del contrato de las celdas
(`dpdeck.classroom.protocol`, descrito en deck/README.md).

Lo que una celda dice cuando falla (los mensajes en español, la traza
recortada a las líneas del estudiante) está en ``dpdeck.classroom.cellerrors``;
lo que una celda no puede dejar cambiado para las demás (los módulos
compartidos, el código de dpdeck, sus tareas de asyncio) y ``run_untouched``,
en ``dpdeck.classroom.cellguard``.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import io
import linecache
import os
import struct
import sys
import types
import warnings
from typing import Any, Callable

from ..figure_descriptions import figure_description
from .cellerrors import (
    INPUT_MESSAGE,
    MISSING_PACKAGE_MESSAGE,
    _format_exception,
    _format_stop,
    _format_syntax_error,
    _source_line,
    _thousands,
)
from .cellguard import (
    _ModuleState,
    _baseline_state,
    _cancel_new_tasks,
    _event_loop,
    _guarded_modules,
    _package_code,
    _pending_tasks,
    run_untouched,
)
from .protocol import MAX_FIGURES, MAX_OUTPUT_CHARS, OUTPUT, RUN_STATUS, STREAM

__all__ = ["run_cell", "run_untouched", "prepare_matplotlib", "MISSING_PACKAGE_MESSAGE"]

OutputCallback = Callable[[dict], Any]

OUTPUT_CAP_NOTICE = (
    "\n[Salida recortada: se muestran los primeros {limit} caracteres; "
    "el resto se descartó.]\n"
)
VALUE_CAP_NOTICE = "\n[Valor recortado: se muestran los primeros {limit} caracteres.]"
FIGURE_CAP_NOTICE = (
    "[La celda creó {count} figuras; se muestran las primeras {limit}.]\n"
)
# What a figure without a description of its own (one a student draws) is
# said to show: what matplotlib knows of it, its labels and what it drew.
UNDESCRIBED_FIGURE = "gráfico sin descripción propia: {details}"
UNLABELLED_FIGURE = "gráfico sin descripción ni rótulos"
FIGURE_PARTS = {
    "title": "título «{}»",
    "xlabel": "eje horizontal «{}»",
    "ylabel": "eje vertical «{}»",
    "series": "series: {}",
    "lines": ("1 línea", "{} líneas"),
    "bars": ("1 barra", "{} barras"),
    "collections": ("1 conjunto de puntos o áreas", "{} conjuntos de puntos o áreas"),
    "images": ("1 imagen", "{} imágenes"),
}
# A figure's summary names at most this many series.
SUMMARY_SERIES = 6

# The figure's pixel size is figsize × this; 120 keeps text crisp on a projector
# without making every PNG heavy.
FIGURE_DPI = 120


def run_cell(
    source: str,
    *,
    cell_id: str = "celda",
    on_output: OutputCallback | None = None,
    max_output_chars: int = MAX_OUTPUT_CHARS,
    max_figures: int = MAX_FIGURES,
    on_namespace: Callable[[dict], Any] | None = None,
) -> dict:
    """Ejecuta el código de una celda y devuelve sus salidas, como un cuaderno.

    El código corre en un módulo `__main__` nuevo (nada pasa de una celda a
    otra), con matplotlib en el backend Agg y la configuración de matplotlib
    restaurada al terminar. Lo que la celda cambie en los módulos compartidos
    (builtins, math, numpy, matplotlib, dpdeck; `np.exp = …`) se deshace al
    terminar, para que una celda no pueda estropear las demás.

    Devuelve `{"status": "done" | "error" | "stopped", "outputs": [...]}`, cada
    salida un diccionario simple: `stream` (stdout/stderr, recortado a
    `max_output_chars` con un aviso), `value` (repr de la última expresión),
    `figure` (PNG de cada figura creada, como mucho `max_figures`, todas
    cerradas al final) y `error` (mensaje en español y traza limitada a las
    líneas de la celda, con su numeración). `on_output`, si se da, recibe cada
    trozo de texto de stdout/stderr en cuanto se escribe.

    `on_namespace`, si se da, recibe el espacio de nombres de la celda cuando
    su código terminó sin error, todavía dentro de sus resguardos: lo que
    escriba sale con la celda, una excepción es un error de la celda, Stop la
    detiene, y lo que cambie en los módulos compartidos se deshace. Así
    `dpdeck.exercises` comprueba lo que definió la celda de un ejercicio.
    """
    filename = f"<celda {cell_id}>"
    lines = source.splitlines(keepends=True)
    # Registering the source lets warnings and inspect show the cell's lines.
    linecache.cache[filename] = (len(source), None, lines, filename)
    collector = _OutputCollector(on_output, max_output_chars)

    try:
        body_code, last_code = _compile_cell(source, filename)
    except SyntaxError as error:
        collector.add(_format_syntax_error(error, source))
        return collector.result(RUN_STATUS.ERROR)

    guarded_modules = _guarded_modules()
    package_code = _package_code(guarded_modules)
    # Taken before the cell runs, into this frame: after it, dpdeck's functions
    # get their own code back before any of them (the restores below) is called.
    functions = package_code.functions
    # What a callback left by an earlier cell changed after that cell ended
    # (a promise, a message port, an asyncio task) is undone before this one.
    _baseline_state(guarded_modules).restore()
    package_code.restore()
    loop = _event_loop()
    tasks_before = _pending_tasks(loop)
    _force_agg_backend()
    _close_all_pyplot_figures()
    namespace_module = types.ModuleType("__main__")
    namespace_module.__dict__["__builtins__"] = _cell_builtins()
    namespace = namespace_module.__dict__

    status = RUN_STATUS.DONE
    value = None
    error_output = None
    saved_main = sys.modules.get("__main__")
    try:
        with contextlib.ExitStack() as stack:
            stack.enter_context(_swap_sys_streams(collector))
            stack.enter_context(_cell_warnings(filename, lines))
            rc_context = _matplotlib_rc_context()
            if rc_context is not None:
                stack.enter_context(rc_context)
                # The cell's own notice (FIGURE_CAP_NOTICE) says it in Spanish.
                sys.modules["matplotlib"].rcParams["figure.max_open_warning"] = 0
            stack.enter_context(_numpy_settings())
            stack.callback(sys.setrecursionlimit, sys.getrecursionlimit())
            # Taken last, so what it puts back is the state the cell started in.
            module_state = _ModuleState.save(guarded_modules)
            sys.modules["__main__"] = namespace_module
            raised = None
            try:
                exec(body_code, namespace)
                if last_code is not None:
                    value = eval(last_code, namespace)
                if on_namespace is not None:
                    on_namespace(namespace)
            except BaseException as error:  # the student's code may raise anything
                raised = error
            finally:
                # Before any of this module's code runs again (formatting the
                # error included): it must not see the cell's `builtins.len = …`,
                # nor run a function of dpdeck whose code the cell swapped: so
                # this loop is written out here, not called (cellguard has its twin).
                for function, code, defaults, kwdefaults in functions:
                    if function.__code__ is not code:
                        function.__code__ = code
                    if function.__defaults__ is not defaults:
                        function.__defaults__ = defaults
                    if function.__kwdefaults__ is not kwdefaults:
                        function.__kwdefaults__ = kwdefaults
                module_state.restore()
                package_code.restore()
                if saved_main is not None:
                    sys.modules["__main__"] = saved_main
                else:
                    sys.modules.pop("__main__", None)
            if isinstance(raised, KeyboardInterrupt):
                status = RUN_STATUS.STOPPED
                error_output = _format_stop(raised, filename)
            elif raised is not None:
                status = RUN_STATUS.ERROR
                error_output = _format_exception(raised, filename, lines, max_output_chars)
            # Inside the rc context so figures render with the cell's own settings.
            if status == RUN_STATUS.DONE and value is not None:
                value_output = _format_value(value, max_output_chars)
                if value_output is not None:
                    collector.add(value_output)
            collector.extend(_collect_figures(value, max_figures))
    except KeyboardInterrupt as error:
        # An interrupt that lands while figures are rendered still stops cleanly.
        status = RUN_STATUS.STOPPED
        error_output = _format_stop(error, filename)
        _close_all_pyplot_figures()
    _cancel_new_tasks(loop, tasks_before)
    if error_output is not None:
        collector.add(error_output)
    return collector.result(status)


ARTIST_SET_DOC = (
    "Cambia varias propiedades a la vez: set(color='red', linewidth=2). "
    "Cada propiedad tiene también su método set_<propiedad>."
)


def prepare_matplotlib() -> None:
    """Omite el trabajo de ``import matplotlib.pyplot`` que ninguna celda usa; se llama antes de importarlo.

    Al definirse, cada clase de artista de matplotlib (Line2D, Text,
    Rectangle…) recorre todas sus propiedades para escribir la ayuda y la
    firma de su método ``set()``: en Pyodide es la mitad del tiempo de
    importar pyplot (alrededor de un segundo en cada visita), solo para lo que
    mostraría ``help(linea.set)``. Aquí ``set()`` queda igual de útil, con una
    ayuda breve (``ARTIST_SET_DOC``). Las figuras no cambian en nada. Lo usa el
    worker del navegador; llamada después de importar pyplot, solo alcanza a
    las clases que se definan más tarde.
    """
    from matplotlib import artist

    def update_set_signature_and_docstring(cls):
        # The flag tells matplotlib that this set() is its own generated one, as before.
        cls.set._autogenerated_signature = True
        cls.set.__doc__ = ARTIST_SET_DOC

    if hasattr(artist.Artist, "_update_set_signature_and_docstring"):
        artist.Artist._update_set_signature_and_docstring = classmethod(update_set_signature_and_docstring)


# --------------------------------------------------------------------------- compile


def _compile_cell(source: str, filename: str):
    """Compila la celda; separa la última expresión para poder mostrar su valor."""
    tree = ast.parse(source, filename, "exec")
    last_code = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = tree.body.pop()
        last_code = compile(ast.Expression(body=last.value), filename, "eval")
    body_code = compile(tree, filename, "exec")
    return body_code, last_code


# --------------------------------------------------------------------------- streams


class _OutputCollector:
    """Guarda las salidas en orden, une escrituras seguidas y aplica el límite."""

    def __init__(self, on_output: OutputCallback | None, max_output_chars: int):
        self.outputs: list[dict] = []
        self.on_output = on_output
        self.max_output_chars = max_output_chars
        self.stream_chars = 0
        self.capped = False

    def write(self, name: str, text: str) -> None:
        if not text or self.capped:
            return
        room = self.max_output_chars - self.stream_chars
        if len(text) > room:
            self.capped = True
            self._append_stream(name, text[:room])
            notice = OUTPUT_CAP_NOTICE.format(limit=_thousands(self.max_output_chars))
            self._append_stream(STREAM.STDERR, notice)
            return
        self.stream_chars += len(text)
        self._append_stream(name, text)

    def _append_stream(self, name: str, text: str) -> None:
        if not text:
            return
        last = self.outputs[-1] if self.outputs else None
        if last is not None and last["type"] == OUTPUT.STREAM and last["name"] == name:
            last["text"] += text
        else:
            self.outputs.append({"type": OUTPUT.STREAM, "name": name, "text": text})
        if self.on_output is not None:
            self.on_output({"type": OUTPUT.STREAM, "name": name, "text": text})

    def add(self, output: dict) -> None:
        self.outputs.append(output)

    def extend(self, outputs: list[dict]) -> None:
        self.outputs.extend(outputs)

    def result(self, status: str) -> dict:
        return {"status": status, "outputs": self.outputs}


class _CellStream(io.TextIOBase):
    """Un sys.stdout / sys.stderr que entrega el texto al colector."""

    def __init__(self, collector: _OutputCollector, name: str):
        self._collector = collector
        self._name = name

    @property
    def name(self) -> str:
        return f"<{self._name}>"

    @property
    def encoding(self) -> str:
        return "utf-8"

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return False

    def write(self, text) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._collector.write(self._name, text)
        return len(text)

    def flush(self) -> None:
        pass


class _NoInput(io.TextIOBase):
    """Un sys.stdin que explica en español que no hay teclado."""

    def readable(self) -> bool:
        return True

    def read(self, size=-1):
        raise RuntimeError(INPUT_MESSAGE)

    def readline(self, size=-1):
        raise RuntimeError(INPUT_MESSAGE)


def _refuse_input(prompt: object = "") -> str:
    raise RuntimeError(INPUT_MESSAGE)


def _cell_builtins() -> dict:
    cell_builtins = dict(builtins.__dict__)
    cell_builtins["input"] = _refuse_input
    return cell_builtins


@contextlib.contextmanager
def _swap_sys_streams(collector: _OutputCollector):
    saved = sys.stdout, sys.stderr, sys.stdin
    sys.stdout = _CellStream(collector, STREAM.STDOUT)
    sys.stderr = _CellStream(collector, STREAM.STDERR)
    sys.stdin = _NoInput()
    try:
        yield
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved


@contextlib.contextmanager
def _cell_warnings(filename: str, lines: list[str]):
    """Aísla los filtros de avisos y muestra los de la celda en español."""
    with warnings.catch_warnings():
        warnings.simplefilter("default")
        # plt.show() is harmless here: every figure is shown when the cell ends.
        warnings.filterwarnings("ignore", message=".*non-interactive, and thus cannot be shown")
        original_show = warnings.showwarning

        def show_warning(message, category, warn_file, lineno, file=None, line=None):
            if warn_file != filename:
                original_show(message, category, warn_file, lineno, file, line)
                return
            text = f"Aviso en la línea {lineno}: {category.__name__}: {message}\n"
            code = _source_line(lines, lineno)
            if code:
                text += f"    {code}\n"
            sys.stderr.write(text)

        warnings.showwarning = show_warning
        yield


# --------------------------------------------------------------------------- values


def _format_value(value: object, max_chars: int) -> dict | None:
    if _is_matplotlib_object(value):
        # Artists' reprs carry memory addresses; the figure itself is the result.
        return None
    try:
        text = repr(value)
    except Exception as error:  # a broken __repr__ must not lose the cell's other outputs
        text = f"<repr() falló: {type(error).__name__}: {error}>"
    if len(text) > max_chars:
        text = text[:max_chars] + VALUE_CAP_NOTICE.format(limit=_thousands(max_chars))
    return {"type": OUTPUT.VALUE, "text": text}


def _is_matplotlib_object(value: object) -> bool:
    candidates = value if isinstance(value, (list, tuple)) and value else [value]
    for item in candidates:
        module = type(item).__module__ or ""
        if not (module == "matplotlib" or module.startswith("matplotlib.")):
            return False
    return True


# --------------------------------------------------------------------------- figures


def _force_agg_backend() -> None:
    os.environ["MPLBACKEND"] = "Agg"
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is not None:
        matplotlib.use("Agg")


def _matplotlib_rc_context():
    matplotlib = sys.modules.get("matplotlib")
    if matplotlib is None:
        # Importing here keeps rcParams changes of this cell from leaking to the next.
        try:
            import matplotlib
        except ImportError:
            return None
    return matplotlib.rc_context()


@contextlib.contextmanager
def _numpy_settings():
    """Restaura al terminar la celda las opciones de impresión y de errores de numpy.

    Son globales del proceso: una celda que llamara a np.set_printoptions
    cambiaría cómo imprimen sus arreglos todas las celdas siguientes.

    Los errores de coma flotante (np.log(0), 1/0 en un arreglo) se ignoran,
    como en el navegador: WebAssembly no tiene los indicadores de excepción de
    coma flotante que numpy consulta, así que allí ni avisa ni puede lanzar
    (np.seterr no tiene efecto). Con Python nativo la celda da la misma
    salida que en las diapositivas: -inf o nan, sin RuntimeWarning.
    """
    try:
        import numpy
    except ImportError:
        yield
        return
    with numpy.printoptions(), numpy.errstate(all="ignore"):
        yield


def _close_all_pyplot_figures() -> None:
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        pyplot.close("all")


def _collect_figures(value: object, max_figures: int) -> list[dict]:
    """PNG de cada figura abierta de pyplot y de una Figure devuelta; las cierra."""
    figures = []
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is not None:
        figures = [pyplot.figure(number) for number in pyplot.get_fignums()]
    figure_module = sys.modules.get("matplotlib.figure")
    if figure_module is not None and isinstance(value, figure_module.Figure):
        if all(value is not figure for figure in figures):
            figures.append(value)
    outputs: list[dict] = []
    try:
        for figure in figures[:max_figures]:
            outputs.append(_figure_to_png(figure))
    finally:
        if pyplot is not None:
            pyplot.close("all")
    if len(figures) > max_figures:
        notice = FIGURE_CAP_NOTICE.format(count=len(figures), limit=max_figures)
        outputs.append({"type": OUTPUT.STREAM, "name": STREAM.STDERR, "text": notice})
    return outputs


def _figure_to_png(figure) -> dict:
    buffer = io.BytesIO()
    # No "Software" tag: the same figure gives the same bytes on every run.
    figure.savefig(buffer, format="png", dpi=FIGURE_DPI, metadata={"Software": None})
    data = buffer.getvalue()
    width, height = struct.unpack(">II", data[16:24])  # PNG IHDR
    description = figure_description(figure) or _summarize_figure(figure)
    return {"type": OUTPUT.FIGURE, "format": "png", "data": data, "width": width, "height": height,
            "description": description}


def _count(kind: str, number: int) -> str:
    one, many = FIGURE_PARTS[kind]
    return one if number == 1 else many.format(_thousands(number))


def _summarize_figure(figure) -> str:
    """Lo que se sabe de una figura sin descripción: títulos, ejes, series y qué dibuja cada eje."""
    described = []
    for ax in figure.get_axes():
        parts = []
        for kind, text in (("title", ax.get_title()), ("xlabel", ax.get_xlabel()), ("ylabel", ax.get_ylabel())):
            if text.strip():
                parts.append(FIGURE_PARTS[kind].format(" ".join(text.split())))
        labels = [label for label in ax.get_legend_handles_labels()[1] if label and not label.startswith("_")]
        if labels:
            parts.append(FIGURE_PARTS["series"].format(", ".join(labels[:SUMMARY_SERIES])))
        for kind, number in (("lines", len(ax.get_lines())), ("bars", len(ax.patches)),
                             ("collections", len(ax.collections)), ("images", len(ax.images))):
            if number:
                parts.append(_count(kind, number))
        if parts:
            described.append("; ".join(parts))
    if not described:
        return UNLABELLED_FIGURE
    return UNDESCRIBED_FIGURE.format(details=" | ".join(described))
