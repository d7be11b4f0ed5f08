"""Exhaustive binary32 sweeps: all 2**32 inputs, in chunks, on all cores.

The sweep walks magnitudes: chunk i covers the bit patterns m of [i * 2**24,
(i + 1) * 2**24) and runs the target on +m and on -m, block by block (aligned
blocks of 65,536 consecutive patterns of one sign), so that every pair (x, -x)
and every pair of adjacent inputs is in one chunk or at the boundary of two
consecutive ones. In each block the reference's binary64 fast path and a
compiled kernel (sweep_kernel) classify every input; the few inputs the fast
path cannot decide go to the exact reference; the declared properties are
checked on the same outputs (verify.properties). The target runs once per input.
Where the operator's reference form is odd or even by structure (expr.parity),
the reference's ball at -m is the one at +m, negated or not (rounding to
nearest is symmetric), and only exact zeros are looked at again (their sign is
the formula's, at their own sign).
A sweep for the properties alone (`accuracy=False`, what `opcert prove --target`
runs) skips the reference and the classification: the properties need only
the target's outputs, the limits at +-inf and the exact points.

A finished chunk is written to the checkpoint directory, atomically, with a
checksum, before it counts; an interrupted sweep resumes with the chunks it
lacks. A chunk is reused only when its checkpoint key matches: the key covers
opcert's source, the target's code fingerprint (a user module's source and
what it loads, a runtime's version and build), what the target loaded by its
first call (targets.dependencies: shared objects, modules, data files), the CPU's SIMD paths (as NumPy
dispatches them: results can differ between AVX2 and AVX-512), the operator, attributes,
standard, range, block size, policies and the properties checked. Chunk files
are verified (checksum, key, internal consistency) before they count; one that
fails is recomputed and the result says so. The checksum detects corruption
and edits; it is not a signature. Before a finished chunk is reused, the target
runs again on every block of it, in an order drawn afresh at each resume (a
random seed, recorded in the result's `sweep.resume`; OPCERT_REPLAY_SEED gives it
back), and each block's outputs are compared with the fingerprint the chunk
recorded of them (sweep_kernel.output_fingerprint), and every output its
results name with the recorded one: any difference discards the chunk, which
is computed again, and the result names the first difference located (the
input, both outputs) (replay_chunk). What no fingerprint of the target sees (an
environment variable, a data file, a rebuilt library) cannot resume a stale
verdict, however few outputs it changes: a sample of blocks could not promise
that (256 outputs changed among 2^32 fall in 256 of 65,536 blocks: one block
per chunk finds one of them with probability 0.39). The replay costs the
target's stage of each chunk, not the reference's, and the fingerprints add
little to a chunk (bench/README.md, 'Figures behind choices in the code').

Chunks run in supervised worker processes (opcert.workers): a target that
exits, crashes or overruns its time limit fails the sweep with the block it
was given, and the finished chunks stay on disk.
"""

from __future__ import annotations

import base64
import ctypes.util
import hashlib
import json
import os
import secrets
import time
from collections import namedtuple
from dataclasses import asdict, dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from opcert import expr, provenance
from opcert.errors import TargetFailure, UsageError
from opcert.expr import compiled_eval, libm_arrays
from opcert.files import write_json_atomic
from opcert.fingerprint import code_fingerprint
from opcert.formats import FLOAT_FORMATS
from opcert.numerics import ball, ball_compiled, one_sided
from opcert.progress import tell
from opcert.spec import get_operator, reference
from opcert.targets import load_target
from opcert.verify.accuracy import sweep_kernel
from opcert.verify.accuracy.stats import HIST_LABELS, KINDS, Stats, float_stats
from opcert.verify.accuracy.sweep_kernel import SAMPLE_STRIDE, TOP
from opcert.verify.properties.checks import PropertyChecker, compile_all
from opcert.workers import Pool, WorkerLost

F32 = FLOAT_FORMATS["float32"]
CHUNK = 1 << 24  # magnitudes per chunk (each chunk holds 2 * CHUNK inputs)
BLOCK = 1 << 16  # inputs per target call: 512 KiB of binary64 per array, stays in L2
HALF = 1 << 31  # every magnitude: 0 .. 0x7fffffff
SIGN = np.uint32(0x80000000)
# where the fast pass leaves more than 1 in 2^SPECIALS_SHIFT of a block's inputs, sweep_kernel.specials takes
# those block would count without a figure (NaN and infinite references) first: a pass over the whole block
# (bench/sweep_stages_block.py)
SPECIALS_SHIFT = 4
# -m's exact zeros are signed before the pass, which then runs unmirrored, where more than this share of +m's balls
# are exact zeros (run_chunk._classify)
ZEROS_SHIFT = 4
CHUNK_SCHEMA = "opcert.chunk/4"  # /4: the fingerprints of every block's outputs (/3: one block's digest)


@dataclass(frozen=True)
class SweepConfig:
    op: str
    target: str
    attrs: tuple  # ((name, "numerator/denominator"), ...)
    standard: str | None
    start: int = 0  # magnitude range [start, stop): both signs are swept
    stop: int = HALF
    chunk: int = CHUNK
    flush_allowed: bool = False
    target_fingerprint: str = ""
    target_dependencies: str = ""  # what the target loaded by its first call (targets.dependencies)
    properties: tuple = ()  # names of the properties checked in the same pass
    block: int = BLOCK
    accuracy: bool = True  # False: the properties only (no reference, no ULP statistics)
    timeout: float | None = None  # per target call; not part of the key
    opcert_code: str = ""  # code_fingerprint() where the sweep started (default: this process's)

    @property
    def chunks(self) -> int:
        return -(-(self.stop - self.start) // self.chunk)

    @property
    def inputs(self) -> int:
        return 2 * (self.stop - self.start)

    def identity(self) -> dict:
        d = asdict(self)
        d.pop("timeout")
        d["opcert_code"] = self.opcert_code or code_fingerprint()
        # the same library can compute other bits on another CPU (NumPy's and the runtimes'
        # SIMD paths): a sweep resumed on a different host must not mix the two
        d["simd"] = provenance.simd()
        # the reference's array functions decide how many inputs go to the exact path (the counts a chunk
        # records), never a correctly rounded value: a sweep resumed with others must not mix the counts
        d["reference_functions"] = libm_arrays.status()
        d["schema"] = CHUNK_SCHEMA
        return d

    def key(self) -> str:
        """Checkpoints are reused only by the same sweep of the same code."""
        return hashlib.sha256(json.dumps(self.identity(), sort_keys=True).encode()).hexdigest()[:16]

    def resolved(self) -> dict[str, Fraction]:
        return {k: Fraction(v) for k, v in self.attrs}

    def chunk_range(self, i: int) -> tuple[int, int]:
        lo = self.start + i * self.chunk
        return lo, min(lo + self.chunk, self.stop)


_CACHE: dict = {}


def keep_freed_memory() -> None:
    """Blocks allocate and free arrays of 256-512 KiB thousands of times; glibc
    maps and unmaps each, and the page faults cost more than the arithmetic
    (bench/README.md, 'Figures behind choices in the code'). Keep freed memory instead."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        libc.mallopt(M_MMAP_THRESHOLD, 1 << 28)
        libc.mallopt(M_TRIM_THRESHOLD, 1 << 28)
    except (OSError, AttributeError, TypeError):
        pass  # not glibc: slower, not wrong


def limits_bits(op, attrs, standard) -> tuple[int, int, float, float]:
    """The correctly rounded binary32 results at +inf and -inf (bits) and the exact limits (float)."""
    x = np.array([np.inf, -np.inf], dtype=np.float32)
    ref = reference.reference_detailed(op, x, attrs, standard)
    b = ref.rounded.view(np.uint32)
    return int(b[0]), int(b[1]), float(ref.exact_hi[0]), float(ref.exact_hi[1])


# What every chunk of a sweep shares in one process (_setup): the operator, its attributes (Fractions, and as
# floats for the ball), the loaded target, the limits (limits_bits: rpos, rneg, vpos, vneg) and as block takes
# them (with the types run_chunk gives it: warm_kernels compiles those), the properties compiled.
_Setup = namedtuple("_Setup", "op attrs a64 tgt limits at_inf compiled")


def _setup(cfg: SweepConfig) -> _Setup:
    """Per process: the operator, the target and the constants of the kernel."""
    if cfg in _CACHE:
        return _CACHE[cfg]
    if not _CACHE:
        keep_freed_memory()
    op = get_operator(cfg.op)
    attrs = cfg.resolved()
    tgt = load_target(cfg.target, cfg.timeout, cfg.standard)
    if tgt.info.fingerprint != cfg.target_fingerprint:
        raise TargetFailure(
            f"target {cfg.target} changed while the sweep ran (its code fingerprint is "
            f"{tgt.info.fingerprint}, the sweep started with {cfg.target_fingerprint}): run it again"
        )
    lims = limits_bits(op, attrs, cfg.standard)
    compiled = compile_all(op, F32, attrs, cfg.standard or op.primary, set(cfg.properties))
    at_inf = sweep_kernel.AtInf(np.uint32(lims[1]), np.uint32(lims[0]), lims[3], lims[2], op.nan_result(attrs))
    _CACHE[cfg] = _Setup(op, attrs, {k: float(v) for k, v in attrs.items()}, tgt, lims, at_inf, compiled)
    return _CACHE[cfg]


def block_label(cfg: SweepConfig, lo: int, hi: int, negative: bool) -> str:
    s = 0x80000000 if negative else 0
    return f"binary32 inputs 0x{lo | s:08x}..0x{(hi - 1) | s:08x} ({hi - lo:,} inputs)"


def run_chunk(cfg: SweepConfig, index: int) -> dict:
    """Sweep one chunk (both signs); its statistics and property state as JSON."""
    if cfg.opcert_code and cfg.opcert_code != code_fingerprint():
        # a worker started after opcert's files changed (a checkout, an edit, an upgrade during a long
        # sweep), or a Dask worker with another opcert, would run other code than the sweep's key says
        raise UsageError(
            f"opcert's own source files changed while the sweep ran, or this worker has another "
            f"opcert (code fingerprint {cfg.opcert_code[:12]} where the sweep started, "
            f"{code_fingerprint()[:12]} in the worker for chunk {index}): run the command again "
            "with one opcert everywhere; chunks finished by other code are not reused"
        )
    chunk = _Chunk(cfg, index)
    for b0 in range(chunk.lo, chunk.hi, cfg.block):
        chunk.run_block(b0, min(b0 + cfg.block, chunk.hi))
    return chunk.result()


class _Chunk:
    """One chunk of a sweep as run_chunk runs it, block by block: the accumulators, the property checker,
    the outputs its results name, and the state one block hands the next."""

    def __init__(self, cfg: SweepConfig, index: int):
        self.cfg, self.index = cfg, index
        self.setup = s = _setup(cfg)
        self.at_inf = s.at_inf
        self.t0 = time.perf_counter()
        self.lo, self.hi = cfg.chunk_range(index)
        self.tally = sweep_kernel.block_state()
        self.form = s.op.reference_form(cfg.standard)
        # the same ball, compiled (None: a node it has no code for, or a chunk of fewer than COMPILED_BALL_FROM
        # magnitudes, where numerics.ball's arrays cost less than the compile); a sweep for the properties
        # alone has no reference
        self.fast_ball = (
            ball_compiled.compiled(self.form, s.a64, tune=ball_compiled.kernel_tuning())
            if cfg.accuracy and self.hi - self.lo >= COMPILED_BALL_FROM
            else None
        )
        self.formula = s.op.standard(cfg.standard).zero_form  # what gives an exact zero its sign
        # where the real function is odd (or even), the correctly rounded reference at -m is the one at +m
        # negated (or the same): rounding to nearest even is symmetric. The +m side's ball serves both.
        self.mirror = expr.parity(self.form)
        self.kept = None  # +m's ball (v, rad, sg, how many exact zeros), for -m
        self.near = True  # every wrong output so far within 2 ULPs (sweep_kernel.easy_pass)
        # per sign: the last block sent more than 1 in 128 of its inputs to block (the first one of a chunk
        # does, with empty worst-case lists), or its sample raised a threshold: this one's thresholds are
        # raised by a sample first (sampled_floor)
        self.crowded = [True, True]
        self.slow, self.checker = Stats(), PropertyChecker(s.compiled, F32)
        self.und, self.und2 = np.empty(cfg.block, np.int64), np.empty(cfg.block, np.int64)
        self.hard = np.empty(cfg.block, np.bool_)
        self.keep = np.empty(cfg.block, np.uint32)  # +m's decided references, for -m (sweep_kernel.easy)
        self.base = np.arange(cfg.block, dtype=np.uint32)
        # the outputs of every input the chunk's results name (worst cases, first mismatches, property
        # counterexamples): verdicts are made from what was measured, never from a second run
        self.outs, self.sig = {}, None
        # the fingerprint of each block's outputs (per block: +m then -m), which a resume checks (replay_chunk)
        self.prints = np.zeros((2 * -(-(self.hi - self.lo) // cfg.block), 3), np.uint64)
        self.weights = sweep_kernel.fingerprint_weights(cfg.block)

    def run_block(self, b0: int, b1: int) -> None:
        """Both signs of the block of magnitudes [b0, b1), then its properties."""
        cfg, t = self.cfg, self.tally
        mags = self.base[: b1 - b0] + np.uint32(b0)
        ys = []
        for negative in (False, True):
            bits = mags | SIGN if negative else mags
            y = _call_block(cfg, self.setup.tgt, self.setup.op, self.setup.attrs, b0, b1, negative)
            ys.append(y)
            self.prints[2 * ((b0 - self.lo) // cfg.block) + negative] = sweep_kernel.output_fingerprint(
                y.view(np.uint32), self.weights
            )
            if cfg.accuracy:
                self._classify(bits, y, negative)
        before = self.checker.chain_ends()
        self.checker.add_block(mags, ys[0], ys[1], limits=self.setup.limits[:2], negb=bits)
        now = (t.top_bits.tobytes(), t.topw_bits.tobytes(), t.first.tobytes(), self.slow.n, self.checker.violations())
        if now != self.sig:  # something new is named: its output is kept while it is at hand
            self.sig = now
            _keep_outputs(self.outs, _named(t, self.slow, self.checker), b0, b1, ys, before)

    def _classify(self, bits, y, negative: bool) -> None:
        """The accuracy of one block at one sign: the branch-free pass, block on what it leaves, then the
        one-sided decisions and the exact reference on what block leaves."""
        n, t, flush, odd = bits.size, self.tally, self.cfg.flush_allowed, self.mirror == "odd"
        # at -m of an odd or even reference, the ball at +m (odd: negated; rounding to nearest is symmetric):
        # what +m's pass decided is decided here with r's sign flipped (sweep_kernel.easy's kept); the rest
        # (exact zeros, whose sign comes from the formula at this sign; NaN and infinite inputs; new worst
        # cases) goes to block with the mirrored ball, built only then
        mirrored = negative and self.mirror
        blk = sweep_kernel.Block(bits, y, y.view(np.uint32), *self.kept[:3]) if mirrored else self._own(bits, y)
        if mirrored and self.kept[3] > n >> ZEROS_SHIFT:
            # many exact zeros (Round below 1/2): the mirror pass leaves each to block, whose branches cost
            # several times the plain pass; their signs are set here and the plain pass takes the ball as -m's
            # own (bench/README.md, 'Figures behind choices in the code')
            blk, mirrored = self._mirrored(blk, odd), False
        tops = sweep_kernel.Floor(t.top_err[TOP - 1], t.top_bits[TOP - 1], t.topw_err[TOP - 1], t.topw_bits[TOP - 1])
        if self.crowded[negative]:
            tops = sweep_kernel.sampled_floor(
                blk, self.at_inf, t, flush, SAMPLE_STRIDE, (-1.0 if odd else 1.0) if mirrored else None
            )
        raised = tops.top_min != t.top_err[TOP - 1] or tops.topw_min != t.topw_err[TOP - 1]
        scratch = (
            (None, sweep_kernel.Mirror(self.keep[:n], -1.0 if odd else 1.0, np.uint32(0x80000000 if odd else 0)))
            if mirrored
            else (self.keep[:n],)
        )
        got, self.near = sweep_kernel.easy_pass(self.near, blk, tops, self.hard, *scratch)
        sweep_kernel.take_easy(got, t)
        left = n - got[0] - got[2]  # the inputs the fast pass left: none in most blocks of most operators
        if left:
            blk = self._mirrored(blk, odd) if mirrored else blk
        if left > n >> SPECIALS_SHIFT:
            # many: inputs outside the domain (NaN) or whose value overflows, taken without block's branches
            got = sweep_kernel.specials(blk, self.hard[:n], self.at_inf.r_nan != self.at_inf.r_nan)
            sweep_kernel.take_specials(got, t)
            left -= got[0] + got[1]
        self.crowded[negative] = raised or left > n >> 7
        if left == 0:
            return
        n_und = sweep_kernel.block(blk, self.at_inf, t, self.und, flush, np.flatnonzero(self.hard[:n]))
        if n_und:
            self._undecided(blk, n_und)

    def _own(self, bits, y):
        """The block with this sign's own ball, which is kept for -m."""
        x, a64 = bits.view(np.float32), self.setup.a64
        x64 = _wide(x)
        if self.fast_ball is not None:
            v, rad, ok, sg = self.fast_ball(x64)
        else:
            v, rad, ok, sg = ball.evaluate(self.form, x64, a64)
            v = np.array(np.broadcast_to(v, x64.shape), dtype=np.float64)
            rad = np.array(np.broadcast_to(rad, x64.shape), dtype=np.float64)  # prepare writes to it
            ok = np.broadcast_to(ok, x64.shape)
        zeros = sweep_kernel.prepare(v, rad, np.ascontiguousarray(ok, dtype=np.bool_))
        # the signs as every pass is compiled for them: int8, writable (NumPy's ball gives a broadcast view)
        rad, sg = np.ascontiguousarray(rad), np.require(sg, np.int8, ["C", "W"])
        if zeros:
            # an exact zero takes the sign IEEE arithmetic gives the standard's formula (at this sign:
            # the formula need not be odd where the real function is)
            if zeros == v.size:  # every input (Round's blocks below 0.5): no selection
                zero_signs(self.formula, x64, a64, v)
            else:
                zero = ok & (v == 0) & (rad == 0)
                v[zero] = zero_signs(self.formula, _wide(x, x64, zero), a64)
        self.kept = (v, rad, sg, zeros)
        return sweep_kernel.Block(bits, y, y.view(np.uint32), v, rad, sg)

    def _mirrored(self, blk, odd: bool):
        """blk with +m's ball mirrored to -m: negated (odd) or the same (even), its exact zeros signed by
        the formula at this sign."""
        v, rad, sg, zeros = self.kept
        v, sg = (-v, -sg) if odd else (v.copy(), sg)
        if zeros:
            zero = (v == 0) & (rad == 0)
            v[zero] = zero_signs(self.formula, _wide(blk.xbits.view(np.float32), None, zero), self.setup.a64)
        return blk._replace(v=v, sgn=sg)

    def _undecided(self, blk, n_und: int) -> None:
        """The n_und inputs block left (self.und): midpoints decided by the side of the exact value
        (numerics.one_sided), the rest by the exact reference."""
        s, flush, x, y = self.setup, self.cfg.flush_allowed, blk.xbits.view(np.float32), blk.yvals
        idx = self.und[:n_und]
        if one_sided.supported(self.form):
            idx = idx.copy()
            om, orr, os_, ook = one_sided.evaluate(self.form, _wide(x, None, idx), s.a64)
            good, _, rep = one_sided.decide(om, orr, os_, ook, F32)
            if good.any():
                j = idx[good]
                sweep_kernel.block(
                    sweep_kernel.Block(
                        blk.xbits[j],
                        y[j],
                        y.view(np.uint32)[j],
                        np.ascontiguousarray(rep[good]),
                        np.zeros(j.size),
                        np.ascontiguousarray(blk.sgn[j]),
                    ),
                    self.at_inf,
                    self.tally,
                    self.und2,
                    flush,
                    np.arange(j.size),
                )
                idx = idx[~good]
        if idx.size:
            ref = reference.reference_detailed(s.op, x[idx], s.attrs, self.cfg.standard)
            self.slow.merge(float_stats(x[idx], y[idx], ref, F32, flush))

    def result(self) -> dict:
        """The chunk's statistics, property state, named outputs and block fingerprints, as JSON."""
        t, checker = self.tally, self.checker
        self.setup.tgt.check_globals(f"chunk {self.index}")
        ends = checker.chain_ends()
        self.outs.update(ends)
        named = _named(t, self.slow, checker) | set(ends)
        fast = Stats(
            *(int(c) for c in t.counts),
            histogram=[int(h) for h in t.hist],
            max_distance=int(t.maxdist[0]),
            top=[(float(e), int(b)) for e, b in zip(t.top_err, t.top_bits) if b >= 0],
            top_wrong=[(float(e), int(b)) for e, b in zip(t.topw_err, t.topw_bits) if b >= 0],
            first={k: int(f) for k, f in zip(KINDS, t.first) if f < (1 << 32)},
        )
        out = {
            "schema": CHUNK_SCHEMA,
            "key": self.cfg.key(),
            "index": self.index,
            "range": [self.lo, self.hi],
            "stats": fast.merge(self.slow).to_json(),
            "properties": checker.to_json(),
            "elapsed_s": time.perf_counter() - self.t0,
            "undecided": self.slow.n,
            "modified_input": self.setup.tgt.modified_input,
            "fp_environment": self.setup.tgt.findings,
            "outputs": sorted([b, self.outs[b]] for b in named if b in self.outs),
            "replay": {"scheme": sweep_kernel.FINGERPRINT_SCHEME, "fingerprints": _encode_prints(self.prints)},
        }
        out["sha256"] = chunk_digest(out)
        return out


def zero_signs(formula, x64: np.ndarray, a64: dict, out: np.ndarray | None = None) -> np.ndarray:
    """reference.zero_signs(formula, x64, a64) (into out where given): -0.0 where IEEE arithmetic gives the
    formula -0 at x64, else +0.0, from the formula's compiled loops (expr.compiled_eval: numpy_eval's values,
    bit for bit, which is what reference.zero_signs evaluates) where it has them. reference.zero_signs
    evaluates it in NumPy, a pass and a temporary per node, several times slower, and half of Round's inputs
    are exact zeros (bench/sweep_stages_block.py; bench/README.md, 'Figures behind choices in the code')."""
    x64 = np.ascontiguousarray(x64, dtype=np.float64)
    if x64.ndim == 1 and x64.size >= ZERO_SIGNS_COMPILED:
        z = compiled_eval.evaluate(formula, x64, a64, 53)
        if z is not None:
            return sweep_kernel.signed_zeros(z, np.empty(x64.size) if out is None else out)
    z = reference.zero_signs(formula, x64, a64)
    if out is None:
        return z
    out[:] = z
    return out


# A chunk of fewer magnitudes evaluates the reference's ball with numerics.ball over arrays, which costs less
# there than compiling its kernel on a cold cache (bench/README.md, 'Figures behind choices in the code'). An
# exhaustive sweep's chunks are 2^24.
COMPILED_BALL_FROM = 1 << 20
ZERO_SIGNS_COMPILED = 256  # zero_signs goes to the compiled loops from this many inputs (fewer: a call's setup)


def _call_block(cfg: SweepConfig, tgt, op, attrs, b0: int, b1: int, negative: bool) -> np.ndarray:
    """The target's outputs on one block, called as run_chunk calls it: the target gets a buffer of its
    own, filled with the block's inputs and checked after the call (cheaper than its run(), which would copy
    x and compare the copy: bench/README.md, 'Figures behind choices in the code')."""
    start = np.uint32(b0 | 0x80000000) if negative else np.uint32(b0)
    given = np.empty(b1 - b0, np.uint32)
    sweep_kernel.progression(given, start)
    y = tgt.run(
        op, given.view(np.float32), attrs, label=block_label(cfg, b0, b1, negative), guard_globals=False, owned=True
    )
    if not sweep_kernel.is_progression(given, start):
        tgt.modified_input = True
    return y


def _encode_prints(prints: np.ndarray) -> str:
    return base64.b64encode(prints.astype("<u8").tobytes()).decode("ascii")


def _decode_prints(cfg: SweepConfig, index: int, data: dict) -> np.ndarray:
    """A chunk's block fingerprints, (2 x blocks, 3) uint64 (ValueError when malformed)."""
    lo, hi = cfg.chunk_range(index)
    raw = base64.b64decode(data["replay"]["fingerprints"].encode("ascii"), validate=True)
    n = 2 * -(-(hi - lo) // cfg.block)
    if len(raw) != n * 3 * 8:
        raise ValueError(f"{len(raw) // 24} block fingerprints for {n} blocks")
    return np.frombuffer(raw, "<u8").astype(np.uint64).reshape(n, 3)


def _named(t, slow: Stats, checker) -> set[int]:
    """The input bits a chunk's results name (t: block's Tally)."""
    out = {int(b) for b in t.top_bits if b >= 0} | {int(b) for b in t.topw_bits if b >= 0}
    out |= {int(b) for b in t.first if b < (1 << 32)}
    out |= {int(b) for _, b in slow.top + slow.top_wrong} | {int(b) for b in slow.first.values()}
    return out | checker.named_inputs()


def _keep_outputs(outs: dict, named: set, b0: int, b1: int, ys, before: dict) -> None:
    for b in named:
        if b in outs:
            continue
        m = b & 0x7FFFFFFF
        if b0 <= m < b1:
            outs[b] = int(ys[b >> 31].view(np.uint32)[m - b0])
        elif b in before:
            outs[b] = before[b]


def _wide(x: np.ndarray, x64: np.ndarray | None = None, sel=None) -> np.ndarray:
    """x (or x[sel]) in binary64: from x64 where the caller has it."""
    if x64 is not None:
        return x64 if sel is None else x64[sel]
    with np.errstate(invalid="ignore"):  # signalling NaN inputs widen quietly
        return (x if sel is None else x[sel]).astype(np.float64)


def chunk_digest(data: dict) -> str:
    body = {k: v for k, v in data.items() if k not in ("sha256", "elapsed_s")}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


def verify_chunk(data, cfg: SweepConfig, index: int) -> str | None:
    """Why a chunk file cannot be used (None when it can)."""
    try:
        if isinstance(data, dict) and data.get("schema") == "opcert.chunk/3":
            return (
                "written by an older opcert (opcert.chunk/3), without the fingerprints of its outputs that "
                "a resume checks"
            )
        if not isinstance(data, dict) or data.get("schema") != CHUNK_SCHEMA:
            return "not a chunk of this version"
        if data.get("sha256") != chunk_digest(data):
            return "checksum mismatch (the file was changed after it was written)"
        if data.get("key") != cfg.key() or data.get("index") != index:
            return "written by another sweep"
        lo, hi = cfg.chunk_range(index)
        if data.get("range") != [lo, hi]:
            return "covers another range"
        s = Stats.from_json(data["stats"])
        n = 2 * (hi - lo)
        if s.n != (n if cfg.accuracy else 0):
            return f"counts inconsistent with its {n:,} inputs"
        counts = [
            s.correctly_rounded,
            s.nan_mismatches,
            s.inf_mismatches,
            s.signed_zero_mismatches,
            s.subnormal_flushes,
        ] + list(s.histogram)
        if any(not isinstance(c, int) or c < 0 or c > n for c in counts):
            return f"counts inconsistent with its {n:,} inputs"
        if sum(s.histogram) > n or s.correctly_rounded > n - sum(s.histogram[2:]):
            return "more correctly rounded results than its histogram allows"
        if len(s.histogram) != len(HIST_LABELS):
            return "histogram of the wrong shape"
        for e, b in s.top + s.top_wrong:
            if not (isinstance(b, int) and (lo <= (b & 0x7FFFFFFF) < hi) and e >= 0):
                return "worst-case candidates outside the chunk"
        for name, a in data["properties"]["acc"].items():
            if name not in cfg.properties or not 0 <= a["violations"] <= a["evaluated"] <= n:
                return f"property counts for {name!r} inconsistent"
        if set(data["properties"]["acc"]) != set(cfg.properties) - _skipped(cfg):
            return "property set differs"
        for b, y in data["outputs"]:
            if not (isinstance(b, int) and isinstance(y, int) and 0 <= b < (1 << 32) and 0 <= y < (1 << 32)):
                return "recorded outputs malformed"
        if data["replay"]["scheme"] != sweep_kernel.FINGERPRINT_SCHEME:
            return "without the fingerprints of its outputs that a resume checks"
        _decode_prints(cfg, index, data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"malformed ({type(exc).__name__}: {exc})"
    return None


def _skipped(cfg: SweepConfig) -> set:
    return {
        c.name
        for c in compile_all(
            get_operator(cfg.op), F32, cfg.resolved(), cfg.standard or get_operator(cfg.op).primary, set(cfg.properties)
        )
        if c.skip is not None
    }


def default_checkpoint_dir(cfg: SweepConfig) -> Path:
    root = Path(os.environ.get("OPCERT_CACHE", ".opcert-cache"))
    return root / "sweeps" / cfg.key()


def refuse_non_directory(d) -> None:
    """A checkpoint path that exists must be a directory (checked before a target is loaded, and again when
    the checkpoint is opened)."""
    if Path(d).exists() and not Path(d).is_dir():
        raise UsageError(f"--checkpoint {d}: not a directory")


def _brief(v, limit: int = 40) -> str:
    t = json.dumps(v, sort_keys=True)
    return t if len(t) <= limit else t[: limit - 3] + "..."


def identity_changes(old, mine: dict) -> str:
    """What differs between a checkpoint's recorded identity (as JSON gave it back) and this sweep's, field
    by field: the fields that changed, each with both values (shortened). Compared as JSON: a tuple here
    is a list there, and is not a change."""
    if not isinstance(old, dict):
        return "its config.json records no identity to compare"
    mine = json.loads(json.dumps(mine, sort_keys=True))
    changed = [k for k in sorted(set(mine) | set(old)) if old.get(k) != mine.get(k)]
    if not changed:
        return "the same identity under another key (its config.json was edited)"
    parts = [f"{k}: {_brief(old.get(k))} there, {_brief(mine.get(k))} here" for k in changed]
    note = ""
    if "schema" in changed:
        note = "; written by another opcert version, whose chunks this one cannot check"
    return f"differs in {', '.join(changed)} ({'; '.join(parts)}){note}"


def _open_checkpoint(cfg: SweepConfig, checkpoint) -> Path:
    d = Path(checkpoint) if checkpoint else default_checkpoint_dir(cfg)
    refuse_non_directory(d)
    conf = d / "config.json"
    if d.is_dir() and conf.exists():
        try:
            old = json.loads(conf.read_text())
            old_key = old.get("key")
        except (OSError, ValueError, AttributeError):
            old, old_key = {}, None
        if old_key != cfg.key():
            raise UsageError(
                f"checkpoint directory {d} holds another sweep (key {old_key}; this one is "
                f"{cfg.key()}; {identity_changes(old.get('identity'), cfg.identity())}); give "
                "another --checkpoint directory, or delete this one"
            )
    elif d.is_dir() and any(d.iterdir()):
        raise UsageError(
            f"checkpoint directory {d} is not empty and holds no opcert sweep (no config.json); "
            "give an empty or new directory"
        )
    try:
        d.mkdir(parents=True, exist_ok=True)
        write_json_atomic(str(conf), {"key": cfg.key(), "identity": cfg.identity()})
    except OSError as exc:
        raise UsageError(f"checkpoint directory {d} cannot be written: {exc.strerror or exc}") from None
    return d


def sweep(
    cfg: SweepConfig,
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    checkpoint: Path | None = None,
    progress=None,
    seed: int | None = None,
    alongside: tuple | None = None,
) -> tuple[Stats, dict, dict]:
    """Run (or resume) the sweep: (merged Stats, merged property state (PropertyChecker), info).
    seed: the order of the resumed chunks' replays (default: replay_seed()). alongside: a task (fn, args,
    kwargs; fn a module-level function) run by the sweep's own workers beside its chunks, started second,
    after the first chunk (measure's layout check: its time overlaps the chunks' instead of coming before
    them); info["alongside"] is then (ok, its value or what it raised, as Pool.run gives them)."""
    directory = _open_checkpoint(cfg, checkpoint)
    done, rejected = {}, []
    for i in range(cfg.chunks):
        f = directory / f"chunk-{i:05d}.json"
        if not f.exists():
            continue
        try:
            data = json.loads(f.read_text())
        except (OSError, ValueError) as exc:
            data, why = None, f"unreadable ({exc})"
        else:
            why = verify_chunk(data, cfg, i)
        if why is None:
            done[i] = data
        else:
            rejected.append(f"chunk {i}: {why}")
            f.unlink(missing_ok=True)
    t0 = time.perf_counter()
    # one pool for the replays and the chunks: its workers load the target once for both
    with Pool(max(1, min(workers or os.cpu_count() or 1, cfg.chunks))) as pool:
        resume = _resume(cfg, directory, done, rejected, pool, seed, progress) if done else None
        resumed = len(done)
        todo = [i for i in range(cfg.chunks) if i not in done]
        tell(progress, None)  # the replay's phase, if any, is over: the count goes on
        if progress:
            progress(len(done), cfg.chunks)

        def record(i, data):
            why = verify_chunk(data, cfg, i)
            if why is not None:
                raise RuntimeError(f"a freshly computed chunk {i} fails its own verification: {why}")
            write_json_atomic(str(directory / f"chunk-{i:05d}.json"), data)
            done[i] = data
            if progress:
                progress(len(done), cfg.chunks)

        side = []
        if todo and not scheduler:
            _run_local(cfg, todo, pool, record, alongside, side)
        elif alongside is not None:  # nothing to compute here: the task alone, in a worker as it would be
            side = [(ok, value) for _, ok, value in pool.run([alongside])]
        if todo and scheduler:
            _run_dask(cfg, todo, scheduler, record)
    total = Stats()
    op = get_operator(cfg.op)
    checker = PropertyChecker(
        compile_all(op, F32, cfg.resolved(), cfg.standard or op.primary, set(cfg.properties)), F32
    )
    for i in range(cfg.chunks):
        total.merge(Stats.from_json(done[i]["stats"]))
    checker.merge_chunks([done[i]["properties"] for i in range(cfg.chunks)])
    checker.finish_chains()
    info = {
        "chunks": cfg.chunks,
        "resumed_chunks": resumed,
        "rejected_chunks": rejected,
        # the finished chunks found, each run again on every block before it counted (replay_chunk):
        # the seed of the replays' order, and the chunks computed again because the target's outputs
        # differed from the checkpoint's (None: nothing to resume)
        "resume": resume,
        "rerun_chunks": len(resume["rerun"]) if resume else 0,
        "checkpoint": str(directory),
        "key": cfg.key(),
        "wall_s": time.perf_counter() - t0,
        "undecided": sum(d.get("undecided", 0) for d in done.values()),
        "modified_input": any(d.get("modified_input") for d in done.values()),
        "fp_environment": sorted({e for d in done.values() for e in d.get("fp_environment", [])}),
        # the target's output at every input the results name, as measured
        "outputs": {b: y for i in range(cfg.chunks) for b, y in done[i]["outputs"]},
        # the largest (estimated) error of each chunk, for the report's plot
        "chunk_max": [max([t[0] for t in done[i]["stats"]["top"]], default=0.0) for i in range(cfg.chunks)],
    }
    if alongside is not None:
        info["alongside"] = side[0]
    return total, checker, info


def _resume(cfg: SweepConfig, directory: Path, done: dict, rejected: list, pool, seed, progress=None) -> dict:
    """The finished chunks, each replayed (replay_chunk): a checkpoint is trusted only where the target still
    computes what it recorded (a changed data file, a rebuilt library: anything the fingerprints cannot see);
    the others leave done for rejected, to be computed again. progress: told the replay's phase (how many
    of the resumed chunks are replayed: opcert.progress.tell), which counts no input of this run."""
    seed = replay_seed() if seed is None else seed
    t1 = time.perf_counter()
    resume = {"seed": seed, "chunks": len(done), "rerun": []}
    for i, diff in _replay_resumed(cfg, done, pool, seed, progress):
        rejected.append(f"chunk {i}: {diff['why']}")
        resume["rerun"].append(diff)
        del done[i]
        (directory / f"chunk-{i:05d}.json").unlink(missing_ok=True)
    resume["wall_s"] = time.perf_counter() - t1
    return resume


def replay_chunk(cfg: SweepConfig, index: int, data: dict, seed: int = 0) -> dict | None:
    """How a finished chunk no longer describes the target (None when it does): the target runs again
    on every block of the chunk, both signs, called as run_chunk calls it, in an order drawn from seed
    (each resume draws one), and each block's outputs are compared with the fingerprint the chunk
    recorded of them, and every output its results name with the recorded one. Where they differ: the
    blocks that differ, and the first difference located (the input, its output now and in the
    checkpoint): a recorded output, or a block with one changed output (_one_difference)."""
    op, attrs, _, tgt, *_ = _setup(cfg)
    lo, hi = cfg.chunk_range(index)
    stored = _decode_prints(cfg, index, data)
    weights = sweep_kernel.fingerprint_weights(cfg.block)
    recorded = {int(b): int(y) for b, y in data["outputs"]}
    found: dict[int, tuple[int, int]] = {}  # input bits -> (output now, output in the checkpoint)
    differing = []  # (the block's first input bits, its label)
    for k in np.random.default_rng([seed, index]).permutation(len(stored)):
        b0 = lo + int(k) // 2 * cfg.block
        b1, negative = min(b0 + cfg.block, hi), bool(k & 1)
        s = 0x80000000 if negative else 0
        yb = _call_block(cfg, tgt, op, attrs, b0, b1, negative).view(np.uint32)
        for b, then in recorded.items():
            if (b & 0x80000000) == s and b0 <= (b & 0x7FFFFFFF) < b1 and int(yb[(b & 0x7FFFFFFF) - b0]) != then:
                found[b] = (int(yb[(b & 0x7FFFFFFF) - b0]), then)
        got = sweep_kernel.output_fingerprint(yb, weights)
        if tuple(int(v) for v in got) != tuple(int(v) for v in stored[k]):
            differing.append((b0 | s, block_label(cfg, b0, b1, negative)))
            one = _one_difference(yb, weights, stored[k], got)
            if one is not None:
                found[(b0 + one[0]) | s] = one[1:]
    tgt.check_globals(f"the replay of chunk {index}")
    # an output the results name outside the chunk's blocks (none expected), in its own aligned block
    outside = [b for b in recorded if not lo <= (b & 0x7FFFFFFF) < hi]
    if outside:
        for b, y in rerun_blocks(cfg, outside).items():
            if y != recorded[b]:
                found[b] = (y, recorded[b])
    if not differing and not found:
        return None
    differing.sort()
    why = f"the target's outputs differ from the checkpoint's in {len(differing)} of {len(stored)} blocks" + (
        f", the first {differing[0][1]}" if differing else ""
    )
    first = None
    if found:
        b = min(found)
        first = {"input": f"0x{b:08x}", "output": f"0x{found[b][0]:08x}", "checkpoint": f"0x{found[b][1]:08x}"}
        why += f"; at {first['input']} the output is {first['output']} now, {first['checkpoint']} in the checkpoint" + (
            "" if len(found) == 1 else f" (the first of {len(found)} located)"
        )
    else:
        why += "; two or more outputs differ in each of them"
    why += ": the target or what it reads changed"
    return {
        "chunk": index,
        "why": why,
        "blocks_differing": len(differing),
        "blocks": len(stored),
        "first_block": differing[0][1] if differing else None,
        "first": first,
        "located": len(found),
    }


def _signed64(v: int) -> int:
    v %= 1 << 64
    return v - (1 << 64) if v >= 1 << 63 else v


def _one_difference(yb, weights, stored, got) -> tuple[int, int, int] | None:
    """(index, output now, output then) where one output of a block changed since its fingerprint
    `stored` (now `got`), or None where that does not explain the change (two or more changed): the
    change is delta = m0' - m0 at index (m1' - m1) / delta, confirmed by the whole fingerprint."""
    d0 = _signed64(int(got[1]) - int(stored[1]))
    d1 = _signed64(int(got[2]) - int(stored[2]))
    if d0 == 0 or d1 % d0:
        return None
    j = d1 // d0
    if not 0 <= j < yb.size:
        return None
    now = int(yb[j])
    then = now - d0
    if not 0 <= then < 1 << 32:
        return None
    trial = yb.copy()
    trial[j] = then
    if tuple(int(v) for v in sweep_kernel.output_fingerprint(trial, weights)) != tuple(int(v) for v in stored):
        return None
    return j, now, then


def replay_seed() -> int:
    """A resume's seed for the order of its replays: OPCERT_REPLAY_SEED (to repeat a run: the result
    records its seed), else drawn afresh."""
    v = os.environ.get("OPCERT_REPLAY_SEED")
    if v is None or not v.strip():
        return secrets.randbits(63)
    try:
        seed = int(v, 0)
    except ValueError:
        seed = -1
    if not 0 <= seed < 1 << 64:
        raise UsageError(f"OPCERT_REPLAY_SEED={v!r}: give an integer in [0, 2^64)")
    return seed


def _replay_resumed(cfg: SweepConfig, done: dict, pool, seed: int, progress=None) -> list[tuple[int, dict]]:
    items = sorted(done)
    out = []

    def phase(k):
        return (
            f"replaying the {len(items):,} chunks resumed from the checkpoint, each checked against the target "
            f"before it counts: {k:,}/{len(items):,}"
        )

    tell(progress, phase(0))
    for k, (j, ok, value) in enumerate(pool.run([(replay_chunk, (cfg, i, done[i], seed), {}) for i in items]), 1):
        if not ok:
            raise _chunk_failure(cfg, items[j], value)
        if value is not None:
            out.append((items[j], value))
        tell(progress, phase(k))
    return sorted(out, key=lambda t: t[0])


def _chunk_failure(cfg, i, exc) -> Exception:
    lo, hi = cfg.chunk_range(i)
    where = f"chunk {i} (magnitudes 0x{lo:08x}..0x{hi - 1:08x})"
    if isinstance(exc, WorkerLost):
        return TargetFailure(f"target {cfg.target} {exc} [{where}]")
    if isinstance(exc, TargetFailure):
        return TargetFailure(f"{exc} [{where}]")
    return exc


def warm_kernels(cfg: SweepConfig) -> None:
    """A second worker's first task: compile `block` and the property scans, which a chunk first calls
    after its first block, while the first worker compiles the ball and the fast pass, which it calls
    first; each then loads the other's from numba's cache. A cold sweep compiled every kernel in every
    worker at the same time (bench/README.md, 'Figures behind choices in the code'). Nothing is computed:
    the arguments have run_chunk's types (tests/test_sweep.py checks that run_chunk then compiles nothing
    this did not), on eight inputs."""
    s = _setup(cfg)
    n = 8
    mags = np.arange(n, dtype=np.uint32)
    y = np.zeros(n, np.float32)
    if cfg.accuracy:
        blk = sweep_kernel.Block(mags, y, y.view(np.uint32), np.zeros(n), np.full(n, np.nan), np.zeros(n, np.int8))
        sweep_kernel.block(
            blk, s.at_inf, sweep_kernel.block_state(), np.empty(n, np.int64), cfg.flush_allowed, np.arange(n)
        )
    PropertyChecker(s.compiled, F32).add_block(mags, y, y, limits=s.limits[:2], negb=mags | SIGN)


def _run_local(cfg, todo, pool, record, alongside=None, side=None):
    """The chunks todo on the pool, each recorded as it finishes. alongside (a task): the second task, its
    (ok, value) appended to side; the second worker starts with it instead of warm_kernels."""
    tasks = [(run_chunk, (cfg, i), {}) for i in todo]
    extra = alongside is not None or (pool.size > 1 and len(todo) > 1)
    if alongside is not None:
        tasks.insert(1, alongside)
    elif extra:  # the second worker's first task; a failure there is the chunks' to report, as they meet it too
        tasks.insert(1, (warm_kernels, (cfg,), {}))
    for j, ok, value in pool.run(tasks):
        if extra and j == 1:
            if alongside is not None:
                side.append((ok, value))
            continue
        if extra and j > 1:
            j -= 1
        if not ok:
            raise _chunk_failure(cfg, todo[j], value)
        record(todo[j], value)


def _run_dask(cfg, todo, scheduler, record):
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise UsageError("--scheduler dask://... needs dask.distributed (pip install 'opcert[dask]')") from None
    address = (
        scheduler[len("dask://") :] if isinstance(scheduler, str) and scheduler.startswith("dask://") else scheduler
    )
    try:
        client = scheduler if not isinstance(scheduler, str) else Client(address, timeout=10)
    except OSError as exc:
        raise UsageError(f"--scheduler {scheduler}: cannot reach the Dask scheduler ({exc})") from None
    try:
        futures = {client.submit(run_chunk, cfg, i, pure=False): i for i in todo}
        for f in as_completed(futures):
            i = futures[f]
            try:
                data = f.result()
            except TargetFailure as exc:
                raise _chunk_failure(cfg, i, exc) from None
            except Exception as exc:  # noqa: BLE001 - a worker lost on the cluster (KilledWorker)
                if type(exc).__name__ == "KilledWorker":
                    raise TargetFailure(
                        f"target {cfg.target}: the Dask worker running chunk {i} died ({exc})"
                    ) from None
                raise
            record(i, data)
    finally:
        if isinstance(scheduler, str):
            client.close()


def rerun_blocks(cfg: SweepConfig, bits_list: list[int]) -> dict[int, int]:
    """The target's outputs at the given inputs, each computed again inside the
    same aligned block as in the sweep (a runtime may compute an input
    differently in a block than alone: torch's float32 celu does)."""
    out = {}
    blocks = sorted({block_of(cfg, b & 0x7FFFFFFF) + (b >> 31,) for b in bits_list})
    for b0, b1, s in blocks:
        yb = _block_outputs(cfg, b0, b1, bool(s)).view(np.uint32)
        for b in bits_list:
            if (b >> 31) == s and b0 <= (b & 0x7FFFFFFF) < b1:
                out[b] = int(yb[(b & 0x7FFFFFFF) - b0])
    return out


def block_of(cfg: SweepConfig, m: int) -> tuple[int, int]:
    """[b0, b1): the block of magnitudes run_chunk gives the target in one call with magnitude m."""
    lo, hi = cfg.chunk_range((m - cfg.start) // cfg.chunk)
    b0 = lo + (m - lo) // cfg.block * cfg.block
    return b0, min(b0 + cfg.block, hi)


def _block_outputs(cfg: SweepConfig, b0: int, b1: int, negative: bool) -> np.ndarray:
    """The target's outputs on one block of the sweep, called as the sweep calls it."""
    op, attrs, _, tgt, *_ = _setup(cfg)
    bits = np.arange(b0, b1, dtype=np.uint64).astype(np.uint32)
    if negative:
        bits = bits | SIGN
    return tgt.run(op, bits.view(np.float32), attrs, label=block_label(cfg, b0, b1, negative))
