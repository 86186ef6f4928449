"""The errors the build reports without a traceback, and a stop asked by a signal (standard library only)."""

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


class Interrupted(KeyboardInterrupt):
    """The process was asked to stop by a signal (SIGTERM from `kill` or a CI timeout, SIGHUP).

    Raised from the signal's handler (`stop_on_signals`), so that a build
    unwinds as it does for Ctrl+C: the temporary folder is removed and the
    previous output stays as it was.
    """

    def __init__(self, signal_number: int):
        import signal

        super().__init__(signal.Signals(signal_number).name)
        self.signal_number = signal_number


def stop_on_signals() -> None:
    """SIGTERM and SIGHUP raise `Interrupted` in the main thread instead of ending the process silently."""
    import signal

    def interrupt(signal_number, _frame):
        raise Interrupted(signal_number)

    for name in ("SIGTERM", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), interrupt)
