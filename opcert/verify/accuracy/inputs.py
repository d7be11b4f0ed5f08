"""Input sets for accuracy sweeps: exhaustive, or stratified samples plus hard cases."""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from opcert.formats import FloatFormat, from_bits, round_fraction
from opcert.spec.points import special_points

NEIGHBOURS = 4  # representable values on each side of every hard case


def exhaustive(fmt: FloatFormat) -> np.ndarray:
    """Every bit pattern of a format of at most 16 bits, in bit order."""
    if fmt.bits > 16:
        raise ValueError("exhaustive() enumerates 8- and 16-bit formats; binary32 uses the chunked sweep")
    return from_bits(np.arange(2**fmt.bits, dtype=np.uint64).astype(fmt.uint), fmt)


def from_ordinal(o, fmt: FloatFormat) -> np.ndarray:
    """The values of fmt at the given ordinals (the inverse of formats.ordinal; -0 is not produced)."""
    sign = np.uint64(1) << np.uint64(fmt.bits - 1)
    o = np.asarray(o, dtype=np.int64)
    mag = np.abs(o).astype(np.uint64)
    bits = np.where(o < 0, mag | sign, mag)
    return from_bits(bits.astype(fmt.uint), fmt)


def max_ordinal(fmt: FloatFormat) -> int:
    # the ordinal of +inf: every exponent field but the all-ones one, times the mantissas
    return (2 ** (fmt.bits - 1 - (fmt.p - 1)) - 1) << (fmt.p - 1)


def neighbours(points: list[Fraction], fmt: FloatFormat, k: int = NEIGHBOURS) -> np.ndarray:
    """Each point rounded to fmt, with k representable values on each side."""
    out = []
    top = max_ordinal(fmt)
    for q in points:
        r = round_fraction(q, fmt)
        if not np.isfinite(r):
            continue
        o = _ordinal_of(r, fmt)
        out.extend(range(max(o - k, -top), min(o + k, top) + 1))
    return from_ordinal(np.array(out, dtype=np.int64), fmt) if out else np.array([], dtype=fmt.dtype)


def _ordinal_of(value: float, fmt: FloatFormat) -> int:
    bits = int(np.array([value], dtype=np.float64).astype(fmt.dtype).view(fmt.uint)[0])
    sign = 1 << (fmt.bits - 1)
    return -(bits & (sign - 1)) if bits & sign else bits


def special_values(fmt: FloatFormat) -> np.ndarray:
    """Zeros, extreme subnormals and normals, the largest finite values,
    infinities, and NaNs (quiet and signalling, both signs)."""
    top = max_ordinal(fmt)
    mant = fmt.p - 1
    ords = [0, 1, 2, (1 << mant) - 1, 1 << mant, (1 << mant) + 1, top - 1, top]
    vals = from_ordinal(np.array(ords + [-o for o in ords], dtype=np.int64), fmt)
    exp_all = ((1 << (fmt.bits - 1)) - 1) ^ ((1 << mant) - 1)
    sign = 1 << (fmt.bits - 1)
    nans = [exp_all | (1 << (mant - 1)), exp_all | 1, sign | exp_all | (1 << (mant - 1)), sign | exp_all | 1]
    one = np.array([1.0, -1.0], dtype=np.float64).astype(fmt.dtype)
    return np.concatenate(
        [
            vals,
            from_bits(np.array(nans, dtype=np.uint64).astype(fmt.uint), fmt),
            np.array([-0.0], dtype=np.float64).astype(fmt.dtype),
            one,
        ]
    )


def stratified(fmt: FloatFormat, n: int, rng: np.random.Generator) -> np.ndarray:
    """About n finite values spread evenly over both signs and every binade
    (the subnormals are one more binade), uniform within each."""
    mags = stratified_magnitudes(fmt, max(1, n // 2), rng)
    both = np.concatenate([mags, mags | (np.uint64(1) << np.uint64(fmt.bits - 1))])
    return from_bits(both.astype(fmt.uint), fmt)


def _binades(fmt: FloatFormat) -> int:
    return (1 << (fmt.bits - fmt.p)) - 1  # exponent fields 0 .. max-1 (the subnormals are field 0)


def stratified_magnitudes(fmt: FloatFormat, n: int, rng: np.random.Generator) -> np.ndarray:
    """About n finite magnitudes (bit patterns without the sign), the same
    number in every binade, uniform within each."""
    mant = fmt.p - 1
    binades = _binades(fmt)
    per = max(1, n // binades)
    exps = np.repeat(np.arange(binades, dtype=np.uint64), per)
    m = rng.integers(0, 1 << mant, size=exps.size, dtype=np.uint64)
    return (exps << np.uint64(mant)) | m


def sample(
    op, fmt: FloatFormat, attrs: dict[str, Fraction], n: int, seed: int = 0, standard: str | None = None
) -> np.ndarray:
    """About n inputs, in bit order, closed under negation (every x with -x):
    stratified magnitudes over every binade, each with its upward neighbour
    (adjacent pairs for monotonicity), the special values, and the neighbours
    of the operator's special points (branch points, thresholds, saturation)
    at `standard`'s definition (None: the one its attributes name)."""
    rng = np.random.default_rng(seed)
    sign = np.uint64(1) << np.uint64(fmt.bits - 1)
    top = np.uint64(max_ordinal(fmt))  # +inf: the neighbour of the largest finite value
    base = stratified_magnitudes(fmt, max(1, n // 4), rng)
    # ascending (each binade's magnitudes sorted in place): the parts are then a few sorted runs, which
    # sorted_unique merges in linear time
    base = np.sort(base.reshape(-1, max(1, base.size // _binades(fmt))), axis=1).reshape(-1)
    parts = [base, np.minimum(base + np.uint64(1), top)]
    for extra in (special_values(fmt), neighbours(special_points(op, attrs, fmt, standard), fmt)):
        b = np.ascontiguousarray(np.asarray(extra, dtype=fmt.dtype)).view(fmt.uint).astype(np.uint64)
        parts.append(b & ~sign)
    mags = sorted_unique(np.concatenate(parts))
    bits = np.concatenate([mags, mags | sign])  # both halves ascending, the positive one first
    return from_bits(bits.astype(fmt.uint), fmt)


def sorted_unique(a: np.ndarray) -> np.ndarray:
    """np.unique by sorting: NumPy 2's hash-based unique is slower on 10^6 integers. Its callers give
    a few ascending runs (a sample's parts; a sample's two signs), which a stable sort (timsort) merges in
    linear time, on every CPU: NumPy's AVX-512 quicksort is slower than its AVX2 one on some AMD CPUs, and
    timsort on random data slower still (bench/README.md, 'Figures behind choices in the code')."""
    a = np.sort(a, kind="stable")
    return a[np.concatenate([[True], a[1:] != a[:-1]])] if a.size else a


def index_of(bits: np.ndarray):
    """A function mapping bit patterns (array or int) to their positions in `bits`."""
    order = np.argsort(bits, kind="stable")
    ordered = bits[order]

    def at(b):
        return order[np.searchsorted(ordered, b)]

    return at
