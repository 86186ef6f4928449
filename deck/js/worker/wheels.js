// The wheels the boot installs (numpy, matplotlib and what they need), unpacked
// by the worker itself rather than by Pyodide's loadPackage: Pyodide extracts
// each file in Python, compiled to WebAssembly, which costs the boot half a
// second; here the browser's own inflater does it while the interpreter is
// still starting, and the files are then written into site-packages at once.
// The result is what loadPackage leaves: the same files in the same place,
// and every extension module (.so) loaded before anything imports it.
//
// A wheel is a ZIP archive (PEP 427): entries are found through the central
// directory at the end of the file (APPNOTE.TXT 4.3.12 and 4.3.16), each one
// stored or deflated (methods 0 and 8; the only two wheels use).

const END_OF_DIRECTORY = 0x06054b50;
const DIRECTORY_ENTRY = 0x02014b50;
const LOCAL_HEADER = 0x04034b50;
const END_OF_DIRECTORY_SIZE = 22;
// The archive comment that may follow the end record is at most this long.
const MAX_COMMENT = 0xffff;
const METHOD = { STORED: 0, DEFLATED: 8 };

// Pyodide's own rule (pyodide/_package_loader.py): a file whose name ends in
// .so, or .so with version numbers, is a library to load.
const DYNLIB = /\.so(\.\d+)*$/;

class WheelError extends Error {
  constructor(wheelName, message) {
    super(`${wheelName}: ${message}`);
    this.name = "WheelError";
  }
}

function findEndOfDirectory(view, wheelName) {
  const last = view.byteLength - END_OF_DIRECTORY_SIZE;
  for (let offset = last; offset >= Math.max(0, last - MAX_COMMENT); offset -= 1) {
    if (view.getUint32(offset, true) === END_OF_DIRECTORY) return offset;
  }
  throw new WheelError(wheelName, "no es un archivo ZIP (falta el final del directorio central)");
}

/**
 * The entries of a ZIP archive: [{path, method, size, compressedSize, dataOffset}].
 * Paths are checked to stay inside the folder they are unpacked into.
 */
export function listEntries(bytes, wheelName) {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const end = findEndOfDirectory(view, wheelName);
  const count = view.getUint16(end + 10, true);
  let offset = view.getUint32(end + 16, true);
  const decoder = new TextDecoder();
  const entries = [];
  for (let index = 0; index < count; index += 1) {
    if (view.getUint32(offset, true) !== DIRECTORY_ENTRY) {
      throw new WheelError(wheelName, `directorio central dañado en el byte ${offset}`);
    }
    const method = view.getUint16(offset + 10, true);
    const compressedSize = view.getUint32(offset + 20, true);
    const size = view.getUint32(offset + 24, true);
    const nameLength = view.getUint16(offset + 28, true);
    const extraLength = view.getUint16(offset + 30, true);
    const commentLength = view.getUint16(offset + 32, true);
    const localOffset = view.getUint32(offset + 42, true);
    const path = decoder.decode(bytes.subarray(offset + 46, offset + 46 + nameLength));
    offset += 46 + nameLength + extraLength + commentLength;
    if (path.startsWith("/") || path.split("/").includes("..")) {
      throw new WheelError(wheelName, `ruta fuera del paquete: ${path}`);
    }
    if (view.getUint32(localOffset, true) !== LOCAL_HEADER) {
      throw new WheelError(wheelName, `cabecera local dañada para ${path}`);
    }
    if (method !== METHOD.STORED && method !== METHOD.DEFLATED) {
      throw new WheelError(wheelName, `método de compresión ${method} no admitido (${path})`);
    }
    const dataOffset = localOffset + 30 + view.getUint16(localOffset + 26, true) + view.getUint16(localOffset + 28, true);
    entries.push({ path, method, size, compressedSize, dataOffset });
  }
  return entries;
}

async function inflate(compressed) {
  const stream = new DecompressionStream("deflate-raw");
  const writer = stream.writable.getWriter();
  writer.write(compressed).catch(() => {});
  writer.close().catch(() => {});
  return new Uint8Array(await new Response(stream.readable).arrayBuffer());
}

async function readEntry(bytes, entry, wheelName) {
  const raw = bytes.subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize);
  let data;
  try {
    data = entry.method === METHOD.STORED ? raw.slice() : await inflate(raw);
  } catch (error) {
    throw new WheelError(wheelName, `${entry.path} no se puede descomprimir (${error.message})`);
  }
  if (data.byteLength !== entry.size) {
    throw new WheelError(wheelName, `${entry.path} mide ${data.byteLength} bytes y el índice dice ${entry.size}`);
  }
  return data;
}

/**
 * Every file of a wheel, inflated: {name, files: [{path, data}], dynlibs: [path]}
 * (paths relative to site-packages, libraries in the archive's order, as
 * Pyodide loads them). The libraries are inflated first, and
 * `onLibraries(files)` is called with them ([{path, data}]) as soon as they
 * are: a snapshot's restore needs only them (snapshot.js).
 */
export async function unpackWheel(bytes, wheelName, { onLibraries = () => {} } = {}) {
  const entries = listEntries(bytes, wheelName).filter((entry) => !entry.path.endsWith("/"));
  const isLibrary = (entry) => DYNLIB.test(entry.path);
  // One entry at a time (the wheels themselves go side by side): a thousand
  // inflaters open at once took Chromium twice as long as a few.
  const contents = new Map();
  for (const entry of entries.filter(isLibrary)) contents.set(entry, await readEntry(bytes, entry, wheelName));
  onLibraries(entries.filter(isLibrary).map((entry) => ({ path: entry.path, data: contents.get(entry) })));
  for (const entry of entries.filter((entry) => !isLibrary(entry))) {
    contents.set(entry, await readEntry(bytes, entry, wheelName));
  }
  return {
    name: wheelName,
    files: entries.map((entry) => ({ path: entry.path, data: contents.get(entry) })),
    dynlibs: entries.filter(isLibrary).map((entry) => entry.path),
  };
}

// What Pyodide's loadPackage records for a package from its own lock file.
const DEFAULT_CHANNEL = "default channel";

/**
 * Writes unpacked wheels into site-packages and loads their libraries, as
 * Pyodide's loadPackage would (each library local to its module, found next
 * to the package's own `<name>.libs` folder), and records the lock's packages
 * among them as loaded: a cell's loadPackage or micropip then finds them there.
 * `loadLibraries: false` only writes the files: a restored snapshot placed its
 * libraries already (snapshot.js). `recordPackages: false` leaves
 * loadedPackages as it was: a snapshot is refused if it changed.
 */
export async function installWheels(pyodide, wheels, sitePackages, { loadLibraries = true, recordPackages = true } = {}) {
  const FS = pyodide.FS;
  const folders = new Set();
  for (const wheel of wheels) {
    for (const { path, data } of wheel.files) {
      const folder = `${sitePackages}/${path}`.replace(/\/[^/]*$/, "");
      if (!folders.has(folder)) {
        FS.mkdirTree(folder);
        folders.add(folder);
      }
      FS.writeFile(`${sitePackages}/${path}`, data, { canOwn: true });
    }
  }
  for (const wheel of loadLibraries ? wheels : []) {
    const libsFolder = `${sitePackages}/${wheel.name.split("-")[0]}.libs`;
    for (const path of wheel.dynlibs) {
      await pyodide._api.loadDynlib(`${sitePackages}/${path}`, false, [libsFolder]);
    }
  }
  const lockNames = new Map(
    Object.values(pyodide._api.lockfile_packages || {}).map((entry) => [entry.file_name, entry.name]),
  );
  for (const wheel of recordPackages ? wheels : []) {
    if (lockNames.has(wheel.name)) pyodide.loadedPackages[lockNames.get(wheel.name)] = DEFAULT_CHANNEL;
  }
}

// Run after files are written into site-packages: Python's finders forget
// what they listed of its folders, so an import sees the new files. Not
// importlib.invalidate_caches(): in Python 3.12 that also makes the standard
// library's zip importer read the zip's whole directory again, for a zip
// that never changes (0.1 s of a boot in Chromium). Defines
// forget_listings() in the namespace it runs in.
export const FORGET_LISTINGS_PY = `
import importlib.machinery
import sys


def forget_listings():
    for finder in list(sys.path_importer_cache.values()):
        if isinstance(finder, importlib.machinery.FileFinder):
            finder.invalidate_caches()
`;

/** Python's finders forget their folders' listings (FORGET_LISTINGS_PY), after the wheels were written. */
export function forgetListings(pyodide) {
  const namespace = pyodide.toPy({});
  try {
    pyodide.runPython(`${FORGET_LISTINGS_PY}\nforget_listings()\n`, { globals: namespace });
  } finally {
    namespace.destroy();
  }
}
