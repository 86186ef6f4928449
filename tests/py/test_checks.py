"""Validadores: cada parámetro inválido produce un ValueError en español que nombra el valor."""

import math

import numpy as np
import pytest

from dpdeck import _checks as checks


@pytest.mark.parametrize(
    "bad, shown",
    [(-1, "-1"), (0, "0"), (0.0, "0"), (float("nan"), "nan"), (math.inf, "inf"), (-math.inf, "-inf"), (-0.5, "-0.5")],
)
def test_check_epsilon_rejects_nonpositive_or_nonfinite(bad, shown):
    with pytest.raises(ValueError) as info:
        checks.check_epsilon(bad)
    message = str(info.value)
    assert message == f"epsilon debe ser positivo y finito; se recibió {shown}"


@pytest.mark.parametrize("bad", ["0.5", None, True, [0.5]])
def test_check_epsilon_rejects_non_numbers(bad):
    with pytest.raises(ValueError, match=r"^epsilon debe ser un número real; se recibió"):
        checks.check_epsilon(bad)


def test_check_epsilon_accepts_numpy_scalars_and_returns_float():
    value = checks.check_epsilon(np.float32(0.5))
    assert type(value) is float and value == 0.5
    assert checks.check_epsilon(2) == 2.0


@pytest.mark.parametrize("bad, shown", [(0, "0"), (1, "1"), (1.5, "1.5"), (-1e-5, "-1e-05"), (float("nan"), "nan")])
def test_check_delta_rejects_outside_open_unit_interval(bad, shown):
    with pytest.raises(ValueError) as info:
        checks.check_delta(bad)
    assert str(info.value) == f"delta debe estar en el intervalo abierto (0, 1); se recibió {shown}"


def test_check_delta_accepts_interior():
    assert checks.check_delta(1e-5) == 1e-5


@pytest.mark.parametrize("bad, shown", [(0, "0"), (-1, "-1"), (math.inf, "inf"), (float("nan"), "nan")])
def test_check_sensitivity_rejects_nonpositive(bad, shown):
    with pytest.raises(ValueError) as info:
        checks.check_sensitivity(bad)
    assert str(info.value) == f"sensibilidad debe ser positivo y finito; se recibió {shown}"


@pytest.mark.parametrize("bad, shown", [(1, "1"), (0.5, "0.5"), (math.inf, "inf")])
def test_check_alpha_rejects_orders_not_above_one(bad, shown):
    with pytest.raises(ValueError, match=rf"^alpha debe ser mayor que 1 y finito; se recibió {shown}$"):
        checks.check_alpha(bad)


def test_check_finite_names_nan_and_its_position():
    with pytest.raises(ValueError) as info:
        checks.check_finite([1.0, 2.0, np.nan, np.inf], name="edades")
    message = str(info.value)
    assert message.startswith("edades contiene valores no finitos (NaN o infinito): 2 en total")
    assert "posición 2" in message and message.endswith("se recibió nan")


@pytest.mark.parametrize("bad, shown", [(math.inf, "inf"), (float("nan"), "nan")])
def test_check_finite_rejects_nonfinite_scalar(bad, shown):
    with pytest.raises(ValueError, match=rf"^valor debe ser finito; se recibió {shown}$"):
        checks.check_finite(bad, name="valor")


def test_check_finite_returns_float_for_scalar_and_array_for_sequence():
    assert checks.check_finite(3) == 3.0 and isinstance(checks.check_finite(3), float)
    array = checks.check_finite([1, 2])
    assert isinstance(array, np.ndarray) and array.dtype == float


def test_check_finite_rejects_text_inside_array():
    with pytest.raises(ValueError, match="debe contener solo números"):
        checks.check_finite(["a", "b"], name="valores")


def test_check_finite_rejects_a_ragged_list_in_spanish():
    with pytest.raises(ValueError, match=r"^edades debe contener solo números; se recibió \[\[1, 2\], \[3\]\]$"):
        checks.check_finite([[1, 2], [3]], name="edades")


def test_check_nonempty_rejects_empty_data():
    with pytest.raises(ValueError, match=r"^datos no puede estar vacío; se recibió un arreglo de forma \(0,\)"):
        checks.check_nonempty(np.array([]))


def test_check_values_rejects_empty_two_dimensional_and_nan():
    with pytest.raises(ValueError, match="no puede estar vacío"):
        checks.check_values([])
    with pytest.raises(ValueError, match="unidimensional"):
        checks.check_values([[1.0, 2.0]])
    with pytest.raises(ValueError, match="no finitos"):
        checks.check_values([1.0, float("nan")])


@pytest.mark.parametrize("bad, shown", [(0, "0"), (-3, "-3"), (2.5, "2.5"), (True, "True")])
def test_check_positive_int_rejects(bad, shown):
    with pytest.raises(ValueError, match=rf"^k debe ser un entero positivo; se recibió {shown}$"):
        checks.check_positive_int(bad, name="k")


def test_check_positive_int_accepts_integral_float():
    assert checks.check_positive_int(10.0, name="k") == 10


@pytest.mark.parametrize("bad", [None, 42, np.random.RandomState(0)])
def test_check_rng_demands_a_generator(bad):
    with pytest.raises(ValueError, match=r"^rng debe ser un numpy.random.Generator, por ejemplo np.random.default_rng\(0\)"):
        checks.check_rng(bad)


def test_check_rng_returns_the_generator():
    rng = np.random.default_rng(1)
    assert checks.check_rng(rng) is rng


def test_probability_and_nonnegative_checkers_name_the_bad_value():
    from dpdeck._checks import check_nonnegative, check_probability

    assert check_probability(1, name="q") == 1.0 and check_probability(0.01, name="q") == 0.01
    for bad in (0, -0.1, 1.5, float("nan"), True):
        with pytest.raises(ValueError, match="q"):
            check_probability(bad, name="q")
    assert check_nonnegative(0, name="epsilon") == 0.0
    for bad in (-1e-9, float("inf"), "1"):
        with pytest.raises(ValueError, match="epsilon"):
            check_nonnegative(bad, name="epsilon")


def test_check_dataset_names_what_is_wrong_and_returns_floats():
    X, y = checks.check_dataset([[1, 2], [3, 4]], [0, 1])
    assert X.dtype == float and y.dtype == float and X.shape == (2, 2)
    with pytest.raises(ValueError, match="X debe ser una matriz"):
        checks.check_dataset([1, 2], [0, 1])
    with pytest.raises(ValueError, match="X no puede estar vacío"):
        checks.check_dataset(np.zeros((0, 3)), [])
    with pytest.raises(ValueError, match=r"y debe tener una etiqueta por fila de X \(2\)"):
        checks.check_dataset([[1, 2], [3, 4]], [0, 1, 1])
    with pytest.raises(ValueError, match="y debe contener solo 0 y 1; se recibió 0.5"):
        checks.check_dataset([[1, 2], [3, 4]], [0, 0.5])
    with pytest.raises(ValueError, match="y_test debe tener una etiqueta por fila de X_test"):
        checks.check_dataset([[1.0]], [0, 1], names=("X_test", "y_test"))


def test_learning_and_federated_validate_data_with_the_same_checker():
    from dpdeck import federated, learning

    for call in (lambda: learning.train_logistic([[1.0, 2.0]], [2]),
                 lambda: federated.train_federated([[1.0, 2.0]], [2], [0], rounds=1, client_fraction=1.0,
                                                   local_epochs=1, rng=np.random.default_rng(0))):
        with pytest.raises(ValueError, match="y debe contener solo 0 y 1; se recibió 2"):
            call()
