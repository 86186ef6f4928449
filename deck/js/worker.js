// Python for the deck: Pyodide inside a dedicated Web Worker, so slides and
// editors stay responsive while Python boots or runs a cell.
//
// It speaks the live cells' contract (protocol.js; every message is described
// in deck/README.md): requests {id, type, payload} from the page, one reply
// {id, ok, result | error} to each, and events {type, payload} without id;
// plain data only. Boot stages: runtime (runtime.json), core (Pyodide:
// download, then compile and start the interpreter, `downloading` false),
// packages (numpy, matplotlib…), wheel (dpdeck), warmup (first imports), ready.
//
// Every file is fetched from the deck's own server: a request to any other
// origin is refused before it leaves the browser.

import {
  BOOT_STAGE,
  EVENT,
  MAX_FIGURES,
  MAX_OUTPUT_CHARS,
  OUTPUT,
  REQUEST,
  RUN_STATUS,
  STREAM_EVENT_BURST,
  STREAM_EVENTS_PER_SECOND,
} from "./protocol.js";

const PROGRESS_INTERVAL_MS = 100;
const WARM_IMPORTS = ["numpy", "matplotlib", "matplotlib.pyplot", "dpdeck", "dpdeck.cellrun"];

const state = {
  pyodide: null,
  runCell: null,
  runCheck: null,
  exportLab: null,
  loadedBytes: 0,
  totalBytes: 0,
  step: "",
  lastProgressAt: 0,
  progressTimer: null,
  // Responses whose bodies are still arriving, and how many the current boot
  // step has started.
  downloads: 0,
  stepDownloads: 0,
};

// ---------------------------------------------------------------- messaging

function post(message, transfer = []) {
  self.postMessage(message, transfer);
}

function emit(type, payload, transfer = []) {
  post({ type, payload }, transfer);
}

self.onmessage = async (event) => {
  const { id, type, payload } = event.data || {};
  const handler = HANDLERS[type];
  if (!handler) {
    post({ id, ok: false, error: { name: "UnknownRequest", message: `Petición desconocida: ${type}` } });
    return;
  }
  try {
    const { result, transfer } = await handler(payload || {});
    post({ id, ok: true, result }, transfer || []);
  } catch (error) {
    post({ id, ok: false, error: describeError(error) });
  }
};

// "fatal": Pyodide itself broke (it says "Pyodide has suffered a fatal error")
// and the page must start a new worker.
function describeError(error) {
  const message = error && error.message ? String(error.message) : String(error);
  const fatal = /fatal error/i.test(message);
  return { name: (error && error.name) || "Error", message, step: state.step, fatal };
}

// ---------------------------------------------------------------- network guard

const nativeFetch = self.fetch.bind(self);

function resolveUrl(input) {
  const raw = typeof input === "string" ? input : input instanceof URL ? input.href : input && input.url;
  return new URL(raw, self.location.href);
}

// Counts the bytes of every response as they arrive, for the progress bar,
// and how many bodies are still arriving (when none is, the boot step is
// compiling or starting something: the page says so instead of a frozen count).
function startDownload() {
  state.downloads += 1;
  state.stepDownloads += 1;
  let open = true;
  return () => {
    if (!open) return;
    open = false;
    state.downloads -= 1;
    emitProgress();
  };
}

function countingResponse(response, ended) {
  if (!response.body) {
    ended();
    return response;
  }
  const reader = response.body.getReader();
  const stream = new ReadableStream({
    async pull(controller) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (error) {
        ended();
        throw error;
      }
      if (chunk.done) {
        ended();
        controller.close();
        return;
      }
      addLoadedBytes(chunk.value.byteLength);
      controller.enqueue(chunk.value);
    },
    cancel(reason) {
      ended();
      return reader.cancel(reason);
    },
  });
  // Keeping status and headers lets WebAssembly.instantiateStreaming accept it.
  return new Response(stream, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

self.fetch = async function guardedFetch(input, init) {
  const url = resolveUrl(input);
  if (url.origin !== self.location.origin) throw new TypeError(blockedMessage(url));
  // Counted from the request on: a response that has not started is still a download.
  const ended = startDownload();
  let response;
  try {
    response = await nativeFetch(input, init);
  } catch (error) {
    ended();
    failBoot(`No se pudo descargar ${displayPath(url)}: ${error.message}`);
    throw error;
  }
  if (!response.ok) failBoot(`No se pudo descargar ${displayPath(url)}: HTTP ${response.status}`);
  return countingResponse(response, ended);
};

// Pyodide does not always give up when one of its files fails to download (a
// missing .wasm leaves loadPyodide pending forever), so a failed download
// during boot ends the boot at once, naming the file.
let rejectBoot = null;

function failBoot(message) {
  if (rejectBoot) rejectBoot(new Error(message));
}

function displayPath(url) {
  const base = new URL("../", self.location.href).pathname;
  return url.pathname.startsWith(base) ? url.pathname.slice(base.length) : url.href;
}

// Python's synchronous downloads (pyodide.http.open_url) use XMLHttpRequest.
const nativeOpen = XMLHttpRequest.prototype.open;
XMLHttpRequest.prototype.open = function guardedOpen(method, url, ...rest) {
  const target = resolveUrl(String(url));
  if (target.origin !== self.location.origin) throw new TypeError(blockedMessage(target));
  return nativeOpen.call(this, method, url, ...rest);
};

function blockedMessage(url) {
  return (
    `Bloqueado: ${url.href} no pertenece a este servidor. ` +
    "Las diapositivas funcionan sin conexión y solo cargan archivos de su propia carpeta."
  );
}

// At most one progress event per PROGRESS_INTERVAL_MS, and always one for the
// last bytes of a burst (they used to wait for the next download, so the bar
// sat at 2 MB while the 9 MB interpreter had long arrived).
function addLoadedBytes(count) {
  state.loadedBytes += count;
  const wait = PROGRESS_INTERVAL_MS - (performance.now() - state.lastProgressAt);
  if (wait <= 0) emitProgress();
  else if (state.progressTimer === null) state.progressTimer = setTimeout(emitProgress, wait);
}

function emitProgress() {
  clearTimeout(state.progressTimer);
  state.progressTimer = null;
  state.lastProgressAt = performance.now();
  emit(EVENT.PROGRESS, {
    loaded: state.loadedBytes,
    total: state.totalBytes ? Math.max(state.totalBytes, state.loadedBytes) : 0,
    step: state.step,
    // Until the step's first download starts, it counts as downloading.
    downloading: state.downloads > 0 || state.stepDownloads === 0,
  });
}

// Scripts loaded with importScripts do not go through fetch; take their size
// from Resource Timing once they are in.
const countedScripts = new Set();
function countImportedScripts() {
  for (const entry of performance.getEntriesByType("resource")) {
    if (!entry.name.endsWith(".js") || countedScripts.has(entry.name)) continue;
    if (entry.initiatorType === "fetch") continue;
    countedScripts.add(entry.name);
    state.loadedBytes += entry.decodedBodySize || entry.encodedBodySize || 0;
  }
}

// ---------------------------------------------------------------- interrupts

// The page writes SIGINT into a SharedArrayBuffer to stop a running cell.
// Python (CPython's Emscripten port, every 50 bytecodes) reads that slot and
// then writes 0 into it, two separate steps: a Stop written between them is
// wiped out and no KeyboardInterrupt is ever raised (about 1 Stop in 60 on a
// `while True: pass`). Python gets this view of the buffer instead, whose
// read takes the value and clears the slot in one atomic step; its own
// clearing write then has nothing left to do. Only the page writes signals,
// and it clears the slot itself before each run, while no Python is running.
function takeOnRead(shared) {
  return {
    get 0() {
      return Atomics.exchange(shared, 0, 0);
    },
    set 0(_value) {},
  };
}

// ---------------------------------------------------------------- boot

async function fetchJson(url, what) {
  let response;
  try {
    response = await self.fetch(url);
  } catch (error) {
    throw new Error(`No se pudo descargar ${what} (${url}): ${error.message}`);
  }
  if (!response.ok) throw new Error(`No se pudo descargar ${what} (${url}): HTTP ${response.status}`);
  return response.json();
}

async function step(name, action) {
  state.step = name;
  state.stepDownloads = 0;
  emitProgress();
  const started = performance.now();
  await action();
  return Math.round(performance.now() - started);
}

async function boot({ base, interruptBuffer }) {
  // The page starts a new worker for each boot.
  if (state.pyodide) throw new Error("Python ya está arrancado en este worker.");
  const baseUrl = new URL(base || "../", self.location.href);
  const timings = {};
  const bootStarted = performance.now();
  let runtime;
  timings.runtime = await step(BOOT_STAGE.RUNTIME, async () => {
    runtime = await fetchJson(new URL("runtime.json", baseUrl), "runtime.json");
  });
  state.totalBytes = runtime.bytes || 0;
  const pyodideUrl = new URL(runtime.pyodide || "pyodide/", baseUrl).href;

  timings.core = await step(BOOT_STAGE.CORE, async () => {
    try {
      self.importScripts(new URL("pyodide.js", pyodideUrl).href);
    } catch (error) {
      throw new Error(`No se pudo cargar pyodide/pyodide.js: ${error.message}`);
    }
    try {
      state.pyodide = await self.loadPyodide({
        indexURL: pyodideUrl,
        env: { MPLBACKEND: "Agg" },
        stdout: () => {},
        stderr: () => {},
      });
    } catch (error) {
      throw new Error(`Pyodide no pudo arrancar: ${error.message || error}`);
    }
    countImportedScripts();
  });
  const pyodide = state.pyodide;
  if (interruptBuffer) pyodide.setInterruptBuffer(takeOnRead(interruptBuffer));

  timings.packages = await step(BOOT_STAGE.PACKAGES, async () => {
    const failures = [];
    await pyodide.loadPackage(runtime.packages, {
      messageCallback: () => {},
      errorCallback: (message) => failures.push(message),
    });
    if (failures.length) throw new Error(`No se pudieron cargar los paquetes: ${failures.join("; ")}`);
  });

  timings.wheel = await step(BOOT_STAGE.WHEEL, async () => {
    const micropip = pyodide.pyimport("micropip");
    try {
      await micropip.install.callKwargs(new URL(runtime.wheel, baseUrl).href, { deps: false });
    } finally {
      micropip.destroy();
    }
  });

  // Importing here, before "ready", makes the first run as fast as the next ones.
  timings.imports = {};
  timings.warmup = await step(BOOT_STAGE.WARMUP, async () => {
    for (const name of WARM_IMPORTS) {
      const started = performance.now();
      pyodide.pyimport(name).destroy();
      timings.imports[name] = Math.round(performance.now() - started);
    }
    state.runCell = pyodide.pyimport("dpdeck.cellrun").run_cell;
    // One empty cell: run_cell loads the rest of dpdeck and settles
    // matplotlib's backend on its first call, not on the student's.
    const started = performance.now();
    state.runCell.callKwargs("pass", { cell_id: "arranque" }).destroy();
    timings.imports.firstCell = Math.round(performance.now() - started);
  });
  state.step = BOOT_STAGE.READY;
  state.loadedBytes = Math.max(state.loadedBytes, state.totalBytes);
  emitProgress();
  timings.total = Math.round(performance.now() - bootStarted);
  return { result: { timings } };
}

// ---------------------------------------------------------------- run

// Collects stdout/stderr chunks and posts them as they come, but at most
// STREAM_EVENTS_PER_SECOND messages a second on average (a token bucket allowing a
// short burst): a cell printing in a tight loop cannot flood the page, and a
// few prints followed by a long computation still show at once. The worker
// cannot use timers while Python runs, so pending text goes out with the next
// write, when the cell hits its output cap, or when it ends.
class StreamBatcher {
  constructor(runId, maxChars) {
    this.runId = runId;
    this.maxChars = maxChars;
    this.pending = [];
    this.tokens = STREAM_EVENT_BURST;
    this.refilledAt = performance.now();
    this.totalChars = 0;
  }

  add(name, text) {
    const last = this.pending[this.pending.length - 1];
    if (last && last.name === name) last.text += text;
    else this.pending.push({ name, text });
    this.totalChars += text.length;
    const now = performance.now();
    this.tokens = Math.min(
      STREAM_EVENT_BURST,
      this.tokens + ((now - this.refilledAt) / 1000) * STREAM_EVENTS_PER_SECOND,
    );
    this.refilledAt = now;
    // Past the cap Python sends nothing more: send the rest (and its notice) now.
    if (this.tokens >= 1 || this.totalChars > this.maxChars) {
      this.tokens -= 1;
      this.flush();
    }
  }

  flush() {
    if (!this.pending.length) return;
    emit(EVENT.STREAM, { runId: this.runId, chunks: this.pending });
    this.pending = [];
  }
}

// The figures' PNG bytes move to the page instead of being copied.
function figureBuffers(outputs) {
  const buffers = new Set();
  for (const output of outputs) {
    if (output.type === OUTPUT.FIGURE && output.data instanceof Uint8Array) buffers.add(output.data.buffer);
  }
  return [...buffers];
}

// Runs a cell through `runCell` (dpdeck.cellrun.run_cell, or dpdeck.exercises.run_check
// for «Comprobar»), streaming what it prints; `extra` are further keyword arguments.
function runThrough(runCell, { runId, cellId, source }, extra = {}) {
  if (!runCell) throw new Error("Python todavía no está listo.");
  const batcher = new StreamBatcher(runId, MAX_OUTPUT_CHARS);
  const onOutput = (output) => {
    batcher.add(output.get("name"), output.get("text"));
  };
  const started = performance.now();
  let proxy;
  try {
    proxy = runCell.callKwargs(source, {
      ...extra,
      cell_id: cellId || "celda",
      on_output: onOutput,
      max_output_chars: MAX_OUTPUT_CHARS,
      max_figures: MAX_FIGURES,
    });
  } catch (error) {
    // A Stop that lands before run_cell has started the cell's own code.
    if (/KeyboardInterrupt/.test(String(error && error.message))) {
      return { result: { status: RUN_STATUS.STOPPED, outputs: [], notice: "Ejecución detenida." } };
    }
    throw error;
  } finally {
    batcher.flush();
  }
  const result = toPlain(proxy);
  result.elapsedMs = Math.round(performance.now() - started);
  return { result, transfer: figureBuffers(result.outputs) };
}

function toPlain(proxy) {
  const value = proxy.toJs({ dict_converter: Object.fromEntries, create_pyproxies: false });
  proxy.destroy();
  return value;
}

async function run(payload) {
  return runThrough(state.runCell, payload);
}

// «Comprobar»: the exercise's cell runs, then its check looks at what it defined.
async function check(payload) {
  if (!state.pyodide) throw new Error("Python todavía no está listo.");
  state.runCheck ??= state.pyodide.pyimport("dpdeck.exercises").run_check;
  return runThrough(state.runCheck, payload, { check: payload.check });
}

// The lab of the class with the challenge's answer: {verdict, json, filename}.
async function lab({ seed, extension }) {
  if (!state.pyodide) throw new Error("Python todavía no está listo.");
  state.exportLab ??= state.pyodide.pyimport("dpdeck.exercises").export_lab;
  const extensionProxy = state.pyodide.toPy(extension || {});
  try {
    return { result: toPlain(state.exportLab.callKwargs({ seed, extension: extensionProxy })) };
  } finally {
    extensionProxy.destroy();
  }
}

const HANDLERS = {
  [REQUEST.BOOT]: (payload) =>
    new Promise((resolve, reject) => {
      rejectBoot = reject;
      boot(payload).then(resolve, reject);
    }).finally(() => {
      rejectBoot = null;
    }),
  [REQUEST.RUN]: async (payload) => run(payload),
  [REQUEST.CHECK]: async (payload) => check(payload),
  [REQUEST.LAB]: async (payload) => lab(payload),
};
