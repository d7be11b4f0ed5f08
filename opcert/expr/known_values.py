"""Passes over an array for a primitive whose value is known beforehand in some regions (expr.primitives'
_tanh_np): how many elements are known, their values written, the indices of the rest.

NumPy's forms of this take a pass and a fresh temporary per operation (abs, two compares, two selects),
and its masked ufunc loops (`where=`) are slow on the interleaved masks of a stratified sample: either
costs more than NumPy's tanh itself (bench/known_values.py; bench/README.md, 'Figures behind choices in
the code'). These loops have no branch on the data (a stratified sample's regions alternate
at random: a mispredicted branch an element), so they vectorise.
"""

from __future__ import annotations

import math

import numpy as np

from opcert.jit import numba


@numba.njit(cache=True, nogil=True)
def count_known(t, far_at, tiny_below):
    """How many elements of the 1-D t have |t| >= far_at or |t| < tiny_below (a NaN has neither)."""
    n = 0
    for i in range(t.size):
        a = abs(t[i])
        n += (a >= far_at) | (a < tiny_below)
    return n


@numba.njit(cache=True, nogil=True)
def fill_known(t, r, far_at, tiny_below, far_value):
    """r = far_value with t's sign where |t| >= far_at, r = t where |t| < tiny_below; elsewhere r is kept."""
    for i in range(t.size):
        v = t[i]
        a = abs(v)
        r[i] = math.copysign(far_value, v) if a >= far_at else (v if a < tiny_below else r[i])


@numba.njit(cache=True, nogil=True)
def rest_indices(t, far_at, tiny_below, rest):
    """The indices of the elements fill_known leaves, written to rest (one longer than their number: every
    element stores, only those advance; with a branch on the region, or with the fill in the same loop,
    it was slower: bench/README.md, 'Figures behind choices in the code'); returns their number."""
    k = 0
    for i in range(t.size):
        a = abs(t[i])
        rest[k] = i
        k += np.int64(not ((a >= far_at) | (a < tiny_below)))
    return k
