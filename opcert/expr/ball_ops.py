"""The vocabulary the ball's rules are written in, and its two meanings.

The ball's arithmetic (numerics.ball_rules) and each primitive's radius rule (the `ball_radius` field of
its record in expr.primitives) are written once, as functions of midpoints, radii and signs that use
Python's arithmetic and comparison operators and the names of this vocabulary, as `B.where(...)`,
`B.fabs(...)`. They have no `if`: a choice is a `where`, so the same text means

- over NumPy arrays of any float type (binary64, long double): `NUMPY`, the element-wise functions of
  NumPy, which numerics.ball runs;
- over scalars in compiled code: `numba_ops()`, small njit functions that numba inlines into the
  rules, which the kernels numerics.ball_compiled generates call (`compiled(rule)`: compiled once,
  cached on disk, and inlined by LLVM; inlined by numba instead, a kernel took longer to compile and ran no
  faster: bench/ball_variants.py; bench/README.md, 'Figures behind choices in the code').

`instantiate(rule, ops)` is the rule with `B` meaning `ops`. A choice made with `where` computes both
values; a rule must not call a function whose cost depends on the branch not taken (a libm call in
the underflow range is much slower: the rules clamp the argument instead; bench/README.md, 'Figures behind
choices in the code').
"""

from __future__ import annotations

import functools
import math
import types

import numpy as np


def _ball_sign_numpy(m, r):
    return np.where(m - r > 0, 1, np.where(m + r < 0, -1, 0))


# a binary64 value below log2(e) (0x3FF71547652B82FE), and the factor that keeps a rounded product of it below
# the exact one: exp_neg_above's exponent
LOG2E_BELOW = 1.4426950408889634
SHRINK = 1.0 - 2.0**-50


def _exp_neg_above_numpy(y):
    """A power of two 2^-k with e^-y <= 2^-k <= 2 e^-y (1 + 2^-40), for y >= 0 in binary64 or long double (NaN:
    NaN): k = floor(fl(fl(y L) (1 - 2^-50))) with L below log2(e), which is at most y log2(e) whatever the two
    roundings (each at most 2^-53 relative, fewer than the factor takes off; in long double 2^-64). In binary64
    k is held at 1022 (2^-1022 bounds every e^-y below it); in long double y must stay below 11,400 (2^-k is
    0 past it: the erf rule clamps y at 11,025). Not for binary32 arrays (their roundings exceed the factor),
    nor a negative y."""
    y = np.asarray(y)
    ok = y == y
    q = np.floor((np.where(ok, y, 0) * LOG2E_BELOW) * SHRINK)
    if y.dtype == np.float64:
        q = np.minimum(q, 1022.0)
    return np.where(ok, np.ldexp(np.ones_like(q), (-q).astype(np.int64)), y)


NUMPY = types.ModuleType("opcert.expr.ball_ops.NUMPY")
# exp is each meaning's platform exp: NumPy's here (its AVX-512 loop differs from the C library's by an
# ULP here and there), the C library's in compiled code; a rule uses it only under a margin that covers either
NUMPY.__dict__.update(
    where=np.where,
    fabs=np.abs,
    both=np.logical_and,
    either=np.logical_or,
    negated=np.logical_not,
    nmax=np.maximum,
    nmin=np.minimum,  # NaN wins, as np.maximum
    exp=np.exp,
    exp_neg_above=_exp_neg_above_numpy,
    expm1=np.expm1,
    sqrt=np.sqrt,
    floor=np.floor,
    isinf=np.isinf,
    isfinite=np.isfinite,
    ball_sign=_ball_sign_numpy,
)
NAMES = frozenset(k for k in NUMPY.__dict__ if not k.startswith("__"))


@functools.cache
def numba_ops() -> types.ModuleType:
    """The vocabulary over scalars, as numba functions (built at the first use: numba compiles them
    where they are called)."""

    import numba

    jit = numba.njit(inline="always", nogil=True, error_model="numpy")

    @jit
    def where(c, a, b):
        return a if c else b

    @jit
    def fabs(a):
        return abs(a)

    @jit
    def both(a, b):
        return a and b

    @jit
    def either(a, b):
        return a or b

    @jit
    def negated(a):
        return not a

    @jit
    def nmax(a, b):  # np.maximum: NaN wins
        if a != a or b != b:
            return a + b
        return a if a >= b else b

    @jit
    def nmin(a, b):  # np.minimum
        if a != a or b != b:
            return a + b
        return a if a <= b else b

    @jit
    def exp(a):
        return math.exp(a)

    @jit
    def exp_neg_above(y):  # as _exp_neg_above_numpy in binary64: bits, not a call (LLVM vectorises the loop)
        ok = y == y
        q = min(np.floor(((y if ok else 0.0) * LOG2E_BELOW) * SHRINK), 1022.0)
        d = np.uint64(np.uint64(1023 - np.int64(q)) << np.uint64(52)).view(np.float64)
        return d if ok else y

    @jit
    def expm1(a):
        return math.expm1(a)

    @jit
    def sqrt(a):
        return math.sqrt(a)

    @jit
    def floor(a):
        return np.floor(a)  # a float, as NumPy's (math.floor in numba is an integer, wrong past 2^63)

    @jit
    def isinf(a):
        return a == math.inf or a == -math.inf

    @jit
    def isfinite(a):
        return math.isfinite(a)

    @jit
    def ball_sign(m, r):
        if m - r > 0:
            return 1
        if m + r < 0:
            return -1
        return 0

    ops = types.ModuleType("opcert.expr.ball_ops.numba_ops")
    ops.__dict__.update(
        where=where,
        fabs=fabs,
        both=both,
        either=either,
        negated=negated,
        nmax=nmax,
        nmin=nmin,
        exp=exp,
        exp_neg_above=exp_neg_above,
        expm1=expm1,
        sqrt=sqrt,
        floor=floor,
        isinf=isinf,
        isfinite=isfinite,
        ball_sign=ball_sign,
    )
    assert NAMES == frozenset(k for k in ops.__dict__ if not k.startswith("__")), "one vocabulary, two meanings"
    return ops


def instantiate(rule, ops: types.ModuleType):
    """The rule with `B` meaning ops (its other globals as they are)."""
    g = dict(rule.__globals__)
    g["B"] = ops
    f = types.FunctionType(rule.__code__, g, rule.__name__, rule.__defaults__, rule.__closure__)
    f.__qualname__ = rule.__qualname__
    return f


@functools.cache
def compiled(rule):
    """The rule over scalars, compiled by numba at its first call with each signature, and cached on disk
    (under opcert's code fingerprint: opcert.jit) for the next process that compiles a kernel calling it."""
    from opcert.jit import numba  # lazy: numba loads where a kernel is built, not with opcert

    return numba.njit(cache=True, nogil=True, error_model="numpy")(instantiate(rule, numba_ops()))


@functools.cache
def over_arrays(rule):
    return instantiate(rule, NUMPY)
