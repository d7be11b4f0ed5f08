"""Rounding into formats and the ULP arithmetic, against MPFR and hand-worked values."""

from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from oracle import CONTEXTS

from opcert.formats import FLOAT_FORMATS, get_format, hex_bits, ordinal, round_float64, round_fraction, to_format
from opcert.verify.accuracy.stats import HIST_LABELS, histogram_counts
from opcert.verify.ulp import ulp_distance, ulp_error, ulp_of


@pytest.mark.parametrize("name", list(FLOAT_FORMATS))
def test_round_fraction_matches_mpfr(name):
    fmt = FLOAT_FORMATS[name]
    rng = np.random.default_rng(1)
    for _ in range(3000):
        e = int(rng.integers(fmt.emin - fmt.p - 3, fmt.emax + 3))
        q = Fraction(int(rng.integers(1, 2**62)), 2**61) * Fraction(2) ** e
        q = -q if rng.integers(2) else q
        with gmpy2.context(CONTEXTS[name]()):
            want = float(gmpy2.mpfr(gmpy2.mpq(q.numerator, q.denominator)))
        assert round_fraction(q, fmt, negative_zero=q < 0) == want, q


@pytest.mark.parametrize("mode", ["nearest", "up", "down"])
@pytest.mark.parametrize("name", list(FLOAT_FORMATS))
def test_round_fraction_every_mode_matches_mpfr(name, mode):
    """Directed modes too, on rationals that are not dyadic (thirds, sevenths), on exact
    midpoints and values of the format, beyond the largest finite value and below the
    smallest subnormal."""
    fmt = FLOAT_FORMATS[name]
    rng = np.random.default_rng(7)
    rnd = {"nearest": gmpy2.RoundToNearest, "up": gmpy2.RoundUp, "down": gmpy2.RoundDown}[mode]
    qs = []
    for _ in range(2000):
        e = int(rng.integers(fmt.emin - fmt.p - 3, fmt.emax + 3))
        kind = int(rng.integers(3))
        if kind == 0:  # a value of the format or a midpoint: p + 1 significant bits
            m = Fraction(int(rng.integers(1 << fmt.p, 1 << (fmt.p + 1))), 1 << fmt.p)
        elif kind == 1:  # not dyadic
            m = Fraction(int(rng.integers(1, 10**12)), int(rng.choice([3, 7, 11, 10**6 + 3])))
        else:
            m = Fraction(int(rng.integers(1, 2**62)), 2**61)
        q = m * Fraction(2) ** e
        qs.append(-q if rng.integers(2) else q)
    big = fmt.max_finite
    qs += [
        big,
        -big,
        big + fmt.min_subnormal,
        big * 2,
        -big * 2,
        fmt.min_subnormal / 3,
        -fmt.min_subnormal / 2,
        fmt.min_subnormal / 2 + fmt.min_subnormal / 2**30,
    ]
    for q in qs:
        with gmpy2.context(CONTEXTS[name](), round=rnd):
            want = float(gmpy2.mpfr(gmpy2.mpq(q.numerator, q.denominator)))
        got = round_fraction(q, fmt, negative_zero=q < 0, mode=mode)
        assert got == want and np.signbit(got) == np.signbit(want), (q, mode, got, want)


def test_round_fraction_ties_go_to_even():
    f16 = FLOAT_FORMATS["float16"]
    # 1 + 2**-11 is halfway between 1 and 1 + 2**-10: ties to 1 (even).
    assert round_fraction(Fraction(1) + Fraction(1, 2**11), f16) == 1.0
    # 1 + 3 * 2**-11 is halfway between 1 + 2**-10 (odd) and 1 + 2**-9: up.
    assert round_fraction(Fraction(1) + Fraction(3, 2**11), f16) == 1 + 2**-9
    # The largest float16 is 65504; 65520 is the midpoint to 2**16: overflows.
    assert round_fraction(Fraction(65519), f16) == 65504.0
    assert round_fraction(Fraction(65520), f16) == np.inf
    # Half the smallest subnormal rounds to zero (even), a bit more to 2**-24.
    assert round_fraction(Fraction(1, 2**25), f16) == 0.0
    assert round_fraction(Fraction(1, 2**25) + Fraction(1, 2**40), f16) == 2.0**-24


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32"])
def test_round_float64_equals_exact_rounding(name):
    fmt = FLOAT_FORMATS[name]
    rng = np.random.default_rng(2)
    y = rng.standard_normal(5000) * np.ldexp(1.0, rng.integers(fmt.emin - fmt.p - 2, fmt.emax + 2, 5000))
    got = round_float64(y, fmt)
    want = np.array([round_fraction(Fraction(v), fmt, negative_zero=v < 0) for v in y])
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32"])
def test_round_float64_passes_specials_through_and_overflows_to_infinity(name):
    fmt = FLOAT_FORMATS[name]
    nan = np.array([0x7FF8000000000123, 0xFFF0000000000001], dtype=np.uint64).view(np.float64)  # payloads
    y = np.concatenate([nan, [np.inf, -np.inf, 2.0 ** (fmt.emax + 1), -(2.0 ** (fmt.emax + 1)), -1e-300, 1e-300]])
    got = round_float64(y, fmt)
    assert np.array_equal(got[:2].view(np.uint64), nan.view(np.uint64))  # the NaN's own bits
    assert got[2:6].tolist() == [np.inf, -np.inf, np.inf, -np.inf]
    assert got[6] == 0 and np.signbit(got[6]) and got[7] == 0 and not np.signbit(got[7])


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32"])
def test_to_format_casts_round_exactly(name):
    # random binary64 values at every scale of the format, and the midpoints between its values
    fmt = FLOAT_FORMATS[name]
    rng = np.random.default_rng(5)
    y = rng.standard_normal(20000) * np.ldexp(1.0, rng.integers(fmt.emin - fmt.p - 2, fmt.emax + 2, 20000))
    with np.errstate(invalid="ignore"):  # the random patterns include NaNs
        v = rng.integers(0, 2**fmt.bits, 20000, dtype=np.uint64).astype(fmt.uint).view(fmt.dtype).astype(np.float64)
    v = v[np.isfinite(v)]
    mids = (v + np.nextafter(v.astype(fmt.dtype), np.array(np.inf, dtype=fmt.dtype)).astype(np.float64)) / 2
    y = np.concatenate([y, mids[np.isfinite(mids)]])
    got = to_format(y, fmt).astype(np.float64)
    want = np.array([round_fraction(Fraction(t), fmt, negative_zero=t < 0) for t in y])
    assert np.array_equal(got, want) and np.array_equal(np.signbit(got), np.signbit(want))


def test_bfloat16_rounding_is_not_ml_dtypes_double_rounding():
    v = np.array([1 + 2**-8 + 2**-30])  # just above the midpoint of 1 and 1 + 2**-7
    assert round_float64(v, get_format("bfloat16"))[0] == 1 + 2**-7


def test_ulp_definition():
    f32 = FLOAT_FORMATS["float32"]
    # ulp(v) = 2**(max(floor(log2|v|), emin) - p + 1)
    assert ulp_of(np.array([1.0]), f32)[0] == 2.0**-23
    assert ulp_of(np.array([0.75]), f32)[0] == 2.0**-24
    assert ulp_of(np.array([2.0**-130]), f32)[0] == 2.0**-149  # subnormal range
    assert ulp_of(np.array([0.0]), f32)[0] == 2.0**-149  # ulp(0): smallest subnormal


@pytest.mark.parametrize("name", ["float16", "bfloat16", "float32", "float64"])
def test_ulp_of_matches_the_definition_in_rationals(name):
    """ulp(v) = 2**(max(floor(log2|v|), emin) - p + 1) for every kind of binary64 v (random bit
    patterns: every binade, binary64 subnormals, powers of two); 0 and NaN give the smallest
    subnormal of the format."""
    import warnings

    fmt = FLOAT_FORMATS[name]
    rng = np.random.default_rng(5)
    v = rng.integers(0, 2**64, 20_000, dtype=np.uint64).view(np.float64)
    v = np.concatenate(
        [
            v[np.isfinite(v)],
            2.0 ** np.arange(-1074, 1024, dtype=np.float64),
            -(2.0 ** np.arange(-1074, 1024, 7, dtype=np.float64)),
            [5e-324, 1.7976931348623157e308],
        ]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # NaN must not raise the invalid flag either
        got = ulp_of(v, fmt)
        special = ulp_of(np.array([0.0, -0.0, np.nan]), fmt)
    for x, u in zip(v.tolist(), got.tolist()):
        a = abs(Fraction(x))
        e = a.numerator.bit_length() - a.denominator.bit_length()
        e -= Fraction(2) ** e > a  # floor(log2 a), exactly
        assert Fraction(u) == Fraction(2) ** (max(e, fmt.emin) - fmt.p + 1), (x, u)
    assert special.tolist() == [float(fmt.min_subnormal)] * 3


def test_ulp_error_hand_values():
    f16 = FLOAT_FORMATS["float16"]
    one = np.array([1.0])
    # exact v = 1 + 0.3 ulp, computed y = 1: error 0.3
    assert ulp_error(one, np.array([1.0]), np.array([0.3 * 2**-10]), f16)[0] == pytest.approx(0.3)
    # y = 65504 (max) where v is 2**16 exactly: 32 / 64 = 0.5
    assert ulp_error(np.array([65504.0]), np.array([65536.0]), np.zeros(1), f16)[0] == 0.5
    # infinite y where v = 65504 enters as 2**16: (65536 - 65504) / 32 = 1
    assert ulp_error(np.array([np.inf]), np.array([65504.0]), np.zeros(1), f16)[0] == 1.0
    # NaN or an infinite exact value is a special case, not a ULP figure
    assert np.isnan(ulp_error(np.array([np.nan]), one, np.zeros(1), f16)[0])
    assert np.isnan(ulp_error(one, np.array([np.inf]), np.zeros(1), f16)[0])


def test_float64_ulp_error_near_overflow_is_finite():
    f64 = FLOAT_FORMATS["float64"]
    m = np.finfo(np.float64).max
    assert ulp_error(np.array([np.inf]), np.array([m]), np.zeros(1), f64)[0] == 1.0


def test_distance_and_order():
    x = np.array([-0.0, 0.0, np.float16(2**-24), 1.0, np.inf], dtype=np.float16)
    assert ordinal(x).tolist() == [0, 0, 1, 0x3C00, 0x7C00]
    a = np.array([1.0, -1.0], dtype=np.float32)
    b = np.nextafter(a, np.float32(np.inf))
    assert ulp_distance(a, b).tolist() == [1, 1]
    assert hex_bits(1.0, "float16") == "0x3c00" and hex_bits(-0.0, "bfloat16") == "0x8000"


def test_histogram_bins():
    e = np.array([0.0, 0.25, 0.5, 0.75, 3.0, np.nan])
    h = dict(zip(HIST_LABELS, histogram_counts(e[~np.isnan(e)])))
    assert h["0"] == 1 and h["(0, 0.5]"] == 2 and h["(0.5, 1]"] == 1 and h["(2, 4]"] == 1


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32"])
@pytest.mark.parametrize("shape", [(257,), (31, 9)])
def test_bits_differ_is_bitwise_with_every_nan_equal(dtype, shape):
    """formats.bits_differ against an element-by-element reading of its contract: bit patterns compared,
    any NaN equal to any NaN (quiet, signalling, either sign, any payload)."""
    import math

    from opcert.formats import bits_differ

    fmt = get_format(dtype)
    rng = np.random.default_rng(7)
    nbits = fmt.bits
    a = rng.integers(0, 1 << nbits, size=shape, dtype=np.uint64).astype(fmt.uint)
    b = a.copy()
    flat = b.reshape(-1)
    flat[::5] ^= 1  # a last-bit difference
    exp_mask = ((1 << (nbits - 1)) - 1) & ~((1 << (fmt.p - 1)) - 1)
    nan_a = exp_mask | 1
    nan_b = exp_mask | (1 << ((fmt.p - 1) - 1)) | (1 << (nbits - 1))
    a.reshape(-1)[3::7], flat[3::7] = nan_a, nan_b  # NaN vs another NaN: equal
    a.reshape(-1)[4::11], flat[4::11] = nan_a, 0  # NaN vs zero: differ
    got = bits_differ(a, b, fmt)
    fa, fb = a.view(fmt.dtype).reshape(-1), b.view(fmt.dtype).reshape(-1)
    want = [
        int(x) != int(y) and not (math.isnan(float(u)) and math.isnan(float(v)))
        for x, y, u, v in zip(a.reshape(-1), b.reshape(-1), fa, fb)
    ]
    assert got.shape == shape
    assert got.reshape(-1).tolist() == want
    assert any(want) and not all(want)
