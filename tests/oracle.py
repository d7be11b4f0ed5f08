"""An independent correctly rounded oracle: MPFR through gmpy2.

Written from the operators' textual definitions, sharing no code with opcert's
reference: MPFR evaluates each formula at 320 bits (transcendental operators;
more where that value is a value of the format or a midpoint, _ziv)
or exactly in rationals (mpq: HardSigmoid, Shrink), then MPFR itself rounds to
the target format with IEEE subnormals. The sign of a zero result follows IEEE
arithmetic on the formula, as MPFR applies it.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import gmpy2
import numpy as np
from gmpy2 import mpfr, mpq

CONTEXTS = {
    "float16": lambda: gmpy2.ieee(16),
    "float32": lambda: gmpy2.ieee(32),
    "float64": lambda: gmpy2.ieee(64),
    # bfloat16: 8-bit significand, binary32's exponent range.
    "bfloat16": lambda: gmpy2.context(precision=8, emin=-132, emax=128, subnormalize=True),
    # not a format: the value itself to 200 bits, returned as an mpfr (tests of the reference's balls)
    "mpfr200": lambda: gmpy2.context(precision=200, emin=-(10**6), emax=10**6),
}
WORK = 320


# Each context is made once: the oracle spends more time in Python than in MPFR (57 us an input for
# Selu, most of it making contexts), and the 16-bit tests call it for every input of the format
@functools.cache
def _context(dtype: str, rounding=None):
    return CONTEXTS[dtype]() if rounding is None else gmpy2.context(CONTEXTS[dtype](), round=rounding)


@functools.cache
def _working(prec: int):
    return gmpy2.context(precision=prec)


def _round(value, dtype: str) -> float:
    with _context(dtype):
        r = mpfr(value) if isinstance(value, type(mpq(0))) else +value
    return r if dtype == "mpfr200" else float(r)


def _ziv(at, dtype: str) -> float:
    """Round at(prec) to dtype, raising the working precision while the value
    computed is exactly a midpoint between two values of dtype: there the bits
    below the working precision decide (alpha * expm1(x) at x = -1e-240 is
    alpha * x to 320 bits, but its exact value is not). A value computed within
    2^-300 of a value of dtype rounds to it whatever those bits are."""
    for prec in (WORK, 1400, 3000):
        v = at(prec)
        if not gmpy2.is_finite(v) or v == 0:
            return _round(v, dtype)
        with _context(dtype, gmpy2.RoundDown):
            lo = +v
        with _context(dtype, gmpy2.RoundUp):
            hi = +v
        with _working(128):  # two neighbours: their mean is exact
            mid = (lo + hi) / 2
        if lo == hi or not gmpy2.is_finite(mid) or v != mid:
            break
    return _round(v, dtype)


def _exact_q(x: float) -> mpq:
    return mpq(*x.as_integer_ratio())


def oracle_scalar(op: str, x: float, attrs: dict[str, float], dtype: str) -> float:
    if math.isnan(x):
        return math.nan
    if op in ("HardSigmoid", "Shrink"):
        if math.isinf(x):
            if op == "Shrink":
                return x
            slope = attrs["alpha"] * (1 if x > 0 else -1)
            return 1.0 if slope > 0 else (0.0 if slope < 0 else min(max(attrs["beta"], 0.0), 1.0))
        q = _exact_q(x)
        if op == "HardSigmoid":
            v = max(mpq(0), min(_exact_q(attrs["alpha"]) * q + _exact_q(attrs["beta"]), mpq(1)))
        else:
            lam, b = _exact_q(attrs["lambd"]), _exact_q(attrs["bias"])
            v = q + b if q < -lam else (q - b if q > lam else mpq(0))
        return _round(v, dtype)

    def at(prec):
        with _working(prec):
            xx = mpfr(x)
            if op == "Tanh":
                return gmpy2.tanh(xx)
            if op == "ScaledTanh":
                return mpfr(attrs["alpha"]) * gmpy2.tanh(mpfr(attrs["beta"]) * xx)
            if op == "Celu":
                a = mpfr(attrs["alpha"])
                # alpha > 0: max(0, x) + min(0, alpha*(exp(x/alpha) - 1)) is x for x > 0 and the
                # second term for x < 0; at x = +-0 the formula's IEEE value is max(0, -0) + min(0, +0) = +0.
                return xx if x > 0 else (a * gmpy2.expm1(xx / a) if x < 0 else mpfr(0))
            raise ValueError(op)

    return _ziv(at, dtype)


def oracle(op: str, x: np.ndarray, attrs: dict[str, float]) -> np.ndarray:
    dtype = {"float16": "float16", "bfloat16": "bfloat16", "float32": "float32", "float64": "float64"}[x.dtype.name]
    with np.errstate(invalid="ignore"):
        xs = x.astype(np.float64).tolist()
    out = np.array([oracle_scalar(op, v, attrs, dtype) for v in xs], dtype=np.float64)
    return out


def worst_ulp(op: str, x: np.ndarray, y: np.ndarray, attrs: dict[str, float]):
    """The largest ULP error of outputs y (DESIGN.md's definition), computed from
    MPFR values at 320 bits in rational arithmetic; (error, input) of the first
    worst input in bit order. Inputs whose exact result is NaN or infinite are
    left out, like the figure it checks."""
    from fractions import Fraction

    dtype = x.dtype.name
    p, emin = {"float16": (11, -14), "bfloat16": (8, -126), "float32": (24, -126), "float64": (53, -1022)}[dtype]
    order = np.argsort(np.ascontiguousarray(x).view(f"uint{8 * x.itemsize}"), kind="stable")
    best = (Fraction(-1), None)
    with np.errstate(invalid="ignore"):
        xs, ys = x.astype(np.float64), y.astype(np.float64)
    for i in order:
        xi, yi = float(xs[i]), float(ys[i])
        if math.isnan(xi) or math.isinf(xi):
            continue
        with gmpy2.context(gmpy2.context(precision=WORK)):
            if op != "Tanh":
                raise ValueError("worst_ulp covers Tanh")
            v = Fraction(*gmpy2.tanh(gmpy2.mpfr(xi)).as_integer_ratio())
        if math.isnan(yi) or math.isinf(yi):
            continue
        e = max((abs(v).numerator.bit_length() - abs(v).denominator.bit_length()), emin) if v else emin
        if v and Fraction(2) ** e > abs(v):
            e -= 1
        ulp = Fraction(2) ** (max(e, emin) - p + 1)
        err = abs(Fraction(yi) - v) / ulp
        if err > best[0]:
            best = (err, xi)
    return float(best[0]), best[1]


# ---- the rest of the catalog (finite inputs; zeros compared by value: the sign of an exact zero is
# the standard's IEEE formula's, which this oracle does not model) ----------------------------------

RATIONAL = {
    "Relu",
    "LeakyRelu",
    "PRelu",
    "ThresholdedRelu",
    "HardSwish",
    "Softsign",
    "Identity",
    "Linear",
    "Abs",
    "Neg",
    "Sign",
    "Threshold",
    "Floor",
    "Ceil",
    "Round",
    "Reciprocal",
    "Clip",
}


def _half_away(q):
    """q rounded to the nearest integer, halves away from zero (DirectML's TOWARD_INFINITY), in integers."""
    n = (2 * abs(q.numerator) + q.denominator) // (2 * q.denominator)  # floor(|q| + 1/2)
    return mpq(n if q >= 0 else -n)


def _rational(op: str, q, a: dict):
    A = {k: _exact_q(v) for k, v in a.items()}
    zero = mpq(0)
    if op == "Relu":
        return max(zero, q)
    if op == "LeakyRelu":
        return q if q >= 0 else A["alpha"] * q
    if op == "PRelu":
        return q if q >= 0 else A["slope"] * q
    if op == "ThresholdedRelu":
        return q if q > A["alpha"] else zero
    if op == "HardSwish":  # ONNX: alpha = 1/6 and beta = 1/2, the real numbers; DirectML: its attributes
        if "alpha" in A:
            return q * max(zero, min(mpq(1), A["alpha"] * q + A["beta"]))
        return q * max(zero, min(mpq(1), q / 6 + mpq(1, 2)))
    if op == "Softsign":
        return q / (1 + abs(q))
    if op == "Identity":  # DirectML's element-wise form: x * scale + bias, exactly
        return q * A.get("scale", mpq(1)) + A.get("bias", mpq(0))
    if op == "Linear":
        return A["alpha"] * q + A["beta"]
    if op == "Abs":  # DirectML's ScaleBias: |x * scale + bias|, exactly
        return abs(q * A.get("scale", mpq(1)) + A.get("bias", mpq(0)))
    if op == "Neg":
        return -q
    if op == "Sign":
        return mpq(1) if q > 0 else mpq(-1) if q < 0 else zero
    if op == "Threshold":  # DirectML: max(x * scale + bias, Min), exactly
        return max(q * A.get("scale", mpq(1)) + A.get("bias", mpq(0)), A.get("min", zero))
    if op == "Clip":  # ONNX: min(max, max(u, min)), max where min > max; DirectML: max(Min, min(u, Max)), Min there
        u = q * A.get("scale", mpq(1)) + A.get("bias", mpq(0))
        lo, hi = A.get("min", mpq(0)), A.get("max", mpq(6))  # absent: the examples the catalog states (ReLU6's)
        if "scale" in A:
            return max(lo, min(u, hi))
        return hi if lo > hi else min(hi, max(u, lo))
    if op == "Reciprocal":  # DirectML's ScaleBias: 1 / (x * scale + bias), exactly (the pole is taken above)
        return 1 / (q * A.get("scale", mpq(1)) + A.get("bias", mpq(0)))
    if op in ("Floor", "Ceil"):  # DirectML's ScaleBias: of x * scale + bias, exactly; integer division floors
        u = q * A.get("scale", mpq(1)) + A.get("bias", mpq(0))
        return mpq(u.numerator // u.denominator) if op == "Floor" else -mpq((-u.numerator) // u.denominator)
    if op == "Round":  # Python's round() of a Fraction: halves to even; DirectML's other RoundingModes
        mode = int(a.get("rounding_mode", 0))
        if mode == 1:  # toward zero
            return mpq(int(Fraction(int(q.numerator), int(q.denominator))))
        if mode == 2:
            return _half_away(q)
        return mpq(round(Fraction(int(q.numerator), int(q.denominator))))
    raise ValueError(op)


def catalog_scalar(op: str, x: float, attrs: dict[str, float], dtype: str) -> float:
    if op in ("Tanh", "ScaledTanh", "Celu", "HardSigmoid", "Shrink"):
        return oracle_scalar(op, x, attrs, dtype)
    if op == "Reciprocal":  # the pole: IEEE's quotient, the infinity of the zero's sign (Python's floats are IEEE's)
        z = x * attrs.get("scale", 1.0) + attrs.get("bias", 0.0) if "scale" in attrs else x
        if _exact_q(x) * _exact_q(attrs.get("scale", 1.0)) + _exact_q(attrs.get("bias", 0.0)) == 0:
            return math.copysign(math.inf, z)
    if op in RATIONAL:
        return _round(_rational(op, _exact_q(x), attrs), dtype)
    if op == "ConstantPow":
        return _constant_pow(x, attrs, dtype)

    if op == "BatchNormalization":  # scale (x - mean) / sqrt(var + epsilon) + B: x - mean and var + epsilon exact
        a = {k: _exact_q(v) for k, v in attrs.items()}
        d, s2 = _exact_q(x) - a["input_mean"], a["input_var"] + a["epsilon"]

        def at(prec):
            with _working(prec):
                return mpfr(a["scale"] * d) / gmpy2.sqrt(mpfr(s2)) + mpfr(a["B"])

        return _ziv(at, dtype)

    def at(prec):
        with _working(prec):
            t = mpfr(x)
            if op == "Elu":
                v = mpfr(attrs["alpha"]) * gmpy2.expm1(t) if x < 0 else t
            elif op == "Selu":
                v = mpfr(attrs["gamma"]) * t if x > 0 else mpfr(attrs["gamma"]) * mpfr(attrs["alpha"]) * gmpy2.expm1(t)
            elif op == "Sigmoid":
                v = 1 / (1 + gmpy2.exp(-t))
            elif op == "Softplus":  # alpha ln(1 + e^(beta t)) (DirectML's steepness s: alpha = 1/s, beta = s)
                a, b = mpfr(attrs.get("alpha", 1.0)), mpfr(attrs.get("beta", 1.0))
                if "steepness" in attrs:
                    a, b = 1 / mpfr(attrs["steepness"]), mpfr(attrs["steepness"])
                u = b * t  # ln(1 + e^u) = u + ln(1 + e^-u): no overflow of e^u for huge u
                v = a * (gmpy2.log1p(gmpy2.exp(u)) if u < 100 else u + gmpy2.log1p(gmpy2.exp(-u)))
            elif op == "Gelu" and attrs.get("approximate", 0) == 1:  # tanh form; 0.044715 is the decimal
                z = gmpy2.sqrt(2 / gmpy2.const_pi()) * (t + mpfr(mpq(44715, 10**6)) * t * t * t)
                v = t * (1 + gmpy2.tanh(z)) / 2 if z > -1 else t * gmpy2.exp(z) / (2 * gmpy2.cosh(z))
            elif op == "Gelu":  # approximate = none; erfc keeps 1 + erf(t) accurate far below 0
                v = t * gmpy2.erfc(-t / gmpy2.sqrt(mpfr(2))) / 2
            elif op == "Mish":
                v = t * gmpy2.tanh(gmpy2.log1p(gmpy2.exp(t)))
            elif op == "Swish":
                v = t / (1 + gmpy2.exp(-mpfr(attrs["alpha"]) * t))
            elif op == "Erf":
                v = gmpy2.erf(mpfr(attrs.get("scale", 1.0)) * t + mpfr(attrs.get("bias", 0.0)))
            elif op == "Exp":  # DirectML's ScaleBias: e^(x * scale + bias), the argument exact at this precision
                v = gmpy2.exp(mpfr(attrs.get("scale", 1.0)) * t + mpfr(attrs.get("bias", 0.0)))
            elif op in ("Log", "Sqrt"):  # MPFR's log and sqrt: NaN below 0, log(0) = -inf, as IEEE 754's
                # the argument u = x * scale + bias exactly, and ln u as log1p(u - 1) of the exact u - 1 (u = 1 +
                # 2e-150 would round to 1 at the working precision)
                u = _exact_q(x) * _exact_q(attrs.get("scale", 1.0)) + _exact_q(attrs.get("bias", 0.0))
                if op == "Sqrt":
                    v = gmpy2.sqrt(mpfr(u))
                else:  # near 1, the exact u - 1; elsewhere u itself (u - 1 would round to -1 near 0)
                    v = gmpy2.log1p(mpfr(u - 1)) if abs(u - 1) < mpq(1, 2) else gmpy2.log(mpfr(u))
            elif op in MPFR_UNARY:  # MPFR's own: NaN outside the domain, atanh(+-1) = +-inf, as IEEE 754's
                u = _exact_q(x) * _exact_q(attrs.get("scale", 1.0)) + _exact_q(attrs.get("bias", 0.0))
                d = u - 1  # exact: u = 1 + 2e-150 would round to 1 at the working precision
                if (op == "Acosh" and d < 0) or (op in ("Asin", "Acos", "Atanh") and abs(u) > 1):
                    v = mpfr("nan")  # outside the domain, decided on the exact u
                elif op == "Acosh" and d < mpq(1, 2):  # acosh(1 + d) = log1p(d + sqrt(d (2 + d)))
                    v = gmpy2.log1p(mpfr(d) + gmpy2.sqrt(mpfr(d) * (2 + mpfr(d))))
                else:  # u exactly (float64's x * scale + bias may need 1100 bits): sin reduces that very u
                    v = getattr(gmpy2, MPFR_UNARY[op])(mpfr(u, max(u.numerator.bit_length(), 2)))
            else:
                raise ValueError(op)
            return v

    return _ziv(at, dtype)


def _constant_pow(x: float, attrs: dict[str, float], dtype: str) -> float:
    """DirectML's pow(x * scale + bias, Exponent) at a finite x: the exact u; a negative u with a non-integer exponent
    is NaN (the document); 0 to a negative power the pole's +inf; an integer exponent an exact rational power; else
    MPFR's pow of the exact u."""
    e = attrs.get("exponent", 2.0)
    u = _exact_q(x) * _exact_q(attrs.get("scale", 1.0)) + _exact_q(attrs.get("bias", 0.0))
    integer = float(e).is_integer()
    if e == 0:
        return 1.0
    if u < 0 and not integer:
        return math.nan
    if u == 0:  # C's pow at a zero: the pole's infinity (and the zero) keep the zero's sign for an odd exponent
        z = x * attrs["scale"] + attrs["bias"] if "scale" in attrs else x  # DirectML's x * scale + bias in IEEE
        odd = integer and int(e) % 2 == 1
        return math.copysign(math.inf if e < 0 else 0.0, z if odd else 1.0)
    if integer and abs(e) * max(u.numerator.bit_length(), u.denominator.bit_length()) < 200_000:
        return _round(u ** int(e), dtype)

    def at(prec):
        with _working(prec):
            return gmpy2.mpfr(u, max(u.numerator.bit_length(), u.denominator.bit_length(), 2) + 64) ** mpfr(e)

    return _ziv(at, dtype)


# f(x * scale + bias), MPFR's f of the exact argument (rounded to the working precision)
MPFR_UNARY = {
    "Sinh": "sinh",
    "Asinh": "asinh",
    "Atan": "atan",
    "Asin": "asin",
    "Acos": "acos",
    "Atanh": "atanh",
    "Acosh": "acosh",
    "Sin": "sin",
    "Cos": "cos",
    "Tan": "tan",
    "Cosh": "cosh",
}


def catalog_oracle(op: str, x: np.ndarray, attrs: dict[str, float]) -> np.ndarray:
    dtype = x.dtype.name
    return np.array([catalog_scalar(op, float(v), attrs, dtype) for v in x.astype(np.float64)])
