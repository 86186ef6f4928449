"""Pruebas de dpdeck.classroom.cellerrors: lo que dice una celda que falla (errores en español, trazas recortadas), con Python nativo."""

from __future__ import annotations

import sys

import pytest

from cell_runs import outputs_of, run


def test_exception_deep_in_a_call_is_trimmed_to_the_cells_lines():
    result = run(
        """
        def dividir(a, b):
            return a / b

        def media(valores):
            return dividir(sum(valores), len(valores))

        media([])
        """
    )
    assert result["status"] == "error"
    (error,) = outputs_of(result, "error")
    assert error["ename"] == "ZeroDivisionError"
    assert error["evalue"] == "division by zero"
    text = error["traceback"]
    assert text.splitlines()[0] == "Error en la línea 3: división por cero."
    assert "Línea 8\n    media([])" in text
    assert "Línea 6, en media\n    return dividir(sum(valores), len(valores))" in text
    assert "Línea 3, en dividir\n    return a / b" in text
    assert text.splitlines()[-1] == "ZeroDivisionError: division by zero"
    assert "cellrun" not in text and ".py" not in text


def test_exception_inside_a_library_names_where_it_happened():
    result = run("import json\njson.loads('{')")
    (error,) = outputs_of(result, "error")
    assert error["ename"] == "JSONDecodeError"
    assert "Línea 2\n    json.loads('{')" in error["traceback"]
    assert "el error se produjo dentro de" in error["traceback"]
    assert "decoder.py" in error["traceback"]


def test_javascript_frames_are_not_named_as_where_it_happened():
    """Pyodide adds a JsException's JavaScript frames to the traceback; they mean nothing to a student."""
    for js_file in ("http://127.0.0.1:8000/js/worker.js", "<anonymous>", "pyodide.asm.js"):
        source = (f"fake = compile('raise TypeError(\\'Bloqueado\\')', {js_file!r}, 'exec')\n"
                  "exec(fake)")
        (error,) = outputs_of(run(source), "error")
        assert error["traceback"].splitlines()[-1] == "TypeError: Bloqueado", error["traceback"]
        assert "el error se produjo dentro de" not in error["traceback"], js_file


def test_outputs_before_an_error_are_kept():
    result = run("print('antes')\nimport matplotlib.pyplot as plt\nplt.plot([1])\n1/0")
    assert [o["type"] for o in result["outputs"]] == ["stream", "figure", "error"]


def test_syntax_error_has_line_and_caret():
    result = run(
        """
        x = 1
        print("hola"
        y = 2
        """
    )
    assert result["status"] == "error"
    (error,) = result["outputs"]
    assert error["ename"] == "SyntaxError"
    lines = error["traceback"].splitlines()
    assert lines[0].startswith("Error de sintaxis en la línea 3")
    assert lines[1] == '    print("hola"'
    assert lines[2].strip() == "^"
    assert lines[2].index("^") == lines[1].index("(")


def test_indentation_error_is_named_in_spanish():
    result = run("if True:\nprint(1)")
    (error,) = result["outputs"]
    assert error["ename"] == "IndentationError"
    assert error["traceback"].startswith("Error de indentación en la línea 2")


def test_syntax_error_at_compile_stage():
    result = run("x = 1\nreturn x")
    assert result["outputs"][0]["ename"] == "SyntaxError"
    assert "línea 2" in result["outputs"][0]["traceback"]


def test_sys_exit_is_a_clear_message_not_a_crash():
    result = run("import sys\nprint('a')\nsys.exit()\nprint('b')")
    assert result["status"] == "error"
    assert outputs_of(result, "stream")[0]["text"] == "a\n"
    (error,) = outputs_of(result, "error")
    assert error["ename"] == "SystemExit"
    assert "sys.exit()" in error["evalue"] and "no se puede cerrar" in error["evalue"]
    assert "Línea 3" in error["traceback"]
    assert run("exit(3)")["outputs"][0]["ename"] == "SystemExit"


def test_input_says_it_is_not_available():
    for source in ("nombre = input('¿Nombre? ')", "import sys\nsys.stdin.readline()"):
        result = run(source)
        (error,) = outputs_of(result, "error")
        assert "input() no está disponible" in error["evalue"]
        assert error["traceback"].startswith("Entrada por teclado no disponible en la línea")
        assert "cellrun" not in error["traceback"]


def test_memory_error_is_explained_in_spanish():
    result = run("import numpy as np\nnp.ones(10**15)")
    (error,) = outputs_of(result, "error")
    assert "No hay memoria suficiente" in error["evalue"]
    assert error["traceback"].startswith("Memoria insuficiente en la línea 2")


@pytest.mark.parametrize("size", ["10**20", "(10**10, 10**10)"])
def test_arrays_too_large_to_address_are_a_memory_problem(size):
    # 32-bit WebAssembly reports np.ones(10**10) like this instead of MemoryError.
    result = run(f"import numpy as np\nnp.ones({size})")
    (error,) = outputs_of(result, "error")
    assert error["ename"] == "ValueError"
    assert "No hay memoria suficiente" in error["evalue"]
    assert error["traceback"].startswith("Memoria insuficiente en la línea 2")


@pytest.mark.parametrize("package", ["pandas", "scipy", "sklearn", "scipy.stats"])
def test_missing_package_says_the_deck_is_offline(package, monkeypatch):
    # Hide a locally installed copy so the test means the same on every machine.
    top = package.split(".")[0]
    monkeypatch.setitem(sys.modules, top, None)
    result = run(f"import {package}")
    (error,) = outputs_of(result, "error")
    assert error["ename"] == "ModuleNotFoundError"
    assert f"«{top}»" in error["evalue"]
    assert "sin conexión" in error["evalue"] and "numpy, matplotlib y dpdeck" in error["evalue"]


def test_keyboard_interrupt_is_a_stop_not_an_error():
    result = run("print('x')\nraise KeyboardInterrupt")
    assert result["status"] == "stopped"
    assert outputs_of(result, "stream")[0]["text"] == "x\n"
    (error,) = outputs_of(result, "error")
    assert error["ename"] == "KeyboardInterrupt"
    assert error["traceback"].startswith("Ejecución detenida en la línea 2")


def test_recursion_is_collapsed():
    result = run("def f(n):\n    return f(n + 1)\nf(0)")
    (error,) = outputs_of(result, "error")
    assert error["ename"] == "RecursionError"
    assert "se repitió" in error["traceback"]
    assert len(error["traceback"]) < 2000


# ------------------------------------------------------------------ messages


def test_repetition_notice_says_vez_or_veces():
    from dpdeck.classroom.cellerrors import REPEATED_FRAME_LIMIT

    def frames_repeated(extra):
        # f(n) makes n + 1 frames on one line; REPEATED_FRAME_LIMIT of them are shown.
        calls = REPEATED_FRAME_LIMIT + extra - 1
        return run(f"def f(n):\n    return f(n - 1) if n else 1 / 0\nf({calls})")

    one = outputs_of(frames_repeated(1), "error")[0]["traceback"]
    assert "[La línea anterior se repitió 1 vez más]" in one
    many = outputs_of(frames_repeated(2), "error")[0]["traceback"]
    assert "[La línea anterior se repitió 2 veces más]" in many
    assert "1 veces" not in one


def test_many_figures_give_only_the_spanish_notice():
    result = run("import matplotlib.pyplot as plt\nfor i in range(25):\n    plt.figure(figsize=(1, 1))",
                 max_figures=3)
    stderr = "".join(o["text"] for o in outputs_of(result, "stream") if o["name"] == "stderr")
    assert stderr == "[La celda creó 25 figuras; se muestran las primeras 3.]\n"
    import matplotlib

    assert matplotlib.rcParams["figure.max_open_warning"] == 20  # only the cell ignored it


NETWORK_ATTEMPTS = [
    "import urllib.request\nurllib.request.urlopen('http://127.0.0.1:9/datos.csv', timeout=5)",
    "import socket\nsocket.create_connection(('127.0.0.1', 9), timeout=5)",
    # In a with block, so the refused socket is closed (not left to the collector).
    "import socket\nwith socket.socket() as sock: sock.connect(('127.0.0.1', 9))",
    # What a socket answers in the browser, where the worker refuses the
    # WebSocket that Emscripten's sockets open (or one that never completes).
    "import errno\nraise OSError(errno.EHOSTUNREACH, 'Host is unreachable')",
    "import errno\nraise BlockingIOError(errno.EINPROGRESS, 'Operation in progress')",
]


@pytest.mark.parametrize("source", NETWORK_ATTEMPTS)
def test_native_network_attempts_say_the_connection_was_tried(source):
    (error,) = outputs_of(run(source), "error")
    assert error["traceback"].startswith("Sin conexión en la línea 2: la celda intentó conectarse"), error
    assert "Bloqueado" not in error["traceback"]
    assert "sin conexión" in error["evalue"] and "dpdeck" in error["evalue"]


@pytest.mark.parametrize("error", ["OSError(errno.EHOSTUNREACH, 'Host is unreachable')",
                                   "BlockingIOError(errno.EINPROGRESS, 'Operation in progress')"])
def test_in_the_browser_network_attempts_say_nothing_left(error):
    # The cell itself plays the browser, so that only its own error is formatted as there.
    platform = sys.platform
    try:
        result = run(f"import errno, sys; sys.platform = 'emscripten'\nraise {error}")
    finally:
        sys.platform = platform
    (output,) = outputs_of(result, "error")
    assert output["traceback"].startswith("Sin conexión en la línea 2: una celda no puede conectarse"), output
    assert "no salió nada del navegador" in output["evalue"]


def test_other_os_errors_are_not_called_network_errors():
    (error,) = outputs_of(run("open('/no/existe.csv')"), "error")
    assert error["ename"] == "FileNotFoundError"
    assert not error["traceback"].startswith("Sin conexión")


def test_a_long_traceback_keeps_its_head_and_tail():
    result = run("def f(n):\n    return g(n)\n\ndef g(n):\n    return f(n)\n\nf(0)")
    (error,) = outputs_of(result, "error")
    text = error["traceback"]
    assert error["ename"] == "RecursionError"
    assert len(text) < 6_000
    lines = text.splitlines()
    assert lines[0].startswith("Error en la línea")
    assert "Línea 7\n    f(0)" in text
    assert "se omitieron" in text
    assert lines[-1].startswith("RecursionError: maximum recursion depth exceeded")


def test_a_huge_error_message_is_capped():
    result = run("raise ValueError('x' * 100_000)")
    (error,) = outputs_of(result, "error")
    assert len(error["traceback"]) < 7_000
    assert error["traceback"].startswith("Error en la línea 1")
    assert "se omitieron" in error["traceback"]
