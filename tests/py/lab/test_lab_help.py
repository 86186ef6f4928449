"""``python -m dpdeck.lab --help``: what the terminal shows is plain Spanish text."""

from __future__ import annotations

import pytest

from dpdeck import lab


def test_the_help_names_the_contract_without_markup(capsys):
    with pytest.raises(SystemExit) as stop:
        lab.main(["--help"])
    assert stop.value.code == 0
    shown = capsys.readouterr().out
    assert "usage: python -m dpdeck.lab" in shown
    assert "``" not in shown and "kind, seed, inputs, results, evidence y limitations" in " ".join(shown.split())


def test_running_the_file_says_how_to_run_the_module():
    import subprocess
    import sys
    from pathlib import Path

    loose_file = Path(lab.__file__).with_name("__main__.py")
    run = subprocess.run([sys.executable, str(loose_file), "--seed", "0"], capture_output=True, text=True,
                         timeout=60)
    assert run.returncode == 1
    assert "python -m dpdeck.lab --seed N" in run.stderr and "Traceback" not in run.stderr
