"""dpdeck.numbers: the one number format of everything a student reads."""

from __future__ import annotations

import pytest

from dpdeck.numbers import (
    MINUS_SIGN,
    PERCENT_SIGN,
    THOUSANDS_SEPARATOR,
    format_number,
    format_percent,
    format_power_of_ten,
    format_significant,
    format_vector,
)


@pytest.mark.parametrize("value, decimals, text", [
    (0.5, None, "0,5"),
    (1.65, 2, "1,65"),
    (2, None, "2"),
    (2.0, None, "2"),
    (3236.233, 0, "3236"),
    (5000, None, "5000"),
    (36.49, 1, "36,5"),
    (79_432.8, 0, "79 433"),
    (99_999, None, "99 999"),
    (4_588_248, None, "4 588 248"),
    (1_000_000_000, 0, "1 000 000 000"),
    (1_234_567.5, 1, "1 234 567,5"),
    (-0.25, None, "\u22120,25"),
    (-12_345, 0, "\u221212 345"),
    (-0.004, 2, "0,00"),
    (1e-7, None, "0,0000001"),
])
def test_format_number_writes_spanish_numbers(value, decimals, text):
    assert format_number(value, decimals) == text


@pytest.mark.parametrize("value, decimals, text", [
    (9594, None, "9 594"),
    (99_999, None, "99 999"),
    (36.49, 1, "36,5"),
    (1234.5, 1, "1 234,5"),
    (-4321, None, "\u22124 321"),
])
def test_format_number_can_group_four_digit_numbers(value, decimals, text):
    assert format_number(value, decimals, group_thousands=True) == text


@pytest.mark.parametrize("value, text", [
    (0.095, "0,095"),
    (55.7769, "55,8"),
    (3236.23, "3236"),
    (1_000_000, "1 000 000"),
    (0.5, "0,5"),
    (1.0, "1"),
    (12_345.6, "12 346"),
])
def test_format_significant_keeps_three_digits_without_trailing_zeros(value, text):
    assert format_significant(value) == text


@pytest.mark.parametrize("value, decimals, text", [
    (0.731, 1, "73,1\u00a0%"),
    (0.76, 0, "76\u00a0%"),
    (0.9318, 0, "93\u00a0%"),
])
def test_format_percent_separates_the_sign_with_a_nonbreaking_space(value, decimals, text):
    assert format_percent(value, decimals) == text


@pytest.mark.parametrize("value, text", [
    (2e-4, "2·10⁻⁴"),
    (1e-5, "10⁻⁵"),
    (4e-8, "4·10⁻⁸"),
    (1e4, "10⁴"),
    (2.5e-6, "2,5·10⁻⁶"),
])
def test_format_power_of_ten_writes_superscripts(value, text):
    assert format_power_of_ten(value) == text


def test_the_rule_has_one_separator_one_minus_and_one_percent_sign():
    assert THOUSANDS_SEPARATOR == " " and MINUS_SIGN == "\u2212" and PERCENT_SIGN == "\u00a0%"
    # Nothing a formatter writes contains a decimal point or a Python digit separator.
    for value in (0.5, 79_433.4, 4_588_248, -3.25, 1e-6):
        for text in (format_number(value), format_number(value, 2), format_significant(value)):
            assert "." not in text and "_" not in text, text


@pytest.mark.parametrize("fraction, decimals, text", [
    # e^10/(1 + e^10): the belief of chapter 1's table at ε = 10 is not certainty.
    (22026.465794806718 / 22027.465794806718, 1, "99,995\u00a0%"),
    (0.9933, 1, "99,3\u00a0%"),
    (0.0000123, 0, "0,001\u00a0%"),
    (1.0, 1, "100,0\u00a0%"),
    (0.0, 0, "0\u00a0%"),
])
def test_a_probability_short_of_certainty_never_reads_as_certain(fraction, decimals, text):
    assert format_percent(fraction, decimals, avoid_ends=True) == text


def test_without_avoid_ends_a_near_certainty_rounds_to_certainty():
    assert format_percent(22026.465794806718 / 22027.465794806718, 1) == "100,0" + PERCENT_SIGN


@pytest.mark.parametrize("values, decimals, text", [
    ([43.6, 41.7, 44.5, 43.0, 38.7], 1, "[43,6; 41,7; 44,5; 43,0; 38,7]"),
    ([-21.0, -546.7, -872.5], 1, "[\u221221,0; \u2212546,7; \u2212872,5]"),
    ([10, 5, 2, 1], None, "[10; 5; 2; 1]"),
    ([0.26, 0.25, 0.16], None, "[0,26; 0,25; 0,16]"),
    ([], None, "[]"),
])
def test_format_vector_separates_spanish_numbers_with_semicolons(values, decimals, text):
    import numpy as np

    assert format_vector(values, decimals) == text
    assert format_vector(np.array(values, dtype=float), decimals) == text.replace("[]", "[]")


def test_format_vector_writes_a_matrix_row_by_row_in_aligned_columns():
    import numpy as np

    text = format_vector(np.array([[27169.2, -20425.8], [4857.3, 30237.5]]), 1, group_thousands=True)
    assert text == "[[27 169,2; \u221220 425,8]\n [ 4 857,3;  30 237,5]]"
    first, second = text.split("\n")
    assert len(second) == len(first) + 1   # « [» under «[[», the last row closes the matrix
    with pytest.raises(ValueError, match="vector o una matriz"):
        format_vector([[[1.0]]])
