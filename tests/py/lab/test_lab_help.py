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
