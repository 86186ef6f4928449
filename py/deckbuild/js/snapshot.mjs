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
//   deckScripts:   the folder of wheels.js, snapshot.js and warmup.js,
//   wheels:        the wheels in the order the worker installs them (dpdeck's last),
//   output:        where the gzip-compressed snapshot goes
// }
// REPORT.json: {libraries: [{path, memoryBase, tableBase}], bytes, log}.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import zlib from "node:zlib";

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

async function main() {
  const { loadPyodide } = await import(pathToFileURL(job.pyodideModule).href);
  const { forgetListings, installWheels, unpackWheel } = await importScript("wheels.js");
  const { BEFORE_SNAPSHOT_PY, loadRecordingLibraries } = await importScript("snapshot.js");
  const { drawWarmupFigure, importWarm } = await importScript("warmup.js");

  fixEntropyAndClock();
  const pyodide = await loadPyodide({
    indexURL: job.indexURL,
    env: { MPLBACKEND: "Agg", PYTHONHASHSEED: FIXED_HASH_SEED },
    _sysExecutable: PROGRAM_NAME,
    stdout: (text) => log.push(text),
    stderr: (text) => log.push(text),
    _makeSnapshot: true,
  });
  const sitePackages = pyodide.runPython("import site; site.getsitepackages()[0]");
  const wheels = [];
  for (const file of job.wheels) {
    wheels.push(await unpackWheel(new Uint8Array(fs.readFileSync(file)), path.basename(file)));
  }
  await installWheels(pyodide, wheels, sitePackages, { loadLibraries: false, recordPackages: false });
  const libraries = await loadRecordingLibraries(pyodide, wheels, sitePackages);
  forgetListings(pyodide);

  importWarm(pyodide);
  drawWarmupFigure(pyodide).destroy();
  pyodide.runPython(BEFORE_SNAPSHOT_PY);
  const open = openFiles(pyodide.FS);
  if (open.length) throw new Error(`Python tiene archivos abiertos al tomar la instantánea: ${open.join(", ")}`);

  const snapshot = pyodide.makeMemorySnapshot();
  const temporary = `${job.output}.${process.pid}.tmp`;
  fs.writeFileSync(temporary, zlib.gzipSync(snapshot, { level: 6 }));
  fs.renameSync(temporary, job.output);
  fs.writeFileSync(reportPath, JSON.stringify({ libraries, bytes: snapshot.byteLength, log }));
}

main().catch((error) => {
  process.stderr.write(`${error.stack || error}\n${log.join("\n")}\n`);
  process.exit(1);
});
