"""spec.pow_reference, Pow's reference: pow(x * scale + bias, y) correctly rounded, IEEE 754's special cases (and
DirectML's NaN at -inf), against MPFR (gmpy2), the independent oracle: mpfr_pow in a context of the format's
precision and exponent range with its subnormals emulated, which rounds correctly and follows C99's (IEEE 754's) pow
at the special values. Bit for bit; any NaN equals any NaN."""

import functools
import math
from fractions import Fraction

import gmpy2
import ml_dtypes
import numpy as np
import pytest
from oracle import _ziv

from opcert.formats import get_format
from opcert.spec.pow_reference import pow_exact, pow_reference

FORMATS = ("float16", "bfloat16", "float32", "float64")
WIDE = gmpy2.context(precision=2400, emin=-(10**6), emax=10**6)  # x * scale + bias of these tests, exactly


@functools.cache
def _context(name: str):
    fmt = get_format(name)
    return gmpy2.context(
        precision=fmt.p, emin=fmt.emin - fmt.p + 2, emax=fmt.emax + 1, subnormalize=True, round=gmpy2.RoundToNearest
    )


def _dtype(name: str) -> np.dtype:
    return get_format(name).dtype


def oracle(x, y, name: str, standard: str = "onnx", scale: float = 1.0, bias: float = 0.0) -> np.ndarray:
    """MPFR's pow of g = x * scale + bias (the exact real; with the defaults x itself, -0 included, except that
    DirectML's x * 1 + 0 is +0 at -0), rounded to the format; DirectML: NaN at -inf to a finite non-integer power."""
    ctx = _context(name)
    plain = scale == 1.0 and bias == 0.0
    with np.errstate(invalid="ignore"):  # ml_dtypes' NaN to float64
        xs = np.asarray(x).astype(np.float64).ravel().tolist()
        ys = np.asarray(y).astype(np.float64).ravel().tolist()
    out = []
    for xv, yv in zip(xs, ys):
        with gmpy2.context(WIDE):
            if plain:
                g = gmpy2.mpfr(xv)
            elif math.isnan(xv):
                g = gmpy2.mpfr("nan")
            elif math.isinf(xv):
                g = gmpy2.mpfr(bias) if scale == 0 else gmpy2.mpfr(xv if scale > 0 else -xv)
            else:
                g = gmpy2.mpfr(xv) * gmpy2.mpfr(scale) + gmpy2.mpfr(bias)  # exact at 2400 bits
            if (standard == "directml" or not plain) and g == 0:
                g = gmpy2.mpfr(0)  # the real 0
        if standard == "directml" and gmpy2.is_infinite(g) and g < 0 and math.isfinite(yv) and yv != math.floor(yv):
            out.append(math.nan)
            continue
        if gmpy2.is_regular(g) and not ctx.emin <= gmpy2.get_exp(g) <= ctx.emax:
            out.append(_wide_pow(g, yv, name))  # MPFR's operands must lie in its exponent range
            continue
        with gmpy2.context(ctx):
            out.append(float(g ** gmpy2.mpfr(yv)))
    return np.array(out, dtype=np.float64).astype(_dtype(name)).reshape(np.shape(x))


def _wide_pow(g, yv: float, name: str) -> float:
    """g^y for a g beyond the format's exponent range (x * scale + bias past the largest finite value): MPFR's pow
    in a wide range, at working precisions raised while the value is a midpoint of the format (oracle._ziv), then
    rounded to the format."""

    def at(prec):
        with gmpy2.context(precision=prec, emin=-(10**7), emax=10**7):
            return g ** gmpy2.mpfr(yv)

    return _ziv(at, name)


def assert_same(got, want, x, y, name: str, **kw):
    fmt = get_format(name)
    assert got.dtype == fmt.dtype and got.shape == want.shape
    with np.errstate(invalid="ignore"):
        g64, w64 = got.astype(np.float64), want.astype(np.float64)
    bad = (got.view(fmt.uint) != want.view(fmt.uint)) & ~(np.isnan(g64) & np.isnan(w64))
    if bad.any():
        i = np.flatnonzero(bad.ravel())
        with np.errstate(invalid="ignore"):
            xs, ys = np.asarray(x).astype(np.float64).ravel(), np.asarray(y).astype(np.float64).ravel()
        rows = [(float(xs[j]), float(ys[j]), float(g64.ravel()[j]), float(w64.ravel()[j])) for j in i[:8]]
        pytest.fail(f"{i.size} of {bad.size} differ in {name} {kw} (x, y, got, MPFR): {rows}")


def check(x, y, name: str, standard: str = "onnx", scale: float = 1.0, bias: float = 0.0):
    dt = _dtype(name)
    with np.errstate(over="ignore", invalid="ignore"):
        x, y = np.asarray(x, dtype=np.float64).astype(dt), np.asarray(y, dtype=np.float64).astype(dt)
    got = pow_reference(x, y, name, standard, scale, bias)
    assert_same(got, oracle(x, y, name, standard, scale, bias), x, y, name, standard=standard, scale=scale, bias=bias)
    return got


def _fmt_round(v: np.ndarray, name: str) -> np.ndarray:
    """Values of the format nearest v (through float32 for bfloat16: these are test inputs, any nearby value will
    do)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return np.asarray(v, dtype=np.float64).astype(np.float32).astype(_dtype(name)).astype(np.float64)


def _specials(name: str) -> list:
    fmt = get_format(name)
    tiny = float(fmt.min_subnormal)
    top = float(fmt.max_finite)
    base = [0.0, math.inf, 1.0, 0.5, 2.0, 3.0, 2.5, tiny, 3 * tiny, top, float(2**fmt.emin)]
    return [math.nan] + base + [-v for v in base]


# ---- special values -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("standard", ["onnx", "directml"])
@pytest.mark.parametrize("name", FORMATS)
def test_every_pair_of_special_values(name, standard):
    s = _specials(name)
    x, y = np.meshgrid(s, s, indexing="ij")
    check(x, y, name, standard)


def test_ieee_special_cases_written_out():
    """IEEE 754's table of pow (its section 9.2.1), here by hand, not by MPFR."""
    inf, nan = math.inf, math.nan
    cases = [
        (nan, 0.0, 1.0), (nan, -0.0, 1.0), (1.0, nan, 1.0), (1.0, inf, 1.0), (-1.0, inf, 1.0), (-1.0, -inf, 1.0),
        (nan, 1.0, nan), (2.0, nan, nan), (-1.0, nan, nan),
        (0.0, -3.0, inf), (-0.0, -3.0, -inf), (-0.0, -2.0, inf), (-0.0, -2.5, inf), (-0.0, -inf, inf),
        (-0.0, inf, 0.0), (-0.0, 3.0, -0.0), (-0.0, 2.0, 0.0), (-0.0, 0.5, 0.0), (0.0, 3.0, 0.0),
        (0.5, -inf, inf), (-0.5, -inf, inf), (2.0, -inf, 0.0), (-2.0, -inf, 0.0),
        (0.5, inf, 0.0), (-0.5, inf, 0.0), (2.0, inf, inf), (-2.0, inf, inf),
        (-inf, -3.0, -0.0), (-inf, -2.0, 0.0), (-inf, -2.5, 0.0), (-inf, 3.0, -inf), (-inf, 2.0, inf),
        (-inf, 2.5, inf), (inf, -2.0, 0.0), (inf, 0.5, inf), (-2.0, 0.5, nan), (-2.0, -2.5, nan),
        (-2.0, 3.0, -8.0), (-2.0, -2.0, 0.25), (4.0, 0.5, 2.0),
    ]  # fmt: skip
    x, y, want = (np.array(c) for c in zip(*cases))
    for name in FORMATS:
        dt = _dtype(name)
        got = pow_reference(x.astype(dt), y.astype(dt), name).astype(np.float64)
        same = ((got == want) & (np.signbit(got) == np.signbit(want))) | (np.isnan(got) & np.isnan(want))
        assert same.all(), (name, [c for c, ok in zip(cases, same) if not ok])


@pytest.mark.parametrize("name", ["float16", "float32"])
def test_directml_reads_zero_and_minus_inf_its_own_way(name):
    dt = _dtype(name)
    x = np.array([-0.0, -0.0, 0.0, -np.inf, -np.inf, -np.inf, -np.inf], dtype=dt)
    y = np.array([-3.0, 3.0, -3.0, 2.5, -2.5, 3.0, -2.0], dtype=dt)
    onnx = pow_reference(x, y, name).astype(np.float64)
    dml = pow_reference(x, y, name, "directml").astype(np.float64)
    assert onnx.tolist()[:4] == [-math.inf, -0.0, math.inf, math.inf] and math.copysign(1, onnx[1]) < 0
    assert onnx.tolist()[4:] == [0.0, -math.inf, 0.0]
    # x * 1 + 0 is +0 at -0; -inf is a negative base: NaN for a non-integer exponent
    assert dml.tolist()[:3] == [math.inf, 0.0, math.inf] and math.copysign(1, dml[1]) > 0
    assert np.isnan(dml[3:5]).all() and dml.tolist()[5:] == [-math.inf, 0.0]
    # with a scale-bias: g = -inf * 0.5 + 1 = -inf; -inf * -0.5 = +inf; scale 0: g = bias
    x = np.array([-np.inf, np.inf, -np.inf, np.inf], dtype=dt)
    y = np.array([2.5, 2.5, 3.0, 3.0], dtype=dt)
    got = pow_reference(x, y, name, "directml", 0.5, 1.0).astype(np.float64)
    assert np.isnan(got[0]) and got.tolist()[1:] == [math.inf, -math.inf, math.inf]
    got = pow_reference(x, y, name, "directml", -0.5, 1.0).astype(np.float64)
    assert got.tolist()[0] == math.inf and np.isnan(got[1]) and got.tolist()[2:] == [math.inf, -math.inf]
    got = pow_reference(x, y, name, "directml", 0.0, 3.0).astype(np.float64)
    assert got.tolist() == [3.0**2.5 if name == "float64" else float(np.array(3.0**2.5).astype(dt))] * 2 + [27.0] * 2


# ---- random pairs ---------------------------------------------------------------------------------------------


def _random_pairs(name: str, n: int, seed: int):
    """x log-uniform over the format's range, or over [2^-4, 2^4] (powers inside the range), with a random sign, y
    uniform in [-40, 40] (half of them integers, half of those odd); and pairs of random bit patterns (NaN, inf,
    subnormals, huge exponents)."""
    fmt = get_format(name)
    rng = np.random.default_rng(seed)
    lo, hi = fmt.emin - fmt.p + 1, min(fmt.emax, 200)
    e = np.where(rng.random(n) < 0.5, rng.uniform(lo, hi + 1, n), rng.uniform(-4, 4, n))
    x = np.exp2(e) * rng.choice([-1.0, 1.0], n)
    y = rng.uniform(-40, 40, n)
    y[: n // 2] = np.round(y[: n // 2])
    x = _fmt_round(x, name)
    with np.errstate(invalid="ignore"):
        if fmt.bits == 16:
            bits = rng.integers(0, 1 << 16, (2, n // 4), dtype=np.uint16).view(fmt.dtype).astype(np.float64)
        else:
            raw = rng.integers(0, 1 << 63, (2, n // 4), dtype=np.uint64)
            bits = raw.astype(np.uint32).view(np.float32) if fmt.bits == 32 else raw.view(np.float64)
            bits = bits.astype(np.float64)
    return np.concatenate([x, bits[0]]), np.concatenate([_fmt_round(y, name), bits[1]])


@pytest.mark.parametrize("name", FORMATS)
def test_random_pairs(name):
    n = 4000 if name == "float64" else 12000
    x, y = _random_pairs(name, n, seed=1)
    check(x, y, name)
    # a negative base's integer powers: the sign, and zeros and infinities of either sign
    rng = np.random.default_rng(2)
    fmt = get_format(name)
    x = -np.exp2(rng.uniform(fmt.emin - fmt.p, min(fmt.emax, 200), 2000))
    y = rng.integers(-60, 60, 2000).astype(np.float64)
    check(_fmt_round(x, name), y, name)


@pytest.mark.parametrize("name", FORMATS)
def test_results_near_overflow_underflow_and_in_the_subnormals(name):
    """y chosen so that x^y lands near 2^(emax + 1), near half the least subnormal, among the subnormals and near
    2^emin: the range tests that decide inf and 0 before pow, and the rounding at the range's ends."""
    fmt = get_format(name)
    rng = np.random.default_rng(3)
    n = 1500 if name == "float64" else 3000
    x = _fmt_round(np.exp2(rng.uniform(-8, 8, n)) * rng.choice([-1.0, 1.0], n), name)
    x[x == 1] = 1.5
    targets = np.array([fmt.emax + 1, fmt.emax + 2, fmt.emax, fmt.emin - fmt.p, fmt.emin - fmt.p - 1, fmt.emin - fmt.p
                        - 2, fmt.emin - 3, fmt.emin, fmt.emin - fmt.p + 0.5], dtype=np.float64)  # fmt: skip
    t = targets[rng.integers(0, targets.size, n)] + rng.uniform(-0.05, 0.05, n)
    y = _fmt_round(t / np.log2(np.abs(x)), name)
    odd = rng.random(n) < 0.3  # integer exponents too, for the negative bases
    y[odd] = np.round(y[odd])
    check(x, y, name)


def _midpoint_bases(name: str) -> tuple:
    """(x, y): integer powers of integers and of their scalings by powers of two that land exactly on rounding
    midpoints (odd m with m^k of p + 1 bits), among the normals and the subnormals, both signs."""
    fmt = get_format(name)
    xs, ys = [], []
    for k in (2, 3, 5):
        lo, hi = 2 ** (fmt.p / k), 2 ** ((fmt.p + 1) / k)
        ms = [
            m
            for m in range(int(lo) | 1, min(int(math.ceil(hi)), int(lo) + 200), 2)
            if 2**fmt.p <= m**k < 2 ** (fmt.p + 1)
        ]
        ms += [m for m in range(int(math.ceil(hi)) | 1, int(hi) - 200, -2) if 2**fmt.p <= m**k < 2 ** (fmt.p + 1)]
        for m in ms:
            for e in (0, -fmt.p, 3, (fmt.emin - fmt.p) // k, -(fmt.p - fmt.emin) // k + 1, fmt.emax // k - fmt.p):
                v = m * 2.0**e
                if (
                    float(fmt.min_subnormal) <= v <= float(fmt.max_finite)
                    and Fraction(v) == Fraction(m) * Fraction(2) ** e
                ):
                    xs += [v, -v]
                    ys += [k, k]
    # (1 + 2^-j)^2 and (1 + 2^-j)^3: the exact tier's classic ties and near-ties
    for j in range(2, fmt.p):
        xs += [1 + 2.0**-j, -(1 + 2.0**-j), 1 - 2.0**-j]
        ys += [2, 3, -2]
    return np.array(xs), np.array(ys, dtype=np.float64)


@pytest.mark.parametrize("name", FORMATS)
def test_integer_powers_on_rounding_midpoints(name):
    x, y = _midpoint_bases(name)
    assert x.size > 20
    got = check(x, y, name)
    fmt = get_format(name)
    # some of them are ties indeed (the exact values), and they rounded to even
    exact = [Fraction(float(a)) ** int(b) for a, b in zip(x, y)]
    q = [float(Fraction(2) ** (max(math.floor(math.log2(abs(v))), fmt.emin) - fmt.p + 1)) for v in exact]
    ties = [i for i, v in enumerate(exact) if (v / Fraction(q[i])).denominator == 2]
    assert len(ties) >= 10
    for i in ties:
        if math.isinf(got[i]):  # at or above the tie between the largest finite value and 2^(emax + 1)
            assert abs(exact[i]) >= fmt.max_finite + Fraction(2) ** (fmt.emax - fmt.p)
            continue
        assert (Fraction(float(got[i])) / Fraction(q[i])).numerator % 2 == 0


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_every_16_bit_base_to_small_integer_and_half_integer_powers(name):
    """All 65536 values of x, a few y: the squares and cubes of every value (their ties among them)."""
    x = np.arange(1 << 16, dtype=np.uint16).view(_dtype(name))
    for yv in (2.0, 3.0, -1.0, 0.5, -2.5):
        y = np.full(x.shape, yv, dtype=_dtype(name))
        assert_same(pow_reference(x, y, name), oracle(x, y, name), x, y, name)


# ---- scale and bias -----------------------------------------------------------------------------------------------


def test_every_float16_base_scaled_to_the_powers_1_and_2():
    """x * 0.5 + 1 is a float16 rounding midpoint for 5119 of the 63488 finite x: pow(g, 1) is g rounded once, ties
    to even (and its square's ties too)."""
    x = np.arange(1 << 16, dtype=np.uint16).view(np.float16)
    for yv in (1.0, 2.0):
        y = np.full(x.shape, yv, dtype=np.float16)
        got = pow_reference(x, y, "float16", "directml", 0.5, 1.0)
        assert_same(got, oracle(x, y, "float16", "directml", 0.5, 1.0), x, y, "float16")


@pytest.mark.parametrize("scale, bias", [(0.5, 1.0), (-1.5, 0.25)])
@pytest.mark.parametrize("name", FORMATS)
def test_directml_with_scale_and_bias(name, scale, bias):
    """Random pairs and the special values through g = x * scale + bias: g beyond the format's range among them
    (1.5 * 65504 in float16: its reciprocal is finite)."""
    x, y = _random_pairs(name, 3000 if name != "float64" else 1500, seed=4)
    check(x, y, name, "directml", scale, bias)
    s = _specials(name)
    xg, yg = np.meshgrid(s, s, indexing="ij")
    check(xg, yg, name, "directml", scale, bias)
    top = float(get_format(name).max_finite)
    check([top, -top, top, -top, top / 2], [-1.0, -1.0, -2.0, 0.5, 1.0], name, "directml", scale, bias)


@pytest.mark.parametrize("name", ["bfloat16", "float32", "float64"])
def test_a_scale_bias_binary64_does_not_hold(name):
    """g = x * 0.75 + 1 with x tiny: 1 + 0.75 x is no binary64 value (float64: the exact tier; narrower: pow(s, y)
    2^(y t / ln 2) for g = s (1 + t), or g itself at y = 1). Exponents that keep g^y in range, up to 2^62 where g is
    1 + 2^-60, exponents beyond, and y = 1, 2."""
    fmt = get_format(name)
    rng = np.random.default_rng(5)
    n = 300
    x = _fmt_round(np.exp2(rng.uniform(-60, -20, n)) * rng.choice([-1.0, 1.0], n), name)
    c = rng.uniform(-60, 60, n)  # g^y about e^c
    y = np.concatenate([c / (0.75 * x), rng.uniform(-30, 30, n), np.exp2(rng.uniform(20, 40, n)), [1.0, 2.0] * n])
    check(np.concatenate([x, x, x, x, x]), _fmt_round(y, name), name, "directml", 0.75, 1.0)
    if fmt.bits == 32:  # and random bit patterns: huge exponents of g near 1
        xb, yb = _random_pairs(name, 4000, seed=8)
        check(xb[-2000:], np.concatenate([yb[-1000:], rng.choice([1.0, 2.0, 3.0], 1000)]), name, "directml", 0.75, 1.0)


# ---- interface ------------------------------------------------------------------------------------------------


def test_shapes_broadcasting_and_formats_by_name_or_object():
    x = np.array([[1.5], [2.0]], dtype=np.float32)
    y = np.array([2.0, 3.0, -1.0], dtype=np.float32)
    got = pow_reference(x, y, get_format("float32"))
    assert got.shape == (2, 3) and got.dtype == np.float32
    assert got.tolist() == [[2.25, 3.375, float(np.float32(1 / 1.5))], [4.0, 8.0, 0.5]]
    bf = pow_reference(np.array([3.0], dtype=ml_dtypes.bfloat16), np.array([2.0], dtype=ml_dtypes.bfloat16), "bf16")
    assert bf.dtype == ml_dtypes.bfloat16 and float(bf[0]) == 9.0
    assert pow_reference(np.zeros((0, 4), np.float16), np.zeros((0, 4), np.float16), "float16").shape == (0, 4)
    with pytest.raises(ValueError, match="standard"):
        pow_reference(x, x, "float32", standard="c")


@pytest.mark.filterwarnings("error::RuntimeWarning")
@pytest.mark.parametrize("name", FORMATS)
def test_signaling_nans_and_every_nan_payload_give_nan_quietly(name):
    fmt = get_format(name)
    q, sign = 1 << (fmt.p - 2), 1 << (fmt.bits - 1)  # the quiet bit, the sign bit
    inf = ((1 << (fmt.bits - fmt.p)) - 1) << (fmt.p - 1)
    nans = np.array([inf | 1, inf | q, inf | (q - 1), inf | 1 | sign], dtype=fmt.uint).view(fmt.dtype)
    two = np.full(nans.shape, 2.0).astype(fmt.dtype)
    for x, y in ((nans, two), (two, nans), (nans, nans)):
        got = pow_reference(x, y, name).view(fmt.uint) & fmt.uint.type(sign - 1)
        assert (got > inf).all(), got  # NaNs
    got = pow_reference(nans, np.zeros(nans.shape, dtype=fmt.dtype), name, "directml", 0.5, 1.0)
    assert (got.view(fmt.uint) == _ones(fmt)).all()  # pow(NaN, 0) = 1


def _ones(fmt):
    return np.ones(1).astype(fmt.dtype).view(fmt.uint)[0]


def test_pow_exact_describes_one_pair():
    assert pow_exact(4.0, 0.5) == ("exact", Fraction(2))
    assert pow_exact(-2.0, 3.0) == ("exact", Fraction(-8))
    assert pow_exact(1 + 2.0**-12, 2.0) == ("exact", Fraction(1 + 2.0**-12) ** 2)
    kind, v = pow_exact(2.0, 0.5)
    assert kind == "arb" and v.startswith("[1.41421356237309504880")
    assert pow_exact(-0.0, -3.0) == ("special", -math.inf)
    assert pow_exact(float("nan"), 0.0) == ("special", 1.0)
    kind, v = pow_exact(-2.0, 0.5)
    assert kind == "special" and math.isnan(v)
    kind, v = pow_exact(-math.inf, 2.5, "directml")
    assert kind == "special" and math.isnan(v)
    assert pow_exact(-math.inf, 2.5) == ("special", math.inf)
    assert pow_exact(-0.0, -3.0, "directml") == ("special", math.inf)
    assert pow_exact(2.0, 2.0, "directml", 0.5, 1.0) == ("exact", Fraction(4))


# ---- long sweeps (pytest -m slow) ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_a_million_random_16_bit_pairs(name):
    rng = np.random.default_rng(6)
    n = 10**6
    x = rng.integers(0, 1 << 16, n, dtype=np.uint16).view(_dtype(name))
    # y over the values whose powers stay in range mostly (|y| < 64), and over all bit patterns
    small = np.arange(1 << 16, dtype=np.uint16).view(_dtype(name))
    with np.errstate(invalid="ignore"):
        small = small[np.abs(small.astype(np.float64)) < 64]
    y = np.where(
        rng.random(n) < 0.75, rng.choice(small, n), rng.integers(0, 1 << 16, n, dtype=np.uint16).view(_dtype(name))
    )
    assert_same(pow_reference(x, y, name), oracle(x, y, name), x, y, name)
    assert_same(pow_reference(x, y, name, "directml"), oracle(x, y, name, "directml"), x, y, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["float32", "float64"])
def test_many_random_pairs(name):
    x, y = _random_pairs(name, 200000 if name == "float32" else 40000, seed=7)
    check(x, y, name)
