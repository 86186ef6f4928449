"""deck/js's rooms: each file imports only from where its code can run.

deck/js/page runs in the page (window, document), deck/js/worker in the Python
worker (self, no DOM), deck/js/offline is the service worker, and
deck/js/shared holds what the page and the worker both import. A page file
that imported a worker file would drag the worker's globals and guards into the
page's bundle (and the reverse); the service worker runs before either exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DECK_JS = ROOT / "deck" / "js"

# Which rooms a file in each room may import from (its own included).
ALLOWED_ROOMS = {
    "page": {"page", "shared"},
    "worker": {"worker", "shared"},
    "offline": {"offline", "shared"},
    "shared": {"shared"},
}

# `import … from "x"`, `export … from "x"`, `import "x"`, `import("x")` and
# `importScripts("x")`, but not Pyodide's `pyimport("x")` nor Python source in a
# template string (`from dpdeck import …` has no quotes).
IMPORT_SPECIFIER = re.compile(
    r"""(?:(?<![\w.$])import\s*(?:[\w*{}\s,$]+?\s*from\s*)?|(?<![\w.$])export\s*[\w*{}\s,$]+?\s*from\s*|"""
    r"""(?<![\w.$])import\s*\(\s*|(?<![\w.$])importScripts\s*\(\s*)["']([^"'\n]+)["']""")
LINE_COMMENT = re.compile(r"^\s*//.*$", re.MULTILINE)
BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.DOTALL)


def list_imports(source: str) -> list[str]:
    """Every module specifier a JavaScript source imports, comments left out."""
    code = LINE_COMMENT.sub("", BLOCK_COMMENT.sub("", source))
    return IMPORT_SPECIFIER.findall(code)


def room_of(path: Path, deck_js: Path) -> str | None:
    """The room a path under deck_js is in (its first folder), or None outside deck_js."""
    try:
        parts = path.relative_to(deck_js).parts
    except ValueError:
        return None
    return parts[0] if len(parts) > 1 else ""


def find_crossings(deck_js: Path) -> list[str]:
    """Every import in deck_js that leaves its room for one it may not use, and every file outside a room."""
    problems = []
    for path in sorted(deck_js.rglob("*.js")):
        name = path.relative_to(deck_js).as_posix()
        room = room_of(path, deck_js)
        if room not in ALLOWED_ROOMS:
            problems.append(f"{name}: no está en ninguna de {sorted(ALLOWED_ROOMS)}")
            continue
        for specifier in list_imports(path.read_text(encoding="utf-8")):
            if not specifier.startswith("."):
                continue  # an npm package, bundled by esbuild
            target_room = room_of((path.parent / specifier).resolve(), deck_js.resolve())
            if target_room is not None and target_room not in ALLOWED_ROOMS[room]:
                problems.append(f"{name} importa {specifier} ({target_room or 'deck/js'}/): "
                                f"{room}/ solo importa de {sorted(ALLOWED_ROOMS[room])}")
    return problems


def test_every_import_stays_in_its_room():
    assert find_crossings(DECK_JS) == []


def test_the_rooms_are_the_ones_the_build_bundles():
    assert sorted(path.name for path in DECK_JS.iterdir() if path.is_dir()) == sorted(ALLOWED_ROOMS)


def test_the_parser_sees_the_imports_the_entry_points_make():
    """If the pattern stopped matching, every room would look clean: the entry points' imports are seen."""
    page_imports = list_imports((DECK_JS / "page" / "main.js").read_text(encoding="utf-8"))
    worker_imports = list_imports((DECK_JS / "worker" / "worker.js").read_text(encoding="utf-8"))
    assert "./deck.js" in page_imports and len(page_imports) > 10
    assert "../shared/protocol.js" in worker_imports and "./boot.js" in worker_imports


@pytest.mark.parametrize("room, bad_import", [
    ("worker", 'import { isReceiver } from "../page/page.js";'),
    ("page", 'import {\n  CellScope,\n} from "../worker/cellscope.js";'),
    ("page", 'const later = () => import("../worker/warmup.js");'),
    ("offline", 'importScripts("../page/page.js");'),
    ("shared", 'export { REQUEST } from "../page/page.js";'),
])
def test_a_crossing_import_is_found(tmp_path, room, bad_import):
    for name in ALLOWED_ROOMS:
        (tmp_path / name).mkdir()
    (tmp_path / "page" / "page.js").write_text("export const isReceiver = false;\n")
    (tmp_path / "worker" / "cellscope.js").write_text("export class CellScope {}\n")
    (tmp_path / room / "bad.js").write_text(f'// from "../page/page.js" in a comment is fine\n{bad_import}\n')
    assert [problem.split(" importa ")[0] for problem in find_crossings(tmp_path)] == [f"{room}/bad.js"]


def test_a_file_outside_the_rooms_is_found(tmp_path):
    for name in ALLOWED_ROOMS:
        (tmp_path / name).mkdir()
    (tmp_path / "loose.js").write_text("export const x = 1;\n")
    assert find_crossings(tmp_path) == [f"loose.js: no está en ninguna de {sorted(ALLOWED_ROOMS)}"]


def test_python_and_pyimport_in_a_worker_file_are_not_imports():
    source = 'const CELL = `\nimport js\nfrom dpdeck import cellrun\n`;\npyodide.pyimport("gc");\n'
    assert list_imports(source) == []
