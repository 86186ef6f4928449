"""Run a module of deck/js under node: bundled by the same esbuild the build uses.

`run_with_module(module, script, *arguments)` runs `script` with the module's
exports in `deckModule.exports`; the script reads its own arguments from
`process.argv.slice(1)`, as any `node -e` script does.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ESBUILD = ROOT / "node_modules" / "esbuild"

# Takes esbuild's folder and the module's path off the front of argv, bundles the
# module for node (CommonJS, no platform assumptions) and evaluates it.
LOAD_MODULE_JS = r"""
const [esbuildPath, modulePath] = process.argv.splice(1, 2);
const esbuild = require(esbuildPath);
const bundle = esbuild.buildSync({entryPoints: [modulePath], bundle: true, write: false, format: 'cjs',
                                  platform: 'neutral', logLevel: 'silent'});
const deckModule = {exports: {}};
new Function('module', 'exports', bundle.outputFiles[0].text)(deckModule, deckModule.exports);
"""


def run_with_module(module: Path, script: str, *arguments: str, input: str | None = None,
                    timeout: float = 120) -> subprocess.CompletedProcess:
    """`script` under node with `module` (a file of deck/js) loaded; its output as text."""
    node = shutil.which("node")
    if node is None or not ESBUILD.is_dir():
        pytest.fail(f"hacen falta node y node_modules/esbuild para probar {module.name}: "
                    "«python3 build.py test» los instala")
    return subprocess.run([node, "-e", LOAD_MODULE_JS + script, str(ESBUILD), str(module), *arguments],
                          input=input, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


# A stand-in for the origin's private file system (OPFS): folders and files by
# name, NotFoundError for what is not there (TypeMismatchError for a folder asked
# for as a file), removeEntry, synchronous access handles that
# read a file's bytes and writable streams that replace them when closed.
# It records what is asked of it, and can be told to fail a write.
FAKE_STORAGE_JS = r"""
function fakeStorage(files = {}, {failWrite = false} = {}) {
  const log = [];
  const notFound = (name) => Object.assign(new Error(`${name} no existe`), {name: 'NotFoundError'});
  const fileHandle = (path) => ({
    createSyncAccessHandle: async (options) => {
      log.push(['open', path, options]);
      const bytes = files[path];
      return {
        getSize: () => bytes.byteLength,
        read: (target, {at}) => { const part = bytes.subarray(at, at + target.byteLength); target.set(part); return part.byteLength; },
        close: () => log.push(['close', path]),
      };
    },
    createWritable: async () => {
      const chunks = [];
      return {
        write: async (data) => { if (failWrite) throw new Error('sin espacio'); chunks.push(Uint8Array.from(data)); },
        close: async () => { files[path] = Buffer.concat(chunks); log.push(['written', path]); },
        abort: async () => log.push(['aborted', path]),
      };
    },
  });
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
"""
