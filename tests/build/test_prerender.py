"""The pre-render runs cells where nothing of the machine or the person building can reach them.

The environment is made from nothing, matplotlib has its defaults and its own
fonts, numpy its baseline instructions, PNGs carry no text or time, the cache
key covers the Python environment, and each cell has its own time limit.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy
import pytest
from PIL import Image, PngImagePlugin

from deck_fixtures import ROOT, write_deck
from deckbuild import prerender
from deckbuild.prerender import make_cell_environment, strip_png_metadata
from deckbuild.slides import CELL_TIME_LIMIT, read_deck


def test_cells_run_in_an_environment_made_from_nothing(monkeypatch, tmp_path):
    for name, value in {"HOME": "/home/otra", "MATPLOTLIBRC": "/tmp/rc", "MPLBACKEND": "svg", "TZ": "Asia/Tokyo",
                        "LANG": "es_ES.ISO-8859-1", "PYTHONSTARTUP": "/tmp/s.py", "PYTHONPATH": "/tmp/otro",
                        "LD_PRELOAD": "/tmp/x.so", "XDG_DATA_HOME": "/tmp/datos", "OPENBLAS_CORETYPE": "Haswell",
                        "NPY_DISABLE_CPU_FEATURES": ""}.items():
        monkeypatch.setenv(name, value)
    environment = make_cell_environment(tmp_path)
    assert environment["HOME"] == str(tmp_path) and environment["TZ"] == "UTC"
    assert environment["LANG"] == environment["LC_ALL"] == "C.UTF-8"
    assert environment["PYTHONPATH"] == str(ROOT / "py") and environment["PYTHONHASHSEED"] == "0"
    assert environment["MPLBACKEND"] == "Agg" and environment["OPENBLAS_NUM_THREADS"] == "1"
    for name in ("MATPLOTLIBRC", "PYTHONSTARTUP", "LD_PRELOAD", "XDG_DATA_HOME"):
        assert name not in environment
    # A machine setting that keeps OpenBLAS correct on some processors passes through.
    assert environment["OPENBLAS_CORETYPE"] == "Haswell"


def test_numpy_runs_on_its_baseline_instructions(tmp_path):
    simd = numpy.show_config(mode="dicts")["SIMD Extensions"]
    disabled = make_cell_environment(tmp_path)["NPY_DISABLE_CPU_FEATURES"].split()
    # A processor with every instruction set numpy dispatches to has no «not found» list.
    assert sorted(disabled) == sorted([*simd.get("found", []), *simd.get("not found", [])])
    assert disabled, "numpy dispatches to some instruction set on every x86-64 and arm64 machine"


def test_matplotlib_has_its_defaults_and_only_its_own_fonts(tmp_path):
    """With a user font and a matplotlibrc in reach, the runner's matplotlib sees neither."""
    home = tmp_path / "casa"
    (home / ".fonts").mkdir(parents=True)
    import matplotlib

    shipped = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    (home / ".fonts" / "Otra.ttf").write_bytes((shipped / "DejaVuSerif-Bold.ttf").read_bytes())
    (home / "matplotlibrc").write_text("lines.linewidth: 9\n")
    probe = ("import json, matplotlib\n"
             "from deckbuild.native_cells import use_matplotlib_defaults_and_fonts\n"
             "use_matplotlib_defaults_and_fonts()\n"
             "from matplotlib import font_manager as fm\n"
             "print(json.dumps([matplotlib.rcParams['lines.linewidth'], matplotlib.get_data_path(),\n"
             "                  sorted({f.fname for f in fm.fontManager.ttflist})]))\n")
    environment = {**os.environ, "HOME": str(home), "MATPLOTLIBRC": str(home / "matplotlibrc"),
                   "MPLCONFIGDIR": str(tmp_path / "mpl"), "PYTHONPATH": str(ROOT / "py")}
    result = subprocess.run([sys.executable, "-c", probe], cwd=home, env=environment, capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    linewidth, data_path, fonts = json.loads(result.stdout)
    assert linewidth == 1.5
    assert fonts and all(Path(name).is_relative_to(data_path) for name in fonts)


def test_png_text_and_time_chunks_are_dropped():
    image = Image.new("RGB", (3, 2), (10, 20, 30))
    info = PngImagePlugin.PngInfo()
    info.add_text("Software", "una versión cualquiera")
    info.add_itxt("Comment", "día y hora")
    buffer = io.BytesIO()
    image.save(buffer, format="png", pnginfo=info)
    original = buffer.getvalue()
    stripped = strip_png_metadata(original)
    assert b"tEXt" in original and b"iTXt" in original
    assert b"tEXt" not in stripped and b"iTXt" not in stripped and b"Software" not in stripped
    assert Image.open(io.BytesIO(stripped)).tobytes() == image.tobytes()
    assert strip_png_metadata(stripped) == stripped


def test_the_cache_key_covers_the_python_environment(monkeypatch):
    before = prerender.hash_package_code()
    monkeypatch.setattr(prerender, "describe_cell_environment", lambda: "otro numpy")
    assert prerender.hash_package_code() != before


def test_each_cell_has_its_own_time_limit(tmp_path):
    slides = write_deck(tmp_path / "slides", {"01.md": "# T\n\n```python id=a\n1\n```\n\n"
                                                       "```python id=b timeout=300\n2\n```\n"})
    first, second = read_deck(slides).cells
    assert (first.time_limit, second.time_limit) == (CELL_TIME_LIMIT, 300) and CELL_TIME_LIMIT == 60


@pytest.mark.parametrize("code, expected", [(-11, "la señal SIGSEGV (un fallo de segmentación"),
                                            (-9, "la señal SIGKILL (¿se quedó sin memoria?)"),
                                            (0, "os._exit o similar, código 0"), (7, "código 7")])
def test_an_ended_process_is_described_in_spanish(code, expected):
    assert expected in prerender.describe_exit(code, "")
