"""Accuracy statistics as a mergeable record: a sweep adds up chunks, in any
order and from any worker, and gets the same result as one pass."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields

import numpy as np

from opcert.formats import FloatFormat
from opcert.verify.accuracy import classify as C
from opcert.verify.ulp import HISTOGRAM_EDGES, round_up, ulp_error_exact

TOP = 8  # candidates kept for exact re-verification, per list
KINDS = ("nan_mismatch", "inf_mismatch", "signed_zero_mismatch", "subnormal_flush")
# Stats' counts, in the order of sweep_kernel.Tally's counts: the inputs, the correctly rounded, then KINDS'
COUNTS = ("n", "correctly_rounded", "nan_mismatches", "inf_mismatches", "signed_zero_mismatches", "subnormal_flushes")
HIST_LABELS = (
    ["0"]
    + [f"({lo:g}, {hi:g}]" for lo, hi in zip(HISTOGRAM_EDGES, HISTOGRAM_EDGES[1:])]
    + [f"> {HISTOGRAM_EDGES[-1]:g}"]
)


@dataclass
class Stats:
    n: int = 0
    correctly_rounded: int = 0
    nan_mismatches: int = 0
    inf_mismatches: int = 0
    signed_zero_mismatches: int = 0
    subnormal_flushes: int = 0
    histogram: list = field(default_factory=lambda: [0] * len(HIST_LABELS))
    max_distance: int = -1
    top: list = field(default_factory=list)  # [(estimated error, input bits)], largest first
    top_wrong: list = field(default_factory=list)  # the same among incorrectly rounded results
    first: dict = field(default_factory=dict)  # kind -> input bits of its first occurrence

    def merge(self, o: Stats) -> Stats:
        for k in COUNTS:
            setattr(self, k, getattr(self, k) + getattr(o, k))
        self.histogram = [a + b for a, b in zip(self.histogram, o.histogram)]
        self.max_distance = max(self.max_distance, o.max_distance)
        self.top = _best(self.top + o.top)
        self.top_wrong = _best(self.top_wrong + o.top_wrong)
        for k, v in o.first.items():
            self.first[k] = min(self.first.get(k, v), v)
        return self

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict) -> Stats:
        s = cls(**{f.name: d[f.name] for f in fields(cls)})
        s.top = [tuple(t) for t in d["top"]]
        s.top_wrong = [tuple(t) for t in d["top_wrong"]]
        return s


def _best(items):
    # largest error first; among equal errors the smallest input bits (first in bit order)
    return sorted({(float(e), int(b)) for e, b in items}, key=lambda t: (-t[0], t[1]))[:TOP]


def stats_of(bits: np.ndarray, err: np.ndarray, same_bits: np.ndarray, masks: dict, dist: np.ndarray) -> Stats:
    """Reduce per-element results (NumPy arrays over the same inputs) to Stats.
    err is NaN where the element is a special-value case; dist is -1 there."""
    s = Stats(n=int(bits.size), correctly_rounded=int(np.count_nonzero(same_bits)))
    for kind, attr in zip(KINDS, COUNTS[2:]):
        m = masks[kind]
        setattr(s, attr, int(np.count_nonzero(m)))
        if m.any():
            s.first[kind] = int(bits[m].min())
    e = err[~np.isnan(err)]
    s.histogram = histogram_counts(e)
    s.max_distance = int(dist.max()) if dist.size else -1
    ok = ~np.isnan(err)
    for name, mask in (("top", ok), ("top_wrong", ok & ~same_bits)):
        idx = np.nonzero(mask)[0]
        if idx.size > 4 * TOP:  # only the TOP largest errors (and ties with them) need sorting
            cut = _top_cut(err[idx], TOP)
            idx = idx[err[idx] >= cut]
        if idx.size:
            order = np.lexsort((bits[idx], -err[idx]))[:TOP]
            setattr(s, name, _best([(err[idx][i], bits[idx][i]) for i in order]))
    return s


def _top_cut(v: np.ndarray, k: int) -> float:
    """The k-th largest of v (no NaN), as np.partition gives it. np.partition over 10^6 errors was slow
    on an AVX-512 AMD host (NumPy's AVX-512 sort and select are slower than its AVX2 ones on that CPU:
    bench/README.md, 'Figures behind choices in the code'), so the selection runs on the values at
    or above a bound taken from a strided sample of about 8,192 of them: a bound with k values at or above
    it is at most the k-th largest, whose value the selection among them is then exactly."""
    step = v.size // 8192
    if step > 1:
        s = np.sort(v[::step])
        j = 1
        while j <= s.size:
            over = v[v >= s[-j]]
            if over.size >= k:
                return np.partition(over, over.size - k)[over.size - k]
            j *= 4
    return np.partition(v, v.size - k)[v.size - k]


def histogram_counts(e: np.ndarray) -> list:
    edges = HISTOGRAM_EDGES
    out = [int(np.count_nonzero(e == 0))]
    for lo, hi in zip(edges, edges[1:]):
        out.append(int(np.count_nonzero((e > lo) & (e <= hi))))
    out.append(int(np.count_nonzero(e > edges[-1])))
    return out


def float_stats(x, y, ref, fmt: FloatFormat, flush_allowed: bool = False, keep=None) -> Stats:
    """Per-element comparison of outputs y with the reference, reduced to Stats.
    flush_allowed: outputs flushed to zero where the reference is subnormal are
    counted but left out of the ULP figure. keep: a list that receives the
    per-element errors (for plots)."""
    with np.errstate(invalid="ignore"):
        y64 = np.ascontiguousarray(y.astype(np.float64)).reshape(-1)
        r64 = np.ascontiguousarray(ref.rounded.astype(np.float64)).reshape(-1)
    over_idx, over_err = [], []
    if fmt.name == "float64" and ref.exact_q is not None:  # rational exact values: the error in rationals
        at = ref.exact_at if ref.exact_at is not None else range(len(ref.exact_q))
        for i in at:
            q = ref.exact_q[i]
            if q is not None and not np.isnan(y64[i]):
                over_idx.append(i)
                over_err.append(float(round_up(ulp_error_exact(float(y64[i]), q, fmt))))
    n = x.size
    err, dist, flags = np.empty(n), np.empty(n, np.int64), np.empty(n, np.uint8)
    # A flush: 0 where the correctly rounded result is a non-zero subnormal, at least 3/4 ULP from
    # the exact value. A 0 just over half an ULP away (the exact value just above half the smallest
    # subnormal, rounded twice: Gelu(2^-149) in float32) is a rounding error, which the ULP figure
    # measures; tanh(2^-24) -> 0 in float16 (0.99997 ULP) is a flush. A correctly rounded infinity
    # (the exact value beyond the largest finite value plus half its ULP) is exact, whatever the
    # formula's 2**(emax+1) gives.
    C.classify(
        C.Compared(
            y64,
            r64,
            np.ascontiguousarray(y).view(fmt.uint).astype(np.uint64).reshape(-1),
            np.ascontiguousarray(ref.rounded).view(fmt.uint).astype(np.uint64).reshape(-1),
            np.ascontiguousarray(ref.exact_hi, dtype=np.float64).reshape(-1),
            np.ascontiguousarray(ref.exact_lo, dtype=np.float64).reshape(-1),
            np.zeros(n, bool)
            if ref.ambiguous_binade is None
            else np.ascontiguousarray(ref.ambiguous_binade).reshape(-1),
        ),
        C.Overrides(np.array(over_idx, dtype=np.int64), np.array(over_err, dtype=np.float64)),
        C.Precision(fmt.emin, fmt.p, fmt.emax, fmt.bits),
        bool(flush_allowed),
        C.Classified(err, dist, flags),
    )
    if keep is not None:
        keep.append(err)
    masks = {
        k: (flags & bit) != 0
        for k, bit in (
            ("nan_mismatch", C.NAN_MM),
            ("inf_mismatch", C.INF_MM),
            ("signed_zero_mismatch", C.SIGNED_ZERO_MM),
            ("subnormal_flush", C.FLUSH),
        )
    }
    # bit patterns as unsigned integers: a 64-bit pattern with the sign bit set is no int64
    bits = np.ascontiguousarray(x).view(fmt.uint).astype(np.uint64)
    return stats_of(bits, err, (flags & C.CORRECT) != 0, masks, dist)
