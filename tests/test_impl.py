"""opcert's implementation: accuracy against the reference, tensor semantics, integers."""

from fractions import Fraction

import numpy as np
import pytest
from conftest import all_16bit
from hypothesis import given, settings
from hypothesis import strategies as st

import opcert
from opcert.errors import UsageError
from opcert.formats import get_format
from opcert.impl import run
from opcert.spec.attrs import resolve
from opcert.spec.reference import reference_detailed
from opcert.verify.ulp import ulp_error

OPS = ["Tanh", "ScaledTanh", "HardSigmoid", "Shrink", "Celu"]
# Error budgets from the error analysis, not from measurements. Outputs of at
# most 24 bits are computed in binary64 (a few binary64 roundings and libm's
# error, under 2**-48 relative) then rounded once: 0.5 ULP plus 2**-20 covers it.
# binary64 outputs: HardSigmoid (libm fma) and Shrink (one subtraction) are
# correctly rounded; Tanh is libm's tanh (< 1 ULP); ScaledTanh and Celu add
# two roundings of 0.5 ULP (the inner product/quotient has condition <= 1).
NARROW_BUDGET = 0.5 + 2**-20
FLOAT64_BUDGET = {"Tanh": 1.0, "ScaledTanh": 2.0, "HardSigmoid": 0.5, "Shrink": 0.5, "Celu": 2.0}


def _max_err(op, x, **attrs):
    resolved = resolve(opcert.get_operator(op), attrs)
    y = run(op, x, **attrs)
    ref = reference_detailed(op, x, resolved)
    err = ulp_error(y.astype(np.float64), ref.exact_hi, ref.exact_lo, get_format(x.dtype))
    nan_ok = np.array_equal(np.isnan(y.astype(np.float64)), np.isnan(ref.rounded.astype(np.float64)))
    return float(np.nanmax(err, initial=0.0)), nan_ok


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("op", OPS)
def test_every_16bit_input_within_budget(op, dtype):
    err, nan_ok = _max_err(op, all_16bit(dtype))
    assert nan_ok and err <= NARROW_BUDGET, err


finite32 = st.floats(width=32, allow_nan=True, allow_infinity=True)
finite64 = st.floats(allow_nan=True, allow_infinity=True)
attr32 = st.floats(min_value=-8, max_value=8, width=32)
pos32 = st.floats(min_value=2**-7, max_value=8, width=32)


@settings(max_examples=60, deadline=None)
@given(xs=st.lists(finite32, min_size=1, max_size=64), a=attr32, b=attr32, c=pos32)
def test_hypothesis_float32(xs, a, b, c):
    x = np.array(xs, dtype=np.float32)
    attrs = {
        "ScaledTanh": {"alpha": a, "beta": b},
        "HardSigmoid": {"alpha": a, "beta": b},
        "Shrink": {"bias": a, "lambd": abs(b)},
        "Celu": {"alpha": c},
        "Tanh": {},
    }
    for op in OPS:
        if op == "HardSigmoid" and a == 0:
            continue  # alpha = 0: 0 * inf is NaN in IEEE arithmetic; the limit is beta (see notes)
        if op == "ScaledTanh" and b == 0:
            continue  # beta = 0: likewise at +-inf
        err, nan_ok = _max_err(op, x, **attrs[op])
        assert nan_ok and err <= NARROW_BUDGET, (op, err)


@settings(max_examples=25, deadline=None)
@given(xs=st.lists(finite64, min_size=1, max_size=16), a=attr32, b=attr32, c=pos32)
def test_hypothesis_float64(xs, a, b, c):
    x = np.array(xs, dtype=np.float64)
    attrs = {
        "ScaledTanh": {"alpha": a, "beta": b},
        "HardSigmoid": {"alpha": a, "beta": b},
        "Shrink": {"bias": a, "lambd": abs(b)},
        "Celu": {"alpha": c},
        "Tanh": {},
    }
    for op in OPS:
        if (op == "HardSigmoid" and a == 0) or (op == "ScaledTanh" and b == 0):
            continue
        err, nan_ok = _max_err(op, x, **attrs[op])
        assert nan_ok and err <= FLOAT64_BUDGET[op], (op, err)


@pytest.mark.parametrize("rank", range(9))
def test_ranks_0_to_8_and_in_place(rank):
    rng = np.random.default_rng(rank)
    shape = tuple(int(s) for s in rng.integers(1, 3, size=rank))
    x = rng.normal(0, 3, size=shape).astype(np.float32)
    for op in OPS:
        y = run(op, x)
        assert y.shape == x.shape and y.dtype == x.dtype
        assert np.array_equal(y.reshape(-1), run(op, x.reshape(-1)))  # rank does not change values
        inplace = x.copy()
        ret = run(op, inplace, out=inplace)
        assert ret is inplace and np.array_equal(inplace, y, equal_nan=True)


def test_empty_tensors():
    for op in OPS:
        for shape in [(0,), (2, 0, 3)]:
            y = run(op, np.zeros(shape, dtype=np.float16))
            assert y.shape == shape and y.dtype == np.float16


def test_bad_out_and_dtype():
    x = np.zeros(3, dtype=np.float32)
    with pytest.raises(UsageError, match="out must have the input's dtype and shape"):
        run("Tanh", x, out=np.zeros(3, dtype=np.float16))
    with pytest.raises(UsageError, match="out must have"):
        run("Tanh", x, out=np.zeros(4, dtype=np.float32))
    with pytest.raises(UsageError, match="Tanh does not take int32"):
        run("Tanh", np.zeros(3, dtype=np.int32))
    with pytest.raises(UsageError, match="unknown dtype"):
        run("Tanh", np.zeros(3, dtype=np.complex64))


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "uint32", "int64"])
def test_integer_shrink_against_fractions(dtype):
    info = np.iinfo(dtype)
    rng = np.random.default_rng(7)
    x = np.concatenate(
        [
            rng.integers(info.min, info.max, 2000, dtype=dtype, endpoint=True),
            np.array([info.min, info.max, 0, 1, 2, 3], dtype=dtype),
        ]
    )
    for bias, lambd in [(0.0, 0.5), (1.5, 1.0), (2.5, 0.0), (-3.25, 2.0), (1e10, 0.5)]:
        y = run("Shrink", x, bias=bias, lambd=lambd)
        b, lam = Fraction(float(np.float32(bias))), Fraction(float(np.float32(lambd)))
        for xi, yi in zip(x.tolist(), y.tolist()):
            q = xi + b if xi < -lam else (xi - b if xi > lam else Fraction(0))
            want = min(max(round(q), int(info.min)), int(info.max))  # round(): ties to even
            assert yi == want, (dtype, bias, lambd, xi, yi, want)


@pytest.mark.parametrize("name", [op.name for op in opcert.operators()])
def test_shared_subexpressions_and_scalar_selects_change_no_bit(name):
    """eval_numpy computes a repeated subexpression once and takes an attribute's select, or a
    select whose condition has one value over the array, without the other branch: on every expression of the operator (implementation,
    reference form, formula of each standard), at its defaults and at other attribute
    values, every output bit is the plain interpretation's."""
    from opcert.expr.numpy_eval import eval_numpy, eval_plain

    op = opcert.get_operator(name)
    rng = np.random.default_rng(4)
    with np.errstate(invalid="ignore"):
        x = rng.integers(0, 2**32, 20000, dtype=np.uint64).astype(np.uint32).view(np.float32).astype(np.float64)
    x = np.concatenate([x, [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-310, -1e-310, 700.5, -745.2]])
    for std in op.standards:
        attr_sets = [resolve(op, None, std.key)]
        if name == "Gelu" and std.key == "onnx":
            attr_sets.append(resolve(op, {"approximate": "tanh"}, std.key))
        for attrs in attr_sets:
            a = {k: float(v) for k, v in attrs.items()}
            for e in {op.implementation_for(std.key), op.reference_form(std.key), std.formula}:
                # and on arrays where a select's condition has one value (one sign, one range)
                for part in (
                    x,
                    x[x > 0],
                    x[x < 0],
                    x[(x > 1) & (x < 2)],
                    x[(x > -2) & (x < -1)],
                    x[x < -2000],
                    x[x > 2000],
                    x[(x > -50) & (x < -41)],
                ):
                    with np.errstate(all="ignore"):
                        want = np.broadcast_to(eval_plain(e, part, a), part.shape)
                    got = np.broadcast_to(eval_numpy(e, part, a), part.shape)
                    assert got.dtype == want.dtype
                    assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), (name, std.key, str(e))


def test_fma_rounds_once():
    """The compiled fma against exact rational arithmetic rounded to nearest (formats.round_fraction,
    itself checked against MPFR), and against the C library's: random triples, and triples whose
    a * b + c lies within an ULP of a rounding midpoint, where a multiply-then-add would differ."""
    from opcert.expr.numpy_eval import _fma, fma
    from opcert.formats import FLOAT_FORMATS, round_fraction

    rng = np.random.default_rng(12)
    a = rng.standard_normal(3000) * np.exp2(rng.integers(-60, 60, 3000))
    b = rng.standard_normal(3000) * np.exp2(rng.integers(-60, 60, 3000))
    c = rng.standard_normal(3000) * np.exp2(rng.integers(-60, 60, 3000))
    c[:1500] = -(a[:1500] * b[:1500])  # c cancels the rounded product: the result is its error
    got = fma(a, b, c)
    f64 = FLOAT_FORMATS["float64"]
    want = np.array([round_fraction(Fraction(x) * Fraction(y) + Fraction(z), f64) for x, y, z in zip(a, b, c)])
    assert np.array_equal(got, want)
    assert np.array_equal(got, _fma(a, b, c).astype(np.float64))
    assert not np.array_equal(got[:1500], a[:1500] * b[:1500] + c[:1500])  # it is not a*b + c


def _min_plain(a, b):
    r = np.where(a < b, a, b)
    r = np.where(a == b, np.where(np.signbit(a), a, b), r)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, r)


def _max_plain(a, b):
    r = np.where(a > b, a, b)
    r = np.where(a == b, np.where(np.signbit(a), b, a), r)
    return np.where(np.isnan(a) | np.isnan(b), np.nan, r)


def test_minimum_and_maximum_give_the_bits_of_the_plain_definition():
    """IEEE 754-2019 minimum/maximum (NaN wins, -0 < +0), written out in seven passes, against
    numpy_eval's two-pass version: every pair of special values (signed zeros, infinities,
    NaNs with payloads and signs, subnormals), arrays against scalars and scalars alone."""
    from opcert.expr import numpy_eval as ne

    sp = np.concatenate(
        [
            [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan, -np.nan, 5e-324, -5e-324, 2.5],
            np.array([0x7FF8000000000123, 0xFFF0000000000001], np.uint64).view(np.float64),
        ]
    )
    a, b = (m.ravel() for m in np.meshgrid(sp, sp))
    with np.errstate(all="ignore"):
        for new, plain in ((ne._minimum, _min_plain), (ne._maximum, _max_plain)):
            for x, y in (
                (a, b),
                (a, 0.0),
                (-0.0, b),
                (np.float64(-0.0), np.float64(0.0)),
                (np.float64(0.0), np.float64(-0.0)),
                (a, np.float64(np.nan)),
            ):
                got = np.asarray(new(x, y), dtype=np.float64)
                want = np.asarray(plain(x, y), dtype=np.float64)
                assert got.shape == want.shape and np.array_equal(got.view(np.uint64), want.view(np.uint64))
