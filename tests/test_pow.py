"""pow(a, b), the expression language's binary node: its exact values, its enclosures, the contract opcert assumes
of the platform's binary64 pow (expr.pow_record), and ConstantPow's reference where a rounding is a tie. Expected
values come from rational arithmetic (Python's Fractions) and MPFR (gmpy2), never from opcert."""

import ctypes
import ctypes.util
import json
import math
from fractions import Fraction

import gmpy2
import numpy as np
import pytest
from flint import arb

import opcert
from opcert.expr import pow_record
from opcert.spec.pow_reference import pow_reference

F = Fraction
_LIBM = ctypes.CDLL(ctypes.util.find_library("m"))
_LIBM.pow.restype, _LIBM.pow.argtypes = ctypes.c_double, (ctypes.c_double, ctypes.c_double)


# ---- exact values --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "a, b, want",
    [
        (F(3), F(2), F(9)),
        (F(-3), F(3), F(-27)),
        (F(-3), F(-2), F(1, 9)),
        (F(1, 4), F(1, 2), F(1, 2)),  # a perfect square to the power 1/2
        (F(27, 8), F(-2, 3) * 1, None),  # 2/3 is no dyadic exponent of a format, but exact: (27/8)^(-2/3) = 4/9
        (F(16), F(3, 4), F(8)),
        (F(2), F(1, 2), None),  # sqrt(2): irrational
        (F(0), F(5, 2), F(0)),
        (F(0), F(0), F(1)),
        (F(7), F(0), F(1)),
        (F(1), F(-123, 8), F(1)),
    ],
)
def test_exact_power_is_the_rational_value_where_there_is_one(a, b, want):
    got = pow_record.exact_power(a, b)
    if a == F(27, 8):
        assert got == F(4, 9)  # a q-th root of numerator and denominator for any q, not only powers of two
        return
    assert got == want


def test_exact_power_outside_the_domain_and_at_the_pole():
    with pytest.raises(pow_record.OutsideDomain):
        pow_record.exact_power(F(-2), F(1, 2))
    with pytest.raises(ZeroDivisionError):
        pow_record.exact_power(F(0), F(-1))
    # a huge power of a binary32 value is left to the enclosures, not computed as a rational of 10^40 bits
    assert pow_record.exact_power(F(3, 2), F(2**100)) is None


@pytest.mark.parametrize("seed", range(4))
def test_arb_power_encloses_mpfrs_value(seed):
    rng = np.random.default_rng(seed)
    for a, b in zip(np.exp2(rng.uniform(-60, 60, 200)), rng.uniform(-40, 40, 200)):
        b = float(np.float32(b))
        got = pow_record.arb_power(arb(a), arb(b))
        with gmpy2.context(precision=300):
            want = gmpy2.mpfr(a) ** gmpy2.mpfr(b)
        lo, hi = got.lower(), got.upper()
        assert float(lo) <= float(want) <= float(hi)
        assert arb(str(want)).overlaps(got)
    assert pow_record.arb_power(arb(-2), arb(3)).contains(-8)
    with pytest.raises(pow_record.OutsideDomain):
        pow_record.arb_power(arb(-2), arb(0.5))


# ---- the platform contract ----------------------------------------------------------------------------------


def _pairs(n=20000, seed=7):
    rng = np.random.default_rng(seed)
    a = np.concatenate([np.exp2(rng.uniform(-100, 100, n)), rng.uniform(0, 4, n)])
    b = np.concatenate([rng.uniform(-30, 30, n), np.float32(rng.normal(0, 6, n)).astype(np.float64)])
    return a, b


def _ulp_error(y: float, a: float, b: float) -> float:
    with gmpy2.context(precision=200):
        v = gmpy2.mpfr(a) ** gmpy2.mpfr(b)
        if not gmpy2.is_finite(v) or v == 0 or abs(v) < 2.0**-1022 or abs(v) > 1.7e308:
            return 0.0  # the contract covers normal finite results
        ulp = 2.0 ** (math.frexp(float(v))[1] - 53)
        return float(abs(gmpy2.mpfr(y) - v) / ulp)


@pytest.mark.parametrize("impl", ["numpy", "c"])
def test_pow_within_its_binary64_contract(impl):
    """pow_record.ULPS: NumPy's pow (SVML's on AVX-512 hosts) and the C library's (math.pow, the compiled ball's)."""
    a, b = _pairs(3000)
    with np.errstate(all="ignore"):
        y = np.power(a, b) if impl == "numpy" else np.array([_LIBM.pow(u, v) for u, v in zip(a, b)])
    worst = max(_ulp_error(float(yi), float(ai), float(bi)) for yi, ai, bi in zip(y, a, b))
    assert worst <= pow_record.ULPS, worst


def test_long_double_pow_within_its_contract():
    ld = np.finfo(np.longdouble)
    if ld.nmant < 63:
        pytest.skip("long double is binary64 here: binary64 results take the exact path")
    a, b = _pairs(2000, seed=11)
    y = np.power(a.astype(np.longdouble), b.astype(np.longdouble))
    p = ld.nmant + 1
    worst = 0.0
    with gmpy2.context(precision=300):
        for yi, ai, bi in zip(y, a, b):
            v = gmpy2.mpfr(float(ai)) ** gmpy2.mpfr(float(bi))
            if not gmpy2.is_finite(v) or not -16000 < gmpy2.get_exp(v) < 16000 or not np.isfinite(yi):
                continue
            exp = gmpy2.get_exp(v)  # v in [2^(exp-1), 2^exp)
            ulp = gmpy2.mpfr(2) ** (exp - p)
            worst = max(worst, float(abs(gmpy2.mpfr(gmpy2.mpq(*yi.as_integer_ratio())) - v) / ulp))
    assert worst <= pow_record.LONG_DOUBLE_ULPS, worst


def test_pow_contract_clauses():
    """The clauses the provers assume (pow_record.CONTRACT), on NumPy's pow: exact points, monotone in a for a fixed
    exponent on a >= 0, the sign of an integer power of a negative base, NaN for a negative base and a non-integer
    exponent. Not parity bit for bit: below."""
    rng = np.random.default_rng(2)
    a = np.unique(np.concatenate([np.exp2(rng.uniform(-80, 80, 50000)), rng.uniform(0, 3, 50000), [0.0]]))
    with np.errstate(all="ignore"):
        for b in (2.0, 3.0, 0.5, 1.5, 7.25, -1.0, -2.5, -3.0, 100.0):
            y = np.power(a, b)
            assert (y[1:] >= y[:-1]).all() if b > 0 else (y[2:] <= y[1:-1]).all()  # a = 0 is the pole for b < 0
            if float(b).is_integer():  # the sign of an integer power of a negative base (no parity bit for bit)
                neg = np.power(-a[1:], b)
                assert (np.signbit(neg) == bool(b % 2)).all() and not np.isnan(neg).any()
            else:
                assert np.isnan(np.power(-a[1:], b)).all()
        assert (np.power(a, 0.0) == 1).all() and (np.power(a, 1.0) == a).all()
        assert (np.power(1.0, rng.uniform(-300, 300, 1000)) == 1).all()


# ---- the reference where the rounding is a tie ------------------------------------------------------------------


def test_squares_on_a_binary32_midpoint_round_to_even():
    """(1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: halfway between two binary32 values; a precision loop would never decide
    it. Its correctly rounded value rounds the exact rational ties to even."""
    x = np.float32(1 + 2.0**-12)
    exact = F(1 + 2.0**-12) ** 2
    assert exact == 1 + F(1, 2**11) + F(1, 2**24)  # a binary32 midpoint
    lo, hi = np.float32(1 + 2.0**-11), np.nextafter(np.float32(1 + 2.0**-11), np.float32(2))
    even = lo if int(lo.view(np.uint32)) % 2 == 0 else hi
    got = opcert.reference("ConstantPow", np.array([x, -x]), exponent=2.0)
    assert got.tolist() == [float(even)] * 2
    # and a cube on a midpoint: (1 + 2^-8)^3 = 1 + 3 2^-8 + 3 2^-16 + 2^-24
    y = np.float32(1 + 2.0**-8)
    cube = F(1 + 2.0**-8) ** 3
    assert (cube * 2**24).denominator == 1 and (cube * 2**24).numerator % 2 == 1  # halfway in [1, 2)
    got = opcert.reference("ConstantPow", np.array([y]), exponent=3.0)[0]
    assert got in (float(np.float32(cube - F(1, 2**24))), float(np.float32(cube + F(1, 2**24))))
    assert int(np.float32(got).view(np.uint32)) % 2 == 0


def test_a_negative_base_with_a_non_integer_exponent_is_nan_and_the_pole_keeps_its_sign():
    x = np.array([-4.0, -0.5, 4.0, 0.0], dtype=np.float32)
    got = opcert.reference("ConstantPow", x, exponent=0.5)
    assert np.isnan(got[:2]).all() and got[2:].tolist() == [2.0, 0.0]
    zeros, ends = np.array([0.0, -0.0], dtype=np.float32), np.array([-np.inf, np.inf, np.nan], dtype=np.float32)
    # ONNX's Pow is C's: pow(-0, -3) = -inf; pow(-inf, 1.5) = +inf
    assert opcert.reference("ConstantPow", zeros, exponent=-3.0).tolist() == [math.inf, -math.inf]
    got = opcert.reference("ConstantPow", ends, exponent=1.5)
    assert got[0] == math.inf and got[1] == math.inf and np.isnan(got[2])
    # DirectML's: x * 1 + 0 is +0 at both zeros (its ScaleBias); -inf is a negative base, the document's NaN
    got = opcert.reference("ConstantPow", zeros, standard="directml", exponent=-3.0)
    assert got.tolist() == [math.inf, math.inf]
    got = opcert.reference("ConstantPow", ends, standard="directml", exponent=1.5)
    assert np.isnan(got[0]) and got[1] == math.inf and np.isnan(got[2])


def test_directml_scale_bias_keeps_an_overflowed_power_infinite():
    """(-FLT_MAX * 0.5 + 1)^10 and (FLT_MAX * 0.5 + 1)^10 are above 10^380: +inf in float32. The two-sum correction
    once turned the overflowed -inf * (negative excess) + inf into NaN; Pow's infinite exponents too."""
    big = np.float32(3.4028234663852886e38)
    x = np.array([-big, big], dtype=np.float32)
    got = opcert.run("ConstantPow", x, standard="directml", scale=0.5, bias=1.0, exponent=10.0)
    assert got.tolist() == [math.inf, math.inf]
    assert opcert.reference("ConstantPow", x, standard="directml", scale=0.5, bias=1.0, exponent=10.0).tolist() == [
        math.inf,
        math.inf,
    ]


# ---- parity: NumPy's pow is not odd bit for bit on every host; opcert's code is, by its form ---------------------


def _numpy_pow_odd_misses(a: np.ndarray) -> np.ndarray:
    return a[np.power(-a, 3.0) != -np.power(a, 3.0)]


def test_opcerts_constant_pow_is_odd_bit_for_bit_where_numpys_pow_is_not():
    rng = np.random.default_rng(5)
    a = np.exp2(rng.uniform(-300, 300, 200000))
    got = opcert.run("ConstantPow", np.concatenate([a, -a]), exponent=3.0)
    assert np.array_equal(got[a.size :], -got[: a.size])  # bit for bit: no zero or NaN among them
    (p,) = opcert.prove("ConstantPow", "float64", attrs={"exponent": 3.0}, properties=["odd"]).properties
    assert p.status == "proved", p.detail


def test_a_kernel_calling_numpys_pow_is_refuted_odd_wherever_numpys_pow_is_not_odd():
    """The verdict follows the host's NumPy: refuted with an input where np.power itself breaks oddness (checked
    here on that input, independently), or not refuted where np.power is odd on a large sample too."""
    (p,) = opcert.prove(
        "ConstantPow", "float64", target="math_kernels:cube_in_numpy", attrs={"exponent": 3.0}, properties=["odd"]
    ).properties
    if p.status == "refuted":
        x = abs(float(p.counterexample["inputs"]["x"]["value"]))
        assert _numpy_pow_odd_misses(np.array([x])).size == 1, p.counterexample
    else:
        rng = np.random.default_rng(6)
        assert _numpy_pow_odd_misses(np.exp2(rng.uniform(-300, 300, 10**6))).size == 0, p.status


@pytest.mark.parametrize("attrs", [{"exponent": 2.5}, {"exponent": -3.0, "scale": 0.5, "bias": 1.0}])
def test_numpy_and_compiled_balls_of_pow_are_one_semantics(attrs, monkeypatch):
    """ball_rules.power run by both evaluators: given the same pow (the C library's, which the compiled ball calls)
    they compute the same balls bit for bit; and each ball holds MPFR's value."""
    import numba
    from test_ball_compiled import same_balls

    from opcert.spec.attrs import resolve

    monkeypatch.setattr(
        pow_record, "ball_power", numba.vectorize(["float64(float64, float64)"])(lambda a, b: math.pow(a, b))
    )
    op = opcert.get_operator("ConstantPow")
    a = {k: float(v) for k, v in resolve(op, attrs, "directml").items()}
    form = op.reference_form("directml")
    x64, got = same_balls("ConstantPow", form, a)
    m, r, ok = np.asarray(got[0]), np.asarray(got[1]), np.asarray(got[2])
    for i in np.flatnonzero(ok & np.isfinite(m))[::37]:
        u = F(float(x64[i])) * F(a["scale"]) + F(a["bias"])
        with gmpy2.context(precision=300):
            v = gmpy2.mpfr(gmpy2.mpq(u.numerator, u.denominator)) ** gmpy2.mpfr(a["exponent"])
            assert abs(v - gmpy2.mpfr(float(m[i]))) <= gmpy2.mpfr(float(r[i])), (x64[i], m[i], r[i])


def test_an_exact_point_at_a_pole_is_refuted_not_proved_vacuously():
    """pow(0, -3) has no real value: "pow(0, e) = 0" is not claimed there, and the spec level refutes it (the pole is
    a violation of the point's claim, not a point left out of it) with the replay saying why."""
    (p,) = opcert.prove("ConstantPow", attrs={"exponent": -3.0}, properties=["zero"]).properties
    assert p.status == "refuted" and p.expected == "not claimed"
    assert "undefined" in p.counterexample["values"]["f(0.0)"]
    (p,) = opcert.prove("ConstantPow", attrs={"exponent": 3.0}, properties=["zero"]).properties
    assert p.status == "proved"


def test_ref_says_a_value_beyond_every_format_is_beyond_not_a_number_inside(cli):
    """2^(3e38) and e^(1e30) are far beyond float32's range; the exact evaluation stands for them by an enclosure
    just past 2^192, which `opcert ref` printed as the value (9.4e57). It prints the bound instead."""
    code, out, _ = cli(
        "ref", "ConstantPow", "--dtype", "float32", "--attr", "exponent=3e38", "--json", "--", "2", "0.5"
    )
    rows = json.loads(out)["results"]
    assert code == 0 and [r["exact"] for r in rows] == ["beyond 2^192 (rounds to inf)", "below 2^-214 (rounds to 0)"]
    code, out, _ = cli("ref", "Exp", "--dtype", "float32", "--json", "--", "1e30", "88")
    rows = json.loads(out)["results"]
    assert rows[0]["exact"] == "beyond 2^192 (rounds to inf)" and rows[1]["exact"].startswith("1.6516362549940018")


def test_exact_power_of_an_exponent_with_a_huge_denominator_is_left_to_the_enclosures():
    """A z3 model may pick b = 1 / 2^100: 3^(2^-100) is irrational (no integer's 2^100-th power is 3), and asking
    flint for that root overflowed (an exit 3 of `opcert prove ConstantPow`)."""
    assert pow_record.exact_power(F(3), F(1, 2**100)) is None
    assert pow_record.exact_power(F(1, 4), F(1, 2**100)) is None
    assert pow_record.exact_power(F(2**64), F(1, 64)) == 2


def _nan_stays(x, exponent, scale=1.0, bias=0.0):
    """pow with a NaN base kept NaN at every exponent (opcert's reading before IEEE 754's pow(NaN, 0) = 1); scale and
    bias (DirectML's) at 1 and 0."""
    assert (scale, bias) == (1.0, 0.0)
    return np.where(np.isnan(x), x, np.power(x, x.dtype.type(exponent))).astype(x.dtype)


@pytest.mark.parametrize("standard", ["onnx", "directml"])
def test_a_nan_base_to_the_power_0_is_1_as_in_pow_and_ieee_754(standard):
    """ConstantPow reads pow(NaN, 0) as IEEE 754 and C do (math.pow and np.power give 1), as opcert's Pow does:
    the reference, opcert's code and the measurement agree, and a kernel that keeps the NaN is counted wrong."""
    x = np.array([np.nan, -np.nan, 2.0, -3.0], np.float16)
    want = np.array([math.pow(float("nan"), 0.0), math.pow(float("nan"), 0.0), 1.0, 1.0], np.float16)
    assert want[0] == 1.0
    ref = opcert.reference("ConstantPow", x, standard=standard, exponent=0.0)
    assert np.array_equal(ref, want) and np.array_equal(
        opcert.run("ConstantPow", x, standard=standard, exponent=0.0), want
    )
    binary = pow_reference(x, np.zeros(4, np.float16), "float16", standard)
    assert np.array_equal(binary, ref)  # the binary operator's reading
    at_two = opcert.reference("ConstantPow", x[:1], standard=standard, exponent=2.0)
    assert np.isnan(at_two[0])  # any other exponent: NaN
    r = opcert.measure("ConstantPow", _nan_stays, "float16", "exhaustive", attrs={"exponent": 0.0}, standard=standard)
    assert (
        r.status == "ok" and r.nan_mismatches == 2046
    )  # every NaN pattern of float16 (2 x 1023), each a NaN where 1 is
