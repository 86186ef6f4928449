"""Run a module of deck/js under node: bundled by the same esbuild the build uses.

`run_with_module(module, script, *arguments)` runs `script` with the module's
exports in `deckModule.exports`; the script reads its own arguments from
`process.argv.slice(1)`, as any `node -e` script does.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ESBUILD = ROOT / "node_modules" / "esbuild"

# Takes esbuild's folder and the module's path off the front of argv, bundles the
# module for node (CommonJS, no platform assumptions) and evaluates it.
LOAD_MODULE_JS = r"""
const [esbuildPath, modulePath] = process.argv.splice(1, 2);
const esbuild = require(esbuildPath);
const bundle = esbuild.buildSync({entryPoints: [modulePath], bundle: true, write: false, format: 'cjs',
                                  platform: 'neutral', logLevel: 'silent'});
const deckModule = {exports: {}};
new Function('module', 'exports', bundle.outputFiles[0].text)(deckModule, deckModule.exports);
"""


def run_with_module(module: Path, script: str, *arguments: str, input: str | None = None,
                    timeout: float = 120) -> subprocess.CompletedProcess:
    """`script` under node with `module` (a file of deck/js) loaded; its output as text."""
    node = shutil.which("node")
    if node is None or not ESBUILD.is_dir():
        pytest.fail(f"hacen falta node y node_modules/esbuild para probar {module.name}: "
                    "«python3 build.py test» los instala")
    return subprocess.run([node, "-e", LOAD_MODULE_JS + script, str(ESBUILD), str(module), *arguments],
                          input=input, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
