// The plain page's worker: what a minimal Pyodide page does, nothing more.

const FIGURE = `
import io
import numpy as np
import matplotlib.pyplot as plt

rng = np.random.default_rng(0)
figure, axes = plt.subplots(figsize=(6, 3.5))
axes.hist(rng.laplace(0.0, 1.0, 2000), bins=40)
buffer = io.BytesIO()
figure.savefig(buffer, format="png", dpi=100)
plt.close(figure)
buffer.getvalue()
`;

let pyodide = null;

async function timed(timings, name, action) {
  const started = performance.now();
  await action();
  timings[name] = Math.round(performance.now() - started);
}

async function boot() {
  const timings = {};
  const started = performance.now();
  await timed(timings, "core", async () => {
    importScripts("pyodide/pyodide.js");
    pyodide = await loadPyodide({ indexURL: new URL("pyodide/", location.href).href, env: { MPLBACKEND: "Agg" } });
  });
  await timed(timings, "packages", () => pyodide.loadPackage(["numpy", "matplotlib"]));
  timings.imports = {};
  for (const name of ["numpy", "matplotlib", "matplotlib.pyplot"]) {
    await timed(timings.imports, name, () => pyodide.pyimport(name).destroy());
  }
  timings.total = Math.round(performance.now() - started);
  return { timings };
}

function run() {
  const started = performance.now();
  const proxy = pyodide.runPython(FIGURE);
  const png = proxy.toJs();
  proxy.destroy();
  return { png, elapsedMs: Math.round(performance.now() - started) };
}

self.onmessage = async (event) => {
  const { id, type } = event.data;
  try {
    const result = type === "boot" ? await boot() : run();
    self.postMessage({ id, ok: true, result }, result.png ? [result.png.buffer] : []);
  } catch (error) {
    self.postMessage({ id, ok: false, error: { message: String(error && error.message || error) } });
  }
};
