"""Pruebas de dpdeck.figure_descriptions: la frase que cada figura lleva como texto alternativo."""

from __future__ import annotations

import pytest

from dpdeck.figure_descriptions import describe_figure, figure_description


def test_a_figure_carries_the_description_its_function_gives_it():
    class Drawing:  # anything a figure function returns
        pass

    drawing = Drawing()
    assert figure_description(drawing) is None
    assert describe_figure(drawing, "  Densidades\nde Laplace  ") is drawing
    assert figure_description(drawing) == "Densidades de Laplace"
    with pytest.raises(ValueError, match="vacía"):
        describe_figure(drawing, "  ")
