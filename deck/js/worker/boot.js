// Python's boot: runtime.json, then Pyodide (restored from the build's memory
// snapshot, snapshot.js, or started from scratch), the packages (wheels.js,
// or the device's copy: packagecopy.js), the dpdeck wheel and the warm-up
// (warmup.js), each a stage the page shows (BOOT_STAGE). One boot per worker,
// started when the worker starts.

import { BOOT_STAGE } from "../shared/protocol.js";
import { checkUrl, takeViolations } from "./netguard.js";
import { FORGET_LISTINGS_PY, forgetListings, installWheels, unpackWheel } from "./wheels.js";
import { KEPT_PACKAGES, PACKAGES_SOURCE, composePackagesCopy, listLibraries, readKeptPackages } from "./packagecopy.js";
import { drawWarmupFigure, importWarm, warmRestoredPython } from "./warmup.js";
import {
  AFTER_RESTORE_PY,
  SNAPSHOT_SOURCE,
  SnapshotError,
  computeIntegrity,
  fillSnapshot,
  inflateSnapshot,
  openKeptFile,
  openKeptSnapshot,
  restorePyodide,
} from "./snapshot.js";
import {
  countImportedScripts,
  displayPath,
  emitProgress,
  nativeFetch,
  readStreamCounted,
  unpackWheels,
} from "./downloads.js";
import { WORKER_URL, cellScope, deviceStorage, state } from "./state.js";

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
export function applyInterruptBuffer() {
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

export function startBoot(base) {
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

// Pyodide does not always give up when one of its files fails to download (a
// missing .wasm leaves loadPyodide pending forever), so a failed download
// during boot ends the boot at once, naming the file (after it, nothing).
export function failBoot(message) {
  if (bootRun) bootRun.fail(new Error(message));
}
