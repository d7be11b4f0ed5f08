"""What opcert knows about each primitive function of the expression language:
one record per primitive, read by every interpreter.

A record holds
- `numpy`: the binary64 function opcert's implementation calls (the platform's);
- `arb`: a rigorous enclosure (Arb ball arithmetic, python-flint), for the exact reference;
- `exact`: its rational value at rational points where that value is rational
  (exp(0) = 1, log(1) = 0, sqrt(9/4) = 3/2), else None;
- `tiny`: a rational Taylor enclosure for tiny rational arguments (decides the
  inputs whose value lands next to a rounding midpoint, where a precision loop
  would have to climb past hundreds of bits);
- facts for the provers: the real domain, monotonicity, oddness, bounds, and
  axioms (true theorems of analysis, instantiated on the terms that occur);
- the platform contract: what the proofs assume of the binary64 function
  (tests/test_contracts.py checks each clause on the platform), and its error
  bound in binary64 ULPs (the reference's fast path relies on it and the
  contract tests measure it);
- what compiled code calls (`libm`, `scalar`) and the rules written in
  expr.ball_ops' vocabulary, NumPy's and numba's at once: the ball's
  propagation (`ball_radius`), and where the tensor checks need one, how far
  f moves over an interval (`moved`).

Records are written with keywords, one field a name.

`check_registry()` runs at catalog load: every primitive must have every part,
and every interpreter must know every primitive.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from flint import arb

try:  # NumPy's private names: where they move, NumPy's AVX-512 loops are taken as absent
    from numpy._core._multiarray_umath import __cpu_features__
except ImportError:
    __cpu_features__ = {}

from opcert.expr import libm_arrays, quarter_turns
from opcert.expr.ball_ops import NUMPY

B = NUMPY  # the ball rules' vocabulary as written (expr.ball_ops: the compiled ball rebinds it)


@dataclass(frozen=True)
class Primitive:
    name: str
    doc: str
    numpy: Callable
    arb: Callable
    exact: Callable  # Fraction -> Fraction | None
    domain: tuple  # (lo, lo_open, hi, hi_open): the real domain; None = unbounded on that side
    increasing: bool | None  # strictly increasing on its domain (False: decreasing; None: neither, sin)
    odd: bool
    bounds: tuple  # (lo, hi) of its range, open; None = unbounded
    contract: tuple  # the platform contract, as stated in reports
    ulps: float  # contract: max error of the platform function, binary64 ULPs (0: exact, as floor)
    tiny: Callable | None = None  # Fraction t (|t| <= 2^-10) -> (lo, hi) rational enclosure
    spec_axioms: Callable | None = None  # (model, t, ft) -> [z3 constraints]: theorems, strict
    # the sign of f(t), known from t's: "positive" (f > 0 everywhere), "of_argument" (sign(f(t)) = sign(t),
    # zeros included), "positive_where_argument_positive" (f(t) > 0 for t > 0, f(+-0) = +-0: sqrt); "" none
    sign: str = ""
    at_inf: tuple = (None, None)  # f(-inf), f(+inf) as floats; None: the infinity of that side
    libm: str = ""  # the C library function compiled code calls (through numba)
    vector: bool = False  # NumPy's function has SIMD loops: the compiled ball calls it per block
    long_double_ulps: float | None = None  # contract of the platform's long double function (ULPs of that
    # format; None: NumPy has none, the binary64 reference goes exact)
    # numerics.one_sided's rule for f(arg): (arg expression, analyses) -> (m, r, side, ok): f's value lies on
    # `side` of the binary64 m, within r, where ok (the analyses: tiny_exact(e, tiny), sign_bound(e))
    one_sided: Callable | None = None
    # IEEE 754 requires the platform's function correctly rounded: z3's own operation, (rounding mode, a) -> term,
    # which the floating-point model uses bit for bit; None: an uninterpreted function under the contract
    ieee: Callable | None = None
    # (lo, hi): below lo the binary64 value of f is f(-inf)'s (at_inf), above hi f(+inf)'s, within the
    # contract's eta: compiled code takes it without calling the C library, whose underflow paths are slow
    saturates: tuple | None = None
    # the ball's propagation rule (numerics.ball_rules), in expr.ball_ops' vocabulary: (m, ma, ra, contract, u)
    # -> (prop, ok, wide): |f(t) - f(ma)| <= prop for |t - ma| <= ra, where ok; where wide, prop does not
    # bound it and the evaluator takes the bound of f's values at the ends of the ball (f is monotone).
    # m: the platform's f(ma); contract: its error bound at m
    ball_radius: Callable | None = None
    # (f(t), t, w) -> an upper bound on |f(y) - f(t)| for every |y - t| <= w, in expr.ball_ops' vocabulary (the
    # tensor checks' bound on how far an output within w of the exact t moves f: LogSoftmax's row sums of
    # exponentials, over arrays and in the compiled pair check); None: nothing needs it
    moved: Callable | None = None
    # |f(t)| is non-decreasing in |t|, with a constant sign, for |t| >= exact.HUGE_ARGUMENT on each side: where
    # Arb's enclosure of f at a huge argument is infinite (e^(1e308)), the exact evaluator bounds it by f(+-4096)
    grows: bool = False
    extra: dict = field(default_factory=dict)
    even: bool = False  # f(-t) = f(t) for every t, and the platform's function gives the same bits at t and -t
    strict: bool = True  # `increasing` is strict (False: non-decreasing, constant on pieces: floor)
    # where `increasing` is None (monotone nowhere on its whole domain): closed intervals (lo, hi, direction) with
    # rational ends, inside the real function's own pieces, on which it is monotone (+1 increasing, -1
    # decreasing): a theorem of the real function (tests/test_primitive_table.py, against Arb), and a clause of
    # the platform contract (tests/test_contracts.py), as every monotone record's `increasing` is
    pieces: tuple = ()

    def piece_direction(self, lo, hi) -> int | None:
        """The direction of a piece holding [lo, hi], or None where none does."""
        for a, b, d in self.pieces:
            if a <= lo and hi <= b:
                return d
        return None

    @property
    def correctly_rounded(self) -> bool:
        return self.ieee is not None

    @property
    def scalar(self) -> Callable:
        """The C library's function that `libm` names (math.exp, ...), for numba code written by hand (the
        compiled pair check): numba compiles a call of it, as the generated kernels' calls."""
        if self.libm.startswith("np."):
            return getattr(np, self.libm.removeprefix("np."))
        return getattr(math, self.libm.removeprefix("math."))

    def in_domain(self, t) -> bool:  # a float or an exact Fraction (no overflow)
        lo, lo_open, hi, hi_open = self.domain
        if lo is not None and (t < lo or (lo_open and t == lo)):
            return False
        return hi is None or t < hi or (t == hi and not hi_open)


# inside [-pi/2, pi/2] and [0, pi]: 1.5707963 < pi/2 = 1.57079632..., 3.1415926 < pi = 3.14159265...; every binary32
# and bfloat16 value strictly inside the real pieces lies inside these too (binary32's nearest below pi/2 is
# 1.5707962513, below pi 3.1415925026)
HALF_PI_INSIDE = Fraction(15707963, 10**7)
PI_INSIDE = Fraction(31415926, 10**7)

TANH_SATURATION = 20.0  # |t| >= 20: 1 - |tanh t| < 2e^-40 < 2^-54, so tanh(t) rounds to +-1 in binary64
TANH_TINY = 2.0**-27  # |t| < 2^-27: tanh(t) rounds to t (t - tanh t < |t|^3/3 < |t| 2^-54)


def _tanh_np(t, out=None):
    """NumPy's tanh where its value is not known beforehand, and tanh's correctly rounded value where it
    is: +-1 where |t| >= 20, t where |t| < 2^-27. Element by element, so a value never depends on the rest
    of the call; NumPy's tanh is not called where a whole array is known (the float32 sweep's blocks: 87%
    of binary32 inputs lie in the two regions), and, where NumPy's binary64 tanh is a scalar loop (no
    AVX-512: bench/README.md, 'Figures behind choices in the code'), only on the rest of a mixed call.

    What the proofs assume of the platform's tanh holds of this one: within its contract (the known values
    are correctly rounded), odd, in [-1, 1], tanh(+-0) = +-0, and non-decreasing: at 20 because the
    platform's tanh is at most 1, and at 2^-27 because _tiny_region checks once that the platform's tanh
    of +-2^-27 is not below the largest double under 2^-27 in magnitude (a non-decreasing function is then
    not below it anywhere above; where it is, the tiny region is not used). Binary64 only (opcert's
    implementation computes in it): other types take NumPy's own (in long double 1 - tanh(20) = 8.5e-18 is
    far above the half ULP below 1, 2^-65). tests/test_libm_arrays.py checks it against MPFR and against
    np.tanh."""
    t = np.asarray(t)
    if t.dtype != np.float64:
        return np.tanh(t) if out is None else np.tanh(t, out=out)
    # lazy: numba's loops load with the first binary64 array, not with `import opcert` (the pytest plugin)
    from opcert.expr.known_values import count_known, fill_known, rest_indices  # lazy: see above

    tiny = _tiny_region()
    flat = np.ascontiguousarray(t).reshape(-1)  # a scalar, a view: the same passes
    r = np.empty(flat.size, t.dtype)
    n = count_known(flat, TANH_SATURATION, tiny)
    if n == flat.size:
        fill_known(flat, r, TANH_SATURATION, tiny, 1.0)
    elif 2 * n >= flat.size or (4 * n >= flat.size and not _numpy_avx512()):
        # only the rest is computed: the indices and their gathering cost less than NumPy's tanh on the
        # elements they spare, the more so without AVX-512 (a scalar loop; bench/README.md, 'Figures behind
        # choices in the code')
        rest = np.empty(flat.size - n + 1, np.int64)
        rest = rest[: rest_indices(flat, TANH_SATURATION, tiny, rest)]
        fill_known(flat, r, TANH_SATURATION, tiny, 1.0)
        r[rest] = np.tanh(flat[rest])
    else:
        np.tanh(flat, out=r)
        if n:
            fill_known(flat, r, TANH_SATURATION, tiny, 1.0)
    r = r.reshape(t.shape)
    if out is not None:
        np.copyto(out, r)
        return out
    return r[()] if r.ndim == 0 else r


@functools.cache
def _tiny_region() -> float:
    """TANH_TINY where NumPy's tanh is not below the largest double under 2^-27 at +-2^-27 (see _tanh_np),
    else 0 (no tiny region)."""
    below = np.nextafter(TANH_TINY, 0.0)
    c = np.array([TANH_TINY, -TANH_TINY] * 1024)  # NumPy's loops, SIMD or not, as _tanh_np calls them
    v = np.tanh(c)
    return TANH_TINY if bool((v[0::2] >= below).all() and (v[1::2] <= -below).all()) else 0.0


_tanh_np.__wrapped__ = np.tanh


def _special():
    from opcert.expr import special  # lazy: numba's loops, as for tanh above

    return special


def _erf_np(x):
    return _special().erf(x)


def _erfc_np(x):
    return _special().erfc(x)


# ---- exact values at rational points -------------------------------------------------------


def _at_zero(value):
    def f(q: Fraction):
        return Fraction(value) if q == 0 else None

    return f


def _log_exact(q: Fraction):
    return Fraction(0) if q == 1 else None


_at_one_zero = _log_exact  # acos(1) = acosh(1) = 0: the other rational points give irrational values


def _sqrt_exact(q: Fraction):
    if q < 0:
        return None
    n, d = q.numerator, q.denominator
    rn, rd = math.isqrt(n), math.isqrt(d)
    return Fraction(rn, rd) if rn * rn == n and rd * rd == d else None


# ---- Taylor enclosures for tiny arguments (|t| <= 2^-10) ---------------------------------------
# Alternating series with decreasing terms are bracketed by consecutive partial
# sums; expm1's remainder for t >= 0 is at most e^t t^4/24 <= 2 t^4/24.


def _tanh_tiny(t: Fraction):
    if t < 0:
        lo, hi = _tanh_tiny(-t)
        return -hi, -lo
    t3 = t * t * t
    return t - t3 / 3, t - t3 / 3 + 2 * t3 * t * t / 15


def _expm1_tiny(t: Fraction):
    t2 = t * t
    three = t + t2 / 2 + t2 * t / 6
    four = t2 * t2 / 24
    return (three, three + 2 * four) if t >= 0 else (three, three + four)


def _exp_tiny(t: Fraction):
    lo, hi = _expm1_tiny(t)
    return lo + 1, hi + 1


def _odd_tiny(c3: Fraction, c5: Fraction):
    """An odd function t + c3 t^3 + ... for 0 < t <= 2^-10, bracketed by t + c3 t^3 and t + c3 t^3 + c5 t^5
    (c5 > 0: the series alternates after t^3 with decreasing terms, or its tail after t^3 is at most c5 t^5),
    and by oddness for t < 0."""

    def tiny(t: Fraction):
        if t < 0:
            lo, hi = tiny(-t)
            return -hi, -lo
        s = t + c3 * t * t * t
        return s, s + c5 * t**5

    return tiny


# sinh: t + t^3/6 + t^5/120 + ..., every term positive, the tail after t^3 at most (t^5/120) / (1 - t^2);
# asinh: t - t^3/6 + 3t^5/40 - ..., and atan: t - t^3/3 + t^5/5 - ...: alternating, decreasing;
# asin: t + t^3/6 + 3t^5/40 + ..., and atanh: t + t^3/3 + t^5/5 + ...: coefficients at most 1, the tail
# after t^3 at most t^5 / (1 - t^2) < 2 t^5
_sinh_tiny = _odd_tiny(Fraction(1, 6), Fraction(2, 120))
_asinh_tiny = _odd_tiny(Fraction(-1, 6), Fraction(3, 40))
_atan_tiny = _odd_tiny(Fraction(-1, 3), Fraction(1, 5))
_asin_tiny = _odd_tiny(Fraction(1, 6), Fraction(2))
_atanh_tiny = _odd_tiny(Fraction(1, 3), Fraction(2))
# sin: t - t^3/6 + t^5/120 - ...: alternating, decreasing; tan: t + t^3/3 + 2t^5/15 + ...: coefficients at most 1,
# the tail after t^3 at most t^5 / (1 - t^2) < 2 t^5
_sin_tiny = _odd_tiny(Fraction(-1, 6), Fraction(1, 120))
_tan_tiny = _odd_tiny(Fraction(1, 3), Fraction(2))


def _even_tiny(c2: Fraction, c4: Fraction):
    """An even function 1 + c2 t^2 + ... for |t| <= 2^-10, bracketed by 1 + c2 t^2 and 1 + c2 t^2 + c4 t^4 (c4 > 0:
    cos's alternating series, or a bound of cosh's tail after t^2)."""

    def tiny(t: Fraction):
        s = 1 + c2 * t * t
        return s, s + c4 * t**4

    return tiny


# cos: 1 - t^2/2 + t^4/24 - ...: alternating, decreasing; cosh: 1 + t^2/2 + t^4/24 + ..., the tail after t^2 at
# most (t^4/24) / (1 - t^2) < t^4/12
_cos_tiny = _even_tiny(Fraction(-1, 2), Fraction(1, 24))
_cosh_tiny = _even_tiny(Fraction(1, 2), Fraction(1, 12))


def _log1p_tiny(t: Fraction):
    # t - t^2/2 + t^3/3 - ...: alternating for t >= 0; for t < 0 every term is
    # negative and the tail after t^3/3 is at most t^4/(4 (1 - |t|)).
    t2 = t * t
    s = t - t2 / 2 + t2 * t / 3
    four = t2 * t2 / 4
    return (s - four, s) if t >= 0 else (s - four * Fraction(1024, 1023), s - four)


# ---- one-sided rules (numerics.one_sided): which side of a binary64 value f lies on, for a tiny argument ----


def _tanh_one_sided(arg, an):
    # below 2^-26, tanh(t) = t - t^3/3 + ..., t^3/3 <= |t| 2^-53; t - tanh(t) is in (0, t^3/3) for t > 0;
    # |t|^3/3 <= |t| t^2, never below the smallest double
    t, ok = an.tiny_exact(arg, 2.0**-26)
    gap = np.maximum(np.abs(t) * (t * t), 2.0**-1074)
    return t, np.where(t == 0, 0.0, gap), -np.sign(t), ok


# Below it e^t < 2^-1075: e^t is a positive value under the smallest double (a ball at any fixed precision cannot
# tell -1 + e^t from -1: DirectML's Selu at alpha 2.5 puts gamma alpha, a float32 midpoint, there for x < -745)
UNDER_SMALLEST = -746.0


def _expm1_one_sided(arg, an):
    # Selu at gamma = 3, alpha = 2: 6 expm1(x) for tiny x < 0 is 6x plus t^2/2, and 6x is a binary32
    # midpoint for a quarter of the inputs; below 2^-26, expm1(t) - t = t^2/2 + t^3/6 + ... is in (0, t^2).
    # Far below 0, expm1(t) = -1 + e^t, above -1 by less than 2^-1074
    t, ok = an.tiny_exact(arg, 2.0**-26)
    gap = np.maximum(t * t, 2.0**-1074)
    u, exact = an.tiny_exact(arg, np.inf)
    far = exact & (u < UNDER_SMALLEST)
    m = np.where(far, -1.0, t)
    return m, np.where(far, 2.0**-1074, np.where(t == 0, 0.0, gap)), np.where(far | (t != 0), 1.0, 0.0), ok | far


def _exp_one_sided(arg, an):
    # far below 0, e^t is a positive value under 2^-1074: 0 on the side above (Softplus's log1p(e^-t) for
    # large t: t + that, times alpha, on a midpoint)
    u, exact = an.tiny_exact(arg, np.inf)
    far = exact & (u < UNDER_SMALLEST)
    return np.float64(0.0), np.where(far, 2.0**-1074, 0.0), np.where(far, 1.0, 0.0), far


def _log1p_one_sided(arg, an):
    # log1p(v) for a positive v under 2^-1074 (exp_one_sided's): in (0, v)
    m, r, side, ok = an.one_sided(arg)
    tiny = ok & (m == 0) & (side > 0) & (r <= 2.0**-1074)
    return np.float64(0.0), np.where(tiny, r, 0.0), np.where(tiny, 1.0, 0.0), tiny


def _erfc_one_sided(arg, an):
    # erfc(u) = 1 - erf(u), and 0 < erf(u) < (2/sqrt(pi)) u for u > 0 (odd): below 1 for u > 0; decided
    # below 2^-30
    sb = an.sign_bound(arg)
    if sb is None:
        return np.float64(0.0), 0.0, 0.0, False
    su, bound = sb
    gap = np.where(su == 0, 0.0, 1.1284 * (1 + 2.0**-20) * bound)
    return np.float64(1.0), gap, -su, np.abs(bound) < 2.0**-30


# ---- ball radius rules (the record's ball_radius; numerics.ball_rules says what they return) --------------
# |f(a + d) - f(a)| <= max |f'| |d| over the ball, with the bound on |f'| rounded up; written with
# B.where, never `if` (expr.ball_ops), and with no call whose cost depends on the branch not taken.


def _exp_ball(m, ma, ra, contract, u):
    # e^(a + d) - e^a = e^a expm1(d), |expm1(d)| <= |d| (1 + |d|) for |d| <= 1; the three roundings of
    # the bound take at most (1 - u)^3, covered by 1 + 4u. Wider than 2^-20: the ends bound it (the
    # function is increasing), except a ball wholly below -745.2, where e^t < 2^-1075: every value of
    # the ball is within the contract's eta of the midpoint (Gelu's tanh form at |x| > 4000)
    big = ra > 2.0**-20
    under = B.both(big, ma + ra < -745.2)
    prop = B.fabs(m) * (1 + 4 * u) * (ra * (1.0 + ra) * (1 + 4 * u))
    return B.where(under, 0.0, prop), True, B.both(big, B.negated(under))


def _exp_moved(ft, t, w):
    # e^y - e^t = e^t expm1(y - t) and |expm1(y - t)| <= expm1(w) for |y - t| <= w (e^t - e^(t - w) =
    # e^(t - w) expm1(w)); where expm1(w) overflows, e^(t + w), above both e^y and e^t, bounds it
    g = B.expm1(w)
    return B.where(B.isfinite(g), ft * g, B.exp(t + w))


def _expm1_ball(m, ma, ra, contract, u):
    # expm1(a + d) - expm1(a) = e^a expm1(d), e^a = 1 + expm1(a): as exp's
    big = ra > 2.0**-20
    under = B.both(big, ma + ra < -745.2)
    prop = B.fabs(1 + m) * (1 + 4 * u) * (ra * (1.0 + ra) * (1 + 4 * u))
    return B.where(under, 0.0, prop), True, B.both(big, B.negated(under))


def _tanh_ball(m, ma, ra, contract, u):
    # tanh' = sech^2 <= 4 e^(-2t), t the ball's least |value|: saturated arguments carry almost none of
    # their radius. Below t = 0.69 the factor is 1 (4.04 e^-1.38 = 1.016): the radius as it is; and not
    # below 2^-960 (prop times a factor >= 2^-52 would be subnormal, where every operation takes a
    # microcode assist; the factor is at most 1, so the radius without it bounds too).
    # e^-2t = e^-2|a| e^2ra, e^-2|a| = (1 - tanh|a|) / (1 + tanh|a|) <= (1 - |m| + c) / (1 + |m| - c)
    # with c the contract; e^2ra <= 1 + 4 ra for ra < 0.25. No exp call; 1 - |m| is exact (|m| >= 0.59
    # here) and the few roundings after it (relative 6u) are far inside the slack of 4.04 over 4.
    # A wider ball: the ends bound it
    t = B.nmax(B.fabs(ma) - ra, 0.0)
    damped = B.both(B.negated(t < 0.69), ra > 2.0**-960)
    narrow = ra < 0.25
    e2t = (1.0 - B.fabs(m) + contract) / (1.0 + B.fabs(m) - contract) * (1.0 + 4.0 * ra)
    return B.where(B.both(damped, narrow), ra * B.nmin(1.0, 4.04 * e2t), ra), True, B.both(damped, B.negated(narrow))


def _erf_ball(m, ma, ra, contract, u):
    # |erf'| = |erfc'| = (2/sqrt(pi)) e^(-t^2) <= 1.1285 e^(-t^2) on the ball, t its least |argument|.
    # e^(-t^2) is bounded by a power of two at most twice it (B.exp_neg_above: no exp call, which kept LLVM
    # from vectorising Gelu's kernel: bench/README.md, 'Figures behind choices in the code'); a rounding up
    # of t^2 takes it down by less than the bound's own margin (its exponent is below t^2 log2(e) by 2^-51
    # relative, at least). The argument is clamped where e^(-t^2) would underflow: in
    # binary64 at t = 26, above which e^-676 < 2^-975 bounds it; in long double (u = 2^-64), whose exp is
    # normal down to e^-11355, at t = 105 (e^-11025, about 2^-15906). In binary64 that bound stood for
    # every t >= 26, and Gelu's value below x = -38 (under 2^-1075) had a radius near 2^-1030 in long
    # double too: never decided, every such input took the exact path. Above t = 110 the spread of erf or
    # erfc over the ball is at most erfc(110) < e^-12100 < 2^-17456 whatever ra is, under either bound
    # without ra: a huge argument's huge radius (x / sqrt(2) at x = 1e297 in Gelu) makes no wide ball
    t = B.nmax(B.fabs(ma) - ra, 0.0)
    wide = u < 2.0**-60
    top = B.where(wide, 105.0, 26.0)
    tt = B.nmin(t, top)
    d = B.exp_neg_above(tt * tt)
    far = B.where(wide, d, 2.0**-975)
    return 1.1285 * B.where(t < top, d * ra, B.where(t < 110.0, far * ra, far)), True, False


def _log1p_ball(m, ma, ra, contract, u):
    den = 1 + ma - ra  # log1p' = 1 / (1 + t) <= 1 / den on the ball, where den > 0
    return ra / den, den > 0, False


def _log_ball(m, ma, ra, contract, u):
    den = ma - ra
    return ra / den, den > 0, False


def _sqrt_ball(m, ma, ra, contract, u):
    den = ma - ra  # sqrt' = 1 / (2 sqrt(t)) <= 1 / (2 sqrt(den)), where den > 0
    return ra / (2 * B.sqrt(B.nmax(den, 0.0))), den > 0, False


def _sinh_ball(m, ma, ra, contract, u):
    # sinh' = cosh, and cosh(|a| + r) <= cosh(a) e^r <= (|sinh a| + 1) (1 + 2r) for r <= 1, |sinh a| <= |m| +
    # contract; the roundings of the bound are inside the (1 + 4u). Wider than 2^-20: the ends bound it
    big = ra > 2.0**-20
    return (B.fabs(m) + contract + 1.0) * (1.0 + 2.0 * ra) * ra * (1 + 4 * u), True, big


def _asinh_ball(m, ma, ra, contract, u):
    # asinh' = 1 / sqrt(1 + t^2) <= min(1, 1 / |t|): 1 / (|a| - r) on a ball away from 0
    den = B.fabs(ma) - ra
    return B.where(den > 1.0, ra / den, ra), True, False


def _atan_ball(m, ma, ra, contract, u):
    # atan' = 1 / (1 + t^2) <= 1 / (1 + t0^2), t0 the ball's least |t|
    t = B.nmax(B.fabs(ma) - ra, 0.0)
    return ra / (1.0 + t * t), True, False


def _asin_ball(m, ma, ra, contract, u):
    # |asin'| = |acos'| = 1 / sqrt((1 - t)(1 + t)), largest at the ball's greatest |t|, s < 1 (the
    # pole of the derivative at +-1 is outside the ball); a point ball needs no bound
    s = B.fabs(ma) + ra
    inside = s < 1.0
    w = B.where(inside, (1.0 - s) * (1.0 + s), 1.0)
    return ra / B.sqrt(w) * (1 + 8 * u), B.either(inside, ra == 0), False


def _atanh_ball(m, ma, ra, contract, u):
    # atanh' = 1 / ((1 - t)(1 + t)), as asin's with the square
    s = B.fabs(ma) + ra
    inside = s < 1.0
    w = B.where(inside, (1.0 - s) * (1.0 + s), 1.0)
    return ra / w * (1 + 8 * u), B.either(inside, ra == 0), False


def _acosh_ball(m, ma, ra, contract, u):
    # acosh' = 1 / sqrt((t - 1)(t + 1)), largest at the ball's least t = a - r > 1
    lo = ma - ra
    inside = lo > 1.0
    w = B.where(inside, (lo - 1.0) * (lo + 1.0), 1.0)
    return ra / B.sqrt(w) * (1 + 8 * u), B.either(inside, ra == 0), False


def _floor_exact(q: Fraction):
    return Fraction(math.floor(q))


def _floor_ball(m, ma, ra, contract, u):
    # floor is constant on [n, n + 1): a ball inside one such piece has the one value n (m, exact), a ball
    # across an integer is not decided. ma - n and n + 1 - ma are each within a relative u of their values
    # (exact from ma >= 1 on), so a margin of 8u keeps the real ball inside; a point ball (ra = 0) always is
    n = B.floor(ma)
    inside = B.both((ma - n) > ra * (1 + 8 * u), ((n + 1.0) - ma) > ra * (1 + 8 * u))
    return 0.0 * ra, B.either(inside, ra == 0), False


def _sin_ball(m, ma, ra, contract, u):
    # |sin'| = |cos'| <= 1: the radius as it is (the contract's range [-1, 1] bounds the rest)
    return B.nmin(ra, 2.0), True, False


def _tan_ball(m, ma, ra, contract, u):
    # tan(a + d) - tan(a) = sin(d) / (cos(a + d) cos(a)), |cos(a)| = 1 / sqrt(1 + tan^2 a) >= c with
    # c = 1 / sqrt(1 + T^2), T = |m| + contract >= |tan a|; |cos(a + d)| >= c - |d|. ok where c > r (no pole in
    # the ball); the roundings of c and of the bound are inside the (1 + 8u)
    T = B.fabs(m) + contract
    c = 1.0 / B.sqrt(1.0 + T * T) * (1 - 4 * u)
    inside = c > ra
    den = B.where(inside, (c - ra) * c, 1.0)
    return ra / den * (1 + 8 * u), B.either(inside, ra == 0), False


def _cosh_ball(m, ma, ra, contract, u):
    # on t >= 0: cosh' = sinh <= cosh, and cosh(a + r) <= cosh(a) e^r <= (m + contract) (1 + 2r) for r <= 1; the
    # roundings of the bound are inside the (1 + 4u). Wider than 2^-20: the ends bound it (increasing on t >= 0)
    big = ra > 2.0**-20
    return (B.fabs(m) + contract) * (1.0 + 2.0 * ra) * ra * (1 + 4 * u), True, big


# ---- prover facts (spec level: strict theorems over the reals) ---------------------------------


def _ax_exp(m, t, ft):
    import z3

    return [
        ft > 0,
        ft >= 1 + t,
        z3.Implies(t == 0, ft == 1),
        # e^t (1 - t) <= 1 for t < 1 (from e^-t >= 1 - t)
        z3.Implies(t < 1, ft * (1 - t) <= 1),
        z3.Implies(t >= 0, ft >= 1 + t + t * t / 2),
        # e^t (1 - t + t^2/2) <= 1 for t <= 0 (from e^-t >= 1 - t + t^2/2)
        z3.Implies(t <= 0, ft * (1 - t + t * t / 2) <= 1),
    ]


def _ax_expm1(m, t, ft):
    import z3

    return [
        ft > -1,
        ft >= t,
        z3.Implies(t == 0, ft == 0),
        z3.Implies(t > 0, ft > 0),
        z3.Implies(t < 0, ft < 0),
        z3.Implies(t < 1, (ft + 1) * (1 - t) <= 1),
    ]


def _ax_tanh(m, t, ft):
    import z3

    return [
        ft > -1,
        ft < 1,
        z3.Implies(t == 0, ft == 0),
        z3.Implies(t > 0, ft > 0),
        z3.Implies(t < 0, ft < 0),
        z3.Implies(t >= 0, ft <= t),
        z3.Implies(t <= 0, ft >= t),
        # 1 + tanh(t) = 2/(1 + e^-2t) <= 1/(1 - t) for t <= 0 (from e^-2t >= 1 - 2t)
        z3.Implies(t <= 0, (1 + ft) * (1 - t) <= 1),
        z3.Implies(t >= 0, (1 - ft) * (1 + t) <= 1),
    ]


def _ax_log1p(m, t, ft):
    import z3

    return [
        z3.Implies(t > -1, ft <= t),
        z3.Implies(t > -1, ft * (1 + t) >= t),
        z3.Implies(t == 0, ft == 0),
        z3.Implies(t > 0, ft > 0),
        z3.Implies(z3.And(t > -1, t < 0), ft < 0),
    ]


def _ax_log(m, t, ft):
    import z3

    return [
        z3.Implies(t > 0, ft <= t - 1),
        z3.Implies(t > 0, ft * t >= t - 1),
        z3.Implies(t == 1, ft == 0),
        z3.Implies(t > 1, ft > 0),
        z3.Implies(z3.And(t > 0, t < 1), ft < 0),
    ]


def _ax_erf(m, t, ft):
    import z3

    out = [
        ft > -1,
        ft < 1,
        z3.Implies(t == 0, ft == 0),
        z3.Implies(t > 0, ft > 0),
        z3.Implies(t < 0, ft < 0),
        # |erf(t)| <= (2/sqrt(pi)) |t| < 1.13 |t|
        z3.Implies(t >= 0, ft * 100 <= 113 * t),
        z3.Implies(t <= 0, ft * 100 >= 113 * t),
    ]
    if m is not None:  # 1 + erf(t) = erfc(-t) <= e^(-t^2) for t <= 0 (the Chernoff bound)
        out.append(z3.Implies(t <= 0, 1 + ft <= m.apply("exp", -(t * t))))
    return out


def _ax_erfc(m, t, ft):
    import z3

    out = [ft > 0, ft < 2, z3.Implies(t == 0, ft == 1), z3.Implies(t > 0, ft < 1), z3.Implies(t < 0, ft > 1)]
    if m is not None:
        out.append(z3.Implies(t >= 0, ft <= m.apply("exp", -(t * t))))
    return out


def _ax_sqrt(m, t, ft):
    import z3

    return [z3.Implies(t >= 0, ft >= 0), z3.Implies(t >= 0, ft * ft == t)]


def _odd_sign(t, ft):
    import z3

    return [z3.Implies(t == 0, ft == 0), z3.Implies(t > 0, ft > 0), z3.Implies(t < 0, ft < 0)]


# Decimals just above pi/2 and pi (by less than 10^-17), each rounding as pi/2 and pi do in every format up to
# binary64 (tests/test_math_catalog.py checks it): the provers' rational bounds of the inverse trigonometric
# ranges, and the catalog's range properties (a range property needs a rational bound)
HALF_PI_ABOVE = Fraction("1.57079632679489662")
PI_ABOVE = Fraction("3.14159265358979324")


def _q(v: Fraction):
    import z3

    return z3.Q(v.numerator, v.denominator)


def _ax_sinh(m, t, ft):
    import z3

    # sinh t >= t for t >= 0 (the series' terms are positive), and odd
    return [*_odd_sign(t, ft), z3.Implies(t >= 0, ft >= t), z3.Implies(t <= 0, ft <= t)]


def _ax_asinh(m, t, ft):
    import z3

    # asinh t <= t for t >= 0 (asinh' = 1 / sqrt(1 + t^2) <= 1), and odd
    return [*_odd_sign(t, ft), z3.Implies(t >= 0, ft <= t), z3.Implies(t <= 0, ft >= t)]


def _ax_atan(m, t, ft):
    import z3

    return [
        ft > -_q(HALF_PI_ABOVE),
        ft < _q(HALF_PI_ABOVE),
        *_odd_sign(t, ft),
        z3.Implies(t >= 0, ft <= t),
        z3.Implies(t <= 0, ft >= t),
    ]


def _ax_asin(m, t, ft):
    import z3

    inside = z3.And(t >= -1, t <= 1)
    # asin t >= t on [0, 1] (asin' = 1 / sqrt(1 - t^2) >= 1), and odd
    return [
        z3.Implies(inside, z3.And(ft >= -_q(HALF_PI_ABOVE), ft <= _q(HALF_PI_ABOVE))),
        *(z3.Implies(inside, a) for a in _odd_sign(t, ft)),
        z3.Implies(z3.And(t >= 0, t <= 1), ft >= t),
        z3.Implies(z3.And(t >= -1, t <= 0), ft <= t),
    ]


def _ax_acos(m, t, ft):
    import z3

    inside = z3.And(t >= -1, t <= 1)
    # acos(t) = pi/2 - asin(t): in [0, pi], 0 only at 1
    return [
        z3.Implies(inside, z3.And(ft >= 0, ft <= _q(PI_ABOVE))),
        z3.Implies(t == 1, ft == 0),
        z3.Implies(z3.And(t >= -1, t < 1), ft > 0),
    ]


def _ax_atanh(m, t, ft):
    import z3

    inside = z3.And(t > -1, t < 1)
    # atanh t >= t on [0, 1) (atanh' = 1 / (1 - t^2) >= 1), and odd
    return [
        *(z3.Implies(inside, a) for a in _odd_sign(t, ft)),
        z3.Implies(z3.And(t >= 0, t < 1), ft >= t),
        z3.Implies(z3.And(t > -1, t <= 0), ft <= t),
    ]


def _ax_acosh(m, t, ft):
    import z3

    return [z3.Implies(t >= 1, ft >= 0), z3.Implies(t == 1, ft == 0), z3.Implies(t > 1, ft > 0)]


# 3 < pi and 1.57 < pi/2: sin t > 0 on (0, 3], cos t > 0 on [-1.57, 1.57], tan t >= t on [0, 1.57]
def _ax_sin(m, t, ft):
    import z3

    return [
        ft >= -1,
        ft <= 1,
        z3.Implies(t == 0, ft == 0),
        z3.Implies(z3.And(t > 0, t <= 3), z3.And(ft > 0, ft <= t)),
        z3.Implies(z3.And(t < 0, t >= -3), z3.And(ft < 0, ft >= t)),
    ]


def _ax_cos(m, t, ft):
    import z3

    return [
        ft >= -1,
        ft <= 1,
        z3.Implies(t == 0, ft == 1),
        z3.Implies(z3.And(t >= -_q(Fraction(157, 100)), t <= _q(Fraction(157, 100))), ft > 0),
    ]


def _ax_tan(m, t, ft):
    import z3

    return [
        z3.Implies(t == 0, ft == 0),
        z3.Implies(z3.And(t > 0, t <= _q(Fraction(157, 100))), ft >= t),
        z3.Implies(z3.And(t < 0, t >= -_q(Fraction(157, 100))), ft <= t),
    ]


def _ax_cosh(m, t, ft):
    import z3

    # on t >= 0 (the operators take cosh(|t|)): cosh t >= 1, equal at 0 only
    return [z3.Implies(t >= 0, ft >= 1), z3.Implies(t == 0, ft == 1), z3.Implies(t > 0, ft > 1)]


def _ax_floor(m, t, ft):
    import z3

    return [ft == z3.ToReal(z3.ToInt(t))]  # z3's ToInt is the floor: the definition itself


def _ieee_floor(rm, a):
    import z3

    return z3.fpRoundToIntegral(z3.RTN(), a)  # exact: rm plays no part


def _ieee_sqrt(rm, a):
    import z3

    return z3.fpSqrt(rm, a)


def _arb(name):
    return lambda a: getattr(a, name)()


def _erfc_arb(a):
    """Arb's erfc, and where it only bounds a tiny value by a ball around 0 (erfc(2.5e6)
    is about 10^-2.7e12), the bracket of Abramowitz & Stegun 7.1.13 for t >= 0:
    2/sqrt(pi) e^-t^2 / (t + sqrt(t^2 + 2)) < erfc(t) <= 2/sqrt(pi) e^-t^2 / (t + sqrt(t^2 + 4/pi))."""
    v = a.erfc()
    if v > 0 or not a > 0:
        return v
    k = 2 / arb.pi().sqrt()
    hi_t, lo_t = arb(a.upper()), arb(a.lower())  # erfc is decreasing
    low = k * (-hi_t * hi_t).exp() / (hi_t + (hi_t * hi_t + 2).sqrt())
    high = k * (-lo_t * lo_t).exp() / (lo_t + (lo_t * lo_t + 4 / arb.pi()).sqrt())
    return low.union(high)


# Relations between two primitives applied to the same argument: used by every
# prover, and checked numerically by tests/test_contracts.py.
LINKS = {
    # (f, g): relation(t1, f(t1), t2, g(t2)), a theorem for every t1, t2
    ("expm1", "exp"): lambda t1, f, t2, g: _implies(t1 == t2, f == g - 1),
    ("erfc", "erf"): lambda t1, f, t2, g: _implies(t1 == t2, f == 1 - g),
    ("exp", "exp"): lambda t1, f, t2, g: _implies(t1 == -t2, f * g == 1),
    ("log1p", "log"): lambda t1, f, t2, g: _implies(t2 == 1 + t1, f == g),
    ("erfc", "erf "): None,
}
LINKS = {k: v for k, v in LINKS.items() if v is not None}


def _implies(a, b):
    import z3

    return z3.Implies(a, b)


def filled_beyond(
    f, lo: float, hi: float, below: float, above: float, near_zero: float = 0.0, at_zero: float | None = None
):
    """f over binary64 arrays, without the call where a whole block lies below lo (every value is `below`)
    or above hi (every value is `above`; exp's, which opcert's implementation takes, are np.exp's own bits:
    tests/test_ball_compiled.py): the functions' slow paths are there (NumPy's exp
    and glibc's vector exp at -800: bench/README.md, 'Figures behind choices in the code'), and the float32
    sweep's blocks have one sign and span a few binades, so whole blocks are there: about half of the
    inputs of Sigmoid, Swish, Softplus, Mish, Elu and of Gelu's tanh form. With near_zero: a block wholly
    inside (-near_zero, near_zero) is t itself (at_zero None: f(t) rounds to t there) or the constant
    at_zero. A NaN fails every test; a small array or another type goes to f as it is."""

    def blockwise(t, out=None):
        if isinstance(t, np.ndarray) and t.dtype == np.float64 and t.size >= 1024:
            tmin, tmax = t.min(), t.max()
            if tmax < lo or tmin > hi:
                r = np.empty_like(t) if out is None else out
                r.fill(below if tmax < lo else above)
                return r
            if -near_zero < tmin and tmax < near_zero:
                r = np.empty_like(t) if out is None else out
                if at_zero is None:
                    np.copyto(r, t)
                else:
                    r.fill(at_zero)
                return r
        return f(t) if out is None else f(t, out=out)

    blockwise.__wrapped__ = f
    return blockwise


# exp below -745.2 rounds to +0 (e^-745.2 < 2^-1075, half the smallest subnormal), above 709.79 to +inf
EXP_SATURATION = (-745.2, 709.79, 0.0, math.inf)
exp_blockwise = filled_beyond(np.exp, *EXP_SATURATION)  # the exp primitive's NumPy function


REGISTRY: dict[str, Primitive] = {
    p.name: p
    for p in (
        Primitive(
            name="exp",
            doc="e^t",
            numpy=exp_blockwise,
            arb=_arb("exp"),
            exact=_at_zero(1),
            domain=(None, False, None, False),
            increasing=True,
            odd=False,
            bounds=(0, None),
            contract=(
                "exp(t) >= 0",
                "exp(0) = 1",
                "exp is non-decreasing",
                "exp(-inf) = 0, exp(+inf) = +inf",
                "exp(NaN) is NaN",
            ),
            ulps=1.0,
            tiny=_exp_tiny,
            spec_axioms=_ax_exp,
            sign="positive",
            at_inf=(0.0, None),
            libm="math.exp",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_exp_ball,
            moved=_exp_moved,
            grows=True,
            one_sided=_exp_one_sided,
        ),
        Primitive(
            name="expm1",
            doc="e^t - 1",
            numpy=np.expm1,
            arb=_arb("expm1"),
            exact=_at_zero(0),
            domain=(None, False, None, False),
            increasing=True,
            odd=False,
            bounds=(-1, None),
            contract=(
                "expm1(t) >= -1",
                "expm1(+-0) = +-0, and expm1(t) has the sign of t",
                "expm1 is non-decreasing",
                "expm1(-inf) = -1",
                "expm1(NaN) is NaN",
            ),
            ulps=1.0,
            tiny=_expm1_tiny,
            spec_axioms=_ax_expm1,
            sign="of_argument",
            at_inf=(-1.0, None),
            libm="math.expm1",
            vector=True,
            long_double_ulps=8.0,
            one_sided=_expm1_one_sided,
            ball_radius=_expm1_ball,
            grows=True,
        ),
        Primitive(
            name="tanh",
            doc="hyperbolic tangent",
            numpy=_tanh_np,
            arb=_arb("tanh"),
            exact=_at_zero(0),
            domain=(None, False, None, False),
            increasing=True,
            odd=True,
            bounds=(-1, 1),
            contract=(
                "-1 <= tanh(t) <= 1",
                "tanh(+-0) = +-0, and tanh(t) has the sign of t",
                "tanh is non-decreasing",
                "tanh is odd",
                "tanh(+-inf) = +-1",
                "tanh(NaN) is NaN",
            ),
            ulps=2.0,
            tiny=_tanh_tiny,
            spec_axioms=_ax_tanh,
            sign="of_argument",
            at_inf=(-1.0, 1.0),
            libm="math.tanh",
            vector=True,
            long_double_ulps=8.0,
            one_sided=_tanh_one_sided,
            ball_radius=_tanh_ball,
        ),
        Primitive(
            name="log1p",
            doc="ln(1 + t), t > -1",
            one_sided=_log1p_one_sided,
            numpy=np.log1p,
            arb=_arb("log1p"),
            exact=_at_zero(0),
            domain=(-1, True, None, False),
            increasing=True,
            odd=False,
            bounds=(None, None),
            contract=(
                "log1p(t) is NaN for t < -1 and -inf at -1",
                "log1p(+-0) = +-0, and log1p(t) has the sign of t",
                "log1p is non-decreasing",
                "log1p(+inf) = +inf",
                "log1p(NaN) is NaN",
            ),
            ulps=1.0,
            tiny=_log1p_tiny,
            spec_axioms=_ax_log1p,
            sign="of_argument",
            libm="math.log1p",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_log1p_ball,
        ),
        Primitive(
            name="log",
            doc="natural logarithm, t > 0",
            numpy=np.log,
            arb=_arb("log"),
            exact=_log_exact,
            domain=(0, True, None, False),
            increasing=True,
            odd=False,
            bounds=(None, None),
            contract=(
                "log(t) is NaN for t < 0 and -inf at +-0",
                "log(1) = 0",
                "log is non-decreasing",
                "log(+inf) = +inf",
                "log(NaN) is NaN",
            ),
            ulps=1.0,
            spec_axioms=_ax_log,
            libm="math.log",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_log_ball,
        ),
        Primitive(
            name="erf",
            doc="error function",
            numpy=_erf_np,
            arb=_arb("erf"),
            exact=_at_zero(0),
            domain=(None, False, None, False),
            increasing=True,
            odd=True,
            bounds=(-1, 1),
            contract=(
                "-1 <= erf(t) <= 1",
                "erf(+-0) = +-0, and erf(t) has the sign of t",
                "erf is non-decreasing",
                "erf is odd",
                "erf(+-inf) = +-1",
                "erf(NaN) is NaN",
            ),
            ulps=1.0,
            spec_axioms=_ax_erf,
            sign="of_argument",
            at_inf=(-1.0, 1.0),
            libm="math.erf",
            # long double: glibc's erfl, 0.86 ULP at worst on 30,000 arguments against Arb (2026-11-27)
            long_double_ulps=2.0,
            ball_radius=_erf_ball,
            saturates=(-6.0, 6.0),
        ),  # beyond +-6: within 2.2e-17 of +-1, which is its binary64 rounding
        Primitive(
            name="erfc",
            doc="complementary error function, 1 - erf(t)",
            numpy=_erfc_np,
            arb=_erfc_arb,
            exact=_at_zero(1),
            domain=(None, False, None, False),
            increasing=False,
            odd=False,
            bounds=(0, 2),
            contract=(
                "0 <= erfc(t) <= 2",
                "erfc(+-0) = 1",
                "erfc is non-increasing",
                "erfc(-inf) = 2, erfc(+inf) = 0",
                "erfc(NaN) is NaN",
            ),
            ulps=5.0,
            spec_axioms=_ax_erfc,
            sign="positive",
            at_inf=(2.0, 0.0),
            libm="math.erfc",
            # long double: glibc's erfcl, 1.96 ULP at worst on 30,000 arguments against Arb (2026-11-27)
            long_double_ulps=8.0,
            one_sided=_erfc_one_sided,
            ball_radius=_erf_ball,
            saturates=(-6.0, 27.3),
        ),  # above 27.3: below 2^-1080; below -6: within 2.2e-17 of 2
        Primitive(
            name="sqrt",
            doc="square root, t >= 0",
            numpy=np.sqrt,
            arb=_arb("sqrt"),
            exact=_sqrt_exact,
            domain=(0, False, None, False),
            increasing=True,
            odd=False,
            bounds=(0, None),
            contract=("sqrt is IEEE 754's correctly rounded square root",),
            ulps=0.5,
            spec_axioms=_ax_sqrt,
            sign="positive_where_argument_positive",
            libm="math.sqrt",
            vector=True,
            long_double_ulps=0.5,
            ieee=_ieee_sqrt,
            ball_radius=_sqrt_ball,
        ),
        Primitive(
            name="sinh",
            doc="hyperbolic sine",
            numpy=np.sinh,
            arb=_arb("sinh"),
            exact=_at_zero(0),
            domain=(None, False, None, False),
            increasing=True,
            odd=True,
            bounds=(None, None),
            contract=(
                "sinh(+-0) = +-0, and sinh(t) has the sign of t",
                "sinh is non-decreasing",
                "sinh is odd",
                "sinh(+-inf) = +-inf",
                "sinh(NaN) is NaN",
            ),
            ulps=4.0,
            tiny=_sinh_tiny,
            spec_axioms=_ax_sinh,
            sign="of_argument",
            libm="math.sinh",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_sinh_ball,
            grows=True,
        ),
        Primitive(
            name="asinh",
            doc="inverse hyperbolic sine",
            numpy=np.arcsinh,
            arb=_arb("asinh"),
            exact=_at_zero(0),
            domain=(None, False, None, False),
            increasing=True,
            odd=True,
            bounds=(None, None),
            contract=(
                "asinh(+-0) = +-0, and asinh(t) has the sign of t",
                "asinh is non-decreasing",
                "asinh is odd",
                "asinh(+-inf) = +-inf",
                "asinh(NaN) is NaN",
            ),
            ulps=4.0,
            tiny=_asinh_tiny,
            spec_axioms=_ax_asinh,
            sign="of_argument",
            libm="math.asinh",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_asinh_ball,
        ),
        Primitive(
            name="atan",
            doc="inverse tangent, in (-pi/2, pi/2)",
            numpy=np.arctan,
            arb=_arb("atan"),
            exact=_at_zero(0),
            domain=(None, False, None, False),
            increasing=True,
            odd=True,
            bounds=(-math.pi / 2, math.pi / 2),
            contract=(
                "-pi/2 <= atan(t) <= pi/2, pi/2 rounded to binary64",
                "atan(+-0) = +-0, and atan(t) has the sign of t",
                "atan is non-decreasing",
                "atan is odd",
                "atan(+-inf) = +-pi/2, rounded",
                "atan(NaN) is NaN",
            ),
            ulps=4.0,
            tiny=_atan_tiny,
            spec_axioms=_ax_atan,
            sign="of_argument",
            at_inf=(-math.pi / 2, math.pi / 2),
            libm="math.atan",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_atan_ball,
        ),
        Primitive(
            name="asin",
            doc="inverse sine, -1 <= t <= 1",
            numpy=np.arcsin,
            arb=_arb("asin"),
            exact=_at_zero(0),
            domain=(-1, False, 1, False),
            increasing=True,
            odd=True,
            bounds=(-math.pi / 2, math.pi / 2),
            contract=(
                "asin(t) is NaN for |t| > 1",
                "-pi/2 <= asin(t) <= pi/2, pi/2 rounded to binary64",
                "asin(+-0) = +-0, and asin(t) has the sign of t",
                "asin is non-decreasing",
                "asin is odd",
                "asin(NaN) is NaN",
            ),
            ulps=4.0,
            tiny=_asin_tiny,
            spec_axioms=_ax_asin,
            sign="of_argument",
            at_inf=(math.nan, math.nan),
            libm="math.asin",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_asin_ball,
        ),
        Primitive(
            name="acos",
            doc="inverse cosine, -1 <= t <= 1, in [0, pi]",
            numpy=np.arccos,
            arb=_arb("acos"),
            exact=_at_one_zero,
            domain=(-1, False, 1, False),
            increasing=False,
            odd=False,
            bounds=(0, math.pi),
            contract=(
                "acos(t) is NaN for |t| > 1",
                "0 <= acos(t) <= pi, rounded to binary64",
                "acos(1) = 0",
                "acos is non-increasing",
                "acos(NaN) is NaN",
            ),
            ulps=4.0,
            spec_axioms=_ax_acos,
            at_inf=(math.nan, math.nan),
            libm="math.acos",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_asin_ball,
        ),
        Primitive(
            name="atanh",
            doc="inverse hyperbolic tangent, -1 < t < 1",
            numpy=np.arctanh,
            arb=_arb("atanh"),
            exact=_at_zero(0),
            domain=(-1, True, 1, True),
            increasing=True,
            odd=True,
            bounds=(None, None),
            contract=(
                "atanh(t) is NaN for |t| > 1 and +-inf at +-1",
                "atanh(+-0) = +-0, and atanh(t) has the sign of t",
                "atanh is non-decreasing",
                "atanh is odd",
                "atanh(NaN) is NaN",
            ),
            ulps=4.0,
            tiny=_atanh_tiny,
            spec_axioms=_ax_atanh,
            sign="of_argument",
            at_inf=(math.nan, math.nan),
            libm="math.atanh",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_atanh_ball,
        ),
        Primitive(
            name="acosh",
            doc="inverse hyperbolic cosine, t >= 1",
            numpy=np.arccosh,
            arb=_arb("acosh"),
            exact=_at_one_zero,
            domain=(1, False, None, False),
            increasing=True,
            odd=False,
            bounds=(0, None),
            contract=(
                "acosh(t) is NaN for t < 1",
                "acosh(t) >= 0",
                "acosh(1) = 0",
                "acosh is non-decreasing",
                "acosh(+inf) = +inf",
                "acosh(NaN) is NaN",
            ),
            ulps=4.0,
            spec_axioms=_ax_acosh,
            at_inf=(math.nan, None),
            libm="math.acosh",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_acosh_ball,
        ),
        Primitive(
            name="sin",
            doc="sine",
            numpy=np.sin,
            arb=_arb("sin"),
            exact=_at_zero(0),
            domain=(None, False, None, False),
            increasing=None,
            odd=True,
            bounds=(-1.0, 1.0),
            contract=(
                "-1 <= sin(t) <= 1",
                "sin(+-0) = +-0",
                "sin is odd",
                "sin is non-decreasing on [-1.5707963, 1.5707963]",
                "sin(+-inf) is NaN",
                "sin(NaN) is NaN",
            ),
            pieces=((-HALF_PI_INSIDE, HALF_PI_INSIDE, 1),),
            ulps=4.0,
            tiny=_sin_tiny,
            spec_axioms=_ax_sin,
            at_inf=(math.nan, math.nan),
            libm="math.sin",
            vector=False,  # NumPy's binary64 sin and cos are the C library's, one value at a time
            long_double_ulps=8.0,
            ball_radius=_sin_ball,
        ),
        Primitive(
            name="cos",
            doc="cosine",
            numpy=np.cos,
            arb=_arb("cos"),
            exact=_at_zero(1),
            domain=(None, False, None, False),
            increasing=None,
            odd=False,
            even=True,
            bounds=(-1.0, 1.0),
            contract=(
                "-1 <= cos(t) <= 1",
                "cos(+-0) = 1",
                "cos is even",
                "cos is non-decreasing on [-3.1415926, 0] and non-increasing on [0, 3.1415926]",
                "cos(+-inf) is NaN",
                "cos(NaN) is NaN",
            ),
            pieces=((-PI_INSIDE, Fraction(0), 1), (Fraction(0), PI_INSIDE, -1)),
            ulps=4.0,
            tiny=_cos_tiny,
            spec_axioms=_ax_cos,
            at_inf=(math.nan, math.nan),
            libm="math.cos",
            vector=False,  # NumPy's binary64 sin and cos are the C library's, one value at a time
            long_double_ulps=8.0,
            ball_radius=_sin_ball,
        ),
        Primitive(
            name="tan",
            doc="tangent (its poles, odd multiples of pi/2, are irrational: no binary64 argument meets one)",
            numpy=np.tan,
            arb=_arb("tan"),
            exact=_at_zero(0),
            domain=(None, False, None, False),
            increasing=None,
            odd=True,
            bounds=(None, None),
            contract=(
                "tan(+-0) = +-0",
                "tan is odd",
                "tan is non-decreasing on [-1.5707963, 1.5707963]",
                "tan(+-inf) is NaN",
                "tan(NaN) is NaN",
            ),
            pieces=((-HALF_PI_INSIDE, HALF_PI_INSIDE, 1),),
            ulps=4.0,
            tiny=_tan_tiny,
            spec_axioms=_ax_tan,
            at_inf=(math.nan, math.nan),
            libm="math.tan",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_tan_ball,
        ),
        Primitive(
            name="cosh",
            # the operators write cosh(|t|), so that every primitive is monotone on its domain: the provers'
            # facts (monotone between two applications, the ends bounding an interval) hold for every record
            doc="hyperbolic cosine on t >= 0 (Cosh is cosh(|x|))",
            numpy=np.cosh,
            arb=_arb("cosh"),
            exact=_at_zero(1),
            domain=(0, False, None, False),
            increasing=True,
            odd=False,
            bounds=(1.0, None),
            contract=(
                "cosh(t) >= 1",
                "cosh(0) = 1",
                "cosh is non-decreasing on t >= 0",
                "cosh(+inf) = +inf",
                "cosh(NaN) is NaN",
            ),
            ulps=4.0,
            tiny=_cosh_tiny,
            spec_axioms=_ax_cosh,
            sign="positive",
            at_inf=(math.nan, None),
            libm="math.cosh",
            vector=True,
            long_double_ulps=8.0,
            ball_radius=_cosh_ball,
            grows=True,
        ),
        Primitive(
            name="floor",
            # the rounding operators are written with it (Ceil: -floor(-t); Round: floor(t + 1/2) with the ties
            # to even): one exact, non-decreasing primitive, constant on each [n, n + 1)
            doc="the greatest integer at most t",
            numpy=np.floor,
            arb=_arb("floor"),
            exact=_floor_exact,
            domain=(None, False, None, False),
            increasing=True,
            strict=False,
            odd=False,
            bounds=(None, None),
            contract=(
                "floor is exact (IEEE 754's roundToIntegralTowardNegative)",
                "floor is non-decreasing",
                "floor(+-inf) = +-inf, floor(-0) = -0",
                "floor(NaN) is NaN",
            ),
            ulps=0.0,
            spec_axioms=_ax_floor,
            libm="np.floor",
            vector=False,  # one instruction in compiled code: nothing to gain from NumPy's loop per block
            long_double_ulps=0.0,
            ieee=_ieee_floor,
            ball_radius=_floor_ball,
        ),
    )
}

TINY = Fraction(1, 2**10)
SIGNS = ("", "positive", "of_argument", "positive_where_argument_positive")
# views of the records, for the provers: sign(f(t)) = sign(t) where both are defined; f(-inf), f(+inf)
SIGN_PRESERVING = frozenset(
    n for n, p in REGISTRY.items() if p.sign in ("of_argument", "positive_where_argument_positive")
)
AT_INF = {n: p.at_inf for n, p in REGISTRY.items()}


def platform_array(p: Primitive, input_bits: int, of_input: bool = False) -> Callable:
    """The binary64 function over arrays that opcert's implementation takes p's values from. On inputs of at
    most 26 bits (its float16, bfloat16 and float32 code): sin and cos reduced exactly, and tan where NumPy's loops
    are not AVX-512 (_reduced_exactly; expr.quarter_turns: within quarter_turns.ULPS_OF, far inside what
    impl.rounding_test assumes of them); where NumPy's loops are not AVX-512 and the primitive's argument is the
    input itself (of_input, argument_is_input: atan(x), cosh(|x|), whose arguments are binary32 values), atan and cosh
    from glibc's vector functions (libm_arrays.on_binary32); cosh with its blocks above 711 filled (_NARROW_FILLED);
    else NumPy's (p.numpy). One node of an expression takes one of them for every argument, so each is non-decreasing
    over the arguments it gets where its record says so. The narrow results do not depend on which: each is the
    correctly rounded one (impl.rounding_test)."""
    if input_bits > 26:
        return p.numpy
    if _reduced_exactly(p.name):
        return quarter_turns.FUNCTIONS[p.name]
    f = p.numpy
    if of_input and input_bits <= 24 and not _numpy_avx512():
        # the arguments are binary32 values, every one of which bench/libmvec_binary32.py puts through glibc's
        # vector atan and cosh: in order, odd for atan, within the record's bounds, no NaN at a finite one; their
        # 4 ULPs (glibc's stated bound, the C library record's contract) checked against Arb on a sample by
        # tests/test_libm_arrays.py
        f = libm_arrays.on_binary32(p.name) or f
    return filled_beyond(f, *_NARROW_FILLED[p.name]) if p.name in _NARROW_FILLED else f


def argument_is_input(node) -> bool:
    """Whether a primitive node's argument is the input x itself, or |x| or -x (its values are then the input's)."""
    a = node.args[0]
    return a.op == "var" or (a.op in ("abs", "neg") and a.args[0].op == "var")


# A block of cosh's arguments wholly above 711 is +inf without the call: there cosh(t) > e^t / 2 > 2^1024, so every
# function within the contract overflows, and the C library's cosh and glibc's vector one take a slow path for each
# such value (about half of the binary32 values, which Cosh's float32 sweep gives in blocks of one sign and a few
# binades). No lower end: Cosh's argument is |x| (cosh is a primitive on t >= 0).
_NARROW_FILLED = {"cosh": (-math.inf, 711.0, math.nan, math.inf)}


def _reduced_exactly(name: str) -> bool:
    """Whether binary32 arguments of the primitive take expr.quarter_turns: sin and cos on every host; tan where
    NumPy's loops are not AVX-512, where np.tan is the C library's one value at a time, with its slow reduction
    of large arguments; NumPy's AVX-512 tan is faster than the reduction (bench/README.md, 'Figures behind
    choices in the code')."""
    return name in ("sin", "cos") or (name == "tan" and not _numpy_avx512())


def binary64_array(name: str) -> tuple[Callable, float, bool]:
    """(f, ulps, simd): the binary64 function the reference's balls take a primitive's values from
    over arrays, its contract in binary64 ULPs, and whether it runs SIMD loops over a block (the
    compiled ball then takes its values per block instead of calling the C library per input).
    glibc's vector function where this host has one (expr.libm_arrays, 4 ULPs: NumPy's own loops
    are scalar on CPUs without AVX-512), else NumPy's under the record's contract. Where NumPy
    dispatches to AVX-512 its own SIMD loops are kept (faster than glibc's AVX2 ones: bench/README.md,
    'Figures behind choices in the code'): only erf and erfc, which NumPy lacks, come from glibc there.
    sqrt stays NumPy's: IEEE 754's, correctly rounded and SIMD everywhere."""
    p = REGISTRY[name]
    if _reduced_exactly(name):  # the argument reduced exactly where it is a binary32 value
        return quarter_turns.FUNCTIONS[name], max(p.ulps, quarter_turns.ULPS_OF[name]), True
    if name != "sqrt" and not (p.vector and _numpy_avx512()):
        f = _vector_blockwise(name)
        if f is not None:
            return f, max(p.ulps, libm_arrays.VECTOR_ULPS), True
    return _numpy_blockwise(name), p.ulps, p.vector


@functools.cache
def _numpy_avx512() -> bool:
    """Whether NumPy dispatches to its AVX-512 loops here (NPY_DISABLE_CPU_FEATURES taken into account)."""
    return bool(__cpu_features__.get("AVX512_SKX") or __cpu_features__.get("X86_V4"))


# Where a function's binary64 value is known without calling it, a whole block is filled (filled_beyond): the
# float32 sweep's blocks have one sign and span a few binades, so most of its blocks lie there (Tanh: 87% of its
# inputs). Beyond (lo, hi) the value is f(-inf)'s or f(+inf)'s binary64 rounding; inside (-near_zero, near_zero)
# t itself (at_zero None) or the constant at_zero. Each is the correctly rounded value (tests/test_libm_arrays.py
# checks it against MPFR), so it is within any function's contract, which is all a ball assumes of the values it
# takes. NumPy's and glibc's vector functions give the same bits there on the hosts measured; a function that
# does not (glibc's scalar tanh near 0) differs within its contract:
# - exp: e^-745.2 < 2^-1075 rounds to +0; above 709.79 it overflows; |t| < 2^-55: 1 + t rounds to 1;
# - expm1: below -38, e^t < 2^-54 and -1 + e^t rounds to -1; |t| < 2^-54: t + t^2/2 rounds to t (the t^2/2 is
#   under a quarter of t's ULP, the spacing below a power of two included);
# - tanh: beyond +-20, 1 - |tanh t| < 2e^-40 < 2^-54 rounds to 1 (glibc's vector tanh gives 1 - 2^-53 up to 20,
#   within its contract: the fill starts where it gives 1); |t| < 2^-27: |t|^3/3 < |t| 2^-54;
# - log1p: |t| < 2^-54: t - t^2/2 rounds to t;
# - erf, erfc: their records' saturation.
_FILLED = {
    "exp": EXP_SATURATION + (2.0**-55, 1.0),
    "expm1": (-38.0, 709.79, -1.0, math.inf, 2.0**-54),
    "tanh": (-TANH_SATURATION, TANH_SATURATION, -1.0, 1.0, TANH_TINY),
    "log1p": (-math.inf, math.inf, 0.0, 0.0, 2.0**-54),
}


def _filled(name: str, f):
    p = REGISTRY[name]
    known = _FILLED.get(name) or (p.saturates + p.at_inf if p.saturates is not None else None)
    return f if known is None else filled_beyond(getattr(f, "__wrapped__", f), *known)


@functools.cache
def _vector_blockwise(name: str):
    f = libm_arrays.vector(name)
    return None if f is None else _filled(name, f)


@functools.cache
def _numpy_blockwise(name: str):
    return _filled(name, REGISTRY[name].numpy)


def long_double_array(name: str) -> tuple[Callable, float] | None:
    """(f, ulps): the long double function over long double arrays and its contract in ULPs of that
    format, or None where this platform has none (NumPy's ufuncs for exp ... log; glibc's erfl and
    erfcl through expr.libm_arrays, where it could be built)."""
    p = REGISTRY[name]
    if p.long_double_ulps is None:
        return None
    if name in libm_arrays.LONG_DOUBLE_NAMES:
        f = libm_arrays.long_double(name)
        return None if f is None else (f, p.long_double_ulps)
    return p.numpy, p.long_double_ulps


def get(name: str) -> Primitive:
    return REGISTRY[name]


def check_registry() -> None:
    """Every primitive has every part (raises AssertionError naming what is missing)."""
    for p in REGISTRY.values():
        for part in ("numpy", "arb", "exact", "spec_axioms", "ball_radius"):
            assert getattr(p, part) is not None, f"primitive {p.name} has no {part}"
        assert p.contract, f"primitive {p.name} states no platform contract"
        assert p.ulps > 0 or (p.ulps == 0 and p.ieee is not None), f"primitive {p.name} has no error bound"
        assert p.sign in SIGNS, f"primitive {p.name}: sign rule {p.sign!r}; allowed: {SIGNS}"
        assert p.libm.startswith(("math.", "np.")), f"primitive {p.name} names no function for compiled code"
