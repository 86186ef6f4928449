"""The built dist/: manifest, determinism, trimmed Pyodide lock, runtime.json and the dpdeck wheel."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from deck_fixtures import ROOT, SAMPLE_DECK, run_build, write_deck
from deckbuild.compress import CODINGS
from deckbuild.errors import BuildError
from deckbuild.package import check_stylesheet_urls, read_project_version
from deckbuild.pins import list_shipped_pins
from deckbuild.pyodide import LAZY_PACKAGES
from deckbuild.prerender import read_cached_outcome, write_cached_outcome
from deckbuild.render import check_no_font_preload, expect_first_slide


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def decode_copy(copy: Path, coding: str) -> bytes:
    """A compressed copy's original bytes: gzip by Python's own module, brotli by node's zlib (Python has none)."""
    if coding == "gzip":
        return gzip.decompress(copy.read_bytes())
    assert coding == "br", coding
    script = "process.stdout.write(require('zlib').brotliDecompressSync(require('fs').readFileSync(process.argv[1])))"
    return subprocess.run(["node", "-e", script, str(copy)], check=True, capture_output=True).stdout


def read_manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())["files"]


def test_manifest_lists_every_file_with_its_hash(dist_dir):
    listed = read_manifest(dist_dir)
    encoded = json.loads((dist_dir / "manifest.json").read_text())["encoded"]
    copies = {f"{path}.{CODINGS[coding]}": digest for path, codings in encoded.items()
              for coding, digest in codings.items()}
    present = {path.relative_to(dist_dir).as_posix() for path in dist_dir.rglob("*")
               if path.is_file() and path.name != "manifest.json"}
    assert set(listed) | set(copies) == present and not set(listed) & set(copies)
    mismatched = [name for name, digest in {**listed, **copies}.items() if sha256(dist_dir / name) != digest]
    assert mismatched == []


def test_compressed_copies_hold_exactly_their_file(dist_dir):
    """Every gzip copy inflates (Python's gzip, the independent reference) to its file; text, scripts and wasm have one."""
    encoded = json.loads((dist_dir / "manifest.json").read_text())["encoded"]
    for path in ("index.html", "js/main.js", "pyodide/pyodide.asm.wasm", "pyodide/pyodide.asm.js", "runtime.json"):
        assert set(encoded[path]) == {"br", "gzip"}, path
    for path in encoded:
        assert gzip.decompress((dist_dir / f"{path}.gz").read_bytes()) == (dist_dir / path).read_bytes(), path
    # Compressed already, or not worth a copy.
    assert not {path for path in encoded if path.endswith((".whl", ".zip", ".bin", ".png", ".woff2"))}


def test_contract_layout_is_present(dist_dir):
    files = read_manifest(dist_dir)
    for name in ("index.html", "runtime.json", "vendor/reveal/reveal.css", "vendor/reveal/reveal.js",
                 "vendor/reveal/plugin/notes/notes.js", "vendor/katex/katex.min.css",
                 "pyodide/pyodide.js", "pyodide/pyodide.asm.js", "pyodide/pyodide.asm.wasm",
                 "pyodide/python_stdlib.zip", "pyodide/pyodide-lock.json",
                 f"wheels/dpdeck-{read_project_version()}-py3-none-any.whl"):
        assert name in files, name
    assert any(name.startswith("vendor/katex/fonts/KaTeX_Main-Regular") for name in files)


def test_a_second_build_changes_nothing(sample_build, tmp_path):
    slides = write_deck(tmp_path / "slides", SAMPLE_DECK)
    again = tmp_path / "otra"
    result = run_build(slides, again)
    assert result.returncode == 0, result.stderr
    assert read_manifest(again) == read_manifest(sample_build)
    assert (again / "runtime.json").read_bytes() == (sample_build / "runtime.json").read_bytes()


def test_rebuilding_the_deck_reproduces_dist(dist_dir, tmp_path):
    slides = Path(os.environ.get("DPDECK_SLIDES", ROOT / "deck" / "slides"))
    result = run_build(slides, tmp_path / "dist")
    assert result.returncode == 0, result.stderr
    assert read_manifest(tmp_path / "dist") == read_manifest(dist_dir), \
        "dist/ no es lo que construyen las fuentes actuales: ejecuta «python3 build.py test»"


def test_a_warm_rebuild_replaces_dist_and_leaves_no_temporary_folders(sample_build, tmp_path):
    slides = write_deck(tmp_path / "slides", SAMPLE_DECK)
    out = tmp_path / "dist"
    shutil.copytree(sample_build, out)   # the previous build's dist/, as a build leaves it
    (out / "sobrante.txt").write_text("de la construcción anterior")
    result = run_build(slides, out)
    assert result.returncode == 0, result.stderr
    assert not (out / "sobrante.txt").exists()
    assert sorted(path.name for path in tmp_path.iterdir()) == ["dist", "slides"]
    assert "0 celdas" not in result.stdout and "(2 de la caché)" in result.stdout


def test_a_damaged_prerender_entry_is_dropped(tmp_path, capsys):
    path = tmp_path / "celda.json"
    outcome = {"status": "done", "outputs": [{"type": "value", "text": "42"}]}
    write_cached_outcome(path, outcome)
    assert read_cached_outcome(path) == outcome
    path.write_bytes(path.read_bytes().replace(b"42", b"43"))
    assert read_cached_outcome(path) is None
    assert not path.exists() and "dañado" in capsys.readouterr().out
    assert read_cached_outcome(tmp_path / "ausente.json") is None


def test_trimmed_lock_lists_exactly_the_shipped_wheels(dist_dir):
    lock = json.loads((dist_dir / "pyodide" / "pyodide-lock.json").read_text())
    official = json.loads((ROOT / "node_modules" / "pyodide" / "pyodide-lock.json").read_text())
    assert lock["info"] == official["info"] and lock["info"]["version"] == "0.27.7"
    expected = set()
    pending = ["numpy", "matplotlib", "micropip"]
    while pending:
        name = pending.pop()
        if name not in expected:
            expected.add(name)
            pending.extend(official["packages"][name]["depends"])
    assert set(lock["packages"]) == expected
    for name, entry in lock["packages"].items():
        # Shipped compiled to bytecode (their own SHA-256) and without the packages loaded on demand.
        unchanged = ("sha256", "depends")
        assert {key: value for key, value in entry.items() if key not in unchanged} == \
            {key: value for key, value in official["packages"][name].items() if key not in unchanged}
        assert set(entry["depends"]) == set(official["packages"][name]["depends"]) - set(LAZY_PACKAGES)
        assert sha256(dist_dir / "pyodide" / entry["file_name"]) == entry["sha256"], name
    wheels = {path.name for path in (dist_dir / "pyodide").glob("*.whl")}
    assert wheels == {entry["file_name"] for entry in lock["packages"].values()}


def test_runtime_json_describes_the_boot(dist_dir):
    runtime = json.loads((dist_dir / "runtime.json").read_text())
    assert runtime["pyodide"] == "pyodide/"
    assert runtime["packages"] == ["numpy", "matplotlib"]
    assert (dist_dir / runtime["wheel"]).is_file()
    lock = json.loads((dist_dir / "pyodide" / "pyodide-lock.json").read_text())
    lazy = {entry["name"]: entry for entry in runtime["lazyPackages"]}
    assert sorted(lazy) == sorted(LAZY_PACKAGES)
    for name, entry in lazy.items():
        assert entry["file"] == "pyodide/" + lock["packages"][name]["file_name"]
        assert entry["sha256"] == lock["packages"][name]["sha256"] == sha256(dist_dir / entry["file"])
        assert entry["imports"] == lock["packages"][name]["imports"]
    def integrity(path):
        return "sha256-" + base64.b64encode(hashlib.sha256(path.read_bytes()).digest()).decode()

    # What the boot loads is fetched early, each file with its Subresource Integrity.
    preload = {entry["file"]: entry["integrity"] for entry in runtime["preload"]}
    assert sorted(preload) == sorted("pyodide/" + entry["file_name"] for name, entry in lock["packages"].items()
                                     if name not in lazy)
    assert all(value == integrity(dist_dir / file) for file, value in preload.items())
    assert runtime["wheelIntegrity"] == integrity(dist_dir / runtime["wheel"])
    boot = ["pyodide.js", "pyodide.asm.js", "pyodide.asm.wasm", "python_stdlib.zip", "pyodide-lock.json"]
    boot += [entry["file_name"] for name, entry in lock["packages"].items() if name not in lazy]
    expected = sum((dist_dir / "pyodide" / name).stat().st_size for name in boot)
    assert runtime["bytes"] == expected + (dist_dir / runtime["wheel"]).stat().st_size
    assert len(runtime["version"]) == 16


def test_dpdeck_wheel_has_a_valid_record(dist_dir):
    runtime = json.loads((dist_dir / "runtime.json").read_text())
    with zipfile.ZipFile(dist_dir / runtime["wheel"]) as wheel:
        names = wheel.namelist()
        record_name = next(name for name in names if name.endswith(".dist-info/RECORD"))
        rows = [line.split(",") for line in wheel.read(record_name).decode().splitlines()]
        assert {row[0] for row in rows} == set(names)
        for name, digest, size in rows:
            if name == record_name:
                continue
            data = wheel.read(name)
            encoded = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == (f"sha256={encoded}", len(data)), name
        assert all(info.date_time == (1980, 1, 1, 0, 0, 0) for info in wheel.infolist())
    package = ROOT / "py" / "dpdeck"
    sources = sorted(path.relative_to(package).as_posix() for path in package.rglob("*.py"))
    assert sorted(name.partition("/")[2] for name in names if name.startswith("dpdeck/") and name.endswith(".py")) == sources


def test_dpdeck_wheel_imports_and_finds_the_census_inside(dist_dir, tmp_path):
    runtime = json.loads((dist_dir / "runtime.json").read_text())
    with zipfile.ZipFile(dist_dir / runtime["wheel"]) as wheel:
        wheel.extractall(tmp_path)
    probe = (
        "import sys, pathlib\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import dpdeck\n"
        f"assert pathlib.Path(dpdeck.__file__).parent == pathlib.Path({str(tmp_path / 'dpdeck')!r}), dpdeck.__file__\n"
        "from dpdeck.data import find_census_csv, load_census\n"
        "print(find_census_csv() == pathlib.Path(dpdeck.__file__).with_name('censo.csv'))\n"
        "print(len(load_census()))\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=tmp_path, timeout=120)
    assert result.returncode == 0, result.stderr
    found_inside, loaded = result.stdout.split()
    assert found_inside == "True"
    rows = sum(1 for _ in (ROOT / "assets" / "data" / "censo.csv").open(encoding="utf-8")) - 1
    assert int(loaded) == rows


def test_only_the_dpdeck_package_ships_never_the_build(dist_dir):
    """The wheel the browser installs holds dpdeck alone, and so does a setuptools build of the project."""
    import tomllib

    from setuptools import find_packages

    runtime = json.loads((dist_dir / "runtime.json").read_text())
    with zipfile.ZipFile(dist_dir / runtime["wheel"]) as wheel:
        top = {name.split("/")[0] for name in wheel.namelist()}
    assert top == {"dpdeck", f"dpdeck-{read_project_version()}.dist-info"}
    with open(ROOT / "pyproject.toml", "rb") as handle:
        found = tomllib.load(handle)["tool"]["setuptools"]["packages"]["find"]
    assert "deckbuild" in find_packages(where=str(ROOT / "py"))   # there is something to leave out
    found_packages = find_packages(where=str(ROOT / found["where"][0]), include=found["include"])
    assert sorted(found_packages) == sorted(
        ".".join(("dpdeck", *path.parent.relative_to(ROOT / "py" / "dpdeck").parts))
        for path in (ROOT / "py" / "dpdeck").rglob("__init__.py"))


def test_the_accessibility_checker_is_pinned_but_never_shipped(dist_dir):
    """axe-core is for the browser tests only: pinned, yet no file of dist/ is it or loads it."""
    from deckbuild.pins import find_pin

    axe = find_pin("axe-core", "axe.min.js")
    assert axe.ship == "" and axe not in list_shipped_pins()
    shipped = {sha256(dist_dir / name) for name in read_manifest(dist_dir)}
    assert axe.sha256 not in shipped
    page_files = [dist_dir / "index.html", dist_dir / "sw.js", *(dist_dir / "js").glob("*.js")]
    assert [path.name for path in page_files if re.search(r"\baxe(-core|\.min)", path.read_text())] == []


def test_the_fonts_are_the_pinned_files_declared_by_the_stylesheet(dist_dir):
    """dist/fonts/ holds exactly the pinned fonts, and compressed copies of them that hold exactly their file;
    css/main.css declares each font (woff2, swap, relative URL)."""
    pinned = {pin.ship: pin.sha256 for pin in list_shipped_pins() if pin.ship.startswith("fonts/")}
    in_folder = {path.relative_to(dist_dir).as_posix() for path in (dist_dir / "fonts").iterdir()}
    copy_suffixes = tuple(f".{suffix}" for suffix in CODINGS.values())
    shipped = {name for name in in_folder if not name.endswith(copy_suffixes)}
    assert shipped == set(pinned) and any(name.endswith(".woff2") for name in shipped)
    assert {name: sha256(dist_dir / name) for name in shipped} == pinned
    # Every other file is a copy the manifest lists for a pinned font, and decodes to that font's bytes.
    encoded = json.loads((dist_dir / "manifest.json").read_text())["encoded"]
    copies = {f"{name}.{CODINGS[coding]}": (name, coding, digest) for name in pinned
              for coding, digest in encoded.get(name, {}).items()}
    assert in_folder - shipped == set(copies)
    for copy, (name, coding, digest) in copies.items():
        assert sha256(dist_dir / copy) == digest, copy
        assert decode_copy(dist_dir / copy, coding) == (dist_dir / name).read_bytes(), copy
    stylesheet = (dist_dir / "css" / "main.css").read_text(encoding="utf-8")
    faces = re.findall(r"@font-face\s*{([^}]*)}", stylesheet)
    declared = {re.search(r"url\(\"?\.\./(fonts/[^)\"]+)", face).group(1) for face in faces}
    assert declared == {name for name in pinned if name.endswith(".woff2")}
    assert all("font-display:swap" in face.replace(" ", "") for face in faces)
    assert re.search(r'--dp-font:\s*"Arimo"', stylesheet) and re.search(r'--dp-mono:\s*"DejaVu Sans Mono"', stylesheet)


def test_the_first_frame_waits_for_the_first_slide_and_for_no_font(dist_dir):
    """The page holds its first frame until its first slide is parsed (rel=expect), never for a font.

    A preloaded font holds Chromium's first paint until it arrives; the faces swap in instead.
    """
    page = (dist_dir / "index.html").read_text(encoding="utf-8")
    first_section = re.search(r'<div class="slides">\s*<section[^>]*\bid="([^"]+)"', page).group(1)
    expected = re.findall(r'<link rel="expect" href="#([^"]+)" blocking="render">', page)
    assert expected == [first_section] and page.index('rel="expect"') < page.index("<body")
    assert expect_first_slide(SimpleNamespace(slides=[SimpleNamespace(attributes={})])) == ""
    check_no_font_preload(page)
    preload = '<link as="font" crossorigin rel="preload" href="fonts/arimo-latin-400-normal.woff2">'
    with pytest.raises(BuildError, match="precarga una letra"):
        check_no_font_preload(page.replace("<title>", preload + "<title>", 1))


def test_a_stylesheet_url_to_a_missing_file_or_an_unused_font_stops_the_build(dist_dir, tmp_path):
    deck = tmp_path / "mazo"
    (deck / "css").mkdir(parents=True)
    (deck / "fonts").mkdir()
    for name in ("css/main.css", *[pin.ship for pin in list_shipped_pins() if pin.ship.startswith("fonts/")]):
        (deck / name).write_bytes((dist_dir / name).read_bytes())
    check_stylesheet_urls(deck)
    (deck / "fonts" / "arimo-greek-400-normal.woff2").unlink()
    with pytest.raises(BuildError, match=r"css/main.css pide url\(\.\./fonts/arimo-greek-400-normal.woff2\)"):
        check_stylesheet_urls(deck)
    (deck / "css" / "main.css").write_text("body { color: black }")
    with pytest.raises(BuildError, match="letra fijada que ninguna hoja de estilo usa: fonts/arimo-greek-400-italic"):
        check_stylesheet_urls(deck)
