// Runs Pyodide 0.27.7 under Node to take the memory snapshot the worker
// restores (deck/js/worker/snapshot.js): the interpreter started from the deck's own
// shipped files, the boot's wheels and the dpdeck wheel installed as the
// worker installs them, the boot's imports and warm-up figure done as the
// worker does them (deck/js/worker/warmup.js), then Python's memory, compressed.
//
//   node snapshot.mjs JOB.json REPORT.json   (deckbuild/snapshot.py)
//
// JOB.json: {
//   pyodideModule: the path of pyodide.mjs (the npm package of the same version),
//   indexURL:      the deck's pyodide/ folder (pyodide.asm.*, python_stdlib.zip, lock),
//   deckScripts:   the folder of wheels.js, snapshot.js, functiontable.js and warmup.js,
//   wheels:        the wheels in the order the worker installs them (dpdeck's last),
//   output:        where the snapshot goes, uncompressed (deckbuild/snapshot.py encodes it, then
//                  compresses it once)
// }
// REPORT.json: {libraries: [{file, path, memoryBase, tableBase, tableSize}],
//               table: {length, got} (functiontable.js: what a restore must find),
//               figureFiles, bytes, droppedCopies, zeroed, log}:
// the libraries placed again on restore, the table of functions once they
// are placed, the files drawing a figure reads, the memory's size, the bytes
// of library file copies freed and of free memory zeroed before it was taken.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const [jobPath, reportPath] = process.argv.slice(2);
const job = JSON.parse(fs.readFileSync(jobPath, "utf8"));
const log = [];
// Standard streams: every other open file would be lost in the snapshot.
const STANDARD_STREAMS = 3;

// The same inputs must give the same snapshot, byte for byte (the build is
// reproducible): while it is taken, the interpreter's entropy and its clock
// are fixed and its string hashing is not randomized. The worker gives each
// restored Python fresh entropy (snapshot.js, AFTER_RESTORE_PY).
const FIXED_TIME_MS = Date.UTC(2024, 0, 1);
const FIXED_HASH_SEED = "0";
// The program's name (sys.executable, argv[0]): Emscripten's default in a
// browser, not this script's path on the machine that builds.
const PROGRAM_NAME = "./this.program";

function fixEntropyAndClock() {
  let state = 0x2545f491;
  const fill = (view) => {
    const bytes = new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
    for (let index = 0; index < bytes.length; index += 1) {
      // xorshift32: any fixed sequence will do.
      state ^= state << 13;
      state ^= state >>> 17;
      state ^= state << 5;
      bytes[index] = state & 0xff;
    }
    return view;
  };
  Object.defineProperty(globalThis, "crypto", { value: { getRandomValues: fill }, configurable: true });
  Date.now = () => FIXED_TIME_MS;
}

const importScript = (name) => import(pathToFileURL(path.join(job.deckScripts, name)).href);

function openFiles(FS) {
  return FS.streams
    .map((stream, fd) => (stream && fd >= STANDARD_STREAMS ? stream.path || `fd ${fd}` : null))
    .filter(Boolean);
}

// What the warm-up itself uses of site-packages, found in a throwaway
// interpreter that loads no library beforehand: {libraries, figureFiles}.
// `libraries`: the ones Python's own imports open. Only these are loaded
// before the snapshot (and so placed again by every restore, which then needs
// their files before «Python listo»); the others load when a cell first
// imports their module, as in any Pyodide. `figureFiles`: the files drawing
// the warm-up figure reads (matplotlib's fonts; not the folders its imports
// list, whose modules a restored Python has in memory): a restored Python
// reads them when it draws, so they come with the libraries, before «Python listo».
async function probeWarmup(loadPyodide, modules, wheelFiles) {
  const { forgetListings, installWheels, unpackWheel } = modules.wheels;
  const { drawWarmupFigure, importWarm } = modules.warmup;
  const pyodide = await startPyodide(loadPyodide, false);
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  const wheels = [];
  for (const file of wheelFiles) wheels.push(await unpackWheel(new Uint8Array(fs.readFileSync(file)), path.basename(file)));
  await installWheels(pyodide, wheels, sitePackages, { loadLibraries: false, recordPackages: false });
  forgetListings(pyodide);
  importWarm(pyodide);
  const prefix = `${sitePackages}/`;
  const figureFiles = new Set();
  const FS = pyodide.FS;
  const open = FS.open;
  FS.open = function recordOpen(where, ...rest) {
    if (typeof where === "string" && where.startsWith(prefix) && !isFolder(FS, where)) {
      figureFiles.add(where.slice(prefix.length));
    }
    return open.call(this, where, ...rest);
  };
  try {
    drawWarmupFigure(pyodide).destroy();
  } finally {
    FS.open = open;
  }
  const libraries = new Set(
    Object.keys(pyodide._module.LDSO.loadedLibsByName)
      .filter((name) => name.startsWith(prefix))
      .map((name) => name.slice(prefix.length)),
  );
  // Modules the figure imports are in the snapshot's memory: only data files count.
  const isModule = (file) => /\.(py|pyc|so)$/.test(file);
  return { libraries, figureFiles: [...figureFiles].filter((file) => !isModule(file)).sort() };
}

function isFolder(FS, where) {
  try {
    return FS.isDir(FS.stat(where).mode);
  } catch {
    return false;
  }
}

function startPyodide(loadPyodide, makeSnapshot) {
  return loadPyodide({
    indexURL: job.indexURL,
    env: { MPLBACKEND: "Agg", PYTHONHASHSEED: FIXED_HASH_SEED },
    _sysExecutable: PROGRAM_NAME,
    stdout: (text) => log.push(text),
    stderr: (text) => log.push(text),
    _makeSnapshot: makeSnapshot,
  });
}

// The libraries' file copies Emscripten's dlopen keeps in Python's memory (a
// `struct dso`'s file_data and file_data_size, at these offsets of the handle:
// emscripten/dynlink.h), which only a thread loading the same library again
// would read. Freed before the snapshot: 9 MB of memory that restores nothing.
const FILE_DATA = { POINTER: 28, SIZE: 32 };

function dropLibraryFileCopies(Module) {
  let dropped = 0;
  for (const key of Object.keys(Module.LDSO.loadedLibsByHandle)) {
    const handle = Number(key);
    if (!handle) continue;
    const pointer = Module.HEAPU32[(handle + FILE_DATA.POINTER) >> 2];
    const size = Module.HEAPU32[(handle + FILE_DATA.SIZE) >> 2];
    if (!pointer || !size) continue;
    Module.HEAPU8.fill(0, pointer, pointer + size);
    Module._free(pointer);
    Module.HEAPU32[(handle + FILE_DATA.POINTER) >> 2] = 0;
    Module.HEAPU32[(handle + FILE_DATA.SIZE) >> 2] = 0;
    dropped += size;
  }
  return dropped;
}

// The contents of free memory zeroed, so that it compresses to nothing: the
// allocator's chunks (dlmalloc: a size word whose bit 1 says «in use», then
// the data; a free chunk keeps its list links in its first 24 bytes and its
// size in the next chunk's first word) walked from the heap's start to its
// end. If the walk does not land exactly on the end, nothing is changed.
const CHUNK = { HEADER: 8, FREE_LINKS: 24, IN_USE: 2, FLAGS: 7 };

function zeroFreeMemory(Module) {
  const start = Module.___heap_base;
  const end = Module._sbrk(0) >>> 0;
  const free = [];
  let chunk = start;
  while (chunk + CHUNK.HEADER <= end) {
    const head = Module.HEAPU32[(chunk + 4) >> 2];
    const size = head & ~CHUNK.FLAGS;
    if (size === 0) break;
    if (!(head & CHUNK.IN_USE)) free.push([chunk, size]);
    chunk += size;
  }
  // The last chunk (the top) ends a header short of the heap's end.
  if (Math.abs(end - chunk) > CHUNK.HEADER) return 0;
  let zeroed = 0;
  for (const [at, size] of free) {
    const from = at + CHUNK.HEADER + CHUNK.FREE_LINKS;
    const to = Math.min(at + size, end);
    if (to > from) {
      Module.HEAPU8.fill(0, from, to);
      zeroed += to - from;
    }
  }
  return zeroed;
}

async function main() {
  const { loadPyodide } = await import(pathToFileURL(job.pyodideModule).href);
  const modules = {
    wheels: await importScript("wheels.js"),
    snapshot: await importScript("snapshot.js"),
    warmup: await importScript("warmup.js"),
    functiontable: await importScript("functiontable.js"),
  };
  const { forgetListings, installWheels, unpackWheel } = modules.wheels;
  const { BEFORE_SNAPSHOT_PY, loadRecordingLibraries } = modules.snapshot;
  const { drawWarmupFigure, importWarm } = modules.warmup;
  const { describeFunctionTable } = modules.functiontable;

  fixEntropyAndClock();
  const probed = await probeWarmup(loadPyodide, modules, job.wheels);
  fixEntropyAndClock();
  const pyodide = await startPyodide(loadPyodide, true);
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  const wheels = [];
  for (const file of job.wheels) {
    wheels.push(await unpackWheel(new Uint8Array(fs.readFileSync(file)), path.basename(file)));
  }
  await installWheels(pyodide, wheels, sitePackages, { loadLibraries: false, recordPackages: false });
  const preloaded = wheels.map((wheel) => ({ ...wheel, dynlibs: wheel.dynlibs.filter((file) => probed.libraries.has(file)) }));
  const libraries = await loadRecordingLibraries(pyodide, preloaded, sitePackages);
  // Where a restore checks it: once the same libraries are placed, before the memory is back.
  const table = describeFunctionTable(pyodide._module);
  forgetListings(pyodide);

  importWarm(pyodide);
  drawWarmupFigure(pyodide).destroy();
  pyodide.runPython(BEFORE_SNAPSHOT_PY);
  const open = openFiles(pyodide.FS);
  if (open.length) throw new Error(`Python tiene archivos abiertos al tomar la instantánea: ${open.join(", ")}`);
  const recorded = new Set(libraries.map(({ path: where }) => where));
  const unrecorded = Object.keys(pyodide._module.LDSO.loadedLibsByName)
    .filter((name) => name.startsWith(`${sitePackages}/`) && !recorded.has(name));
  if (unrecorded.length) {
    throw new Error(`bibliotecas cargadas durante el arranque que la instantánea no volvería a colocar: ${unrecorded.join(", ")}`);
  }
  const droppedCopies = dropLibraryFileCopies(pyodide._module);
  const zeroed = zeroFreeMemory(pyodide._module);

  const snapshot = pyodide.makeMemorySnapshot();
  const temporary = `${job.output}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, snapshot);
  fs.renameSync(temporary, job.output);
  const report = { libraries, table, figureFiles: probed.figureFiles, bytes: snapshot.byteLength, droppedCopies, zeroed, log };
  fs.writeFileSync(reportPath, JSON.stringify(report));
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n${log.join("\n")}\n`);
  process.exit(1);
});
