// Python for the deck: Pyodide inside a dedicated Web Worker, so slides and
// editors stay responsive while Python boots or runs a cell.
//
// It speaks the live cells' contract (protocol.js; every message is described
// in deck/README.md): requests {id, type, payload} from the page, one reply
// {id, ok, result | error} to each, and events {type, payload} without id;
// plain data only. Boot stages: runtime (runtime.json), core (Pyodide:
// download, then compile and start the interpreter, `downloading` false;
// or restore the build's memory snapshot of it: snapshot.js), packages
// (numpy, matplotlib…), wheel (dpdeck), warmup (first imports and a
// throwaway figure: warmup.js), ready. The boot starts when the worker does (the
// page's first script creates it); the page's "boot" request waits for it.
//
// It runs under the page's Content-Security-Policy (it starts from a blob:
// URL: workerstart.js), so nothing it or a cell does can reach another
// server; netguard.js adds the Spanish explanation, and cellscope.js undoes
// what one cell leaves behind (timers, listeners, globals) before the next.

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
import { CellScope, natives } from "./cellscope.js";
import {
  blockedOwnFiles,
  checkUrl,
  describeLateRefusals,
  describeViolations,
  installNetworkGuard,
  takeRefusals,
  takeViolations,
} from "./netguard.js";
import { FORGET_LISTINGS_PY, forgetListings, installWheels, unpackWheel } from "./wheels.js";
import {
  KEPT_PACKAGES,
  PACKAGES_SOURCE,
  composePackagesCopy,
  keepPackages,
  listLibraries,
  readKeptPackages,
} from "./packagecopy.js";
import { drawThrowawayFigure, drawWarmupFigure, importWarm, warmRestoredPython } from "./warmup.js";
import {
  AFTER_RESTORE_PY,
  SNAPSHOT_SOURCE,
  SnapshotError,
  computeIntegrity,
  fillSnapshot,
  inflateSnapshot,
  keepSnapshot,
  openKeptFile,
  openKeptSnapshot,
  restorePyodide,
} from "./snapshot.js";

// This script's own URL (js/worker.js): a blob: worker is told it, since its
// location is the blob's, which cannot resolve a relative URL.
const WORKER_URL = typeof self.dpdeckWorkerUrl === "string" ? self.dpdeckWorkerUrl : self.location.href;

const PROGRESS_INTERVAL_MS = 100;
// A violation event is a task of its own: this long after a failure, the
// ones it caused have been recorded.
const VIOLATION_WAIT_MS = 20;
// Turns of the event loop a run waits after its cell, for what the cell left
// to run right after it (see tellBlockedConnections).
const CALLBACK_TURNS = 3;
// The origin's storage (a copy of Python's snapshot is kept there), taken
// before any cell runs; absent outside secure contexts.
const deviceStorage = self.navigator ? self.navigator.storage : undefined;

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
  // The inflated snapshot Python was restored from after a download, and the
  // downloaded packages' files (packagecopy.js), until the page asks for them
  // to be kept on the device (REQUEST.KEEP).
  snapshotToKeep: null,
  packagesToKeep: null,
  // A restored Python's throwaway figure, until the page asks for it (REQUEST.WARM).
  figureToWarm: false,
};

// ---------------------------------------------------------------- messaging

function post(message, transfer = []) {
  natives.postMessage(message, transfer);
}

function emit(type, payload, transfer = []) {
  post({ type, payload }, transfer);
}

// A listener no cell can replace (`js.self.onmessage = …` changes nothing here).
natives.addEventListener("message", async (event) => {
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
});

// "fatal": Pyodide itself broke and the page must start a new worker.
// "policyBlocked": the page's policy blocked the deck's own files (see netguard.js).
function describeError(error) {
  const message = error && error.message ? String(error.message) : String(error);
  return {
    name: (error && error.name) || "Error",
    message,
    step: state.step,
    fatal: isFatal(error, message),
    policyBlocked: Boolean(error && error.policyBlocked),
  };
}

// Pyodide marks the error that broke it (a WebAssembly trap such as «memory
// access out of bounds» or «unreachable», a failed stack switch…), and every
// later call says it «already fatally failed».
function isFatal(error, message) {
  if (error && error.pyodide_fatal_error) return true;
  if (typeof WebAssembly !== "undefined" && error instanceof WebAssembly.RuntimeError) return true;
  return /fatal error|fatally failed/i.test(message);
}

// ---------------------------------------------------------------- network guard

const nativeFetch = self.fetch.bind(self);

function resolveUrl(input) {
  const raw = typeof input === "string" ? input : input instanceof URL ? input.href : input && input.url;
  return new URL(raw, new URL("../", WORKER_URL));
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

// The bytes are counted on a clone and Pyodide gets the response the network
// gave: a Response rebuilt in JS is never code-cached, so wrapping
// pyodide.asm.wasm made Chromium compile the interpreter again on every visit.
function countResponse(response, ended) {
  if (!response.body) {
    ended();
    return response;
  }
  const reader = response.clone().body.getReader();
  const pump = () =>
    reader.read().then(
      (chunk) => {
        if (chunk.done) {
          ended();
          return;
        }
        addLoadedBytes(chunk.value.byteLength);
        pump();
      },
      () => ended(),
    );
  pump();
  return response;
}

// The wheels the boot installs are requested and unpacked (wheels.js) as soon
// as runtime.json names them, while the interpreter starts. Their bytes count
// for the progress bar as they arrive, but not as a download the step waits
// for: until the packages stage, the interpreter's own files are what the boot
// waits for. A wheel that fails to arrive fails the packages stage, naming it.
// Returns {wheels, libraries}: every wheel unpacked, and before that, every
// extension module's bytes, by path in site-packages (a Map). `signal` aborts
// the downloads (the device's copy of the packages came first).
function unpackWheels(files, baseUrl, signal) {
  const libraryLists = [];
  const wheels = Promise.all(
    files.map(async ({ file, integrity }, index) => {
      let announce;
      libraryLists[index] = new Promise((resolve) => {
        announce = resolve;
      });
      const url = checkUrl(new URL(file, baseUrl));
      const fileName = url.pathname.slice(url.pathname.lastIndexOf("/") + 1);
      let bytes;
      try {
        bytes = await readCounted(await nativeFetch(url.href, { integrity, signal }));
      } catch (error) {
        throw new Error(`No se pudo descargar ${displayPath(url)}: ${error.message}`);
      }
      return unpackWheel(bytes, fileName, { onLibraries: announce });
    }),
  );
  wheels.catch(() => {});
  // A wheel that fails never announces its libraries: the race ends the wait.
  const libraries = Promise.race([
    Promise.all(libraryLists).then((lists) => new Map(lists.flat().map(({ path, data }) => [path, data]))),
    wheels.then(() => new Promise(() => {})),
  ]);
  libraries.catch(() => {});
  return { wheels, libraries };
}

async function readCounted(response) {
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return readStreamCounted(response.body);
}

// A body's bytes, whole, each chunk counted for the progress bar as it arrives.
async function readStreamCounted(stream) {
  const reader = stream.getReader();
  const chunks = [];
  let size = 0;
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) break;
    chunks.push(chunk.value);
    size += chunk.value.byteLength;
    addLoadedBytes(chunk.value.byteLength);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

self.fetch = async function countedFetch(input, init) {
  const url = resolveUrl(input);
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
  return countResponse(response, ended);
};

// Pyodide does not always give up when one of its files fails to download (a
// missing .wasm leaves loadPyodide pending forever), so a failed download
// during boot ends the boot at once, naming the file (after it, nothing).
function failBoot(message) {
  if (bootRun) bootRun.fail(new Error(message));
}

function displayPath(url) {
  const base = new URL("../", WORKER_URL).pathname;
  return url.pathname.startsWith(base) ? url.pathname.slice(base.length) : url.href;
}

// Every other way out (XMLHttpRequest, importScripts, WebSocket…) and the
// origin check in front of fetch: netguard.js. Installed after the counting
// fetch above, so a refused request is never counted as a download.
installNetworkGuard(self, WORKER_URL);
const cellScope = new CellScope(self);

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

// Pure-Python packages that are shipped but not loaded at boot (runtime.json's
// lazyPackages): the first import of one of them fetches its wheel
// synchronously (a worker may), checks its SHA-256 and unpacks it into
// site-packages. Run once, in a namespace of its own.
const LAZY_PACKAGES_PY = `${FORGET_LISTINGS_PY}
import sys

import js


class LazyPackages:
    """Installs a shipped pure-Python package the first time something imports it."""

    def __init__(self, packages, site_packages):
        self.by_import = {}
        for package in packages:
            for name in package["imports"]:
                self.by_import[name] = package
        self.site_packages = site_packages

    def find_spec(self, fullname, path=None, target=None):
        package = self.by_import.get(fullname.partition(".")[0])
        if package is None:
            return None
        for name in package["imports"]:
            self.by_import.pop(name, None)
        self.install(package)
        return None  # the regular finders now find it in site-packages

    def install(self, package):
        # Imported here, not at boot: only a cell that wants a lazy package pays for them.
        import hashlib
        import io
        import zipfile

        request = js.XMLHttpRequest.new()
        request.open("GET", package["url"], False)
        request.responseType = "arraybuffer"
        request.send(None)
        if request.status != 200:
            raise ImportError(f"no se pudo descargar {package['url']} (HTTP {request.status})")
        data = request.response.to_bytes()
        if hashlib.sha256(data).hexdigest() != package["sha256"]:
            raise ImportError(f"{package['url']} no es el archivo que espera runtime.json (SHA-256)")
        with zipfile.ZipFile(io.BytesIO(data)) as wheel:
            wheel.extractall(self.site_packages)
        forget_listings()


def install_lazy_packages(packages, site_packages):
    sys.meta_path.insert(0, LazyPackages(packages, site_packages))
`;

// Run once before "ready", caught: the first JavaScript errors raised in this
// interpreter. In Chromium the first one to reach Python through a call or
// a \`new\` can arrive as «SystemError: error return without exception set»
// instead of its own message; after one of each, they arrive as they are. A
// cell's first refused request must say what happened, not that.
const FIRST_JS_ERRORS_CELL = `
import js

for attempt in (lambda: js.JSON.parse("{"), lambda: js.decodeURIComponent("%"), lambda: js.URL.new("::")):
    for _ in range(3):
        try:
            attempt()
        except Exception:
            pass
`;

async function fetchBytes(url, integrity) {
  const response = await self.fetch(url, integrity ? { integrity } : {});
  if (!response.ok) throw new Error(`No se pudo descargar ${displayPath(new URL(url))}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

// The page's SharedArrayBuffer for Stop comes with its "boot" request, before
// or after the interpreter is up.
function applyInterruptBuffer() {
  if (state.pyodide && state.interruptBuffer && !state.interruptSet) {
    state.pyodide.setInterruptBuffer(takeOnRead(state.interruptBuffer));
    state.interruptSet = true;
  }
}

function installLazyPackages(pyodide, runtime, baseUrl, sitePackages) {
  const namespace = pyodide.toPy({});
  pyodide.runPython(LAZY_PACKAGES_PY, { globals: namespace });
  const install = namespace.get("install_lazy_packages");
  const packages = pyodide.toPy(
    (runtime.lazyPackages || []).map((entry) => ({ ...entry, url: new URL(entry.file, baseUrl).href })),
  );
  try {
    install(packages, sitePackages);
  } finally {
    packages.destroy();
    install.destroy();
    namespace.destroy();
  }
}

// The snapshot, inflated into `target` as it downloads, and checked against
// its SHA-256 before anything uses it (a fetch with `integrity` would hold
// the whole file back until it is checked, and only then let it be
// inflated); `mark(name)` notes when each was done. Unlike the
// boot's other files, one that fails to arrive does not fail the boot:
// Python then starts from scratch.
async function fetchSnapshot(description, baseUrl, target, mark) {
  const url = checkUrl(new URL(description.file, baseUrl));
  let response;
  try {
    response = await nativeFetch(url.href);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
  } catch (error) {
    throw new Error(`No se pudo descargar ${displayPath(url)}: ${error.message}`);
  }
  const [inflating, checking] = response.body.tee();
  const downloaded = readStreamCounted(checking).then((bytes) => {
    mark("downloadedAt");
    return bytes;
  });
  const [, compressed] = await Promise.all([inflateSnapshot(inflating, target), downloaded]);
  mark("inflatedAt");
  if ((await computeIntegrity(compressed)) !== description.integrity) {
    throw new SnapshotError(`${displayPath(url)} no coincide con su SHA-256`);
  }
}

// Pyodide restored from the snapshot (snapshot.js) while it and the wheels'
// libraries still arrive, then given fresh entropy (AFTER_RESTORE_PY). Throws
// on any mismatch. `timings` gets the restore's steps (ms).
async function restoreFromSnapshot(description, snapshot, libraries, pyodideUrl, options, timings) {
  const started = performance.now();
  // loadPyodide loads pyodide.asm.js only when it is not loaded yet; the
  // restore needs it first, to wrap its module creation.
  self.importScripts(new URL("pyodide.asm.js", pyodideUrl).href);
  const restored = await restorePyodide({
    scope: self,
    loadPyodide: self.loadPyodide,
    options,
    snapshot: snapshot.bytes,
    ready: snapshot.ready,
    readLibraries: libraries.then((files) => (file) => files.get(file)),
    libraries: description.libraries,
  });
  restored.pyodide.runPython(AFTER_RESTORE_PY);
  Object.assign(timings, restored.timings, { total: Math.round(performance.now() - started) });
  return restored.pyodide;
}

// The packages' wheels unpacked (as unpackWheels gives them): from the
// device's copy (packagecopy.js) if `kept` (openKeptFile's handle, or null)
// is a good copy of `preload`'s wheels, else downloaded. The downloads start at
// once, and stop when the copy turns out good. `copy` gets the source
// (PACKAGES_SOURCE) and, after a download where the device can keep a copy,
// `keep`; the copy to keep is composed before anything uses the files.
function loadPackages(preload, baseUrl, kept, copy) {
  const downloads = new AbortController();
  const downloaded = unpackWheels(preload, baseUrl, downloads.signal);
  const fromCopy = kept.then((access) => (access ? readKeptPackages(access, preload) : null));
  const wheels = fromCopy.then((list) => {
    if (list) {
      downloads.abort();
      copy.source = PACKAGES_SOURCE.KEPT;
      return list;
    }
    copy.source = PACKAGES_SOURCE.DOWNLOAD;
    return downloaded.wheels.then((unpacked) => {
      if (deviceStorage && preload.length) {
        state.packagesToKeep = composePackagesCopy(preload, unpacked);
        copy.keep = true;
      }
      return unpacked;
    });
  });
  const libraries = fromCopy.then((list) => (list ? listLibraries(list) : downloaded.libraries));
  wheels.catch(() => {});
  libraries.catch(() => {});
  return { wheels, libraries };
}

async function boot(base) {
  const baseUrl = new URL(base, WORKER_URL);
  const timings = {};
  const bootStarted = performance.now();
  // The device's copies of the snapshot and the packages are looked for at once: the first visit
  // of a device takes a moment to open its storage.
  const keptSnapshot = openKeptSnapshot(deviceStorage);
  const keptPackages = openKeptFile(deviceStorage, KEPT_PACKAGES.FILE);
  let runtime;
  timings.runtime = await step(BOOT_STAGE.RUNTIME, async () => {
    runtime = await fetchJson(new URL("runtime.json", baseUrl), "runtime.json");
  });
  state.totalBytes = runtime.bytes || 0;
  const pyodideUrl = new URL(runtime.pyodide || "pyodide/", baseUrl).href;
  // The wheels download and unpack while the interpreter starts, unless the device's copy has them.
  const packagesCopy = { source: null, keep: false };
  const { wheels, libraries } = loadPackages(runtime.preload || [], baseUrl, keptPackages, packagesCopy);
  const wheelUrl = new URL(runtime.wheel, baseUrl);
  const wheel = fetchBytes(wheelUrl.href, runtime.wheelIntegrity).then((bytes) =>
    unpackWheel(bytes, wheelUrl.pathname.slice(wheelUrl.pathname.lastIndexOf("/") + 1)),
  );
  wheel.catch(() => {});

  // Python's memory snapshot (snapshot.js): the device's copy, or downloaded beside the wheels.
  // `marks`: when each of its steps was done (ms since the boot started).
  const marks = {};
  const mark = (name) => {
    marks[name] = Math.round(performance.now() - bootStarted);
  };
  let snapshot = null;
  if (runtime.snapshot) {
    const bytes = new Uint8Array(runtime.snapshot.size);
    snapshot = { bytes, source: null };
    snapshot.ready = fillSnapshot({
      target: bytes,
      kept: keptSnapshot,
      memoryIntegrity: runtime.snapshot.memoryIntegrity,
      download: () => fetchSnapshot(runtime.snapshot, baseUrl, bytes, mark),
      mark,
    }).then((source) => {
      snapshot.source = source;
      mark("filledAt");
    });
    snapshot.ready.catch(() => {});
    state.totalBytes = runtime.snapshot.bytes || state.totalBytes;
  } else {
    keptSnapshot.then((access) => access && access.close());
  }
  wheels.then(() => mark("wheelsAt"), () => {});
  libraries.then(() => mark("librariesAt"), () => {});
  let restored = { used: false, error: snapshot ? null : "el mazo no trae instantánea" };

  timings.core = await step(BOOT_STAGE.CORE, async () => {
    try {
      self.importScripts(new URL("pyodide.js", pyodideUrl).href);
    } catch (error) {
      throw new Error(`No se pudo cargar pyodide/pyodide.js: ${error.message}`);
    }
    const options = { indexURL: pyodideUrl, env: { MPLBACKEND: "Agg" }, stdout: () => {}, stderr: () => {} };
    if (snapshot) {
      try {
        const steps = {};
        state.pyodide = await restoreFromSnapshot(runtime.snapshot, snapshot, libraries, pyodideUrl, options, steps);
        restored = { used: true, error: null, source: snapshot.source, keep: false, steps, marks };
      } catch (error) {
        // Any mismatch (another Pyodide, a damaged or missing file…) costs
        // only the time tried: Python then starts from scratch.
        restored = { used: false, error: String((error && error.message) || error) };
        console.warn(`dpdeck: Python arranca desde cero; la instantánea no se pudo restaurar (${restored.error})`);
      }
    }
    if (!state.pyodide) {
      try {
        state.pyodide = await self.loadPyodide(options);
      } catch (error) {
        throw new Error(`Pyodide no pudo arrancar: ${error.message || error}`);
      }
    }
    countImportedScripts();
  });
  const pyodide = state.pyodide;
  applyInterruptBuffer();

  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  timings.packages = await step(BOOT_STAGE.PACKAGES, async () => {
    try {
      await installWheels(pyodide, await wheels, sitePackages, { loadLibraries: !restored.used });
    } catch (error) {
      throw new Error(`No se pudieron cargar los paquetes: ${error.message}`);
    }
  });

  // The dpdeck wheel is unpacked as it is (no installer needed: it has no dependencies to resolve).
  timings.wheel = await step(BOOT_STAGE.WHEEL, async () => {
    await installWheels(pyodide, [await wheel], sitePackages);
    installLazyPackages(pyodide, runtime, baseUrl, sitePackages);
    forgetListings(pyodide);
  });

  // Importing here, before "ready", makes the first run as fast as the next ones.
  // The collector waits until the imports are done, then leaves what they made
  // out of its later passes (a full pass over matplotlib's objects otherwise
  // stalls a cell now and then).
  timings.imports = {};
  const gc = pyodide.pyimport("gc");
  gc.disable();
  timings.warmup = await step(BOOT_STAGE.WARMUP, async () => {
    importWarm(pyodide, (name, milliseconds) => {
      timings.imports[name] = milliseconds;
    });
    const started = performance.now();
    const runCell = restored.used ? warmRestoredPython(pyodide) : drawWarmupFigure(pyodide);
    // Left to the `warm` request after a restore (warmup.js).
    state.figureToWarm = restored.used;
    runCell.callKwargs(FIRST_JS_ERRORS_CELL, { cell_id: "arranque" }).destroy();
    timings.imports.warmupCells = Math.round(performance.now() - started);
    state.runCell = runCell;
  });
  gc.freeze();
  gc.enable();
  gc.destroy();
  state.step = BOOT_STAGE.READY;
  // What the boot itself did is no cell's doing; from here on, each cell starts from this world.
  takeViolations();
  cellScope.install();
  state.loadedBytes = Math.max(state.loadedBytes, state.totalBytes);
  emitProgress();
  timings.total = Math.round(performance.now() - bootStarted);
  // A download worth keeping on this device: the page asks for it once Python is quiet.
  if (restored.used && snapshot.source === SNAPSHOT_SOURCE.DOWNLOAD && deviceStorage && runtime.snapshot.memoryIntegrity) {
    state.snapshotToKeep = snapshot.bytes;
    restored.keep = true;
  }
  timings.snapshot = restored;
  timings.packagesCopy = packagesCopy;
  timings.warmupFigure = !state.figureToWarm;
  return { result: { timings } };
}

// One boot per worker, started when the worker starts; a failed download ends it (failBoot).
let bootRun = null;

function startBoot(base) {
  if (!bootRun) {
    let fail;
    const failed = new Promise((_resolve, reject) => {
      fail = reject;
    });
    const promise = Promise.race([boot(base), failed]);
    promise.catch(() => {});
    bootRun = { promise, fail };
  }
  return bootRun.promise;
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

// Runs a cell through `runCell` (dpdeck.classroom.cellrun.run_cell, or dpdeck.classroom.exercises.run_check
// for «Comprobar»), streaming what it prints; `extra` are further keyword arguments.
async function runThrough(runCell, { runId, cellId, source }, extra = {}) {
  if (!runCell) throw new Error("Python todavía no está listo.");
  const batcher = new StreamBatcher(runId, MAX_OUTPUT_CHARS);
  const onOutput = (output) => {
    batcher.add(output.get("name"), output.get("text"));
  };
  const started = performance.now();
  let proxy;
  let refused = [];
  cellScope.begin();
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
    cellScope.end();
    // Refusals so far were raised inside the cell: its own output shows them.
    refused = takeRefusals();
  }
  const result = toPlain(proxy);
  restoreLostRefusal(result, refused);
  result.elapsedMs = Math.round(performance.now() - started);
  await tellBlockedConnections(result);
  return { result, transfer: figureBuffers(result.outputs) };
}

// Chromium now and then loses the JavaScript error that a guard throws through
// a call into JavaScript (most often a \`new\`, as in \`js.WebSocket.new(url)\`):
// Python then reads «SystemError: error return without exception set», which
// says nothing to a student. The guard knows what it refused during the cell,
// and the refusal is what stopped it (the cell's last one): that is said instead.
const LOST_JS_ERROR = "error return without exception set";

function restoreLostRefusal(result, refused) {
  if (!refused.length) return;
  const lost = result.outputs.find(
    (output) => output.type === OUTPUT.ERROR && output.ename === "SystemError" && output.evalue === LOST_JS_ERROR,
  );
  if (!lost) return;
  const message = `TypeError: ${refused[refused.length - 1]}`;
  lost.ename = "JsException";
  lost.evalue = message;
  lost.traceback = lost.traceback.replace(`SystemError: ${LOST_JS_ERROR}`, `pyodide.ffi.JsException: ${message}`);
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
  state.runCheck ??= state.pyodide.pyimport("dpdeck.classroom.exercises").run_check;
  return runThrough(state.runCheck, payload, { check: payload.check });
}

// The lab of the class with the challenge's answer: {verdict, json, filename}.
async function lab({ seed, extension }) {
  if (!state.pyodide) throw new Error("Python todavía no está listo.");
  state.exportLab ??= state.pyodide.pyimport("dpdeck.classroom.exercises").export_lab;
  const extensionProxy = state.pyodide.toPy(extension || {});
  try {
    return { result: toPlain(state.exportLab.callKwargs({ seed, extension: extensionProxy })) };
  } finally {
    extensionProxy.destroy();
  }
}

// Attempts that no error of the cell can show, said after its outputs instead
// of nothing: a refusal in a promise the cell left (it runs right after the
// cell), and a connection the page's policy blocked (a channel netguard.js
// does not know).
async function tellBlockedConnections(result) {
  // The cell's promises (Pyodide runs a Python callback of `then` a turn or
  // two of the event loop later: about 2 ms), and the events of its blocked
  // attempts, run first.
  for (let turn = 0; turn < CALLBACK_TURNS; turn += 1) await new Promise((done) => natives.setTimeout(done, 0));
  let recorded = takeViolations();
  if (recorded.length) {
    await afterViolations();
    recorded = recorded.concat(takeViolations());
  }
  const sentences = [result.notice, describeLateRefusals(takeRefusals()), describeViolations(recorded)];
  const notice = sentences.filter(Boolean).join(" ");
  if (notice) result.notice = notice;
}

function afterViolations() {
  return new Promise((done) => natives.setTimeout(done, VIOLATION_WAIT_MS));
}

// The page asks for a lock only this worker holds: the browser releases it
// when the worker ends, for whatever reason (a crash, running out of memory),
// and the page, waiting for it, learns at once that Python is gone (python.js).
// Web Locks exist only in secure contexts (https, localhost).
function holdLifeLock(name) {
  if (!name || !self.navigator.locks) return Promise.resolve(false);
  return new Promise((held) => {
    self.navigator.locks
      .request(name, () => {
        held(true);
        return new Promise(() => {});
      })
      .catch(() => held(false));
  });
}

async function answerBoot({ base, interruptBuffer, lifeLock }) {
  state.interruptBuffer = interruptBuffer || null;
  applyInterruptBuffer();
  await holdLifeLock(lifeLock);
  try {
    return await startBoot(base || "../");
  } catch (error) {
    // A policy that blocks the deck's own files (a browser that applies it
    // differently): the page then starts the worker from its own URL.
    await afterViolations();
    if (error && typeof error === "object" && blockedOwnFiles(takeViolations())) error.policyBlocked = true;
    throw error;
  }
}

// The throwaway figure a restored Python's boot left for when it is quiet (warmup.js); {drawn}.
async function answerWarm() {
  if (!state.figureToWarm) return { result: { drawn: false } };
  state.figureToWarm = false;
  drawThrowawayFigure(state.pyodide);
  return { result: { drawn: true } };
}

// Keeps on the device, for its next boots, what the boot holds for it: the
// snapshot Python was restored from and the packages' files (snapshot.js,
// packagecopy.js). Answers {kept} and, when the storage refused, why
// (nothing to keep is not a failure).
async function answerKeep() {
  const copies = [
    [keepSnapshot, state.snapshotToKeep],
    [keepPackages, state.packagesToKeep],
  ].filter(([, copy]) => copy);
  state.snapshotToKeep = null;
  state.packagesToKeep = null;
  if (!copies.length) return { result: { kept: false } };
  try {
    for (const [keep, copy] of copies) await keep(deviceStorage, copy);
    return { result: { kept: true } };
  } catch (error) {
    return { result: { kept: false, reason: String((error && error.message) || error) } };
  }
}

const HANDLERS = {
  [REQUEST.BOOT]: answerBoot,
  [REQUEST.KEEP]: answerKeep,
  [REQUEST.WARM]: answerWarm,
  [REQUEST.RUN]: async (payload) => run(payload),
  [REQUEST.CHECK]: async (payload) => check(payload),
  [REQUEST.LAB]: async (payload) => lab(payload),
};

// Python starts loading now, not when the page gets round to asking ("../": the deck's folder).
startBoot("../");
