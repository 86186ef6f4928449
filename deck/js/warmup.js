// What the boot does before «Python listo» so that a lecturer's first run
// costs no more than the next ones: the imports every cell needs and one
// throwaway figure. The worker runs it at every boot (worker.js); the build
// runs it once more before taking Python's memory snapshot (snapshot.js), so
// a restored Python has already done all of it but what the browser itself
// must do again (compiling the WebAssembly the figure runs).

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
// chooses its backend, for the cells that draw with it.
export const WARMUP_CELL = `
import matplotlib.pyplot as plt
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


figure, axes = plt.subplots()  # pyplot picks its backend on its first figure
plt.close(figure)
draw_warmup_figure()
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

/** Draws the warm-up figure through dpdeck.cellrun.run_cell, as a cell runs; returns run_cell. */
export function drawWarmupFigure(pyodide) {
  const runCell = pyodide.pyimport("dpdeck.cellrun").run_cell;
  runCell.callKwargs(WARMUP_CELL, { cell_id: "arranque" }).destroy();
  return runCell;
}
