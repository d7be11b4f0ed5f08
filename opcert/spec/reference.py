"""The correctly rounded reference: the exact value, rounded to nearest, ties to even.

For each input:
- NaN gives NaN (opcert's specification propagates NaN, for every operator);
- +-inf gives the operator's declared limit, rounded, with the sign of a zero limit;
- a finite input of a format of at most 24 bits first takes the fast path:
  the standard's `reference_form` in binary64 ball arithmetic (numerics.ball),
  which bounds its own error; where the ball rounds to one value, that value
  is the correctly rounded result; a binary64 input takes the same path in
  long double (numerics.ball.WIDE) where the platform has one;
- every other input is evaluated exactly (numerics.exact): rational arithmetic,
  rational Taylor enclosures for tiny arguments, else Arb ball arithmetic at
  increasing precision.
A zero result takes the sign that IEEE arithmetic gives the standard's formula.
Integer inputs: the exact value, rounded to the nearest integer (ties to even)
and saturated (the operator's `integer` semantics).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from opcert.errors import UsageError, choices
from opcert.expr import parity
from opcert.expr.numpy_eval import eval_numpy
from opcert.formats import FLOAT_FORMATS, FloatFormat, IntFormat, format_of, get_format, round_fraction
from opcert.numerics import ball, one_sided
from opcert.numerics.exact import MAX_PREC, Undefined, eval_rational, evaluate, outside_domain
from opcert.spec import get_operator, is_tensor_operator, scale_bias, standard_named
from opcert.spec.attrs import resolve
from opcert.spec.model import Operator
from opcert.spec.row_reference import reference as reference_tensor


@dataclass
class Reference:
    """Correctly rounded results and the exact values they round.

    `exact_hi` + `exact_lo` holds the exact value as a binary64 pair (for the
    fast path, the ball's midpoint, within its radius: at most a few binary64
    ULPs, which bounds the error of ULP figures computed from it by ~2^-28 ULP
    for binary32; for binary64, the long double midpoint, within ~2^-7 ULP:
    a histogram bin edge can be crossed by that much, the worst cases are
    re-verified exactly). NaN where the result is NaN, +-inf where the exact value is
    infinite (an infinite limit)."""

    rounded: np.ndarray
    exact_hi: np.ndarray
    exact_lo: np.ndarray
    slow_path: int = 0
    # The exact values as Fractions (flat order; None where NaN, infinite or
    # decided by the fast path). Kept for binary64 results, whose hi + lo pair
    # cannot hold values in binary64's own subnormal range.
    exact_q: list | None = None
    # True where the fast path's midpoint is a power of two with a radius around
    # it (tanh(19) = 1 - 2^-55.x: midpoint 1): the exact value may lie in the
    # binade below, whose ULP is half as large. ULP figures there take the
    # smaller ULP (an upper bound on the error); the worst cases are re-verified.
    ambiguous_binade: np.ndarray | None = None
    exact_at: np.ndarray | None = None  # the flat indices where exact_q holds a value


FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")


def check_dtype(op: Operator, fmt) -> None:
    """opcert's implementation and reference take every float format for every
    operator, whatever a given standard allows (the descriptor validation checks
    that), and the integer types a standard allows where the operator has integer semantics."""
    allowed = FLOAT_DTYPES + op.integer_dtypes
    if fmt.name not in allowed:
        raise UsageError(f"{op.name} does not take {fmt.name}; allowed: {choices(allowed)}")


def _attrs64(attrs) -> dict[str, float]:
    return {k: float(v) for k, v in attrs.items()}


def pole_value(formula, q: Fraction, xi: float, attrs, attrs64) -> float | None:
    """At a pole of the definition (a divisor exactly 0: Reciprocal at +-0, 1 / (x * scale + bias) where the sum is
    0): IEEE's value of the standard's formula there in binary64, the infinity of the zero's sign (a quotient 0 / 0
    is NaN); None where no divisor is exactly 0."""
    try:
        eval_rational(formula, q, attrs)
        return None
    except ZeroDivisionError:
        with np.errstate(all="ignore"):
            return float(np.broadcast_to(eval_numpy(formula, np.array([xi]), attrs64), (1,))[0])
    except Exception:  # noqa: BLE001 - not rational (a primitive of an irrational value): no pole found this way
        return None


def zero_signs(formula, xs: np.ndarray, attrs64) -> np.ndarray:
    """For inputs whose exact value is zero: the zero IEEE arithmetic gives the standard's
    formula there (-0 where it gives -0, else +0)."""
    with np.errstate(all="ignore"):
        z = np.broadcast_to(eval_numpy(formula, xs, attrs64), xs.shape)
    return np.where(np.signbit(z) & (z == 0), -0.0, 0.0)


def limit_value(op: Operator, side: int, attrs, fmt) -> tuple[float, float]:
    """(the correctly rounded limit in fmt, the exact limit as a binary64 value or +-inf)."""
    lim = op.limit(side, attrs)
    if isinstance(lim.value, str):
        v = float(lim.value)
        return v, v
    try:
        q = eval_rational(lim.value, Fraction(0), attrs)
    except Exception:  # noqa: BLE001 - an irrational limit (alpha ln 2): evaluate it exactly
        ex = evaluate(lim.value, Fraction(0), attrs, fmt)
        q = ex.mid if not ex.is_rational else ex.lo
        r = round_fraction(ex.lo, fmt, negative_zero=ex.lo < 0)
        return r, float(q)
    if q == 0:
        z = -0.0 if lim.zero_sign < 0 else 0.0
        return z, z
    return round_fraction(q, fmt, negative_zero=q < 0), float(q)


def reference_detailed(
    op, x, attrs: dict[str, Fraction], standard: str | None = None, exact_bits: int = 0
) -> Reference:
    """Reference results for the array x (any shape) with resolved attributes.

    `exact_bits` > 0 forces the exact path everywhere and encloses each exact
    value to that many bits (used to re-verify worst cases)."""
    op = get_operator(op)
    x = np.asarray(x)
    fmt = format_of(x)
    check_dtype(op, fmt)
    if isinstance(fmt, IntFormat):
        return _reference_int(op, x, attrs, standard, fmt)
    std = op.standard(standard)
    if std.rounded_scale_bias:  # f at x * scale + bias rounded in the tensor's type (spec.scale_bias)
        u = scale_bias.rounded_argument(x, attrs, fmt)
        return reference_detailed(op, u, scale_bias.plain_attributes(attrs), std.key, exact_bits)
    flat = x.reshape(-1)
    with np.errstate(invalid="ignore"):  # ml_dtypes warns when widening NaN
        x64 = flat.astype(np.float64)
    n = x64.size
    out = np.full(n, np.nan)
    hi = np.full(n, np.nan)
    lo = np.zeros(n)
    amb = np.zeros(n, dtype=bool)
    a64 = _attrs64(attrs)

    for side in (1, -1):
        where = np.isinf(x64) & ((x64 > 0) if side > 0 else (x64 < 0))
        if where.any():
            r, v = limit_value(op, side, attrs, fmt)
            out[where], hi[where] = r, v
    nan_value = op.nan_result(attrs)
    if nan_value == nan_value:  # NaN gives a number here (ConstantPow at exponent 0: 1)
        out[np.isnan(x64)] = hi[np.isnan(x64)] = nan_value

    pending = np.isfinite(x64)
    precision = ball.BINARY64 if fmt.p <= 24 else ball.WIDE if fmt.p == 53 else None
    if precision is not None and exact_bits == 0:
        form = op.reference_form(std.key)
        mirror = parity(form)
        half = _negated_half(flat, fmt) if mirror else 0
        # a sample closed under negation (x, then -x in the same order: inputs.sample, every pattern of a
        # 16-bit format) of an odd or even function: the fast path on the first half, the second from it
        idx = np.nonzero(pending[:half] if half else pending)[0]
        val, decided, h, l, a, zero = _fast_threads(form, std.zero_form, x64[idx], a64, precision, fmt)
        parts = [(idx, val, h, l)]
        if half:
            twin, sign = idx + half, (-1.0 if mirror == "odd" else 1.0)
            tval, th, tl = sign * val, sign * h, sign * l + 0.0  # lo: +0, never -0, as computed
            if zero.any():  # an exact zero's sign is the formula's, at its own sign
                tval[zero] = th[zero] = zero_signs(std.zero_form, x64[twin[zero]], a64)
            parts.append((twin, tval, th, tl))
        for at, v, hh, ll in parts:
            out[at[decided]] = v[decided]
            hi[at[decided]] = hh[decided]
            lo[at[decided]] = ll[decided]
            amb[at[decided]] = a[decided]
            pending[at[decided]] = False

    slow = np.nonzero(pending)[0]
    exact_q = [None] * n
    for i in slow:
        xi = float(x64[i])
        try:
            v = exact_value(op, std, Fraction(xi), attrs, fmt, exact_bits)
        except Undefined:  # outside the domain of the formula's root (log(-1)): IEEE's value there
            special = outside_domain(std.formula, Fraction(xi), attrs)
            if special is None:
                special = pole_value(std.formula, Fraction(xi), xi, attrs, a64)
            if special is None:
                raise
            out[i] = hi[i] = special
            continue
        if v.is_rational and v.lo == 0:
            out[i] = hi[i] = zero_signs(std.zero_form, np.array([xi]), a64)[0]
            exact_q[i] = Fraction(0)
            continue
        mid = v.mid
        exact_q[i] = mid
        out[i] = round_fraction(mid if v.is_rational else v.lo, fmt, negative_zero=mid < 0)
        if abs(mid) >= F64_OVERFLOW:  # beyond binary64 (Selu's gamma * x at 1.7e308): +-inf, 0
            hi[i], lo[i] = (np.inf if mid > 0 else -np.inf), 0.0
            continue
        h = float(mid)
        hi[i], lo[i] = h, float(mid - Fraction(h))
    shape = x.shape
    return Reference(
        out.reshape(shape).astype(fmt.dtype),
        hi.reshape(shape),
        lo.reshape(shape),
        slow_path=len(slow),
        exact_q=exact_q,
        ambiguous_binade=amb.reshape(shape),
        exact_at=np.array([i for i in slow if exact_q[i] is not None], dtype=np.int64),
    )


THREAD_MIN = 1 << 17  # inputs per thread below which one thread does the fast path


def _fast_threads(form, formula, xs, a64, precision, fmt):
    """The fast path over xs, split across threads: NumPy's loops release the GIL, so the
    long double evaluation of a 10^6-input sample uses every core."""
    k = max(1, min(os.cpu_count() or 1, 8, xs.size // THREAD_MIN))
    if k == 1:
        return _fast(form, formula, xs, a64, precision, fmt)
    parts = np.array_split(xs, k)
    with ThreadPoolExecutor(k) as pool:
        done = list(pool.map(lambda p: _fast(form, formula, p, a64, precision, fmt), parts))
    return tuple(np.concatenate([d[i] for d in done]) for i in range(len(done[0])))


def _negated_half(flat: np.ndarray, fmt) -> int:
    """n // 2 where the second half of flat is the first negated, element by element (the
    bit patterns with the sign bit flipped), else 0."""
    n = flat.size
    if n < 2 or n % 2:
        return 0
    bits = np.ascontiguousarray(flat).view(fmt.uint)
    half = n // 2
    return half if np.array_equal(bits[half:], bits[:half] ^ fmt.uint.type(1 << (fmt.bits - 1))) else 0


def _fast(form, formula, xs, a64, precision, fmt):
    """(rounded values, decided mask, exact value as hi + lo, ambiguous binade, exact zero)
    of the ball fast path."""
    m, r, ok, sg = ball.evaluate(form, xs, a64, precision)
    val, decided = ball.decide(m, r, ok, fmt, sg)
    zero = decided & (m == 0) & (r == 0)
    if zero.any():  # an exact zero: the sign IEEE arithmetic gives the standard's formula
        val = val.copy()
        val[zero] = zero_signs(formula, xs[zero], a64)
    with np.errstate(over="ignore"):  # a decided overflow: the midpoint is beyond binary64
        mh = np.asarray(m).astype(np.float64)
    if fmt.p <= 24 and not decided.all() and one_sided.supported(form):
        und = np.nonzero(~decided)[0]
        om, orr, os_, ook = one_sided.evaluate(form, xs[und], a64)
        good, oval, rep = one_sided.decide(om, orr, os_, ook, fmt)
        if good.any():
            # the exact value: a binary64 value just past the midpoint, on its side (as the sweep takes it),
            # so that a result rounded the other way shows more than half an ULP
            val, decided, mh = val.copy(), decided.copy(), mh.copy()
            val[und[good]] = oval[good]
            decided[und[good]] = True
            mh[und[good]] = rep[good]
            zero = zero & decided
    h = np.where(zero, val, mh)
    l = np.zeros(xs.size)
    if np.asarray(m).dtype != np.float64:  # a wider midpoint: keep the part binary64 cannot hold
        with np.errstate(all="ignore"):
            # + 0.0: a low part below binary64's subnormals (erf at x = -5e-324, the long double value
            # -5.6e-324) converts to -0; a zero low part is +0 everywhere (the mirrored half relies on it)
            l = np.where(zero | ~np.isfinite(mh) | ~decided, 0.0, (m - mh).astype(np.float64) + 0.0)
    with np.errstate(invalid="ignore"):
        amb = decided & ~zero & (np.asarray(r) > 0) & (l == 0) & np.isfinite(h) & (np.frexp(np.abs(h))[0] == 0.5)
    return val, decided, h, l, amb, np.broadcast_to(zero, xs.shape)


F64_OVERFLOW = Fraction(2) ** 1024 - Fraction(2) ** 970  # the binary64 rounding threshold to infinity


def exact_value(op: Operator, std, x: Fraction, attrs, fmt, min_prec: int = 0):
    """The exact value of the standard's formula at x; where an enclosure cannot
    decide it (a value so far below the smallest subnormal that the formula's
    ln(1 + e^x) cannot tell it from 0), the standard's reference form, which is
    the same function written without that cancellation (tests/test_catalog.py
    checks the two agree)."""
    try:
        return evaluate(std.formula, x, attrs, fmt, min_prec=min_prec, max_prec=2048)
    except RuntimeError:
        form = op.reference_form(std.key)
        if form is std.formula:
            return evaluate(std.formula, x, attrs, fmt, min_prec=min_prec, max_prec=MAX_PREC)
        return evaluate(form, x, attrs, fmt, min_prec=min_prec, max_prec=MAX_PREC)


def _reference_int(op: Operator, x: np.ndarray, attrs, standard, fmt: IntFormat) -> Reference:
    formula = op.standard(standard).formula
    flat = x.reshape(-1)
    out = np.empty(flat.size, dtype=object)
    exact = np.empty(flat.size)
    wide = FLOAT_FORMATS["float64"]
    for i, xi in enumerate(flat.tolist()):
        v = evaluate(formula, Fraction(int(xi)), attrs, wide)
        q = v.lo if v.is_rational else _decide_integer(formula, int(xi), attrs)
        exact[i] = float(q)
        out[i] = min(max(round_half_even(q), fmt.min), fmt.max)
    return Reference(out.astype(fmt.dtype).reshape(x.shape), exact.reshape(x.shape), np.zeros(x.shape))


def _decide_integer(formula, xi: int, attrs) -> Fraction:
    """An irrational value, enclosed until its nearest integer is decided (never a half-integer)."""
    bits = 64
    while True:
        fmt = FloatFormat(f"enclosure{bits}", bits, -16382, 16383, np.dtype(np.float64), 64)
        v = evaluate(formula, Fraction(xi), attrs, fmt, min_prec=bits)
        if round_half_even(v.lo) == round_half_even(v.hi):
            return v.mid
        bits *= 2


def round_half_even(q: Fraction) -> int:
    return round(q)  # Fraction.__round__ rounds ties to even


def reference(op, x, *, standard: str | None = None, **attrs) -> np.ndarray:
    """The correctly rounded result of `op` at every element of x, in x's dtype.

    Attributes take ONNX or DirectML names; missing ones take the standard's
    defaults. `standard` selects whose definition ("onnx", "directml", ...);
    by default the operator's primary standard (or the standard whose own name
    `op` is, such as DML_ACTIVATION_SOFTPLUS). A tensor operator (Softmax) takes axis= or axes= besides
    its attributes (LayerNormalization's epsilon=; spec.row_reference)."""
    if is_tensor_operator(op):
        axis, axes, given = attrs.pop("axis", None), attrs.pop("axes", None), attrs.pop("attrs", None)
        # the attributes as keywords, as for the element-wise operators (impl.run likewise)
        return reference_tensor(op, x, standard=standard, axis=axis, axes=axes, attrs={**(given or {}), **attrs})
    standard = standard or standard_named(op)
    op = get_operator(op)
    x = np.asarray(x)
    get_format(x.dtype)
    return reference_detailed(op, x, resolve(op, attrs, standard), standard).rounded
