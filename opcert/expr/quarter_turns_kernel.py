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
_TINY_F = np.uint64(
    1 << 14
)  # a rest under 2^-48 of a quarter turn (high word below 2^14): the table's truncation matters


@numba.njit(cache=True, nogil=True)
def reduce(t, table, r, q, e_min, e_max, quarter, which):
    """r[i], q[i]: t[i] = (4k + q + r / (pi / 2)) with |r| <= pi / 4, q in 0..3 with the sign of t in bit 3
    (q + 8: negative t, as sin's oddness and cos's evenness use it); q = DIRECT and r = t where |t| < pi / 4 or t
    is not finite; q = OTHER where t is no binary32 value. table: quarter_turns.table() flattened. Returns how many
    are OTHER. The rest's sign is taken without a branch (it is random from one input to the next).
    r[i] is then halved where the quadrant takes the cosine of r (sin, which 0, in quadrants 1 and 3; cos, which 1,
    in 0 and 2): combine takes cos r as 1 - 2 sin(r / 2)^2, so one sine of r serves every element."""
    n_other = 0
    tb = t.view(np.uint64)
    for i in range(t.size):
        v = t[i]
        a = abs(v)
        if not (a >= quarter) or a == np.inf:
            r[i] = v * 0.5 if which else v
            q[i] = DIRECT
            continue
        bits = tb[i] & _ABS
        e = np.int64(bits >> _S52) - 1046
        if (bits & _LOW29) != _ZERO or e < e_min or e > e_max:
            r[i] = v
            q[i] = OTHER
            n_other += 1
            continue
        m = ((bits & _MANT) | _HIDDEN) >> _S29
        row = 4 * (e - e_min)
        p = m * table[row]
        l0 = p & _M32
        p = m * table[row + 1] + (p >> _S32)
        l1 = p & _M32
        p = m * table[row + 2] + (p >> _S32)
        l2 = p & _M32
        p = m * table[row + 3] + (p >> _S32)
        hi = ((p & _M32) << _S32) | l2
        lo = (l1 << _S32) | l0
        fh = hi & _FRAC
        neg = fh >= _HALF
        # past half a quadrant: the next quadrant, less the complement 2^126 - (fh, lo)
        quad = (np.int64(hi >> _S62) + np.int64(neg)) & 3
        c_lo = (~lo) + _ONE
        c_hi = _FRAC - fh + (_ONE if lo == _ZERO else _ZERO)
        mag_hi = c_hi if neg else fh
        mag_lo = c_lo if neg else lo
        if mag_hi < _TINY_F:
            r[i] = v
            q[i] = OTHER
            n_other += 1
            continue
        f = np.float64(mag_hi) * 2.0**-62 + np.float64(mag_lo) * 2.0**-126
        rest = f * (-PIO2 if neg else PIO2)
        r[i] = rest * (0.5 if (quad + which) & 1 else 1.0)  # exact: |rest| >= 2^-48
        q[i] = quad + (8 if v < 0 else 0)
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
