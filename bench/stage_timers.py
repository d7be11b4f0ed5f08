"""Timers around the stages of a float32 sweep's chunk (bench/chunk_stages.py, bench/sweep_stages_block.py): each
wraps the function a stage calls and adds its time to SPENT[stage]; SENT["block"] counts the inputs the fast
pass left to block."""

import collections
import time

import opcert.numerics.ball_compiled as ball_compiled
import opcert.numerics.one_sided as one_sided
import opcert.spec.reference as reference
import opcert.verify.accuracy.sweep_kernel as sweep_kernel
from opcert.verify.accuracy import sweep
from opcert.verify.properties.checks import PropertyChecker

SPENT = collections.Counter()
SENT = collections.Counter()
_CLOCK = [time.perf_counter]


def timed(owner, name, label, count=None):
    f = getattr(owner, name)

    def wrapper(*a, **k):
        t0 = _CLOCK[0]()
        try:
            out = f(*a, **k)
            if count is not None:
                SENT[label] += count(a, out)
            return out
        finally:
            SPENT[label] += _CLOCK[0]() - t0

    setattr(owner, name, wrapper)


def install(clock=time.perf_counter, extra=()) -> None:
    """The timers of every stage a chunk has, with clock; extra: (owner, name, label) more."""
    _CLOCK[0] = clock
    timed(sweep_kernel, "easy_pass", "easy")
    timed(sweep_kernel, "block", "block", count=lambda args, out: len(args[5]) if len(args) > 5 else 0)
    timed(PropertyChecker, "add_block", "properties")
    timed(one_sided, "evaluate", "one-sided")
    timed(one_sided, "decide", "one-sided")
    timed(reference, "reference_detailed", "exact")
    # the compiled formula's (reference.zero_signs where it has none); an older checkout: reference.zero_signs
    timed(*((sweep, "zero_signs") if hasattr(sweep, "zero_signs") else (reference, "zero_signs")), "zeros")
    if hasattr(sweep_kernel, "specials"):
        timed(sweep_kernel, "specials", "specials")
    for owner, name, label in extra:
        timed(owner, name, label)
    compiled = ball_compiled.compiled

    def compiled_timed(*args, **kw):
        f = compiled(*args, **kw)
        if f is None:
            return f

        def ball(x):
            t0 = _CLOCK[0]()
            try:
                return f(x)
            finally:
                SPENT["ball"] += _CLOCK[0]() - t0

        return ball

    ball_compiled.compiled = compiled_timed


def time_target(cfg) -> None:
    """The target's calls of cfg's sweep in this process (loaded by a first run_chunk), once."""
    target = sweep._setup(cfg)[3]
    if not getattr(target, "_timed", False):
        timed(target, "run", "target")
        target._timed = True
