"""Pruebas de deck/js/worker/wheels.js: the worker's own wheel unpacker, run in node.

wheels.js is bundled by the same esbuild the build uses and run under node
(deckjs.py), whose DecompressionStream is the browser's API. Every archive it reads is
also read by Python's zipfile, the independent reference: same files, same
bytes, and the libraries Pyodide would load, in its order.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from pathlib import Path

import pytest

from deckjs import run_with_module

ROOT = Path(__file__).resolve().parents[2]
WHEELS_JS = ROOT / "deck" / "js" / "worker" / "wheels.js"
SITE_PACKAGES = "/lib/python3.12/site-packages"

# Unpacks each archive named on stdin ({name, path}) and installs them all
# into a recording stand-in for Pyodide; prints, per archive, the SHA-256 of
# every file or the error, then what the install did.
RUN_WHEELS_JS = r"""
const crypto = require('node:crypto');
const fs = require('node:fs');
const [sitePackages, installOptions] = process.argv.slice(1);
const {unpackWheel, installWheels} = deckModule.exports;
const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex');

(async () => {
  const archives = JSON.parse(fs.readFileSync(0, 'utf8'));
  const results = [];
  const unpacked = [];
  for (const {name, path} of archives) {
    try {
      let announced = null;
      const onLibraries = (files) => {
        announced = Object.fromEntries(files.map((f) => [f.path, sha256(f.data)]));
      };
      const wheel = await unpackWheel(new Uint8Array(fs.readFileSync(path)), name, {onLibraries});
      unpacked.push(wheel);
      results.push({name, files: Object.fromEntries(wheel.files.map((f) => [f.path, sha256(f.data)])),
                    dynlibs: wheel.dynlibs, announced});
    } catch (error) {
      results.push({name, error: `${error.name}: ${error.message}`});
    }
  }
  const calls = [];
  const pyodide = {
    FS: {
      mkdirTree: (path) => calls.push(['mkdirTree', path]),
      writeFile: (path, data, options) => calls.push(['writeFile', path, data.byteLength, options]),
    },
    _api: {
      loadDynlib: async (path, global, searchDirs) => { calls.push(['loadDynlib', path, global, searchDirs]); },
      lockfile_packages: {paquete: {name: 'Paquete', file_name: 'paquete-1.0-py3-none-any.whl'}},
    },
    loadedPackages: {},
  };
  await installWheels(pyodide, unpacked, sitePackages, JSON.parse(installOptions));
  process.stdout.write(JSON.stringify({results, calls, loadedPackages: pyodide.loadedPackages}));
})().catch((error) => { console.error(error); process.exit(1); });
"""


def run_wheels_js(archives: list[tuple[str, Path]], install_options: dict | None = None) -> dict:
    request = json.dumps([{"name": name, "path": str(path)} for name, path in archives])
    result = run_with_module(WHEELS_JS, RUN_WHEELS_JS, SITE_PACKAGES, json.dumps(install_options or {}), input=request)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def hashes_by_zipfile(path: Path) -> dict[str, str]:
    """The reference: every file of the archive as Python's zipfile reads it."""
    with zipfile.ZipFile(path) as archive:
        return {info.filename: hashlib.sha256(archive.read(info)).hexdigest()
                for info in archive.infolist() if not info.is_dir()}


def write_archive(path: Path, members: list[tuple[str, bytes, int]], *, comment: bytes = b"") -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data, method in members:
            archive.writestr(zipfile.ZipInfo(name) if name.endswith("/") else name, data, compress_type=method)
        archive.comment = comment
    return path


def sample_members() -> list[tuple[str, bytes, int]]:
    repeated = b"def funcion():\n    return 'hola'\n" * 400
    return [
        ("paquete/", b"", zipfile.ZIP_STORED),
        ("paquete/__init__.py", repeated, zipfile.ZIP_DEFLATED),
        ("paquete/vacío.py", b"", zipfile.ZIP_DEFLATED),
        ("paquete/_núcleo.cpython-312-wasm32-emscripten.so", bytes(range(256)) * 64, zipfile.ZIP_DEFLATED),
        ("paquete/datos/tabla.bin", bytes(range(256)) * 3, zipfile.ZIP_STORED),
        ("paquete.libs/libayuda.so.1.2", b"\0asm" + bytes(100), zipfile.ZIP_STORED),
        ("paquete/no_es_biblioteca.sox", b"x", zipfile.ZIP_DEFLATED),
        ("paquete-1.0.dist-info/RECORD", b"paquete/__init__.py,,\n", zipfile.ZIP_DEFLATED),
    ]


def test_a_wheel_unpacks_to_the_same_files_as_zipfile_reads(tmp_path):
    archive = write_archive(tmp_path / "paquete-1.0-py3-none-any.whl", sample_members(), comment=b"comentario")
    [result] = run_wheels_js([("paquete-1.0-py3-none-any.whl", archive)])["results"]
    assert result["files"] == hashes_by_zipfile(archive)
    assert "paquete/" not in result["files"]
    # Pyodide's rule: .so, with or without version numbers, in the archive's order.
    assert result["dynlibs"] == ["paquete/_núcleo.cpython-312-wasm32-emscripten.so", "paquete.libs/libayuda.so.1.2"]
    # The libraries are announced, whole, before the rest is inflated (a snapshot's restore needs only them).
    assert result["announced"] == {path: result["files"][path] for path in result["dynlibs"]}


def test_a_wheel_without_libraries_announces_none(tmp_path):
    archive = write_archive(tmp_path / "puro-1.0-py3-none-any.whl", [("puro/__init__.py", b"x = 1\n", zipfile.ZIP_DEFLATED)])
    [result] = run_wheels_js([("puro-1.0-py3-none-any.whl", archive)])["results"]
    assert result["announced"] == {} and result["dynlibs"] == []


def test_after_a_snapshot_install_only_writes_files_and_records_packages(tmp_path):
    archive = write_archive(tmp_path / "paquete-1.0-py3-none-any.whl", sample_members())
    restored = run_wheels_js([("paquete-1.0-py3-none-any.whl", archive)], {"loadLibraries": False})
    assert [call for call in restored["calls"] if call[0] == "loadDynlib"] == []
    assert len([call for call in restored["calls"] if call[0] == "writeFile"]) == len(hashes_by_zipfile(archive))
    assert restored["loadedPackages"] == {"Paquete": "default channel"}
    # Taking a snapshot: loadedPackages must stay as Pyodide left it (the snapshot checks it).
    taking = run_wheels_js([("paquete-1.0-py3-none-any.whl", archive)], {"loadLibraries": False, "recordPackages": False})
    assert taking["loadedPackages"] == {}


def test_install_writes_into_site_packages_and_loads_each_library_locally(tmp_path):
    first = write_archive(tmp_path / "paquete-1.0-py3-none-any.whl", sample_members())
    second = write_archive(tmp_path / "otro-2.0-py3-none-any.whl",
                           [("otro/__init__.py", b"x = 1\n", zipfile.ZIP_DEFLATED),
                            ("otro/_c.cpython-312-wasm32-emscripten.so", b"\0asm", zipfile.ZIP_STORED)])
    run = run_wheels_js([("paquete-1.0-py3-none-any.whl", first), ("otro-2.0-py3-none-any.whl", second)])
    calls = run["calls"]
    # Recorded as loadPackage records a package of Pyodide's lock; one outside the lock is not.
    assert run["loadedPackages"] == {"Paquete": "default channel"}
    writes = {call[1]: call[2] for call in calls if call[0] == "writeFile"}
    expected = {**hashes_by_zipfile(first), **hashes_by_zipfile(second)}
    assert set(writes) == {f"{SITE_PACKAGES}/{name}" for name in expected}
    assert writes[f"{SITE_PACKAGES}/paquete/__init__.py"] == len(sample_members()[1][1])
    assert all(call[3] == {"canOwn": True} for call in calls if call[0] == "writeFile")
    folders = [call[1] for call in calls if call[0] == "mkdirTree"]
    assert len(folders) == len(set(folders))
    assert {f"{SITE_PACKAGES}/paquete/datos", f"{SITE_PACKAGES}/paquete.libs"} <= set(folders)
    # Every file is in place before the first library loads (a library may read its neighbours).
    first_load = next(index for index, call in enumerate(calls) if call[0] == "loadDynlib")
    assert all(call[0] == "loadDynlib" for call in calls[first_load:])
    assert [call[1:] for call in calls[first_load:]] == [
        [f"{SITE_PACKAGES}/paquete/_núcleo.cpython-312-wasm32-emscripten.so", False, [f"{SITE_PACKAGES}/paquete.libs"]],
        [f"{SITE_PACKAGES}/paquete.libs/libayuda.so.1.2", False, [f"{SITE_PACKAGES}/paquete.libs"]],
        [f"{SITE_PACKAGES}/otro/_c.cpython-312-wasm32-emscripten.so", False, [f"{SITE_PACKAGES}/otro.libs"]],
    ]


def test_the_shipped_wheels_unpack_byte_for_byte(dist_dir):
    runtime = json.loads((dist_dir / "runtime.json").read_text(encoding="utf-8"))
    archives = [(Path(entry["file"]).name, dist_dir / entry["file"]) for entry in runtime["preload"]]
    archives.append((Path(runtime["wheel"]).name, dist_dir / runtime["wheel"]))
    results = run_wheels_js(archives)["results"]
    assert {result["name"] for result in results} >= {"numpy-2.0.2-cp312-cp312-pyodide_2024_0_wasm32.whl"}
    for (name, path), result in zip(archives, results, strict=True):
        assert result.get("error") is None, result["error"]
        assert result["files"] == hashes_by_zipfile(path), name
    numpy = next(result for result in results if result["name"].startswith("numpy-"))
    assert "numpy/_core/_multiarray_umath.cpython-312-wasm32-emscripten.so" in numpy["dynlibs"]


@pytest.mark.parametrize(("members", "damage", "message"), [
    ([("../fuera.py", b"x", zipfile.ZIP_STORED)], None, "ruta fuera del paquete: ../fuera.py"),
    ([("/absoluta.py", b"x", zipfile.ZIP_STORED)], None, "ruta fuera del paquete: /absoluta.py"),
    ([("a.py", b"x" * 1000, zipfile.ZIP_BZIP2)], None, "método de compresión 12 no admitido (a.py)"),
    ([("a.py", b"abc" * 1000, zipfile.ZIP_DEFLATED)], "truncate", "no es un archivo ZIP (falta el final del directorio central)"),
    ([("a.py", b"abc" * 1000, zipfile.ZIP_STORED)], "size", "a.py mide 3000 bytes y el índice dice 3001"),
])
def test_a_damaged_wheel_is_refused_naming_the_wheel_and_the_fault(tmp_path, members, damage, message):
    archive = write_archive(tmp_path / "roto-1.0-py3-none-any.whl", members)
    data = bytearray(archive.read_bytes())
    if damage == "truncate":
        del data[-30:]
    elif damage == "size":
        # The central directory's uncompressed size of the only entry, one byte more.
        directory = data.rindex(b"PK\x01\x02")
        data[directory + 24:directory + 28] = (3001).to_bytes(4, "little")
    archive.write_bytes(bytes(data))
    [result] = run_wheels_js([("roto-1.0-py3-none-any.whl", archive)])["results"]
    assert result.get("error") == f"WheelError: roto-1.0-py3-none-any.whl: {message}"


def test_a_corrupt_deflate_stream_is_an_error_not_a_wrong_file(tmp_path):
    archive = write_archive(tmp_path / "roto-1.0-py3-none-any.whl",
                            [("a.py", bytes(range(256)) * 40, zipfile.ZIP_DEFLATED)])
    data = bytearray(archive.read_bytes())
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as reference:
        info = reference.getinfo("a.py")
    start = info.header_offset + 30 + len(b"a.py")
    data[start:start + 8] = b"\xff" * 8
    archive.write_bytes(bytes(data))
    [result] = run_wheels_js([("roto-1.0-py3-none-any.whl", archive)])["results"]
    assert result.get("error", "").startswith("WheelError: roto-1.0-py3-none-any.whl: a.py no se puede descomprimir (")


# ---------------------------------------------------------------- forgetting the listings

def read_forget_listings_py() -> str:
    result = run_with_module(WHEELS_JS, "process.stdout.write(deckModule.exports.FORGET_LISTINGS_PY);")
    assert result.returncode == 0, result.stderr
    return result.stdout


FORGET_CHECK_PY = r"""
import importlib
import os
import sys
import zipfile
import zipimport

folder, archive, forget = sys.argv[1:4]
with zipfile.ZipFile(archive, "w") as zipped:
    zipped.writestr("zipped_module.py", "VALUE = 1\n")
sys.path[:0] = [folder, archive]
import zipped_module  # the zip importer lists the archive once

try:
    import late_module
except ImportError:
    pass
# A module written after the folder was listed, within the same mtime: the finder would not look again.
listed = os.stat(folder).st_mtime_ns
with open(os.path.join(folder, "late_module.py"), "w") as file:
    file.write("VALUE = 2\n")
os.utime(folder, ns=(listed, listed))

zip_reads = []
original = zipimport.zipimporter.invalidate_caches
zipimport.zipimporter.invalidate_caches = lambda self: (zip_reads.append(self.archive), original(self))[1]
if forget == "forget":
    namespace = {}
    exec(sys.stdin.read(), namespace)
    namespace["forget_listings"]()
try:
    import late_module
    print("found", late_module.VALUE, len(zip_reads))
except ImportError:
    print("missing", len(zip_reads))
"""


@pytest.mark.parametrize("forget, expected", [("forget", "found 2 0"), ("keep", "missing 0")])
def test_forgetting_the_listings_finds_new_files_without_reading_the_zip_again(tmp_path, forget, expected):
    # The «keep» case shows the finder's stale listing that forget_listings() must clear.
    import subprocess
    import sys

    folder = tmp_path / "site-packages"
    folder.mkdir()
    process = subprocess.run([sys.executable, "-c", FORGET_CHECK_PY, str(folder), str(tmp_path / "stdlib.zip"), forget],
                             input=read_forget_listings_py(), capture_output=True, text=True, cwd=tmp_path)
    assert process.returncode == 0, process.stderr
    assert process.stdout.split("\n")[0] == expected
