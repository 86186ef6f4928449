"""Lo que una celda no puede dejar cambiado para las demás: los resguardos de `run_cell`.

Cada celda corre en su propio espacio de nombres, pero los módulos son del
proceso: una celda podría cambiar `np.exp`, `builtins.print`, el código de una
función de dpdeck o una constante de una comprobación, y estropear todas las
siguientes (o aprobar un ejercicio con trampa). Aquí se guarda, antes de la
primera celda, el estado de los módulos compartidos (`_ModuleState`) y el
código de dpdeck (`_PackageCode`), y se devuelve después de cada una; lo que
una celda deja pendiente en asyncio se cancela al terminar ella.

`run_untouched` llama a una función con todo como antes de la primera celda y
dice qué cambió mientras corría: así comprueba `dpdeck.exercises` un
ejercicio. `dpdeck.classroom.cellrun` usa lo demás y reexporta `run_untouched`.
"""

from __future__ import annotations

import builtins
import importlib
import operator
import pkgutil
import sys
import types
from typing import Any, Callable

from .cellerrors import _in_browser


# Modules whose globals a cell could change for every later cell
# (`np.exp = …`, `builtins.print = None`, `dpdeck.mechanisms.laplace_scale = …`):
# their globals are saved before each cell and put back after it, together
# with every module of the dpdeck package.
GUARDED_MODULES = (
    "builtins",
    "math",
    "numpy",
    "numpy.random",
    "numpy.linalg",
    "matplotlib",
    "matplotlib.pyplot",
)
GUARDED_PACKAGE = "dpdeck"
GUARDED_SYS_ATTRIBUTES = ("stdout", "stderr", "stdin", "excepthook", "displayhook", "unraisablehook")
# Classes outside dpdeck whose methods a cell could change for every later cell
# (`matplotlib.axes.Axes.set_title = …`): their attributes are put back too, as
# dpdeck's own classes' are.
GUARDED_CLASSES = (("matplotlib.axes", "Axes"), ("matplotlib.figure", "Figure"))


# --------------------------------------------------------------------------- module state


_MISSING = object()


class _ModuleState:
    """Los globales de los módulos compartidos, guardados antes de una celda.

    Cada celda tiene su propio espacio de nombres, pero los módulos son del
    proceso: `np.exp = lambda x: 0` o `builtins.print = None` cambiarían todas
    las celdas siguientes. `save()` copia (superficialmente) `vars(módulo)` de
    GUARDED_MODULES y de cada módulo de dpdeck cargado, las entradas de esos
    módulos en `sys.modules` y los ganchos de `sys` (GUARDED_SYS_ATTRIBUTES);
    `restore()` devuelve cada nombre cambiado o borrado a su valor y quita los
    nombres nuevos (salvo submódulos importados, que no cambian nada).
    """

    def __init__(self, modules, entries, hooks):
        self.modules = modules
        self.entries = entries
        self.hooks = hooks

    @classmethod
    def save(cls, guarded_modules: list[types.ModuleType]) -> "_ModuleState":
        modules = [(module, dict(module.__dict__)) for module in guarded_modules]
        entries = {module.__name__: module for module, _ in modules}
        hooks = [(name, getattr(sys, name)) for name in GUARDED_SYS_ATTRIBUTES if hasattr(sys, name)]
        return cls(modules, entries, hooks)

    def restore(self) -> None:
        # A Stop pressed just as the cell ends must not leave half the modules
        # as the cell left them: start again (the interrupt is taken once).
        while True:
            try:
                self._restore()
                return
            except KeyboardInterrupt:
                continue

    def _restore(self) -> None:
        # builtins first and with dict methods only: until it is back, any
        # builtin this code named could be the cell's replacement.
        builtins_globals = builtins.__dict__
        for module, saved in self.modules:
            if module is builtins:
                added = [name for name in builtins_globals if name not in saved]
                for name in added:
                    del builtins_globals[name]
                builtins_globals.update(saved)
        for module, saved in self.modules:
            if module is builtins:
                continue
            current = module.__dict__
            for name in current.keys() - saved.keys():
                if not _is_submodule(module, name, current[name]):
                    del current[name]
            # Writing back the unchanged names too is cheaper than comparing them.
            current.update(saved)
        for name, module in self.entries.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
        for name, value in self.hooks:
            if getattr(sys, name, _MISSING) is not value:
                setattr(sys, name, value)

    def changes(self) -> list[str]:
        """Los nombres de los módulos guardados que hoy valen otra cosa (`numpy.isclose`, `builtins.all`)."""
        changed = []
        for module, saved in self.modules:
            current = module.__dict__
            for name in current.keys() | saved.keys():
                value = current.get(name, _MISSING)
                if value is saved.get(name, _MISSING):
                    continue
                if name not in saved and _is_submodule(module, name, value):
                    continue
                changed.append(f"{module.__name__}.{name}")
        return sorted(changed)


def _is_submodule(package: types.ModuleType, name: str, value: object) -> bool:
    """`numpy.testing` bound on numpy by `import numpy.testing`: part of importing, not a change."""
    return isinstance(value, types.ModuleType) and sys.modules.get(f"{package.__name__}.{name}") is value


_guarded: list[types.ModuleType] = []


def _guarded_modules() -> list[types.ModuleType]:
    """Los módulos que una celda no puede cambiar para las demás (importados una vez).

    Se importan aquí, antes de la primera celda, y no dentro de ella: de un
    módulo que se cargara por primera vez dentro de una celda no habría un
    estado original que devolver.
    """
    if not _guarded:
        names = list(GUARDED_MODULES)
        package = importlib.import_module(GUARDED_PACKAGE)
        names.append(GUARDED_PACKAGE)
        # Every module of the package and of its subpackages, loaded now (cheap:
        # `dpdeck.figures` needs matplotlib, which the deck's cells load anyway);
        # never a `__main__`, which would run its command.
        names.extend(info.name for info in pkgutil.walk_packages(package.__path__, prefix=f"{GUARDED_PACKAGE}.")
                     if not info.name.rpartition(".")[2].startswith("__"))
        for name in names:
            try:
                _guarded.append(importlib.import_module(name))
            except ImportError:
                continue
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            # Resolved now, so the backend pyplot picks is part of the saved state.
            pyplot.switch_backend("Agg")
    return _guarded


_baseline: list[_ModuleState] = []


class _PackageCode:
    """El código de dpdeck tal como se importó, para devolvérselo después de cada celda.

    Los globales de los módulos ya se guardan (`_ModuleState`), pero una celda
    puede cambiar lo que hay dentro de ellos: el código de una función
    (`laplace_mechanism.__code__ = …`), un atributo de una clase
    (`Verdict.passed = property(…)`) o el contenido de una constante
    (`CHECKS["laplace-escala"] = …`). Aquí se guardan, una vez, el código y los
    valores por omisión de cada función de dpdeck (también los métodos de sus
    clases), los atributos de cada clase de dpdeck y de GUARDED_CLASSES, y una
    copia de cada diccionario, lista o conjunto que un módulo de dpdeck nombra
    en MAYÚSCULAS (sus constantes; no las cachés, `_CACHE`, que se llenan al
    usarse); `restore()` los devuelve y `changes()` dice qué cambió.
    """

    def __init__(self, functions, classes, constants):
        self.functions = functions      # ((function, __code__, __defaults__, __kwdefaults__), …)
        self.classes = classes          # ((class, {name: value}), …)
        self.constants = constants      # ((module name, name, container, copy), …)
        # The same, column by column: most cells change nothing, and comparing whole
        # columns at C speed is what restore() costs them (a tenth of a millisecond).
        self.function_objects = tuple(entry[0] for entry in functions)
        self.columns = tuple((operator.attrgetter(attribute), tuple(entry[index] for entry in functions))
                             for index, attribute in enumerate(("__code__", "__defaults__", "__kwdefaults__"), 1))

    @classmethod
    def capture(cls, guarded_modules: list[types.ModuleType]) -> "_PackageCode":
        package = [module for module in guarded_modules
                   if module.__name__.partition(".")[0] == GUARDED_PACKAGE]
        functions, classes, constants = {}, {}, []

        def add_function(function) -> None:
            if isinstance(function, (staticmethod, classmethod)):
                function = function.__func__
            if isinstance(function, property):
                for accessor in (function.fget, function.fset, function.fdel):
                    add_function(accessor)
                return
            if isinstance(function, types.FunctionType) and _is_own(function):
                functions[function] = (function, function.__code__, function.__defaults__,
                                       function.__kwdefaults__)

        for module in package:
            for name, value in vars(module).items():
                if isinstance(value, type) and _is_own(value):
                    classes[value] = None
                else:
                    add_function(value)
                if name.isupper() and not name.endswith("CACHE") and type(value) in (dict, list, set):
                    constants.append((module.__name__, name, value, value.copy()))
        for module_name, class_name in GUARDED_CLASSES:
            guarded = getattr(sys.modules.get(module_name), class_name, None)
            if isinstance(guarded, type):
                classes[guarded] = None
        saved_classes = []
        for guarded in classes:
            attributes = dict(vars(guarded))
            saved_classes.append((guarded, attributes))
            if _is_own(guarded):
                for value in attributes.values():
                    add_function(value)
        return cls(tuple(functions.values()), tuple(saved_classes), tuple(constants))

    def restore(self) -> None:
        if not all(all(map(operator.is_, map(read, self.function_objects), saved)) for read, saved in self.columns):
            for function, code, defaults, kwdefaults in self.functions:
                if function.__code__ is not code:
                    function.__code__ = code
                if function.__defaults__ is not defaults:
                    function.__defaults__ = defaults
                if function.__kwdefaults__ is not kwdefaults:
                    function.__kwdefaults__ = kwdefaults
        for guarded, attributes in self.classes:
            current = vars(guarded)
            if len(current) == len(attributes) and _same_items(current, attributes):
                continue
            for name in [name for name in current if name not in attributes]:
                type.__delattr__(guarded, name)
            for name, value in attributes.items():
                if current.get(name, _MISSING) is not value and name not in ("__dict__", "__weakref__"):
                    type.__setattr__(guarded, name, value)
        for _, _, container, saved in self.constants:
            if not _same_items(container, saved):
                container.clear()
                if isinstance(container, list):
                    container.extend(saved)
                else:
                    container.update(saved)

    def changes(self) -> list[str]:
        """Lo que hoy difiere de lo guardado, por su nombre (`dpdeck.exercises.Verdict.passed`)."""
        changed = [f"{function.__module__}.{function.__qualname__}" for function, code, defaults, kwdefaults
                   in self.functions if function.__code__ is not code or function.__defaults__ is not defaults
                   or function.__kwdefaults__ is not kwdefaults]
        for guarded, attributes in self.classes:
            current = vars(guarded)
            changed += [f"{guarded.__module__}.{guarded.__qualname__}.{name}"
                        for name in current.keys() | attributes.keys()
                        if current.get(name, _MISSING) is not attributes.get(name, _MISSING)]
        changed += [f"{module}.{name}" for module, name, container, saved in self.constants
                    if not _same_items(container, saved)]
        return sorted(changed)


def _same_items(container, saved) -> bool:
    """Whether a dict, list or set holds the very objects of its copy `saved` (identity, not equality)."""
    if len(container) != len(saved):
        return False
    if isinstance(container, (dict, types.MappingProxyType)):
        return all(map(operator.is_, map(container.get, saved.keys()), saved.values()))
    if isinstance(container, list):
        return all(map(operator.is_, container, saved))
    return container == saved


def _is_own(value) -> bool:
    """Defined in dpdeck (not imported into it from numpy or the standard library)."""
    return (getattr(value, "__module__", None) or "").partition(".")[0] == GUARDED_PACKAGE


_package: list[_PackageCode] = []


def _package_code(guarded_modules: list[types.ModuleType]) -> _PackageCode:
    """dpdeck's code before the first cell (see `_PackageCode`)."""
    if not _package:
        _package.append(_PackageCode.capture(guarded_modules))
    return _package[0]


def run_untouched(function: Callable, *args) -> tuple[Any, list[str]]:
    """Llama a `function(*args)` con los módulos compartidos y dpdeck como antes de la primera celda.

    Devuelve su resultado y lo que cambió en ellos mientras corría (vacío si
    nada): lo que llama `dpdeck.exercises` para comprobar un ejercicio, que
    ejecuta el código del estudiante y no debe fiarse de lo que ese código
    cambie. Después lo devuelve todo como estaba antes de la primera celda.
    """
    guarded_modules = _guarded_modules()
    baseline = _baseline_state(guarded_modules)
    package_code = _package_code(guarded_modules)
    baseline.restore()
    package_code.restore()
    try:
        result = function(*args)
    finally:
        changed = baseline.changes() + package_code.changes()
        package_code.restore()
        baseline.restore()
    return result, changed


def _baseline_state(guarded_modules: list[types.ModuleType]) -> _ModuleState:
    """El estado de los módulos compartidos antes de la primera celda: del que parte cada celda."""
    if not _baseline:
        _baseline.append(_ModuleState.save(guarded_modules))
    return _baseline[0]


# --------------------------------------------------------------------------- asyncio


def _event_loop():
    """El bucle de eventos que sigue vivo entre celdas (el de Pyodide en el navegador), o None.

    En Python nativo no suele haber ninguno: nada de lo que una celda deje
    pendiente llega a ejecutarse después.
    """
    asyncio = sys.modules.get("asyncio")
    if asyncio is None:
        return None
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        if not _in_browser():
            return None
        loop = asyncio.get_event_loop()
    if _in_browser() and not getattr(loop, "_dpdeck_quiet", False):
        # «Task exception was never retrieved» is written when a task is
        # collected, maybe in the middle of another cell: it goes to the
        # console, never into a cell's output.
        loop.set_exception_handler(_log_to_console)
        loop._dpdeck_quiet = True
    return loop


def _log_to_console(loop, context: dict) -> None:
    sys.__stderr__.write(f"dpdeck: asyncio: {context.get('message', '')}\n")


def _pending_tasks(loop) -> set:
    if loop is None:
        return set()
    import asyncio

    return set(asyncio.all_tasks(loop))


def _cancel_new_tasks(loop, before: set) -> None:
    """Las tareas de asyncio que la celda dejó pendientes se cancelan al terminar ella."""
    for task in _pending_tasks(loop) - before:
        task.cancel()

