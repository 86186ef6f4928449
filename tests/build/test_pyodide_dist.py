"""--pyodide-dist takes an official Pyodide 0.27.7 folder or tarball; every wheel is checked against the lock."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest

from deck_fixtures import ROOT, run_build, write_deck
from deckbuild.fetch import lookup_cache
from deckbuild.files import hash_file
from deckbuild.paths import CACHE

TINY_DECK = {"00.md": "# Solo texto\n"}


def fresh_cache(tmp_path):
    """An empty download cache that shares what is derived from the same verified inputs.

    (The bytecode, the snapshot, the compressed copies and the packages copy: keyed by their inputs' SHA-256.)
    """
    cache = tmp_path / "cache"
    cache.mkdir()
    for derived in ("precompiled", "snapshots", "compressed", "packagecopy"):
        (CACHE / derived).mkdir(parents=True, exist_ok=True)
        (cache / derived).symlink_to(CACHE / derived)
    return str(cache)


@pytest.fixture(scope="module")
def official_folder(tmp_path_factory, sample_build):
    """A folder laid out like the official distribution (pyodide/…), made from verified files."""
    folder = tmp_path_factory.mktemp("oficial") / "pyodide"
    folder.mkdir()
    npm = ROOT / "node_modules" / "pyodide"
    for name in ("pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"):
        shutil.copyfile(npm / name, folder / name)
    official = json.loads((npm / "pyodide-lock.json").read_text())["packages"]
    for name in json.loads((sample_build / "pyodide" / "pyodide-lock.json").read_text())["packages"]:
        entry = official[name]   # dist/ ships them compiled; the official files are in the download cache
        shutil.copyfile(lookup_cache(entry["sha256"], entry["file_name"]), folder / entry["file_name"])
    return folder


def pyodide_files(out):
    files = json.loads((out / "manifest.json").read_text())["files"]
    return {name: digest for name, digest in files.items() if name.startswith("pyodide/")}


def test_folder_gives_the_same_pyodide_files(official_folder, sample_build, tmp_path):
    slides = write_deck(tmp_path / "slides", TINY_DECK)
    result = run_build(slides, tmp_path / "dist", "--pyodide-dist", str(official_folder.parent),
                       env={"DPDECK_CACHE": fresh_cache(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert pyodide_files(tmp_path / "dist") == pyodide_files(sample_build)


def test_tarball_gives_the_same_pyodide_files(official_folder, sample_build, tmp_path):
    tarball = tmp_path / "pyodide-0.27.7.tar.gz"
    with tarfile.open(tarball, "w:gz", compresslevel=1) as archive:
        archive.add(official_folder, arcname="pyodide")
    slides = write_deck(tmp_path / "slides", TINY_DECK)
    result = run_build(slides, tmp_path / "dist", "--pyodide-dist", str(tarball),
                       env={"DPDECK_CACHE": fresh_cache(tmp_path)})
    assert result.returncode == 0, result.stderr
    assert pyodide_files(tmp_path / "dist") == pyodide_files(sample_build)


def test_a_wheel_that_differs_from_the_lock_stops_the_build(official_folder, tmp_path):
    tampered = tmp_path / "pyodide"
    shutil.copytree(official_folder, tampered)
    wheel = next(tampered.glob("numpy-*.whl"))
    wheel.write_bytes(wheel.read_bytes() + b"\0")
    slides = write_deck(tmp_path / "slides", TINY_DECK)
    (tmp_path / "dist").mkdir()
    (tmp_path / "dist" / "anterior.txt").write_text("intacto")
    (tmp_path / "dist" / "manifest.json").write_text('{"files": {}}')   # an earlier build
    result = run_build(slides, tmp_path / "dist", "--pyodide-dist", str(tampered),
                       env={"DPDECK_CACHE": fresh_cache(tmp_path)})
    assert result.returncode != 0
    assert wheel.name in result.stderr and "no coincide" in result.stderr, result.stderr
    assert sorted(path.name for path in (tmp_path / "dist").iterdir()) == ["anterior.txt", "manifest.json"]


@pytest.mark.parametrize("change, message", [
    ("info", "(su sección «info» es otra)"),
    ("unshipped", "cambian scipy"),
    ("garbage", "no se puede leer"),
])
def test_a_lock_that_is_not_the_pinned_official_one_stops_the_build(change, message, official_folder, tmp_path):
    """The lock from --pyodide-dist is compared with the pinned one, not only for the wheels the deck ships."""
    folder = tmp_path / "pyodide"
    shutil.copytree(official_folder, folder)
    lock_path = folder / "pyodide-lock.json"
    lock = json.loads(lock_path.read_text())
    if change == "info":
        lock["info"]["arch"] = "wasm64"
    elif change == "unshipped":
        lock["packages"]["scipy"]["sha256"] = "0" * 64
    lock_path.write_text("{roto" if change == "garbage" else json.dumps(lock))
    slides = write_deck(tmp_path / "slides", TINY_DECK)
    result = run_build(slides, tmp_path / "dist", "--pyodide-dist", str(folder),
                       env={"DPDECK_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 1, result.stdout
    assert message in result.stderr and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "dist").exists()


@pytest.mark.parametrize("content", [b"", b"\x1f\x8b\x08\x00basura" * 20, b"no es un tar"])
def test_a_damaged_tarball_is_said_plainly(content, tmp_path):
    tarball = tmp_path / "pyodide-0.27.7.tar.gz"
    tarball.write_bytes(content)
    slides = write_deck(tmp_path / "slides", TINY_DECK)
    result = run_build(slides, tmp_path / "dist", "--pyodide-dist", str(tarball),
                       env={"DPDECK_CACHE": str(tmp_path / "cache")})
    assert result.returncode == 1
    assert "--pyodide-dist: no se puede leer" in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_a_damaged_cache_entry_is_dropped_and_fetched_again(official_folder, tmp_path):
    slides = write_deck(tmp_path / "slides", TINY_DECK)
    cache = Path(fresh_cache(tmp_path))
    arguments = (slides, tmp_path / "dist", "--pyodide-dist", str(official_folder))
    assert run_build(*arguments, env={"DPDECK_CACHE": str(cache)}).returncode == 0
    cached = next(cache.glob("files/*/matplotlib-*.whl"))
    cached.write_bytes(b"roto")
    result = run_build(*arguments, env={"DPDECK_CACHE": str(cache)})
    assert result.returncode == 0, result.stderr
    assert "dañado" in result.stdout
    assert hash_file(cache / "files" / cached.parent.name / cached.name) == cached.parent.name
    assert (cached.parent / cached.name).read_bytes() == (official_folder / cached.name).read_bytes()
