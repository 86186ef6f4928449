"""Pruebas de deck/js/worker/snapshot.js: restoring Python's memory snapshot, run in node.

The real restore runs in the browser tests (test_boot.py); here each part
runs against a stand-in for Emscripten's module that records what it is
asked: where each library is placed, in which order, what is freed, and
what happens when something is missing or the table of functions comes out
unlike the build's. Inflating is checked against Python's gzip and hashlib,
the independent references. The device's copy goes through devicestore.js
over a stand-in for the private file system (deckjs.FAKE_STORAGE_JS).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
from pathlib import Path

import pytest

from deckjs import FAKE_STORAGE_JS, run_with_module

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOT_JS = ROOT / "deck" / "js" / "worker" / "snapshot.js"
DEVICESTORE_JS = ROOT / "deck" / "js" / "worker" / "devicestore.js"
FUNCTIONTABLE_JS = ROOT / "deck" / "js" / "worker" / "functiontable.js"

# A stand-in for Emscripten's module: a small heap, calloc/free that record,
# and loadWebAssemblyModule that, like Emscripten's, reads a handle whose
# «placed» byte is set and otherwise places the library itself (at made-up
# addresses, 25 slots of table each) and writes where into the handle; each
# library loaded grows the table and adds one entry to the linker's global
# offset table (GOT).
FAKE_MODULE_JS = r"""
function fakeModule(needed = {}) {
  const heap = new ArrayBuffer(4096);
  const Module = {
    HEAPU8: new Uint8Array(heap), HEAPU32: new Uint32Array(heap),
    calls: [], freed: [], next: 1,
    LDSO: {loadedLibsByName: {}},
    PATH: {basename: (path) => path.slice(path.lastIndexOf('/') + 1)},
    FS: {readFile: (path) => new TextEncoder().encode(path)},
    getDylinkMetadata: (bytes) => ({neededDynlibs: needed[new TextDecoder().decode(bytes)] || []}),
    _calloc: (size, count) => { Module.HEAPU8.fill(0, 64, 64 + size * count); return 64; },
    _free: (pointer) => Module.freed.push(pointer),
    newDSO: (name, handle, exports) => { const dso = {name, exports}; Module.LDSO.loadedLibsByName[name] = dso; return dso; },
    loadWebAssemblyModule: async (bytes, flags, path, localScope, handle) => {
      const placed = Module.HEAPU8[handle + 8];
      if (!placed) {
        Module.HEAPU8[handle + 8] = 1;
        Module.HEAPU32[(handle + 12) >> 2] = 1000 * Module.next;
        Module.HEAPU32[(handle + 20) >> 2] = 50 * Module.next;
        Module.HEAPU32[(handle + 24) >> 2] = 25;
        Module.next += 1;
      }
      Module.calls.push({path, placed, bytes: new TextDecoder().decode(bytes), flags,
                         memoryBase: Module.HEAPU32[(handle + 12) >> 2], tableBase: Module.HEAPU32[(handle + 20) >> 2]});
      Module.wasmTable.length = Math.max(Module.wasmTable.length, Module.HEAPU32[(handle + 20) >> 2] + 25);
      Module.GOT[path] = {value: Module.HEAPU32[(handle + 12) >> 2]};
      return {exported: path};
    },
    wasmTable: {length: 10},
    GOT: {},
  };
  return Module;
}
const print = (value) => process.stdout.write(JSON.stringify(value));
const describe = (error) => `${error.name}: ${error.message}`;
"""

LIBRARIES = [
    {"file": "numpy/_core/_multiarray_umath.so", "path": "/sp/numpy/_core/_multiarray_umath.so",
     "memoryBase": 123456, "tableBase": 4321},
    {"file": "matplotlib/_path.so", "path": "/sp/matplotlib/_path.so", "memoryBase": 654321, "tableBase": 9876},
]


def run_snapshot_js(script: str, *arguments: str):
    result = run_with_module([SNAPSHOT_JS, DEVICESTORE_JS, FUNCTIONTABLE_JS], FAKE_MODULE_JS + script, *arguments)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


PLACE_JS = r"""
const {placeLibraries} = deckModule.exports;
const [libraries, available] = process.argv.slice(1).map(JSON.parse);
const Module = fakeModule();
placeLibraries(Module, libraries, (file) => available.includes(file) ? new TextEncoder().encode(file) : undefined)
  .then(() => null, describe)
  .then((error) => print({error, calls: Module.calls, freed: Module.freed,
                          names: Object.fromEntries(Object.entries(Module.LDSO.loadedLibsByName).map(([k, v]) => [k, v.name]))}));
"""


def test_libraries_are_placed_again_where_the_snapshot_had_them_in_its_order():
    run = run_snapshot_js(PLACE_JS, json.dumps(LIBRARIES), json.dumps([entry["file"] for entry in LIBRARIES]))
    assert run["error"] is None
    assert [(call["path"], call["placed"], call["memoryBase"], call["tableBase"], call["bytes"]) for call in run["calls"]] == [
        (entry["path"], 1, entry["memoryBase"], entry["tableBase"], entry["file"]) for entry in LIBRARIES]
    # Loaded as Pyodide's loadDynlib loads them: kept for good, undefined symbols allowed, found by path and name.
    assert all(call["flags"] == {"loadAsync": True, "nodelete": True, "allowUndefined": True} for call in run["calls"])
    assert run["names"] == {"/sp/numpy/_core/_multiarray_umath.so": "/sp/numpy/_core/_multiarray_umath.so",
                            "_multiarray_umath.so": "/sp/numpy/_core/_multiarray_umath.so",
                            "/sp/matplotlib/_path.so": "/sp/matplotlib/_path.so",
                            "_path.so": "/sp/matplotlib/_path.so"}
    assert run["freed"] == [64]


def test_a_library_the_wheels_lack_stops_the_restore_naming_it():
    run = run_snapshot_js(PLACE_JS, json.dumps(LIBRARIES), json.dumps([LIBRARIES[0]["file"]]))
    assert run["error"] == "SnapshotError: falta matplotlib/_path.so, que la instantánea necesita"
    assert [call["path"] for call in run["calls"]] == [LIBRARIES[0]["path"]]
    assert run["freed"] == [64]


RECORD_JS = r"""
const {loadRecordingLibraries} = deckModule.exports;
const [wheels, needed] = process.argv.slice(1).map(JSON.parse);
const Module = fakeModule(needed);
loadRecordingLibraries({_module: Module}, wheels, '/sp')
  .then((libraries) => print({libraries, calls: Module.calls, freed: Module.freed}),
        (error) => print({error: describe(error), calls: Module.calls, freed: Module.freed}));
"""

WHEELS = [{"name": "numpy-2.0.2.whl", "dynlibs": ["numpy/a.so", "numpy/b.so"]},
          {"name": "puro-1.0.whl", "dynlibs": []},
          {"name": "matplotlib-3.8.4.whl", "dynlibs": ["matplotlib/c.so"]}]


def test_taking_a_snapshot_records_where_each_library_went_in_load_order():
    run = run_snapshot_js(RECORD_JS, json.dumps(WHEELS), "{}")
    assert run["libraries"] == [
        {"file": "numpy/a.so", "path": "/sp/numpy/a.so", "memoryBase": 1000, "tableBase": 50, "tableSize": 25},
        {"file": "numpy/b.so", "path": "/sp/numpy/b.so", "memoryBase": 2000, "tableBase": 100, "tableSize": 25},
        {"file": "matplotlib/c.so", "path": "/sp/matplotlib/c.so", "memoryBase": 3000, "tableBase": 150, "tableSize": 25},
    ]
    # Each one a first load (the handle cleared each time), read from site-packages.
    assert [(call["placed"], call["bytes"]) for call in run["calls"]] == [
        (0, "/sp/numpy/a.so"), (0, "/sp/numpy/b.so"), (0, "/sp/matplotlib/c.so")]
    assert run["freed"] == [64]


def test_a_library_that_needs_another_cannot_be_snapshotted():
    run = run_snapshot_js(RECORD_JS, json.dumps(WHEELS), json.dumps({"/sp/numpy/b.so": ["libopenblas.so"]}))
    assert run["error"] == "SnapshotError: numpy/b.so necesita libopenblas.so: no se puede restaurar"
    assert run["freed"] == [64]


INFLATE_JS = r"""
const fs = require('node:fs');
const {inflateSnapshot} = deckModule.exports;
const [path, size] = process.argv.slice(1);
const target = new Uint8Array(Number(size));
inflateSnapshot(new Blob([fs.readFileSync(path)]).stream(), target)
  .then(() => print({hex: Buffer.from(target).toString('hex')}), (error) => print({error: describe(error)}));
"""

MEMORY = bytes(range(256)) * 300 + bytes(50_000) + b"fin"


def inflate(tmp_path: Path, shipped: bytes, size: int) -> dict:
    (tmp_path / "instantanea.bin").write_bytes(shipped)
    return run_snapshot_js(INFLATE_JS, str(tmp_path / "instantanea.bin"), str(size))


def test_the_snapshot_inflates_into_a_buffer_of_its_size(tmp_path):
    assert bytes.fromhex(inflate(tmp_path, gzip.compress(MEMORY), len(MEMORY))["hex"]) == MEMORY


@pytest.mark.parametrize(("shipped", "size", "message"), [
    (gzip.compress(MEMORY), len(MEMORY) + 1, f"la instantánea mide {len(MEMORY)} bytes y se esperaban {len(MEMORY) + 1}"),
    (gzip.compress(MEMORY), len(MEMORY) - 1, f"la instantánea mide más de los {len(MEMORY) - 1} bytes esperados"),
])
def test_a_snapshot_of_another_size_is_refused(tmp_path, shipped, size, message):
    assert inflate(tmp_path, shipped, size) == {"error": f"SnapshotError: {message}"}


@pytest.mark.parametrize("shipped", [gzip.compress(MEMORY)[:-100], MEMORY], ids=["cortada", "sin-comprimir"])
def test_a_truncated_or_uncompressed_snapshot_is_an_error_not_a_wrong_memory(tmp_path, shipped):
    run = inflate(tmp_path, shipped, len(MEMORY))
    assert "error" in run and "hex" not in run


INTEGRITY_JS = r"""
const fs = require('node:fs');
const {computeIntegrity} = deckModule.exports;
computeIntegrity(new Uint8Array(fs.readFileSync(process.argv[1]))).then((integrity) => print({integrity}));
"""


def test_the_integrity_is_the_subresource_integrity_of_the_file(tmp_path):
    path = tmp_path / "instantanea.bin"
    path.write_bytes(gzip.compress(MEMORY))
    expected = "sha256-" + base64.b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()
    assert run_snapshot_js(INTEGRITY_JS, str(path)) == {"integrity": expected}


RESTORE_JS = r"""
const {restorePyodide, describeFunctionTable} = deckModule.exports;
const [failPlacing, table] = process.argv.slice(1).map(JSON.parse);
const events = [];
const Module = fakeModule();
const original = async (settings) => { events.push(['module', settings.marker]); return Module; };
const scope = {_createPyodideModule: original};
let fill;
const ready = new Promise((resolve) => { fill = resolve; });
const snapshot = new Uint8Array(8);
const loadPyodide = async (options) => {
  events.push(['loadPyodide', options._loadSnapshot === snapshot, options.indexURL]);
  const created = await scope._createPyodideModule({marker: 'ajustes'});
  events.push(['restore', created === Module, Module.calls.map((call) => call.path)]);
  return {pyodide: true};
};
setTimeout(() => { events.push(['filled']); fill(); }, 50);
restorePyodide({scope, loadPyodide, options: {indexURL: '/pyodide/'}, snapshot, ready,
                readLibraries: Promise.resolve((file) => failPlacing ? undefined : new TextEncoder().encode(file)),
                libraries: [{file: 'a.so', path: '/sp/a.so', memoryBase: 10, tableBase: 2, tableSize: 25}],
                table: table === 'como-se-construyo' ? describeFunctionTable(expectedModule()) : table})
  .then((restored) => ({pyodide: restored.pyodide, timings: Object.keys(restored.timings).sort()}),
        (error) => ({error: describe(error), unfit: error.unfit, found: error.found}))
  .then((outcome) => print({outcome, events, restoredScope: scope._createPyodideModule === original}));

// The table the build recorded: the same library placed, the same way.
function expectedModule() {
  const built = fakeModule();
  built.wasmTable.length = 27;
  built.GOT['/sp/a.so'] = {value: 10};
  return built;
}
"""


def run_restore(fail_placing: bool, table="como-se-construyo") -> dict:
    return run_snapshot_js(RESTORE_JS, json.dumps(fail_placing), json.dumps(table))


def test_the_restore_places_the_libraries_after_the_snapshot_arrives_and_before_the_memory():
    run = run_restore(False)
    assert run["events"] == [["loadPyodide", True, "/pyodide/"], ["module", "ajustes"], ["filled"],
                             ["restore", True, ["/sp/a.so"]]]
    assert run["outcome"] == {"pyodide": {"pyodide": True},
                              "timings": ["libraries", "module", "tableCheck", "tableMatched", "waited"]}
    assert run["restoredScope"] is True


def test_a_failed_restore_leaves_pyodide_as_it_was_for_a_normal_boot():
    run = run_restore(True)
    assert run["outcome"]["error"] == "SnapshotError: falta a.so, que la instantánea necesita"
    assert not run["outcome"]["unfit"]
    assert run["restoredScope"] is True


@pytest.mark.parametrize("table", [{"length": 28, "got": None}, {"length": 27, "got": "1:00000000"}],
                         ids=["longitud", "got"])
def test_a_table_unlike_the_build_s_stops_the_restore_before_the_memory_is_used(table):
    built = run_restore(False)
    recorded = run_restore(False, {"length": 27, "got": "x"})["outcome"]["found"]
    assert recorded["length"] == 27
    table = {**recorded, **{key: value for key, value in table.items() if value is not None}}
    run = run_restore(False, table)
    assert run["outcome"]["error"].startswith("SnapshotError: la tabla de funciones de este navegador no es la de")
    assert run["outcome"]["unfit"] is True and run["outcome"]["found"] == recorded
    # Pyodide never got the module, so never copied the memory back; it is put back for a normal boot.
    assert ["restore", True, ["/sp/a.so"]] not in run["events"] and run["restoredScope"] is True
    assert built["outcome"]["pyodide"] == {"pyodide": True}


def test_a_runtime_json_that_does_not_describe_the_table_is_not_restored():
    run = run_restore(False, None)
    assert run["outcome"]["error"] == "SnapshotError: runtime.json no dice cómo era la tabla de funciones de la instantánea"
    assert run["events"] == [] and run["restoredScope"] is True


MAIN_DATA_JS = r"""
const {restorePyodide, describeFunctionTable, computeIntegrity, SNAPSHOT_SOURCE} = deckModule.exports;
const [source, written] = process.argv.slice(1).map(JSON.parse);
// The build's encoding (snapshot.py): 7 bytes of the interpreter's data (a word and a tail) XOR-ed out at header + address.
const data = new Uint8Array([11, 22, 33, 44, 55, 66, 77]);
const address = 16, header = 8, offset = header + address;
const decoded = new Uint8Array(48).map((_, index) => (index * 7) % 251 + 1);
const snapshot = decoded.slice();
data.forEach((byte, index) => { snapshot[offset + index] ^= byte; });
const encoded = snapshot.slice();
const memory = new WebAssembly.Memory({initial: 1});
const Module = fakeModule();
const table = describeFunctionTable(fakeModule());
// Pyodide's instantiateWasm: instantiating writes the data segment (here `written`), then the runtime starts
// and changes it (the capture must be the instantiation's bytes, not what is in memory later).
const settings = {instantiateWasm: (imports, receive) => {
  new Uint8Array(imports.env.memory.buffer).set(written, address);
  receive({exports: {}}, {});
  new Uint8Array(imports.env.memory.buffer).fill(0, address, address + written.length);
}};
const scope = {_createPyodideModule: async (given) => { given.instantiateWasm({env: {memory}}, () => {}); return Module; }};
let seen = null;
const loadPyodide = async (options) => { await scope._createPyodideModule(settings); seen = Array.from(options._loadSnapshot); return {}; };
(async () => {
  const mainData = {address, offset, size: data.length, integrity: await computeIntegrity(data)};
  const restored = await restorePyodide({scope, loadPyodide, options: {}, snapshot, ready: Promise.resolve(SNAPSHOT_SOURCE[source]),
                                         readLibraries: Promise.resolve(() => undefined), libraries: [], table, mainData});
  print({same: seen.every((byte, index) => byte === decoded[index]), unchanged: seen.every((byte, index) => byte === encoded[index]),
         timed: 'mainData' in restored.timings});
})().catch((error) => print({error: describe(error)}));
"""

INTERPRETER_DATA = [11, 22, 33, 44, 55, 66, 77]


def test_a_downloaded_snapshot_gets_the_interpreter_s_data_back_from_its_instantiation():
    run = run_snapshot_js(MAIN_DATA_JS, json.dumps("DOWNLOAD"), json.dumps(INTERPRETER_DATA))
    assert run == {"same": True, "unchanged": False, "timed": True}


def test_a_kept_copy_is_stored_decoded_and_used_as_it_is():
    run = run_snapshot_js(MAIN_DATA_JS, json.dumps("KEPT"), json.dumps(INTERPRETER_DATA))
    assert run == {"same": False, "unchanged": True, "timed": False}


def test_an_interpreter_whose_data_is_not_the_build_s_never_decodes_the_snapshot():
    run = run_snapshot_js(MAIN_DATA_JS, json.dumps("DOWNLOAD"), json.dumps([11, 22, 33, 44, 55, 66, 78]))
    assert run == {"error": "SnapshotError: los datos del intérprete no son los que la instantánea espera"}


# ----------------------------------------------------------------- the device's copy

FILL_JS = r"""
const fs = require('node:fs');
const {fillSnapshot, openKeptSnapshot, computeIntegrity, openDeviceStore, KEPT_SNAPSHOT} = deckModule.exports;
const [keptPath, downloadedPath, integrityPath, options] = process.argv.slice(1);
const {withIntegrity} = JSON.parse(options);
const downloaded = fs.readFileSync(downloadedPath);
const path = KEPT_SNAPSHOT.FILE;
const {storage, log} = fakeStorage(keptPath ? {[path]: fs.readFileSync(keptPath)} : {});
const target = new Uint8Array(downloaded.byteLength);
const marks = [];
let downloads = 0;
(async () => {
  const memoryIntegrity = withIntegrity ? await computeIntegrity(new Uint8Array(fs.readFileSync(integrityPath))) : undefined;
  const source = await fillSnapshot({
    target, kept: openKeptSnapshot(openDeviceStore(fakeWorkerScope({storage}))), memoryIntegrity,
    download: async () => { downloads += 1; target.set(downloaded); },
    mark: (name) => marks.push(name),
  });
  print({source, downloads, marks, log, same: Buffer.from(target).equals(downloaded)});
})().catch((error) => print({error: describe(error)}));
"""

KEPT_PATH = ["dpdeck-python-snapshot.bin"]


def fill(tmp_path: Path, kept: bytes | None, *, with_integrity: bool = True) -> dict:
    """Fill a buffer of MEMORY's size from a device whose copy is `kept` (None: no copy); the download gives MEMORY."""
    (tmp_path / "descarga.bin").write_bytes(MEMORY)
    (tmp_path / "construccion.bin").write_bytes(MEMORY)
    kept_path = ""
    if kept is not None:
        kept_path = str(tmp_path / "copia.bin")
        Path(kept_path).write_bytes(kept)
    return run_snapshot_js(FAKE_STORAGE_JS + FILL_JS, kept_path, str(tmp_path / "descarga.bin"),
                           str(tmp_path / "construccion.bin"), json.dumps({"withIntegrity": with_integrity}))


def test_the_device_s_copy_is_used_instead_of_a_download_when_it_is_the_build_s(tmp_path):
    run = fill(tmp_path, MEMORY)
    assert run["source"] == "kept" and run["downloads"] == 0 and run["same"] is True
    assert run["marks"] == ["keptFoundAt", "keptReadAt", "keptCheckedAt"]
    # Opened read only (two tabs may read it at once) and closed once read.
    assert run["log"] == [["open", *KEPT_PATH, {"mode": "read-only"}], ["close", *KEPT_PATH]]


@pytest.mark.parametrize("kept", [
    MEMORY[:-1] + b"X",            # the same size, another content
    MEMORY[:-1],                   # cut short
    MEMORY + b"mas",               # longer
], ids=["cambiada", "cortada", "mas-larga"])
def test_a_copy_that_is_not_the_build_s_snapshot_is_never_used(tmp_path, kept):
    run = fill(tmp_path, kept)
    assert run["source"] == "download" and run["downloads"] == 1
    assert run["same"] is True
    assert run["log"][-1] == ["close", *KEPT_PATH]


def test_without_a_copy_or_the_build_s_checksum_the_snapshot_is_downloaded(tmp_path):
    without_copy = fill(tmp_path, None)
    assert (without_copy["source"], without_copy["downloads"], without_copy["log"]) == ("download", 1, [])
    # A runtime.json without memoryIntegrity (nothing to check a copy against): the copy is left alone.
    unchecked = fill(tmp_path, MEMORY, with_integrity=False)
    assert (unchecked["source"], unchecked["downloads"]) == ("download", 1)
    assert unchecked["log"] == [["open", *KEPT_PATH, {"mode": "read-only"}], ["close", *KEPT_PATH]]


NO_STORE_JS = r"""
const {openKeptSnapshot, openDeviceStore} = deckModule.exports;
const refused = {getDirectory: async () => { throw new Error('SecurityError'); }};
Promise.all([
  openKeptSnapshot(null),
  openKeptSnapshot(Promise.resolve(null)),
  openKeptSnapshot(openDeviceStore(fakeWorkerScope({}))),
  openKeptSnapshot(openDeviceStore(fakeWorkerScope({storage: refused}))),
]).then((handles) => print(handles));
"""


def test_a_device_without_a_store_has_no_copy():
    assert run_snapshot_js(FAKE_STORAGE_JS + NO_STORE_JS) == [None, None, None, None]


KEEP_JS = r"""
const {keepSnapshot, openKeptSnapshot, openDeviceStore} = deckModule.exports;
const [failWrite] = process.argv.slice(1).map(JSON.parse);
const {storage, files, log} = fakeStorage({}, {failWrite});
const store = openDeviceStore(fakeWorkerScope({storage}));
const memory = new TextEncoder().encode('memoria de Python');
keepSnapshot(store, memory).then(async () => {
  const access = await openKeptSnapshot(store);
  const back = new Uint8Array(access.getSize());
  access.read(back, {at: 0});
  print({kept: new TextDecoder().decode(back), files: Object.keys(files), log});
}, (error) => print({error: describe(error), files: Object.keys(files), log}));
"""


def test_keeping_writes_the_snapshot_where_the_next_boot_looks_for_it():
    run = run_snapshot_js(FAKE_STORAGE_JS + KEEP_JS, "false")
    assert run["kept"] == "memoria de Python"
    assert run["files"] == KEPT_PATH
    assert run["log"][0] == ["written", *KEPT_PATH]


def test_a_write_the_storage_refuses_leaves_no_copy_and_says_why():
    run = run_snapshot_js(FAKE_STORAGE_JS + KEEP_JS, "true")
    assert run == {"error": "Error: sin espacio", "files": [], "log": [["aborted", *KEPT_PATH]]}
