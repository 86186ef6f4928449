// What the boot does before «Python listo» so that a lecturer's first run
// costs no more than the next ones: the imports every cell needs and one
// throwaway figure. The worker runs it when Python starts from scratch
// (boot.js); the build runs it before taking Python's memory snapshot
// (snapshot.js), so a restored Python has done all of it already. What is left
// after a restore is the browser's own work: compiling the WebAssembly that
// Python runs, as it first runs it. A restored Python runs only PYPLOT_CELL
// before «Python listo», the path every cell takes, and draws the throwaway
// figure once it has been quiet a moment (the `warm` request, python.js). In
// Chromium on a two-core laptop that made «Python listo» 0.3 to 0.4 s
// earlier; a figure asked for before the throwaway one compiles the drawing
// code itself (0.34 to 0.41 s after «Python listo» instead of 0.2 s).

// dpdeck.cellrun comes before pyplot: its prepare_matplotlib() spares pyplot's
// import the work no cell uses (half of it).
export const WARM_IMPORTS = ["numpy", "matplotlib", "dpdeck", "dpdeck.cellrun", "matplotlib.pyplot", "dpdeck.figures"];

// Run once before "ready": the first figure a lecturer asks for then costs no
// more than the next ones. It is drawn as the deck's figures are (dpdeck's
// figure style: measured margins, ticks with a decimal comma, a legend, curves
// of a few hundred points, a PNG at the deck's size), so matplotlib's drawing,
// FreeType, mathtext's parser, the PNG writer — and the WebAssembly each of
// them runs, which the browser compiles the first time it is called and
// optimizes once it has run a while — do their one-time work here; and pyplot
// chooses its backend (PYPLOT_CELL, run first), for the cells that draw with it.
export const WARMUP_CELL = `
import numpy as np

from dpdeck.figure_style import fit_margins, new_figure, style_axes, styled


@styled
def draw_warmup_figure():
    figure, ax = new_figure()
    x = np.linspace(-10, 10, 201)
    for scale in (1, 2, 4):
        ax.plot(x, np.exp(-np.abs(x) / scale) / (2 * scale), label=f"b = {scale}")
    ax.set_xlabel(r"ruido con $\\varepsilon = 1$")
    ax.set_ylabel("densidad")
    ax.set_xlim(x.min(), x.max())
    ax.set_ylim(bottom=0)
    ax.legend(loc="upper right")
    style_axes(ax)
    fit_margins(figure, ax)
    return figure


draw_warmup_figure()
`;

// A pyplot figure made and closed, as a cell: pyplot picks its backend on its
// first figure, and the cell runs the path every cell takes (run_cell).
export const PYPLOT_CELL = `
import matplotlib.pyplot as plt

figure, axes = plt.subplots()
plt.close(figure)
`;

function callPython(pyodide, moduleName, functionName) {
  const module = pyodide.pyimport(moduleName);
  const python = module[functionName];
  try {
    python();
  } finally {
    python.destroy();
    module.destroy();
  }
}

/** Imports WARM_IMPORTS in order; `onImported(name, milliseconds)` after each. */
export function importWarm(pyodide, onImported = () => {}) {
  for (const name of WARM_IMPORTS) {
    const started = performance.now();
    if (name === "matplotlib.pyplot") callPython(pyodide, "dpdeck.cellrun", "prepare_matplotlib");
    pyodide.pyimport(name).destroy();
    onImported(name, Math.round(performance.now() - started));
  }
}

function runWarmupCells(pyodide, cells) {
  const runCell = pyodide.pyimport("dpdeck.cellrun").run_cell;
  for (const cell of cells) runCell.callKwargs(cell, { cell_id: "arranque" }).destroy();
  return runCell;
}

/** Runs PYPLOT_CELL, then draws the warm-up figure, through dpdeck.cellrun.run_cell, as cells run; returns run_cell. */
export function drawWarmupFigure(pyodide) {
  return runWarmupCells(pyodide, [PYPLOT_CELL, WARMUP_CELL]);
}

/** The warm-up of a Python restored from the snapshot: PYPLOT_CELL only; returns run_cell. */
export function warmRestoredPython(pyodide) {
  return runWarmupCells(pyodide, [PYPLOT_CELL]);
}

/** The rest of a restored Python's warm-up, once it is quiet (the `warm` request): the throwaway figure. */
export function drawThrowawayFigure(pyodide) {
  runWarmupCells(pyodide, [WARMUP_CELL]);
}
