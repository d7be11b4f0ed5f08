"""Exhaustive binary32 sweeps: all 2**32 inputs, in chunks, on all cores.

Each chunk (2**24 inputs) runs the target and the reference's binary64 fast
path block by block, and the compiled kernel (sweep_kernel) classifies every
input; the few inputs the fast path cannot decide go to the exact reference.
A finished chunk is written to the checkpoint directory (atomically) before it
counts: an interrupted sweep resumes with the chunks it lacks. Chunks merge in
chunk order, so the result does not depend on the number of workers, on the
scheduler, or on how often the sweep was resumed.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np

from ..errors import UsageError
from ..formats import FLOAT_FORMATS, round_fraction
from ..report.io import write_json_atomic
from .stats import Stats

F32 = FLOAT_FORMATS["float32"]
CHUNK = 1 << 24
BLOCK = 1 << 16   # 512 KiB of binary64 per array: stays in L2, and under malloc's mmap threshold
FULL = 1 << 32


@dataclass(frozen=True)
class SweepConfig:
    op: str
    target: str
    attrs: tuple            # ((name, "numerator/denominator"), ...)
    standard: str | None
    start: int = 0
    stop: int = FULL
    chunk: int = CHUNK
    flush_allowed: bool = False
    target_version: str = ""

    @property
    def chunks(self) -> int:
        return -(-(self.stop - self.start) // self.chunk)

    def key(self) -> str:
        """Checkpoints are reused only by the same sweep of the same code: the
        key covers opcert's source, the target's version and every setting."""
        text = json.dumps([code_fingerprint(), self.op, self.target, self.target_version, self.attrs,
                           self.standard, self.start, self.stop, self.chunk, self.flush_allowed])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def resolved(self) -> dict[str, Fraction]:
        return {k: Fraction(v) for k, v in self.attrs}


_CACHE: dict = {}
_FINGERPRINT: list = []


def code_fingerprint() -> str:
    """A hash of opcert's own source files: a changed reference, kernel or
    implementation never resumes a sweep that older code started."""
    if not _FINGERPRINT:
        root = Path(__file__).resolve().parents[1]
        h = hashlib.sha256()
        for f in sorted(root.rglob("*.py")):
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
        _FINGERPRINT.append(h.hexdigest())
    return _FINGERPRINT[0]


def _keep_freed_memory() -> None:
    """Blocks allocate and free arrays of 256-512 KiB thousands of times; glibc
    maps and unmaps each, and the page faults cost more than the arithmetic
    (7 ns against 2 ns per input, measured). Keep freed memory instead."""
    try:
        import ctypes
        import ctypes.util
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3
        libc.mallopt(M_MMAP_THRESHOLD, 1 << 28)
        libc.mallopt(M_TRIM_THRESHOLD, 1 << 28)
    except (OSError, AttributeError, TypeError):
        pass  # not glibc: slower, not wrong


def _setup(cfg: SweepConfig):
    """Per process: the operator, the target and the constants of the kernel."""
    if cfg in _CACHE:
        return _CACHE[cfg]
    if not _CACHE:
        _keep_freed_memory()
    from ..spec import get_operator
    from ..targets import get_target
    op = get_operator(cfg.op)
    attrs = cfg.resolved()
    tgt = get_target(cfg.target)
    lims = []
    for sign in (-1, 1):
        lim = op.limits(sign, attrs)
        v = float(lim)
        r = np.float32(v if isinstance(lim, float) else round_fraction(Fraction(lim), F32))
        lims.append((np.array([r], dtype=np.float32).view(np.uint32)[0], v))
    _CACHE[cfg] = (op, attrs, {k: float(v) for k, v in attrs.items()}, tgt, lims)
    return _CACHE[cfg]


def run_chunk(cfg: SweepConfig, index: int) -> dict:
    """Sweep one chunk; the Stats as JSON (plus the time it took)."""
    from ..expr.numpy_eval import eval_numpy
    from ..spec.reference import reference_detailed
    from .accuracy import float_stats
    from .sweep_kernel import TOP, block
    op, attrs, a64, tgt, ((rneg, vneg), (rpos, vpos)) = _setup(cfg)
    t0 = time.perf_counter()
    lo = cfg.start + index * cfg.chunk
    hi = min(lo + cfg.chunk, cfg.stop)
    counts = np.zeros(6, np.int64)
    hist = np.zeros(9, np.int64)
    top_e, top_b = np.full(TOP, -1.0), np.full(TOP, -1, np.int64)
    topw_e, topw_b = np.full(TOP, -1.0), np.full(TOP, -1, np.int64)
    first = np.full(4, FULL, np.int64)
    maxdist = np.full(1, -1, np.int64)
    rel = float(op.fast_reference_rel_error)
    slow = Stats()
    base = np.arange(BLOCK, dtype=np.uint32)
    und = np.empty(BLOCK, np.int64)
    for b0 in range(lo, hi, BLOCK):
        bits = base[:min(BLOCK, hi - b0)] + np.uint32(b0)   # b0 + BLOCK <= 2**32: no wrap
        x = bits.view(np.float32)
        y = tgt.run(op, x, attrs)
        with np.errstate(all="ignore"):
            v = eval_numpy(op.fast_reference, x.astype(np.float64), a64, input_bits=24)
        v = np.ascontiguousarray(np.broadcast_to(v, x.shape), dtype=np.float64)
        y = np.ascontiguousarray(y)
        n_und = block(bits, y, y.view(np.uint32), v, rel, rneg, rpos, vneg, vpos,
                      counts, hist, top_e, top_b, topw_e, topw_b, first, maxdist, und, cfg.flush_allowed)
        if n_und:
            idx = und[:n_und]
            ref = reference_detailed(op, x[idx], attrs, cfg.standard)
            slow.merge(float_stats(x[idx], y[idx], ref, F32, cfg.flush_allowed))
    kinds = ("nan_mismatch", "inf_mismatch", "signed_zero_mismatch", "subnormal_flush")
    fast = Stats(n=int(counts[0]), correctly_rounded=int(counts[1]), nan_mismatches=int(counts[2]),
                 inf_mismatches=int(counts[3]), signed_zero_mismatches=int(counts[4]),
                 subnormal_flushes=int(counts[5]), histogram=[int(h) for h in hist],
                 max_distance=int(maxdist[0]),
                 top=[(float(e), int(b)) for e, b in zip(top_e, top_b) if b >= 0],
                 top_wrong=[(float(e), int(b)) for e, b in zip(topw_e, topw_b) if b >= 0],
                 first={k: int(f) for k, f in zip(kinds, first) if f < FULL})
    out = fast.merge(slow).to_json()
    out["elapsed_s"] = time.perf_counter() - t0
    out["undecided"] = slow.n
    return out


def default_checkpoint_dir(cfg: SweepConfig) -> Path:
    root = Path(os.environ.get("OPCERT_CACHE", ".opcert-cache"))
    return root / "sweeps" / cfg.key()


def sweep(cfg: SweepConfig, *, workers: int | None = None, scheduler: str | None = None,
          checkpoint: Path | None = None, progress=None) -> tuple[Stats, dict]:
    """Run (or resume) the sweep; (merged Stats, info)."""
    checkpoint = Path(checkpoint) if checkpoint else default_checkpoint_dir(cfg)
    checkpoint.mkdir(parents=True, exist_ok=True)
    write_json_atomic(str(checkpoint / "config.json"), cfg.__dict__)
    done = {}
    for f in checkpoint.glob("chunk-*.json"):
        try:
            done[int(f.stem.split("-")[1])] = json.loads(f.read_text())
        except (ValueError, json.JSONDecodeError):
            f.unlink()  # a torn file cannot exist (atomic writes); anything unreadable is redone
    resumed = len(done)
    todo = [i for i in range(cfg.chunks) if i not in done]
    t0 = time.perf_counter()
    if progress:
        progress(len(done), cfg.chunks)

    def record(i, data):
        write_json_atomic(str(checkpoint / f"chunk-{i:05d}.json"), data)
        done[i] = data
        if progress:
            progress(len(done), cfg.chunks)

    if todo:
        if scheduler:
            _run_dask(cfg, todo, scheduler, record)
        else:
            _run_local(cfg, todo, workers, record)
    total = Stats()
    for i in range(cfg.chunks):
        total.merge(Stats.from_json(done[i]))
    info = {"chunks": cfg.chunks, "resumed_chunks": resumed, "checkpoint": str(checkpoint),
            "wall_s": time.perf_counter() - t0,
            "undecided": sum(d.get("undecided", 0) for d in done.values()),
            # the largest (estimated) error of each chunk, for the report's plot
            "chunk_max": [max([t[0] for t in done[i]["top"]], default=0.0) for i in range(cfg.chunks)]}
    return total, info


def _run_local(cfg, todo, workers, record):
    workers = workers or os.cpu_count() or 1
    if workers == 1:
        for i in todo:
            record(i, run_chunk(cfg, i))
        return
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
    pool = ProcessPoolExecutor(workers)
    try:
        pending = {pool.submit(run_chunk, cfg, i): i for i in todo}
        while pending:
            finished, _ = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                record(pending.pop(f), f.result())
    except BaseException:
        # interrupted or failed: stop the workers now (their unfinished chunks are simply redone)
        for proc in list(getattr(pool, "_processes", {}).values()):
            proc.kill()  # SIGKILL: forked workers inherit the CLI's SIGTERM handler
        raise
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def _run_dask(cfg, todo, scheduler, record):
    try:
        from dask.distributed import Client, as_completed
    except ImportError:
        raise UsageError("--scheduler dask://... needs dask.distributed (pip install 'opcert[dask]')") from None
    address = scheduler[len("dask://"):] if scheduler.startswith("dask://") else scheduler
    client = scheduler if not isinstance(scheduler, str) else Client(address, timeout=10)
    try:
        futures = {client.submit(run_chunk, cfg, i, pure=False): i for i in todo}
        for f in as_completed(futures):
            record(futures[f], f.result())
    finally:
        if isinstance(scheduler, str):
            client.close()
