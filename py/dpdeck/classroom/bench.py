"""Tiempos nativos de cada cálculo del laboratorio y de cada figura: ``python -m dpdeck.classroom.bench``.

Imprime una tabla con la mediana (y el mínimo) de varias corridas de:

* leer el censo del CSV (sin caché) y ``load_census()`` con caché;
* cada paso de ``dpdeck.lab.STEPS`` y ``run_lab`` completo;
* cada experimento de la clase (``dpdeck.experiments.EXPERIMENTS``) con los
  parámetros y la semilla de su diapositiva: el cálculo solo, y el cálculo con
  su figura ``plot_*`` de ``dpdeck.figures`` o ``dpdeck.figures_federated``
  y su PNG (como la guarda ``dpdeck.classroom.cellrun``). Una ``plot_*`` sin
  experimento se lista con una nota.

Las afirmaciones de velocidad se miden aquí, nunca con límites de tiempo en
las pruebas. Meta de la clase: ``run_lab`` completo en menos de 3 s.
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import statistics
import sys
import time
from importlib import metadata

import numpy as np

from .._checks import check_positive_int
from ..numbers import format_number
from .cellrun import FIGURE_DPI

__all__ = [
    "time_call",
    "collect_data_timings",
    "collect_lab_timings",
    "discover_figures",
    "collect_experiment_timings",
    "collect_figure_timings",
    "format_table",
    "main",
]

RUN_LAB_TARGET_SECONDS = 3.0


def time_call(function, *, repeats: int = 5) -> dict:
    """Corre ``function()`` ``repeats`` veces y devuelve mediana, mínimo y corridas (segundos)."""
    repeats = check_positive_int(repeats, name="repeats")
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        function()
        runs.append(time.perf_counter() - start)
    return {"median": statistics.median(runs), "min": min(runs), "runs": runs}


def _row(group: str, name: str, timing: dict | None, note: str = "") -> dict:
    return {"group": group, "name": name, "timing": timing, "note": note}


def collect_data_timings(*, repeats: int = 5) -> list:
    """Leer el CSV sin caché, ``load_census()`` con caché y regenerar el censo."""
    from .. import data

    path = data.find_census_csv()
    data.load_census()  # llena la caché para medir la llamada cacheada
    return [
        _row("datos", "leer censo.csv (sin caché)", time_call(lambda: data.read_census(path), repeats=repeats)),
        _row("datos", "load_census() (con caché)", time_call(data.load_census, repeats=repeats)),
        _row("datos", "generate_census (semilla fija)",
             time_call(lambda: data.generate_census(np.random.default_rng(data.CENSUS_SEED)), repeats=repeats)),
    ]


def collect_lab_timings(*, repeats: int = 5, seed: int = 0) -> list:
    """Cada paso de ``lab.STEPS`` con su generador, y ``run_lab(seed)`` completo."""
    from .. import lab
    from ..data import load_census

    census = load_census()
    streams = np.random.SeedSequence(seed).spawn(len(lab.STEPS))
    rows = []
    for (name, step), stream in zip(lab.STEPS, streams):
        timing = time_call(lambda: step(census, np.random.default_rng(stream)), repeats=repeats)
        rows.append(_row("laboratorio", name, timing))
    total = time_call(lambda: lab.run_lab(seed), repeats=repeats)
    verdict = "meta < 3 s: cumple" if total["median"] < RUN_LAB_TARGET_SECONDS else "meta < 3 s: NO cumple"
    rows.append(_row("laboratorio", "run_lab (total)", total, verdict))
    return rows


def discover_figures() -> list:
    """Pares (nombre de ``plot_*``, función sin argumentos que la dibuja con su experimento, o ``None``).

    Recorre los módulos de figuras de ``experiments.FIGURE_MODULES`` (capítulos
    1–5 y capítulo 6).
    """
    import importlib

    from .. import experiments

    by_plot = {experiment.plot: name for name, experiment in experiments.EXPERIMENTS.items()}
    names = []
    for module_name in experiments.FIGURE_MODULES:
        module = importlib.import_module(f"dpdeck.{module_name}")
        names += [name for name in dir(module) if name.startswith("plot_") and callable(getattr(module, name))]
    return [(name, (lambda experiment=by_plot[name]: experiments.draw_experiment(experiment))
             if name in by_plot else None) for name in sorted(names)]


def collect_experiment_timings(*, repeats: int = 3) -> list:
    """Cada experimento de la clase, sin dibujar: lo que calcula su celda."""
    from .. import experiments

    return [_row("experimentos", name, time_call(lambda name=name: experiments.run_experiment(name),
                                                  repeats=repeats))
            for name in experiments.EXPERIMENTS]


def collect_figure_timings(*, repeats: int = 3) -> list:
    """Cada experimento con su figura, y con su figura más su PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = []
    for name, demo in discover_figures():
        if demo is None:
            rows.append(_row("figuras", name, None, "sin experimento en dpdeck.experiments: no se mide"))
            continue

        def build(demo=demo):
            plt.close(demo())

        def build_png(demo=demo):
            figure = demo()
            figure.savefig(io.BytesIO(), format="png", dpi=FIGURE_DPI)
            plt.close(figure)

        build()  # primera llamada fuera de la medición: cachés de fuentes y estilos
        rows.append(_row("figuras", name, time_call(build, repeats=repeats)))
        rows.append(_row("figuras", f"{name} + PNG", time_call(build_png, repeats=repeats)))
    return rows


def format_table(rows) -> str:
    """Tabla de texto: grupo, nombre, mediana y mínimo en milisegundos, nota."""
    header = ("grupo", "medición", "mediana ms", "mínimo ms", "nota")
    cells = [header]
    for row in rows:
        timing = row["timing"]
        median = "—" if timing is None else format_number(1000 * timing['median'], 1)
        minimum = "—" if timing is None else format_number(1000 * timing['min'], 1)
        cells.append((row["group"], row["name"], median, minimum, row["note"]))
    widths = [max(len(line[i]) for line in cells) for i in range(len(header))]
    lines = []
    for index, line in enumerate(cells):
        parts = [
            line[0].ljust(widths[0]),
            line[1].ljust(widths[1]),
            line[2].rjust(widths[2]),
            line[3].rjust(widths[3]),
            line[4],
        ]
        lines.append("  ".join(parts).rstrip())
        if index == 0:
            lines.append("  ".join("-" * width for width in widths[:4]) + "  ----")
    return "\n".join(lines)


def _describe_machine() -> str:
    versions = [f"Python {platform.python_version()}", f"numpy {np.__version__}"]
    # La versión instalada, leída sin importar matplotlib (--no-figures promete no importarlo).
    try:
        versions.append(f"matplotlib {metadata.version('matplotlib')}")
    except metadata.PackageNotFoundError:
        pass
    return f"{platform.machine()} · {os.cpu_count()} núcleos · " + " · ".join(versions)


def main(argv=None) -> int:
    """``python -m dpdeck.classroom.bench [--repeats N] [--no-figures]``: imprime la tabla de tiempos."""
    parser = argparse.ArgumentParser(prog="python -m dpdeck.classroom.bench", description=main.__doc__)
    parser.add_argument("--repeats", type=int, default=5, help="corridas por medición (mediana); 5 por defecto")
    parser.add_argument("--no-figures", action="store_true", help="no mide las figuras (no importa matplotlib)")
    args = parser.parse_args(argv)
    repeats = check_positive_int(args.repeats, name="repeats")
    print(f"Tiempos nativos, mediana de {repeats} corridas — {_describe_machine()}")
    rows = collect_data_timings(repeats=repeats) + collect_lab_timings(repeats=repeats)
    rows += collect_experiment_timings(repeats=max(1, min(repeats, 3)))
    if not args.no_figures:
        rows += collect_figure_timings(repeats=max(1, min(repeats, 3)))
    print(format_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
