"""Las comprobaciones de los trabajos exportados, en un proceso aparte: el código de los estudiantes nunca corre en el del corrector.

El corrector (``dpdeck.classroom.grading``) abre un proceso hijo por archivo
(``python -m dpdeck.classroom.sandbox``) y le da, una por línea, las tareas de
ese estudiante::

    {"id": "ejercicio-laplace", "check": "laplace-escala", "source": "def …"}
    {"id": "reto-laboratorio", "check": "reto-laboratorio", "seed": 0, "extension": {…}}

El hijo dice primero que está listo (``{"ready": true}``, una vez importadas
sus herramientas: el tiempo de cada tarea empieza a contar ahí) y contesta una
línea por tarea, en el mismo orden::

    {"id": …, "passed": true | false | null, "failures": ["…", …], "problem": "…" | null}

``failures`` son las frases de los hallazgos que fallaron, como las escribe la
comprobación; ``problem``, por qué no hubo veredicto (la celda terminó con un
error, se bloqueó algo que no debía hacer). Cada tarea tiene su tiempo
(``SandboxedChecks``): la que lo pasa termina el hijo, cuenta como «tiempo
agotado» y las siguientes siguen en un hijo nuevo.

El hijo no es una jaula, es una valla. Corre con un entorno vacío, en una
carpeta temporal propia, con límites de memoria, de archivos abiertos y de
tamaño de lo que escribe; importa numpy, matplotlib y las comprobaciones y
luego instala un gancho de auditoría (``sys.addaudithook``, que ya no se
puede quitar) que rechaza abrir conexiones, lanzar procesos, cargar
bibliotecas con ctypes y escribir, borrar o renombrar archivos fuera de su
carpeta. El código de un estudiante decidido a saltársela puede lograrlo:
corre el corrector en una cuenta que no tenga nada que proteger.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Iterable, Iterator

__all__ = ["SandboxedChecks", "TaskResult", "TIMEOUT_PROBLEM", "main"]

# What the child may use (bytes of address space, open files, bytes written per file).
MEMORY_LIMIT_BYTES = 4 * 1024**3
OPEN_FILES_LIMIT = 256
WRITTEN_FILE_LIMIT_BYTES = 64 * 1024**2
# What a refused action says (the audit hook raises it inside the student's code).
BLOCKED = "Bloqueado en la corrección: {what}; el código de un ejercicio no lo necesita."
TIMEOUT_PROBLEM = "tiempo agotado: la comprobación pasó de {seconds} s (¿un bucle que no termina?)"
# How long a child may take to import numpy, matplotlib and the checks before its first task.
STARTUP_SECONDS = 120.0
READY = {"ready": True}
CRASH_PROBLEM = "el proceso de la comprobación terminó sin contestar (código {code})"
# Audit events the child refuses once its tools are imported, by what they would do.
REFUSED_EVENTS = {
    "socket.__new__": "abrir una conexión de red",
    "socket.connect": "abrir una conexión de red",
    "socket.getaddrinfo": "abrir una conexión de red",
    "urllib.Request": "abrir una conexión de red",
    "subprocess.Popen": "lanzar otro programa",
    "os.system": "lanzar otro programa",
    "os.exec": "lanzar otro programa",
    "os.posix_spawn": "lanzar otro programa",
    "os.spawn": "lanzar otro programa",
    "os.fork": "lanzar otro proceso",
    "os.forkpty": "lanzar otro proceso",
    "os.kill": "enviar señales a otros procesos",
    "os.killpg": "enviar señales a otros procesos",
    "ctypes.dlopen": "cargar bibliotecas con ctypes",
    "ctypes.dlsym": "cargar bibliotecas con ctypes",
    "ctypes.cdata": "leer memoria con ctypes",
    "ctypes.call_function": "llamar funciones con ctypes",
    "sys.setprofile": "vigilar a las comprobaciones",
    "sys.settrace": "vigilar a las comprobaciones",
}
# Events that change a file system path (their first argument), allowed only inside the child's folder.
PATH_EVENTS = {"os.remove", "os.rmdir", "os.rename", "os.replace", "os.truncate", "os.chmod", "os.chown",
               "os.link", "os.symlink", "os.mkdir", "os.utime", "shutil.rmtree", "shutil.copyfile",
               "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.move"}
# open()'s flags that write (os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC).
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class TaskResult(dict):
    """One task's answer: {id, passed (True, False or None), failures [texts], problem (text or None)}."""


class SandboxedChecks:
    """Runs the tasks of one file in child processes, each task within ``seconds`` (see the module)."""

    def __init__(self, *, seconds: float = 60.0, python: str = sys.executable):
        self.seconds = seconds
        self.python = python

    def run(self, tasks: list[dict]) -> list[TaskResult]:
        """Every task's result, in order; a task that times out or kills its child does not stop the others."""
        results: list[TaskResult] = []
        pending = list(tasks)
        while pending:
            with tempfile.TemporaryDirectory(prefix="dpdeck-correccion-") as folder:
                answered = self._run_child(pending, Path(folder))
            results += answered
            pending = pending[len(answered):]
        return results

    def _run_child(self, tasks: list[dict], folder: Path) -> list[TaskResult]:
        """The results one child gives before it ends; the task it died on gets its problem."""
        child = subprocess.Popen(
            [self.python, "-m", "dpdeck.classroom.sandbox"], cwd=folder, env=child_environment(folder),
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, encoding="utf-8",
        )
        writer = threading.Thread(target=_feed, args=(child, tasks), daemon=True)
        writer.start()
        answers: list[TaskResult] = []
        lines = _Lines(child, STARTUP_SECONDS)
        try:
            ready = next(lines, None)
            if ready is None or _parse(ready) != READY:
                child.kill()
                problem = CRASH_PROBLEM.format(code=child.wait())
                return [TaskResult(id=task["id"], passed=None, failures=[], problem=problem) for task in tasks]
            lines.seconds = self.seconds
            for task in tasks:
                line = next(lines, None)
                if line is None:
                    child.kill()
                    code = child.wait()
                    problem = (TIMEOUT_PROBLEM.format(seconds=_seconds(self.seconds)) if lines.timed_out
                               else CRASH_PROBLEM.format(code=code))
                    answers.append(TaskResult(id=task["id"], passed=None, failures=[], problem=problem))
                    break
                answers.append(_read_answer(task, line))
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()
            for stream in (child.stdin, child.stdout):
                try:
                    stream.close()
                except OSError:
                    pass
        return answers


class _Lines:
    """The child's answer lines, each within `seconds` of the previous one (a reader thread with a deadline)."""

    def __init__(self, child: subprocess.Popen, seconds: float):
        self.child = child
        self.seconds = seconds
        self.timed_out = False
        self._items: list = []
        self._ready = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.child.stdout:
            with self._ready:
                self._items.append(line)
                self._ready.notify()
        with self._ready:
            self._items.append(None)
            self._ready.notify()

    def __iter__(self):
        return self

    def __next__(self):
        with self._ready:
            if not self._ready.wait_for(lambda: self._items, timeout=self.seconds):
                self.timed_out = True
                raise StopIteration
            item = self._items.pop(0)
        if item is None:
            raise StopIteration
        return item


def _parse(line: str):
    try:
        return json.loads(line)
    except json.JSONDecodeError:
        return None


def _feed(child: subprocess.Popen, tasks: list[dict]) -> None:
    try:
        for task in tasks:
            child.stdin.write(json.dumps(task, ensure_ascii=False) + "\n")
        child.stdin.close()
    except (OSError, ValueError):
        pass   # the child ended early: its missing answers say why


def _read_answer(task: dict, line: str) -> TaskResult:
    try:
        answer = json.loads(line)
    except json.JSONDecodeError:
        return TaskResult(id=task["id"], passed=None, failures=[], problem="la comprobación contestó algo ilegible")
    return TaskResult(id=task["id"], passed=answer.get("passed"), failures=list(answer.get("failures") or []),
                      problem=answer.get("problem"))


def _seconds(value: float) -> str:
    return f"{value:g}".replace(".", ",")


def child_environment(folder: Path) -> dict[str, str]:
    """A clean environment: the same dpdeck as this process, a home and a matplotlib folder inside `folder`."""
    import dpdeck   # the package whose checks grade; its folder's parent goes on the child's path

    package_parent = str(Path(dpdeck.__file__).resolve().parents[1])
    return {
        "PATH": os.defpath, "HOME": str(folder), "TMPDIR": str(folder), "MPLCONFIGDIR": str(folder),
        "MPLBACKEND": "Agg", "PYTHONPATH": package_parent, "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1", "PYTHONHASHSEED": "0", "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1", "LANG": "C.UTF-8", "TZ": "UTC",
    }


# ------------------------------------------------------------ the child's side


def limit_resources() -> None:
    try:
        import resource
    except ImportError:   # not on Unix: the audit hook still stands
        return
    for name, value in (("RLIMIT_AS", MEMORY_LIMIT_BYTES), ("RLIMIT_NOFILE", OPEN_FILES_LIMIT),
                        ("RLIMIT_FSIZE", WRITTEN_FILE_LIMIT_BYTES), ("RLIMIT_CORE", 0)):
        limit = getattr(resource, name, None)
        if limit is None:
            continue
        soft, hard = resource.getrlimit(limit)
        wanted = value if hard == resource.RLIM_INFINITY else min(value, hard)
        try:
            resource.setrlimit(limit, (wanted, hard))
        except (ValueError, OSError):
            pass


def install_guard(folder: Path) -> None:
    """The audit hook of the module's docstring: refuses the events above; writes only inside `folder`."""
    inside = str(folder.resolve()) + os.sep

    def allowed_path(path) -> bool:
        if isinstance(path, int):   # a file descriptor already open
            return True
        try:
            resolved = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return False
        return (resolved + os.sep).startswith(inside)

    def hook(event: str, arguments: tuple) -> None:
        if event in REFUSED_EVENTS:
            raise PermissionError(BLOCKED.format(what=REFUSED_EVENTS[event]))
        if event == "open" and len(arguments) >= 3:
            path, mode, flags = arguments[:3]
            writes = (isinstance(mode, str) and any(char in mode for char in "wax+")) or (
                isinstance(flags, int) and flags & WRITE_FLAGS)
            if writes and path is not None and not allowed_path(path):
                raise PermissionError(BLOCKED.format(what="escribir archivos fuera de su carpeta"))
        elif event in PATH_EVENTS and arguments and not all(
                allowed_path(argument) for argument in arguments[:2] if isinstance(argument, (str, bytes, os.PathLike))):
            raise PermissionError(BLOCKED.format(what="cambiar archivos fuera de su carpeta"))

    sys.addaudithook(hook)


def answer_task(task: dict) -> dict:
    """One task of the module's docstring, checked with the public API of dpdeck.exercises."""
    from dpdeck.exercises import check, run_check

    if "source" in task:
        result = run_check(task["source"], check=task["check"], cell_id=task["id"])
        verdict = result.get("verdict")
        if verdict is None:
            return {"passed": None, "failures": [], "problem": describe_unfinished(result)}
    else:
        namespace = {"student_extension": task.get("extension"), "semilla": task.get("seed", 0)}
        verdict = check(task["check"], namespace).as_dict()
    failures = [finding["text"] for finding in verdict["findings"] if not finding["ok"]]
    return {"passed": bool(verdict["passed"]), "failures": failures, "problem": None}


def describe_unfinished(result: dict) -> str:
    """Why a run gave no verdict: the cell's error in one line, or how it ended."""
    for output in result.get("outputs", []):
        if output.get("type") == "error":
            return f"la celda termina con un error: {output.get('ename')}: {output.get('evalue')}"
    return f"la celda no terminó bien ({result.get('status')})"


def iterate_tasks(stream) -> Iterator[dict]:
    for line in stream:
        if line.strip():
            yield json.loads(line)


def serve(tasks: Iterable[dict], out) -> None:
    for task in tasks:
        try:
            answer = answer_task(task)
        except Exception as error:   # noqa: BLE001 — a check that breaks is this task's problem, not the file's
            answer = {"passed": None, "failures": [], "problem": f"la comprobación falló: {type(error).__name__}: {error}"}
        out.write(json.dumps(answer, ensure_ascii=False) + "\n")
        out.flush()


def main() -> None:
    """The child: its tools first, then the fence, then one answer per task read from stdin."""
    folder = Path.cwd()
    limit_resources()
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot  # noqa: F401 — its fonts are read now, before the fence
    import numpy  # noqa: F401

    import dpdeck.exercises  # noqa: F401
    from dpdeck.classroom.cellrun import prepare_matplotlib

    prepare_matplotlib()
    # The student's prints go into the cell's outputs; the answers go on the real stdout, kept here.
    out = sys.stdout
    install_guard(folder)
    out.write(json.dumps(READY) + "\n")
    out.flush()
    serve(iterate_tasks(sys.stdin), out)


if __name__ == "__main__":
    main()
