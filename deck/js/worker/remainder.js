// What a Python restored from the snapshot does not need before «Python
// listo», brought in after it: the wheels' files and the standard library's
// zip. Every module the boot imports already lives in the snapshot's memory,
// and a restore reads no file at all (measured in Chromium and under Node:
// the restore, its first cell and the warm-up cell open none); it needs
// only the libraries it places again (runtime.json's snapshot.librariesFile).
// The rest is for what comes later: the files a figure reads (matplotlib's
// fonts), the census, a module a cell imports for the first time, the
// device's copies for the next visit and for use offline.
//
// Order: the files the first figure reads (matplotlib's fonts,
// snapshot.figureFilesFile: 0.7 MB instead of matplotlib's 8.7 MB wheel) and
// the dpdeck wheel first (a cell waits for them before it runs: `cellFiles`),
// then the others and the standard library, at low priority. An import that
// needs a file still on its way never fails: the finder below fetches that
// wheel (or the zip) there and then, checks its SHA-256 and unpacks it,
// before the import goes on; the download in the background then leaves it.
// So does a font matplotlib opens (another weight, the mathematical ones)
// before its wheel is in.

import { FORGET_LISTINGS_PY, forgetListings, installWheels, unpackWheel } from "./wheels.js";
import { checkUrl } from "./netguard.js";
import { displayPath, nativeFetch } from "./downloads.js";

// The zip Pyodide is given for the standard library while the real one is on
// its way (an empty archive: the end-of-central-directory record alone). A
// restored Python has its directory in memory already and opens the file only
// for a module it has not imported; the finder makes that import wait.
export const EMPTY_ZIP = new Uint8Array([0x50, 0x4b, 0x05, 0x06, ...new Array(18).fill(0)]);

// Defines FilesOnTheirWay in the namespace it runs in. A wheel or the zip
// stays in `pending` until its files are written, by whichever comes first:
// the download in the background (claim()) or an import (find_spec()).
const FILES_ON_THEIR_WAY_PY = `${FORGET_LISTINGS_PY}
import hashlib
import io
import os
import sys
import types
import zipfile

import js


class FilesOnTheirWay:
    """Una importación que necesita archivos que aún no han llegado los pide en el acto y los espera."""

    def __init__(self, archives, site_packages):
        self.pending = {archive["file"]: archive for archive in archives}
        self.site_packages = site_packages

    def claim(self, file):
        """Si el archivo sigue pendiente: deja de estarlo y quien lo pide escribe su contenido."""
        return self.pending.pop(file, None) is not None

    def find_spec(self, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        for archive in list(self.pending.values()):
            if top in archive["imports"]:
                self.fetch(archive)
        return None  # the regular finders find the module now

    def wait_for_file(self, path):
        """Un archivo de un paquete que aún no ha llegado (una fuente de matplotlib) se pide en el acto y se espera."""
        prefix = self.site_packages.rstrip("/") + "/"
        if not path.startswith(prefix) or os.path.exists(path):
            return
        top = path[len(prefix):].partition("/")[0]
        for archive in list(self.pending.values()):
            if top in archive["imports"]:
                self.fetch(archive)

    def fetch(self, archive):
        request = js.XMLHttpRequest.new()
        request.open("GET", archive["url"], False)
        request.responseType = "arraybuffer"
        try:
            request.send(None)
        except Exception as error:
            raise ImportError(f"no llegó {archive['file']}, que esta importación necesita ({error})") from None
        if request.status != 200:
            raise ImportError(f"no llegó {archive['file']} (HTTP {request.status}), que esta importación necesita")
        data = request.response.to_bytes()
        if hashlib.sha256(data).hexdigest() != archive["sha256"]:
            raise ImportError(f"{archive['file']} llegó dañado o no es el de esta versión (SHA-256)")
        if not self.claim(archive["file"]):
            return
        if archive.get("target"):
            with open(archive["target"], "wb") as copy:
                copy.write(data)
        else:
            with zipfile.ZipFile(io.BytesIO(data)) as wheel:
                wheel.extractall(self.site_packages)
        forget_listings()


class Standing(types.ModuleType):
    """Un módulo que responde como otro, salvo por lo que se le asigne."""

    def __init__(self, real):
        super().__init__(real.__name__)
        self.__dict__["_real"] = real

    def __getattr__(self, name):
        return getattr(self.__dict__["_real"], name)


def wait_for_fonts(finder):
    """Las fuentes de matplotlib que aún no han llegado se esperan, en vez de darse por perdidas.

    font_manager comprueba con os.path.isfile la fuente que elige (si falta,
    reconstruye su lista con las que hay y se queda sin las demás) y la abre
    con ft2font.FT2Font: en ese módulo, y solo en él, ambos esperan antes al
    archivo.
    """
    font_manager = sys.modules.get("matplotlib.font_manager")
    if font_manager is None:
        return

    def wait(path):
        if isinstance(path, (str, os.PathLike)):
            finder.wait_for_file(os.fspath(path))

    def isfile(path):
        wait(path)
        return os.path.isfile(path)

    def open_font(filename, *args, **kwargs):
        wait(filename)
        return ft2font.FT2Font(filename, *args, **kwargs)

    ft2font = font_manager.ft2font
    paths = Standing(os.path)
    paths.isfile = isfile
    waiting_os = Standing(os)
    waiting_os.path = paths
    waiting_ft2font = Standing(ft2font)
    waiting_ft2font.FT2Font = open_font
    font_manager.os = waiting_os
    font_manager.ft2font = waiting_ft2font


def install_files_on_their_way(archives, site_packages):
    finder = FilesOnTheirWay(archives, site_packages)
    sys.meta_path.insert(0, finder)
    wait_for_fonts(finder)
    return finder
`;

/**
 * Installs the finder for `archives` ([{file, url, sha256, imports, target?}]:
 * wheels unpacked into site-packages, or a file written whole at `target`)
 * and returns it (a PyProxy with claim(file)).
 */
export function installFilesOnTheirWay(pyodide, archives, sitePackages) {
  const namespace = pyodide.toPy({});
  try {
    pyodide.runPython(FILES_ON_THEIR_WAY_PY, { globals: namespace });
    const install = namespace.get("install_files_on_their_way");
    const list = pyodide.toPy(archives);
    try {
      return install(list, sitePackages);
    } finally {
      list.destroy();
      install.destroy();
    }
  } finally {
    namespace.destroy();
  }
}

async function download(url, integrity, priority) {
  const checked = checkUrl(url);
  let response;
  try {
    response = await nativeFetch(checked.href, { integrity, priority });
  } catch (error) {
    throw new Error(`No llegó ${displayPath(checked)}: ${error.message}`);
  }
  if (!response.ok) throw new Error(`No llegó ${displayPath(checked)}: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/**
 * Brings the remainder in after «Python listo» and writes it where Python
 * looks for it. `wheels`: [{file, integrity, url, forCells, kept}] in order
 * (`kept`: the wheel unpacked from the device's copy, packagecopy.js, or
 * null); `stdlib`: {file, integrity, url, target} or null. `finder` is
 * installFilesOnTheirWay's. `figureFiles`: {file, url, integrity} of the
 * zip of files the first figure reads, or null (written already); one that
 * does not arrive holds no cell up: a figure then fetches its fonts with
 * matplotlib's wheel (wait_for_fonts). Returns {cellFiles, all}: promises of
 * what cells wait for, and of every wheel unpacked, in order.
 */
export function bringRemainder({ pyodide, sitePackages, wheels, stdlib, finder, figureFiles = null }) {
  const install = async (file, unpacked, canOwn) => {
    if (!finder.claim(file)) return;
    await installWheels(pyodide, [unpacked], sitePackages, { loadLibraries: false, canOwn });
    forgetListings(pyodide);
  };
  const bring = async (wheel, priority) => {
    if (wheel.kept) {
      await install(wheel.file, wheel.kept, true);
      return wheel.kept;
    }
    const name = wheel.url.pathname.slice(wheel.url.pathname.lastIndexOf("/") + 1);
    const unpacked = await unpackWheel(await download(wheel.url, wheel.integrity, priority), name);
    // Python's file system gets copies: these files may yet be kept on the device (packagecopy.js).
    await install(wheel.file, unpacked, false);
    return unpacked;
  };
  const forCells = wheels.map((wheel) => (wheel.forCells ? bring(wheel, "high") : null));
  const figures = figureFiles
    ? download(figureFiles.url, figureFiles.integrity, "high")
        .then((bytes) => unpackWheel(bytes, displayPath(figureFiles.url)))
        .then((unpacked) => installWheels(pyodide, [unpacked], sitePackages, { loadLibraries: false, recordPackages: false }))
        .catch((error) => {
          console.warn(`dpdeck: ${error.message}; una figura pedirá sus fuentes con matplotlib`);
        })
    : null;
  const cellFiles = Promise.all([...forCells.filter(Boolean), figures]);
  const all = cellFiles
    .catch(() => {})
    .then(() => {
      const everyWheel = wheels.map((wheel, index) => forCells[index] || bring(wheel, "low"));
      const library = stdlib
        ? download(stdlib.url, stdlib.integrity, "low").then((bytes) => {
            if (finder.claim(stdlib.file)) pyodide.FS.writeFile(stdlib.target, bytes, { canOwn: true });
          })
        : null;
      return Promise.all([Promise.all(everyWheel), library]).then(([unpacked]) => unpacked);
    });
  cellFiles.catch(() => {});
  all.catch(() => {});
  return { cellFiles, all };
}
