"""Bytecode compiled at build time by Pyodide 0.27.7 itself, and matplotlib's font list.

The shipped standard library and wheels hold bytecode with the magic number the
shipped interpreter declares; matplotlib's font list is one its matplotlib accepts;
the compiler's cache is keyed by its inputs and re-verified on every hit.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from deck_fixtures import ROOT
from deckbuild import precompile
from deckbuild.errors import BuildError
from deckbuild.fetch import lookup_cache
from deckbuild.files import hash_file

NPM_PYODIDE = ROOT / "node_modules" / "pyodide"
# PEP 552: a hash-based .pyc that is used without checking its source.
UNCHECKED_HASH_FLAGS = (1).to_bytes(4, "little")


def declared_magic() -> bytes:
    """The magic number the official standard library's importlib declares (independent of any .pyc)."""
    with zipfile.ZipFile(NPM_PYODIDE / "python_stdlib.zip") as archive:
        source = archive.read("importlib/_bootstrap_external.py").decode()
    number = int(re.search(r"MAGIC_NUMBER = \((\d+)\)\.to_bytes\(2, 'little'\) \+ b'\\r\\n'", source)[1])
    return number.to_bytes(2, "little") + b"\r\n"


def shipped_archives(dist: Path) -> list[Path]:
    runtime = json.loads((dist / "runtime.json").read_text())
    return [dist / "pyodide" / "python_stdlib.zip", *sorted((dist / "pyodide").glob("*.whl")), dist / runtime["wheel"]]


def official_wheel(name: str) -> Path:
    """The verified original wheel of a package, from the build's download cache."""
    entry = json.loads((NPM_PYODIDE / "pyodide-lock.json").read_text())["packages"][name]
    path = lookup_cache(entry["sha256"], entry["file_name"])
    if path is None:
        pytest.skip(f"{entry['file_name']} no está en la caché de la construcción")
    return path


def test_every_shipped_module_is_bytecode_for_the_shipped_interpreter(dist_dir):
    magic = declared_magic()
    assert magic == bytes.fromhex("cb0d0d0a")  # CPython 3.12, as Pyodide 0.27.7 runs it
    for archive in shipped_archives(dist_dir):
        with zipfile.ZipFile(archive) as opened:
            names = opened.namelist()
            compiled = [name for name in names if name.endswith(".pyc")]
            assert compiled, f"{archive.name} no tiene bytecode"
            for name in compiled:
                header = opened.read(name)[:8]
                assert header == magic + UNCHECKED_HASH_FLAGS, f"{archive.name}: {name}"
            if archive.name.startswith("dpdeck-"):
                continue
            assert [name for name in names if name.endswith(".py")] == [], archive.name


def test_small_files_of_a_wheel_are_stored_and_the_standard_library_stays_deflated(dist_dir):
    """The worker inflates a wheel file by file: a small one is cheaper stored (precompile_pyodide.choose_compression)."""
    threshold = 16 * 1024
    for archive in shipped_archives(dist_dir):
        with zipfile.ZipFile(archive) as opened:
            files = [info for info in opened.infolist() if not info.is_dir()]
        if archive.name == "python_stdlib.zip":
            assert {info.compress_type for info in files} == {zipfile.ZIP_DEFLATED}
            continue
        for info in files:
            expected = zipfile.ZIP_STORED if info.file_size < threshold else zipfile.ZIP_DEFLATED
            assert info.compress_type == expected, f"{archive.name}: {info.filename} ({info.file_size} bytes)"


def test_the_dpdeck_wheel_keeps_its_sources_beside_their_bytecode(dist_dir):
    runtime = json.loads((dist_dir / "runtime.json").read_text())
    with zipfile.ZipFile(dist_dir / runtime["wheel"]) as wheel:
        names = set(wheel.namelist())
    package = ROOT / "py" / "dpdeck"
    sources = sorted(path.relative_to(package) for path in package.rglob("*.py"))
    assert len(sources) > len(list(package.glob("*.py")))   # the subpackages' modules are in the list
    for source in sources:
        assert f"dpdeck/{source.as_posix()}" in names
        assert f"dpdeck/{(source.parent / '__pycache__' / source.stem).as_posix()}.cpython-312.pyc" in names, source


def test_the_shipped_font_list_is_the_one_matplotlib_expects(dist_dir):
    original = official_wheel("matplotlib")
    with zipfile.ZipFile(original) as wheel:
        expected = int(re.search(r"^    __version__ = (\d+)$", wheel.read("matplotlib/font_manager.py").decode(),
                                 re.MULTILINE)[1])
        rejected = json.loads(wheel.read("matplotlib/fontlist.json"))["_version"]
    assert rejected != expected  # what makes Pyodide 0.27.7 rebuild it on every boot
    shipped = next((dist_dir / "pyodide").glob("matplotlib-*.whl"))
    with zipfile.ZipFile(shipped) as wheel:
        font_list = json.loads(wheel.read("matplotlib/fontlist.json"))
        names = set(wheel.namelist())
    assert font_list["_version"] == expected
    entries = font_list["ttflist"] + font_list["afmlist"]
    assert len(font_list["ttflist"]) > 30 and len(font_list["afmlist"]) > 30
    assert {entry["fname"] for entry in entries if f"matplotlib/mpl-data/{entry['fname']}" not in names} == set()
    assert "DejaVu Sans" in {entry["name"] for entry in font_list["ttflist"]}
    for fonts in (font_list["ttflist"], font_list["afmlist"]):
        # in FontManager's own order the list changes with every start of Python
        assert [entry["fname"] for entry in fonts] == sorted(entry["fname"] for entry in fonts)


PYPLOT_PROBE = r"""
const { loadPyodide } = require(process.argv[1] + "pyodide.js");
(async () => {
  const messages = [];
  const pyodide = await loadPyodide({ indexURL: process.argv[1], packages: ["numpy", "matplotlib"],
    env: { MPLBACKEND: "Agg" }, stdout: (text) => messages.push(text), stderr: (text) => messages.push(text) });
  const answer = pyodide.runPython(`
import json, sys, matplotlib.pyplot
json.dumps({"pyplot": sys.modules["matplotlib.pyplot"].__file__,
            "fonts": len(matplotlib.font_manager.fontManager.ttflist),
            "lazy": [name for name in ("fontTools", "pytz", "micropip") if name in sys.modules]})
`);
  process.stdout.write(JSON.stringify({ answer: JSON.parse(answer), messages }));
})().catch((error) => { process.stderr.write(String(error && error.stack || error)); process.exit(1); });
"""


def test_shipped_pyodide_imports_pyplot_from_bytecode_without_rebuilding_fonts(dist_dir):
    """Pyodide 0.27.7 under Node, with dist/pyodide/ as it is shipped."""
    result = subprocess.run(["node", "-e", PYPLOT_PROBE, str(dist_dir / "pyodide") + "/"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert not [line for line in report["messages"] if "font cache" in line], report["messages"]
    assert report["answer"]["pyplot"] == "/lib/python3.12/site-packages/matplotlib/pyplot.pyc"
    assert report["answer"]["fonts"] > 30
    # Loading matplotlib no longer brings fontTools, pytz or micropip along.
    assert report["answer"]["lazy"] == []


def test_the_shipped_lock_lists_each_archive_with_its_own_hash(dist_dir):
    lock = json.loads((dist_dir / "pyodide" / "pyodide-lock.json").read_text())
    official = json.loads((NPM_PYODIDE / "pyodide-lock.json").read_text())
    for name, entry in lock["packages"].items():
        shipped = dist_dir / "pyodide" / entry["file_name"]
        assert hashlib.sha256(shipped.read_bytes()).hexdigest() == entry["sha256"], name
        assert entry["sha256"] != official["packages"][name]["sha256"], f"{name} no se compiló"
        same = {key: value for key, value in entry.items() if key not in ("sha256", "depends")}
        assert same == {key: value for key, value in official["packages"][name].items()
                        if key not in ("sha256", "depends")}
        assert set(entry["depends"]) <= set(official["packages"][name]["depends"])


# ----------------------------------------------------------------- the compiler and its cache


def write_wheel(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as wheel:
        for name, data in members.items():
            wheel.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)
    return path


TINY_WHEEL = {
    "tiny/__init__.py": b"ANSWER = 42\n",
    "tiny/py2.py": b"print 'syntax of another Python'\n",
    "tiny/datos.csv": b"a,b\n1,2\n",
    "tiny-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tiny\nVersion: 1.0\n",
    "tiny-1.0.dist-info/RECORD": b"",
}


def compile_tiny(tmp_path: Path, cache: Path, *, keep_sources: bool = False) -> Path:
    wheel = tmp_path / "tiny-1.0-py3-none-any.whl"
    if not wheel.exists():
        write_wheel(wheel, TINY_WHEEL)
    archive = precompile.Archive(wheel.name, wheel, hash_file(wheel), "wheel", precompile.SITE_PACKAGES,
                                 keep_sources=keep_sources)
    return precompile.compile_archives([archive], cache=cache)[wheel.name]


# Each compilation boots Pyodide under Node (3 s of a core): the tests share the few the file needs.
@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, Path]:
    """The tiny wheel compiled alone, into a cache of its own: (that cache, the compiled wheel)."""
    folder = tmp_path_factory.mktemp("sola")
    return folder / "cache", compile_tiny(folder, folder / "cache")


OTHER_WHEEL = {"otra/__init__.py": b"B = 2\n" * 50}


@pytest.fixture(scope="module")
def side_by_side(tmp_path_factory) -> dict[str, Path]:
    """The tiny wheel and another one (compiled keeping its sources), in two Node processes at once."""
    folder = tmp_path_factory.mktemp("juntas")
    tiny_wheel = write_wheel(folder / "tiny-1.0-py3-none-any.whl", TINY_WHEEL)
    other = write_wheel(folder / "otra-1.0-py3-none-any.whl", OTHER_WHEEL)
    archives = [precompile.Archive(tiny_wheel.name, tiny_wheel, hash_file(tiny_wheel), "wheel", precompile.SITE_PACKAGES),
                precompile.Archive(other.name, other, hash_file(other), "wheel", precompile.SITE_PACKAGES,
                                   keep_sources=True)]
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(precompile.os, "cpu_count", lambda: 2)
        assert len(precompile.split_by_size(archives, 2)) == 2
        return precompile.compile_archives(archives, cache=folder / "cache")


def read_record(wheel: zipfile.ZipFile) -> dict[str, tuple[str, str]]:
    record = next(name for name in wheel.namelist() if name.endswith(".dist-info/RECORD"))
    return {row[0]: (row[1], row[2]) for row in (line.split(",") for line in wheel.read(record).decode().splitlines())}


def test_a_compiled_wheel_keeps_data_and_uncompilable_files_and_lists_them_all(tiny):
    _, compiled = tiny
    with zipfile.ZipFile(compiled) as wheel:
        names = wheel.namelist()
        assert "tiny/__init__.pyc" in names and "tiny/__init__.py" not in names
        assert "tiny/py2.py" in names and "tiny/py2.pyc" not in names
        assert wheel.read("tiny/datos.csv") == TINY_WHEEL["tiny/datos.csv"]
        record = read_record(wheel)
        assert set(record) == set(names)
        for name in names:
            if name.endswith("RECORD"):
                continue
            data = wheel.read(name)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert record[name] == (f"sha256={digest}", str(len(data))), name
        assert all(info.date_time == (1980, 1, 1, 0, 0, 0) for info in wheel.infolist())


def test_keeping_sources_puts_bytecode_where_the_import_system_looks(side_by_side):
    with zipfile.ZipFile(side_by_side["otra-1.0-py3-none-any.whl"]) as wheel:
        names = set(wheel.namelist())
    assert {"otra/__init__.py", "otra/__pycache__/__init__.cpython-312.pyc"} <= names


def test_the_cache_is_verified_on_every_hit_and_a_damaged_entry_is_compiled_again(tiny, tmp_path, monkeypatch,
                                                                                  capsys):
    compiled_in, compiled = tiny
    cache = tmp_path / "cache"
    shutil.copytree(compiled_in, cache)
    digest = hash_file(compiled)
    # A hit needs no compiler at all.
    monkeypatch.setenv("PATH", "")
    first = compile_tiny(tmp_path, cache)
    assert first == cache / compiled.relative_to(compiled_in) and hash_file(first) == digest
    monkeypatch.undo()
    first.write_bytes(first.read_bytes()[:-10] + b"0123456789")
    again = compile_tiny(tmp_path, cache)
    assert "dañado" in capsys.readouterr().out
    # The output depends only on the input: compiled again, in another cache, the same bytes.
    assert hash_file(again) == digest
    assert sorted(path.name for path in cache.iterdir()) == [first.parent.name]


def test_archives_are_split_into_groups_of_about_equal_size(tmp_path):
    archives = []
    for name, size in {"a": 900, "b": 500, "c": 400, "d": 100}.items():
        path = tmp_path / f"{name}.whl"
        path.write_bytes(b"x" * size)
        archives.append(precompile.Archive(path.name, path, "0" * 64, "wheel", precompile.SITE_PACKAGES))
    names = lambda groups: [[archive.file_name for archive in group] for group in groups]   # noqa: E731
    assert names(precompile.split_by_size(archives, 2)) == [["a.whl", "d.whl"], ["b.whl", "c.whl"]]
    assert names(precompile.split_by_size(archives, 8)) == [["a.whl"], ["b.whl"], ["c.whl"], ["d.whl"]]
    assert names(precompile.split_by_size(archives, 1)) == [["a.whl", "b.whl", "c.whl", "d.whl"]]
    assert precompile.split_by_size([], 2) == []


def test_archives_compiled_side_by_side_are_the_bytes_compiled_alone(tiny, side_by_side):
    _, alone = tiny
    assert hash_file(side_by_side["tiny-1.0-py3-none-any.whl"]) == hash_file(alone)
    with zipfile.ZipFile(side_by_side["otra-1.0-py3-none-any.whl"]) as wheel:
        assert "otra/__pycache__/__init__.cpython-312.pyc" in wheel.namelist()


def test_a_compiler_failure_names_the_archives(tmp_path):
    broken = write_wheel(tmp_path / "roto-1.0-py3-none-any.whl", {"roto/__init__.py": b"x = 1\n"})
    broken.write_bytes(b"esto no es un zip")
    archive = precompile.Archive(broken.name, broken, hash_file(broken), "wheel", precompile.SITE_PACKAGES)
    with pytest.raises(BuildError, match="roto-1.0-py3-none-any.whl"):
        precompile.compile_archives([archive], cache=tmp_path / "cache")
    assert not [path for path in (tmp_path / "cache").rglob("*") if path.is_file()]


@pytest.fixture(autouse=True, scope="module")   # before the module's compilations
def _need_node():
    if shutil.which("node") is None:
        pytest.skip("hace falta node para compilar con Pyodide")
