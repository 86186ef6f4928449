"""Pruebas de deck/js/worker/packagecopy.js: the device's copy of the unpacked packages, run in node.

The copy is composed from unpacked wheels as wheels.js gives them, kept in a
stand-in for the origin's private file system (deckjs.FAKE_STORAGE_JS) and read
back. Every file read back, and the copy's own checksum, are checked against
Python's hashlib, the independent reference; a copy that is not exactly the
one kept for these wheels is never used.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest

from deckjs import FAKE_STORAGE_JS, run_with_module

ROOT = Path(__file__).resolve().parents[2]
PACKAGECOPY_JS = ROOT / "deck" / "js" / "worker" / "packagecopy.js"

# Two unpacked wheels, as unpackWheel gives them, and the preload entries they came from.
WHEELS = [
    {"name": "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl",
     "files": {"numpy/__init__.pyc": b"\x00numpy" * 300, "numpy/_core/_multiarray_umath.so": b"\0asm" + bytes(range(256)) * 8,
               "numpy/vacio.py": b""},
     "dynlibs": ["numpy/_core/_multiarray_umath.so"]},
    {"name": "six-1.16.0-py2.py3-none-any.whl", "files": {"six.pyc": b"six" * 50}, "dynlibs": []},
]
PRELOAD = [{"file": f"pyodide/{wheel['name']}", "integrity": f"sha256-{wheel['name'][:6]}"} for wheel in WHEELS]

# Reads {wheels, preload, readPreload, damage} from stdin: composes the copy,
# keeps it, damages the stored file as asked and reads it back with readPreload.
ROUND_TRIP_JS = r"""
const crypto = require('node:crypto');
const fs = require('node:fs');
const {composePackagesCopy, keepPackages, readKeptPackages, listLibraries, KEPT_PACKAGES} = deckModule.exports;
const request = JSON.parse(fs.readFileSync(0, 'utf8'));
const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex');
const print = (value) => process.stdout.write(JSON.stringify(value));

(async () => {
  const wheels = request.wheels.map(({name, files, dynlibs}) => ({
    name, dynlibs,
    files: Object.entries(files).map(([path, data]) => ({path, data: new Uint8Array(Buffer.from(data, 'base64'))})),
  }));
  const {storage, files, log} = fakeStorage();
  const copy = composePackagesCopy(request.preload, wheels);
  // What Python's file system may do to the boot's own arrays once it owns them: the copy is made before.
  for (const wheel of wheels) for (const file of wheel.files) file.data.fill(0x58);
  await keepPackages(storage, copy);
  const stored = files[KEPT_PACKAGES.FILE];
  const headerLength = stored.readUInt32LE(0);
  const header = JSON.parse(stored.subarray(4, 4 + headerLength).toString('utf8'));
  const {damage} = request;
  if (damage === 'byte') stored[stored.length - 5] ^= 1;
  if (damage === 'short') files[KEPT_PACKAGES.FILE] = stored.subarray(0, stored.length - 1);
  if (damage === 'long') files[KEPT_PACKAGES.FILE] = Buffer.concat([stored, Buffer.from('mas')]);
  if (damage === 'header') files[KEPT_PACKAGES.FILE] = Buffer.concat([Buffer.from([200, 0, 0, 0]), stored.subarray(4)]);
  if (damage === 'version') {
    const text = Buffer.from(JSON.stringify({...header, version: header.version + 1}));
    const length = Buffer.alloc(4);
    length.writeUInt32LE(text.length, 0);
    files[KEPT_PACKAGES.FILE] = Buffer.concat([length, text, stored.subarray(4 + headerLength)]);
  }
  const root = await storage.getDirectory();
  const access = await (await root.getFileHandle(KEPT_PACKAGES.FILE)).createSyncAccessHandle({mode: 'read-only'});
  const read = await readKeptPackages(access, request.readPreload);
  print({
    header,
    read: read && read.map(({name, files: unpacked, dynlibs}) => ({
      name, dynlibs, files: Object.fromEntries(unpacked.map(({path, data}) => [path, sha256(data)]))})),
    libraries: read && Object.fromEntries([...listLibraries(read)].map(([path, data]) => [path, sha256(data)])),
    log: log.filter(([what]) => what !== 'written'),
  });
})().catch((error) => { console.error(error); process.exit(1); });
"""


def round_trip(*, damage: str | None = None, read_preload: list[dict] = PRELOAD) -> dict:
    wheels = [{"name": wheel["name"], "dynlibs": wheel["dynlibs"],
               "files": {path: base64.b64encode(data).decode() for path, data in wheel["files"].items()}}
              for wheel in WHEELS]
    request = json.dumps({"wheels": wheels, "preload": PRELOAD, "readPreload": read_preload, "damage": damage})
    script = FAKE_STORAGE_JS + ROUND_TRIP_JS
    result = run_with_module(PACKAGECOPY_JS, script, input=request)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def expected_files() -> list[dict]:
    return [{"name": wheel["name"], "dynlibs": wheel["dynlibs"],
             "files": {path: hashlib.sha256(data).hexdigest() for path, data in wheel["files"].items()}}
            for wheel in WHEELS]


def test_the_kept_copy_reads_back_every_file_of_every_wheel_as_it_was_unpacked():
    run = round_trip()
    assert run["read"] == expected_files()
    assert run["libraries"] == {"numpy/_core/_multiarray_umath.so":
                                hashlib.sha256(WHEELS[0]["files"]["numpy/_core/_multiarray_umath.so"]).hexdigest()}
    # The header names the wheels it came from and the files' checksum, as Python's hashlib computes it.
    everything = b"".join(data for wheel in WHEELS for data in wheel["files"].values())
    digest = base64.b64encode(hashlib.sha256(everything).digest()).decode()
    assert run["header"]["integrity"] == f"sha256-{digest}"
    assert [(entry["file"], entry["integrity"]) for entry in run["header"]["wheels"]] == \
        [(entry["file"], entry["integrity"]) for entry in PRELOAD]
    # Read through a read-only handle, closed once read.
    assert run["log"] == [["open", "dpdeck-python-packages.bin", {"mode": "read-only"}],
                          ["close", "dpdeck-python-packages.bin"]]


@pytest.mark.parametrize("damage", ["byte", "short", "long", "header", "version"])
def test_a_copy_changed_cut_or_of_another_layout_is_never_used(damage):
    run = round_trip(damage=damage)
    assert run["read"] is None and run["libraries"] is None
    assert run["log"][-1] == ["close", "dpdeck-python-packages.bin"]


@pytest.mark.parametrize("preload", [
    [PRELOAD[0], {**PRELOAD[1], "integrity": "sha256-otra"}],    # another build of a wheel
    list(reversed(PRELOAD)),                                      # another order
    PRELOAD[:1],                                                  # fewer wheels
], ids=["otra-rueda", "otro-orden", "menos-ruedas"])
def test_a_copy_of_other_wheels_is_never_used(preload):
    assert round_trip(read_preload=preload)["read"] is None
