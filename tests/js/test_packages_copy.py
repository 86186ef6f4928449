"""Pruebas de deck/js/worker/packagecopy.js: the device's copy of the unpacked packages, run in node.

The copy is composed from unpacked wheels as wheels.js gives them, kept in a
stand-in for the origin's private file system (deckjs.FAKE_STORAGE_JS), through
the worker's device store (devicestore.js), and read back against a description of what it must be, as the build writes it in
runtime.json (`packagesCopy`, py/deckbuild/devicecopy.py), computed here with
Python's hashlib, the independent reference. A copy that is not exactly that
one is never used, whatever the file itself says; and the worker's own
unpacking of the built deck's wheels gives exactly what the build described.
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
WHEELS_JS = ROOT / "deck" / "js" / "worker" / "wheels.js"
SNAPSHOT_JS = ROOT / "deck" / "js" / "worker" / "snapshot.js"
DEVICESTORE_JS = ROOT / "deck" / "js" / "worker" / "devicestore.js"

# Two unpacked wheels, as unpackWheel gives them, and the preload entries they came from.
WHEELS = [
    {"name": "numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl",
     "files": {"numpy/__init__.pyc": b"\x00numpy" * 300, "numpy/_core/_multiarray_umath.so": b"\0asm" + bytes(range(256)) * 8,
               "numpy/vacio.py": b""},
     "dynlibs": ["numpy/_core/_multiarray_umath.so"]},
    {"name": "six-1.16.0-py2.py3-none-any.whl", "files": {"six.pyc": b"six" * 50}, "dynlibs": []},
]
PRELOAD = [{"file": f"pyodide/{wheel['name']}", "integrity": f"sha256-{wheel['name'][:6]}"} for wheel in WHEELS]


def integrity(data: bytes) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(data).digest()).decode()


def describe(wheels=WHEELS) -> dict:
    """runtime.json's packagesCopy for `wheels`, as the build writes it."""
    everything = b"".join(data for wheel in wheels for data in wheel["files"].values())
    return {"integrity": integrity(everything), "size": len(everything),
            "wheels": [{"files": [[path, len(data)] for path, data in wheel["files"].items()]} for wheel in wheels]}


# Reads {wheels, description, readDescription, damage, folder} from stdin:
# composes the copy, keeps it against `description`, damages the stored file as
# asked and reads it back against `readDescription`.
ROUND_TRIP_JS = r"""
const crypto = require('node:crypto');
const fs = require('node:fs');
const {composePackagesCopy, keepPackages, readKeptPackages, listLibraries, openDeviceStore, openKeptFile, KEPT_PACKAGES} =
  deckModule.exports;
const request = JSON.parse(fs.readFileSync(0, 'utf8'));
const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex');
const print = (value) => process.stdout.write(JSON.stringify(value));

(async () => {
  const wheels = request.wheels.map(({name, files, dynlibs}) => ({
    name, dynlibs,
    files: Object.entries(files).map(([path, data]) => ({path, data: new Uint8Array(Buffer.from(data, 'base64'))})),
  }));
  const {storage, files, log} = fakeStorage(request.folder ? {[`${request.folder}/dentro.txt`]: Buffer.from('x')} : {});
  const store = openDeviceStore(fakeWorkerScope({storage}));
  const copy = composePackagesCopy(wheels);
  // What Python's file system may do to the boot's own arrays once it owns them: the copy is made before.
  for (const wheel of wheels) for (const file of wheel.files) file.data.fill(0x58);
  let keptError = null;
  try {
    await keepPackages(store, copy, request.description);
  } catch (error) {
    keptError = error.message;
  }
  const stored = files[KEPT_PACKAGES.FILE];
  if (!stored) return print({keptError, stored: null, log});
  const {damage} = request;
  if (damage === 'byte') stored[stored.length - 5] ^= 1;
  if (damage === 'short') files[KEPT_PACKAGES.FILE] = stored.subarray(0, stored.length - 1);
  if (damage === 'long') files[KEPT_PACKAGES.FILE] = Buffer.concat([stored, Buffer.from('mas')]);
  const access = await openKeptFile(store, KEPT_PACKAGES.FILE);
  const {wheels: read, refused} = await readKeptPackages(access, request.preload, request.readDescription);
  print({
    keptError,
    stored: sha256(stored),
    refused: refused || null,
    read: read ? read.map(({name, files: unpacked, dynlibs}) => ({
      name, dynlibs, files: Object.fromEntries(unpacked.map(({path, data}) => [path, sha256(data)]))})) : null,
    libraries: read ? Object.fromEntries([...listLibraries(read)].map(([path, data]) => [path, sha256(data)])) : null,
    log: log.filter(([what]) => what !== 'written'),
  });
})().catch((error) => { console.error(error); process.exit(1); });
"""


def round_trip(*, damage: str | None = None, description: dict | None = None, read_description: dict | None = None,
               folder: str | None = None) -> dict:
    wheels = [{"name": wheel["name"], "dynlibs": wheel["dynlibs"],
               "files": {path: base64.b64encode(data).decode() for path, data in wheel["files"].items()}}
              for wheel in WHEELS]
    description = description or describe()
    request = json.dumps({"wheels": wheels, "preload": PRELOAD, "description": description,
                          "readDescription": read_description or description, "damage": damage, "folder": folder})
    result = run_with_module([PACKAGECOPY_JS, SNAPSHOT_JS, DEVICESTORE_JS], FAKE_STORAGE_JS + ROUND_TRIP_JS, input=request)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def expected_files() -> list[dict]:
    return [{"name": wheel["name"], "dynlibs": wheel["dynlibs"],
             "files": {path: hashlib.sha256(data).hexdigest() for path, data in wheel["files"].items()}}
            for wheel in WHEELS]


def test_the_kept_copy_reads_back_every_file_of_every_wheel_as_it_was_unpacked():
    run = round_trip()
    assert run["keptError"] is None and run["refused"] is None
    assert run["read"] == expected_files()
    assert run["libraries"] == {"numpy/_core/_multiarray_umath.so":
                                hashlib.sha256(WHEELS[0]["files"]["numpy/_core/_multiarray_umath.so"]).hexdigest()}
    # The file holds the files' bytes and nothing else: nothing in it is trusted.
    everything = b"".join(data for wheel in WHEELS for data in wheel["files"].values())
    assert run["stored"] == hashlib.sha256(everything).hexdigest()
    # Read through a read-only handle, closed once read.
    assert run["log"] == [["open", "dpdeck-python-packages.bin", {"mode": "read-only"}],
                          ["close", "dpdeck-python-packages.bin"]]


@pytest.mark.parametrize(("damage", "reason"), [
    ("byte", "su SHA-256 no es el de runtime.json"),
    ("short", "no mide lo que dice runtime.json"),
    ("long", "no mide lo que dice runtime.json"),
])
def test_a_copy_changed_or_cut_is_refused_and_says_why(damage, reason):
    run = round_trip(damage=damage)
    assert run["read"] is None and run["libraries"] is None
    assert run["refused"] == reason
    assert run["log"][-1] == ["close", "dpdeck-python-packages.bin"]


def test_a_copy_is_read_only_against_the_builds_description_never_its_own():
    # Another build's description (another SHA-256 for the same size): the same file is refused.
    other = {**describe(), "integrity": integrity(b"otra")}
    assert round_trip(read_description=other)["refused"] == "su SHA-256 no es el de runtime.json"


def test_only_the_copy_the_build_describes_is_kept():
    other = {**describe(), "integrity": integrity(b"otra")}
    run = round_trip(description=other)
    assert run["stored"] is None
    assert "no son los que describe runtime.json" in run["keptError"]


def test_a_folder_where_the_copy_goes_is_removed_and_the_copy_kept():
    run = round_trip(folder="dpdeck-python-packages.bin")
    assert run["keptError"] is None and run["read"] == expected_files()
    assert ["removed", "dpdeck-python-packages.bin"] in run["log"]


USABLE_JS = r"""
const fs = require('node:fs');
const {isUsableDescription} = deckModule.exports;
const {descriptions, preload} = JSON.parse(fs.readFileSync(0, 'utf8'));
process.stdout.write(JSON.stringify(descriptions.map((description) => isUsableDescription(description, preload))));
"""


def test_a_description_with_paths_out_of_site_packages_or_wrong_sizes_is_never_used():
    good = describe()
    bad_path = json.loads(json.dumps(good))
    bad_path["wheels"][1]["files"][0][0] = "../fuera.pyc"
    absolute = json.loads(json.dumps(good))
    absolute["wheels"][0]["files"][0][0] = "/etc/numpy.pyc"
    wrong_size = {**good, "size": good["size"] + 1}
    fewer = {**good, "wheels": good["wheels"][:1]}
    request = json.dumps({"descriptions": [good, bad_path, absolute, wrong_size, fewer, None], "preload": PRELOAD})
    result = run_with_module(PACKAGECOPY_JS, USABLE_JS, input=request)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [True, False, False, False, False, False]


# The built deck's boot wheels, unpacked by the worker's own wheels.js: their files, in order, and the SHA-256
# of all their bytes, to compare with what the build wrote in runtime.json (py/deckbuild/devicecopy.py).
UNPACK_SHIPPED_JS = r"""
const crypto = require('node:crypto');
const fs = require('node:fs');
const path = require('node:path');
const {unpackWheel} = deckModule.exports;
const [dist] = process.argv.slice(1);
const runtime = JSON.parse(fs.readFileSync(path.join(dist, 'runtime.json'), 'utf8'));
(async () => {
  const digest = crypto.createHash('sha256');
  const wheels = [];
  for (const {file} of runtime.preload) {
    const wheel = await unpackWheel(new Uint8Array(fs.readFileSync(path.join(dist, file))), path.basename(file));
    for (const {data} of wheel.files) digest.update(data);
    wheels.push({files: wheel.files.map(({path: name, data}) => [name, data.byteLength])});
  }
  process.stdout.write(JSON.stringify({integrity: 'sha256-' + digest.digest('base64'), wheels}));
})().catch((error) => { console.error(error); process.exit(1); });
"""


def test_the_workers_unpacking_of_the_built_wheels_is_what_the_build_describes(dist_dir):
    result = run_with_module(WHEELS_JS, UNPACK_SHIPPED_JS, str(dist_dir), timeout=300)
    assert result.returncode == 0, result.stderr
    unpacked = json.loads(result.stdout)
    described = json.loads((dist_dir / "runtime.json").read_text(encoding="utf-8"))["packagesCopy"]
    assert unpacked["wheels"] == described["wheels"]
    assert unpacked["integrity"] == described["integrity"]
