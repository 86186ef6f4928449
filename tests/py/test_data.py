"""Tests of dpdeck.data: the synthetic census, its CSV and the read-only Census table."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpdeck import data
from dpdeck.data import (
    CENSUS_SEED,
    EDUCATION_LEVELS,
    KAREN_NAME,
    Census,
    find_census_csv,
    generate_census,
    load_census,
    read_census,
    write_census,
)

ROOT = Path(__file__).resolve().parents[2]
COMMITTED_CSV = ROOT / "assets" / "data" / "censo.csv"


@pytest.fixture(scope="module")
def census() -> Census:
    return load_census()


def test_write_regenerates_the_committed_csv_bit_for_bit(tmp_path):
    regenerated = write_census(tmp_path / "censo.csv")
    assert regenerated.read_bytes() == COMMITTED_CSV.read_bytes()


def test_command_line_write_produces_the_same_bytes(tmp_path):
    target = tmp_path / "cli.csv"
    result = subprocess.run(
        [sys.executable, "-m", "dpdeck.data", "--write", str(target)],
        capture_output=True, text=True, check=True,
    )
    assert "5000 personas" in result.stdout
    assert target.read_bytes() == COMMITTED_CSV.read_bytes()


def test_generation_depends_only_on_the_generator():
    first = generate_census(np.random.default_rng(CENSUS_SEED))
    second = generate_census(np.random.default_rng(CENSUS_SEED))
    other = generate_census(np.random.default_rng(CENSUS_SEED + 1))
    for column in first.columns:
        assert np.array_equal(first[column], second[column])
    assert not np.array_equal(first.age, other.age)


def test_reading_the_csv_gives_back_the_generated_census(census):
    generated = generate_census(np.random.default_rng(CENSUS_SEED))
    assert census.columns == generated.columns
    for column in census.columns:
        assert census[column].dtype.kind == generated[column].dtype.kind
        assert np.array_equal(census[column], generated[column]), column


def test_census_has_the_structure_of_adult(census):
    assert len(census) == 5000
    assert set(data.COLUMNS) <= set(census.columns)
    assert census.age.dtype.kind == "i" and census.age.min() >= 17 and census.age.max() <= 90
    assert census.age.max() == 90  # the top age that bounds the sensitivity of a sum of ages
    assert 35 <= census.age.mean() <= 42  # Adult: 38.6
    assert set(np.unique(census.sex)) == {"Hombre", "Mujer"}
    assert 0.6 <= np.mean(census.sex == "Hombre") <= 0.74  # Adult: 67 %
    assert census.hours_per_week.min() >= 1 and census.hours_per_week.max() <= 99


def test_education_has_sixteen_ordered_levels(census):
    assert len(EDUCATION_LEVELS) == 16
    assert census.education_num.min() == 1 and census.education_num.max() == 16
    # label and number agree person by person: education_num is the label's position + 1
    expected = np.array(EDUCATION_LEVELS)[census.education_num - 1]
    assert np.array_equal(census.education, expected)
    counts = np.bincount(census.education_num, minlength=17)[1:]
    assert counts.argmax() + 1 == EDUCATION_LEVELS.index("Bachillerato") + 1
    # "bars of hundreds" for the common levels, as the histogram slide says
    assert counts[EDUCATION_LEVELS.index("Bachillerato")] > 1000
    assert counts[EDUCATION_LEVELS.index("Licenciatura")] > 500


def test_capital_gain_is_mostly_zero_with_a_heavy_tail(census):
    gain = census.capital_gain
    assert gain.min() == 0 and gain.max() == 99_999
    assert 0.85 <= np.mean(gain == 0) <= 0.97
    positive = gain[gain > 0]
    # heavy tail: the top percent dwarfs the median of the non-zero gains
    assert np.percentile(positive, 99) > 10 * np.median(positive)


def test_high_income_is_a_quarter_and_depends_on_age_and_education(census):
    rich = census.high_income
    assert rich.dtype == bool
    assert 0.20 <= rich.mean() <= 0.30
    educated = census.education_num >= 13
    assert rich[educated].mean() > 2 * rich[~educated].mean()
    older = (census.age >= 35) & (census.age <= 60)
    assert rich[older].mean() > 2 * rich[census.age < 30].mean()


def test_karen_is_the_only_karen_and_findable_by_name(census):
    karens = [name for name in census.name if name.split()[0] == "Karen"]
    assert karens == [KAREN_NAME]
    karen = census.where(census.name == KAREN_NAME)
    assert len(karen) == 1
    assert karen.sex[0] == "Mujer"
    assert bool(karen.high_income[0])  # the differencing attack reveals a 1
    assert len(np.unique(census.name)) == len(census)  # full names are unique


def test_load_census_is_cached_and_read_only(census):
    assert load_census() is census
    with pytest.raises(ValueError):
        census.age[0] = 30
    with pytest.raises(AttributeError):
        census.age = np.zeros(5000)
    copy = census.to_columns()
    copy["age"][0] = 99
    assert census.age[0] != 99


def test_item_and_attribute_access_agree(census):
    assert census["age"] is census.age
    assert "age" in census and "salario" not in census
    with pytest.raises(KeyError, match="salario"):
        census["salario"]
    with pytest.raises(AttributeError, match="salario"):
        census.salario


def test_where_selects_rows(census):
    seniors = census.where(census.age >= 65)
    assert len(seniors) == int(np.sum(census.age >= 65))
    assert seniors.age.min() >= 65
    assert seniors.columns == census.columns
    with pytest.raises(ValueError, match="mask"):
        census.where(census.age)  # not boolean
    with pytest.raises(ValueError, match="5000"):
        census.where(np.ones(3, dtype=bool))


def test_glimpse_and_head_fit_a_slide(census):
    text = repr(census)
    lines = text.splitlines()
    assert lines[0] == "Censo sintético: 5000 personas × 8 columnas"
    assert len(lines) == 1 + len(census.columns)
    assert all(len(line) <= 80 for line in lines)
    table = census.head(3, columns=["name", "age", "education"]).splitlines()
    assert len(table) == 4 and table[0].split() == ["name", "age", "education"]
    assert all(len(line) <= 80 for line in table)
    assert census.name[0] in table[1]
    with pytest.raises(ValueError, match="rows"):
        census.head(0)


def test_census_rejects_ragged_columns():
    with pytest.raises(ValueError, match="mismo largo"):
        Census({"a": [1, 2], "b": [1]})
    with pytest.raises(ValueError):
        Census({})


def test_read_census_names_a_bad_file(tmp_path):
    bad = tmp_path / "malo.csv"
    bad.write_text("edad,nombre\n1,2\n", encoding="utf-8")
    with pytest.raises(ValueError, match="malo.csv"):
        read_census(bad)


def test_csv_is_found_in_the_repository_checkout():
    assert find_census_csv().resolve() == COMMITTED_CSV.resolve()


def test_importing_dpdeck_does_not_import_matplotlib():
    code = "import sys, dpdeck, dpdeck.data; print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_census_survives_copy_and_pickle(census):
    import copy
    import pickle

    assert copy.copy(census) is census and copy.deepcopy(census) is census
    restored = pickle.loads(pickle.dumps(census))
    assert restored.columns == census.columns
    assert np.array_equal(restored.name, census.name)
    with pytest.raises(ValueError):
        restored.age[0] = 1
