"""opcert's narrow results where the binary64 value is near a midpoint of the narrow format
(impl.rounding_test): the test against MPFR's rounding, and the results there against MPFR."""

from __future__ import annotations

import gmpy2
import numpy as np
import pytest
from gmpy2 import mpfr

from opcert.formats import FORMATS
from opcert.impl.rounding_test import MIN_COMPILED, NEAR_BITS, near_indices, near_mask, to_float32
from opcert.impl.run import run
from tests.oracle import _context, _ziv, catalog_oracle, oracle

NARROW = ("float16", "bfloat16", "float32")


def is_near(y: float, dtype: str) -> bool:
    """MPFR's answer: y lies strictly between two neighbours of dtype, within 2^-NEAR_BITS of their distance
    from their mean (past the largest finite value, the neighbour above is 2^(emax+1), where rounding to
    nearest overflows)."""
    if not np.isfinite(y) or y == 0:
        return False
    with _context(dtype, gmpy2.RoundDown):
        lo = +mpfr(y, 64)
    with _context(dtype, gmpy2.RoundUp):
        hi = +mpfr(y, 64)
    if lo == hi:
        return False
    top = mpfr(2) ** (FORMATS[dtype].emax + 1)
    lo, hi = (-top if gmpy2.is_infinite(lo) else lo), (top if gmpy2.is_infinite(hi) else hi)
    with gmpy2.context(precision=300):
        return abs(mpfr(y, 64) - (lo + hi) / 2) <= (hi - lo) / 2**NEAR_BITS


def values(dtype: str, rng) -> np.ndarray:
    """Midpoints of neighbours of dtype over its whole range (subnormals, the overflow threshold), one binary64
    ULP either side of them, random binary64 values, and the special ones."""
    fmt = FORMATS[dtype]
    bits = rng.integers(0, 2**fmt.bits, 3000, dtype=np.uint64).astype(fmt.uint)
    with np.errstate(invalid="ignore"):
        a = bits.view(fmt.dtype).astype(np.float64)
    a = a[np.isfinite(a)]
    b = np.nextafter(a.astype(fmt.dtype), np.array(np.inf, fmt.dtype)).astype(np.float64)
    mids = (a + b) / 2  # exact: neighbours of at most 24 bits
    q = b - a  # their distance: the edge of the test, and just past it, either side
    edges = np.concatenate([mids + s * q * 2.0**-NEAR_BITS for s in (1, -1, 1.5, -1.5)])
    over = float(fmt.max_finite) + 2.0 ** (fmt.emax - fmt.p) * 1.0  # between max_finite and 2^(emax+1)
    tiny = 2.0 ** (fmt.emin - fmt.p)  # half the smallest subnormal
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, over, -over, tiny, -tiny, tiny / 2, 3 * tiny, 5e-324])
    near = np.concatenate([np.nextafter(mids, np.inf), np.nextafter(mids, -np.inf)])
    return np.concatenate(
        [mids, -mids, near, edges, -edges, rng.standard_normal(500) * 10.0 ** rng.integers(-40, 40, 500), special]
    )


@pytest.mark.parametrize("dtype", NARROW)
def test_rounding_test_is_mpfrs(dtype):
    fmt = FORMATS[dtype]
    y = values(dtype, np.random.default_rng(7))
    want = np.array([is_near(float(v), dtype) for v in y])
    assert 10000 < want.sum() < y.size - 10000  # both answers are there to be given
    assert np.array_equal(near_mask(y, fmt.p, fmt.emin), want)
    reps = MIN_COMPILED // y.size + 1  # the compiled passes
    big = np.tile(y, reps)
    assert np.array_equal(near_indices(big, fmt.p, fmt.emin), np.flatnonzero(np.tile(want, reps)))
    if dtype == "float32":
        for arr in (y, big):
            r, ties = to_float32(arr)
            with np.errstate(over="ignore"):
                assert np.array_equal(r.view(np.uint32), arr.astype(np.float32).view(np.uint32))
            assert np.array_equal(ties, np.flatnonzero(np.tile(want, arr.size // y.size)))


def test_sin_at_a_binary64_midpoint_is_correctly_rounded():
    # sin(9830.3984375) is 0.35 binary64 ULP from a binary32 midpoint: the C library's sine is that midpoint,
    # and the cast's ties-to-even picks the far neighbour (0.5000000007 ULP)
    x = np.array([9830.3984375, -9830.3984375], np.float32)
    assert near_mask(np.sin(x.astype(np.float64)), 24, -126).all()
    want = catalog_oracle("Sin", x, {})
    for arr in (x, np.tile(x, MIN_COMPILED)):
        got = run("Sin", arr)
        assert np.array_equal(got.view(np.uint32), np.resize(want.astype(np.float32), arr.size).view(np.uint32))


def _gelu(x: float, dtype: str) -> float:
    def at(prec):
        with gmpy2.context(precision=prec):
            v = mpfr(x)
            return v / 2 * (1 + gmpy2.erf(v / gmpy2.sqrt(mpfr(2))))

    return _ziv(at, dtype)


@pytest.mark.parametrize("dtype", NARROW)
def test_tiny_outputs_rounded_once(dtype):
    # x * Phi(x) and alpha * tanh(beta * x) at subnormal x: binary64 holds x / 2 exactly, a midpoint of the
    # format wherever x's last bit is 1; the exact value is just above (Gelu) or below (ScaledTanh) it
    fmt = FORMATS[dtype]
    k = np.arange(1, 200)
    x = np.concatenate([k, -k]).astype(np.float64) * 2.0 ** (fmt.emin - fmt.p + 1)
    xs = x.astype(fmt.dtype)
    gelu = np.array([_gelu(float(v), dtype) for v in x]).astype(fmt.dtype)
    assert np.array_equal(run("Gelu", xs).view(fmt.uint), gelu.view(fmt.uint))
    attrs = {"alpha": 1.0, "beta": 0.5}
    st = oracle("ScaledTanh", xs, attrs).astype(fmt.dtype)
    assert np.array_equal(run("ScaledTanh", xs, **attrs).view(fmt.uint), st.view(fmt.uint))


def test_the_exact_value_moves_a_result_only_to_the_other_neighbour():
    from opcert.impl.rounding_test import decide

    f32 = FORMATS["float32"]
    lo, hi = 1.0, 1.0 + 2.0**-23
    y = np.array([(lo + hi) / 2] * 4 + [float(f32.max_finite) + 2.0**103])
    with np.errstate(over="ignore"):
        rounded = y.astype(np.float32)  # ties to even: 1.0, and +inf past the largest finite value
    exact = np.array([hi, lo, 1.0 + 2.0**-22, np.nan, float(f32.max_finite)], np.float32)
    got = decide(y, rounded, exact, f32)
    # the other neighbour; the same one; two ULPs away (a code that is not the function): its own; NaN: its own;
    # the largest finite value against +inf at the overflow threshold: a neighbour
    want = np.array([hi, lo, lo, lo, float(f32.max_finite)], np.float32)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


@pytest.mark.parametrize("cached_call", [1 << 10, 8])
@pytest.mark.parametrize("dtype", NARROW)
def test_decisions_kept_between_calls_are_those_of_each_call_alone(dtype, cached_call, monkeypatch):
    # impl.run keeps the exact value's rounding by input bits, per operator, attributes and format; a bound
    # small enough that the calls below empty it midway, and two attribute sets that round the same inputs
    # to different neighbours, must change no result
    import sys

    run_module = sys.modules["opcert.impl.run"]
    monkeypatch.setattr(run_module, "_DECIDED", {})
    monkeypatch.setattr(run_module, "_DECIDED_MAX", 150)
    monkeypatch.setattr(run_module, "_CACHED_CALL", cached_call)  # 8: every call to the reference as it is
    fmt = FORMATS[dtype]
    k = np.arange(1, 200)
    xs = (np.concatenate([k, -k]).astype(np.float64) * 2.0 ** (fmt.emin - fmt.p + 1)).astype(fmt.dtype)
    for attrs in ({"alpha": 1.0, "beta": 0.5}, {"alpha": 3.0, "beta": 0.5}, {"alpha": 1.0, "beta": 0.5}):
        want = oracle("ScaledTanh", xs, attrs).astype(fmt.dtype).view(fmt.uint)
        for order in (np.arange(xs.size), np.arange(xs.size)[::-1], np.arange(120), np.repeat(np.arange(4), 50)):
            got = run("ScaledTanh", xs[order], **attrs).view(fmt.uint)
            assert np.array_equal(got, want[order])
    sizes = [len(known) for _, known in run_module._DECIDED.values()]
    assert max(sizes) <= 150 and sum(sizes) > 0  # the calls of four inputs were kept


def test_decisions_kept_from_several_threads_at_once(monkeypatch):
    # the layout check calls the kernel from several threads at once; a bound of 6 empties the kept decisions while
    # other threads read them: every result must still be MPFR's, and no call may fail
    import sys
    from concurrent.futures import ThreadPoolExecutor

    run_module = sys.modules["opcert.impl.run"]
    monkeypatch.setattr(run_module, "_DECIDED", {})
    monkeypatch.setattr(run_module, "_DECIDED_MAX", 6)
    fmt = FORMATS["float16"]
    k = np.arange(1, 40)
    xs = (np.concatenate([k, -k]).astype(np.float64) * 2.0 ** (fmt.emin - fmt.p + 1)).astype(fmt.dtype)
    attrs = {"alpha": 1.0, "beta": 0.5}
    want = oracle("ScaledTanh", xs, attrs).astype(fmt.dtype).view(fmt.uint)
    rng = np.random.default_rng(2)
    orders = [rng.choice(xs.size, size=int(rng.integers(1, 60))) for _ in range(400)]

    def call(order):
        return np.array_equal(run("ScaledTanh", xs[order], **attrs).view(fmt.uint), want[order])

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(call, orders))
