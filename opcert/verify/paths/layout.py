"""Layout invariance: the `layout` property every element-wise operator declares.

An element-wise operator maps each element on its own, so a kernel's output
for x must not depend on where x sits: the call's length, the element's
position in it, the buffer's alignment, strides, shape, threads, in-place
execution. A kernel has a code path for each (the vector body, the loop's
remainder, a path for short calls, a peeling loop up to an aligned address,
a strided loop, per-thread chunks), and opcert's accuracy measurement, on
long contiguous blocks, runs the body. This check runs the others and
compares every output, bit for bit (any NaN equals any NaN), with the output
of the same input in the measurement's own call.

The layouts (`families`), each run where the target can be given it
(targets.layouts.LayoutSupport says which; the verdict lists the others and why):

- lengths: every length n = 1..L, every input at every position (L = twice
  the widest vector, 64 bytes, plus one: 129 for 16-bit formats, 65 for
  binary32, 33 for binary64: see `longest`). Given as rows of 2-D strided views (torch,
  NumPy callables: each call holds the rows of about ROW_BLOCK elements), as many calls made by compiled
  code (C) or by a graph of independent nodes (ONNX Runtime), else as separate
  calls on a sample (`CALLS_PER_LENGTH` per length);
- offsets: a call of L elements starting 2, 4, 8, 16, 32 and 48 bytes past a
  64-byte boundary (those that are whole elements), every input at every
  position: the elements before the first 16-, 32- and 64-byte aligned address;
- strides and shapes: every input through a view with stride 2, a transposed
  2-D array, a 3-d and an 8-d array, 0-d arrays (a sample) and empty arrays;
- threads: 1 and every core, on calls long enough to be split, of a length
  that puts every chunk's remainder inside;
- in place: every input at every length through the kernel's in-place form.

Over every input of a 16-bit format, with the lengths given as calls (or as
rows the target runs as calls), the verdict is `proved` or `refuted`;
elsewhere `checked` or `refuted`. A refutation names the input, the layout
and the two outputs, and is replayed (the layout run again) before it is
reported. The accuracy of a check is the worst over every layout run: an
output that differs is measured against the reference too.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import namedtuple
from dataclasses import dataclass, field

import numpy as np

from opcert.errors import TargetFailure
from opcert.formats import FloatFormat, bits_differ, hex_bits
from opcert.jit import numba
from opcert.targets.layouts import aligned_empty, padded_stride, row_buffer
from opcert.targets.layouts import cores as host_cores
from opcert.verify.properties.checks import value_of
from opcert.verify.result import PropertyResult
from opcert.verify.ulp import ordinal_distance

VECTOR_BYTES = 64  # the widest vector the lengths cover (AVX-512, SVE-512)
CALLS_PER_LENGTH = 8  # separate calls per length where each call is made from Python
# Rows go to the target in calls of about this many elements, not in one view of every row: a row's path
# is its length, its alignment and its strides, none of which depends on how many rows share its call,
# and 10^6 rows of 65 in one call are 10^8-element temporaries; smaller calls cost onnx.reference more in its
# per-call overhead (bench/README.md, 'Figures behind choices in the code'). A block's first row is a
# multiple of ROW_ALIGN rows, so every row starts at the alignment it has in one whole view.
ROW_BLOCK = 1 << 20
ROW_ALIGN = 32  # rows of stride (n + 1) elements of 2 bytes or more: 32 rows span 64-byte lines
EXAMPLES = 32  # differing inputs per family measured against the reference
# What a layout verdict covers, in its method: `proved` is an enumeration over the families named, never a
# statement about what a black box does outside them (docs/code-paths.md)
SCOPE = (
    "Outside this scope a kernel could still differ: lengths, alignments and thread counts other than those "
    "named, neighbour values other than the classes named, other ISA levels than the host's (--isa all "
    "compares those a runtime lets a process choose), other processes' state or library versions"
)
MIXED_SHORT = 32  # the mixed vectors' short calls (C, ONNX Runtime): 64 bytes of 16-bit lanes
MIXED_VALUES = 1 << 16  # inputs through the mixed vectors where there are more (a float32 sweep's sample)
ONE_ELEMENT_BATCH = 4096  # one-element calls made under one supervised call
CONCURRENT_THREADS = 4  # threads calling the kernel at once (or every core, where there are more)


@numba.njit(cache=True, nogil=True)
def count_window_differ(got, base, magnitude, inf):
    """How many elements of got (2-D, C order, bits) differ from the windows of base that the rows were
    made of (row r: base[r], base[r + 1], ...), any NaN equal to any NaN (formats.bits_differ's rule):
    magnitude masks the sign off, a NaN's magnitude is above inf. Without a branch on the data, on unit
    strides: the loop vectorises. bits_differ on the strided windows made three passes and temporaries,
    slower on long rows and on short (bench/README.md, 'Figures behind choices in the code')."""
    n = 0
    for r in range(got.shape[0]):
        g = got[r]
        for c in range(g.size):
            a, b = g[c], base[r + c]
            n += (a != b) & ~(((a & magnitude) > inf) & ((b & magnitude) > inf))
    return n


def passes_shifted(nv: int, size: int) -> np.ndarray:
    """(i + i // nv) % nv for i in 0..size-1: passes over the inputs 0..nv-1, each one position later than
    the one before. Made from slices of one range, not computed per element: the integer divisions cost a
    float32 sweep's layout check more than its other long calls (bench/README.md, 'Figures behind choices in
    the code')."""
    if size <= nv:  # within the first pass
        return np.arange(size, dtype=np.int64)
    if size > 64 * nv:  # many short passes (a small sample): the divisions cost less than a loop of slices
        i = np.arange(size, dtype=np.int64)
        return (i + i // nv) % nv
    base = np.arange(nv, dtype=np.int64)
    out = np.empty(size, np.int64)
    for q, a in enumerate(range(0, size, nv)):
        seg = out[a : min(a + nv, size)]
        k = q % nv  # this pass starts at input k and wraps round
        head = min(seg.size, nv - k)
        seg[:head] = base[k : k + head]
        seg[head:] = base[: seg.size - head]
    return out


def enumerable(sup) -> bool:
    """Whether every input can go through every short call of this target (so that the verdict can be a
    proof): calls made in bulk (C, ONNX Runtime), or rows the target runs as calls (torch, onnx.reference)."""
    return sup.calls is not None or (sup.rows and sup.rows_are_calls)


def longest(fmt: FloatFormat) -> int:
    """L: twice the longest step of a vector loop, plus one. A step is two 64-byte vectors of binary32 or
    binary64 lanes (loops unroll by two; 16-bit kernels compute in binary32 lanes: 32 inputs per vector), so
    every remainder of such a loop, and of any narrower one, is a length from 1 to L."""
    size = fmt.bits // 8
    return 2 * (2 * VECTOR_BYTES // max(size, 4) * (2 if size < 4 else 1)) + 1


def byte_offsets(fmt: FloatFormat) -> list[int]:
    size = fmt.bits // 8
    return sorted({o for o in (2, 4, 8, 16, 32, 48) if o % size == 0})


@dataclass
class Family:
    name: str
    how: str = ""
    evaluated: int = 0
    complete: bool = True  # every value given was at every position this family names
    differ: int = 0
    examples: list = field(default_factory=list)  # [(value index, got bits, layout words, redo)]
    errors: list = field(default_factory=list)  # what a layout made the target do (raise, wrong shape)
    inputs: int = 0  # how many distinct inputs went through it (LayoutCheck.run sets it)
    parts: list = field(default_factory=list)  # [(a layout's words, outputs differing there)], where named
    elapsed_s: float = 0.0

    def failed(self, exc: TargetFailure) -> None:
        """A layout made the target fail: its message (which names the layout), once."""
        if str(exc) not in self.errors:
            self.errors.append(str(exc))

    @property
    def scope(self) -> str:
        return f"{'every' if self.complete else 'a sample of the'} {self.inputs:,} inputs, at the positions named"

    def summary(self) -> dict:
        return {
            "family": self.name,
            "how": self.how,
            "evaluated": self.evaluated,
            "complete": self.complete,
            "inputs": self.inputs,
            "scope": self.scope,
            "elapsed_s": round(self.elapsed_s, 4),
            "differ": self.differ,
            "errors": self.errors[:3],
            **({"parts": [{"layout": w, "differ": d} for w, d in self.parts]} if self.parts else {}),
        }


# The measurement's own call, which every layout is compared with: the inputs every layout runs, their outputs
# there, which call it was, and (inputs ascending by bits, their outputs there) for the families whose cost is
# one call per input (mixed vectors, long calls, caller threads): a superset of the values, or None.
Measured = namedtuple("Measured", "values outputs layout wide", defaults=(None,))


@dataclass(frozen=True)
class _MixedPass:
    """One pass of the mixed vectors: the inputs at the `parity` positions alternating with the neighbour
    `cb` (bits; `cval` its text), in one call (n None) or in calls of n elements."""

    cb: int
    cval: str
    parity: int
    n: int | None

    def input_at(self, i: int) -> int:
        """The position of the i-th input in the vectors."""
        return 2 * i + self.parity

    def neighbour_at(self, i: int) -> int:
        """The position of the neighbour beside the i-th input."""
        return 2 * i + 1 - self.parity

    def call_of(self, pos: int, size: int) -> str:
        """The call that holds position pos of the vectors (size elements in all), in words."""
        return f"calls of {self.n} elements (call {pos // self.n:,})" if self.n else f"a call of {size:,} elements"

    def within(self, pos: int) -> int:
        """Position pos of the vectors within its own call."""
        return pos % self.n if self.n else pos


class LayoutCheck:
    """Every layout the target can be given, compared with the target's outputs in the measurement's call."""

    def __init__(self, op, tgt, fmt: FloatFormat, attrs, measured: Measured, whole_format: bool, points=()):
        self.op, self.tgt, self.fmt, self.attrs = op, tgt, fmt, attrs
        self.points = list(points)  # the operator's branch points and thresholds: neighbours in mixed vectors
        self.wide = measured.wide
        self.values = np.ascontiguousarray(measured.values)
        self.nv = self.values.size
        self.uint = fmt.uint
        self.base = np.ascontiguousarray(measured.outputs).view(self.uint)
        self.base_layout = measured.layout
        self.whole = whole_format
        self.L = longest(fmt)
        pad = self.L + 1
        # cyclic: a window may run past the last value into the first ones, however few values there are
        # (np.resize repeats; fewer values than a window's length read past a plain concatenation's end)
        self.vext = np.resize(self.values, self.nv + pad)
        self.bext = np.resize(self.base, self.nv + pad)
        self.families: list[Family] = []
        self.progress = lambda text: None  # told each layout as it starts, where a caller sets it
        # a NaN is a value whose magnitude's bits are above infinity's (every format opcert knows)
        inf = np.array([np.inf]).astype(fmt.dtype).view(self.uint)[0]
        self._nan_bits = (self.uint.type((1 << (fmt.bits - 1)) - 1), self.uint.type(inf))

    # -- comparing ----------------------------------------------------------------------
    def _windows(self, a: np.ndarray, m: int, n: int, step: int = 1) -> np.ndarray:
        """(m, n) windows: row r holds a[(r * step + p) % nv] at position p (no copy)."""
        return np.lib.stride_tricks.as_strided(a, (m, n), (a.strides[0] * step, a.strides[0]), writeable=False)

    def _compare(self, fam: Family, got: np.ndarray, want: np.ndarray, index, words, redo, base=None) -> None:
        """got, want: arrays of bits of one shape; index(i) -> the value index of flat position i; words(i) ->
        the layout of position i; redo(i) -> the bits the layout gives there when run again. base: where want
        is self._windows(base, ...) (step 1), for the one-pass count of the common case, no difference."""
        got = np.asarray(got).view(self.uint)
        fam.evaluated += got.size
        if (
            base is not None
            and got.ndim == 2
            and got.flags.c_contiguous
            and not count_window_differ(got, base, *self._nan_bits)
        ):
            return
        # in the arrays' own shapes (no copy of 10^8 elements); any NaN equals any NaN
        bad = np.flatnonzero(bits_differ(got, want, self.fmt))
        if not bad.size:
            return
        g = np.ascontiguousarray(got).reshape(-1)
        w = np.ascontiguousarray(want).reshape(-1)
        fam.differ += int(bad.size)
        # the examples: the first few in the layout's order, and those furthest from the measurement's output
        # (by ordinal distance), among which the check's worst error in another layout is found
        # (as floats: binary64's ordinals overflow a difference); infinite where a NaN meets a number (two
        # NaNs never differ here): the furthest of all, kept before any finite one (its error is infinite)
        dist = ordinal_distance(g[bad], w[bad], self.fmt)
        nan = np.isinf(dist)
        far = np.argpartition(-dist, EXAMPLES)[:EXAMPLES] if dist.size > 4 * EXAMPLES else np.arange(dist.size)
        far = far[np.argsort(-dist[far], kind="stable")][:EXAMPLES]
        picks = list(range(min(8, bad.size))) + list(far) + list(np.flatnonzero(nan)[:4])
        have = {e[0]: j for j, e in enumerate(fam.examples)}
        for p in picks:
            i, d = int(bad[p]), float(dist[p])
            k = int(index(i))
            if k in have:
                continue
            entry = (k, int(g[i]), words(i), lambda i=i: redo(i), d)
            if len(fam.examples) < 2 * EXAMPLES:
                have[k] = len(fam.examples)
                fam.examples.append(entry)
            else:  # replace the nearest held (not one of the first 8)
                j = min(range(8, len(fam.examples)), key=lambda j: fam.examples[j][4])
                if fam.examples[j][4] < d:
                    del have[fam.examples[j][0]]
                    fam.examples[j] = entry
                    have[k] = j

    def _run(self, fam: Family, x: np.ndarray, label: str, call=None, keep_layout=True, owned=False, counted=False):
        try:
            return self.tgt.run(
                self.op, x, self.attrs, label=label, keep_layout=keep_layout, call=call, owned=owned, counted=counted
            )
        except TargetFailure as exc:
            fam.failed(exc)
            return None

    # -- the families ---------------------------------------------------------------------
    def run(self) -> None:
        sup = self.tgt.layouts
        t0 = time.perf_counter()
        for family in (self.lengths, self.offsets, self.views, self.in_place):
            self._timed(family, sup)
        self.few = self.nv
        for f in self.families:
            f.inputs = self.nv
        self._widen()
        k = len(self.families)
        for family in (self.mixed, self.long_calls, self.concurrent):
            self._timed(family, sup)
        for f in self.families[k:]:
            f.inputs = f.inputs or self.nv
        self.elapsed = time.perf_counter() - t0

    def _timed(self, family, sup) -> None:
        """Run one family's method; the families it added get its time (shared where it adds several)."""
        k, t0 = len(self.families), time.perf_counter()
        family(sup)
        added = self.families[k:]
        for f in added:
            f.elapsed_s = (time.perf_counter() - t0) / len(added)

    def _widen(self) -> None:
        """From here on the families run over `wide` (every input of the measurement, or its sample): the
        examples found so far are renumbered into it."""
        if self.wide is None:
            return
        wv, wb = (np.ascontiguousarray(a) for a in self.wide)
        if wv.size <= self.nv:
            return
        wbits = wv.view(self.uint)
        at = np.searchsorted(wbits, self.values.view(self.uint))
        for f in self.families:
            f.examples = [(int(at[e[0]]),) + tuple(e[1:]) for e in f.examples]
        self.values, self.base, self.nv = wv, wb.view(self.uint), wv.size

    def _rows(
        self, n: int, offset: int = 0, stride: int | None = None, rows: tuple[int, int] | None = None
    ) -> np.ndarray:
        """Rows b0..b1 (default: all nv) of n elements: row r holds values r, r + 1, ... (cyclically)."""
        b0, b1 = rows or (0, self.nv)
        x = row_buffer(b1 - b0, n, self.values.dtype, stride or n + 1, offset)
        x[...] = self._windows(self.vext[b0:], b1 - b0, n)
        return x

    def _row_calls(
        self, fam: Family, n: int, label, where, offset: int = 0, stride: int | None = None, call=None
    ) -> bool:
        """Every row of n elements through the target, in calls of about ROW_BLOCK elements, each call's
        outputs compared as they come; where(m, row, position) names a position of a call of m rows. False
        where a call failed (its failure is in fam.errors; the other calls are compared)."""
        nv = self.nv
        per = max(ROW_ALIGN, ROW_BLOCK // n // ROW_ALIGN * ROW_ALIGN)
        spans = [(b0, min(b0 + per, nv)) for b0 in range(0, nv, per)]
        # made as the calls take them (a generator): a few blocks' buffers at a time, not every row's
        xs = (self._rows(n, offset, stride, span) for span in spans)
        ok = True
        for (b0, b1), y in zip(
            spans, self.tgt.run_each(self.op, xs, self.attrs, [label(b - a) for a, b in spans], call=call)
        ):
            if isinstance(y, TargetFailure):
                fam.failed(y)
                ok = False
                continue
            self._compare(
                fam,
                y.view(self.uint),
                self._windows(self.bext[b0:], b1 - b0, n),
                lambda i, b0=b0: (b0 + i // n + i % n) % nv,
                lambda i, m=b1 - b0: where(m, i // n, i % n),
                lambda i, span=(b0, b1): self._redo(lambda: self._rows(n, offset, stride, span), i, call=call),
                self.bext[b0:],
            )
        return ok

    def lengths(self, sup) -> None:
        nv, L = self.nv, self.L
        if sup.rows:
            fam = Family(
                "lengths",
                f"every length 1..{L} and every position: rows of 2-D views ({nv:,} rows of "
                f"n elements, row stride n + 1, so rows start at every alignment; calls of "
                f"{ROW_BLOCK:,} elements or fewer)"
                + (
                    "; the target runs a row through the loop a call of n runs"
                    if sup.rows_are_calls
                    else "; rows run the inner loop, not a call's own code: short calls are sampled below"
                ),
                complete=sup.rows_are_calls,
            )
            self.families.append(fam)
            self._rows_of_every_length(fam)
        if sup.calls is not None:
            fam = Family(
                "calls",
                f"every length 1..{L}: {nv:,} calls of each length, every input at every position "
                "(made by compiled code or one graph, not one by one from Python)",
            )
            self.families.append(fam)
            for n in range(1, L + 1):
                self.progress(f"layout: calls of {n} of {L}")
                self._many_calls(fam, sup, n, 0, False)
        else:
            self._sampled_calls(sup)

    def _many_calls(self, fam, sup, n, offset, in_place) -> None:
        nv = self.nv
        where = f"{' in place' if in_place else ''}{f' at {offset} bytes past a 64-byte boundary' if offset else ''}"
        words = f"{nv:,} calls of {n} element(s){where} (layout check)"
        counted = 0  # outputs the counted calls found differing
        if sup.count_calls is not None:
            # the same calls, each compared as it is made: where none differs, that is the family's finding
            # (bench/README.md, 'Figures behind choices in the code'); where some do, the calls are made again
            # below, to name them
            count = lambda op, xx, attrs: sup.count_calls(
                op, self.vext, self.bext, nv, n, attrs, offset, in_place, self._nan_bits
            )
            size = np.broadcast_to(np.zeros(1, self.fmt.dtype), (nv * n,))  # the calls' inputs, for their time limit
            counted = self._run(fam, size, words, call=count, owned=True, counted=True)
            if counted is None:
                fam.complete = False
                return
            if counted == 0:
                fam.evaluated += nv * n
                return
        before = fam.differ
        x = self._windows(self.vext, nv, n)
        call = lambda op, xx, attrs: sup.calls(op, xx, attrs, offset, in_place)
        # owned: calls() copies the windows into buffers of its own before the kernel sees them
        y = self._run(fam, x, words, call=call, owned=True)
        if y is None:
            fam.complete = False
            return
        self._compare(
            fam,
            y.view(self.uint),
            self._windows(self.bext, nv, n),
            lambda i: (i // n + i % n) % nv,
            lambda i: f"a call of {n} element(s){where}, position {i % n}",
            lambda i, nv=nv: self._redo_call(sup, n, offset, in_place, i, nv),
            self.bext,
        )
        if counted and fam.differ == before:  # the same calls gave other bits the second time: never a pass
            fam.errors.append(
                f"{counted:,} outputs of {nv:,} calls of {n} element(s){where} differed from the measurement's when "
                "counted, and none when the same calls were made again: the kernel's outputs are not the same "
                "from one run of the same calls to the next"
            )

    def _one_element_calls(self) -> None:
        """Every input alone in a call of one element: a runtime that compiles per shape (XLA) runs other code
        for it than for the measurement's long call, and 8 such calls decide nothing. The calls are separate
        calls under run()'s contract, made in batches under one isolation each (Target.run_calls)."""
        nv = self.nv
        fam = Family(
            "one-element calls",
            f"each of the {nv:,} inputs alone in a call of one element (the target compiles code per shape)",
        )
        self.families.append(fam)
        for b0 in range(0, nv, ONE_ELEMENT_BATCH):
            b1 = min(nv, b0 + ONE_ELEMENT_BATCH)
            self.progress(f"layout: one-element calls {b0:,} of {nv:,}")
            ys = self._run_calls(
                fam,
                [self.values[k : k + 1] for k in range(b0, b1)],
                (f"a call of one element, input {k:,} of {nv:,} (layout check)" for k in range(b0, b1)),
                f"{b1 - b0:,} calls of one element each (layout check)",
            )
            if ys is None:
                fam.complete = False
                continue
            self._compare(
                fam,
                np.concatenate(ys).view(self.uint),
                self.base[b0:b1],
                lambda i, b0=b0: b0 + i,
                lambda i: "a call of one element",
                lambda i, b0=b0, v=self.values: self._redo(
                    lambda: np.array(v[b0 + i : b0 + i + 1]), 0, keep_layout=False
                ),
            )

    def _sampled_calls(self, sup) -> None:
        """Separate calls from Python: CALLS_PER_LENGTH per length, the inputs spread over the values."""
        if sup.compiles_per_shape:
            self._one_element_calls()
        nv, L, c = self.nv, self.L, CALLS_PER_LENGTH
        cross = sup.rows and sup.rows_are_calls
        fam = Family(
            "calls",
            f"every length 1..{L}: {c} separate calls of each length, every position "
            f"({c} inputs per position; the target is called once per call from Python)"
            + (": a cross-check of the rows above" if cross else ": sampled"),
            complete=cross,
        )
        self.families.append(fam)
        rng = np.random.default_rng(12345)
        for n in range(1, L + 1):
            self.progress(f"layout: calls of {n} of {L}")
            for _ in range(c):
                start = int(rng.integers(nv))
                idx = (start + np.arange(n)) % nv
                y = self._run(fam, self.values[idx], f"a call of {n} element(s) (layout check)", keep_layout=False)
                if y is None:
                    continue
                self._compare(
                    fam,
                    y.view(self.uint),
                    self.base[idx],
                    lambda i, idx=idx: idx[i],
                    lambda i, n=n: f"a call of {n} element(s), position {i}",
                    lambda i, idx=idx, v=self.values: self._redo(lambda: v[idx].copy(), i, keep_layout=False),
                )

    def _run_calls(self, fam: Family, xs, labels, batch: str):
        try:
            return self.tgt.run_calls(self.op, xs, self.attrs, labels, batch)
        except TargetFailure as exc:
            fam.failed(exc)
            return None

    def offsets(self, sup) -> None:
        L = self.L
        offs = byte_offsets(self.fmt)
        if sup.calls is not None and sup.offsets:
            fam = Family(
                "offsets",
                f"a call of {L} elements at {', '.join(map(str, offs))} bytes past a 64-byte "
                "boundary, every input at every position",
            )
            self.families.append(fam)
            for o in offs:
                self.progress(f"layout: offset {o}")
                self._many_calls(fam, sup, L, o, False)
        elif sup.rows and sup.offsets:
            fam = Family(
                "offsets",
                f"rows of {L} elements starting {', '.join(map(str, offs))} bytes past a 64-byte "
                "boundary (row stride a whole number of 64-byte lines), every input at every "
                "position",
                complete=sup.rows_are_calls,
            )
            self.families.append(fam)
            stride = padded_stride(L, self.fmt.bits // 8)
            for o in offs:
                self.progress(f"layout: offset {o}")
                if not self._row_calls(
                    fam,
                    L,
                    lambda m, o=o: f"{m:,} rows of {L} at offset {o} (layout check)",
                    lambda m, r, p, o=o: (
                        f"row {r:,} of {m:,} rows of {L} elements starting {o} "
                        f"bytes past a 64-byte boundary, position {p}"
                    ),
                    o,
                    stride,
                ):
                    fam.complete = False

    def views(self, sup) -> None:
        if not sup.views:
            return
        nv, v = self.nv, self.values
        fam = Family(
            "strides and shapes",
            "every input through a view with stride 2, a transposed 2-D array, a 3-d "
            "and an 8-d array; 0-d arrays and empty arrays",
        )
        self.families.append(fam)
        self.progress("layout: strides and shapes")
        ident = np.arange(nv)

        def strided():
            buf = np.empty(2 * nv, v.dtype)
            buf[::2] = v
            return buf[::2]

        def transposed():
            a = _split(nv)
            return np.asfortranarray(v.reshape(a, nv // a))

        shapes = [("a view with stride 2", strided, ident)]
        if _split(nv) > 1:
            shapes.append(("a transposed (Fortran-order) 2-D array", transposed, ident))
        for name, dims in (("a 3-d array", 3), ("an 8-d array", 8)):
            shp = _shape(nv, dims)
            if shp:
                shapes.append((f"{name} of shape {shp}", lambda shp=shp: v.reshape(shp), ident))
        for name, make, _idx in shapes:
            x = make()
            y = self._run(fam, x, f"{name} (layout check)")
            if y is None:
                continue
            # element i of x in C order is value i (transposed: the same values, read in C order)
            got = np.ascontiguousarray(y).reshape(-1)
            want_idx = np.ascontiguousarray(x).reshape(-1)
            order = _value_index(self.values, want_idx)
            self._compare(
                fam,
                got.view(self.uint),
                self.base[order],
                lambda i, order=order: order[i],
                lambda i, name=name, shape=x.shape: (
                    f"{name}, element {tuple(int(k) for k in np.unravel_index(i, shape))}"
                ),
                lambda i, make=make: self._redo(make, i),
            )
        for shp in ((0,), (3, 0, 2)):
            self._run(fam, np.empty(shp, v.dtype), f"an empty array of shape {shp} (layout check)")
        sample = np.linspace(0, nv - 1, min(nv, 16)).astype(np.int64)
        zero_d = Family(
            "0-d arrays",
            f"{sample.size} inputs, each alone in a 0-d array"
            + (
                " (a cross-check: the target runs a 0-d array through a one-element call's loop, which "
                "the lengths cover)"
                if sup.rows_are_calls
                else " (sampled)"
            ),
            complete=sup.rows_are_calls or sample.size == nv,
        )
        self.families.append(zero_d)
        for k in sample:
            x = self.values[k : k + 1].reshape(())
            y = self._run(zero_d, x, "a 0-d array (layout check)")
            if y is not None:
                self._compare(
                    zero_d,
                    np.asarray(y).reshape(1).view(self.uint),
                    self.base[k : k + 1],
                    lambda i, k=k: k,
                    lambda i: "a 0-d array",
                    lambda i, k=k, v=self.values: self._redo(lambda: v[k : k + 1].reshape(()), 0),
                )

    def mixed(self, sup) -> None:
        """Every input in vectors whose other lanes hold a value of another magnitude class or sign. Kernels
        choose their path per vector (MLAS: a vector with a lane past the saturation point, a NaN or an
        infinity goes another way), and a window of the bit-ordered inputs never mixes classes: here each
        input alternates with one neighbour value, so every aligned vector of 2 lanes or more (16, 32 and 64
        bytes alike) holds inputs and that neighbour; then the inputs at the odd positions."""
        nv, fmt = self.nv, self.fmt
        classes = self.neighbour_classes()
        pick = np.arange(nv) if nv <= MIXED_VALUES else np.linspace(0, nv - 1, MIXED_VALUES).astype(np.int64)
        every = pick.size == nv
        fam = Family(
            "mixed vectors",
            f"{'every input' if every else f'{pick.size:,} of the {nv:,} inputs'} "
            f"alternating with each of {len(classes)} neighbour values (both signs of "
            "zero, subnormal, tiny, moderate, saturated, the largest finite, infinite "
            "values, NaN and the operator's branch points), at even and at odd "
            "positions of a 64-byte-aligned call: every aligned vector of 16, 32 or 64 "
            "bytes mixes the input's class with the neighbour's",
            complete=every,
        )
        fam.inputs = pick.size
        self.families.append(fam)
        vals = self.values[pick]
        value_bits = self.values.view(self.uint)

        def where_of(cb: int) -> int | None:
            # one comparison per neighbour, not a dict of every input (bench/README.md, 'The layout check's mixed
            # vectors')
            at = np.flatnonzero(value_bits == self.uint.type(cb))
            return int(at[-1]) if at.size else None

        # where the target takes many calls at once (C, ONNX Runtime), the same vectors in short calls too:
        # a kernel's path for short calls may pick its way per vector as well
        short = sup.calls is not None and (2 * pick.size) % MIXED_SHORT == 0
        forms = [None] + ([MIXED_SHORT] if short else [])
        for j, cb in enumerate(classes):
            cval = hex_bits(self.uint.type(cb).view(fmt.dtype), fmt)
            self.progress(f"layout: mixed vectors, neighbour {j + 1} of {len(classes)}")
            for parity, n in ((p, n) for n in forms for p in (0, 1)):
                mp = _MixedPass(cb, cval, parity, n)
                y = self._run_mixed(fam, sup, self._alternating(vals, mp), mp)
                if y is None:
                    fam.complete = False
                    continue
                yb = np.ascontiguousarray(y).view(self.uint)
                self._compare_mixed(fam, sup, yb, pick, vals, mp, where_of(cb))

    def _alternating(self, vals: np.ndarray, mp: _MixedPass) -> np.ndarray:
        """A 64-byte-aligned call of the inputs `vals` at mp.parity positions, mp's neighbour at the others."""
        raw, start = aligned_empty(2 * vals.size * self.fmt.dtype.itemsize)
        x = np.ndarray((2 * vals.size,), dtype=self.fmt.dtype, buffer=raw, offset=start)
        xb = x.view(self.uint)
        xb[mp.parity :: 2] = vals.view(self.uint)
        xb[1 - mp.parity :: 2] = mp.cb
        return x

    def _run_mixed(self, fam: Family, sup, x: np.ndarray, mp: _MixedPass) -> np.ndarray | None:
        """The outputs of one pass's vectors x, flat: in one call, or in calls of mp.n made in bulk."""
        if mp.n is None:
            return self._run(
                fam,
                x,
                f"{x.size // 2:,} inputs alternating with {mp.cval} (layout check)",
                keep_layout=True,
                owned=True,
            )
        y = self._run(
            fam,
            x.reshape(-1, mp.n),
            f"{x.size // mp.n:,} calls of {mp.n} elements alternating inputs with {mp.cval} (layout check)",
            owned=True,
            call=lambda op, xx, attrs: sup.calls(op, xx, attrs, 0, False),
        )
        return None if y is None else y.reshape(-1)

    def _compare_mixed(self, fam: Family, sup, yb: np.ndarray, pick, vals, mp: _MixedPass, k: int | None) -> None:
        """One pass's outputs yb (bits) compared: the inputs' with the measurement's, and the neighbour's with
        its own there where it is one of the inputs (value index k)."""
        size = 2 * pick.size

        def again(pos):
            if mp.n is None:
                return self._redo(lambda: self._alternating(vals, mp), pos, keep_layout=True)
            return self._redo(
                lambda: self._alternating(vals, mp).reshape(-1, mp.n),
                pos,
                call=lambda op, xx, attrs: sup.calls(op, xx, attrs, 0, False),
            )

        self._compare(
            fam,
            yb[mp.parity :: 2],
            self.base[pick],
            lambda i: pick[i],
            lambda i: (
                f"{mp.call_of(mp.input_at(i), size)} alternating inputs with the neighbour {mp.cval} (inputs at "
                f"{'even' if mp.parity == 0 else 'odd'} positions), position {mp.within(mp.input_at(i)):,}"
            ),
            lambda i: again(mp.input_at(i)),
        )
        if k is not None:
            self._compare(
                fam,
                yb[1 - mp.parity :: 2],
                np.full(pick.size, self.base[k], self.uint),
                lambda i: k,
                lambda i: (
                    f"{mp.call_of(mp.neighbour_at(i), size)} alternating inputs with the neighbour {mp.cval}, "
                    f"the neighbour at position {mp.within(mp.neighbour_at(i)):,}"
                ),
                lambda i: again(mp.neighbour_at(i)),
            )

    def neighbour_classes(self) -> list[int]:
        """The neighbour values of the mixed vectors, as bits: a ladder of magnitude classes with both signs,
        the infinities and a NaN, and the operator's branch points and thresholds (self.points)."""
        fmt = self.fmt
        tiny, sub, big = 2.0**fmt.emin, float(fmt.min_subnormal), float(fmt.max_finite)
        mags = [0.0, sub, tiny, 2.0**-12, 0.5, 1.0, 3.0, 12.0, 100.0, big / 4, big, np.inf]
        mags += [abs(float(p)) for p in self.points]
        out: list[int] = []
        for m in mags:
            for sgn in (1.0, -1.0):
                with np.errstate(over="ignore", invalid="ignore"):
                    b = int(np.array([sgn * m]).astype(fmt.dtype).view(self.uint)[0])
                if b not in out:
                    out.append(b)
        nan = int(np.array([np.nan]).astype(fmt.dtype).view(self.uint)[0])
        out.append(nan)
        return out

    def long_calls(self, sup) -> None:
        """Calls past the lengths vector loops and thread pools switch at: 2^16 + 1 and 2^20 + 77 elements
        (odd remainders), and 3 x the inputs + 77; on 1 thread and on every core where the target has a
        thread switch (torch's grain is 32,768 elements a thread: 2^20 + 77 splits on any core count).
        Where the families before found inputs whose bits depend on the path, a second fill of the same
        lengths holds only those: whatever position a thread split's remainder takes, an input there shows
        it. On t threads, the outputs are also counted against the same call's on 1 thread (`parts`)."""
        nv = self.nv
        sizes = sorted({(1 << 16) + 1, (1 << 20) + 77, 3 * nv + 77})
        cores = host_cores()
        counts = sorted({1, cores}) if sup.threads is not None else [None]
        on = (
            f"on {' and '.join(map(str, counts))} thread(s)" + (" (this host has one core)" if cores == 1 else "")
            if sup.threads is not None
            else "on the target's own threads (it has no thread switch opcert can set)"
        )
        sensitive = sorted({e[0] for f in self.families for e in f.examples})
        fam = Family(
            "long calls",
            f"every input in calls of {', '.join(f'{n:,}' for n in sizes)} elements, each "
            f"input at several positions, {on}"
            + (
                f"; the same calls filled with the {len(sensitive)} inputs the families above found path-dependent"
                if sensitive
                else ""
            ),
        )
        self.families.append(fam)
        fills = [("", None)] + ([(" of path-dependent inputs", np.array(sensitive, np.int64))] if sensitive else [])
        for what, pool in fills:
            for size in sizes:
                if pool is None:
                    idx = passes_shifted(nv, size)
                else:
                    i = np.arange(size)
                    idx = pool[(i + i // pool.size) % pool.size]
                x = self.values[idx]
                first = None
                for t in counts:
                    name = f"a call of {size:,} elements{what}" + (f" on {t} thread(s)" if t else "")
                    self.progress(f"layout: {name}")
                    with sup.threads(t) if t else contextlib.nullcontext():
                        y = self._run(fam, x, f"{name} (layout check)", keep_layout=False)
                    if y is None:
                        fam.complete = False
                        continue
                    before = fam.differ
                    yb = y.view(self.uint)
                    self._compare(
                        fam,
                        yb,
                        self.base[idx],
                        lambda i, idx=idx: idx[i],
                        lambda i, name=name: f"{name}, position {i:,}",
                        lambda i, t=t, x=x: self._redo_threads(sup, t, x, i),
                    )
                    fam.parts.append((name, fam.differ - before))
                    if first is None:
                        first = (t, yb)
                    elif t:
                        n = int(np.count_nonzero(bits_differ(yb, first[1], self.fmt)))
                        fam.parts.append((f"{name} against {first[0]} thread(s)", n))

    def concurrent(self, sup) -> None:
        """The kernel called from a thread other than the process's main one, and from several threads at
        once (a kernel with a static buffer, a lazily built table or per-thread state shows it here)."""
        if not sup.concurrent:
            return
        k = max(CONCURRENT_THREADS, host_cores())
        fam = Family(
            "caller threads",
            f"every input in one call from a thread other than the main thread, "
            f"and in {k} calls at once from {k} threads",
        )
        self.families.append(fam)
        base_call = self.tgt.kernel

        def other_thread(op, xx, attrs):  # one call, made from a thread of its own
            return _in_threads(base_call, op, xx[None, :], attrs)[0]

        def at_once(op, xx, attrs):  # a call per row, all from threads of their own at once
            return _in_threads(base_call, op, xx, attrs)

        self.progress("layout: a call from another thread")
        y = self._run(
            fam, self.values, "a call from a thread other than the main thread (layout check)", call=other_thread
        )
        if y is not None:
            self._compare(
                fam,
                y.view(self.uint),
                self.base,
                lambda i: i,
                lambda i: f"a call of {self.nv:,} elements from a thread other than the main thread, position {i:,}",
                lambda i: self._redo(lambda: self.values, i, call=other_thread),
            )
        else:
            fam.complete = False
        self.progress(f"layout: {k} calls at once")
        X = np.repeat(self.values[None, :], k, axis=0)
        y = self._run(
            fam, X, f"{k} calls of {self.nv:,} elements at once from {k} threads (layout check)", call=at_once
        )
        if y is None:
            fam.complete = False
            return
        nv = self.nv
        self._compare(
            fam,
            y.view(self.uint),
            np.broadcast_to(self.base, (k, nv)),
            lambda i: i % nv,
            lambda i: f"call {i // nv + 1} of {k} made at once from {k} threads, position {i % nv:,}",
            lambda i: self._redo(lambda: X, i, call=at_once),
        )

    def in_place(self, sup) -> None:
        if sup.calls is not None and sup.calls_in_place:
            fam = Family(
                "in place", f"every length 1..{self.L}, every input at every position, x and y the same buffer"
            )
            self.families.append(fam)
            for n in range(1, self.L + 1):
                self.progress(f"layout: in place, calls of {n}")
                self._many_calls(fam, sup, n, 0, True)
            return
        if sup.in_place is None or sup.in_place_for is None or not sup.in_place_for(self.op, self.attrs):
            return
        fn = sup.in_place
        fam = Family("in place", f"every length 1..{self.L}: rows of a 2-D view computed in place")
        self.families.append(fam)
        self._rows_of_every_length(fam, call=fn, words="in place: ")
        fam.complete = fam.complete and self.tgt.layouts.rows_are_calls

    def _rows_of_every_length(self, fam: Family, call=None, words: str = "") -> None:
        """Every input at every position of rows of every length 1..L (row stride n + 1: rows start at every
        alignment), through the target (or `call`, its in-place form)."""
        for n in range(1, self.L + 1):
            self.progress(f"layout: {words}rows of {n} of {self.L}")
            if not self._row_calls(
                fam,
                n,
                lambda m, n=n: f"{words}{m:,} rows of {n} elements (layout check)",
                lambda m, r, p, n=n: (
                    f"{words}row {r:,} of a 2-D view of {m:,} rows of {n} elements (row stride {n + 1}), position {p}"
                ),
                call=call,
            ):
                fam.complete = False

    # -- replays ----------------------------------------------------------------------------
    def _redo(self, make, i, keep_layout=True, call=None) -> int | None:
        try:
            y = self.tgt.run(
                self.op, make(), self.attrs, label="the layout again (replay)", keep_layout=keep_layout, call=call
            )
        except TargetFailure:
            return None
        return int(np.ascontiguousarray(y).reshape(-1).view(self.uint)[i])

    def _redo_call(self, sup, n, offset, in_place, i, nv) -> int | None:
        x = self._windows(self.vext, nv, n)
        try:
            y = self.tgt.run(
                self.op,
                x,
                self.attrs,
                label="the layout again (replay)",
                call=lambda op, xx, attrs: sup.calls(op, xx, attrs, offset, in_place),
            )
        except TargetFailure:
            return None
        return int(y.reshape(-1).view(self.uint)[i])

    def _redo_threads(self, sup, t, x, i) -> int | None:
        with sup.threads(t) if t else contextlib.nullcontext():
            return self._redo(lambda: x, i, keep_layout=False)

    # -- the verdict ----------------------------------------------------------------------------
    def verdict(self, prop, ref_of, target: str, where: str) -> tuple[dict, dict | None]:
        """(the PropertyResult dict, the worst error over the differing outputs or None).
        ref_of(bits array) -> (correctly rounded bits, error function(input bits, output bits) -> (ULP error,
        exact value's text) or None)."""
        fams = self.families
        evaluated = sum(f.evaluated for f in fams)
        differ = sum(f.differ for f in fams)
        errors = [e for f in fams for e in f.errors]
        sup = self.tgt.layouts
        lengths_complete = any(f.name == "lengths" and f.complete for f in fams) or any(
            f.name == "calls" and f.complete for f in fams
        )
        complete = self.whole and lengths_complete and all(f.complete for f in fams) and not errors
        r = PropertyResult(prop.name, prop.kind, prop.statement, "checked", "")
        r.inputs_checked, r.violations = evaluated, differ + len(errors)
        r.elapsed_s = getattr(self, "elapsed", 0.0)
        r.method = self._method(target, where, evaluated)
        notes = [f"not given to {target}: {k}: {why}" for k, why in sup.cannot.items()]
        if not complete and not differ and not errors:
            notes.append(self._not_proved(sup, target))
        worst = None
        if differ or errors:
            r.status = "refuted"
            ce = self._first_counterexample(ref_of, differ)
            if ce is not None:
                r.counterexample = ce
            worst = self._worst(ref_of)
            if worst is not None:
                r.worst = {
                    "which": "worst",
                    "inputs": {"x": worst["input"]},
                    "outputs": {"f(x)": worst["output"]},
                    "reference": {"f(x)": worst["reference"]},
                    "layout": worst["layout"],
                    "family": worst["family"],
                    "magnitude": worst["ulp"],
                }
            if errors:  # first: it is what refuted the property where no output differed
                notes.insert(0, "the target failed in some layouts: " + "; ".join(errors[:3]))
        elif complete:
            r.status = "proved"
        r.note = "; ".join(notes) or None
        r.layouts = [f.summary() for f in fams]
        return r.to_dict(), worst

    def _method(self, target: str, where: str, evaluated: int) -> str:
        """The verdict's method: the inputs, every family's scope and how, and what lies outside them."""
        few = getattr(self, "few", self.nv)
        what = (
            f"every input enumerated on target {target}"
            if self.whole
            else f"{few:,} sampled inputs on target {target}"
            + (f" ({self.nv:,} through the mixed vectors, long calls and caller threads)" if self.nv != few else "")
        )
        return (
            f"{what}, in every layout family it can be given {where}, compared bit for bit with "
            f"{self.base_layout}: {evaluated:,} outputs; "
            + "; ".join(f"{f.name} ({f.scope}): {f.how} ({f.evaluated:,} outputs)" for f in self.families)
            + f". {SCOPE}"
        )

    def _not_proved(self, sup, target: str) -> str:
        """Why a verdict without a difference is `checked`, not `proved`."""
        few = getattr(self, "few", self.nv)
        incomplete = [f.name for f in self.families if not f.complete]
        why = []
        if not self.whole:
            why.append(f"{few:,} inputs went through each layout, not every input of the format")
        if not enumerable(sup):
            why.append(
                f"{target}'s short calls cannot be enumerated: it is called once per call from Python "
                "(every input at every position of every length 1..L would be millions of calls)"
            )
        if incomplete:
            why.append(f"sampled, not enumerated: {', '.join(incomplete)}")
        return "checked, not proved: " + "; ".join(why)

    def _first_counterexample(self, ref_of, differ: int) -> dict | None:
        """The first example held (in the families' order), replayed, with the reference's output; None where
        no family holds one (the property was refuted by the target's failures alone)."""
        first = None
        for f in self.families:
            for ex in f.examples:
                first = first or (f, ex)
        if first is None:
            return None
        f, (k, got, words, redo, _) = first
        fmt, uint = self.fmt, self.uint
        x = self.values[k : k + 1]
        ref_bits, _err_of = ref_of(x.view(uint))
        again = redo()
        ce = {
            "which": "first",
            "family": f.name,
            "inputs": {"x": value_of(x[0], fmt)},
            "outputs": {"f(x)": value_of(uint.type(got).view(fmt.dtype), fmt)},
            "reference": {"f(x)": value_of(uint.type(ref_bits[0]).view(fmt.dtype), fmt)},
            "layout": words,
            "base": {"layout": self.base_layout, "output": value_of(self.base[k].view(fmt.dtype), fmt)},
            "replayed": again is not None and not bits_differ(np.array([again], uint), np.array([got], uint), fmt)[0],
            "violations": differ,
        }
        if not ce["replayed"]:
            ce["note"] = (
                "the layout run again gave "
                + (hex_bits(uint.type(again).view(fmt.dtype), fmt) if again is not None else "an error")
                + ": the difference is not reproducible (the output depends on more than the layout)"
            )
        return ce

    def _worst(self, ref_of) -> dict | None:
        """The largest error among the differing outputs held as examples (measured against the reference)."""
        best = None
        for f in self.families:
            if not f.examples:
                continue
            # the exact error costs milliseconds an input: the furthest 16 by ordinal distance, and 2 NaN cases
            far = sorted(f.examples, key=lambda e: -e[4])
            chosen = far[:16] + [e for e in far[16:] if np.isinf(e[4])][:2]
            ks = np.array([e[0] for e in chosen])
            xs = self.values[ks]
            ref_bits, err_of = ref_of(xs.view(self.uint))
            for j, (_k, got, words, _, _) in enumerate(chosen):
                e, exact = err_of(xs[j : j + 1], got) or (None, None)
                if e is None:
                    with np.errstate(invalid="ignore"):
                        yv = np.array([got], self.uint).view(self.fmt.dtype).astype(np.float64)[0]
                        rv = np.array([ref_bits[j]], self.uint).view(self.fmt.dtype).astype(np.float64)[0]
                    if np.isnan(yv) != np.isnan(rv):  # a NaN where the reference is a number, or the reverse
                        e = np.inf
                        # the exact value's text: that of the reference's error against itself
                        exact = "nan" if np.isnan(rv) else (err_of(xs[j : j + 1], ref_bits[j]) or (None, None))[1]
                    else:
                        continue
                if best is None or e > best["ulp"]:
                    best = {
                        "ulp": e,
                        "exact": exact,
                        "input": value_of(xs[j], self.fmt),
                        "output": value_of(self.uint.type(got).view(self.fmt.dtype), self.fmt),
                        "reference": value_of(self.uint.type(ref_bits[j]).view(self.fmt.dtype), self.fmt),
                        "layout": words,
                        "family": f.name,
                    }
        return best


def _split(n: int) -> int:
    """A divisor of n near its square root (1 where n is prime)."""
    for a in range(int(n**0.5), 0, -1):
        if n % a == 0:
            return a
    return 1


def _shape(n: int, dims: int) -> tuple | None:
    """A shape of `dims` dimensions with n elements, the leading ones small (None where n has too few factors)."""
    out, left = [], n
    for _ in range(dims - 1):
        for f in (4, 2, 3, 5, 7):
            if left % f == 0 and left // f >= 1:
                out.append(f)
                left //= f
                break
        else:
            return None
    return tuple(out + [left])


def _value_index(values: np.ndarray, order: np.ndarray) -> np.ndarray:
    """The index in `values` of each element of `order` (a rearrangement of values, found by bits)."""
    # the views above keep C order, but the transposed array is read back in C order of its own: find each
    # element's value index by its bits (values are distinct bit patterns)
    bits = values.view(f"uint{8 * values.itemsize}")
    ob = order.view(bits.dtype)
    srt = np.argsort(bits, kind="stable")
    pos = np.searchsorted(bits[srt], ob)
    return srt[np.minimum(pos, bits.size - 1)]


def _in_threads(call, op, X: np.ndarray, attrs) -> np.ndarray:
    """call(op, X[r], attrs) for every row r, each on a thread of its own, all started together (a barrier);
    the rows' outputs stacked. What a call raised is raised here, in the caller's thread."""
    m = X.shape[0]
    out: list = [None] * m
    failed: list = []
    gate = threading.Barrier(m)

    def one(r):
        try:
            gate.wait()
            out[r] = np.asarray(call(op, np.ascontiguousarray(X[r]), attrs))
        except BaseException as exc:  # noqa: BLE001 - the target's, raised again in the caller
            failed.append(exc)

    threads = [threading.Thread(target=one, args=(r,), name=f"opcert-caller-{r}") for r in range(m)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if failed:
        raise failed[0]
    if any(o.shape != X.shape[1:] or o.dtype != X.dtype for o in out):
        bad = next(o for o in out if o.shape != X.shape[1:] or o.dtype != X.dtype)
        return bad  # the target's own call checks the shape and dtype: let it say what is wrong
    return np.stack(out)
