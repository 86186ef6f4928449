"""Running outside programs and timing build steps (standard library only)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path

from .errors import BuildError
from .paths import ROOT

NODE_SCRIPTS = Path(__file__).resolve().parent / "js"


@contextlib.contextmanager
def step(label: str):
    """Print a build step with its duration."""
    started = time.perf_counter()
    print(f"· {label}…", flush=True)
    yield
    print(f"  ✓ {label} ({time.perf_counter() - started:.2f} s)", flush=True)


def run_command(command: list, *, what: str, cwd: Path = ROOT, env: dict | None = None,
                input_text: str | None = None, capture: bool = False) -> subprocess.CompletedProcess:
    """Run a command; a failure becomes a BuildError naming what was being done."""
    try:
        # UTF-8 whatever the locale: KaTeX's HTML and the slides' text are not ASCII.
        result = subprocess.run([str(part) for part in command], cwd=cwd, env=env, input=input_text,
                                text=True, encoding="utf-8", errors="replace", capture_output=capture)
    except FileNotFoundError:
        raise BuildError(f"{what}: no se encuentra el programa «{command[0]}»") from None
    if result.returncode != 0:
        detail = (result.stderr or result.stdout or "").strip() if capture else ""
        raise BuildError(f"{what} falló (código {result.returncode})" + (f":\n{detail}" if detail else ""))
    return result


def make_node_environment() -> dict[str, str]:
    """The whole environment node runs in: nothing of the caller's but PATH.

    NODE_OPTIONS or NODE_PATH could load other code, and ESBUILD_BINARY_PATH
    another esbuild program: esbuild's JS API starts exactly the pinned program
    for this platform, verified just before (deckbuild.pins).
    """
    from .pins import locate_esbuild_binary   # standard library only, like this module

    return {"PATH": os.environ.get("PATH", os.defpath), "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TZ": "UTC",
            "ESBUILD_BINARY_PATH": str(locate_esbuild_binary())}


def run_node_script(name: str, *arguments, what: str, input_text: str | None = None) -> str:
    """Run one of deckbuild/js/*.js with node; return what it printed."""
    result = run_command(["node", NODE_SCRIPTS / name, *arguments], what=what, input_text=input_text,
                         capture=True, env=make_node_environment())
    return result.stdout
