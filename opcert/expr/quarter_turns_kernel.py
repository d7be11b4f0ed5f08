"""expr.quarter_turns' loops: the exact reduction of binary32 values, and the quadrant's sign and function."""

from __future__ import annotations

import numpy as np

from opcert.jit import numba

OTHER = 4  # q of a value that is no binary32 value: the caller's function of the value itself
DIRECT = 16  # q of |t| < pi / 4 and of +-inf, NaN: r = t, the quadrant 0 (bits 0, 1 and 3 clear)
PIO2 = 1.5707963267948966
# every integer below is uint64: numba takes int64 * uint64 to binary64, which would round the product
_LOW29 = np.uint64((1 << 29) - 1)
_MANT = np.uint64((1 << 52) - 1)
_HIDDEN = np.uint64(1 << 52)
_M32 = np.uint64(0xFFFFFFFF)
_FRAC = np.uint64((1 << 62) - 1)
_HALF = np.uint64(1 << 61)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
_S29, _S32, _S52, _S62 = np.uint64(29), np.uint64(32), np.uint64(52), np.uint64(62)
_ABS = np.uint64((1 << 63) - 1)
_EXP = np.uint64(2047)
_TINY_F = np.uint64(
    1 << 14
)  # a rest under 2^-48 of a quarter turn (high word below 2^14): the table's truncation matters


TILE = 512  # elements whose table rows are copied out before their arithmetic (bench/quarter_turns.py)


@numba.njit(inline="always")
def _direct(v, quarter):
    """t is its own rest: |t| < pi / 4, or t is not finite"""
    a = abs(v)
    return (a < quarter) | (a != a) | (a == np.inf)


@numba.njit(inline="always")
def _direct_rest(v, which):
    """a direct t's r: t / 2 for cos (combine's cos r = 1 - 2 sin(r / 2)^2), else t itself (v * 1.0 would quiet
    a signalling NaN)"""
    return v * 0.5 if which == 1 else v


_BIAS52 = np.uint64(0x4330000000000000)  # the bits of 2^52


@numba.njit(inline="always")
def _half(u):
    """A value below 2^32 in binary64, exactly: its bits under 2^52's, less 2^52 (no int64 -> binary64 conversion,
    which AVX2 lacks: LLVM took each one a value at a time)."""
    return np.uint64(u | _BIAS52).view(np.float64) - 2.0**52


@numba.njit(cache=True, nogil=True)
def reduce(t, pairs, r, q, e_min, e_max, quarter, which):
    """r[i], q[i]: t[i] = (4k + q + r / (pi / 2)) with |r| <= pi / 4, q in 0..3 with the sign of t in bit 3
    (q + 8: negative t, as sin's oddness and cos's evenness use it); q = DIRECT and r = t where |t| < pi / 4 or t
    is not finite; q = OTHER and r = 0 where t is no binary32 value. pairs: quarter_turns.pairs(), the table's
    rows as two 64-bit words. Returns how many are OTHER. For sin and cos r[i] is then halved where the quadrant takes the
    cosine of r (sin, which 0, in quadrants 1 and 3; cos, which 1, in 0 and 2, and r = t / 2 where |t| < pi / 4):
    combine takes cos r as 1 - 2 sin(r / 2)^2, so one sine of r serves every element. For tan (which 2) r is
    whole: combine_tan takes sin r and sin(r / 2).
    In tiles: a tile of |t| < pi / 4 alone is copied; otherwise a scalar loop copies each element's table row
    into the tile's buffers (LLVM does not vectorize the lookup), then a loop without branches reduces the tile,
    which LLVM vectorizes: every element is reduced (the exponent clamped to the table's rows) and its case
    selected after, as the rest's sign and the quadrant vary at random from one input to the next. The
    conversions to binary64 go through 32-bit halves (exact: each half is, and their sum rounds once, as the
    whole would)."""
    n_other = 0
    n = t.size
    halving = 1 if which < 2 else 0
    wa = np.empty(TILE, np.uint64)
    wb = np.empty(TILE, np.uint64)
    for s in range(0, n, TILE):
        # the tile's views, indexed from 0: an index s + j is checked for wrapping around (numba's negative
        # indices), which kept every loop here scalar (bench/README.md, 'Figures behind choices in the code')
        ts = t[s : s + TILE]
        tbs = ts.view(np.uint64)
        rs = r[s : s + TILE]
        qs = q[s : s + TILE]
        k = ts.size
        n_direct = 0
        for j in range(k):
            n_direct += np.int64(_direct(ts[j], quarter))
        if n_direct == k:  # a tile of |t| < pi / 4 (half of the binary32 values) needs no reduction
            for j in range(k):
                rs[j] = _direct_rest(ts[j], which)
                qs[j] = DIRECT
            continue
        for j in range(k):
            e = np.int64((tbs[j] >> _S52) & _EXP) - 1046
            row = 2 * (min(max(e, e_min), e_max) - e_min)
            wa[j] = pairs[row]
            wb[j] = pairs[row + 1]
        for j in range(k):
            v = ts[j]
            bits = tbs[j] & _ABS
            e = np.int64(bits >> _S52) - 1046
            m = ((bits & _MANT) | _HIDDEN) >> _S29
            p = m * (wa[j] & _M32)
            l0 = p & _M32
            p = m * (wa[j] >> _S32) + (p >> _S32)
            l1 = p & _M32
            p = m * (wb[j] & _M32) + (p >> _S32)
            l2 = p & _M32
            p = m * (wb[j] >> _S32) + (p >> _S32)
            hi = ((p & _M32) << _S32) | l2
            lo = (l1 << _S32) | l0
            fh = hi & _FRAC
            neg = fh >= _HALF
            # past half a quadrant: the next quadrant, less the complement 2^126 - (fh, lo)
            quad = (np.int64(hi >> _S62) + np.int64(neg)) & 3
            c_lo = (~lo) + _ONE
            c_hi = _FRAC - fh + np.uint64(lo == _ZERO)
            mag_hi = c_hi if neg else fh
            mag_lo = c_lo if neg else lo
            f_hi = _half(mag_hi >> _S32) * 2.0**32 + _half(mag_hi & _M32)
            f_lo = _half(mag_lo >> _S32) * 2.0**32 + _half(mag_lo & _M32)
            rest = (f_hi * 2.0**-62 + f_lo * 2.0**-126) * (-PIO2 if neg else PIO2)
            direct = _direct(v, quarter)
            other = (((bits & _LOW29) != _ZERO) | (e < e_min) | (e > e_max) | (mag_hi < _TINY_F)) & ~direct
            # exact: |rest| >= 2^-48 where it is kept
            reduced = rest * (0.5 if (quad + which) & halving else 1.0)
            # an OTHER element's value is the C library's of t (quarter_turns._apply): its r is never read, and
            # 0 spares the vector sine a huge argument's slow path
            reduced = 0.0 if other else reduced
            rs[j] = _direct_rest(v, which) if direct else reduced
            code = OTHER if other else quad + (8 if v < 0 else 0)
            qs[j] = DIRECT if direct else code
            n_other += np.int64(other)
    return n_other


@numba.njit(cache=True, nogil=True)
def combine(s, q, which, out):
    """sin (which 0) or cos (which 1) of the reduced values into out, from s = sin of reduce's r: sin r where the
    quadrant takes the sine, sin(r / 2) where it takes the cosine (cos r = 1 - 2 sin(r / 2)^2): quadrant k takes
    sin(r + k pi/2) = (s, c, -s, -c)[k] and cos(r + k pi/2) = (c, -s, -c, s)[k], a negative t (bit 3) negates the
    sine. Without branches: the quadrants alternate at random."""
    for i in range(s.size):
        k = np.int64(q[i])
        quad = (k & 3) + which  # cos(t) = sin(t + pi / 2)
        odd = quad & 1
        h = s[i]
        c = 1.0 - 2.0 * (h * h)
        v = c if odd else h  # a select, not c * odd + h * (1 - odd): that loses the sign of zero
        flip = ((quad >> 1) & 1) ^ ((k >> 3) & (1 - which))
        out[i] = v * (1.0 - 2.0 * flip)
    return out


@numba.njit(cache=True, nogil=True, error_model="numpy")  # x / 0 is +-inf, NaN, not an exception
def combine_tan(s, h, q, out):
    """tan of the reduced values into out, from s = sin r and h = sin(r / 2) of reduce's r (which 2): with
    c = cos r = 1 - 2 h^2, quadrants 0 and 2 take tan r = s / c, 1 and 3 take -cot r = -c / s (tan has period
    pi); a negative t (bit 3) negates it (tan is odd)."""
    for i in range(s.size):
        k = np.int64(q[i])
        c = 1.0 - 2.0 * (h[i] * h[i])
        v = -c / s[i] if k & 1 else s[i] / c
        out[i] = v * (1.0 - 2.0 * ((k >> 3) & 1))
    return out
