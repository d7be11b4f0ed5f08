"""Descriptor validation per standard and feature level (the seed documents' tables)."""

import pytest

from opcert.errors import UsageError
from opcert.impl import TensorDesc, validate
from opcert.impl.descriptor import violations


def d(dtype, rank, size=2):
    return TensorDesc(dtype, (size,) * rank)


@pytest.mark.parametrize(
    "level,ok_ranks", [("1.0", {4}), ("2.0", {4, 5}), ("3.0", set(range(1, 9))), ("6.4", set(range(1, 9)))]
)
def test_scaled_tanh_ranks_per_level(level, ok_ranks):
    for rank in range(0, 10):
        ok = not violations("ScaledTanh", d("float32", rank), d("float32", rank), level=level)
        assert ok == (rank in ok_ranks), (level, rank)


def test_shrink_integers_from_level_5_1():
    assert violations("Shrink", d("int8", 2), d("int8", 2), level="3.0")
    assert not violations("Shrink", d("int8", 2), d("int8", 2), level="5.1")
    assert violations("Shrink", d("int64", 2), d("int64", 2), level="5.1")  # not in DirectML's table
    assert not violations("Shrink", d("int64", 2), d("int64", 2), standard="onnx")


def test_operator_not_yet_available():
    found = violations("Celu", d("float32", 4), d("float32", 4), level="2.0")
    assert found and "not available before directml level 3.0" in found[0]


def test_mismatches_are_named():
    with pytest.raises(UsageError) as e:
        validate("HardSigmoid", TensorDesc("float32", (1, 2, 3, 4)), TensorDesc("float16", (1, 2, 3, 5)), level="3.0")
    msg = str(e.value)
    assert "data types differ (float32 vs float16)" in msg and "sizes differ" in msg
    with pytest.raises(UsageError, match="dimension counts differ"):
        validate("Tanh", d("float32", 2), d("float32", 3), standard="onnx")
    with pytest.raises(UsageError, match=r"dimension count 3 is not supported at directml level 1.0; allowed: 4"):
        validate("ScaledTanh", d("float32", 3), d("float32", 3), level="1.0")
    with pytest.raises(UsageError, match="allowed: float16, float32"):
        validate("ScaledTanh", d("float64", 4), d("float64", 4), level="3.0")


def test_in_place_is_allowed():
    assert not violations("Shrink", d("float16", 4), d("float16", 4), level="3.0", in_place=True)


def test_onnx_any_rank_and_its_types():
    for rank in range(0, 9):
        assert not violations("Tanh", d("bfloat16", rank), d("bfloat16", rank), standard="onnx")
    assert violations("Tanh", d("bfloat16", 1), d("bfloat16", 1), standard="onnx", level="6")
    assert violations("Celu", d("float16", 1), d("float16", 1), standard="onnx", level="12")
    assert not violations("Celu", d("float16", 1), d("float16", 1), standard="onnx", level="28")
