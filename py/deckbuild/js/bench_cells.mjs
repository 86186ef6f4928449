// Times each cell of a built deck in Pyodide under Node: the browser's Python,
// without the browser (deckbuild/bench.py, `python3 build.py bench`).
//
//   node bench_cells.mjs PYODIDE_MJS DIST REPEATS < REQUEST.json > TIMES.json
//
// PYODIDE_MJS: node_modules/pyodide/pyodide.mjs (the loader; Node cannot use
// the deck's pyodide.js). Everything else comes from DIST as the worker gets it:
// the interpreter, the precompiled packages and their lock, the dpdeck wheel.
// REQUEST.json: {warmImports, warmupCell, cells: [{id, source}, …]}, the
// worker's own warm-up as bench.py reads it from deck/js/worker/warmup.js (matplotlib
// prepared before pyplot, the imports, one throwaway figure, the collector
// frozen). For each cell: one run first (what a cell pays the first time),
// then REPEATS runs; printed as {id: {first, wall, cpu, status}}, seconds,
// medians of the repeats. `cpu` is the process's CPU time (Node's own threads
// included): on a machine shared with other work it moves much less than the
// wall clock.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [loaderPath, dist, repeatsText] = process.argv.slice(2);
const repeats = Math.max(1, Number(repeatsText) || 1);
const { warmImports, warmupCell, cells } = JSON.parse(fs.readFileSync(0, "utf8"));

function cpuSeconds() {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1e6;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

async function bootPython() {
  const runtime = JSON.parse(fs.readFileSync(path.join(dist, "runtime.json"), "utf8"));
  const indexURL = `${path.resolve(dist, runtime.pyodide || "pyodide/")}/`;
  const { loadPyodide } = await import(pathToFileURL(path.resolve(loaderPath)).href);
  const pyodide = await loadPyodide({
    indexURL,
    lockFileURL: path.join(indexURL, "pyodide-lock.json"),
    packageCacheDir: indexURL,
    env: { MPLBACKEND: "Agg" },
    stdout: () => {},
    stderr: () => {},
  });
  await pyodide.loadPackage(runtime.packages, { messageCallback: () => {} });
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  const wheel = new Uint8Array(fs.readFileSync(path.join(dist, runtime.wheel)));
  pyodide.unpackArchive(wheel, "wheel", { extractDir: sitePackages });
  const gc = pyodide.pyimport("gc");
  gc.disable();
  for (const name of warmImports) {
    // As the worker does (a deck built before prepare_matplotlib existed skips it).
    if (name === "matplotlib.pyplot") {
      pyodide.runPython("import dpdeck.cellrun as cellrun\ngetattr(cellrun, 'prepare_matplotlib', lambda: None)()");
    }
    pyodide.pyimport(name).destroy();
  }
  const runCell = pyodide.pyimport("dpdeck.cellrun").run_cell;
  runCell.callKwargs(warmupCell, { cell_id: "arranque" }).destroy();
  gc.freeze();
  gc.enable();
  gc.destroy();
  return runCell;
}

function timeRun(runCell, cell) {
  const wallStarted = performance.now();
  const cpuStarted = cpuSeconds();
  const result = runCell.callKwargs(cell.source, { cell_id: cell.id });
  const times = { wall: (performance.now() - wallStarted) / 1000, cpu: cpuSeconds() - cpuStarted };
  times.status = result.get("status");
  result.destroy();
  return times;
}

const runCell = await bootPython();
const report = {};
for (const cell of cells) {
  const first = timeRun(runCell, cell);
  const runs = Array.from({ length: repeats }, () => timeRun(runCell, cell));
  report[cell.id] = {
    first: first.wall,
    wall: median(runs.map((run) => run.wall)),
    cpu: median(runs.map((run) => run.cpu)),
    status: runs[runs.length - 1].status,
  };
}
runCell.destroy();
process.stdout.write(JSON.stringify(report));
