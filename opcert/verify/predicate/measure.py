"""Truth values and properties of a predicate operator's target (spec.predicate: IsNaN, IsInf).

Every output is compared with IEEE 754's classification of its input (the operator's `reference`): an output is
right where it is the truth value due, and wrong where it is the other one or no truth value at all (a value
other than 0 and 1). There is no rounding: one wrong output is a finding, and the first few are reported with
their inputs' bits and classes (a signalling NaN, a NaN's payload, a sign).

Inputs: every pattern of a 16-bit format (always: 65,536 of them); every one of float32's 2^32 (exhaustive) in
blocks of 2^22, each block's check beside the next block's call; else samples (float32 without --exhaustive,
float64): every special class of pattern (both zeros and infinities, quiet and signalling NaNs of several
payloads and both signs, the least and greatest subnormals and normals, the greatest finite values), random
patterns whose exponent field is all ones (NaNs and infinities), and random bit patterns (seeded).

Properties: `exact` (every output the classification), `output_type` (the standard's dtype: ONNX's bool,
DirectML's uint8 holding 0 and 1; another dtype is a finding, and its values are still compared as truth values
where they are 0 and 1), `layout` (the same outputs for the inputs given reversed, as a strided view, as a
negatively strided view and in a 2-D shape as for the flat array; a call that raises on a layout refutes it).
Over every pattern of a format they are `proved` or `refuted` (enumeration), on samples `checked` or `refuted`;
the first wrong output is replayed (the same call again) before it is reported.

A target that raises, returns no array, or returns an array of another shape, has crashed (status crashed); an
untrusted target runs in a supervised worker (opcert.workers), so a crash of its process is a result too.
"""

from __future__ import annotations

import math
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from opcert.errors import TargetFailure, UsageError
from opcert.formats import FloatFormat, get_format
from opcert.progress import Progress
from opcert.spec.predicate import CHECKED_DTYPES, class_name, fields, get_predicate_operator
from opcert.targets.isolation import child_ends
from opcert.targets.predicate import load_predicate
from opcert.verify.result import PropertyResult
from opcert.workers import WorkerLost, activity, in_worker, run_isolated

DEFAULT_SAMPLES = 100_000
BLOCK_BITS = 22  # float32's exhaustive sweep: 1,024 blocks of 2^22 patterns
EXAMPLES = 5  # wrong outputs reported (the first ones, in the order the inputs were given)


@dataclass(frozen=True)
class PredicateOptions:
    """How measure_predicate measures: whose definition, which attributes ((name, value) pairs: detect_negative,
    infinity_mode), how many random patterns from which seed, the target in a supervised worker ("process") or
    not ("none"), every float32 pattern (exhaustive; a 16-bit format's are always all checked)."""

    standard: str | None = None
    attrs: tuple = ()
    samples: int | None = None
    seed: int = 0
    isolation: str = "process"
    exhaustive: bool = False
    progress: bool = False


@dataclass
class PredicateResult:
    op: str
    target: str
    dtype: str
    standard: str
    attrs: dict = field(default_factory=dict)
    status: str = "ok"  # ok | unsupported | crashed
    error: str | None = None
    exhaustive: bool = False
    inputs: int = 0
    mismatches: int = 0  # outputs that are not the truth value due
    false_positives: int = 0  # true where false is due
    false_negatives: int = 0  # false where true is due
    not_truth_values: int = 0  # neither 0 nor 1 (counted among the mismatches)
    examples: list = field(default_factory=list)  # the first wrong outputs: input, bits, class, output, due
    output_dtype: str = ""  # the target's output dtype (the first call's)
    due_dtype: str = ""  # the standard's
    properties: list = field(default_factory=list)
    batches: list = field(default_factory=list)  # per batch of inputs (a block, a kind of samples): label, counts
    elapsed_s: float = 0.0
    command: str = ""
    target_version: str = ""

    @property
    def refuted(self) -> list[str]:
        return [p["name"] for p in self.properties if p["status"] == "refuted"]

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.mismatches == 0 and not self.refuted

    def to_dict(self) -> dict:
        return plain(asdict(self))

    def gate_accuracy(self) -> dict:
        """The result as a gate check's `accuracy` (the keys reports read), kind "predicate": no ULP figure (an
        output is right or wrong), the wrong outputs and the properties' verdicts."""
        d = self.to_dict()
        d.update(
            {
                "kind": "predicate",
                "inputs_checked": self.inputs,
                "max_ulp": None,  # no ULP figure: the reports say so rather than show one
                "attrs": {k: {"exact": str(v), "value": v} for k, v in self.attrs.items()},  # as the reports read them
                "notes": self.notes(),
                "target_info": {"name": self.target, "kind": "predicate", "version": self.target_version},
            }
        )
        if self.examples:
            e = self.examples[0]
            d.update(
                {
                    "worst_input": e["x"],
                    "worst_input_bits": e["bits"],
                    "worst_output": e["output"],
                    "worst_reference": e["due"],
                }
            )
        return plain(d)

    def notes(self) -> list[str]:
        out = []
        if self.mismatches:
            e = self.examples[0]
            out.append(
                f"{self.mismatches:,} wrong outputs of {self.inputs:,} ({self.false_positives:,} true where false "
                f"is due, {self.false_negatives:,} false where true is due"
                + (f", {self.not_truth_values:,} neither 0 nor 1" if self.not_truth_values else "")
                + f"); first x = {e['x']} ({e['bits']}, {e['class']}): {e['output']!r} where {e['due']!r} is due"
                + ("" if e.get("replayed", True) else "; not reproduced when run again")
            )
        if self.output_dtype and self.due_dtype and self.output_dtype != self.due_dtype:
            out.append(f"the output is {self.output_dtype}; the standard's is {self.due_dtype}")
        if self.error and self.status == "ok":
            out.append(self.error)
        return out


def plain(v):
    """A value as JSON holds it: non-finite floats as text, tuples as lists, keys as text."""
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v


def command(op, target: str, fmt, o: PredicateOptions) -> str:
    attrs = "".join(f" --attr {k}={v}" for k, v in o.attrs)
    every = o.exhaustive and fmt.bits == 32
    return (
        f"opcert accuracy {op.name} --dtype {fmt.name} --target {target}"
        + (f" --standard {o.standard}" if o.standard else "")
        + attrs
        + (" --exhaustive" if every else "" if fmt.bits == 16 else f" --samples {o.samples} --seed {o.seed}")
    )


def settle(op, fmt, o: PredicateOptions) -> PredicateOptions:
    """o with its defaults, its attributes by opcert's names as ints; UsageError for what it cannot run."""
    if fmt.kind != "float" or fmt.name not in CHECKED_DTYPES:
        raise UsageError(f"{op.name} takes floating-point tensors; allowed: {', '.join(CHECKED_DTYPES)}")
    if o.exhaustive and fmt.bits == 64:
        raise UsageError(
            "exhaustive covers every pattern of a 16-bit format or of float32 (2^32); float64's 2^64 are sampled "
            "(no --exhaustive, --samples N)"
        )
    std = op.standard(o.standard)
    given = {}
    for k, v in o.attrs:
        a = op.attribute(std, str(k))
        given[a.name] = op.attributes_for(std, {a.name: v})[a.name]
    samples = DEFAULT_SAMPLES if o.samples is None else int(o.samples)
    if samples < 1:
        raise UsageError(f"samples must be 1 or more (got {samples})")
    return replace(
        o,
        standard=std.key,
        attrs=tuple(sorted(given.items())),
        samples=samples,
        exhaustive=o.exhaustive or fmt.bits == 16,
    )


# ---------------------------------------------------------------- the target's outputs


def call(tgt, op, std, x, attrs) -> np.ndarray:
    """The target's output for x (given as it is: the caller's own copy or view), checked to be an array of x's
    shape (anything else, or an exception, is a TargetFailure naming the call). Its dtype is judged by the
    output_type property, not here."""
    try:
        with (
            activity(f"running {op.name} on {x.dtype.name} inputs of shape {x.shape}"),
            np.errstate(all="ignore"),
            child_ends(tgt.name),
        ):
            z = tgt.call(op, std, x, dict(attrs))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - whatever the target raises (SystemExit too) is its failure
        raise TargetFailure(f"{type(exc).__name__}: {str(exc)[:300]} (input of shape {x.shape})") from None
    if not isinstance(z, np.ndarray):
        try:
            z = np.asarray(z)
        except Exception:  # noqa: BLE001
            raise TargetFailure(f"returned {type(z).__name__}, not an array") from None
    if z.shape != x.shape:
        raise TargetFailure(f"returned an array of shape {z.shape} ({z.dtype}) for an input of shape {x.shape}")
    return z


def truth_values(z: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
    """(the outputs as truth values, where each is one: None where all are, a bool output). An output of a
    number type is a truth value where it is 0 or 1; anything else is no output of a predicate (TargetFailure)."""
    if z.dtype == np.bool_:
        return z, None
    if z.dtype.kind in "iu":
        one = z == 1
        return one, one | (z == 0)
    if z.dtype.kind in "OSUVMm" and z.dtype.name not in CHECKED_DTYPES:  # objects, text, dates: no numbers
        raise TargetFailure(f"returned {z.dtype} values, which are not truth values")
    try:
        with np.errstate(invalid="ignore"):
            z64 = z.astype(np.float64) if z.dtype.kind != "c" else z
    except (TypeError, ValueError):
        raise TargetFailure(f"returned {z.dtype} values, which are not truth values") from None
    one = z64 == 1
    return one, one | (z64 == 0)


class Verdicts:
    """Inputs looked at and violations per property, over batches; the first counterexample of each."""

    def __init__(self, claimed):
        self.claimed = claimed
        self.seen = {p.name: 0 for p in claimed}
        self.bad = {p.name: 0 for p in claimed}
        self.example = {}

    def add(self, kind: str, looked: int, count: int, example) -> None:
        for p in self.claimed:
            if p.kind == kind:
                self.seen[p.name] += looked
                self.bad[p.name] += count
                if count and p.name not in self.example:
                    self.example[p.name] = example

    def results(self, method: str, complete: bool) -> list[dict]:
        out = []
        for p in self.claimed:
            if self.bad[p.name]:
                status, note = "refuted", None
            elif not self.seen[p.name]:
                status, note = "skipped", "no input of its domain was measured"
            else:
                status, note = ("proved" if complete else "checked"), None
            out.append(
                PropertyResult(
                    p.name, p.kind, p.statement, status, method if status != "skipped" else "-",
                    counterexample=self.example.get(p.name), note=note, inputs_checked=self.seen[p.name] or None,
                    violations=self.bad[p.name] if status == "refuted" else None,
                ).to_dict()
            )  # fmt: skip
        return out


def value_text(v, fmt: FloatFormat):
    """One input as results hold it: a float where it is finite, else nan, -nan, inf, -inf."""
    with np.errstate(invalid="ignore"):  # ml_dtypes' NaNs raise NumPy's invalid flag when widened
        f = float(np.asarray(v).astype(np.float64))
    if math.isnan(f):
        return "-nan" if int(np.asarray(v).view(fmt.uint)) >> (fmt.bits - 1) else "nan"
    return f if math.isfinite(f) else ("inf" if f > 0 else "-inf")


def output_value(v):
    v = np.asarray(v)
    if v.dtype == np.bool_:
        return bool(v)
    if v.dtype.kind in "iu":
        return int(v)
    try:
        with np.errstate(invalid="ignore"):
            return float(v.astype(np.float64))
    except (TypeError, ValueError):
        return str(v)


class Tally:
    """The counts over every batch: wrong outputs, where the first ones were, the output's dtype."""

    def __init__(self, res: PredicateResult, fmt: FloatFormat, std, verdicts: Verdicts):
        self.res, self.fmt, self.std, self.v = res, fmt, std, verdicts
        self.first_at = None  # (batch key, flat index) of the first wrong output

    def add(self, label: str, key, x: np.ndarray, z: np.ndarray, ref: np.ndarray) -> int:
        """One call's outputs z for the inputs x (flat, opcert's own copy), against the classification ref."""
        res = self.res
        res.inputs += int(x.size)
        if not res.output_dtype:
            res.output_dtype = z.dtype.name
        truth, valid = truth_values(z)
        wrong = truth != ref
        if valid is not None:
            wrong |= ~valid
        # the output's type: the standard's dtype, holding only 0 and 1
        dtype_ok = z.dtype.name in self.std.output_types
        invalid = 0 if valid is None else int(x.size - np.count_nonzero(valid))
        example = None
        if not dtype_ok:
            example = {"output_dtype": z.dtype.name, "due_dtype": self.std.output_type, "batch": label}
        elif invalid:
            i = int(np.flatnonzero(~valid)[0])
            example = {**self.example(x, z, ref, i, label), "output_dtype": z.dtype.name}
        self.v.add("output_type", int(x.size), int(x.size) if not dtype_ok else invalid, example)
        bad = np.flatnonzero(wrong)
        count = int(bad.size)
        if count:
            res.mismatches += count
            res.not_truth_values += invalid
            t, r = truth[bad], ref[bad]
            ok = np.ones(bad.size, bool) if valid is None else valid[bad]
            res.false_positives += int(np.count_nonzero(ok & t & ~r))
            res.false_negatives += int(np.count_nonzero(ok & ~t & r))
            for i in bad[: EXAMPLES - len(res.examples)]:
                res.examples.append(self.example(x, z, ref, int(i), label))
            if self.first_at is None:
                self.first_at = (key, int(bad[0]))
        self.v.add("exact", int(x.size), count, res.examples[0] if count and res.examples else None)
        return count

    def example(self, x, z, ref, i: int, label: str) -> dict:
        fmt = self.fmt
        bits = int(x[i : i + 1].view(fmt.uint)[0])
        return {
            "x": value_text(x[i], fmt),
            "bits": f"0x{bits:0{fmt.bits // 4}x}",
            "class": class_name(bits, fmt),
            "output": output_value(z[i]),
            "due": bool(ref[i]),
            "batch": label,
        }


# ---------------------------------------------------------------- layouts


def two_d(n: int) -> tuple[int, int]:
    """A 2-D shape of n elements, as square as a small divisor makes it: (rows, columns)."""
    for r in (1024, 256, 64, 16, 8, 4, 2):
        if n % r == 0 and n // r >= 2:
            return r, n // r
    return n, 1


class Buffers:
    """opcert's own arrays for one batch's calls: the flat input's copy and the layouts' inputs (reused from one
    float32 block to the next: fresh pages for five arrays of 2^22 a block cost more than the calls)."""

    def __init__(self, n: int, dtype):
        self.flat = np.empty(n, dtype)
        self.reversed = np.empty(n, dtype)
        self.strided = np.empty(2 * n, dtype)
        self.negative = np.empty(n, dtype)
        self.shaped = np.empty(n, dtype)
        self.shape = two_d(n)

    def fill(self, x: np.ndarray):
        """(the flat input, the layouts: (name, the input in that layout, how to bring its output back to x's
        order)), each a copy of x or a view over one."""
        np.copyto(self.flat, x)
        np.copyto(self.reversed, x[::-1])
        self.strided[1::2] = 0
        np.copyto(self.strided[::2], x)
        np.copyto(self.negative, x[::-1])
        np.copyto(self.shaped, x)
        rows, cols = self.shape
        return self.flat, (
            ("reversed", self.reversed, lambda z: z[::-1]),
            ("strided view (every other element of a buffer twice as long)", self.strided[::2], lambda z: z),
            ("negatively strided view", self.negative[::-1], lambda z: z),
            (f"2-D shape ({rows}, {cols})", self.shaped.reshape(rows, cols), lambda z: z.reshape(-1)),
        )


def run_calls(tgt, op, std, attrs: dict, prepared):
    """The flat call (a TargetFailure ends the measurement) and each layout's (a failure is the layout's
    finding), on the inputs Buffers.fill prepared: (z, [(name, the output in x's order, or the TargetFailure)])."""
    flat, given = prepared
    z = call(tgt, op, std, flat, attrs)
    out = []
    for name, xl, back in given:
        try:
            out.append((name, np.asarray(back(call(tgt, op, std, xl, attrs)))))
        except TargetFailure as exc:
            out.append((name, exc))
    return z, out


def check_layouts(v: Verdicts, x: np.ndarray, z: np.ndarray, outputs: list, label: str, fmt) -> None:
    """The layout property on one batch: each layout's outputs against the flat call's z, output for output
    (the same dtype and values); a call that raised or returned another shape refutes it."""
    for name, zl in outputs:
        if isinstance(zl, TargetFailure):
            v.add("layout", int(x.size), int(x.size), {"layout": name, "error": str(zl), "batch": label})
            continue
        if zl.dtype != z.dtype:
            v.add(
                "layout", int(x.size), int(x.size),
                {"layout": name, "output_dtype": zl.dtype.name, "flat_output_dtype": z.dtype.name, "batch": label},
            )  # fmt: skip
            continue
        differ = np.flatnonzero(zl.reshape(-1) != z.reshape(-1))
        example = None
        if differ.size:
            i = int(differ[0])
            bits = int(x[i : i + 1].view(fmt.uint)[0])
            example = {
                "layout": name,
                "x": value_text(x[i], fmt),
                "bits": f"0x{bits:0{fmt.bits // 4}x}",
                "output": output_value(zl.reshape(-1)[i]),
                "flat_output": output_value(z.reshape(-1)[i]),
                "batch": label,
            }
        v.add("layout", int(x.size), int(differ.size), example)


# ---------------------------------------------------------------- inputs


def specials(fmt: FloatFormat) -> np.ndarray:
    """Every special class of pattern, both signs: zeros, infinities, quiet NaNs (the canonical one, the least
    and greatest payloads, a middle one) and signalling NaNs (the least and greatest payloads, a middle one), the
    least and greatest subnormals and normals, the greatest finite value, one, and the patterns next to the
    infinities."""
    f = fields(fmt)
    sig, quiet, exp = f.significand, f.quiet, f.exponent
    one = ((1 << (fmt.bits - fmt.p - 1)) - 1) << (fmt.p - 1)
    mags = [
        0,
        exp,  # inf
        exp | quiet,  # the canonical quiet NaN
        exp | quiet | 1,
        exp | quiet | (quiet >> 1),
        exp | sig,  # the greatest quiet payload: all ones
        exp | 1,  # the least signalling payload
        exp | (quiet >> 1),
        exp | (quiet - 1),  # the greatest signalling payload
        exp | (0x5555555555555555 & (quiet - 1)),
        1,  # the least subnormal
        sig,  # the greatest subnormal
        sig + 1,  # the least normal
        exp - 1,  # the greatest finite value
        exp - 2,
        one,
        one - 1,
        one + 1,
    ]
    pats = [m | s for m in mags for s in (0, f.sign)]
    return np.array(pats, dtype=np.uint64).astype(fmt.uint).view(fmt.dtype)


def sampled_batches(fmt: FloatFormat, n: int, seed: int) -> list[tuple[str, np.ndarray]]:
    """(label, inputs) of the samples: the special patterns, n // 8 random patterns whose exponent field is all
    ones (NaNs of random payloads and signs, and infinities), the rest random bit patterns."""
    rng = np.random.default_rng(seed)
    f = fields(fmt)
    top = np.iinfo(fmt.uint).max
    nan_n = max(1, n // 8)
    rand = rng.integers(0, top, size=max(0, n - nan_n), dtype=fmt.uint, endpoint=True)
    ones = rng.integers(0, top, size=nan_n, dtype=fmt.uint, endpoint=True)
    ones = (ones & fmt.uint.type(f.sign | f.significand)) | fmt.uint.type(f.exponent)
    return [
        ("special patterns", specials(fmt)),
        (f"random patterns of exponent all ones (seed {seed})", ones.view(fmt.dtype)),
        (f"random bit patterns (seed {seed})", rand.view(fmt.dtype)),
    ]


# ---------------------------------------------------------------- the measurement


def measure_predicate(op, target: str = "opcert", dtype: str = "float32", options: PredicateOptions | None = None,
                      **kw) -> PredicateResult:  # fmt: skip
    """Measure `target` on the predicate operator `op` in `dtype` (options: PredicateOptions, or its fields as
    keywords). An untrusted target runs in a supervised worker: a crash is a result (status crashed), never
    opcert's."""
    o = replace(options or PredicateOptions(), **kw)
    op = get_predicate_operator(op)
    fmt = get_format(dtype)
    o = settle(op, fmt, o)
    std = op.standard(o.standard)
    attrs = op.attributes_for(std, dict(o.attrs))
    if target != "opcert" and o.isolation == "process" and not in_worker():
        try:
            return run_isolated(measure_predicate, op.name, target, fmt.name, replace(o, isolation="none"))
        except WorkerLost as lost:
            return PredicateResult(
                op.name, target, fmt.name, std.key, attrs, status="crashed", error=f"target {target} {lost}",
                exhaustive=o.exhaustive, command=command(op, target, fmt, o), due_dtype=std.output_type,
            )  # fmt: skip
    t0 = time.perf_counter()
    res = PredicateResult(op.name, target, fmt.name, std.key, attrs, exhaustive=o.exhaustive)
    res.command, res.due_dtype = command(op, target, fmt, o), std.output_type
    tgt = load_predicate(target)
    res.target_version = str(getattr(tgt, "version", ""))
    try:
        why = tgt.unsupported(op, std, fmt.name, attrs)
    except Exception as exc:  # noqa: BLE001 - the target's own failure to answer
        why, res.status, res.error = (
            None,
            "crashed",
            f"target {target}: unsupported() raised {type(exc).__name__}: {exc}",
        )
    if res.status == "crashed":
        res.elapsed_s = time.perf_counter() - t0
        return res
    if why:
        res.status, res.error = "unsupported", why
        res.elapsed_s = time.perf_counter() - t0
        return res
    v = Verdicts(op.properties_of(std.key))
    tally = Tally(res, fmt, std, v)
    try:
        if fmt.bits == 32 and o.exhaustive:
            inputs = _every_float32(res, op, std, fmt, tgt, attrs, o, tally, v)
        else:
            inputs = _batches(res, op, std, fmt, tgt, attrs, o, tally, v)
        _replay(res, tally, inputs, tgt, op, std, attrs)
        res.properties = v.results("enumeration" if o.exhaustive else "samples", complete=o.exhaustive)
    except TargetFailure as exc:
        res.status, res.error = "crashed", f"target {target}: {exc}"
    if not std.lists(fmt.name):
        res.error = (res.error + "; " if res.error else "") + (
            f"{std.key}'s {std.op_name} does not list {fmt.name}: measured as asked"
        )
    res.elapsed_s = time.perf_counter() - t0
    return res


def _batches(res, op, std, fmt, tgt, attrs, o, tally, v):
    """Every pattern of a 16-bit format in one batch, or the samples; the layouts on each batch."""
    if fmt.bits == 16:
        batches = [("every pattern", np.arange(1 << 16, dtype=np.uint16).view(fmt.dtype))]
    else:
        batches = sampled_batches(fmt, o.samples, o.seed)
    for key, (label, x) in enumerate(batches):
        z, outputs = run_calls(tgt, op, std, attrs, Buffers(x.size, x.dtype).fill(x))
        wrong = tally.add(label, key, x, z, op.reference(x, attrs, std.key))
        res.batches.append({"label": label, "inputs": int(x.size), "wrong": wrong})
        check_layouts(v, x, z, outputs, label, fmt)
    return lambda key: batches[key][1]


def block_range(nb: int):
    """The float32 blocks a sweep runs: all of them (tests run a few through the same code)."""
    return range(nb)


def _every_float32(res, op, std, fmt, tgt, attrs, o, tally, v):
    """Every float32 pattern: 1,024 blocks of 2^22. One thread makes every call of the target (never two at
    once), block b + 1's while this thread checks block b and prepares block b + 2's inputs: two sets of arrays
    take turns."""
    size = 1 << BLOCK_BITS
    nb = 1 << (32 - BLOCK_BITS)
    base = np.arange(size, dtype=np.uint32)
    xs = [np.empty(size, np.uint32) for _ in range(2)]
    buffers = [Buffers(size, np.float32) for _ in range(2)]

    def block(b: int, out=None) -> np.ndarray:
        return np.add(base, np.uint32(b * size), out=out).view(np.float32)

    def prepare(b: int, k: int):
        x = block(b, xs[k % 2])
        return x, buffers[k % 2].fill(x)

    order = list(block_range(nb))
    progress = Progress(f"{op.name} float32 {res.target}: every pattern", len(order), "blocks") if o.progress else None
    if progress:
        progress.__enter__()
    try:
        with ThreadPoolExecutor(1, thread_name_prefix="opcert-predicate-calls") as pool:
            ready = {k: prepare(order[k], k) for k in range(min(2, len(order)))}
            ahead = pool.submit(run_calls, tgt, op, std, attrs, ready[0][1])
            for k, b in enumerate(order):
                z, outputs = ahead.result()
                if k + 1 < len(order):
                    ahead = pool.submit(run_calls, tgt, op, std, attrs, ready[k + 1][1])
                x = ready.pop(k)[0]
                label = f"block {b} of {nb}: patterns 0x{b * size:08x} to 0x{(b + 1) * size - 1:08x}"
                wrong = tally.add(label, b, x, z, op.reference(x, attrs, std.key))
                if wrong:
                    res.batches.append({"label": label, "inputs": size, "wrong": wrong})
                check_layouts(v, x, z, outputs, label, fmt)
                if k + 2 < len(order):
                    ready[k + 2] = prepare(order[k + 2], k + 2)  # block k's arrays, now free
                if progress:
                    progress.advance(1)
    finally:
        if progress:
            progress.__exit__(None, None, None)
    res.batches.insert(0, {"label": f"every float32 pattern ({len(order)} blocks; blocks with wrong outputs follow)",
                           "inputs": res.inputs, "wrong": res.mismatches})  # fmt: skip
    return block


def _replay(res, tally, inputs, tgt, op, std, attrs) -> None:
    """The first wrong output's call made again: whether it gives the same output."""
    if tally.first_at is None or not res.examples:
        return
    key, i = tally.first_at
    x = inputs(key)
    z = call(tgt, op, std, x.copy(), attrs)
    res.examples[0]["replayed"] = bool(output_value(z.reshape(-1)[i]) == res.examples[0]["output"])
