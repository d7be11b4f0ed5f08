"""What every target shares: the call contract and its enforcement.

A target maps (operator, input array, attributes) to an output array of the
input's dtype and shape. `Target.run` gives each call its own copy of the
inputs (a kernel that works in place is measured on what it was given, and the
caller's array is never touched), announces the call to the supervising
process (so a crash or a hang is reported with the block of inputs), and turns
anything a target does wrong into a `TargetFailure`: an exception of any kind,
SystemExit included, a non-array result, the wrong dtype or shape.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import warnings
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from opcert.errors import TargetFailure, UsageError
from opcert.targets.isolation import Isolation, child_ends
from opcert.targets.layouts import LayoutSupport, copy_with_layout, cores
from opcert.workers import activity


class UnsupportedByTarget(UsageError):
    """The target does not support this operator, dtype or attribute set (a skip, with its reason)."""


@dataclass
class TargetInfo:
    """What identifies a target's code: reported in provenance, and keyed into sweep checkpoints."""

    name: str
    kind: str  # opcert | runtime | python | c
    version: str
    fingerprint: str  # changes whenever the target's code may have changed
    details: dict = field(default_factory=dict)
    isolated: bool = True  # runs in a supervised worker process
    dependencies: str = ""  # what it loaded by its first call (targets.dependencies); "" when not probed

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "version": self.version,
            "fingerprint": self.fingerprint,
            "dependencies": self.dependencies,
            "details": self.details,
            "isolated": self.isolated,
        }


def describe_inputs(x: np.ndarray) -> str:
    """A block of inputs as people can find it again: count, dtype, first and last bit patterns."""
    n = x.size
    if n == 0:
        return f"0 {x.dtype.name} inputs"
    flat = np.ascontiguousarray(x).reshape(-1)
    if x.dtype.kind == "f" or x.dtype.name == "bfloat16":
        bits = flat.view(f"uint{8 * x.itemsize}")
        width = 2 * x.itemsize
        a, b = int(bits[0]), int(bits[-1])
        span = f"0x{a:0{width}x}" if n == 1 else f"0x{a:0{width}x}..0x{b:0{width}x}"
    else:
        span = f"{flat[0]}" if n == 1 else f"{flat[0]}..{flat[-1]}"
    return f"{n:,} {x.dtype.name} input{'s' if n != 1 else ''} {span}"


class Target:
    """A target as loaded in the process that calls it (targets.protocol.ElementWiseTarget)."""

    def __init__(self, info: TargetInfo, call, unsupported=None, timeout: float | None = None):
        self.info = info
        self._call = call
        self._unsupported = unsupported or (lambda op, dtype, attrs: None)
        self.timeout = timeout
        self.modified_input = False  # sticky: some call wrote into its input
        self._isolation = None  # the FP environment and the process state a call may change
        self.layouts = LayoutSupport(cannot={"every layout": "this target declares no layout it can be given"})

    @property
    def isolation(self) -> Isolation:
        # set by load_target (the one its load ran under), else made at the first call
        if self._isolation is None:
            self._isolation = Isolation()
        return self._isolation

    @isolation.setter
    def isolation(self, iso: Isolation) -> None:
        self._isolation = iso

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def version(self) -> str:
        return self.info.version

    @property
    def kernel(self):
        """The target's own function (op, x, attrs) -> y, outside the call contract of run()."""
        return self._call

    @property
    def findings(self) -> list[str]:
        """What the target did to the process beyond its result (the FP environment it set)."""
        return list(self.isolation.fp.events)

    def unsupported(self, op, dtype: str, attrs: dict[str, Fraction]) -> str | None:
        try:
            return self._unsupported(op, dtype, attrs)
        except UnsupportedByTarget as exc:
            return str(exc)
        except Exception as exc:  # noqa: BLE001 - a library failing to say: its reason, not a crash
            return f"{self.name} could not tell whether it supports {op.name} in {dtype}: {type(exc).__name__}: {exc}"

    def run_each(self, op, xs, attrs: dict[str, Fraction], labels, call=None):
        """run() over many buffers made for one call each (owned), in order: each output, or the
        TargetFailure its call raised. A trusted target (opcert's own implementation: it shares nothing
        between calls, and NumPy releases the GIL in its loops) runs one call per core at a time; any
        other target one call after another, as its isolation (the FP environment and the process state
        saved around each call) assumes."""

        def one(x, label):
            try:
                return self._run(
                    op,
                    x,
                    attrs,
                    label,
                    guard_globals=True,
                    keep_layout=False,
                    call=call,
                    owned=True,
                    guard_warnings=False,
                )
            except TargetFailure as exc:
                return exc

        with warnings.catch_warnings():  # once, here: catch_warnings is not thread-safe
            warnings.simplefilter("ignore")
            if not self.isolation.trusted:
                for x, label in zip(xs, labels):
                    yield one(x, label)
                return
            k = cores()
            with ThreadPoolExecutor(k) as pool:
                pending = deque()  # at most k calls in flight (Executor.map would take every x at once)
                for x, label in zip(xs, labels):
                    pending.append(pool.submit(one, x, label))
                    if len(pending) >= k:
                        yield pending.popleft().result()
                while pending:
                    yield pending.popleft().result()

    def run(
        self,
        op,
        x: np.ndarray,
        attrs: dict[str, Fraction],
        label: str | None = None,
        guard_globals: bool = True,
        keep_layout: bool = False,
        call=None,
        owned: bool = False,
        counted: bool = False,
    ) -> np.ndarray:
        """The target's output for x: a fresh array, owned by the caller (a kernel that reuses its output
        buffer cannot change what an earlier call returned). guard_globals=False leaves the check of the
        modules the target may have patched to the caller (`check_globals`), for callers that make many
        calls in a row (a sweep checks once per chunk). keep_layout: the target's copy of x has x's strides
        and alignment (verify.paths.layout), not a fresh contiguous array. call: a function (op, x, attrs) -> y to
        run in the target's place (one of its LayoutSupport forms), under the same contract. owned: x is a
        buffer made for this call alone, which the caller does not take as its inputs again: given as it is
        (its layout kept; the layout check's arrays of 10^8 elements are not copied twice), and not compared
        after the call (`modified_input` is then the caller's to set: the sweep checks its buffers itself).
        counted: `call` makes the calls and compares their outputs itself, and returns how many differ (a
        LayoutSupport count_calls form): that number is returned, under the same isolation and time limit."""
        return self._run(op, x, attrs, label, guard_globals, keep_layout, call, owned, counted=counted)

    def _run(self, op, x, attrs, label, guard_globals, keep_layout, call, owned, guard_warnings=True, counted=False):
        why = self.unsupported(op, _dtype_name(x.dtype), attrs)
        if why:
            raise UnsupportedByTarget(why)
        if owned:
            given = x
        elif keep_layout:
            given = copy_with_layout(x)
        else:
            given = np.array(x, copy=True)
        where = label or describe_inputs(x)
        limit, hint = (self.timeout, "") if self.timeout is not None else default_timeout(x.size)
        try:
            # Floating-point warnings (invalid in tanh(NaN), ...) are expected here.
            with (
                activity(f"running on {where}", limit, hint),
                np.errstate(all="ignore"),
                warnings.catch_warnings() if guard_warnings else contextlib.nullcontext(),
                self.isolation.call(self.name),
            ):
                if guard_warnings:
                    warnings.simplefilter("ignore")
                try:
                    y = (call or self._call)(op, given, attrs)
                except BaseException as exc:  # noqa: BLE001 - its message is read here, under the isolation:
                    raise self._raised(exc, where) from None  # str() of the target's exception is its code
                # out of the target's buffer before its next call (a layout form on a buffer made for the
                # call returns that buffer or a fresh one: nothing of the target's to copy out of). An array
                # that owns its memory and that nothing but this frame refers to (getrefcount's own argument
                # is the other reference) is not the target's to write again: no view, no attribute, no
                # cache of the target's holds it. A sweep makes 2^17 calls, and each paid for the copy
                # (bench/README.md, 'Figures behind choices in the code').
                if (
                    isinstance(y, np.ndarray)
                    and not (call is not None and owned)
                    and not (y.base is None and y.flags.owndata and sys.getrefcount(y) == 2)
                ):
                    y = np.array(y, copy=True)
        except BaseException as exc:  # noqa: BLE001 - SystemExit, KeyboardInterrupt, ... are the target's
            raise self._failed(exc, where) from None
        if guard_globals:
            self.check_globals(where)
        if call is None and not owned and not _same_bits(given, x):
            self.modified_input = True
        if counted:
            if not isinstance(y, (int, np.integer)):
                raise TargetFailure(
                    f"a count of outputs was due from {self.name}'s calls; got {type(y).__name__} (on {where})"
                )
            return int(y)
        return self._checked(y, x, where)

    def run_calls(self, op, xs, attrs: dict[str, Fraction], labels, batch: str) -> list[np.ndarray]:
        """Each x of xs through the target in a call of its own, with run()'s contract for each call (its own
        fresh copy of x, its time limit and its label for a crash or a hang, the output checked for type,
        dtype and shape and copied out of the target's buffer, the copy compared with x after the call, the
        floating-point environment it leaves recorded and opcert's put back, a child it forked that returns
        ended), but with the rest of the process state a call may change (`Isolation.call`: the working
        directory, the SIGINT handler, os._exit; `check_globals`) saved once before the first call and checked
        once after the last: the layout check's one-element calls, 10^5 of them, where that costs more than the
        calls. opcert's code between two calls only copies and compares bits, with ndarray's own methods; a
        function of numpy a call replaced and a later call of the batch put back is not reported (run() reports
        it). batch names the calls together.
        The outputs (plain ndarrays), in order; the first call that fails raises its TargetFailure, which names
        it (the calls after it are not made)."""
        xs, outs = list(xs), []
        for dtype in {x.dtype for x in xs}:
            why = self.unsupported(op, _dtype_name(dtype), attrs)
            if why:
                raise UnsupportedByTarget(why)
        iso = self.isolation
        try:
            with np.errstate(all="ignore"), warnings.catch_warnings(), iso.call(self.name, "calls"):
                warnings.simplefilter("ignore")
                # between two calls opcert calls methods of ndarray alone, which no target can replace (a
                # function of numpy it replaced and put back within the batch is not seen by check_globals)
                for x, where in zip(xs, labels):
                    given = np.ndarray.copy(x)
                    limit, hint = (self.timeout, "") if self.timeout is not None else default_timeout(x.size)
                    # a child the target forked ends before it leaves the call's activity (whose record it shares
                    # with its parent: leaving it there would lift the parent's time limit)
                    with activity(f"running on {where}", limit, hint), child_ends(self.name):
                        try:
                            y = self._call(op, given, attrs)
                        except BaseException as exc:  # noqa: BLE001 - as in run()
                            raise self._raised(exc, where) from None
                    iso.fp.leave("call")  # as run() records it, call by call
                    iso.fp.enter()
                    # a subclass's own properties and methods (its dtype, its __array_function__) are not
                    # opcert's to read or call: its data as a plain ndarray
                    if isinstance(y, np.ndarray) and type(y) is not np.ndarray:
                        y = np.ndarray.view(y, np.ndarray)
                    # out of the target's buffer before its next call, as in run()
                    if isinstance(y, np.ndarray) and not (
                        y.base is None and y.flags.owndata and sys.getrefcount(y) == 2
                    ):
                        y = np.ndarray.copy(y)
                    if np.ndarray.tobytes(given) != np.ndarray.tobytes(x):  # bit for bit, as _same_bits
                        self.modified_input = True
                    outs.append(self._checked(y, x, where))
        except BaseException as exc:  # noqa: BLE001 - a call's failure, or what a call left behind
            raise self._failed(exc, batch) from None
        self.check_globals(batch)
        return outs

    def _raised(self, exc: BaseException, where: str) -> TargetFailure:
        """What the target raised, as the failure of its call (a Ctrl-C the user pressed is raised again)."""
        if isinstance(exc, KeyboardInterrupt) and self.isolation.user_interrupted:
            raise exc
        if isinstance(exc, TargetFailure):
            return exc
        kind = type(exc).__name__
        try:
            detail = f"({exc.code!r})" if isinstance(exc, SystemExit) else f": {exc}"
        except BaseException as err:  # noqa: BLE001 - a message whose str() raises (or calls os._exit): the target's
            if isinstance(err, KeyboardInterrupt) and self.isolation.user_interrupted:
                raise
            detail = f" (whose message could not be read: its str() raised {type(err).__name__})"
        return TargetFailure(f"target {self.name} raised {kind}{detail} on {where}")

    def _failed(self, exc: BaseException, where: str) -> TargetFailure:
        """_raised, with the functions of the guarded modules the target replaced put back and named: a call
        that fails is not checked after it as one that returns is (check_globals), and opcert goes on
        computing in this process."""
        patched = self.isolation.restore_globals()  # first: a Ctrl-C the user pressed is raised again below
        failure = self._raised(exc, where)
        if not patched:
            return failure
        return TargetFailure(
            f"{failure}; it also replaced {', '.join(patched[:5])}{' and more' if len(patched) > 5 else ''} in "
            "this process (opcert put the originals back)"
        )

    def _checked(self, y, x: np.ndarray, where: str) -> np.ndarray:
        """The target's output for x, as the call contract takes it: an array (a scalar becomes one) of x's
        dtype and shape, else a TargetFailure."""
        if not isinstance(y, np.ndarray) and (isinstance(y, np.generic) or np.isscalar(y)):
            y = np.asarray(y)
        if not isinstance(y, np.ndarray):
            raise TargetFailure(f"target {self.name} returned {type(y).__name__}, not a numpy array (on {where})")
        if y.dtype != x.dtype:
            raise TargetFailure(f"target {self.name} returned dtype {y.dtype}; expected {x.dtype} (on {where})")
        if y.shape != x.shape:
            raise TargetFailure(f"target {self.name} returned shape {y.shape}; expected {x.shape} (on {where})")
        return y

    def check_globals(self, where: str = "") -> None:
        """Fail (TargetFailure) when the target replaced a function of the modules opcert computes with;
        the originals are put back first, so opcert's own computations are right again."""
        patched = self.isolation.restore_globals()
        if patched:
            raise TargetFailure(
                f"target {self.name} replaced {', '.join(patched[:5])}"
                f"{' and more' if len(patched) > 5 else ''} in this process"
                f"{' (on ' + where + ')' if where else ''}: opcert put the originals back; "
                "a kernel must not change functions other code calls"
            )


DEFAULT_LIMIT_S, DEFAULT_LIMIT_PER_INPUT_S = 60.0, 2e-3


def default_timeout(n: int) -> tuple[float, str]:
    """The time limit of a call of n inputs where the user set none, and the words that say so.
    OPCERT_DEFAULT_LIMIT_S replaces the fixed part (a CI job that wants hangs found sooner)."""
    return _default_timeout(n, os.environ.get("OPCERT_DEFAULT_LIMIT_S"))


@functools.lru_cache(maxsize=64)
def _default_timeout(n: int, setting: str | None) -> tuple[float, str]:
    # a sweep's calls all have one size: the words are written once, not 2^17 times
    try:
        base = float(setting) if setting is not None else DEFAULT_LIMIT_S
    except ValueError:
        base = DEFAULT_LIMIT_S
    if not base > 0:
        base = DEFAULT_LIMIT_S
    limit = base + DEFAULT_LIMIT_PER_INPUT_S * n
    return limit, (
        f"opcert's default time limit for a call of {n:,} inputs: {base:g} s + "
        f"{DEFAULT_LIMIT_PER_INPUT_S * 1e3:g} ms per input = {limit:g} s; target_timeout "
        "(--target-timeout) sets another"
    )


_DTYPE_NAMES: dict = {}


def _dtype_name(dtype) -> str:
    # dtype.name is built by Python code in NumPy at each read: a sweep asks 2^17 times (bench/README.md,
    # 'Figures behind choices in the code')
    name = _DTYPE_NAMES.get(dtype)
    if name is None:
        name = _DTYPE_NAMES[dtype] = dtype.name
    return name


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    if a.dtype.kind in "fV" or a.dtype.name == "bfloat16":
        a, b = np.ascontiguousarray(a).reshape(-1), np.ascontiguousarray(b).reshape(-1)
        if a.nbytes >= 1 << 18 and a.nbytes % 8 == 0:
            # a sweep compares 512 blocks of 256 KiB per chunk: compiled, 64 bits at a time, faster than
            # array_equal and its temporary array of booleans (bench/README.md, 'Figures behind choices in the code')
            return _same_words()(a.view(np.uint64), b.view(np.uint64))
        w = f"uint{8 * a.itemsize}"
        return np.array_equal(a.view(w), b.view(w))
    return np.array_equal(a, b)


def _words_equal(a, b):
    d = 0
    for i in range(a.size):
        d |= a[i] ^ b[i]
    return d == 0


@functools.cache
def _same_words():
    from opcert.jit import numba  # lazy: numba at the first large block (importing opcert loads no numba)

    return numba.njit(cache=True, nogil=True)(_words_equal)
