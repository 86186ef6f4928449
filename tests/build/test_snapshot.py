"""Pruebas de deckbuild/snapshot.py: Python's memory snapshot, taken at build time.

The shipped deck's runtime.json must describe the snapshot it ships (the
worker trusts it: integrity, size, the libraries to place again), the
libraries must come from the wheels it ships, and the cache must be checked
on every hit. Restoring it is tested in the browser (tests/browser/test_boot.py)
and piece by piece under node (tests/js/test_snapshot.py).
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from deckbuild import snapshot as snapshots
from deckbuild.files import hash_file
from deckbuild.offline import split_precache
from deckbuild.pipeline import build
from deckbuild.pyodide import ShippedPyodide, make_integrity

# The browser tests' fixture deck: a few slides and cells, built in a second.
FIXTURE_SLIDES = Path(__file__).resolve().parents[1] / "browser" / "fixture_slides"

SITE_PACKAGES = "/lib/python3.12/site-packages"
# Pyodide 0.27.7's snapshot header starts with its magic number (API.makeSnapshot).
PYODIDE_SNAPSHOT_MAGIC = (0x706E7300).to_bytes(4, "little")


def read_runtime(dist: Path) -> dict:
    return json.loads((dist / "runtime.json").read_text(encoding="utf-8"))


def test_runtime_json_describes_the_snapshot_the_deck_ships(dist_dir):
    runtime = read_runtime(dist_dir)
    described = runtime["snapshot"]
    shipped = dist_dir / described["file"]
    assert described["file"] == f"pyodide/{snapshots.SNAPSHOT_FILE}"
    assert described["integrity"] == make_integrity(hash_file(shipped))
    memory = gzip.decompress(shipped.read_bytes())
    assert described["size"] == len(memory) == snapshots.measure_inflated(shipped)
    assert memory[:4] == PYODIDE_SNAPSHOT_MAGIC
    # What a device's kept copy must hash to (Python's hashlib over Python's gzip: the independent reference).
    assert described["memoryIntegrity"] == make_integrity(hashlib.sha256(memory).hexdigest())
    # What a restored boot downloads before «Python listo»: the core but the standard library, the libraries, the snapshot.
    core = ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "pyodide-lock.json")
    assert described["bytes"] == (sum((dist_dir / "pyodide" / name).stat().st_size for name in core)
                                  + (dist_dir / described["librariesFile"]).stat().st_size + shipped.stat().st_size)
    # Kept offline with Python's files, checked like them.
    groups = split_precache(json.loads((dist_dir / "manifest.json").read_text(encoding="utf-8"))["files"], runtime)
    assert groups["python"][described["file"]] == hash_file(shipped)


def test_every_library_to_place_again_is_in_a_shipped_wheel_in_load_order(dist_dir):
    runtime = read_runtime(dist_dir)
    libraries = runtime["snapshot"]["libraries"]
    in_wheels = set()
    for entry in runtime["preload"]:
        with zipfile.ZipFile(dist_dir / entry["file"]) as wheel:
            in_wheels |= {name for name in wheel.namelist() if name.endswith(".so")}
    placed = [library["file"] for library in libraries]
    assert set(placed) <= in_wheels
    assert all(library["path"] == f"{SITE_PACKAGES}/{library['file']}" for library in libraries)
    # Only what the boot's imports load: numpy's core is placed again, its test module never.
    assert "numpy/_core/_multiarray_umath.cpython-312-wasm32-emscripten.so" in placed
    assert "numpy/_core/_struct_ufunc_tests.cpython-312-wasm32-emscripten.so" in in_wheels - set(placed)
    # In the order of the wheels and of each wheel's files, as the worker unpacks them.
    order = []
    for entry in runtime["preload"]:
        with zipfile.ZipFile(dist_dir / entry["file"]) as wheel:
            order += [name for name in wheel.namelist() if name in set(placed)]
    assert placed == order
    # Each library's functions were appended to the table after the previous one's, and its data has its own place.
    table_bases = [library["tableBase"] for library in libraries]
    assert table_bases == sorted(table_bases) and len(set(table_bases)) == len(table_bases)
    memory_bases = [library["memoryBase"] for library in libraries]
    assert len(set(memory_bases)) == len(memory_bases) and min(memory_bases) > 0
    assert max(memory_bases) < runtime["snapshot"]["size"]


def test_runtime_json_records_the_table_of_functions_a_restore_must_find(dist_dir):
    """What deck/js/worker/functiontable.js checks before the memory is used: the table once the libraries are placed."""
    snapshot = read_runtime(dist_dir)["snapshot"]
    libraries, table = snapshot["libraries"], snapshot["table"]
    # Each library's own slots come before the next library's, with the slots the linker gave its exports between.
    assert all(library["tableSize"] > 0 for library in libraries)
    for library, following in zip(libraries, libraries[1:]):
        assert library["tableBase"] + library["tableSize"] <= following["tableBase"]
    assert table["length"] >= libraries[-1]["tableBase"] + libraries[-1]["tableSize"]
    count, digest = table["got"].split(":")
    assert int(count) > len(libraries) and re.fullmatch(r"[0-9a-f]{8}", digest)
    # CPython's argument-counting helper, where the build's Node could compile it, has a slot before any library's.
    assert table["countArgs"] == 0 or table["countArgs"] < libraries[0]["tableBase"]


def test_the_inflated_size_is_read_from_the_gzip_trailer(tmp_path):
    path = tmp_path / "memoria.bin"
    path.write_bytes(gzip.compress(bytes(range(256)) * 1000))
    assert snapshots.measure_inflated(path) == 256_000


def shipped_pyodide(runtime: dict) -> ShippedPyodide:
    return ShippedPyodide(packages=runtime["packages"], preload=runtime["preload"], lazy=runtime["lazyPackages"],
                          boot_bytes=runtime["bytes"])


def test_the_cache_is_verified_on_every_hit_and_a_damaged_entry_is_taken_again(dist_dir, tmp_path, monkeypatch,
                                                                                capsys):
    runtime = read_runtime(dist_dir)
    out = tmp_path / "mazo"
    shutil.copytree(dist_dir / "pyodide", out / "pyodide")
    wheel = out / runtime["wheel"]
    wheel.parent.mkdir(parents=True)
    shutil.copyfile(dist_dir / runtime["wheel"], wheel)
    (out / "pyodide" / snapshots.SNAPSHOT_FILE).unlink()
    cache = tmp_path / "cache"
    first = snapshots.take_snapshot(out, shipped_pyodide(runtime), wheel, cache=cache)
    assert first.libraries == runtime["snapshot"]["libraries"] and first.table == runtime["snapshot"]["table"]
    # A hit needs no node at all.
    monkeypatch.setenv("PATH", "")
    assert snapshots.take_snapshot(out, shipped_pyodide(runtime), wheel, cache=cache) == first
    monkeypatch.undo()
    [entry] = [path for path in cache.iterdir() if path.is_dir()]
    stored = entry / snapshots.DESCRIPTION_FILE
    stored.write_text(stored.read_text(encoding="utf-8").replace('"memoryBase": ', '"memoryBase": 1'), encoding="utf-8")
    # A damaged entry is dropped (and the snapshot taken again, as the first time).
    assert snapshots.lookup_snapshot(entry) is None
    assert "dañada" in capsys.readouterr().out
    assert not entry.exists()


def test_a_deck_built_without_a_snapshot_boots_from_scratch(tmp_path):
    out = tmp_path / "mazo"
    build(FIXTURE_SLIDES, out, snapshot=False)
    assert "snapshot" not in read_runtime(out)
    assert not (out / "pyodide" / snapshots.SNAPSHOT_FILE).exists()


@pytest.fixture(autouse=True)
def _need_node():
    if shutil.which("node") is None:
        pytest.skip("hace falta node para tomar la instantánea con Pyodide")
