// A memory snapshot of Python with numpy, matplotlib and dpdeck already
// imported and one figure already drawn, made at build time
// (py/deckbuild/js/snapshot.mjs) and restored by the worker instead of
// starting the interpreter and importing everything again: the boot then
// skips Python's start, every import and the first figure's one-time work.
//
// A snapshot is Pyodide's own (loadPyodide's `_makeSnapshot` and
// `_loadSnapshot`: the WebAssembly memory and the table of JS objects Python
// holds) with one addition: the extension modules (.so files) that were
// loaded before it was taken. Their code is not in the memory, only their
// data, so each is instantiated again, in the order it was loaded, at the
// memory and table addresses it had (the addresses Python's objects point
// to), before the memory is put back over what instantiating wrote.
//
// Emscripten places a library at recorded addresses when it is given a
// handle (libc's `struct dso`, emscripten/dynlink.h) whose flag says it is
// already placed; the same field layout records where a first load put it.

// Offsets in the handle: a one-byte «placed» flag, then memory base, memory
// size, table base and table size, as 32-bit words.
const HANDLE = { PLACED: 8, MEMORY_BASE: 12, TABLE_BASE: 20, SIZE: 64 };
const LOAD_FLAGS = { loadAsync: true, nodelete: true, allowUndefined: true };

export class SnapshotError extends Error {
  constructor(message) {
    super(message);
    this.name = "SnapshotError";
  }
}

// Loads one library as Pyodide's loadDynlib does (local to its module, kept
// for good, also known by its file name), through `handle`.
async function loadLibrary(Module, path, bytes, handle) {
  const dso = Module.newDSO(path, undefined, "loading");
  dso.refcount = Infinity;
  dso.global = false;
  dso.exports = await Module.loadWebAssemblyModule(bytes, LOAD_FLAGS, path, {}, handle);
  const name = Module.PATH.basename(path);
  if (!Module.LDSO.loadedLibsByName[name]) Module.LDSO.loadedLibsByName[name] = dso;
}

function withHandle(Module, use) {
  const handle = Module._calloc(HANDLE.SIZE, 1);
  return use(handle).finally(() => Module._free(handle));
}

/**
 * Loads the libraries of unpacked wheels (wheels.js) from site-packages, in
 * the wheels' order, and returns where each went:
 * [{file, path, memoryBase, tableBase}] (`file` relative to site-packages,
 * `path` where it was loaded from), the list a snapshot restores them from.
 */
export async function loadRecordingLibraries(pyodide, wheels, sitePackages) {
  const Module = pyodide._module;
  const libraries = [];
  await withHandle(Module, async (handle) => {
    for (const wheel of wheels) {
      for (const relative of wheel.dynlibs) {
        const path = `${sitePackages}/${relative}`;
        Module.HEAPU8.fill(0, handle, handle + HANDLE.SIZE);
        const bytes = Module.FS.readFile(path);
        const { neededDynlibs } = Module.getDylinkMetadata(bytes);
        if (neededDynlibs.length) {
          throw new SnapshotError(`${relative} necesita ${neededDynlibs.join(", ")}: no se puede restaurar`);
        }
        await loadLibrary(Module, path, bytes, handle);
        libraries.push({
          file: relative,
          path,
          memoryBase: Module.HEAPU32[(handle + HANDLE.MEMORY_BASE) >> 2],
          tableBase: Module.HEAPU32[(handle + HANDLE.TABLE_BASE) >> 2],
        });
      }
    }
  });
  return libraries;
}

/**
 * Instantiates each recorded library again at its recorded addresses;
 * `readLibrary(file)` gives its bytes. Run before the memory is restored.
 */
export async function placeLibraries(Module, libraries, readLibrary) {
  await withHandle(Module, async (handle) => {
    for (const { file, path, memoryBase, tableBase } of libraries) {
      const bytes = readLibrary(file);
      if (!bytes) throw new SnapshotError(`falta ${file}, que la instantánea necesita`);
      Module.HEAPU8[handle + HANDLE.PLACED] = 1;
      Module.HEAPU32[(handle + HANDLE.MEMORY_BASE) >> 2] = memoryBase;
      Module.HEAPU32[(handle + HANDLE.TABLE_BASE) >> 2] = tableBase;
      await loadLibrary(Module, path, bytes, handle);
    }
  });
}

/**
 * Inflates the shipped snapshot (a stream of gzip bytes, RFC 1952) into
 * `target`, which has exactly the snapshot's size, as the bytes arrive.
 */
export async function inflateSnapshot(compressed, target) {
  const reader = compressed.pipeThrough(new DecompressionStream("gzip")).getReader();
  let offset = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (offset + value.byteLength > target.byteLength) {
      await reader.cancel();
      throw new SnapshotError(`la instantánea mide más de los ${target.byteLength} bytes esperados`);
    }
    target.set(value, offset);
    offset += value.byteLength;
  }
  if (offset !== target.byteLength) {
    throw new SnapshotError(`la instantánea mide ${offset} bytes y se esperaban ${target.byteLength}`);
  }
}

/** The Subresource Integrity value ("sha256-…", base64) of `bytes`. */
export async function computeIntegrity(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `sha256-${btoa(String.fromCharCode(...digest))}`;
}

// ---------------------------------------------------------- the device's copy

// After a device's first restore, the worker keeps the inflated snapshot in
// the origin's private file system (OPFS) once Python has been quiet a while
// (the page asks: the `keep` request). A later boot reads it back (about
// 50 ms, then 100 to 160 ms to check it) instead of downloading 16 MB and inflating
// them into 63 MB, which took the worker about a third of a second on a
// two-core laptop, beside everything else it does. The copy is used only if
// its SHA-256 is the build's (runtime.json's `memoryIntegrity`): a copy of
// another build, cut short or changed is ignored, and replaced when Python is
// quiet again. Where there is no OPFS (an http:// address other than
// localhost), every boot downloads the snapshot.

/** The copy's name in the origin's private file system (at its root: one step less to find it). */
export const KEPT_SNAPSHOT = Object.freeze({ FILE: "dpdeck-python-snapshot.bin" });
/** Where a restored snapshot came from (timings.snapshot.source). */
export const SNAPSHOT_SOURCE = Object.freeze({ KEPT: "kept", DOWNLOAD: "download" });

/**
 * The device's copy opened for reading (a synchronous access handle, read
 * only: two tabs may read it at once), or null: no copy, or no OPFS here.
 * `storage` is the worker's navigator.storage.
 */
export function openKeptSnapshot(storage) {
  return openKeptFile(storage, KEPT_SNAPSHOT.FILE);
}

/**
 * A file the worker keeps on the device (at the root of the origin's private
 * file system) opened for reading, as openKeptSnapshot; null if there is none.
 */
export async function openKeptFile(storage, name) {
  try {
    if (!storage || typeof storage.getDirectory !== "function") return null;
    const root = await storage.getDirectory();
    const file = await root.getFileHandle(name);
    if (typeof file.createSyncAccessHandle !== "function") return null;
    return await file.createSyncAccessHandle({ mode: "read-only" });
  } catch {
    return null;
  }
}

// The copy's bytes in `target` if it is the build's snapshot (its size and
// SHA-256); false otherwise. Closes the handle either way. `mark(name)` notes
// when the copy was read and checked.
async function readKeptCopy(access, target, memoryIntegrity, mark) {
  try {
    if (access.getSize() !== target.byteLength) return false;
    if (access.read(target, { at: 0 }) !== target.byteLength) return false;
  } catch {
    return false;
  } finally {
    access.close();
  }
  mark("keptReadAt");
  const same = (await computeIntegrity(target)) === memoryIntegrity;
  mark("keptCheckedAt");
  return same;
}

/**
 * Fills `target` with the inflated snapshot: from the device's copy when
 * `kept` (a promise of openKeptSnapshot's handle, or null) gives the build's
 * (SHA-256 `memoryIntegrity`), else by `download()`, which inflates the
 * shipped file into `target`. A copy that turns out wrong costs the download
 * it saved. Resolves with the snapshot's source (SNAPSHOT_SOURCE). `mark(name)`,
 * if given, notes when the copy was found, read and checked.
 */
export async function fillSnapshot({ target, kept, memoryIntegrity, download, mark = () => {} }) {
  // Looked for first: on a device's first visit the answer (none) takes a
  // moment, but a download started beside it would take the worker's time on
  // every later visit.
  const access = await kept;
  mark("keptFoundAt");
  if (access && memoryIntegrity && (await readKeptCopy(access, target, memoryIntegrity, mark))) {
    return SNAPSHOT_SOURCE.KEPT;
  }
  if (access && !memoryIntegrity) access.close();
  await download();
  return SNAPSHOT_SOURCE.DOWNLOAD;
}

/**
 * Keeps `bytes` (an inflated snapshot that Python was just restored from) as
 * the device's copy. A writable stream swaps the file whole when it closes,
 * so a reader never sees half a copy. Throws what the storage throws (no
 * room, another tab writing).
 */
export function keepSnapshot(storage, bytes) {
  return keepFile(storage, KEPT_SNAPSHOT.FILE, [bytes]);
}

/** Writes `parts` (byte arrays, in order) as the kept file `name`, whole or not at all, as keepSnapshot. */
export async function keepFile(storage, name, parts) {
  const root = await storage.getDirectory();
  const file = await root.getFileHandle(name, { create: true });
  const writable = await file.createWritable();
  try {
    for (const part of parts) await writable.write(part);
    await writable.close();
  } catch (error) {
    await writable.abort().catch(() => {});
    throw error;
  }
}

/**
 * Pyodide restored from a snapshot: `loadPyodide(options)` with Emscripten's
 * module creation wrapped so that, once the module exists, the libraries are
 * placed, before Pyodide copies the memory back. The module is created while
 * the snapshot still arrives: `snapshot` (Uint8Array of its final size) is
 * filled when `ready` resolves, and `readLibraries` resolves to a function
 * giving a library's bytes by its path in site-packages. `scope` holds
 * `_createPyodideModule` (pyodide.asm.js, loaded already); it is put back as
 * it was whether or not the restore works. Returns {pyodide, timings}: when
 * the module existed, what it then waited for, and placing the libraries (ms).
 */
export async function restorePyodide({ scope, loadPyodide, options, snapshot, ready, readLibraries, libraries }) {
  const createModule = scope._createPyodideModule;
  if (typeof createModule !== "function") throw new SnapshotError("pyodide.asm.js no está cargado");
  const started = performance.now();
  const timings = {};
  const since = (time) => Math.round(performance.now() - time);
  scope._createPyodideModule = async (settings) => {
    const Module = await createModule(settings);
    timings.module = since(started);
    const [, readLibrary] = await Promise.all([ready, readLibraries]);
    timings.waited = since(started) - timings.module;
    const placing = performance.now();
    await placeLibraries(Module, libraries, readLibrary);
    timings.libraries = since(placing);
    return Module;
  };
  try {
    const pyodide = await loadPyodide({ ...options, _loadSnapshot: snapshot });
    return { pyodide, timings };
  } finally {
    scope._createPyodideModule = createModule;
  }
}

// Run in a restored Python before anything else: what the snapshot fixed
// that must differ from one visit to the next. Random generators seeded
// without a seed get fresh entropy (otherwise every visit would draw the same
// «random» numbers), the time zone is the browser's, and loadPyodide's second
// "" on sys.path goes.
export const AFTER_RESTORE_PY = `
import random
import sys
import time

import numpy

random.seed()
numpy.random.seed()
if hasattr(time, "tzset"):
    time.tzset()
while sys.path.count("") > 1:
    sys.path.remove("")
`;

// Run before a snapshot is taken: nothing Python keeps may hold an open file
// (the files live in JavaScript, which the snapshot does not carry). The
// fonts matplotlib keeps open are dropped; they reopen on the next figure.
export const BEFORE_SNAPSHOT_PY = `
import gc

from matplotlib import font_manager, mathtext

mathtext.MathTextParser._parse_cached.cache_clear()
font_manager._get_font.cache_clear()
gc.collect()
`;
