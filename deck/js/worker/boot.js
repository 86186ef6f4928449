// Python's boot: runtime.json, then Pyodide (restored from the build's memory
// snapshot, snapshot.js, or started from scratch), the packages (wheels.js,
// or the device's copy: packagecopy.js), the dpdeck wheel and the warm-up
// (warmup.js), each a stage the page shows (BOOT_STAGE). One boot per worker,
// started when the worker starts.

import { BOOT_STAGE } from "../shared/protocol.js";
import { UNFIT } from "../shared/workerboot.js";
import { checkUrl, takeViolations } from "./netguard.js";
import { FORGET_LISTINGS_PY, forgetListings, installWheels, recordPackagesLoaded, unpackWheel } from "./wheels.js";
import {
  KEPT_PACKAGES,
  PACKAGES_SOURCE,
  composePackagesCopy,
  isUsableDescription,
  listLibraries,
  readKeptPackages,
} from "./packagecopy.js";
import { closeStorageDoors } from "./storagedoors.js";
import { drawWarmupFigure, importWarm, warmRestoredPython } from "./warmup.js";
import {
  AFTER_RESTORE_PY,
  SNAPSHOT_SOURCE,
  SnapshotError,
  computeIntegrity,
  KEPT_SNAPSHOT,
  fillSnapshot,
  forgetFile,
  identifySnapshot,
  inflateSnapshot,
  openKeptFile,
  openKeptSnapshot,
  readUnfitSnapshot,
  rememberUnfitSnapshot,
  restorePyodide,
} from "./snapshot.js";
import {
  answerOnceLocally,
  countImportedScripts,
  displayPath,
  emitProgress,
  forgetLocalAnswer,
  nativeFetch,
  readStreamCounted,
  unpackWheels,
} from "./downloads.js";
import { EMPTY_ZIP, bringRemainder, installFilesOnTheirWay } from "./remainder.js";
import { WORKER_URL, bootOptions, cellScope, deviceStore, state } from "./state.js";

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

// A connection that fails once (a busy machine, a kept-alive connection the
// server has just closed) is no reason to leave Python unstarted: the small
// file is asked for again after these pauses (ms) before the boot gives up.
const JSON_RETRY_PAUSES_MS = [300, 1000, 3000];

async function fetchJson(url, what) {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await fetchJsonOnce(url, what);
    } catch (error) {
      if (error.final || attempt >= JSON_RETRY_PAUSES_MS.length) throw error;
      console.warn(`dpdeck: ${error.message}; se vuelve a intentar`);
      await new Promise((resolve) => setTimeout(resolve, JSON_RETRY_PAUSES_MS[attempt]));
    }
  }
}

async function fetchJsonOnce(url, what) {
  let response;
  try {
    // The browser's own fetch: the counted one (downloads.js) would end the boot at the first failure.
    response = await nativeFetch(url);
  } catch (error) {
    throw new Error(`No se pudo descargar ${what} (${url}): ${error.message}`);
  }
  // An answer the server gave on purpose (404…) will not change by asking again.
  if (!response.ok) {
    throw Object.assign(new Error(`No se pudo descargar ${what} (${url}): HTTP ${response.status}`), { final: true });
  }
  try {
    return await response.json();
  } catch (error) {
    throw new Error(`${what} (${url}) llegó incompleto o dañado: ${error.message}`);
  }
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

// Where the page has no shared memory for Stop, Stop ends this worker. JavaScriptCore
// (Safari) ends a worker only when its code calls out to JavaScript, and a Python loop
// never does: the worker of `while True: pass` went on spinning a core after Stop, for
// as long as the page lived. With a signal buffer set, CPython's eval loop asks it for
// a signal every few hundred instructions through a call to JavaScript (the price every
// engine with shared memory already pays); this one never has one to give.
const NEVER_SIGNALS = Object.freeze({
  get 0() {
    return 0;
  },
  set 0(_value) {},
});

// The page's SharedArrayBuffer for Stop comes with its "boot" request, before
// or after the interpreter is up; until it comes, or where there is none, NEVER_SIGNALS.
export function applyInterruptBuffer() {
  if (!state.pyodide || state.interruptSet) return;
  if (state.interruptBuffer) {
    state.pyodide.setInterruptBuffer(takeOnRead(state.interruptBuffer));
    state.interruptSet = true;
  } else {
    state.pyodide.setInterruptBuffer(NEVER_SIGNALS);
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
// on any mismatch; a failure once the memory is back says the snapshot does
// not fit this browser (SnapshotError `unfit`). `timings` gets the restore's
// steps (ms). `stdlibLater`: Pyodide gets an empty standard library to start
// with, and the real zip arrives after «Python listo» (remainder.js).
async function restoreFromSnapshot(description, snapshot, libraries, pyodideUrl, options, timings, stdlibLater) {
  const started = performance.now();
  // loadPyodide loads pyodide.asm.js only when it is not loaded yet; the
  // restore needs it first, to wrap its module creation.
  self.importScripts(new URL("pyodide.asm.js", pyodideUrl).href);
  const stdlibUrl = new URL("python_stdlib.zip", pyodideUrl).href;
  if (stdlibLater) answerOnceLocally(stdlibUrl, EMPTY_ZIP);
  try {
    const restored = await restorePyodide({
      scope: self,
      loadPyodide: self.loadPyodide,
      options: stdlibLater ? { ...options, stdLibURL: stdlibUrl } : options,
      snapshot: snapshot.bytes,
      ready: snapshot.ready,
      readLibraries: libraries.then((files) => (file) => files.get(file)),
      libraries: description.libraries,
      table: description.table,
      mainData: description.mainData,
    });
    try {
      restored.pyodide.runPython(AFTER_RESTORE_PY);
    } catch (error) {
      throw new SnapshotError(`Python falló al salir de la instantánea (${(error && error.message) || error})`, {
        unfit: true,
      });
    }
    Object.assign(timings, restored.timings, { total: Math.round(performance.now() - started) });
    return restored.pyodide;
  } finally {
    forgetLocalAnswer(stdlibUrl);
  }
}

// Pyodide only warns when its WebAssembly cannot be compiled, and then waits
// for ever: a response that is not the interpreter (cut short, or compressed
// by a server or proxy that did not say so) ends the boot at once, saying what
// arrived. Returns the function that stops watching.
function watchWasmCompilation(pyodideUrl) {
  const original = WebAssembly.instantiateStreaming;
  if (typeof original !== "function") return () => {};
  const file = displayPath(new URL("pyodide.asm.wasm", pyodideUrl));
  WebAssembly.instantiateStreaming = async function compileWatched(source, imports) {
    try {
      return await original.call(WebAssembly, source, imports);
    } catch (error) {
      failBoot(describeBadWasm(file, error));
      throw error;
    }
  };
  return () => {
    WebAssembly.instantiateStreaming = original;
  };
}

function describeBadWasm(file, error) {
  const message = String((error && error.message) || error);
  const found = /found ([0-9a-f]{2}) ([0-9a-f]{2})/i.exec(message);
  if (found && found[1].toLowerCase() === "1f" && found[2].toLowerCase() === "8b") {
    return `${file} llegó comprimido con gzip sin decirlo (falta su Content-Encoding: ¿un proxy que cambia la compresión?)`;
  }
  return `${file} llegó dañado: no es el intérprete de Python (${message})`;
}

// The libraries a restore places, from their own small zip
// (runtime.json's snapshot.librariesFile) instead of the wheels: {path: bytes}.
async function fetchLibraries(description, baseUrl) {
  const url = checkUrl(new URL(description.librariesFile, baseUrl));
  let bytes;
  try {
    const response = await nativeFetch(url.href, { integrity: description.librariesIntegrity });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    bytes = await readStreamCounted(response.body);
  } catch (error) {
    throw new Error(`No se pudo descargar ${displayPath(url)}: ${error.message}`);
  }
  const unpacked = await unpackWheel(bytes, displayPath(url));
  return new Map(unpacked.files.map(({ path, data }) => [path, data]));
}

// The files the first figure reads (matplotlib's fonts: runtime.json's
// snapshot.figureFiles), written from the device's copy of the packages
// (`files`: {path in site-packages: bytes}) before «Python listo». Whether
// they all were; if not, they come in their own small zip right after it
// (remainder.js), and a figure never waits for matplotlib's whole wheel.
function writeFigureFiles(pyodide, figureFiles, files, sitePackages) {
  const found = (figureFiles || []).map((file) => [file, files.get(file)]);
  if (found.some(([, data]) => !data)) return false;
  for (const [file, data] of found) {
    const path = `${sitePackages}/${file}`;
    pyodide.FS.mkdirTree(path.replace(/\/[^/]*$/, ""));
    pyodide.FS.writeFile(path, data);
  }
  return true;
}

// What a restored Python gets after «Python listo» (remainder.js): the
// dpdeck wheel and the first figure's files (unless `figureFilesWritten`)
// first, then the other wheels and the standard library, and the finder that
// makes an import or a font wait for them.
function startRemainder(pyodide, runtime, baseUrl, sitePackages, keptWheels, packagesCopy, figureFilesWritten) {
  const stdlibTarget = pyodide.runPython("import sys\nnext(path for path in sys.path if path.endswith('.zip'))");
  const wheels = [
    { file: runtime.wheel, integrity: runtime.wheelIntegrity, imports: ["dpdeck"], forCells: true },
    ...(runtime.preload || []).map((entry, index) => ({
      ...entry,
      forCells: false,
      kept: keptWheels ? keptWheels[index] : null,
    })),
  ].map((wheel) => ({ ...wheel, url: new URL(wheel.file, baseUrl) }));
  const stdlib = runtime.stdlib ? { ...runtime.stdlib, url: new URL(runtime.stdlib.file, baseUrl), target: stdlibTarget } : null;
  const archives = [...wheels, ...(stdlib ? [stdlib] : [])].map((archive) => ({
    file: archive.file,
    url: archive.url.href,
    sha256: archive.sha256 || sha256FromIntegrity(archive.integrity),
    imports: archive.imports || [],
    target: archive.target || null,
  }));
  const finder = installFilesOnTheirWay(pyodide, archives, sitePackages);
  // Their modules are imported already: loaded, for a cell's loadPackage or micropip, before their files arrive.
  recordPackagesLoaded(pyodide, wheels.map((wheel) => wheel.url.pathname.slice(wheel.url.pathname.lastIndexOf("/") + 1)));
  const described = runtime.snapshot;
  const figureFiles =
    figureFilesWritten || !described.figureFilesFile
      ? null
      : { file: described.figureFilesFile, url: new URL(described.figureFilesFile, baseUrl), integrity: described.figureFilesIntegrity };
  const remainder = bringRemainder({ pyodide, sitePackages, wheels, stdlib, finder, figureFiles });
  state.cellFiles = remainder.cellFiles;
  // Downloaded (not read from the device's copy): kept for the next boot once it has all arrived and Python is quiet.
  const preload = runtime.preload || [];
  const description = runtime.packagesCopy;
  packagesCopy.keep = Boolean(!keptWheels && state.store && preload.length && isUsableDescription(description, preload));
  state.remainder = remainder.all.then((unpacked) => {
    finder.destroy();
    if (packagesCopy.keep) state.packagesToKeep = { data: composePackagesCopy(unpacked.slice(1)), description };
  });
  state.remainder.catch((error) => {
    console.warn(`dpdeck: parte de Python no llegó a este dispositivo (${error.message})`);
  });
}

// "sha256-<base64>" → the hex digest Python's hashlib gives.
function sha256FromIntegrity(integrity) {
  const bytes = atob(String(integrity).replace(/^sha256-/, ""));
  return Array.from(bytes, (char) => char.charCodeAt(0).toString(16).padStart(2, "0")).join("");
}

// The wheels in the device's copy of the packages opened as `access`
// (openKeptFile's handle, or null), if it is the copy runtime.json's
// `description` gives; else null, and `copy.refused` says why when there was one.
async function readPackagesCopy(access, preload, description, copy) {
  if (!access) return null;
  if (!isUsableDescription(description, preload)) {
    access.close();
    return null;
  }
  const { wheels, refused } = await readKeptPackages(access, preload, description);
  if (refused) copy.refused = refused;
  return wheels || null;
}

// The packages' wheels unpacked (as unpackWheels gives them): from the
// device's copy (packagecopy.js) if `kept` (openKeptFile's handle, or null)
// is the copy runtime.json's `description` (packagesCopy) gives, else
// downloaded. The downloads start at once, and stop when the copy turns out
// good. `copy` gets the source (PACKAGES_SOURCE), why a copy on the device
// was refused (`refused`), and, after a download where the device can keep a
// copy, `keep`; the copy to keep is composed before anything uses the files.
// `unpacked`: `kept` is a promise of the copy already read (readPackagesCopy's
// result), not of its handle.
function loadPackages(preload, description, baseUrl, kept, copy, { unpacked = false } = {}) {
  const downloads = new AbortController();
  const downloaded = unpackWheels(preload, baseUrl, downloads.signal);
  const usable = isUsableDescription(description, preload);
  const fromCopy = unpacked ? kept : kept.then((access) => readPackagesCopy(access, preload, description, copy));
  const wheels = fromCopy.then((list) => {
    if (list) {
      downloads.abort();
      copy.source = PACKAGES_SOURCE.KEPT;
      state.usedCopies.add(KEPT_PACKAGES.FILE);
      return list;
    }
    copy.source = PACKAGES_SOURCE.DOWNLOAD;
    return downloaded.wheels.then((unpacked) => {
      if (state.store && preload.length && usable) {
        state.packagesToKeep = { data: composePackagesCopy(unpacked), description };
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

// Records on the device, without holding the boot up, that the snapshot
// `description` does not fit this browser (snapshot.js).
async function rememberUnfit(description, reason) {
  try {
    await rememberUnfitSnapshot(state.store, await identifySnapshot(description), reason);
  } catch (error) {
    console.warn(`dpdeck: este dispositivo no pudo recordar que la instantánea no encaja (${error.message || error})`);
  }
}

// Why this boot does not try the build's snapshot `description`, or null:
// the page says a Python restored from it broke (the device remembers it from
// now on), or the device remembers (`unfitRecord`, a promise of
// readUnfitSnapshot's record) that this very snapshot did not fit.
// {reason, unfit: UNFIT.TOLD | UNFIT.REMEMBERED}.
async function refuseSnapshot(description, unfitRecord) {
  if (bootOptions.unfit) {
    rememberUnfit(description, bootOptions.unfit);
    return { reason: bootOptions.unfit, unfit: UNFIT.TOLD };
  }
  const record = await unfitRecord;
  if (record && record.snapshot === (await identifySnapshot(description))) {
    return { reason: record.reason, unfit: UNFIT.REMEMBERED };
  }
  return null;
}

async function boot(base) {
  const baseUrl = new URL(base, WORKER_URL);
  const timings = {};
  const bootStarted = performance.now();
  // The device's copies of the snapshot and the packages, and its memory of a
  // snapshot that did not fit, are looked for at once: the first visit of a
  // device takes a moment to open its store.
  const keptSnapshot = openKeptSnapshot(deviceStore);
  const keptPackages = openKeptFile(deviceStore, KEPT_PACKAGES.FILE);
  const unfitRecord = readUnfitSnapshot(deviceStore);
  let runtime;
  timings.runtime = await step(BOOT_STAGE.RUNTIME, async () => {
    runtime = await fetchJson(new URL("runtime.json", baseUrl), "runtime.json");
  });
  state.totalBytes = runtime.bytes || 0;
  state.store = await deviceStore;
  timings.store = state.store ? state.store.kind : null;
  const refusal = runtime.snapshot ? await refuseSnapshot(runtime.snapshot, unfitRecord) : null;
  const pyodideUrl = new URL(runtime.pyodide || "pyodide/", baseUrl).href;
  const packagesCopy = { source: null, keep: false };
  // A restore needs, of the wheels, only the libraries it places: from the
  // device's copy of the packages or their own small zip. The rest comes after
  // «Python listo» (startRemainder). Starting from scratch needs every wheel.
  const remainderLater = Boolean(runtime.snapshot && runtime.snapshot.librariesFile && !refusal);
  let keptWheels = Promise.resolve(null);
  const loadEverything = (kept, unpacked) => {
    const loaded = loadPackages(runtime.preload || [], runtime.packagesCopy, baseUrl, kept, packagesCopy, {
      unpacked,
    });
    const wheelUrl = new URL(runtime.wheel, baseUrl);
    const wheel = fetchBytes(wheelUrl.href, runtime.wheelIntegrity).then((bytes) =>
      unpackWheel(bytes, wheelUrl.pathname.slice(wheelUrl.pathname.lastIndexOf("/") + 1)),
    );
    wheel.catch(() => {});
    return { ...loaded, wheel };
  };
  let everything = null;
  let libraries;
  if (remainderLater) {
    keptWheels = keptPackages.then((access) =>
      readPackagesCopy(access, runtime.preload || [], runtime.packagesCopy, packagesCopy),
    );
    keptWheels.catch(() => {});
    libraries = keptWheels.then((list) => {
      packagesCopy.source = list ? PACKAGES_SOURCE.KEPT : PACKAGES_SOURCE.DOWNLOAD;
      if (list) state.usedCopies.add(KEPT_PACKAGES.FILE);
      return list ? listLibraries(list, runtime.snapshot.figureFiles) : fetchLibraries(runtime.snapshot, baseUrl);
    });
    libraries.catch(() => {});
  } else {
    everything = loadEverything(keptPackages, false);
    libraries = everything.libraries;
  }

  // Python's memory snapshot (snapshot.js): the device's copy, or downloaded beside the wheels.
  // `marks`: when each of its steps was done (ms since the boot started).
  const marks = {};
  const mark = (name) => {
    marks[name] = Math.round(performance.now() - bootStarted);
  };
  let snapshot = null;
  if (runtime.snapshot && !refusal) {
    const bytes = new Uint8Array(runtime.snapshot.size);
    snapshot = { bytes, source: null, refused: false };
    snapshot.ready = fillSnapshot({
      target: bytes,
      kept: keptSnapshot,
      memoryIntegrity: runtime.snapshot.memoryIntegrity,
      download: () => fetchSnapshot(runtime.snapshot, baseUrl, bytes, mark),
      mark,
      onRefused: () => {
        snapshot.refused = true;
      },
    }).then((source) => {
      snapshot.source = source;
      if (source === SNAPSHOT_SOURCE.KEPT) state.usedCopies.add(KEPT_SNAPSHOT.FILE);
      mark("filledAt");
      return source;
    });
    snapshot.ready.catch(() => {});
    state.totalBytes = runtime.snapshot.bytes || state.totalBytes;
  } else {
    keptSnapshot.then((access) => access && access.close());
  }
  if (everything) everything.wheels.then(() => mark("wheelsAt"), () => {});
  libraries.then(() => mark("librariesAt"), () => {});
  let restored = refusal
    ? { used: false, error: refusal.reason, unfit: refusal.unfit }
    : { used: false, error: snapshot ? null : "el mazo no trae instantánea" };

  const unwatch = watchWasmCompilation(pyodideUrl);
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
        state.pyodide = await restoreFromSnapshot(runtime.snapshot, snapshot, libraries, pyodideUrl, options, steps,
          remainderLater);
        restored = { used: true, error: null, source: snapshot.source, keep: false, steps, marks };
      } catch (error) {
        // Any mismatch (another Pyodide, a damaged or missing file…) costs
        // only the time tried: Python then starts from scratch. One that says
        // the snapshot does not fit this browser is remembered on the device;
        // the device's copies it was restored from are not used again.
        restored = { used: false, error: String((error && error.message) || error) };
        if (error && error.unfit) {
          restored.unfit = UNFIT.FOUND;
          if (error.found) restored.table = error.found;
          rememberUnfit(runtime.snapshot, restored.error);
        }
        state.pyodide = null;
        console.warn(`dpdeck: Python arranca desde cero; la instantánea no se pudo restaurar (${restored.error})`);
        await forgetUsedCopies();
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
  unwatch();
  const pyodide = state.pyodide;
  applyInterruptBuffer();

  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  const restoredFirst = restored.used && remainderLater;
  // From the device's copy, the figure files are here already; downloaded, they come right after «Python listo».
  const figureFilesWritten = restoredFirst && writeFigureFiles(pyodide, runtime.snapshot.figureFiles, await libraries, sitePackages);
  if (!restoredFirst && !everything) {
    // From scratch after all: every wheel now (from the device's copy, if it was read and good).
    everything = loadEverything(keptWheels, true);
  }
  timings.packages = await step(BOOT_STAGE.PACKAGES, async () => {
    if (restoredFirst) return;
    try {
      await installWheels(pyodide, await everything.wheels, sitePackages, { loadLibraries: !restored.used });
    } catch (error) {
      throw new Error(`No se pudieron cargar los paquetes: ${error.message}`);
    }
  });

  // The dpdeck wheel is unpacked as it is (no installer needed: it has no dependencies to resolve).
  timings.wheel = await step(BOOT_STAGE.WHEEL, async () => {
    if (!restoredFirst) await installWheels(pyodide, [await everything.wheel], sitePackages);
    installLazyPackages(pyodide, runtime, baseUrl, sitePackages);
    if (!restoredFirst) forgetListings(pyodide);
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
  // What the boot itself did is no cell's doing; from here on, each cell starts from this world,
  // with no way to the device's storage or to the page but the protocol's (storagedoors.js).
  takeViolations();
  closeStorageDoors(self);
  cellScope.install();
  state.loadedBytes = Math.max(state.loadedBytes, state.totalBytes);
  emitProgress();
  timings.total = Math.round(performance.now() - bootStarted);
  // A download worth keeping on this device: the page asks for it once Python is quiet.
  if (restored.used && snapshot.source === SNAPSHOT_SOURCE.DOWNLOAD && state.store && runtime.snapshot.memoryIntegrity) {
    state.snapshotToKeep = snapshot.bytes;
    restored.keep = true;
  }
  if (snapshot && snapshot.refused) restored.refused = true;
  timings.snapshot = restored;
  timings.packagesCopy = packagesCopy;
  timings.warmupFigure = !state.figureToWarm;
  timings.remainderLater = restoredFirst;
  // The page says it in one line: the deck's snapshot could not be used, Python started from scratch.
  if (snapshot && !restored.used) {
    const reason = String(restored.error).split("\n")[0];
    timings.notice = `Python arrancó desde cero: su memoria guardada no se pudo usar (${reason}).`;
  }
  if (restoredFirst) {
    const keptList = await keptWheels.catch(() => null);
    startRemainder(pyodide, runtime, baseUrl, sitePackages, keptList, packagesCopy, figureFilesWritten);
  }
  return { result: { timings: { ...timings, packagesCopy: { ...packagesCopy } } } };
}

/** Deletes the device's copies this boot used (state.usedCopies): a boot that failed after using one. */
export async function forgetUsedCopies() {
  const names = [...state.usedCopies];
  state.usedCopies.clear();
  for (const name of names) {
    try {
      await forgetFile(deviceStore, name);
    } catch (error) {
      console.warn(`dpdeck: no se pudo borrar ${name} de este dispositivo (${(error && error.message) || error})`);
    }
  }
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
