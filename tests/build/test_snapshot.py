"""Pruebas de deckbuild/snapshot.py: Python's memory snapshot, taken at build time.

The shipped deck's runtime.json must describe the snapshot it ships (the
worker trusts it: integrity, size, the libraries to place again), the
libraries must come from the wheels it ships, and the cache must be checked
on every hit. Restoring it is tested in the browser (tests/browser/test_boot.py)
and piece by piece under node (tests/js/test_snapshot.py).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re
import shutil
import zipfile
from pathlib import Path

import pytest

from deckbuild import snapshot as snapshots
from deckbuild.errors import BuildError
from deckbuild.files import ensure_dir, hash_file, store_verified
from deckbuild.offline import split_precache
from deckbuild.paths import locate_npm_package
from deckbuild.pipeline import build
from deckbuild.pyodide import ShippedPyodide, make_integrity
from deckbuild.wasmdata import WASM_MAGIC, MainData, read_main_data

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
    memory = decode_main_data(gzip.decompress(shipped.read_bytes()), described["mainData"], dist_dir)
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


def decode_main_data(encoded: bytes, main_data: dict, dist: Path) -> bytes:
    """The snapshot as Python is restored from it: the interpreter's data XOR-ed back.

    The reference for the bytes: pyodide.asm.wasm's data section is its last
    section, and its one segment's bytes are the file's last `size` bytes.
    """
    offset, size = main_data["offset"], main_data["size"]
    data = (dist / "pyodide" / "pyodide.asm.wasm").read_bytes()[-size:]
    assert main_data["integrity"] == make_integrity(hashlib.sha256(data).hexdigest())
    # Where the worker writes it: Pyodide's header (its second word: where the memory starts) + the memory base.
    assert offset == int.from_bytes(encoded[4:8], "little") + main_data["address"]
    region = bytes(a ^ b for a, b in zip(encoded[offset:offset + size], data))
    return encoded[:offset] + region + encoded[offset + size:]


def test_the_interpreter_s_data_is_not_shipped_twice(dist_dir):
    """Most of the segment's bytes are zeros in the shipped file: they come with pyodide.asm.wasm."""
    described = read_runtime(dist_dir)["snapshot"]["mainData"]
    encoded = gzip.decompress((dist_dir / "pyodide" / snapshots.SNAPSHOT_FILE).read_bytes())
    region = encoded[described["offset"]:described["offset"] + described["size"]]
    assert described["address"] == 1024 and described["size"] > 4_000_000
    assert region.count(0) > 0.9 * described["size"]


def test_the_interpreter_s_data_is_found_in_pyodide_s_own_files(dist_dir):
    main = read_main_data(dist_dir / "pyodide" / "pyodide.asm.wasm", dist_dir / "pyodide" / "pyodide.asm.js")
    described = read_runtime(dist_dir)["snapshot"]["mainData"]
    assert (main.address, len(main.data)) == (described["address"], described["size"])


def make_module(*sections: tuple[int, bytes]) -> bytes:
    """A WebAssembly module of `sections` (id, contents), for the reader's bad inputs."""
    return WASM_MAGIC + b"".join(bytes([section_id, len(body)]) + body for section_id, body in sections)


GLOBAL_IMPORT = bytes([1, 3]) + b"env" + bytes([13]) + b"__memory_base" + bytes([3, 0x7F, 0])
LOADER = '__memory_base=new WebAssembly.Global({"value":"i32","mutable":false},1024)'


@pytest.mark.parametrize(("module", "loader", "message"), [
    (b"no soy wasm", LOADER, "no es un módulo WebAssembly"),
    (make_module((2, GLOBAL_IMPORT)), LOADER, "no tiene sección de datos"),
    (make_module((2, GLOBAL_IMPORT), (11, bytes([2, 0, 0x23, 0, 0x0B, 1, 7, 0, 0x23, 0, 0x0B, 1, 7]))), LOADER,
     "un solo segmento"),
    (make_module((2, GLOBAL_IMPORT), (11, bytes([1, 0, 0x41, 8, 0x0B, 1, 7]))), LOADER, "base de memoria"),
    (make_module((11, bytes([1, 0, 0x23, 0, 0x0B, 1, 7]))), LOADER, "no se coloca en __memory_base"),
    (make_module((2, GLOBAL_IMPORT), (11, bytes([1, 0, 0x23, 0, 0x0B, 9, 7]))), LOADER, "termina antes de tiempo"),
    (make_module((2, GLOBAL_IMPORT), (11, bytes([1, 0, 0x23, 0, 0x0B, 1, 7]))), "var x = 1;", "no dice el valor"),
])
def test_a_pyodide_whose_data_cannot_be_found_stops_the_build(tmp_path, module, loader, message):
    (tmp_path / "pyodide.asm.wasm").write_bytes(module)
    (tmp_path / "pyodide.asm.js").write_text(loader, encoding="utf-8")
    with pytest.raises(BuildError, match=message):
        read_main_data(tmp_path / "pyodide.asm.wasm", tmp_path / "pyodide.asm.js")


def test_a_well_formed_module_gives_its_segment_and_the_loader_s_address(tmp_path):
    (tmp_path / "pyodide.asm.wasm").write_bytes(make_module((2, GLOBAL_IMPORT), (11, bytes([1, 0, 0x23, 0, 0x0B, 2, 7, 9]))))
    (tmp_path / "pyodide.asm.js").write_text(LOADER, encoding="utf-8")
    assert read_main_data(tmp_path / "pyodide.asm.wasm", tmp_path / "pyodide.asm.js") == MainData(1024, bytes([7, 9]))


def test_encoding_xors_the_data_out_and_refuses_a_wrong_address():
    header = (0x706E7300).to_bytes(4, "little") + (16).to_bytes(4, "little") + bytes(8)
    memory = bytearray(header + bytes(4) + "datos del intérprete".encode().ljust(24, b"-"))
    main = MainData(4, bytes(memory[20:44]))
    encoded = bytearray(memory)
    described = snapshots.encode_snapshot(encoded, main)
    assert described["offset"] == 20 and described["size"] == 24
    assert encoded[:20] == memory[:20] and encoded[20:] == bytes(24)
    with pytest.raises(BuildError, match="coincide"):
        snapshots.encode_snapshot(bytearray(memory), MainData(0, bytes(memory[20:44])))


def test_the_files_a_figure_reads_come_alone_in_their_own_zip(dist_dir):
    """matplotlib's fonts, as the wheel holds them, without the folders the warm-up's imports listed."""
    described = read_runtime(dist_dir)["snapshot"]
    figure_files = described["figureFiles"]
    assert "matplotlib/mpl-data/fonts/ttf/DejaVuSans.ttf" in figure_files
    assert all(Path(file).suffix for file in figure_files), figure_files
    shipped = dist_dir / described["figureFilesFile"]
    assert described["figureFilesIntegrity"] == make_integrity(hash_file(shipped))
    wheel = next(dist_dir.glob("pyodide/matplotlib-*.whl"))
    with zipfile.ZipFile(shipped) as alone, zipfile.ZipFile(wheel) as whole:
        assert alone.namelist() == figure_files
        assert all(alone.read(name) == whole.read(name) for name in figure_files)


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


def store_shipped_snapshot(dist: Path, out: Path, runtime: dict, wheel: Path, cache: Path) -> Path:
    """The cache entry take_snapshot looks for in `cache`, made of what dist/ ships: its snapshot file (the
    cached file is copied unchanged) and the description runtime.json gives of it.

    Taking one boots Pyodide twice and compresses 60 MB (16 s of a core): test_toolchain's second clone takes
    one in its own environment, and its dist/ must be byte for byte the one built from the suite's snapshot.
    """
    described = runtime["snapshot"]
    scratch = ensure_dir(cache / "hecha")
    shutil.copyfile(dist / described["file"], scratch / snapshots.SNAPSHOT_FILE)
    memory_sha256 = base64.b64decode(described["memoryIntegrity"].removeprefix("sha256-")).hex()
    (scratch / snapshots.DESCRIPTION_FILE).write_text(json.dumps(
        {"libraries": described["libraries"], "table": described["table"], "figureFiles": described["figureFiles"],
         "memorySha256": memory_sha256, "mainData": described["mainData"]}, indent=1) + "\n", encoding="utf-8")
    wheels = snapshots.list_wheels(out, shipped_pyodide(runtime), wheel)
    entry = cache / snapshots.make_cache_key(out / "pyodide", wheels, locate_npm_package("pyodide") / "pyodide.mjs")
    store_verified(entry, {name: scratch / name for name in (snapshots.SNAPSHOT_FILE, snapshots.DESCRIPTION_FILE)})
    scratch.rmdir()
    return entry


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
    entry = store_shipped_snapshot(dist_dir, out, runtime, wheel, cache)
    # A hit needs no node at all, and gives the deck what the snapshot's first build gave it.
    monkeypatch.setenv("PATH", "")
    hit = snapshots.take_snapshot(out, shipped_pyodide(runtime), wheel, cache=cache)
    monkeypatch.undo()
    assert {**hit.describe(), "bytes": hit.boot_bytes} == runtime["snapshot"]
    assert [path for path in cache.iterdir()] == [entry]
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
