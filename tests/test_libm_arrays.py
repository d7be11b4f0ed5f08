"""glibc's vector functions and long double erf/erfc over arrays (opcert.expr.libm_arrays):
what the reference's balls assume of them, checked against Arb and against the scalar
functions; and that opcert works the same without them."""

import math
import os
import subprocess
import sys
from fractions import Fraction

import flint
import numpy as np
import pytest
from conftest import all_16bit

import opcert
from opcert.expr import PRIMITIVES, libm_arrays
from opcert.expr.primitives import binary64_array

VECTOR = [n for n in libm_arrays.VECTOR_NAMES if libm_arrays.vector(n) is not None]
needs_vector = pytest.mark.skipif(not VECTOR, reason=f"no vector functions here: {libm_arrays.status()}")


def _underlying(f):
    """The function a blockwise fill wraps (expr.primitives.filled_beyond), or f."""
    while hasattr(f, "__wrapped__"):
        f = f.__wrapped__
    return f


def _arguments(name):
    """Hard and ordinary arguments over f's domain: zeros, subnormals, tiny, the binades up to
    overflow and underflow, the infinities."""
    rng = np.random.default_rng(5)
    mag = np.concatenate(
        [
            np.exp2(rng.uniform(-1074, -1022, 200)),
            np.exp2(rng.uniform(-60, 10.5, 3000)),
            [2.0**-1074, 2.0**-1022, 1e-300, 0.5, 1.0, 2.0, 700.0, 709.78, 745.1, 1e300],
        ]
    )
    t = np.concatenate([mag, -mag])
    if name == "log":
        t = np.abs(t)
    if name == "log1p":
        t = np.where(t <= -1, -np.abs(t) / (1 + np.abs(t)), t)
        t = np.where(t == -1, -0.5, t)  # -1e300 / (1 + 1e300) rounds to -1: log1p's pole
    return t


def _arb(name, t: float):
    n, d = Fraction(t).as_integer_ratio()
    v = flint.arb(n) / flint.arb(d)
    return v.erfc() if name == "erfc" else getattr(v, name)()


@needs_vector
@pytest.mark.parametrize("name", VECTOR)
def test_vector_function_within_its_contract_against_arb(name):
    f = libm_arrays.vector(name)
    t = _arguments(name)
    with np.errstate(all="ignore"):
        got = f(t)
    flint.ctx.prec = 200
    try:
        worst, at = 0.0, None
        for ti, gi in zip(t.tolist(), got.tolist()):
            if not math.isfinite(gi):  # overflow: exp(745.1), expm1(1e300); checked below
                assert name in ("exp", "expm1") and ti > 709.78 and gi == math.inf, (name, ti, gi)
                continue
            v = _arb(name, ti)
            ulp = max(math.ulp(gi), 2.0**-1074) if gi != 0 else 2.0**-1074
            err = float(
                (
                    abs(flint.arb(Fraction(gi).numerator) / flint.arb(Fraction(gi).denominator) - v) / flint.arb(ulp)
                ).upper()
            )
            if err > worst:
                worst, at = err, ti
    finally:
        flint.ctx.prec = 53
    assert worst <= libm_arrays.VECTOR_ULPS, f"{name}: {worst:.3f} ULPs at {at!r}"


@needs_vector
@pytest.mark.parametrize("name", VECTOR)
def test_vector_function_at_its_exact_points_infinities_and_nan(name):
    """The ball takes f(0) (log: f(1)) as exact, and the values at the infinities from the record."""
    p = PRIMITIVES[name]
    f = libm_arrays.vector(name)
    with np.errstate(all="ignore"):
        for q in (Fraction(0), Fraction(1)):
            want = p.exact(q)
            if want is not None and p.in_domain(q):
                for t in (0.0, -0.0) if q == 0 else (1.0,):
                    y = f(np.array([t]))[0]
                    assert y == float(want), (name, t, y)
                    if want == 0:  # the sign of zero is the argument's (an odd function)
                        assert math.copysign(1, y) == math.copysign(1, t), (name, t, y)
        lo, hi = p.at_inf
        y = f(np.array([-np.inf, np.inf, np.nan, -np.nan]))
        for got, want, where in ((y[0], lo, p.in_domain(Fraction(-10))), (y[1], hi, True)):
            if want is not None and where:  # NaN where the record says so (sin at +-inf)
                assert got == want or (math.isnan(want) and math.isnan(got)), (name, got, want)
        assert np.isnan(y[2:]).all()


@needs_vector
@pytest.mark.parametrize("name", VECTOR)
def test_a_value_does_not_depend_on_its_place_in_the_call(name):
    """Calls of every length 1 to 13 at every offset give the bits of one long call (the last one to
    three values go through a padded vector)."""
    f = libm_arrays.vector(name)
    rng = np.random.default_rng(8)
    t = rng.uniform(0.01, 3, 64) * rng.choice([-1, 1], 64)
    if name in ("log",):
        t = np.abs(t)
    if name == "log1p":
        t = np.abs(t)
    whole = f(t)
    for n in range(1, 14):
        for off in range(0, 5):
            part = f(t[off : off + n])
            assert np.array_equal(part.view(np.uint64), whole[off : off + n].view(np.uint64)), (name, n, off)
    y = np.full(9, 7.0)
    assert f(t[:5], out=y[2:7]) is not None and np.array_equal(y[2:7], whole[:5])  # a strided out= is filled
    assert np.isscalar(f(np.float64(t[0]))) or np.ndim(f(np.float64(t[0]))) == 0


@pytest.mark.parametrize("name", libm_arrays.LONG_DOUBLE_NAMES)
def test_long_double_function_matches_the_c_library_scalar(name):
    """erfl/erfcl over an array give, rounded to binary64, what Python's math.erf/erfc give within
    their binary64 contract (an independent path: the scalar C functions); their own contract is
    checked against Arb in tests/test_reference_wide.py."""
    f = libm_arrays.long_double(name)
    if f is None:
        pytest.skip(f"no long double {name} here: {libm_arrays.status()}")
    t = np.linspace(-6, 27, 2001)
    got = f(t.astype(np.longdouble)).astype(np.float64)
    want = np.array([getattr(math, name)(v) for v in t])
    ulp = np.spacing(np.abs(want)).clip(2.0**-1074)
    assert (np.abs(got - want) <= PRIMITIVES[name].ulps * ulp + 1e-300).all()


@pytest.mark.parametrize("name", ["erf", "erfc"])
def test_erf_and_erfc_over_arrays_are_the_c_librarys_own_bit_for_bit(name):
    """expr.special's erf and erfc (what opcert's binary64 code and its sample use, NumPy having none):
    the bits Python's math module gives (the C library's functions), on ordinary, tiny, subnormal,
    saturated and special arguments."""
    from opcert.expr import special

    rng = np.random.default_rng(11)
    mag = np.concatenate(
        [
            rng.uniform(0, 30, 3000),
            np.exp2(rng.uniform(-1074, -1, 3000)),
            [0.0, 2.0**-1074, 1e-300, 5.9, 6.0, 27.3, 28.0, 1e300, np.inf],
        ]
    )
    x = np.concatenate([mag, -mag, [np.nan]])
    want = np.array([getattr(math, name)(v) for v in x])
    got = getattr(special, name)(x)
    same = (got.view(np.uint64) == want.view(np.uint64)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), (x[~same][:4], got[~same][:4], want[~same][:4])


def test_binary64_array_names_the_vector_function_and_its_contract(monkeypatch):
    """Where NumPy's loops are scalar (no AVX-512; on an AVX-512 host the choice is made as if it had none,
    so that this runs on every host: the other choice is the test below)."""
    from opcert.expr import primitives, quarter_turns

    monkeypatch.setattr(primitives, "_numpy_avx512", lambda: False)
    for name in PRIMITIVES:
        f, ulps, simd = binary64_array(name)
        if name in quarter_turns.FUNCTIONS:  # the exact reduction, then the vector functions (or NumPy's)
            assert f is quarter_turns.FUNCTIONS[name] and ulps == max(
                PRIMITIVES[name].ulps, quarter_turns.ULPS_OF[name]
            )
        elif libm_arrays.vector(name) is not None and name != "sqrt":
            assert ulps == max(PRIMITIVES[name].ulps, libm_arrays.VECTOR_ULPS) and simd
        else:
            assert _underlying(f) is _underlying(PRIMITIVES[name].numpy) and ulps == PRIMITIVES[name].ulps


def test_loading_the_library_keeps_subnormals():
    """The library is built without -ffast-math, whose start-up code would set flush-to-zero for the
    whole process (every subnormal result of opcert's own arithmetic would become 0)."""
    libm_arrays.status()
    assert np.float64(2.0**-1073) * np.float64(0.5) == 2.0**-1074
    assert np.float64(2.0**-1074) > 0


def test_turned_off_every_ball_takes_numpys_functions():
    """(sin and cos, and tan without AVX-512: the exact reduction, then NumPy's functions of the reduced
    argument.)"""
    code = (
        "import numpy as np; from opcert.expr import libm_arrays, PRIMITIVES, quarter_turns as q;"
        "from opcert.expr.primitives import binary64_array, _reduced_exactly;"
        "print(libm_arrays.status());"
        "u = lambda f: u(f.__wrapped__) if hasattr(f, '__wrapped__') else f;"
        "print(all(u(binary64_array(n)[0]) is u(PRIMITIVES[n].numpy) for n in PRIMITIVES if not _reduced_exactly(n))"
        " and q._sine() is np.sin)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "OPCERT_LIBMVEC": "0"},
    ).stdout.split("\n")
    assert out[0] == "turned off (OPCERT_LIBMVEC=0)" and out[1] == "True"


def test_without_a_compiler_it_says_why_and_falls_back(tmp_path):
    code = (
        "from opcert.expr import libm_arrays; print(libm_arrays.status());"
        "print(libm_arrays.vector('tanh') is None, libm_arrays.long_double('erf') is None)"
    )
    env = {**os.environ, "CC": "/nonexistent/cc", "OPCERT_KERNEL_CACHE": str(tmp_path), "OPCERT_LIBMVEC": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
    ).stdout.split("\n")
    assert out[0].startswith("not built") and out[1] == "True True", out


@needs_vector
@pytest.mark.parametrize("name", ["exp", "expm1", "erf", "erfc"])
def test_a_block_beyond_the_saturation_gets_the_functions_own_values(name, monkeypatch):
    """binary64_array fills a block that lies wholly beyond the function's saturation without the call
    (glibc's vector functions take a slow scalar path there): the same bits the function gives. (As
    chosen where NumPy's loops are scalar: on an AVX-512 host NumPy's exp is taken instead.)"""
    from opcert.expr import primitives

    monkeypatch.setattr(primitives, "_numpy_avx512", lambda: False)
    f, _, _ = binary64_array(name)
    vec = libm_arrays.vector(name)
    for lo, hi in ((-1e300, -800.0), (-800.0, -40.0), (-40.0, 40.0), (30.0, 800.0), (800.0, 1e300)):
        t = np.linspace(lo, hi, 4096)
        with np.errstate(all="ignore"):
            got, want = f(t), vec(t)
        assert np.array_equal(got.view(np.uint64), want.view(np.uint64)), (name, lo, hi)


def test_where_numpy_dispatches_to_avx512_its_own_loops_are_kept(monkeypatch):
    """NumPy's AVX-512 loops (0.6-0.8 ns a value) beat glibc's AVX2 ones (1.7-3.9 ns): there the balls keep
    NumPy's functions for what NumPy has, and take glibc's only for erf and erfc, which NumPy lacks."""
    from opcert.expr import primitives

    monkeypatch.setattr(primitives, "_numpy_avx512", lambda: True)
    for name, p in PRIMITIVES.items():
        f, ulps, simd = binary64_array(name)
        if name in ("sin", "cos"):  # the exact reduction on every host (tan's there: NumPy's AVX-512 loop)
            assert f is primitives.quarter_turns.FUNCTIONS[name] and simd, name
        elif p.vector:
            assert _underlying(f) is _underlying(p.numpy) and ulps == p.ulps and simd, name
        elif libm_arrays.vector(name) is not None:
            assert f is not p.numpy and ulps == max(p.ulps, libm_arrays.VECTOR_ULPS) and simd, name


# Blocks that binary64_array fills without calling the function (expr.primitives._FILLED): (lo, hi) ranges
# wholly inside a known region, from the region's end inwards, and what the region's value is.
_KNOWN_BLOCKS = {
    "tanh": [(2.0**-27, 2.0**-40), (2.0**-1022, 2.0**-1074), (20.0, 100.0), (1e30, 1e308)],
    "expm1": [(2.0**-54, 2.0**-70), (2.0**-1000, 2.0**-1074)],
    "log1p": [(2.0**-54, 2.0**-70), (2.0**-1000, 2.0**-1074)],
    "exp": [(2.0**-55, 2.0**-70), (2.0**-1000, 2.0**-1074)],
}


def _known_block(lo, hi, negative):
    t = np.geomspace(lo, hi, 4096)
    t[0] = np.nextafter(lo, hi)  # the region's end is open
    t[-1] = hi
    return -t if negative else t


def _mpfr_binary64(name, t):
    import gmpy2

    with gmpy2.context(gmpy2.ieee(64)):  # binary64, subnormals included, rounded to nearest
        return float(getattr(gmpy2, name)(gmpy2.mpfr(float(t))))


@pytest.mark.parametrize("name", sorted(_KNOWN_BLOCKS))
@pytest.mark.parametrize("choice", ["numpy", "vector"])
def test_a_block_where_the_value_is_known_is_filled_with_the_correctly_rounded_one(name, choice):
    """A block wholly where the function's binary64 value is known (near 0: t itself, or 1 for exp; beyond
    tanh's saturation: +-1) is filled without the call, with the value MPFR rounds to. The function itself
    may differ there within its contract (glibc's scalar tanh computes -t'/(t'+2) near 0), which is all the
    balls assume of either."""
    from opcert.expr import primitives

    f = primitives._numpy_blockwise(name) if choice == "numpy" else primitives._vector_blockwise(name)
    if f is None:
        pytest.skip(f"no vector {name} here: {libm_arrays.status()}")
    own = _underlying(f)
    ulps = binary64_array(name)[1] if choice == "vector" else PRIMITIVES[name].ulps
    assert f is not own, f"{name}: no fill"
    for lo, hi in _KNOWN_BLOCKS[name]:
        for negative in (False, True):
            t = _known_block(lo, hi, negative)
            got, theirs = f(t), own(t)
            for i in list(range(0, 4096, 64)) + [1, 4094, 4095]:
                want = _mpfr_binary64(name, t[i])
                assert got[i] == want and math.copysign(1, got[i]) == math.copysign(1, want), (name, t[i])
            spacing = np.spacing(np.abs(got))
            assert (np.abs(theirs - got) <= ulps * spacing).all(), (name, choice, lo, hi)


def test_a_block_outside_the_known_regions_is_computed():
    """The fill is taken only where the whole block is inside a region: one element outside and every
    value is the function's."""
    f, ulps, _ = binary64_array("tanh")
    t = np.full(4096, 2.0**-30)
    t[100] = 0.5
    assert np.array_equal(f(t), _underlying(f)(t))
    assert abs(f(t)[100] - _mpfr_binary64("tanh", 0.5)) <= ulps * np.spacing(0.5)  # computed: not 0.5 itself
    t = np.full(4096, 30.0)
    t[7] = 18.0
    assert f(t)[7] == _underlying(f)(t)[7] < 1.0


def test_the_implementations_tanh_takes_the_known_values_element_by_element(monkeypatch):
    """opcert's implementation takes tanh from expr.primitives._tanh_np: in binary64, NumPy's tanh, and
    what MPFR rounds tanh to where that is known beforehand (+-1 where |t| >= 20, t where |t| < 2^-27),
    whatever else is in the call, by either way of computing a mixed call; NaN propagates; other types
    are NumPy's own (in long double 1 - tanh(20) is far above the half ULP below 1)."""
    import gmpy2

    from opcert.expr import primitives
    from opcert.expr.primitives import TANH_SATURATION, TANH_TINY, _tanh_np

    # the region near 0 is used where this host's tanh keeps the junction non-decreasing (test below)
    tiny = primitives._tiny_region()
    ends = np.array(
        [
            TANH_SATURATION,
            np.nextafter(TANH_SATURATION, 0),
            1e300,
            np.inf,
            TANH_TINY,
            np.nextafter(TANH_TINY, 0),
            2.0**-40,
            2.0**-1074,
            1e-300,
        ]
    )
    for avx512 in (False, True):  # a mixed call gathers the rest, or computes all and selects
        monkeypatch.setattr(primitives, "_numpy_avx512", lambda avx512=avx512: avx512)
        for t in np.concatenate([ends, -ends]):
            with gmpy2.context(gmpy2.ieee(64)):
                want64 = float(gmpy2.tanh(gmpy2.mpfr(float(t))))
            alone = _tanh_np(np.full(2048, t))
            mixed = _tanh_np(np.concatenate([np.full(2047, t), [0.5]]))
            few = _tanh_np(np.concatenate([[t], np.linspace(0.1, 1, 2047)]))
            assert alone[0] == mixed[0] == few[0] and alone.view(np.uint64)[0] == few.view(np.uint64)[0], t
            if abs(t) >= TANH_SATURATION or abs(t) < tiny:
                assert alone[0] == want64 and np.signbit(alone[0]) == np.signbit(want64), t
            else:
                assert alone[0] == np.tanh(t), t
        rng = np.random.default_rng(3)
        t = np.concatenate([rng.uniform(-40, 40, 5000), np.exp2(rng.uniform(-60, -20, 3000)), [np.nan, -0.0, 0.0]])
        got = _tanh_np(t)
        want = np.where(np.abs(t) >= TANH_SATURATION, np.copysign(1.0, t), np.where(np.abs(t) < tiny, t, np.tanh(t)))
        assert np.array_equal(got, want, equal_nan=True) and np.signbit(got[-2]) and not np.signbit(got[-1])
        out = np.empty_like(t)
        assert _tanh_np(t, out=out) is out and np.array_equal(out, want, equal_nan=True)
        for part in (t[::2], t[:10], t.reshape(-1, 1)):  # a view, a few, 2-D
            w = np.where(
                np.abs(part) >= TANH_SATURATION,
                np.copysign(1.0, part),
                np.where(np.abs(part) < tiny, part, np.tanh(part)),
            )
            got = _tanh_np(part)
            assert got.shape == part.shape and np.array_equal(got, w, equal_nan=True)
        t32 = t.astype(np.float32)
        assert _tanh_np(t32).dtype == np.float32 and np.array_equal(_tanh_np(t32), np.tanh(t32), equal_nan=True)
    assert _tanh_np(np.float64(25.0)) == 1.0 and _tanh_np(np.float64(0.5)) == np.tanh(0.5)
    assert _tanh_np(np.float64(1e-20)) == 1e-20 and np.signbit(_tanh_np(np.float64(-0.0)))  # both ways: t
    ld = np.full(4, 20.0, dtype=np.longdouble)
    assert np.array_equal(_tanh_np(ld), np.tanh(ld)) and _tanh_np(ld)[0] < 1


def test_the_tiny_region_is_not_used_where_the_platforms_tanh_is_low_at_its_end(monkeypatch):
    """The junction at 2^-27 is non-decreasing only where the platform's tanh there is at least the largest
    double below 2^-27: one that is 2 ULPs low (within its contract) turns the region off."""
    from opcert.expr import primitives

    real = np.tanh
    monkeypatch.setattr(np, "tanh", lambda t, *a, **k: np.nextafter(np.nextafter(real(t), 0), 0))
    assert primitives._tiny_region.__wrapped__() == 0.0
    monkeypatch.setattr(np, "tanh", real)
    c = primitives.TANH_TINY
    keeps = real(c) >= np.nextafter(c, 0) and real(-c) <= -np.nextafter(c, 0)
    assert primitives._tiny_region.__wrapped__() == (c if keeps else 0.0)


ON_BINARY32 = [n for n in libm_arrays.ON_BINARY32_NAMES if libm_arrays.on_binary32(n) is not None]
needs_on_binary32 = pytest.mark.skipif(not ON_BINARY32, reason=f"no vector atan/cosh here: {libm_arrays.status()}")


def _binary32_sample(seed=9, n=1 << 20) -> np.ndarray:
    """Random binary32 values over every binade, every float16 and bfloat16 value widened, and every binary32
    value in windows where the functions change regime (atan near 1/2, 1 and 2^26; cosh near 1, 22 and 711),
    positive, sorted, distinct (bench/libmvec_binary32.py takes every binary32 value)."""
    rng = np.random.default_rng(seed)
    parts = [rng.integers(0, 0x7F800000, n, dtype=np.uint32)]
    for v in (0.5, 1.0, 22.0, 711.0, 2.0**26):
        b = int(np.float32(v).view(np.uint32))
        parts.append(np.arange(b - 4096, b + 4096, dtype=np.uint32))
    t = np.unique(np.concatenate(parts)).view(np.float32).astype(np.float64)
    with np.errstate(invalid="ignore"):
        for fmt in ("float16", "bfloat16"):
            w = all_16bit(fmt).astype(np.float64)
            t = np.concatenate([t, w[np.isfinite(w) & (w >= 0)]])
    return np.unique(t)


@needs_on_binary32
@pytest.mark.parametrize("name", ON_BINARY32)
def test_the_vector_functions_at_binary32_arguments_keep_the_records_contract(name):
    """The clauses of the record opcert's provers assume (expr.primitives), on a sample of binary32 values:
    within 4 ULPs of Arb, non-decreasing, atan odd bit for bit and within -pi/2..pi/2, cosh at least 1 and +inf
    from 711 on (where _NARROW_FILLED fills a block without the call), and the values at 0, the infinities and
    NaN."""
    f = libm_arrays.on_binary32(name)
    t = _binary32_sample()
    with np.errstate(over="ignore"):
        y = f(t)
    with np.errstate(invalid="ignore"):
        assert not (np.diff(y) < 0).any(), t[np.flatnonzero(np.diff(y) < 0)[:4]]
    if name == "atan":
        assert np.array_equal(f(-t).view(np.uint64), (-y).view(np.uint64))
        assert (np.abs(y) <= math.pi / 2).all()
        assert list(f(np.array([np.inf, -np.inf]))) == [math.pi / 2, -math.pi / 2]
    else:
        assert (y >= 1).all() and f(np.array([0.0]))[0] == 1.0
        assert (y[t >= 711.0] == np.inf).all() and f(np.array([np.inf]))[0] == np.inf
    assert np.isnan(f(np.array([np.nan, -np.nan]))).all()
    zero = f(np.array([0.0, -0.0]))
    if name == "atan":
        assert (zero == 0).all() and not np.signbit(zero[0]) and np.signbit(zero[1])
    rng = np.random.default_rng(4)
    pick = rng.choice(t[np.isfinite(y)], 2000, replace=False)
    flint.ctx.prec = 200
    try:
        for ti, gi in zip(pick.tolist(), f(pick).tolist()):
            g = Fraction(gi)
            err = (
                abs(flint.arb(g.numerator) / flint.arb(g.denominator) - _arb(name, ti)) / flint.arb(math.ulp(gi))
            ).upper()
            assert float(err) <= libm_arrays.VECTOR_ULPS, (name, ti, gi, float(err))
    finally:
        flint.ctx.prec = 53


@needs_on_binary32
@pytest.mark.parametrize("name,op", [("atan", "Atan"), ("cosh", "Cosh")])
def test_the_narrow_code_with_the_vector_functions_gives_the_references_bits(monkeypatch, name, op):
    """opcert's float32 code where NumPy's loops are not AVX-512 (on an AVX-512 host the choice is made as if it
    had none): the vector function where the primitive's argument is the input (atan(x), cosh(|x|)), NumPy's where
    it is not (DirectML's x * 0.75 + 0.1), through NumPy's passes and the compiled loops alike (calls of fewer and
    of more than impl.run's MIN_SIZE); each result the reference's."""
    from opcert.expr import primitives
    from opcert.impl.run import MIN_SIZE

    monkeypatch.setattr(primitives, "_numpy_avx512", lambda: False)
    taken = []
    vector = libm_arrays.on_binary32(name)

    def spy(t, out=None):
        taken.append(np.size(t))
        return vector(t, out=out)

    monkeypatch.setattr(libm_arrays, "on_binary32", lambda n: spy if n == name else None)
    rng = np.random.default_rng(6)
    x = np.concatenate(
        [
            (np.exp2(rng.uniform(-30, 12, 6000)) * rng.choice([-1, 1], 6000)).astype(np.float32),
            np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 711.0, -800.0]),
        ]
    )
    for attrs, through_vector in (({}, True), ({"standard": "directml", "scale": 0.75, "bias": 0.1}, False)):
        want = opcert.reference(op, x, **attrs)
        for part in (x, x[:1000]):
            taken.clear()
            got = opcert.run(op, part, **attrs)
            assert np.array_equal(got.view(np.uint32), want[: part.size].view(np.uint32)), (op, attrs, part.size)
            assert (sum(taken) == part.size) if through_vector else not taken, (attrs, part.size, taken)
    assert x.size >= MIN_SIZE > 1000  # both interpreters ran


def test_a_cosh_block_above_711_is_filled_without_the_call():
    """_NARROW_FILLED: a block of at least 1024 arguments all above 711 (strictly) is +inf without calling the
    function (one that raises here), on every host; a block reaching down to 711, or holding a NaN, calls it."""
    import dataclasses

    from opcert.expr import primitives

    def raises(t, out=None):
        raise AssertionError("called")

    p = dataclasses.replace(PRIMITIVES["cosh"], numpy=raises)
    f = primitives.platform_array(p, 24)
    assert (f(np.full(1024, 711.5)) == np.inf).all() and (f(np.linspace(711.5, 1e30, 4096)) == np.inf).all()
    for block in (np.linspace(700, 800, 4096), np.append(np.full(2047, 800.0), np.nan), np.full(1023, 800.0)):
        with pytest.raises(AssertionError, match="called"):
            f(block)
    assert primitives.platform_array(p, 53) is raises  # the binary64 code: NumPy's as it is
    with np.errstate(over="ignore"):
        assert np.cosh(np.float64(711.0)) == np.inf  # what the fill gives is NumPy's own value there
