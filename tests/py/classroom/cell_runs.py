"""Running a cell the way the cell tests do: its source dedented, its outputs picked by kind."""

from __future__ import annotations

import textwrap

from dpdeck.classroom.cellrun import run_cell


def run(source, **options):
    return run_cell(textwrap.dedent(source), **options)


def outputs_of(result, kind):
    return [output for output in result["outputs"] if output["type"] == kind]
