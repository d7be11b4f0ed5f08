"""expr.quarter_turns: sin, cos and tan of binary32 values by an exact reduction, against MPFR."""

from __future__ import annotations

import functools

import gmpy2
import numpy as np
import pytest
from gmpy2 import mpfr

from opcert.expr import quarter_turns as qt


def test_table_is_2_over_pi_from_mpfr():
    with gmpy2.context(precision=600):
        t = int(gmpy2.floor(2 / gmpy2.const_pi() * mpfr(2) ** 400))
    rows = qt.table().reshape(-1, 4)
    for e in range(qt.E_MIN, qt.E_MAX + 1):
        w = sum(int(v) << (32 * i) for i, v in enumerate(rows[e - qt.E_MIN]))
        assert w == (t >> (400 - e - 126)) & ((1 << 128) - 1)


def nearest_to_quarter_turns() -> np.ndarray:
    """binary32 values nearest to multiples of pi / 2 (the rests the reduction must keep), from MPFR: for
    exponents across binary32's range, the multiple k pi / 2 nearest each of a few values, rounded to binary32,
    and its neighbours."""
    out = []
    with gmpy2.context(precision=400):
        half_pi = gmpy2.const_pi() / 2
        for e in range(-1, 128, 3):
            for m in (1.0, 1.3, 1.7):
                k = gmpy2.rint(mpfr(m) * mpfr(2) ** e / half_pi)
                out.append(float(gmpy2.mpfr(k * half_pi, 24)))
    x = np.array(out, np.float32)
    x = x[np.isfinite(x)]
    up = np.nextafter(x, np.float32(np.inf))
    down = np.nextafter(x, np.float32(0))
    # 16367173 * 2^72: a binary32 value within 2^-29 of a multiple of pi / 2 (x mod pi/2 small)
    return np.concatenate([x, up, down, np.array([16367173 * 2.0**72], np.float32)]).astype(np.float64)


def inputs() -> np.ndarray:
    rng = np.random.default_rng(11)
    bits = rng.integers(0, 2**31, 20000, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    x = x[np.isfinite(x)].astype(np.float64)
    not32 = rng.standard_normal(2000) * 10.0 ** rng.integers(-3, 12, 2000)  # binary64 values: the other path
    v = np.concatenate([x, nearest_to_quarter_turns(), not32, [0.0, 5e-324, 1e-300, 0.7853981633974483, 0.78539818]])
    return np.concatenate([v, -v])


def ulps_off(got: float, exact) -> float:
    with gmpy2.context(precision=200):
        if exact == 0:
            return 0.0 if got == 0 else float("inf")
        u = mpfr(2) ** (max(gmpy2.get_exp(exact) - 1, -1022) - 52)
        return float(abs(mpfr(got) - exact) / u)


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_within_the_stated_ulps(name):
    x = inputs()
    y = qt.FUNCTIONS[name](x)
    f = {"sin": gmpy2.sin, "cos": gmpy2.cos, "tan": gmpy2.tan}[name]
    worst = 0.0
    with gmpy2.context(precision=300):
        for v, got in zip(x.tolist(), y.tolist()):
            worst = max(worst, ulps_off(got, f(mpfr(v))))
    assert worst <= qt.ULPS_OF[name], worst
    assert worst > 0.5  # the figure is measured, not vacuous


def test_symmetry_and_special_values():
    x = inputs()
    assert np.array_equal(qt.sin(-x).view(np.int64), (-qt.sin(x)).view(np.int64))
    assert np.array_equal(qt.cos(-x).view(np.int64), qt.cos(x).view(np.int64))
    s = qt.sin(np.array([0.0, -0.0, np.inf, -np.inf, np.nan]))
    assert np.array_equal(np.signbit(s[:2]), [False, True]) and (s[:2] == 0).all() and np.isnan(s[2:]).all()
    c = qt.cos(np.array([0.0, -0.0, np.inf, -np.inf, np.nan]))
    assert (c[:2] == 1).all() and np.isnan(c[2:]).all()
    assert np.array_equal(qt.tan(-x).view(np.int64), (-qt.tan(x)).view(np.int64))
    t = qt.tan(np.array([0.0, -0.0, np.inf, -np.inf, np.nan]))
    assert np.array_equal(np.signbit(t[:2]), [False, True]) and (t[:2] == 0).all() and np.isnan(t[2:]).all()
    assert qt.sin(np.float64(3.0)) == qt.sin(np.array([3.0]))[0]  # a 0-d argument
    assert np.ndim(qt.cos(np.float64(3.0))) == 0 and np.shape(qt.cos(np.ones((2, 3)))) == (2, 3)
    into = np.empty(4)
    assert qt.sin(np.arange(4.0), out=into) is into and np.array_equal(into, qt.sin(np.arange(4.0)))


@pytest.mark.parametrize("which", [0, 1, 2])
def test_the_reduction_against_mpfr(which):
    """The kernel's quadrant code and rest against x (2 / pi) taken in MPFR with 600 bits of pi (not the
    kernel's table): the nearest integer k gives the quadrant k mod 4 (bit 3: a negative x) and the rest
    (x (2 / pi) - k) pi / 2 within 2^-51 of itself, halved where combine takes the cosine of r (sin in quadrants
    1 and 3, cos in 0 and 2 and below pi / 4; never for tan); |x| < pi / 4 and +-inf, NaN are their own rest
    (DIRECT); a rest under 2^-48 quarter turns, and a value that is no binary32 value, the C library's (OTHER)."""
    from opcert.expr import quarter_turns_kernel as k

    rng = np.random.default_rng(17)
    bits = rng.integers(0x3E000000, 0x7F800000, 3000, dtype=np.uint64).astype(np.uint32)
    x = np.concatenate([bits.view(np.float32).astype(np.float64), nearest_to_quarter_turns()])
    x = np.concatenate([x, -x[::3], [np.inf, -np.inf, np.nan, 1.0000000001, -0.0]])
    r, q = np.empty(x.size), np.empty(x.size, np.int8)
    n_other = k.reduce(x, qt.pairs(), r, q, qt.E_MIN, qt.E_MAX, qt.QUARTER, which)
    assert n_other == int((q == k.OTHER).sum())
    seen = set()
    with gmpy2.context(precision=600):
        half_pi = gmpy2.const_pi() / 2
        for v, got_r, got_q in zip(x.tolist(), r.tolist(), q.tolist()):
            if not np.isfinite(v) or abs(v) < qt.QUARTER:
                assert got_q == k.DIRECT and got_r == (v * 0.5 if which == 1 else v) or (v != v and got_r != got_r)
                seen.add("direct")
                continue
            if float(np.float32(v)) != v:  # in binary64: NumPy would compare a Python float in float32
                assert got_q == k.OTHER and got_r == 0
                seen.add("not binary32")
                continue
            turns = mpfr(abs(v)) / half_pi
            n = gmpy2.rint(turns)
            f = turns - n
            if abs(f) < mpfr(2) ** -48:
                assert got_q == k.OTHER and got_r == 0
                seen.add("tiny rest")
                continue
            quad = int(n) % 4
            assert got_q == quad + (8 if v < 0 else 0), (v, got_q, quad)
            halved = which < 2 and (quad + which) % 2 == 1
            exact = f * half_pi * (mpfr(0.5) if halved else 1)
            assert abs(mpfr(got_r) - exact) <= abs(exact) * mpfr(2) ** -51, (v, got_r)
            seen.add(f"quadrant {quad}")
    assert seen >= {"direct", "not binary32", "quadrant 0", "quadrant 1", "quadrant 2", "quadrant 3"}, seen


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_the_same_bits_whatever_a_value_shares_its_tile_with(name):
    """The reduction works in tiles (quarter_turns_kernel.TILE), a tile of |t| < pi / 4 alone taking a short
    path: values in tiles of every kind (all below pi / 4, all above, mixed, a partial last tile, NaN
    payloads) give the bits each gives alone in a call of one element."""
    from opcert.expr import quarter_turns_kernel as k

    rng = np.random.default_rng(3)
    small = rng.uniform(-0.78, 0.78, k.TILE)
    large = rng.integers(0x3F500000, 0x7F800000, k.TILE, dtype=np.uint64).astype(np.uint32).view(np.float32)
    mixed = inputs()[: k.TILE]
    nans = np.array([0x7FF0000000000001, 0x7FF8000000000123, 0xFFF4000000000000], np.uint64).view(np.float64)
    x = np.concatenate([small, large.astype(np.float64), mixed, nans, small[:5], -large[:7].astype(np.float64)])
    f = qt.FUNCTIONS[name]
    alone = np.array([f(np.array([v]))[0] for v in x])
    assert np.array_equal(f(x).view(np.int64), alone.view(np.int64))


@functools.cache
def _verdicts(op: str, target: str) -> dict:
    """{property: verdict} of the target's float16 measurement through the API (every input, every property):
    Cos's two cases below read one measurement of each target."""
    from opcert.verify.accuracy.measure import measure

    return {q["name"]: q for q in measure(op, target, "float16", "exhaustive", isolation="none").properties}


@pytest.mark.parametrize(
    "op, kernel, prop",
    [
        ("Sin", "piece_kernels:sin_stepping_back_at_1", "monotonic"),
        ("Cos", "piece_kernels:cos_stepping_up_at_1", "monotonic"),
        ("Cos", "piece_kernels:cos_stepping_up_at_1", "monotonic_negative"),
    ],
)
def test_a_step_the_wrong_way_inside_a_monotone_piece_is_refuted(cli, op, kernel, prop):
    """The pieces' properties can fail: a kernel one value the wrong way at x = +-1 (float16, every input) is
    refuted, with the pair that shows it, through the API and the CLI; opcert's own passes."""
    p = _verdicts(op, kernel)[prop]
    assert p["status"] == "refuted", p
    assert "1.0" in str(p.get("counterexample")) or "0.9995" in str(p.get("counterexample")), p
    assert _verdicts(op, "opcert")[prop]["status"] == "proved"
    # a budget the step keeps within (it is 2 ULPs at most), so that the property alone fails the check
    flags = ("--dtype", "float16", "--exhaustive", "--max-ulp", "4", "--require", prop)
    code, out, _ = cli("accuracy", op, "--target", kernel, *flags)
    assert code == 1 and f"{prop}: refuted" in out, out[-2000:]
    code, _, _ = cli("accuracy", op, "--target", "opcert", *flags)
    assert code == 0
