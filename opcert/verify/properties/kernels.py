"""The compiled inner loops of the property checks (numba).

One pass over a block per property, with no temporaries: the NumPy version
built a dozen masks per property and made the checks cost more than the target
(tests/test_properties.py compares both on the same outputs).

Each scan accumulates into `st` (uint64): evaluated, violations, then the first
violation (smallest key: key, input 1, input 2) and the worst (largest
magnitude, smallest key among equals: key, input 1, input 2), and `wmag[0]`,
the worst magnitude (NaN counts as +inf). Keys and inputs are bit patterns
(binary64 ones use all 64 bits); input 2 is 0 where a violation has one input.
"""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from opcert.jit import numba
from opcert.verify.ulp import ulp_inline as _ulp

EVALUATED, VIOLATIONS, FIRST_KEY, FIRST_A, FIRST_B, WORST_KEY, WORST_A, WORST_B = range(8)


# The scans' records: one sign of a block (the inputs' bit patterns, the keys of its violations; the inputs; the
# outputs and their bit patterns); a property's domain [dlo, dhi] and the outputs it allows there ([lo, hi] or
# a constant value: scan_values); where a monotonic chain stands (whether it has a last input, its bits, output).
Side = namedtuple("Side", "keys x y ybits")
Bounds = namedtuple("Bounds", "dlo dhi lo hi value")
Chain = namedtuple("Chain", "has_prev prev_b prev_y")


def new_state():
    return np.zeros(8, np.uint64), np.full(1, -np.inf)


@numba.njit(cache=True, nogil=True, inline="always")
def _record(st, wmag, key, a, b, mag):
    none = st[VIOLATIONS] == 0
    st[VIOLATIONS] += 1
    if none or key < st[FIRST_KEY]:
        st[FIRST_KEY], st[FIRST_A], st[FIRST_B] = key, a, b
    if mag != mag:
        mag = np.inf
    if none or mag > wmag[0] or (mag == wmag[0] and key < st[WORST_KEY]):
        wmag[0] = mag
        st[WORST_KEY], st[WORST_A], st[WORST_B] = key, a, b


@numba.njit(cache=True, nogil=True, inline="always")
def _finite_end(x):
    """How many of x's leading elements are not NaN: a side's NaN inputs come last (its magnitudes ascend,
    and a NaN's is above infinity's), so x != x is False then True along it, and a bisection finds where."""
    lo, hi = 0, x.size
    while lo < hi:
        mid = (lo + hi) >> 1
        if x[mid] != x[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


@numba.njit(cache=True, nogil=True, inline="always")
def _domain(x, dlo, dhi):
    """[i0, i1): the elements of x in [dlo, dhi]. A side's inputs are its ascending magnitudes with one sign
    (add_block's contract): ascending at +m, descending at -m, NaN last. So the elements inside are one run,
    found by bisection with the same comparisons a pass would make (x[i] >= dlo, x[i] <= dhi), where a pass
    over every element cost each scan half its time (bench/README.md, 'Figures behind choices in the code')."""
    k = _finite_end(x)
    if k == 0:
        return 0, 0
    if x[0] <= x[k - 1]:  # ascending: those >= dlo are a tail, those <= dhi a head
        lo, hi = 0, k
        while lo < hi:
            mid = (lo + hi) >> 1
            if x[mid] >= dlo:
                hi = mid
            else:
                lo = mid + 1
        i0 = lo
        lo, hi = i0, k
        while lo < hi:
            mid = (lo + hi) >> 1
            if x[mid] <= dhi:
                lo = mid + 1
            else:
                hi = mid
        return i0, max(lo, i0)
    lo, hi = 0, k  # descending: those <= dhi are a tail, those >= dlo a head
    while lo < hi:
        mid = (lo + hi) >> 1
        if x[mid] <= dhi:
            hi = mid
        else:
            lo = mid + 1
    i0 = lo
    lo, hi = i0, k
    while lo < hi:
        mid = (lo + hi) >> 1
        if x[mid] >= dlo:
            lo = mid + 1
        else:
            hi = mid
    return i0, max(lo, i0)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def _count_values(kind, x, y, bounds):
    """(evaluated, violations) of scan_values, branch-free so that it vectorises:
    nearly every block has no violation, and then this pass is the whole scan. The inputs evaluated are
    one run of the side (_domain; kind 2: the NaN inputs, its tail)."""
    dlo, dhi, lo, hi, value = bounds
    bad = 0
    # each loop over a slice from 0: LLVM did not vectorise a loop over range(i0, i1) (bench/README.md,
    # 'Figures behind choices in the code')
    if kind == 2:
        k = _finite_end(x)
        z = y[k:]
        for i in range(z.size):
            bad += z[i] == z[i]
        return x.size - k, bad
    i0, i1 = _domain(x, dlo, dhi)
    z = y[i0:i1]
    if kind == 1:
        for i in range(z.size):
            bad += z[i] != value
    else:
        for i in range(z.size):  # outside [lo, hi], or NaN
            bad += ~((z[i] >= lo) & (z[i] <= hi))
    return i1 - i0, bad


@numba.njit(cache=True, nogil=True, error_model="numpy")
def scan_values(kind, side, bounds, st, wmag):
    """kind 0: lo <= y <= hi (NaN outputs violate); 1: y == value; 2: NaN in, NaN out (bounds: a Bounds).
    Inputs outside [dlo, dhi] and NaN inputs are not evaluated (except by kind 2)."""
    keys, x, y, _ = side
    dlo, dhi, lo, hi, value = bounds
    n, bad = _count_values(kind, x, y, bounds)
    if bad == 0:
        st[EVALUATED] += n
        return
    for i in range(x.size):
        xi, yi = x[i], y[i]
        if kind == 2:
            if xi == xi:
                continue
            st[EVALUATED] += 1
            if yi == yi:
                _record(st, wmag, np.uint64(keys[i]), np.uint64(keys[i]), np.uint64(0), np.inf)
            continue
        if not (xi >= dlo and xi <= dhi):
            continue
        st[EVALUATED] += 1
        if kind == 1:
            if not (yi == value):
                _record(st, wmag, np.uint64(keys[i]), np.uint64(keys[i]), np.uint64(0), abs(np.float64(yi) - value))
        elif yi != yi:
            _record(st, wmag, np.uint64(keys[i]), np.uint64(keys[i]), np.uint64(0), np.inf)
        elif yi < lo:
            _record(st, wmag, np.uint64(keys[i]), np.uint64(keys[i]), np.uint64(0), lo - np.float64(yi))
        elif yi > hi:
            _record(st, wmag, np.uint64(keys[i]), np.uint64(keys[i]), np.uint64(0), np.float64(yi) - hi)


@numba.njit(cache=True, nogil=True, error_model="numpy")
def scan_parity(pos, neg, sign, mirror, bitwise, st, wmag):
    """f(-x) = mirror * f(x) on every pair (the Sides at +m and -m; bit for bit, or as values); NaN = NaN.
    Odd: mirror -1 and sign the format's sign bit; even: mirror 1 and sign 0 (the same bits)."""
    mags, xp, yp, ybp = pos
    negb, _, yn, ybn = neg
    # branch-free count first (vectorised), over the inputs that are not NaN (the side's head: _finite_end),
    # one loop per form; the recording loop only where needed
    n = _finite_end(xp)
    bad = 0
    a, b = yp[:n], yn[:n]
    if bitwise:
        p, q = ybp[:n], ybn[:n]
        for i in range(n):
            bad += (q[i] != (p[i] ^ sign)) & ~((a[i] != a[i]) & (b[i] != b[i]))
    else:
        for i in range(n):
            bad += (b[i] != mirror * a[i]) & ~((a[i] != a[i]) & (b[i] != b[i]))
    if bad == 0:
        st[EVALUATED] += n
        return
    for i in range(xp.size):
        if xp[i] != xp[i]:
            continue
        st[EVALUATED] += 1
        a, b = yp[i], yn[i]
        if a != a and b != b:
            continue
        good = (ybn[i] == (ybp[i] ^ sign)) if bitwise else (b == mirror * a)
        if not good:
            _record(
                st,
                wmag,
                np.uint64(mags[i]),
                np.uint64(mags[i]),
                np.uint64(negb[i]),
                abs(np.float64(b) - mirror * np.float64(a)),
            )


@numba.njit(cache=True, nogil=True, error_model="numpy")
def scan_monotonic(side, bounds, negative, decreasing, chain, st, wmag, ends):
    """Adjacent valid inputs (in [bounds.dlo, bounds.dhi]) along the side's arrays (x ascends on the
    positive side and descends on the negative one), continuing the chain from where it stands (a
    Chain): non-decreasing, or non-increasing where `decreasing`. A violation's inputs are recorded in
    value order (x1 < x2) and its magnitude is how far f(x2) falls below f(x1) (non-increasing: rises
    above it). ends receives [found, first bits, first output bits, last bits, last output bits]."""
    xb, x, y, yb = side
    dlo, dhi = bounds.dlo, bounds.dhi
    has_prev, prev_b, prev_y = chain
    # along the arrays the outputs must not fall (`up`: x ascends and f is non-decreasing, or x descends and
    # f is non-increasing), else must not rise
    up = negative == decreasing
    n = x.size
    bad = 0
    i0, i1 = _domain(x, dlo, dhi)
    if n and i0 == 0 and i1 == n:  # the common case first, branch-free: every input valid, no pair going wrong
        # a pair going wrong or a NaN (only whether any is counts): one loop per direction, so that the
        # direction is not a branch inside it
        a, b = y[: n - 1], y[1:]
        if up:
            for i in range(n - 1):
                bad += (b[i] < a[i]) | (a[i] != a[i])
        else:
            for i in range(n - 1):
                bad += (b[i] > a[i]) | (a[i] != a[i])
        bad += y[n - 1] != y[n - 1]
        if has_prev:
            bad += not ((prev_y <= y[0]) if up else (y[0] <= prev_y))
        if bad == 0:
            st[EVALUATED] += n - 1 + has_prev
            ends[0], ends[1], ends[2] = 1, np.uint64(xb[0]), np.uint64(yb[0])
            ends[3], ends[4] = np.uint64(xb[n - 1]), np.uint64(yb[n - 1])
            return
    have, lb_, ly, lyb = has_prev, prev_b, prev_y, np.uint64(0)
    found = False
    for i in range(x.size):
        xi = x[i]
        if not (xi >= dlo and xi <= dhi):
            continue
        b, v = np.uint64(xb[i]), y[i]
        if not found:
            found = True
            ends[1], ends[2] = b, np.uint64(yb[i])
        if have:
            st[EVALUATED] += 1
            if not ((ly <= v) if up else (v <= ly)):
                # x1 < x2: this input and the previous one in value order
                x1, x2 = (b, lb_) if negative else (lb_, b)
                _record(
                    st,
                    wmag,
                    min(b, lb_),
                    x1,
                    x2,
                    (np.float64(ly) - np.float64(v)) if up else (np.float64(v) - np.float64(ly)),
                )
        have, lb_, ly, lyb = True, b, v, np.uint64(yb[i])
    if found:
        ends[0], ends[3], ends[4] = 1, lb_, lyb


@numba.njit(cache=True, nogil=True, inline="always")
def _symmetry_gap(a, b, center, emin, p):
    """(|d|, tol) of one pair of binary64 outputs: d = a + b - center, the sum's rounding error kept (TwoSum),
    and tol = (ulp(a) + ulp(b)) / 2."""
    s = a + b
    bb = s - a
    e = (a - (s - bb)) + (b - bb)
    d = (s - center) + e
    return abs(d), 0.5 * (_ulp(a, emin, p) + _ulp(b, emin, p))


@numba.njit(cache=True, nogil=True, error_model="numpy")
def symmetry_pass(yp, yn, center, emin, p, bad, excess, close):
    """properties.symmetry_violations' binary64 pass, in one loop: for each pair, d = f(x) + f(-x) -
    center (the sum's rounding error kept: TwoSum), tol = (ulp(f(x)) + ulp(f(-x))) / 2; bad where not
    |d| <= tol, excess = |d| - tol, close where both outputs are finite and |d| is within 2^-40 tol of
    tol (decided exactly by the caller). The same operations, in the same order, as its NumPy form
    (17 passes and two ufunc calls a block, half the float32 symmetry enumeration)."""
    for i in range(yp.size):
        a = yp[i]
        b = yn[i]
        ad, tol = _symmetry_gap(a, b, center, emin, p)
        bad[i] = not (ad <= tol)
        excess[i] = ad - tol
        close[i] = abs(ad - tol) <= tol * 2.0**-40 and abs(a) < np.inf and abs(b) < np.inf


@numba.njit(cache=True, nogil=True, error_model="numpy")
def scan_symmetry(pos, neg, center, emin, p, st, wmag, close):
    """f(x) + f(-x) = center within (ulp(f(x)) + ulp(f(-x))) / 2, on every pair whose input is not NaN (the
    side's head: _finite_end), with symmetry_pass's arithmetic. A pair whose |d| is within 2^-40 tol of tol, both
    outputs finite, is left to the caller, who decides it exactly: its index goes to close, and the count of
    them is returned. A violation's magnitude is |d| - tol, its inputs (+m, -m)."""
    mags, xp, yp, _ = pos
    negb, _, yn, _ = neg
    n = _finite_end(xp)
    st[EVALUATED] += n
    # branch-free count first: nearly every block has no violation and no pair at the edge
    a_, b_ = yp[:n], yn[:n]
    flagged = 0
    for i in range(n):
        ad, tol = _symmetry_gap(np.float64(a_[i]), np.float64(b_[i]), center, emin, p)
        flagged += (abs(ad - tol) <= tol * 2.0**-40) | ~(ad <= tol)
    if flagged == 0:
        return 0
    k = 0
    for i in range(n):
        a = np.float64(yp[i])
        b = np.float64(yn[i])
        ad, tol = _symmetry_gap(a, b, center, emin, p)
        if abs(ad - tol) <= tol * 2.0**-40 and abs(a) < np.inf and abs(b) < np.inf:
            close[k] = i
            k += 1
        elif not (ad <= tol):
            _record(st, wmag, np.uint64(mags[i]), np.uint64(mags[i]), np.uint64(negb[i]), ad - tol)
    return k
