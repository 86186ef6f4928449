"""The two kinds of error the build reports without a traceback (standard library only)."""

from __future__ import annotations

from pathlib import Path

from .paths import display_path


class BuildError(Exception):
    """A problem the person running the build must fix; printed without a traceback."""


class SourceError(BuildError):
    """A problem in a slide source, located by file and line."""

    def __init__(self, path: Path, line: int, message: str):
        super().__init__(f"{display_path(path)}:{line}: {message}")
        self.path, self.line, self.message = Path(path), line, message
