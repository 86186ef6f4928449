"""Pruebas de deck/js/worker/devicestore.js: where the worker keeps its copies, chosen by what the engine offers, run in node.

Each store runs against a stand-in (deckjs.FAKE_STORAGE_JS): the origin's
private file system with or without writable streams (Safari before 26 has
synchronous access handles but no createWritable), one that refuses to open,
and IndexedDB. What is written is read back by a new store, as on the next
visit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from deckjs import FAKE_STORAGE_JS, run_with_module

ROOT = Path(__file__).resolve().parents[2]
DEVICESTORE_JS = ROOT / "deck" / "js" / "worker" / "devicestore.js"

# Writes a copy in two parts through one store, reads it back through a new
# store over the same device (the next visit), and a name never written.
ROUND_TRIP_JS = r"""
const {openDeviceStore} = deckModule.exports;
const [device, options] = process.argv.slice(1).map(JSON.parse);
const print = (value) => process.stdout.write(JSON.stringify(value));
const {storage, files, log: fileLog} = fakeStorage(options.files ? {'copia.bin': Buffer.from(options.files)} : {},
                                                   {withoutWritable: options.withoutWritable, failWrite: options.failWrite});
const refused = {getDirectory: async () => { throw Object.assign(new Error('no'), {name: 'SecurityError'}); }};
const {indexedDB, records, log: databaseLog} = fakeIndexedDB({}, {failOpen: options.failOpen});
const scope = fakeWorkerScope({
  storage: device.includes('opfs') ? storage : device.includes('refused') ? refused : undefined,
  indexedDB: device.includes('indexeddb') ? indexedDB : undefined,
  subtle: !options.withoutDigests,
});
const read = async (store, name) => {
  const access = await store.open(name);
  if (!access) return null;
  const bytes = new Uint8Array(access.getSize());
  const count = access.read(bytes, {at: 0});
  access.close();
  return count === bytes.byteLength ? new TextDecoder().decode(bytes) : 'incompleta';
};
(async () => {
  const store = await openDeviceStore(scope);
  if (!store) return print({kind: null});
  let error = null;
  try {
    await store.write('copia.bin', [new TextEncoder().encode('memoria '), new TextEncoder().encode('de Python')]);
  } catch (caught) {
    error = caught.message;
  }
  const next = await openDeviceStore(scope);
  print({kind: store.kind, error, back: await read(next, 'copia.bin'), missing: await read(next, 'otra.bin'),
         fileLog, databaseLog, stored: Object.keys(files).concat(Object.keys(records))});
})().catch((error) => { console.error(error); process.exit(1); });
"""


def run_store_script(script: str, *arguments) -> dict:
    """`script` run in node over devicestore.js and the stand-ins, its arguments as JSON; what it prints."""
    result = run_with_module(DEVICESTORE_JS, FAKE_STORAGE_JS + script, *map(json.dumps, arguments))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def round_trip(device: str, **options) -> dict:
    return run_store_script(ROUND_TRIP_JS, device, options)


def test_a_private_file_system_with_synchronous_handles_is_the_store():
    run = round_trip("opfs+indexeddb")
    assert run["kind"] == "opfs" and run["error"] is None
    assert run["back"] == "memoria de Python" and run["missing"] is None
    # Written whole by a writable stream; read through a read-only handle (two tabs may read at once).
    assert run["fileLog"] == [["written", "copia.bin"], ["open", "copia.bin", {"mode": "read-only"}],
                              ["close", "copia.bin"]]
    assert run["databaseLog"] == []


def test_without_writable_streams_a_copy_is_written_through_a_synchronous_handle():
    # Safari before 26; the old copy is longer than the new one, and must not leave its tail behind.
    run = round_trip("opfs", withoutWritable=True, files="una copia anterior bastante más larga")
    assert run["kind"] == "opfs" and run["error"] is None and run["back"] == "memoria de Python"
    assert run["fileLog"][:3] == [["open", "copia.bin", None], ["flushed", "copia.bin"], ["close", "copia.bin"]]


def test_a_write_the_storage_refuses_says_why_and_leaves_no_copy():
    run = round_trip("opfs", failWrite=True)
    assert run["error"] == "sin espacio" and run["back"] is None
    assert ["aborted", "copia.bin"] in run["fileLog"]


@pytest.mark.parametrize("device", ["indexeddb", "refused+indexeddb"], ids=["sin-opfs", "opfs-rechazado"])
def test_without_a_private_file_system_the_copies_go_to_indexeddb(device):
    run = round_trip(device)
    assert run["kind"] == "indexeddb" and run["error"] is None
    assert run["back"] == "memoria de Python" and run["missing"] is None
    assert ["put", "copias", "copia.bin", "readwrite"] in run["databaseLog"]
    # A write is committed at once, never left open for the worker's thread to come back to.
    log = run["databaseLog"]
    assert log.index(["commit", "copias", "readwrite"]) == log.index(["put", "copias", "copia.bin", "readwrite"]) + 1
    assert ["commit", "copias", "readonly"] not in log
    assert run["stored"] == ["copia.bin"]


@pytest.mark.parametrize(("device", "options"), [
    ("", {}),
    ("indexeddb", {"failOpen": True}),
    ("opfs+indexeddb", {"withoutDigests": True}),   # an http:// page from another machine: nothing can be checked
], ids=["nada", "indexeddb-falla", "sin-sha256"])
def test_a_device_that_keeps_nothing_has_no_store(device, options):
    assert round_trip(device, **options) == {"kind": None}


NAME_JS = r"""
const {composeWorkerName, readWorkerName} = deckModule.exports;
const print = (value) => process.stdout.write(JSON.stringify(value));
const told = composeWorkerName({unfit: 'RuntimeError: "índice" fuera de rango'});
print({plain: composeWorkerName(), told, back: readWorkerName(told), none: readWorkerName(composeWorkerName()),
       other: readWorkerName('otro'), damaged: readWorkerName('dpdeck-python {no es json'), blank: readWorkerName('')});
"""


def test_the_worker_s_name_carries_what_the_page_asks_of_its_boot():
    result = run_with_module(ROOT / "deck" / "js" / "shared" / "workerboot.js", NAME_JS)
    assert result.returncode == 0, result.stderr
    run = json.loads(result.stdout)
    assert run["plain"] == "dpdeck-python"
    assert run["back"] == {"unfit": 'RuntimeError: "índice" fuera de rango'}
    assert run["none"] == run["other"] == run["damaged"] == run["blank"] == {}


OPEN_JS = r"""
const {openDeviceStore} = deckModule.exports;
const [present, options] = process.argv.slice(1).map(JSON.parse);
const print = (value) => process.stdout.write(JSON.stringify(value));
const {storage, log} = fakeStorage(present ? {'copia.bin': Buffer.from('memoria')} : {}, options);
(async () => {
  const store = await openDeviceStore(fakeWorkerScope({storage}));
  const access = await store.open('copia.bin');
  let found = null;
  if (access) {
    const bytes = new Uint8Array(access.getSize());
    access.read(bytes, {at: 0});
    found = new TextDecoder().decode(bytes);
  }
  print({found, opens: log.filter((entry) => entry[0] === 'open').length});
})().catch((error) => { console.error(error); process.exit(1); });
"""


def open_copy(present: bool, **options) -> dict:
    return run_store_script(OPEN_JS, present, options)


def test_an_opening_the_browser_leaves_unanswered_is_asked_again_at_once_and_the_second_answers():
    # Asked again after 150 ms, answered: the third try (at 1 s) is never needed.
    assert open_copy(True, silentOpens=1) == {"found": "memoria", "opens": 2}


def test_a_copy_that_is_not_there_is_answered_by_the_first_try():
    assert open_copy(False) == {"found": None, "opens": 0}
    assert open_copy(True) == {"found": "memoria", "opens": 1}


def test_a_try_that_fails_decides_nothing_while_another_may_still_open_the_copy():
    assert open_copy(True, lockedOpens=1) == {"found": "memoria", "opens": 2}
    assert open_copy(True, silentOpens=1, lockedOpens=1) == {"found": "memoria", "opens": 3}


def test_a_copy_no_try_opens_counts_as_absent():
    assert open_copy(True, lockedOpens=3) == {"found": None, "opens": 3}
    assert open_copy(True, silentOpens=3) == {"found": None, "opens": 3}
