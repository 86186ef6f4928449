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
// What else a restore needs of the table of functions, and the check that it
// came out as the build left it, are functiontable.js's.

// Offsets in the handle: a one-byte «placed» flag, then memory base, memory
// size, table base and table size, as 32-bit words.
const HANDLE = { PLACED: 8, MEMORY_BASE: 12, TABLE_BASE: 20, TABLE_SIZE: 24, SIZE: 64 };
const LOAD_FLAGS = { loadAsync: true, nodelete: true, allowUndefined: true };

import { FunctionTableMatcher, describeFunctionTable, tableFits } from "./functiontable.js";

/**
 * A snapshot that cannot be restored. `unfit`: it was restored as far as its
 * table of functions, which came out unlike the build's: it does not fit
 * this browser (another download would not help).
 */
export class SnapshotError extends Error {
  constructor(message, { unfit = false } = {}) {
    super(message);
    this.name = "SnapshotError";
    this.unfit = unfit;
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
 * [{file, path, memoryBase, tableBase, tableSize}] (`file` relative to
 * site-packages, `path` where it was loaded from; `tableSize` the slots its
 * element segment fills), the list a snapshot restores them from.
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
          tableSize: Module.HEAPU32[(handle + HANDLE.TABLE_SIZE) >> 2],
        });
      }
    }
  });
  return libraries;
}

/**
 * Instantiates each recorded library again at its recorded addresses;
 * `readLibrary(file)` gives its bytes. Run before the memory is restored.
 * `matcher` (functiontable.js) lays each library's slots out as V8 does.
 */
export async function placeLibraries(Module, libraries, readLibrary, matcher = new FunctionTableMatcher()) {
  await withHandle(Module, async (handle) => {
    for (const { file, path, memoryBase, tableBase, tableSize = 0 } of libraries) {
      const bytes = readLibrary(file);
      if (!bytes) throw new SnapshotError(`falta ${file}, que la instantánea necesita`);
      Module.HEAPU8[handle + HANDLE.PLACED] = 1;
      Module.HEAPU32[(handle + HANDLE.MEMORY_BASE) >> 2] = memoryBase;
      Module.HEAPU32[(handle + HANDLE.TABLE_BASE) >> 2] = tableBase;
      await matcher.library(Module.wasmTable, tableBase, tableBase + tableSize, () =>
        loadLibrary(Module, path, bytes, handle),
      );
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

// ---------------------------------------------------------- the interpreter's data
// The shipped snapshot holds the main module's data segment XOR-ed out
// (py/deckbuild/snapshot.py, encode_snapshot): those bytes come inside
// pyodide.asm.wasm, and instantiating it writes them at runtime.json's
// mainData.address before anything runs. They are copied from there at that
// moment, checked against the build's SHA-256, and XOR-ed back into a
// downloaded snapshot; a device's kept copy is stored decoded.

/** Wraps `settings.instantiateWasm` so the data instantiation wrote at `address` ({address, size}) is copied into `into.bytes`. */
function watchMainData(settings, { address, size }, into) {
  const instantiate = settings.instantiateWasm;
  if (typeof instantiate !== "function") return;
  settings.instantiateWasm = (imports, receive) =>
    instantiate(imports, (instance, module) => {
      const memory = (imports.env && imports.env.memory) || instance.exports.memory;
      if (memory && address + size <= memory.buffer.byteLength) {
        into.bytes = new Uint8Array(memory.buffer, address, size).slice();
      }
      return receive(instance, module);
    });
}

/**
 * Puts the interpreter's data back into `snapshot` (a downloaded snapshot,
 * inflated): snapshot[offset + i] ^= data[i]. `data` is what instantiating
 * wrote (watchMainData); anything but the build's bytes (`integrity`) throws
 * before the snapshot is touched.
 */
export async function decodeMainData(snapshot, data, { offset, size, integrity }) {
  if (!data || data.byteLength !== size) {
    throw new SnapshotError("no se pudieron leer los datos del intérprete recién instanciado");
  }
  if (offset + size > snapshot.byteLength) throw new SnapshotError("los datos del intérprete no caben en la instantánea");
  if ((await computeIntegrity(data)) !== integrity) {
    throw new SnapshotError("los datos del intérprete no son los que la instantánea espera");
  }
  const target = snapshot.subarray(offset, offset + size);
  // Four bytes at a time where both sides are aligned (the build's offset is), the rest one by one.
  const aligned = target.byteOffset % 4 === 0 && data.byteOffset % 4 === 0;
  const words = aligned ? Math.floor(size / 4) : 0;
  if (words) {
    const into = new Uint32Array(target.buffer, target.byteOffset, words);
    const from = new Uint32Array(data.buffer, data.byteOffset, words);
    for (let index = 0; index < words; index++) into[index] ^= from[index];
  }
  for (let index = words * 4; index < size; index++) target[index] ^= data[index];
}

/** The Subresource Integrity value ("sha256-…", base64) of `bytes`. */
export async function computeIntegrity(bytes) {
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
  return `sha256-${btoa(String.fromCharCode(...digest))}`;
}

// ---------------------------------------------------------- the device's copy

// After a device's first restore, the worker keeps the inflated snapshot in
// the device's store (devicestore.js: the origin's private file system, or
// IndexedDB) once Python has been quiet a while (the page asks: the `keep`
// request). A later boot reads it back (about 50 ms, then 100 to 160 ms to
// check it) instead of downloading 16 MB and inflating them into 63 MB, which
// took the worker about a third of a second on a two-core laptop, beside
// everything else it does. The copy is used only if its SHA-256 is the
// build's (runtime.json's `memoryIntegrity`): a copy of another build, cut
// short or changed is ignored, and replaced when Python is quiet again. Where
// the device has no store, every boot downloads the snapshot.

/** The copy's name in the device's store. */
export const KEPT_SNAPSHOT = Object.freeze({ FILE: "dpdeck-python-snapshot.bin" });
/** Where a restored snapshot came from (timings.snapshot.source). */
export const SNAPSHOT_SOURCE = Object.freeze({ KEPT: "kept", DOWNLOAD: "download" });

/**
 * The device's copy opened for reading (as a synchronous access handle reads:
 * getSize, read, close), or null: no copy, or no store here. `store` is the
 * worker's device store (devicestore.js), or a promise of it.
 */
export function openKeptSnapshot(store) {
  return openKeptFile(store, KEPT_SNAPSHOT.FILE);
}

/** A file the worker keeps in the device's store, opened for reading as openKeptSnapshot; null if there is none. */
export async function openKeptFile(store, name) {
  const opened = await store;
  return opened ? opened.open(name) : null;
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
 * it saved, and `onRefused()` is called. Resolves with the snapshot's source
 * (SNAPSHOT_SOURCE). `mark(name)`, if given, notes when the copy was found,
 * read and checked.
 */
export async function fillSnapshot({ target, kept, memoryIntegrity, download, mark = () => {}, onRefused = () => {} }) {
  // Looked for first: on a device's first visit the answer (none) takes a
  // moment, but a download started beside it would take the worker's time on
  // every later visit.
  const access = await kept;
  mark("keptFoundAt");
  if (access && memoryIntegrity) {
    if (await readKeptCopy(access, target, memoryIntegrity, mark)) return SNAPSHOT_SOURCE.KEPT;
    onRefused();
  }
  if (access && !memoryIntegrity) access.close();
  await download();
  return SNAPSHOT_SOURCE.DOWNLOAD;
}

/**
 * Keeps `bytes` (an inflated snapshot that Python was just restored from) as
 * the device's copy. Throws what the storage throws (no room, another tab
 * writing).
 */
export function keepSnapshot(store, bytes) {
  return keepFile(store, KEPT_SNAPSHOT.FILE, [bytes]);
}

/** Writes `parts` (byte arrays, in order) as the kept file `name` (devicestore.js says how whole). */
export async function keepFile(store, name, parts) {
  const opened = await store;
  if (!opened) throw new Error("este navegador no deja guardar copias en el dispositivo");
  await opened.write(name, parts);
}

// ---------------------------------------------------------- a snapshot that does not fit

// A restore whose table of functions comes out unlike the build's, or after
// which Python breaks, says that this snapshot does not fit this browser.
// The device then remembers it (one small record in its store, of the last
// such snapshot), and its later visits start Python from scratch without
// downloading the snapshot again; a new build ships another snapshot, which
// is tried.

/** The record's name in the device's store. */
export const UNFIT_SNAPSHOT = Object.freeze({ FILE: "dpdeck-python-snapshot-unfit.json" });

/** What names a build's snapshot (its whole description in runtime.json, hashed): each build's is its own. */
export function identifySnapshot(description) {
  return computeIntegrity(new TextEncoder().encode(JSON.stringify(description)));
}

/** The device's record of a snapshot that did not fit ({snapshot, reason}), or null. */
export async function readUnfitSnapshot(store) {
  const access = await openKeptFile(store, UNFIT_SNAPSHOT.FILE);
  if (!access) return null;
  try {
    const bytes = new Uint8Array(access.getSize());
    access.read(bytes, { at: 0 });
    const record = JSON.parse(new TextDecoder().decode(bytes));
    return record && typeof record.snapshot === "string" ? record : null;
  } catch {
    return null;
  } finally {
    access.close();
  }
}

/** Records on the device that the snapshot `identity` (identifySnapshot) does not fit this browser, and why. */
export function rememberUnfitSnapshot(store, identity, reason) {
  const record = JSON.stringify({ snapshot: identity, reason: String(reason).slice(0, 500) });
  return keepFile(store, UNFIT_SNAPSHOT.FILE, [new TextEncoder().encode(record)]);
}

/** Deletes the kept file `name`, if there is one (a boot that used it failed). */
export async function forgetFile(store, name) {
  const opened = await store;
  if (opened) await opened.remove(name);
}

/**
 * Pyodide restored from a snapshot: `loadPyodide(options)` with Emscripten's
 * module creation wrapped so that, once the module exists, the libraries are
 * placed and the table of functions checked against `table` (what the build
 * recorded: functiontable.js), and a downloaded snapshot given the
 * interpreter's data back (`mainData`, decodeMainData; `ready` resolves with
 * the snapshot's SNAPSHOT_SOURCE), before Pyodide copies the memory back. The
 * module is created while the snapshot still arrives: `snapshot` (Uint8Array
 * of its final size) is filled when `ready` resolves, and `readLibraries`
 * resolves to a function giving a library's bytes by its path in
 * site-packages. `scope` holds `_createPyodideModule` (pyodide.asm.js, loaded
 * already); it is put back as it was whether or not the restore works.
 * Returns {pyodide, timings}: when the module existed, what it then waited
 * for, placing the libraries and checking the table (ms), and how many slots
 * had to be laid out as V8 lays them (`tableMatched`). A table unlike the
 * build's throws a SnapshotError marked `unfit`, whose `found` says what it was.
 */
export async function restorePyodide({
  scope,
  loadPyodide,
  options,
  snapshot,
  ready,
  readLibraries,
  libraries,
  table,
  mainData = null,
}) {
  const createModule = scope._createPyodideModule;
  if (typeof createModule !== "function") throw new SnapshotError("pyodide.asm.js no está cargado");
  if (!table) throw new SnapshotError("runtime.json no dice cómo era la tabla de funciones de la instantánea");
  const started = performance.now();
  const timings = {};
  const since = (time) => Math.round(performance.now() - time);
  scope._createPyodideModule = async (settings) => {
    const matcher = new FunctionTableMatcher();
    matcher.watchMain(settings);
    const written = { bytes: null };
    if (mainData) watchMainData(settings, mainData, written);
    const Module = await createModule(settings);
    timings.module = since(started);
    const [source, readLibrary] = await Promise.all([ready, readLibraries]);
    timings.waited = since(started) - timings.module;
    if (mainData && source === SNAPSHOT_SOURCE.DOWNLOAD) {
      const decoding = performance.now();
      await decodeMainData(snapshot, written.bytes, mainData);
      timings.mainData = since(decoding);
    }
    const placing = performance.now();
    await placeLibraries(Module, libraries, readLibrary, matcher);
    timings.libraries = since(placing);
    const checking = performance.now();
    const found = describeFunctionTable(Module);
    timings.tableCheck = since(checking);
    timings.tableMatched = matcher.matched;
    if (!tableFits(found, table)) {
      const error = new SnapshotError(
        `la tabla de funciones de este navegador no es la de la instantánea ` +
          `(${found.length} entradas, ${found.got}; se esperaban ${table.length}, ${table.got})`,
        { unfit: true },
      );
      error.found = found;
      throw error;
    }
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
// What a restored Python uses to fetch files that have not arrived
// (remainder.js: hashlib, io, zipfile) is imported now: the standard
// library's zip may itself be one of them.
export const BEFORE_SNAPSHOT_PY = `
import gc
import hashlib
import io
import zipfile

from matplotlib import font_manager, mathtext

mathtext.MathTextParser._parse_cached.cache_clear()
font_manager._get_font.cache_clear()
gc.collect()
`;
