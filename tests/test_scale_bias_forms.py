"""opcert's own DirectML element-wise forms, f(x * scale + bias), at scale-bias values whose sum is inexact.

The built-in gate and the attribute sweep check each operator's primary (ONNX) standard; a sampled probe of these
forms (stop 18) found them wrong:
- float32: Log at scale 1, bias 0 gave -inf below 2^-54 (log1p of x - 1); Acos next to 1 gave 0 for 7.3e-12
  (1.68e7 ULPs), next to -1 pi where the value is NaN; Asin next to 1 was a ULP off;
- float64: the scale-bias rounded once in binary64 moved f by its condition number (Exp at scale 3: 192 ULPs,
  Sin past 2^53 any value, Floor 16 ULPs), against budget64 = 1.
Expected values: MPFR (gmpy2) on the exact argument, and the reference (exact, correctly rounded) on inputs next to
the points where each f loses its value."""

import math

import gmpy2
import ml_dtypes
import numpy as np
import pytest

import opcert
from opcert.formats import get_format
from opcert.spec.scale_bias import has_scale_bias
from opcert.verify.ulp import ordinal_distance

FORMS = [(op.name, s.key) for op in opcert.operators() for s in op.standards if has_scale_bias(s)]
PRECISION = {"float32": 24, "float64": 53}


def mpfr_rounded(f, x: float, scale: float, bias: float, dtype: str) -> float:
    """f(x * scale + bias) on the exact argument (3000 bits hold every binary64 product plus a binary32 bias, and
    reduce a sine's argument up to 2^1024), rounded once to dtype's precision (normal results only)."""
    with gmpy2.context(precision=3000):
        v = f(gmpy2.mpfr(x) * gmpy2.mpfr(scale) + gmpy2.mpfr(bias))
    if gmpy2.is_nan(v) or gmpy2.is_infinite(v):
        return float(v)
    with gmpy2.context(precision=PRECISION[dtype]):
        return float(+v)


CASES = [
    # (op, dtype, x, scale, bias, MPFR's function); what opcert computed before in the comment
    ("Log", "float32", 1.4209564e-33, 1.0, 0.0, gmpy2.log),  # -inf
    ("Log", "float32", 1.4209564e-33, 3.0, 0.0, gmpy2.log),  # -inf
    # bias - 1 is -1 in binary64 at a bias of 3 x 2^-60: the logarithm of 1 - 2^-46 + 3 x 2^-60 lost its bias
    ("Log", "float32", 1 + 2.0**-23, 1 - 2.0**-23, 3 * 2.0**-60, gmpy2.log),
    ("Acos", "float32", -8.8210395e-24, 3.0, 1.0, gmpy2.acos),  # 0 for 7.3e-12
    ("Acos", "float32", 1e-45, -3.0, -1.0, gmpy2.acos),  # pi for NaN: the sum is below -1
    ("Asin", "float32", -5.377959e-17, 3.0, 1.0, gmpy2.asin),  # a ULP off
    # likewise 1 + 2^-46 + 3 x 2^-60 (bias 2^-45 + 3 x 2^-60): acosh lost the bias's last bits, 2^9.6 ULPs
    ("Acosh", "float32", 1 + 2.0**-23, 1 - 2.0**-23, 2.0**-45 + 3 * 2.0**-60, gmpy2.acosh),
    ("Exp", "float64", 233.0326238622571, 3.0, 0.0, gmpy2.exp),  # 192 ULPs off
    ("Sin", "float64", 2.6774150756501165e250, 3.0, 0.0, gmpy2.sin),  # 5.5e19 ULPs off
    ("Cos", "float64", -8.997107515284915e287, float(np.float32(-1.7)), 2.5, gmpy2.cos),
    ("Floor", "float64", 2.8808358891362477e17, float(np.float32(1e-3)), float(np.float32(0.999)), gmpy2.floor),
    ("Acos", "float64", 5e-324, 0.5, 1.0, gmpy2.acos),  # the product underflows to 0: 1 for a value below it
]


@pytest.mark.parametrize("name, dtype, x, scale, bias, f", CASES)
def test_the_forms_where_the_once_rounded_sum_lost_the_value_are_mpfrs(name, dtype, x, scale, bias, f):
    scale, bias = float(np.float32(scale)), float(np.float32(bias))
    xs = np.array([x], dtype=dtype)
    std = next(k for n, k in FORMS if n == name)
    got = float(opcert.run(name, xs, standard=std, scale=scale, bias=bias)[0])
    want = mpfr_rounded(f, float(xs[0]), scale, bias, dtype)
    assert got == want or (math.isnan(got) and math.isnan(want)), (name, x, got, want)


def test_atanh_of_a_sum_that_is_exactly_one_is_plus_infinity():
    """1 - g computed as c - s (spec.elementwise.minus_scaled), not as -(s - c): at s = 1 that is +0, so 2 / +0
    gives atanh +inf (the negation's -0 gave NaN); at s = 2, beyond the domain, IEEE's NaN."""
    got = opcert.run("Atanh", np.array([0.0, 1.0], np.float32), standard="directml", scale=1.0, bias=1.0)
    assert math.isinf(got[0]) and got[0] > 0 and math.isnan(got[1]), got


SETS = [(3.0, 1.0), (float(np.float32(-1.7)), 2.5), (1.0, 3 * 2.0**-60)]
# float64 at these sets is the reference's by construction (impl.run takes it at every finite input): measured
# against MPFR below instead (test_float64_at_a_scale_bias_is_mpfrs)
DTYPES = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float32": np.dtype(np.float32)}


def _inputs(dtype: np.dtype, scale: float, bias: float) -> np.ndarray:
    """The inputs next to where f's value is lost: 12 steps of the format either way of each x with x * scale +
    bias at 0, +-1/2, +-1 and +-2 (end points of the arcs' domains, the poles, the zeros), of a tiny x and of
    +-1, and 100 random ones in [-4, 4]."""
    bits = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[dtype.itemsize]
    points = [(c - bias) / scale for c in (0.0, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0)] + [1e-30, 1.0, -1.0]
    centre = np.array(points, np.float64).astype(dtype).view(bits).astype(np.int64)
    steps = (centre[:, None] + np.arange(-12, 13)[None, :]).reshape(-1)
    near = steps[(steps >= 0) & (steps < 2 ** (8 * dtype.itemsize))].astype(bits).view(dtype)
    rng = np.random.default_rng(5)
    xs = np.concatenate([near, rng.uniform(-4, 4, 100).astype(dtype)])
    with np.errstate(invalid="ignore"):
        return xs[np.isfinite(xs.astype(np.float64))]


@pytest.mark.parametrize("name, standard", FORMS)
def test_every_form_at_inexact_sums_is_the_references_value(name, standard):
    """Every ScaleBias form at three scale-bias values whose sums are inexact in binary64 (a scale of 3, a scale of
    binary32's -1.7 with a bias, a bias of 3 x 2^-60 whose bias - 1 is inexact), in bfloat16 and float32, is the
    reference's value at every input next to the points where f loses its value."""
    for scale, bias in SETS:
        for dname, dtype in DTYPES.items():
            xs = _inputs(dtype, scale, bias)
            attrs = {"scale": float(np.float32(scale)), "bias": float(np.float32(bias))}
            got = opcert.run(name, xs, standard=standard, **attrs)
            want = opcert.reference(name, xs, standard=standard, **attrs)
            apart = ordinal_distance(got, want, get_format(dname))
            worst = int(np.argmax(apart))
            assert apart[worst] == 0, (name, dname, attrs, xs[worst], got[worst], want[worst])


MPFR_OF = {
    "Exp": gmpy2.exp,
    "Log": gmpy2.log,
    "Sqrt": gmpy2.sqrt,
    "Sin": gmpy2.sin,
    "Cos": gmpy2.cos,
    "Tan": gmpy2.tan,
    "Sinh": gmpy2.sinh,
    "Cosh": gmpy2.cosh,
    "Tanh": gmpy2.tanh,
    "Asin": gmpy2.asin,
    "Acos": gmpy2.acos,
    "Atan": gmpy2.atan,
    "Asinh": gmpy2.asinh,
    "Acosh": gmpy2.acosh,
    "Atanh": gmpy2.atanh,
    "Erf": gmpy2.erf,
}


@pytest.mark.parametrize("name", sorted(MPFR_OF))
def test_float64_at_a_scale_bias_is_mpfrs(name):
    """float64 at scale 3, bias 1 (x * 3 inexact in binary64 for most x): MPFR's value on the exact argument,
    rounded once, at 24 inputs: 8 in [-1, 1] (the arcs' domain), 8 in [-200, 200], 8 of any size (the periodic
    functions' huge arguments; others overflow or leave their domain there: NaN and +-inf compared as such)."""
    rng = np.random.default_rng(11)
    bits = rng.integers(0x3000000000000000, 0x7FEFFFFFFFFFFFFF, 8, dtype=np.uint64).view(np.float64)
    xs = np.concatenate([rng.uniform(-1, 1, 8), rng.uniform(-200, 200, 8), bits * np.where(rng.random(8) < 0.5, -1, 1)])
    got = opcert.run(name, xs, standard="directml", scale=3.0, bias=1.0)
    for x, g in zip(xs.tolist(), got.tolist()):
        want = mpfr_rounded(MPFR_OF[name], x, 3.0, 1.0, "float64")
        assert g == want or (math.isnan(g) and math.isnan(want)), (name, x, g, want)
