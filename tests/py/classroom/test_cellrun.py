"""Pruebas de dpdeck.classroom.cellrun.run_cell (su parte del contrato de las celdas: deck/README.md), con Python nativo."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import pytest

from cell_runs import outputs_of, run
from dpdeck.classroom import protocol
from dpdeck.classroom.cellrun import run_cell


def test_stdout_and_last_value_like_jupyter():
    result = run(
        """
        print("hola")
        x = 40
        x + 2
        """
    )
    assert result["status"] == "done"
    assert result["outputs"] == [
        {"type": "stream", "name": "stdout", "text": "hola\n"},
        {"type": "value", "text": "42"},
    ]


def test_none_and_assignment_give_no_value():
    assert run("x = 1")["outputs"] == []
    assert run("None")["outputs"] == []
    assert run("print('a')")["outputs"] == [{"type": "stream", "name": "stdout", "text": "a\n"}]


def test_consecutive_writes_merge_and_streams_keep_order():
    result = run(
        """
        import sys
        print("a"); print("b")
        print("c", file=sys.stderr)
        print("d")
        """
    )
    assert [(o["name"], o["text"]) for o in result["outputs"]] == [
        ("stdout", "a\nb\n"),
        ("stderr", "c\n"),
        ("stdout", "d\n"),
    ]


def test_on_output_receives_stream_text_as_it_comes():
    seen = []
    run("print('uno')\nprint('dos')", on_output=seen.append)
    assert "".join(chunk["text"] for chunk in seen) == "uno\ndos\n"
    assert all(chunk["type"] == "stream" and chunk["name"] == "stdout" for chunk in seen)


def test_output_cap_appends_a_spanish_notice_and_stops_collecting():
    seen = []
    result = run("for i in range(100_000):\n    print(i)", max_output_chars=1000, on_output=seen.append)
    text = "".join(o["text"] for o in outputs_of(result, "stream"))
    stdout = "".join(o["text"] for o in outputs_of(result, "stream") if o["name"] == "stdout")
    assert len(stdout) == 1000
    assert "Salida recortada" in text
    assert text.count("Salida recortada") == 1
    assert sum(len(chunk["text"]) for chunk in seen) == len(text)


def test_fresh_namespace_each_run():
    assert run("np = 3\nnp")["outputs"] == [{"type": "value", "text": "3"}]
    result = run("import numpy as np\nint(np.ones(3).sum())")
    assert result["outputs"] == [{"type": "value", "text": "3"}]
    leaked = run("np")
    assert leaked["status"] == "error"
    assert leaked["outputs"][0]["ename"] == "NameError"


def test_process_wide_settings_do_not_leak_to_the_next_cell():
    limit = sys.getrecursionlimit()
    run(
        """
        import sys
        import numpy as np
        sys.setrecursionlimit(sys.getrecursionlimit() + 123)
        np.set_printoptions(precision=1)
        np.seterr(all="raise")
        """
    )
    assert sys.getrecursionlimit() == limit
    result = run("import numpy as np\nprint(np.array([1/3]))\nprint(np.array([1.0]) / 0)")
    assert result["status"] == "done"  # seterr(all="raise") was undone
    stdout = "".join(o["text"] for o in outputs_of(result, "stream") if o["name"] == "stdout")
    assert stdout == "[0.33333333]\n[inf]\n"


def test_cell_runs_as_main_and_main_is_restored():
    before = sys.modules.get("__main__")
    result = run(
        """
        from dataclasses import dataclass
        @dataclass
        class Punto:
            x: int
        (__name__, Punto(3))
        """
    )
    assert result["outputs"] == [{"type": "value", "text": "('__main__', Punto(x=3))"}]
    assert sys.modules.get("__main__") is before


def png_size(data):
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def test_pyplot_figures_become_png_and_are_closed():
    result = run(
        """
        import matplotlib.pyplot as plt
        fig, ax = plt.subplots(figsize=(4, 3))
        ax.plot([1, 2, 3])
        plt.figure(figsize=(2, 2))
        plt.plot([3, 2, 1])
        """
    )
    assert result["status"] == "done"
    figures = outputs_of(result, "figure")
    assert len(figures) == 2
    assert outputs_of(result, "value") == []  # the Line2D list repr is not shown
    for figure in figures:
        assert figure["format"] == "png"
        assert png_size(figure["data"]) == (figure["width"], figure["height"])
    assert (figures[0]["width"], figures[0]["height"]) == (480, 360)
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []


def test_a_figure_says_what_it_shows():
    described = run(
        """
        from dpdeck import experiments
        experiments.draw_experiment("clipping_elbow")
        """
    )
    figure, = outputs_of(described, "figure")
    assert figure["description"].startswith("Error de la suma contra la cota de recorte b")
    # A student's own figure is summed up from what matplotlib knows of it.
    own = run(
        """
        import matplotlib.pyplot as plt
        plt.plot([1, 2], [3, 4], label="medido")
        plt.xlabel("k")
        plt.legend()
        plt.figure()
        plt.bar([1, 2, 3], [1, 2, 3])
        """
    )
    labelled, bars = outputs_of(own, "figure")
    assert labelled["description"] == "gráfico sin descripción propia: eje horizontal «k»; series: medido; 1 línea"
    assert bars["description"] == "gráfico sin descripción propia: 3 barras"


def test_figure_as_last_value_is_a_figure_not_a_repr():
    result = run(
        """
        from matplotlib.figure import Figure
        fig = Figure(figsize=(3, 2))
        fig.add_subplot().plot([0, 1])
        fig
        """
    )
    assert [o["type"] for o in result["outputs"]] == ["figure"]
    pyplot_fig = run("import matplotlib.pyplot as plt\nfig = plt.figure()\nfig")
    assert [o["type"] for o in pyplot_fig["outputs"]] == ["figure"]


def test_figures_are_deterministic():
    source = "import matplotlib.pyplot as plt\nplt.plot([1, 3, 2])\nplt.title('x')"
    assert run(source)["outputs"][0]["data"] == run(source)["outputs"][0]["data"]


def test_max_figures_shows_the_first_and_closes_all():
    result = run(
        """
        import matplotlib.pyplot as plt
        for i in range(200):
            plt.figure(figsize=(1, 1))
        """,
        max_figures=5,
    )
    assert len(outputs_of(result, "figure")) == 5
    notice = outputs_of(result, "stream")[-1]
    assert notice["name"] == "stderr" and "200 figuras" in notice["text"]
    import matplotlib.pyplot as plt

    assert plt.get_fignums() == []


def test_rcparams_changes_do_not_leak_and_backend_is_agg():
    run("import matplotlib\nmatplotlib.rcParams['lines.linewidth'] = 9")
    import matplotlib

    assert matplotlib.rcParams["lines.linewidth"] != 9
    backend = run("import matplotlib\nmatplotlib.get_backend().lower()")
    assert backend["outputs"] == [{"type": "value", "text": "'agg'"}]


def test_streams_are_restored_even_after_errors():
    stdout, stderr, stdin = sys.stdout, sys.stderr, sys.stdin
    run("import sys\nsys.exit(1)")
    run("1/0")
    run("raise KeyboardInterrupt")
    assert (sys.stdout, sys.stderr, sys.stdin) == (stdout, stderr, stdin)


def test_warnings_show_the_cells_line_in_spanish():
    result = run("import warnings\nwarnings.warn('cuidado')")
    (stream,) = outputs_of(result, "stream")
    assert stream["name"] == "stderr"
    assert stream["text"].startswith("Aviso en la línea 2: UserWarning: cuidado")


def test_plt_show_is_quiet_and_the_figure_still_shows():
    result = run("import matplotlib.pyplot as plt\nplt.plot([1, 2])\nplt.show()")
    assert [o["type"] for o in result["outputs"]] == ["figure"]


def test_huge_value_repr_is_capped():
    result = run("'x' * 50_000", max_output_chars=100)
    (value,) = outputs_of(result, "value")
    assert len(value["text"]) < 200 and "Valor recortado" in value["text"]


def test_same_source_same_outputs():
    source = "import numpy as np\nrng = np.random.default_rng(0)\nprint(rng.laplace(0, 2, 3))\nrng.integers(10)"
    first, second = run(source), run(source)
    assert first == second
    assert first["outputs"][1]["type"] == "value"


def test_cellrun_does_not_import_browser_modules():
    from dpdeck.classroom import cellerrors, cellrun

    for module in (cellrun, cellerrors):
        text = Path(module.__file__).read_text(encoding="utf-8")
        assert "import js" not in text and "import pyodide" not in text
        assert "from js" not in text and "from pyodide" not in text


# ------------------------------------------------- the contract's words and limits


@pytest.mark.parametrize("source", [
    "print('a')\nimport sys\nprint('b', file=sys.stderr)\n40 + 2",
    "import matplotlib.pyplot as plt\nplt.plot([1, 2])",
    "1 / 0",
    "raise KeyboardInterrupt",
    "x = (",
])
def test_run_cell_uses_only_the_contracts_words(source):
    result = run_cell(source, cell_id="contrato")
    assert result["status"] in protocol.RUN_STATUS
    for output in result["outputs"]:
        assert output["type"] in protocol.OUTPUT
        if output["type"] == protocol.OUTPUT.STREAM:
            assert output["name"] in protocol.STREAM


def test_run_cell_defaults_are_the_contracts_limits():
    result = run_cell(f"print('x' * {protocol.MAX_OUTPUT_CHARS + 10})", cell_id="limite")
    stdout = "".join(o["text"] for o in result["outputs"] if o.get("name") == protocol.STREAM.STDOUT)
    assert len(stdout) == protocol.MAX_OUTPUT_CHARS
    many = f"import matplotlib.pyplot as plt\nfor i in range({protocol.MAX_FIGURES + 2}):\n    plt.figure()"
    figures = [o for o in run_cell(many, cell_id="figuras")["outputs"] if o["type"] == protocol.OUTPUT.FIGURE]
    assert len(figures) == protocol.MAX_FIGURES


# ------------------------------------------------- one cell cannot break another


def stdout_of(result):
    return "".join(o["text"] for o in outputs_of(result, "stream") if o["name"] == "stdout")


def test_replacing_a_builtin_does_not_reach_the_next_cell():
    import builtins

    original_print, original_len = builtins.print, builtins.len
    assert run("import builtins\nbuiltins.print = None")["status"] == "done"
    assert builtins.print is original_print
    assert run("print('hola')")["outputs"] == [{"type": "stream", "name": "stdout", "text": "hola\n"}]
    # Even inside the same cell, the error after the change is formatted in Spanish.
    broken = run("import builtins\nbuiltins.len = lambda x: 0\n1/0")
    assert builtins.len is original_len
    (error,) = outputs_of(broken, "error")
    assert error["traceback"].startswith("Error en la línea 3: división por cero.")
    assert run("len([1, 2, 3])")["outputs"] == [{"type": "value", "text": "3"}]


def test_a_builtin_reached_through_another_object_is_restored_too():
    import builtins

    run("print.__self__.sum = lambda values: -1\nbuiltins_module = print.__self__\nbuiltins_module.nuevo = 1")
    assert run("sum([1, 2])")["outputs"] == [{"type": "value", "text": "3"}]
    assert not hasattr(builtins, "nuevo")


@pytest.mark.parametrize(
    "patch, check, expected",
    [
        ("import numpy as np\nnp.exp = lambda x: 0", "import numpy as np\nfloat(np.exp(0.0))", "1.0"),
        ("import numpy as np\nnp.random.default_rng = None",
         "import numpy as np\nint(np.random.default_rng(0).integers(10))", None),
        ("import numpy as np\nnp.linalg.norm = lambda x: 0", "import numpy as np\nfloat(np.linalg.norm([3, 4]))", "5.0"),
        ("import math\nmath.sqrt = lambda x: 0", "import math\nmath.sqrt(16)", "4.0"),
        ("import matplotlib.pyplot as plt\nplt.figure = None",
         "import matplotlib.pyplot as plt\nplt.figure(figsize=(1, 1)) is not None", "True"),
        ("from dpdeck import mechanisms\nmechanisms.laplace_scale = lambda **kw: 99",
         "from dpdeck import mechanisms\nmechanisms.laplace_scale(sensitivity=1, epsilon=0.5)", "2.0"),
    ],
)
def test_changing_a_shared_module_does_not_reach_the_next_cell(patch, check, expected):
    assert run(patch)["status"] == "done"
    result = run(check)
    assert result["status"] == "done", result
    if expected is not None:
        assert outputs_of(result, "value") == [{"type": "value", "text": expected}]


def test_names_added_or_deleted_in_a_module_are_undone_but_submodules_stay():
    import numpy as np

    run("import numpy as np\nnp.mi_funcion = len\ndel np.mean\nimport numpy.testing")
    assert not hasattr(np, "mi_funcion")
    assert np.mean([1, 3]) == 2
    assert run("import numpy.testing\nnumpy.testing.assert_equal(1, 1)")["status"] == "done"


def test_a_module_removed_from_sys_modules_is_put_back():
    import numpy

    run("import sys\nsys.modules['numpy'] = None")
    assert sys.modules["numpy"] is numpy
    assert run("import numpy\nint(numpy.ones(2).sum())")["outputs"] == [{"type": "value", "text": "2"}]


def test_sys_hooks_are_restored():
    hooks = sys.excepthook, sys.displayhook, sys.stdout
    run("import sys\nsys.excepthook = None\nsys.displayhook = print\nsys.stdout = None")
    assert (sys.excepthook, sys.displayhook, sys.stdout) == hooks


def test_a_stopped_cell_still_restores_the_modules():
    import numpy as np

    exp = np.exp
    result = run("import numpy as np\nnp.exp = None\nraise KeyboardInterrupt")
    assert result["status"] == "stopped"
    assert np.exp is exp


def test_floating_point_errors_are_silent_as_in_the_browser():
    # WebAssembly has no floating-point exception flags: numpy there never warns.
    result = run("import numpy as np\nprint(np.log(0.0), np.array([0.0]) / 0)\nnp.log(0)")
    assert result["status"] == "done"
    assert [o["type"] for o in result["outputs"]] == ["stream", "value"]
    assert stdout_of(result) == "-inf [nan]\n"
    import numpy as np

    assert np.geterr()["divide"] == "warn"


def test_on_namespace_sees_what_the_cell_defined_inside_its_guards():
    seen = {}

    def look(namespace):
        seen["double"] = namespace["double"](21)
        print("visto por la comprobación")
        import math
        math.pi = 3   # undone with the cell's own changes

    import math
    result = run_cell("def double(x):\n    return 2 * x\n", cell_id="ns", on_namespace=look)
    assert seen == {"double": 42}
    assert result["status"] == "done"
    assert result["outputs"] == [{"type": "stream", "name": "stdout", "text": "visto por la comprobación\n"}]
    assert math.pi != 3


def test_on_namespace_is_not_called_when_the_cell_fails_and_its_errors_are_the_cells():
    calls = []
    assert run_cell("1 / 0", on_namespace=calls.append)["status"] == "error" and calls == []

    def broken(namespace):
        raise ValueError("la comprobación falló")

    result = run_cell("x = 1", on_namespace=broken)
    assert result["status"] == "error"
    assert result["outputs"][-1]["ename"] == "ValueError"


# ------------------------------------------------- what one cell leaves behind


def test_a_change_made_between_cells_is_undone_before_the_next():
    """A callback that a cell left behind (a promise, a timer) and that ran after it ended."""
    import numpy as np

    run("pass")
    original = np.pi
    np.pi = 3.0  # as a leftover callback would, between two cells
    try:
        assert run("import numpy as np\nnp.pi")["outputs"] == [{"type": "value", "text": repr(original)}]
        assert np.pi == original
    finally:
        np.pi = original


def test_asyncio_tasks_left_pending_are_cancelled_when_the_cell_ends():
    import asyncio
    import threading

    async def drive():
        # A running loop, as Pyodide's is between cells.
        result = run(
            """
            import asyncio
            async def later():
                await asyncio.sleep(0.01)
                print("demasiado tarde")
            task = asyncio.ensure_future(later())
            """
        )
        pending = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        await asyncio.sleep(0.05)
        return result, pending

    # In a thread of its own: in the whole suite this thread already has a
    # running loop (Playwright's), and asyncio allows one per thread.
    outcome = {}
    thread = threading.Thread(target=lambda: outcome.setdefault("value", asyncio.run(drive())))
    thread.start()
    thread.join()
    result, pending = outcome["value"]
    assert result["status"] == "done"
    assert len(pending) == 1 and pending[0].cancelled()


# ------------------------------------------------------------ matplotlib's import


PYPLOT_FIGURE = """
import hashlib, io, sys
from dpdeck.classroom import cellrun
if sys.argv[1] == "prepared":
    cellrun.prepare_matplotlib()
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from matplotlib.lines import Line2D
figure, axes = plt.subplots()
line, = axes.plot([0, 1, 2], [0, 1, 4], label="a")
line.set(color="red", linewidth=3)
axes.legend()
axes.set_title("prueba")
buffer = io.BytesIO()
figure.savefig(buffer, format="png", metadata={"Software": None})
print(hashlib.sha256(buffer.getvalue()).hexdigest(), line.get_color(), line.get_linewidth(),
      Line2D.set.__doc__ == cellrun.ARTIST_SET_DOC, Line2D.set._autogenerated_signature)
"""


def run_pyplot_figure(mode: str) -> list[str]:
    import os
    import subprocess
    from pathlib import Path

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3] / "py"), "MPLBACKEND": "Agg"}
    process = subprocess.run([sys.executable, "-c", PYPLOT_FIGURE, mode], capture_output=True, text=True, env=env,
                             check=True)
    return process.stdout.split()


def test_prepared_matplotlib_draws_the_same_figure_with_a_short_set_help():
    # Each Artist subclass no longer writes its long set() help on import (half of pyplot's import in
    # Pyodide): set() works the same and the figure's bytes do not change.
    plain, prepared = run_pyplot_figure("plain"), run_pyplot_figure("prepared")
    assert prepared[0] == plain[0]
    assert prepared[1:3] == plain[1:3] == ["red", "3.0"]
    assert (plain[3], prepared[3]) == ("False", "True")
    assert prepared[4] == plain[4] == "True"
