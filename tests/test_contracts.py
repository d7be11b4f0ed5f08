"""The contract the implementation-level proofs assume of the platform's binary64
exp/expm1/tanh (opcert.verify.proofs.contracts.PLATFORM_CONTRACT), checked on
every binary64 value widened from float16 and bfloat16, and 10**6 random ones."""

import numpy as np
import pytest
from conftest import all_16bit


def _arguments():
    rng = np.random.default_rng(3)
    with np.errstate(invalid="ignore"):
        parts = [all_16bit("float16").astype(np.float64), all_16bit("bfloat16").astype(np.float64)]
    parts.append(rng.integers(0, 2**64, 10**6, dtype=np.uint64).view(np.float64))
    parts.append(rng.normal(0, 10, 10**5))
    t = np.concatenate(parts)
    t = t[~np.isnan(t)]
    return np.unique(t)  # sorted, +-0 merged


T = _arguments()


@pytest.mark.parametrize("name", ["tanh", "expm1", "exp"])
def test_monotone_and_nan(name):
    f = getattr(np, name)
    with np.errstate(all="ignore"):
        y = f(T)
        assert not np.isnan(y).any()
        assert (y[1:] >= y[:-1]).all()  # np.diff would give inf - inf = NaN
        assert np.isnan(f(np.array([np.nan, -np.nan]))).all()


def test_tanh_contract():
    y = np.tanh(T)
    assert ((y >= -1) & (y <= 1)).all()
    assert np.array_equal(np.tanh(-T), -y)
    assert (np.sign(y) == np.sign(T)).all() or ((y == 0) == (T == 0)).all()
    assert np.all((T > 0) <= (y >= 0)) and np.all((T < 0) <= (y <= 0))
    z = np.tanh(np.array([0.0, -0.0, np.inf, -np.inf]))
    assert z.tolist() == [0.0, -0.0, 1.0, -1.0] and np.signbit(z[1])


def test_expm1_contract():
    with np.errstate(over="ignore"):
        y = np.expm1(T)
    assert (y >= -1).all()
    assert np.all((T > 0) <= (y >= 0)) and np.all((T < 0) <= (y <= 0))
    z = np.expm1(np.array([0.0, -0.0, -np.inf]))
    assert z.tolist() == [0.0, -0.0, -1.0] and np.signbit(z[1])


def test_exp_contract():
    with np.errstate(over="ignore"):
        assert (np.exp(T) >= 0).all()
    assert np.exp(np.array([0.0, -0.0])).tolist() == [1.0, 1.0]


# the inverse and hyperbolic functions (issue 52): NumPy's name, f's real domain (lo, hi, open at both ends),
# odd, increasing, the bounds its record states, its values at the domain's edges and at +-inf (IEEE 754)
INVERSE = {
    "sinh": ("sinh", None, True, True, (None, None), {np.inf: np.inf, -np.inf: -np.inf}),
    "asinh": ("arcsinh", None, True, True, (None, None), {np.inf: np.inf, -np.inf: -np.inf}),
    "atan": ("arctan", None, True, True, (-np.pi / 2, np.pi / 2), {np.inf: np.pi / 2, -np.inf: -np.pi / 2}),
    "asin": ("arcsin", (-1, 1, False), True, True, (-np.pi / 2, np.pi / 2), {1.0: np.pi / 2, np.inf: np.nan}),
    "acos": ("arccos", (-1, 1, False), False, False, (0, np.pi), {1.0: 0.0, -1.0: np.pi, np.inf: np.nan}),
    "atanh": ("arctanh", (-1, 1, True), True, True, (None, None), {1.0: np.inf, -1.0: -np.inf, 2.0: np.nan}),
    "acosh": ("arccosh", (1, None, False), False, True, (0, None), {1.0: 0.0, np.inf: np.inf, 0.5: np.nan}),
}


@pytest.mark.parametrize("name", sorted(INVERSE))
def test_inverse_and_hyperbolic_contracts(name):
    """What the records' contracts state, on every binary64 value of T in the domain: monotone, no NaN
    inside the domain, within the bounds, odd (to the bit), the sign of the argument where odd; NaN
    outside the domain and at NaN; the values at the domain's ends and at the infinities."""
    from opcert.expr.primitives import REGISTRY

    npname, dom, odd, increasing, (lo, hi), special = INVERSE[name]
    p = REGISTRY[name]
    assert (p.odd, p.increasing) == (odd, increasing) and p.bounds == (lo, hi)
    f = getattr(np, npname)
    t = T
    if dom is not None:
        a, b, open_ = dom
        inside = (t > a if open_ else t >= a) & ((t < b if open_ else t <= b) if b is not None else True)
        ends = (t == a) | (t == b)  # an open end is a pole (atanh(+-1) = +-inf): checked below
        with np.errstate(invalid="ignore"):
            assert np.isnan(f(t[~inside & ~ends & np.isfinite(t)])).all()
        t = t[inside]
    with np.errstate(over="ignore"):
        y = f(t)
    assert not np.isnan(y).any()
    assert (y[1:] >= y[:-1]).all() if increasing else (y[1:] <= y[:-1]).all()
    if lo is not None:
        assert (y >= lo).all()
    if hi is not None:
        assert (y <= hi).all()
    if odd:
        with np.errstate(over="ignore"):
            assert np.array_equal(f(-t), -y)
        assert np.all((t > 0) <= (y >= 0)) and np.all((t < 0) <= (y <= 0))
        z = f(np.array([0.0, -0.0]))
        assert z.tolist() == [0.0, -0.0] and np.signbit(z[1])
    assert np.isnan(f(np.array([np.nan, -np.nan]))).all()
    with np.errstate(all="ignore"):
        for v, want in special.items():
            got = float(f(np.array([v]))[0])
            assert (np.isnan(got) and np.isnan(want)) or got == want, (name, v, got, want)


# the periodic functions and cosh (issue 52): NumPy's name, odd, even, the bounds its record states
PERIODIC = {
    "sin": (True, False, (-1.0, 1.0)),
    "cos": (False, True, (-1.0, 1.0)),
    "tan": (True, False, (None, None)),
}


def _binary32(o: np.ndarray) -> np.ndarray:
    """binary32 values from ordinals (order-preserving: negative ordinals are the negative values)."""
    return np.where(o >= 0, o, (-o) | 0x80000000).astype(np.uint32).view(np.float32).astype(np.float64)


def _ordinal32(v: float) -> int:
    i = int(np.float32(v).view(np.int32))
    return i if i >= 0 else -(i & 0x7FFFFFFF)


def _in_pieces(a: float, b: float) -> np.ndarray:
    """Arguments across [a, b]: a grid, runs of consecutive binary64 and binary32 values at both ends and at 0,
    and every 1024th binary32 value inside."""
    runs = [np.linspace(a, b, 200_001)]
    for v in (a, b, 0.0):
        runs.append(v + np.arange(-2000, 2000) * np.spacing(max(abs(v), 1e-300)))
        runs.append(_binary32(_ordinal32(v) + np.arange(-2000, 2000, dtype=np.int64)))
    runs.append(_binary32(np.arange(_ordinal32(a), _ordinal32(b), 1024, dtype=np.int64)))
    t = np.concatenate(runs)
    return np.unique(t[(t >= a) & (t <= b)])


@pytest.mark.parametrize("narrow", [False, True], ids=["numpy", "narrow"])
@pytest.mark.parametrize("name", sorted(PERIODIC))
def test_periodic_contracts(name, narrow, monkeypatch):
    """What sin's, cos's and tan's records state, on every binary64 value of T (huge arguments included: the
    argument reduction's): no NaN at a finite argument, within the bounds, odd or even to the bit, the values
    at +-0; NaN at +-inf and at NaN; monotone on each of the record's pieces. The z3 theorems near 0 (sin t in
    (0, t] on (0, 3]; cos t > 0 on [-1.57, 1.57]; tan t >= t on (0, 1.57]) on the platform's values. Both the
    function of the binary64 code (NumPy's) and that of the narrow formats' code (expr.primitives.platform_array
    for inputs of at most 26 bits: expr.quarter_turns' for sin and cos, and for tan where NumPy's loops are not
    AVX-512, which it is made to take here on every host)."""
    from opcert.expr import primitives
    from opcert.expr.primitives import REGISTRY, platform_array

    odd, even, (lo, hi) = PERIODIC[name]
    p = REGISTRY[name]
    assert (p.odd, p.even, p.increasing, p.bounds) == (odd, even, None, (lo, hi))
    if narrow and name == "tan":  # quarter_turns' tan, which the narrow code takes on a host without AVX-512
        monkeypatch.setattr(primitives, "_numpy_avx512", lambda: False)
    f = platform_array(p, 24) if narrow else getattr(np, name)
    assert f is not np.tan or not narrow
    assert p.pieces
    for a, b, d in p.pieces:
        t = _in_pieces(float(a), float(b))
        if narrow:  # that code's arguments are binary32 values (every one of the pieces: bench/quarter_turns.py)
            t = t[t.astype(np.float32) == t]
        y = f(t)
        assert t.size > 100_000 and (d * np.diff(y) >= 0).all(), (name, a, b)
    t = T[np.isfinite(T)]
    y = f(t)
    assert not np.isnan(y).any()
    if lo is not None:
        assert ((y >= lo) & (y <= hi)).all()
    if odd:
        assert np.array_equal(f(-t), -y)
    if even:
        assert np.array_equal(f(-t), y)
    near = (t > 0) & (t <= 1.57)
    if name == "sin":
        assert ((y[near] > 0) & (y[near] <= t[near])).all()
    elif name == "cos":
        assert (y[np.abs(t) <= 1.57] > 0).all()
    else:
        assert (y[near] >= t[near]).all()
    z = f(np.array([0.0, -0.0]))
    assert z.tolist() == ([1.0, 1.0] if even else [0.0, -0.0]) and (even or np.signbit(z[1]))
    with np.errstate(invalid="ignore"):
        assert np.isnan(f(np.array([np.inf, -np.inf, np.nan]))).all()


def test_cosh_contract():
    """cosh on t >= 0 (Cosh is cosh(|x|)): at least 1, non-decreasing, 1 at 0, +inf at +inf, NaN at NaN."""
    from opcert.expr.primitives import REGISTRY

    p = REGISTRY["cosh"]
    assert (p.increasing, p.domain, p.bounds) == (True, (0, False, None, False), (1.0, None))
    t = T[T >= 0]
    with np.errstate(over="ignore"):
        y = np.cosh(t)
    assert (y >= 1).all() and (y[1:] >= y[:-1]).all() and not np.isnan(y).any()
    assert np.cosh(np.array([0.0, np.inf])).tolist() == [1.0, np.inf] and np.isnan(np.cosh(np.nan))


def test_floor_contract():
    """floor's record: exact (Python's integer floor of the exact value), non-decreasing, -0 at -0, +-inf and NaN
    kept: on every binary64 value of T."""
    import math

    from opcert.expr.primitives import REGISTRY

    p = REGISTRY["floor"]
    assert (p.increasing, p.strict, p.bounds) == (True, False, (None, None))
    t = T[np.isfinite(T)]
    y = np.floor(t)
    assert all(float(math.floor(v)) == w for v, w in zip(t.tolist(), y.tolist()))
    assert (y[1:] >= y[:-1]).all()
    z = np.floor(np.array([-0.0, np.inf, -np.inf, np.nan]))
    assert np.signbit(z[0]) and z[0] == 0 and z[1] == np.inf and z[2] == -np.inf and np.isnan(z[3])
