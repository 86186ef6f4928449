"""Where the deck's sources, caches and outputs live (standard library only)."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV = ROOT / ".venv"
CACHE = Path(os.environ.get("DPDECK_CACHE", ROOT / ".cache")).resolve()
NODE_MODULES = ROOT / "node_modules"
PY_PACKAGE = ROOT / "py" / "dpdeck"
CENSUS = ROOT / "assets" / "data" / "censo.csv"
DECK = ROOT / "deck"
TEMPLATE = DECK / "template.html"
DEFAULT_SLIDES = DECK / "slides"
DEFAULT_OUT = ROOT / "dist"


def list_package_files() -> list[Path]:
    """The dpdeck package's sources and data (every .py and .json under py/dpdeck/), in a stable order."""
    files = (path for pattern in ("*.py", "*.json") for path in PY_PACKAGE.rglob(pattern)
             if "__pycache__" not in path.parts)
    return sorted(files, key=lambda path: path.relative_to(PY_PACKAGE).as_posix())


def display_path(path: Path) -> str:
    """Show a path relative to the repository when it is inside it."""
    try:
        return str(Path(path).resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def locate_npm_package(name: str) -> Path:
    return NODE_MODULES / name
