"""The scalar checks: sklearn's check_scalar inside, our one-line messages outside."""

import math

import numpy as np
import pytest

from ensstab_dask.checks import check_int, check_real


@pytest.mark.parametrize(
    "value, kwargs, error, message",
    [
        (True, {}, TypeError, "n must be an int; got bool True"),
        (np.bool_(False), {}, TypeError, f"n must be an int; got bool {np.bool_(False)!r}"),
        (2.0, {}, TypeError, "n must be an int; got float 2.0"),
        ("3", {}, TypeError, "n must be an int; got str '3'"),
        (5, dict(minimum=10), ValueError, "n must be >= 10; got 5"),
        (50, dict(maximum=10), ValueError, "n must be <= 10; got 50"),
        (0, dict(minimum=1, maximum=10), ValueError, "n must be in [1, 10]; got 0"),
        (np.int64(11), dict(minimum=1, maximum=10), ValueError, "n must be in [1, 10]; got 11"),
    ],
)
def test_check_int_messages(value, kwargs, error, message):
    with pytest.raises(error) as info:
        check_int(value, "n", **kwargs)
    assert str(info.value) == message


@pytest.mark.parametrize(
    "value, kwargs, error, message",
    [
        (True, {}, TypeError, "x must be a real number; got bool True"),
        ("0.5", {}, TypeError, "x must be a real number; got str '0.5'"),
        (math.nan, dict(minimum=0.0, maximum=1.0), ValueError, "x must be a number in [0.0, 1.0]; got NaN"),
        (math.inf, {}, ValueError, "x must be in (-inf, inf); got inf"),
        (-math.inf, dict(maximum=1.0), ValueError, "x must be in (-inf, 1.0]; got -inf"),
        (1.5, dict(minimum=0.0, maximum=1.0), ValueError, "x must be in [0.0, 1.0]; got 1.5"),
        (0.0, dict(minimum=0.0, open_minimum=True), ValueError, "x must be in (0.0, inf); got 0.0"),
        (1, dict(minimum=0, maximum=1, open_maximum=True), ValueError, "x must be in [0, 1); got 1.0"),
    ],
)
def test_check_real_messages(value, kwargs, error, message):
    with pytest.raises(error) as info:
        check_real(value, "x", **kwargs)
    assert str(info.value) == message


def test_values_inside_pass_as_python_numbers():
    assert check_int(np.int32(7), "n", minimum=7, maximum=7) == 7 and type(check_int(np.int32(7), "n")) is int
    assert check_real(np.float32(0.5), "x", minimum=0.0, maximum=1.0, open_minimum=True) == 0.5
    assert check_real(1, "x", minimum=0, maximum=1) == 1.0 and type(check_real(1, "x")) is float
    assert check_real(1e-300, "x", minimum=0.0, open_minimum=True) == 1e-300
