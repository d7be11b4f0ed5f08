"""sin, cos and tan of binary32 values over arrays: the argument reduced exactly, then glibc's vector sine.

Why: the C library's sin and cos reduce a large argument with its slow path (Payne and Hanek's, one value at a
time, also inside glibc's vector functions), and half of the binary32 values are beyond 2^20. A float32 sweep of
Sin or Cos spent most of its time there, in opcert's implementation and in the reference's ball alike
(bench/README.md). A binary32 value is M 2^E with M < 2^24: its number of quarter turns x (2 / pi) modulo 4 is
M times (2^E (2 / pi) mod 4), an integer product on 128 bits of 2 / pi from mpmath (the table below; tests/test_quarter_turns.py checks it against MPFR), exact
but for the table's truncation (under 2^-102 of a quarter turn). Its nearest integer q and the rest f (|f| <= 1/2)
give x = (q + f) pi / 2 modulo 2 pi, and sin x, cos x are +-sin or +-cos of r = f pi / 2, |r| <= pi / 4, where the
vector sine takes its fast path: sin r, and cos r as 1 - 2 sin(r / 2)^2 (glibc's vector cosine is not monotone:
17 million adjacent binary32 values of [2^-26, pi / 4) out of order; this form is a composition of monotone
steps on [0, pi / 4]).

Error: f rounded to binary64 (2^-53 relative; the table's 2^-102 absolute is below 2^-53 of every |f| >= 2^-48,
and a smaller f, which no binary32 value gives: bench/quarter_turns.py, takes the C library's path), pi / 2
rounded and the product rounded: r within 2^-51 relative of the exact rest, which moves sin r by at most
1.12 |r| 2^-51 and cos r by at most 0.9 |r| 2^-51 of their values (|r| <= pi / 4): 2 binary64 ULPs; sin r
adds the vector function's 4. cos r: sin(r / 2) within 4 ULPs (8 2^-53 relative), its square within 17 2^-53,
2 sin^2 <= 0.293 so 5 2^-53 absolute, the subtraction half an ULP, over cos r >= 0.707: 8 ULPs, 10 with r's.
ULPS = 12.
tan (where NumPy's loops are not AVX-512: expr.primitives._reduced_exactly): tan r = sin r / cos r in quadrants 0
and 2, -cos r / sin r in 1 and 3 (period pi), with cos r = 1 - 2 sin(r / 2)^2 as above and sin(r / 2) from a second
call of the vector sine. In relative terms (u = 2^-53): r's error 4u moves tan r by at most
r (1 + tan^2 r) / tan r = 2r / sin 2r <= pi / 2 times that, 6.3u; sin r's 4 ULPs are at most 8u, cos r's 8 ULPs
at most 11.3u (cos r >= 0.707), the division 1u: 27u, within 27 ULPs of the result. ULPS_TAN = 32.
Checked against MPFR in tests/test_quarter_turns.py, on the binary32 values nearest to multiples of pi / 2
among them. Values that are no binary32 value (DirectML's x * scale + bias) take NumPy's functions (the C
library's: glibc's vector sin is not monotone next to pi / 2, tests/test_contracts.py); |t| < pi / 4 is taken as
its own rest (r = t, the quadrant 0)."""

from __future__ import annotations

import functools

import numpy as np
from mpmath import mp, mpf

from opcert.expr import libm_arrays

ULPS = 12.0
ULPS_TAN = 32.0
E_MIN, E_MAX = -30, 104  # M 2^E with M < 2^24: |t| >= pi / 4 needs E >= -24; binary32's largest has E = 104
QUARTER = 0.7853981633974483  # below pi / 4 (binary64's pi / 4 rounds down): taken as it is


@functools.cache
def table() -> np.ndarray:
    """Row E - E_MIN: floor(2^(E + 126) (2 / pi)) mod 2^128 in four 32-bit limbs, the lowest first; flat."""
    with mp.workprec(420):
        t = int(mp.floor(mpf(2) / mp.pi * mpf(2) ** 400))
    rows = []
    for e in range(E_MIN, E_MAX + 1):
        w = (t >> (400 - e - 126)) & ((1 << 128) - 1)
        rows.append([(w >> (32 * i)) & 0xFFFFFFFF for i in range(4)])
    return np.array(rows, dtype=np.uint64).reshape(-1)


@functools.cache
def pairs() -> np.ndarray:
    """table() with each row as two 64-bit words, the lowest first: what the kernel reads (two loads a row)."""
    limbs = table().reshape(-1, 2, 2)
    return np.ascontiguousarray((limbs[:, :, 0] | (limbs[:, :, 1] << np.uint64(32))).reshape(-1))


def _sine():
    """sin over binary64 arrays of |r| <= pi / 4: glibc's vector function, else NumPy's."""
    return libm_arrays.vector("sin") or np.sin


def _apply(t: np.ndarray, which: int) -> np.ndarray:
    from opcert.expr import quarter_turns_kernel as k  # lazy: numba, not loaded by `import opcert`

    a = np.asarray(t, dtype=np.float64)
    flat = np.ascontiguousarray(a).reshape(-1)  # ascontiguousarray alone makes a 0-d argument 1-d
    r = np.empty(flat.size)
    q = np.empty(flat.size, np.int8)
    n_other = k.reduce(flat, pairs(), r, q, E_MIN, E_MAX, QUARTER, which)
    sin = _sine()
    with np.errstate(invalid="ignore", divide="ignore"):
        if which == 2:
            h = sin(r * 0.5)
            out = k.combine_tan(sin(r, out=r), h, q, np.empty(flat.size))
        else:
            out = k.combine(sin(r, out=r), q, which, np.empty(flat.size))
        # NumPy's (the C library's) for values that are no binary32 value (glibc's vector sin is not monotone
        # next to pi / 2, its scalar one is)
        if n_other:
            at = np.flatnonzero(q == k.OTHER)
            out[at] = (np.sin, np.cos, np.tan)[which](flat[at])
    return out.reshape(a.shape) if a.ndim else out[0]


def _into(y, out):
    """As a ufunc's `out=`: the values written into out, which is returned (the compiled ball's calls)."""
    if out is None:
        return y
    out[...] = y
    return out


def sin(t: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    return _into(_apply(t, 0), out)


def cos(t: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    return _into(_apply(t, 1), out)


def tan(t: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    return _into(_apply(t, 2), out)


FUNCTIONS = {"sin": sin, "cos": cos, "tan": tan}
ULPS_OF = {"sin": ULPS, "cos": ULPS, "tan": ULPS_TAN}
