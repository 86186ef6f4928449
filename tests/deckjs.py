"""Run a module of deck/js under node: bundled by the same esbuild the build uses.

`run_with_module(module, script, *arguments)` runs `script` with the module's
exports in `deckModule.exports` (a list of modules: all their exports); the
script reads its own arguments from `process.argv.slice(1)`, as any `node -e`
script does.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ESBUILD = ROOT / "node_modules" / "esbuild"

# Takes esbuild's folder and the modules' paths (a JSON list) off the front of
# argv, bundles the modules for node (CommonJS, no platform assumptions) and
# evaluates them.
LOAD_MODULE_JS = r"""
const [esbuildPath, modulePaths] = process.argv.splice(1, 2);
const esbuild = require(esbuildPath);
const entry = JSON.parse(modulePaths).map((path) => `export * from ${JSON.stringify(path)};`).join('\n');
const bundle = esbuild.buildSync({stdin: {contents: entry, resolveDir: process.cwd(), sourcefile: 'modulos.js'},
                                  bundle: true, write: false, format: 'cjs', platform: 'neutral', logLevel: 'silent'});
const deckModule = {exports: {}};
new Function('module', 'exports', bundle.outputFiles[0].text)(deckModule, deckModule.exports);
"""


def run_with_module(module: Path | list[Path], script: str, *arguments: str, input: str | None = None,
                    timeout: float = 120) -> subprocess.CompletedProcess:
    """`script` under node with `module` (a file of deck/js, or several) loaded; its output as text."""
    modules = module if isinstance(module, list) else [module]
    node = shutil.which("node")
    if node is None or not ESBUILD.is_dir():
        pytest.fail(f"hacen falta node y node_modules/esbuild para probar {', '.join(path.name for path in modules)}: "
                    "«python3 build.py test» los instala")
    paths = json.dumps([str(path) for path in modules])
    return subprocess.run([node, "-e", LOAD_MODULE_JS + script, str(ESBUILD), paths, *arguments],
                          input=input, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


# A stand-in for the origin's private file system (OPFS): folders and files by
# name, NotFoundError for what is not there (TypeMismatchError for a folder
# asked for as a file), removeEntry, synchronous access handles that
# read a file's bytes (and write them in place when opened without a mode),
# and writable streams that replace them when closed (`withoutWritable`: none,
# as in Safari before 26). It records what is asked of it, and can be told to
# fail a write.
#
# A stand-in for IndexedDB: one database of object stores holding values by
# key, with requests and transactions that answer on a later turn of the
# event loop, as the real one does (`failOpen`: opening it fails).
#
# fakeWorkerScope({storage, indexedDB, subtle}) is the worker's global as
# devicestore.js reads it: navigator.storage, FileSystemFileHandle (with
# synchronous access handles) where there is a storage, indexedDB, and
# crypto (without crypto.subtle when `subtle` is false, as on an insecure page).
FAKE_STORAGE_JS = r"""
function fakeStorage(files = {}, {failWrite = false, withoutWritable = false, silentOpens = 0, lockedOpens = 0} = {}) {
  // silentOpens: the first openings never answer (as Chromium's, at times, right after another worker ended);
  // lockedOpens: the next ones fail as a file another handle locks.
  const log = [];
  let opens = 0;
  const notFound = (name) => Object.assign(new Error(`${name} no existe`), {name: 'NotFoundError'});
  const fileHandle = (path) => {
    const handle = {
      createSyncAccessHandle: async (options) => {
        log.push(['open', path, options]);
        opens += 1;
        if (opens <= silentOpens) return new Promise(() => {});
        if (opens <= silentOpens + lockedOpens) throw Object.assign(new Error('bloqueado'), {name: 'NoModificationAllowedError'});
        let bytes = files[path] || new Uint8Array(0);
        return {
          getSize: () => bytes.byteLength,
          read: (target, {at}) => { const part = bytes.subarray(at, at + target.byteLength); target.set(part); return part.byteLength; },
          truncate: (size) => { bytes = bytes.slice(0, size); },
          write: (data, {at}) => {
            if (failWrite) throw new Error('sin espacio');
            const grown = new Uint8Array(Math.max(bytes.byteLength, at + data.byteLength));
            grown.set(bytes);
            grown.set(data, at);
            bytes = grown;
            return data.byteLength;
          },
          flush: () => { files[path] = Buffer.from(bytes); log.push(['flushed', path]); },
          close: () => log.push(['close', path]),
        };
      },
    };
    if (!withoutWritable) {
      handle.createWritable = async () => {
        const chunks = [];
        return {
          write: async (data) => { if (failWrite) throw new Error('sin espacio'); chunks.push(Uint8Array.from(data)); },
          close: async () => { files[path] = Buffer.concat(chunks); log.push(['written', path]); },
          abort: async () => log.push(['aborted', path]),
        };
      };
    }
    return handle;
  };
  const isFolder = (path) => Object.keys(files).some((key) => key.startsWith(path + '/'));
  const folder = (prefix) => ({
    getDirectoryHandle: async (name, {create = false} = {}) => {
      const path = prefix + name + '/';
      if (!create && !Object.keys(files).some((key) => key.startsWith(path))) throw notFound(name);
      return folder(path);
    },
    getFileHandle: async (name, {create = false} = {}) => {
      const path = prefix + name;
      // As the browser: a folder of that name is not a file, created or not.
      if (isFolder(path)) throw Object.assign(new Error(`${name} es una carpeta`), {name: 'TypeMismatchError'});
      if (!(path in files) && !create) throw notFound(name);
      return fileHandle(path);
    },
    removeEntry: async (name, {recursive = false} = {}) => {
      const path = prefix + name;
      const inside = Object.keys(files).filter((key) => key.startsWith(path + '/'));
      if (!(path in files) && !inside.length) throw notFound(name);
      if (inside.length && !recursive) throw Object.assign(new Error('no vacía'), {name: 'InvalidModificationError'});
      for (const key of [path, ...inside]) delete files[key];
      log.push(['removed', path]);
    },
  });
  return {storage: {getDirectory: async () => folder('')}, files, log};
}

function fakeIndexedDB(records = {}, {failOpen = false} = {}) {
  const log = [];
  const later = (action) => setTimeout(action, 0);
  const request = (produce) => {
    const asked = {};
    later(() => {
      try { asked.result = produce(); if (asked.onsuccess) asked.onsuccess(); }
      catch (error) { asked.error = error; if (asked.onerror) asked.onerror(); }
    });
    return asked;
  };
  const stores = {};
  const database = {
    createObjectStore: (name) => { stores[name] = records; log.push(['created', name]); },
    transaction: (name, mode) => {
      const transaction = {};
      const store = {
        get: (key) => { log.push(['get', name, key]); return request(() => stores[name][key]); },
        put: (value, key) => {
          log.push(['put', name, key, mode]);
          return request(() => { stores[name][key] = value instanceof ArrayBuffer ? value.slice(0) : value; });
        },
      };
      transaction.objectStore = () => store;
      transaction.commit = () => log.push(['commit', name, mode]);
      later(() => later(() => transaction.oncomplete && transaction.oncomplete()));
      return transaction;
    },
  };
  const indexedDB = {
    open: (name, version) => {
      log.push(['open', name, version]);
      const asked = {};
      later(() => {
        if (failOpen) { asked.error = new Error('sin IndexedDB'); asked.onerror(); return; }
        asked.result = database;
        if (!(name in stores) && !Object.keys(stores).length && asked.onupgradeneeded) asked.onupgradeneeded();
        asked.onsuccess();
      });
      return asked;
    },
  };
  return {indexedDB, records, log};
}

function fakeWorkerScope({storage, indexedDB, subtle = true} = {}) {
  const scope = {navigator: {storage}, indexedDB, crypto: subtle ? globalThis.crypto : {}};
  if (storage) {
    scope.FileSystemFileHandle = function FileSystemFileHandle() {};
    scope.FileSystemFileHandle.prototype.createSyncAccessHandle = function () {};
  }
  return scope;
}
"""
