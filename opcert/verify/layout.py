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

import time
from dataclasses import dataclass, field

import numpy as np

from ..errors import TargetFailure
from ..formats import FloatFormat, bits_differ, hex_bits
from ..jit import numba
from ..targets.layouts import padded_stride, cores as host_cores, row_buffer
from .row_calls import ulp_distance

VECTOR_BYTES = 64          # the widest vector the lengths cover (AVX-512, SVE-512)
CALLS_PER_LENGTH = 8       # separate calls per length where each call is made from Python
# Rows go to the target in calls of about this many elements, not in one view of every row: a row's path
# is its length, its alignment and its strides, none of which depends on how many rows share its call,
# and 10^6 rows of 65 in one call are 10^8-element temporaries (opcert's own code on a float32 sweep's
# inputs: 3.7 s for the length 65 in one call, 0.36 s in calls of 2^20 elements; 2^18 gave 0.26 s there but
# cost onnx.reference 0.8 s more over a float16 check, in its per-call overhead: measured). A block's first row
# is a multiple of ROW_ALIGN rows, so every row starts at the alignment it has in one whole view.
ROW_BLOCK = 1 << 20
ROW_ALIGN = 32             # rows of stride (n + 1) elements of 2 bytes or more: 32 rows span 64-byte lines
EXAMPLES = 32              # differing inputs per family measured against the reference


@numba.njit(cache=True, nogil=True)
def count_window_differ(got, base, magnitude, inf):
    """How many elements of got (2-D, C order, bits) differ from the windows of base that the rows were
    made of (row r: base[r], base[r + 1], ...), any NaN equal to any NaN (formats.bits_differ's rule):
    magnitude masks the sign off, a NaN's magnitude is above inf. Without a branch on the data, on unit
    strides: the loop vectorises. bits_differ on the strided windows made three passes and temporaries:
    0.31 ns an element on rows of 65, 1.7 on rows of 3, against 0.13 and 1.2 here; over a float32 sweep's
    layout check (10^6 inputs, 2.1 x 10^9 outputs), 2.0 s against 0.9 s."""
    n = 0
    for r in range(got.shape[0]):
        g = got[r]
        for c in range(g.size):
            a, b = g[c], base[r + c]
            n += (a != b) & ~(((a & magnitude) > inf) & ((b & magnitude) > inf))
    return n


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
    complete: bool = True        # every value given was at every position this family names
    differ: int = 0
    examples: list = field(default_factory=list)   # [(value index, got bits, layout words, redo)]
    errors: list = field(default_factory=list)     # what a layout made the target do (raise, wrong shape)

    def failed(self, exc: TargetFailure) -> None:
        """A layout made the target fail: its message (which names the layout), once."""
        if str(exc) not in self.errors:
            self.errors.append(str(exc))

    def summary(self) -> dict:
        return {"family": self.name, "how": self.how, "evaluated": self.evaluated, "complete": self.complete,
                "differ": self.differ, "errors": self.errors[:3]}


class LayoutCheck:
    """Every layout the target can be given, compared with `base`: the target's outputs for `values` in the
    measurement's call (`base_layout` says which)."""

    def __init__(self, op, tgt, fmt: FloatFormat, attrs, values: np.ndarray, base: np.ndarray, base_layout: str,
                 whole_format: bool, progress=None):
        self.op, self.tgt, self.fmt, self.attrs = op, tgt, fmt, attrs
        self.values = np.ascontiguousarray(values)
        self.nv = self.values.size
        self.uint = fmt.uint
        self.base = np.ascontiguousarray(base).view(self.uint)
        self.base_layout = base_layout
        self.whole = whole_format
        self.L = longest(fmt)
        pad = self.L + 1
        self.vext = np.concatenate([self.values, self.values[:pad]])
        self.bext = np.concatenate([self.base, self.base[:pad]])
        self.families: list[Family] = []
        self.progress = progress or (lambda text: None)
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
        if base is not None and got.ndim == 2 and got.flags.c_contiguous and \
                not count_window_differ(got, base, *self._nan_bits):
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
        # NaNs never differ here), which sorts last, as -1
        dist = ulp_distance(g[bad], w[bad], self.fmt)
        nan = np.isinf(dist)
        dist[nan] = -1.0
        picks = list(range(min(8, bad.size))) + list(np.argsort(-dist, kind="stable")[:EXAMPLES]) + \
            list(np.flatnonzero(nan)[:4])
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
            else:   # replace the nearest held (not one of the first 8)
                j = min(range(8, len(fam.examples)), key=lambda j: fam.examples[j][4])
                if fam.examples[j][4] < d:
                    del have[fam.examples[j][0]]
                    fam.examples[j] = entry
                    have[k] = j

    def _run(self, fam: Family, x: np.ndarray, label: str, call=None, keep_layout=True, owned=False):
        try:
            return self.tgt.run(self.op, x, self.attrs, label=label, keep_layout=keep_layout, call=call,
                                owned=owned)
        except TargetFailure as exc:
            fam.failed(exc)
            return None

    # -- the families ---------------------------------------------------------------------
    def run(self) -> None:
        sup = self.tgt.layouts
        t0 = time.perf_counter()
        self.lengths(sup)
        self.offsets(sup)
        self.views(sup)
        self.threads(sup)
        self.in_place(sup)
        self.elapsed = time.perf_counter() - t0

    def _rows(self, n: int, offset: int = 0, stride: int | None = None, rows: tuple[int, int] | None = None) \
            -> np.ndarray:
        """Rows b0..b1 (default: all nv) of n elements: row r holds values r, r + 1, ... (cyclically)."""
        b0, b1 = rows or (0, self.nv)
        x = row_buffer(b1 - b0, n, self.values.dtype, stride or n + 1, offset)
        x[...] = self._windows(self.vext[b0:], b1 - b0, n)
        return x

    def _row_calls(self, fam: Family, n: int, label, where, offset: int = 0, stride: int | None = None,
                   call=None) -> bool:
        """Every row of n elements through the target, in calls of about ROW_BLOCK elements, each call's
        outputs compared as they come; where(m, row, position) names a position of a call of m rows. False
        where a call failed (its failure is in fam.errors; the other calls are compared)."""
        nv = self.nv
        per = max(ROW_ALIGN, ROW_BLOCK // n // ROW_ALIGN * ROW_ALIGN)
        spans = [(b0, min(b0 + per, nv)) for b0 in range(0, nv, per)]
        # made as the calls take them (a generator): a few blocks' buffers at a time, not every row's
        xs = (self._rows(n, offset, stride, span) for span in spans)
        ok = True
        for (b0, b1), y in zip(spans, self.tgt.run_each(self.op, xs, self.attrs, [label(b - a) for a, b in spans],
                                                          call=call)):
            if isinstance(y, TargetFailure):
                fam.failed(y)
                ok = False
                continue
            self._compare(fam, y.view(self.uint), self._windows(self.bext[b0:], b1 - b0, n),
                          lambda i, b0=b0: (b0 + i // n + i % n) % nv,
                          lambda i, m=b1 - b0: where(m, i // n, i % n),
                          lambda i, span=(b0, b1): self._redo(lambda: self._rows(n, offset, stride, span), i,
                                                              call=call), self.bext[b0:])
        return ok

    def lengths(self, sup) -> None:
        nv, L = self.nv, self.L
        if sup.rows:
            fam = Family("lengths", f"every length 1..{L} and every position: rows of 2-D views ({nv:,} rows of "
                                    f"n elements, row stride n + 1, so rows start at every alignment; calls of "
                                    f"{ROW_BLOCK:,} elements or fewer)"
                                    + ("; the target runs a row through the loop a call of n runs" if sup.rows_are_calls
                                       else "; rows run the inner loop, not a call's own code: short calls are "
                                            "sampled below"),
                         complete=sup.rows_are_calls)
            self.families.append(fam)
            self._rows_of_every_length(fam)
        if sup.calls is not None:
            fam = Family("calls", f"every length 1..{L}: {nv:,} calls of each length, every input at every position "
                                  "(made by compiled code or one graph, not one by one from Python)")
            self.families.append(fam)
            for n in range(1, L + 1):
                self.progress(f"layout: calls of {n} of {L}")
                self._many_calls(fam, sup, n, 0, False)
        else:
            self._sampled_calls(sup)

    def _many_calls(self, fam, sup, n, offset, in_place) -> None:
        nv = self.nv
        x = self._windows(self.vext, nv, n)
        call = (lambda op, xx, attrs: sup.calls(op, xx, attrs, offset, in_place))
        where = f"{' in place' if in_place else ''}{f' at {offset} bytes past a 64-byte boundary' if offset else ''}"
        # owned: calls() copies the windows into buffers of its own before the kernel sees them
        y = self._run(fam, x, f"{nv:,} calls of {n} element(s){where} (layout check)", call=call, owned=True)
        if y is None:
            fam.complete = False
            return
        self._compare(fam, y.view(self.uint), self._windows(self.bext, nv, n),
                      lambda i: (i // n + i % n) % nv,
                      lambda i: f"a call of {n} element(s){where}, position {i % n}",
                      lambda i: self._redo_call(sup, n, offset, in_place, i), self.bext)

    def _sampled_calls(self, sup) -> None:
        """Separate calls from Python: CALLS_PER_LENGTH per length, the inputs spread over the values."""
        nv, L, c = self.nv, self.L, CALLS_PER_LENGTH
        cross = sup.rows and sup.rows_are_calls
        fam = Family("calls", f"every length 1..{L}: {c} separate calls of each length, every position "
                              f"({c} inputs per position; the target is called once per call from Python)"
                              + (": a cross-check of the rows above" if cross else ": sampled"),
                     complete=cross)
        self.families.append(fam)
        rng = np.random.default_rng(12345)
        for n in range(1, L + 1):
            self.progress(f"layout: calls of {n} of {L}")
            for j in range(c):
                start = int(rng.integers(nv))
                idx = (start + np.arange(n)) % nv
                y = self._run(fam, self.values[idx], f"a call of {n} element(s) (layout check)", keep_layout=False)
                if y is None:
                    continue
                self._compare(fam, y.view(self.uint), self.base[idx], lambda i, idx=idx: idx[i],
                              lambda i, n=n: f"a call of {n} element(s), position {i}",
                              lambda i, idx=idx: self._redo(lambda: self.values[idx].copy(), i, keep_layout=False))

    def offsets(self, sup) -> None:
        L = self.L
        offs = byte_offsets(self.fmt)
        if sup.calls is not None and sup.offsets:
            fam = Family("offsets", f"a call of {L} elements at {', '.join(map(str, offs))} bytes past a 64-byte "
                                    "boundary, every input at every position")
            self.families.append(fam)
            for o in offs:
                self.progress(f"layout: offset {o}")
                self._many_calls(fam, sup, L, o, False)
        elif sup.rows and sup.offsets:
            fam = Family("offsets", f"rows of {L} elements starting {', '.join(map(str, offs))} bytes past a 64-byte "
                                    "boundary (row stride a whole number of 64-byte lines), every input at every "
                                    "position", complete=sup.rows_are_calls)
            self.families.append(fam)
            stride = padded_stride(L, self.fmt.bits // 8)
            for o in offs:
                self.progress(f"layout: offset {o}")
                if not self._row_calls(fam, L, lambda m, o=o: f"{m:,} rows of {L} at offset {o} (layout check)",
                                       lambda m, r, p, o=o: f"row {r:,} of {m:,} rows of {L} elements starting {o} "
                                                            f"bytes past a 64-byte boundary, position {p}",
                                       o, stride):
                    fam.complete = False

    def views(self, sup) -> None:
        if not sup.views:
            return
        nv, v = self.nv, self.values
        fam = Family("strides and shapes", "every input through a view with stride 2, a transposed 2-D array, a 3-d "
                                           "and an 8-d array; 0-d arrays and empty arrays")
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
        for name, make, idx in shapes:
            x = make()
            y = self._run(fam, x, f"{name} (layout check)")
            if y is None:
                continue
            # element i of x in C order is value i (transposed: the same values, read in C order)
            got = np.ascontiguousarray(y).reshape(-1)
            want_idx = np.ascontiguousarray(x).reshape(-1)
            order = _value_index(self.values, want_idx)
            self._compare(fam, got.view(self.uint), self.base[order], lambda i, order=order: order[i],
                          lambda i, name=name, shape=x.shape: f"{name}, element {np.unravel_index(i, shape)}",
                          lambda i, make=make: self._redo(make, i))
        for shp in ((0,), (3, 0, 2)):
            self._run(fam, np.empty(shp, v.dtype), f"an empty array of shape {shp} (layout check)")
        sample = np.linspace(0, nv - 1, min(nv, 16)).astype(np.int64)
        zero_d = Family("0-d arrays", f"{sample.size} inputs, each alone in a 0-d array"
                        + (" (a cross-check: the target runs a 0-d array through a one-element call's loop, which "
                           "the lengths cover)" if sup.rows_are_calls else " (sampled)"),
                        complete=sup.rows_are_calls or sample.size == nv)
        self.families.append(zero_d)
        for k in sample:
            x = self.values[k:k + 1].reshape(())
            y = self._run(zero_d, x, "a 0-d array (layout check)")
            if y is not None:
                self._compare(zero_d, np.asarray(y).reshape(1).view(self.uint), self.base[k:k + 1],
                              lambda i, k=k: k, lambda i: "a 0-d array",
                              lambda i, k=k: self._redo(lambda: self.values[k:k + 1].reshape(()), 0))

    def threads(self, sup) -> None:
        if sup.threads is None:
            return
        cores = host_cores()
        counts = sorted({1, cores})
        nv = self.nv
        size = 3 * nv + 77      # chunks of any count end off every vector multiple
        idx = np.arange(size) % nv
        x = self.values[idx]
        fam = Family("threads", f"every input in a call of {size:,} elements on {' and '.join(map(str, counts))} "
                                f"thread(s){' (this host has one core)' if cores == 1 else ''}")
        self.families.append(fam)
        for t in counts:
            self.progress(f"layout: {t} thread(s)")
            with sup.threads(t):
                y = self._run(fam, x, f"{size:,} elements on {t} thread(s) (layout check)", keep_layout=False)
            if y is not None:
                self._compare(fam, y.view(self.uint), self.base[idx], lambda i: idx[i],
                              lambda i, t=t: f"a call of {size:,} elements on {t} thread(s), position {i:,}",
                              lambda i, t=t: self._redo_threads(sup, t, x, i))

    def in_place(self, sup) -> None:
        if sup.calls is not None and sup.calls_in_place:
            fam = Family("in place", f"every length 1..{self.L}, every input at every position, x and y the same "
                                     "buffer")
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
            if not self._row_calls(fam, n, lambda m, n=n: f"{words}{m:,} rows of {n} elements (layout check)",
                                   lambda m, r, p, n=n: f"{words}row {r:,} of a 2-D view of {m:,} rows of {n} "
                                                        f"elements (row stride {n + 1}), position {p}",
                                   call=call):
                fam.complete = False

    # -- replays ----------------------------------------------------------------------------
    def _redo(self, make, i, keep_layout=True, call=None) -> int | None:
        try:
            y = self.tgt.run(self.op, make(), self.attrs, label="the layout again (replay)",
                             keep_layout=keep_layout, call=call)
        except TargetFailure:
            return None
        return int(np.ascontiguousarray(y).reshape(-1).view(self.uint)[i])

    def _redo_call(self, sup, n, offset, in_place, i) -> int | None:
        x = self._windows(self.vext, self.nv, n)
        try:
            y = self.tgt.run(self.op, x, self.attrs, label="the layout again (replay)",
                             call=lambda op, xx, attrs: sup.calls(op, xx, attrs, offset, in_place))
        except TargetFailure:
            return None
        return int(y.reshape(-1).view(self.uint)[i])

    def _redo_threads(self, sup, t, x, i) -> int | None:
        with sup.threads(t):
            return self._redo(lambda: x, i, keep_layout=False)

    # -- the verdict ----------------------------------------------------------------------------
    def verdict(self, prop, ref_of, target: str, where: str) -> tuple[dict, dict | None]:
        """(the PropertyResult dict, the worst error over the differing outputs or None).
        ref_of(bits array) -> (correctly rounded bits, error function(input bits, output bits) -> (ULP error,
        exact value's text) or None)."""
        from .proofs.result import PropertyResult
        from .properties import value_of
        fams = self.families
        evaluated = sum(f.evaluated for f in fams)
        differ = sum(f.differ for f in fams)
        errors = [e for f in fams for e in f.errors]
        sup = self.tgt.layouts
        lengths_complete = any(f.name == "lengths" and f.complete for f in fams) or \
            any(f.name == "calls" and f.complete for f in fams)
        complete = self.whole and lengths_complete and all(f.complete for f in fams) and not errors
        r = PropertyResult(prop.name, prop.kind, prop.statement, "checked", "")
        r.inputs_checked, r.violations = evaluated, differ + len(errors)
        r.elapsed_s = getattr(self, "elapsed", 0.0)
        what = f"every input enumerated on target {target}" if self.whole else \
            f"{self.nv:,} sampled inputs on target {target}"
        r.method = (f"{what}, in every layout it can be given {where}, compared bit for bit with "
                    f"{self.base_layout}: {evaluated:,} outputs; "
                    + "; ".join(f"{f.name}: {f.how} ({f.evaluated:,} outputs)" for f in fams))
        notes = [f"not given to {target}: {k}: {why}" for k, why in sup.cannot.items()]
        incomplete = [f.name for f in fams if not f.complete]
        if not complete and not differ and not errors:
            why = []
            if not self.whole:
                why.append(f"{self.nv:,} inputs went through each layout, not every input of the format")
            if not enumerable(sup):
                why.append(f"{target}'s short calls cannot be enumerated: it is called once per call from Python "
                           "(every input at every position of every length 1..L would be millions of calls)")
            if incomplete:
                why.append(f"sampled, not enumerated: {', '.join(incomplete)}")
            notes.append("checked, not proved: " + "; ".join(why))
        worst = None
        if differ or errors:
            r.status = "refuted"
            first = None
            for f in fams:
                for ex in f.examples:
                    first = first or (f, ex)
            if first is not None:
                f, (k, got, words, redo, _) = first
                x = self.values[k:k + 1]
                ref_bits, err_of = ref_of(x.view(self.uint))
                again = redo()
                ce = {"which": "first", "inputs": {"x": value_of(x[0], self.fmt)},
                      "outputs": {"f(x)": value_of(self.uint.type(got).view(self.fmt.dtype), self.fmt)},
                      "reference": {"f(x)": value_of(self.uint.type(ref_bits[0]).view(self.fmt.dtype), self.fmt)},
                      "layout": words, "base": {"layout": self.base_layout,
                                                "output": value_of(self.base[k].view(self.fmt.dtype), self.fmt)},
                      "replayed": again is not None and not bits_differ(np.array([again], self.uint),
                                                                        np.array([got], self.uint), self.fmt)[0],
                      "violations": differ}
                if not ce["replayed"]:
                    ce["note"] = ("the layout run again gave "
                                  + (hex_bits(self.uint.type(again).view(self.fmt.dtype), self.fmt)
                                     if again is not None else "an error")
                                  + ": the difference is not reproducible (the output depends on more than the "
                                    "layout)")
                r.counterexample = ce
            worst = self._worst(ref_of)
            if worst is not None:
                r.worst = {"which": "worst", "inputs": {"x": worst["input"]}, "outputs": {"f(x)": worst["output"]},
                           "reference": {"f(x)": worst["reference"]}, "layout": worst["layout"],
                           "magnitude": worst["ulp"]}
            if errors:     # first: it is what refuted the property where no output differed
                notes.insert(0, "the target failed in some layouts: " + "; ".join(errors[:3]))
        elif complete:
            r.status = "proved"
        r.note = "; ".join(notes) or None
        r.layouts = [f.summary() for f in fams]
        return r.to_dict(), worst

    def _worst(self, ref_of) -> dict | None:
        """The largest error among the differing outputs held as examples (measured against the reference)."""
        from .properties import value_of
        best = None
        for f in self.families:
            if not f.examples:
                continue
            # the exact error costs milliseconds an input: the furthest 8 by ordinal distance, and 2 NaN cases
            far = sorted(f.examples, key=lambda e: -e[4])
            chosen = far[:8] + [e for e in far if e[4] < 0][:2]
            ks = np.array([e[0] for e in chosen])
            xs = self.values[ks]
            ref_bits, err_of = ref_of(xs.view(self.uint))
            for j, (k, got, words, _, _) in enumerate(chosen):
                e, exact = err_of(xs[j:j + 1], got) or (None, None)
                if e is None:
                    with np.errstate(invalid="ignore"):
                        yv = np.array([got], self.uint).view(self.fmt.dtype).astype(np.float64)[0]
                        rv = np.array([ref_bits[j]], self.uint).view(self.fmt.dtype).astype(np.float64)[0]
                    if np.isnan(yv) != np.isnan(rv):     # a NaN where the reference is a number, or the reverse
                        e = np.inf
                        # the exact value's text: that of the reference's error against itself
                        exact = "nan" if np.isnan(rv) else (err_of(xs[j:j + 1], ref_bits[j]) or (None, None))[1]
                    else:
                        continue
                if best is None or e > best["ulp"]:
                    best = {"ulp": e, "exact": exact, "input": value_of(xs[j], self.fmt),
                            "output": value_of(self.uint.type(got).view(self.fmt.dtype), self.fmt),
                            "reference": value_of(self.uint.type(ref_bits[j]).view(self.fmt.dtype), self.fmt),
                            "layout": words}
        return best


def _split(n: int) -> int:
    """A divisor of n near its square root (1 where n is prime)."""
    for a in range(int(n ** 0.5), 0, -1):
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
