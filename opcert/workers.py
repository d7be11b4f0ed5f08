"""Supervised worker processes: where code opcert does not control runs.

A target under test may raise SystemExit, call os._exit, crash the interpreter
(a segfault in a C extension), hang, or write into its input. opcert therefore
never runs an untrusted target in the process that owns the verdict: targets
run in worker processes that this module supervises. The parent learns, for
every task, one of three outcomes: the task's value, the exception it raised,
or `WorkerLost` (the process ended or overran its time limit), and in the last
case what the worker was doing at that moment ("running target T on inputs
A..B"). A lost worker is replaced; the other tasks go on and no finished
result is lost.

Workers die with their parent (PR_SET_PDEATHSIG on Linux, and a check of the
parent's pid), so a killed opcert leaves no orphan behind. They ignore SIGINT:
the parent handles Ctrl-C and stops them.

Inside a worker, `activity(text, timeout)` announces a target call to the
parent; the parent kills the worker when the call overruns `timeout`. The
announcement is written to memory the two processes share (its text, start
and time limit), not sent: a sweep makes two target calls per block of 65,536
inputs, and a message for each woke the parent 2,000 times per chunk, which
then competed with the workers for the cores (bench/README.md, 'Figures
behind choices in the code'). The parent reads it when a worker is lost, and
checks the time limit at least every POLL seconds.
"""

from __future__ import annotations

import ctypes
import faulthandler
import functools
import multiprocessing
import os
import pickle
import signal
import sys
import time
import traceback
from dataclasses import dataclass
from multiprocessing.connection import wait

from opcert import numba_registries
from opcert.runtime_table import threaded_modules

# In a worker: the connection to the parent and the shared activity record (None in the parent itself).
_CHANNEL = None
_RECORD = None
_IN_WORKER = False
POLL = 0.5  # seconds between the parent's checks of a running call's time limit
_TEXT = 1024  # bytes of an activity's text kept (its end is cut)
_HINT = "\x1f"  # between an activity's text and its hint
# Libraries that start threads at import (opcert.runtime_table: each runtime's row, and a few others): after
# one of them is loaded, fork() may deadlock the child, so workers are spawned instead.
_THREADED = threaded_modules()


def in_worker() -> bool:
    return _IN_WORKER


class activity:
    """Announce what the worker is about to do (a target call), with an optional time limit."""

    def __init__(self, text: str, timeout: float | None = None, hint: str = ""):
        # hint: said only when the call overruns its limit (how to give it more time)
        self.text, self.timeout = text + (_HINT + hint if hint else ""), timeout

    def __enter__(self):
        self.pid = os.getpid()
        if _RECORD is not None:
            _RECORD.begin(self.text, self.timeout)
        return self

    def __exit__(self, *exc):
        # not in a child a target forked: the record is its parent's (shared memory), whose time limit it would lift
        if _RECORD is not None and os.getpid() == self.pid:
            _RECORD.end()
        return False


class _Record:
    """A worker's current activity in shared memory: the text, and (start, time limit)
    as two binary64 numbers on time.monotonic()'s clock, which is the system's monotonic
    clock, the same in every process. start = 0: no activity. The worker writes the text
    before the start, so a start the parent reads has its text."""

    def __init__(self, ctx):
        self.text = ctx.Array("c", _TEXT, lock=False)
        self.clock = ctx.Array("d", 2, lock=False)

    def begin(self, text: str, timeout: float | None) -> None:
        data = text.encode("utf-8", "replace")[: _TEXT - 1]
        self.text.value = data
        self.clock[1] = float(timeout or 0.0)
        self.clock[0] = time.monotonic()

    def end(self) -> None:
        self.clock[0] = 0.0

    def doing(self) -> str | None:
        return self.text.value.decode("utf-8", "replace") if self.clock[0] > 0.0 else None

    def split(self) -> tuple[str | None, str]:
        """(what the worker is doing, the hint for an overrun)."""
        d = self.doing()
        if d is None:
            return None, ""
        text, _, hint = d.partition(_HINT)
        return text, hint

    def deadline(self) -> tuple[float, float] | None:
        """(the monotonic time the running call overruns at, its limit), or None."""
        start, limit = self.clock[0], self.clock[1]
        return (start + limit, limit) if start > 0.0 and limit > 0.0 else None


@dataclass
class WorkerLost(Exception):
    """The worker running a task ended, or was stopped after its time limit."""

    exitcode: int | None
    doing: str | None
    timed_out: bool = False
    timeout: float | None = None
    hint: str = ""

    def __str__(self) -> str:
        if self.timed_out:
            head = f"did not return within {self.timeout:g} s (the process running it was stopped)"
        else:
            head = f"ended the process running it ({describe_exit(self.exitcode)})"
        return (
            head
            + (f" while {self.doing}" if self.doing else "")
            + (f" [{self.hint}]" if self.timed_out and self.hint else "")
        )


def describe_exit(code: int | None) -> str:
    if code is None:
        return "no exit status"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}"
    return f"exit status {code}"


def die_with_parent(parent_pid: int) -> None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass  # not Linux: the lifeline check below still ends orphans between tasks
    if os.getppid() != parent_pid:  # the parent died before prctl took effect
        os._exit(1)


def fresh_stdio() -> None:
    # Another thread of the parent may have held the locks of sys.stdout and
    # sys.stderr at fork time; new objects on the same descriptors have new locks.
    for name, fd in (("stdout", 1), ("stderr", 2)):
        try:
            setattr(sys, name, open(os.dup(fd), "w", buffering=1, closefd=True))
        except OSError:
            pass


def _worker_main(conn, parent_pid: int, record: _Record) -> None:
    global _CHANNEL, _RECORD, _IN_WORKER
    die_with_parent(parent_pid)
    try:
        # a group of its own: processes a target forks are stopped with the worker (Pool.close, kill)
        os.setpgid(0, 0)
    except OSError:
        pass
    faulthandler.disable()  # a target's crash is reported by the parent, with what it was running
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    fresh_stdio()
    _CHANNEL, _RECORD, _IN_WORKER = conn, record, True
    while True:
        try:
            msg = conn.recv()
        except (EOFError, OSError):
            os._exit(0)
        if msg is None:
            os._exit(0)
        tid, fn, args, kwargs = msg
        try:
            value = fn(*args, **kwargs)
            reply = ("done", tid, value)
        except BaseException as exc:  # noqa: BLE001 - SystemExit from a target is an outcome
            reply = ("raised", tid, _portable(exc))
        try:
            conn.send(reply)
        except Exception as exc:  # an unpicklable value: say so rather than vanish
            conn.send(("raised", tid, RuntimeError(f"task result could not be sent: {exc!r}")))


def _portable(exc: BaseException) -> BaseException:
    """The exception itself when it pickles, else a RuntimeError with its text."""
    try:
        pickle.loads(pickle.dumps(exc))
        return exc
    except Exception:
        text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return RuntimeError(text)


def _context():
    method = "spawn" if any(m in sys.modules for m in _THREADED) else "fork"
    if method == "fork":
        warm_before_fork()
    return multiprocessing.get_context(method)


@functools.lru_cache(maxsize=1)
def warm_before_fork() -> None:
    """Done once in the parent, so that every forked worker inherits it rather than doing it first: numba's
    first compilation or cache load in a process loads its type registries (opcert.numba_registries.load), a
    large part of each worker's start (bench/README.md, 'Figures behind choices in the code')."""
    numba_registries.load()


class _Worker:
    def __init__(self, ctx):
        self.conn, child = ctx.Pipe(duplex=True)
        self.record = _Record(ctx)
        self.proc = ctx.Process(target=_worker_main, args=(child, os.getpid(), self.record), daemon=True)
        self.proc.start()
        child.close()
        self.task = None  # task id in flight

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(5)
        self.stop_group()
        self.conn.close()

    def stop_group(self) -> None:
        """Stop what is left of the worker's process group: children a target forked, which would
        otherwise outlive opcert and hold its output pipes open (a CI job that never ends)."""
        if self.proc.pid:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except OSError:
                pass


class Pool:
    """N supervised workers. `run(tasks)` yields (index, ok, value) as tasks
    finish, in any order: ok is False when the task raised (value is the
    exception) or its worker was lost (value is a WorkerLost)."""

    def __init__(self, workers: int = 1):
        if workers < 1:
            raise ValueError("a pool needs at least one worker")
        self.size = workers
        self.ctx = _context()
        self.workers: list[_Worker] = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close(kill=exc[0] is not None)
        return False

    def close(self, kill: bool = False) -> None:
        for w in self.workers:
            if kill or w.task is not None:
                w.kill()
                continue
            try:
                w.conn.send(None)
            except OSError:
                pass
            w.proc.join(2)
            if w.proc.is_alive():
                w.proc.kill()
                w.proc.join(5)
            w.stop_group()
            w.conn.close()
        self.workers = []

    def run(self, tasks):
        """tasks: a list of (fn, args, kwargs); fn must be a module-level function."""
        pending = list(enumerate(tasks))[::-1]
        try:
            while pending or any(w.task is not None for w in self.workers):
                self.workers = [w for w in self.workers if w.proc.is_alive() or w.task is not None]
                while pending and (len(self.workers) < self.size or any(w.task is None for w in self.workers)):
                    idle = next((w for w in self.workers if w.task is None), None)
                    if idle is None:
                        idle = _Worker(self.ctx)
                        self.workers.append(idle)
                    i, (fn, args, kwargs) = pending.pop()
                    idle.task = i
                    idle.record.end()
                    idle.conn.send((i, fn, args, kwargs))
                yield from self._collect()
        except BaseException:
            self.close(kill=True)
            raise

    def _collect(self):
        busy = [w for w in self.workers if w.task is not None]
        now = time.monotonic()
        # a call that starts while the parent waits is not announced: look again within POLL
        deadlines = [d[0] for d in (w.record.deadline() for w in busy) if d is not None]
        timeout = max(0.0, min([now + POLL, *deadlines]) - now) if busy else None
        ready = wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout)
        for w in busy:
            eof = False
            if w.conn in ready:
                while w.task is not None:
                    try:
                        if not w.conn.poll():
                            break
                        msg = w.conn.recv()
                    except (EOFError, OSError):
                        eof = True
                        break
                    out = self._message(w, msg)
                    if out is not None:
                        yield out
            if w.task is not None and (eof or not w.proc.is_alive()):
                w.proc.join(10)  # the connection closed: the process is ending
                if w.proc.is_alive():
                    w.proc.kill()
                    w.proc.join(5)
                w.stop_group()
                lost = WorkerLost(w.proc.exitcode, w.record.split()[0])
                i, w.task = w.task, None
                w.conn.close()
                yield i, False, lost
            elif w.task is not None and (d := w.record.deadline()) is not None and time.monotonic() > d[0]:
                w.kill()  # then its record cannot change while it is read
                doing, hint = w.record.split()
                lost = WorkerLost(None, doing, timed_out=True, timeout=d[1], hint=hint)
                i, w.task = w.task, None
                yield i, False, lost
        # a worker that died after the checks above keeps its task: the next round reports it
        self.workers = [w for w in self.workers if w.proc.is_alive() or w.task is not None]

    @staticmethod
    def _message(w: _Worker, msg):
        kind = msg[0]
        i = w.task
        w.task = None
        return (i, kind == "done", msg[2])


def run_isolated(fn, *args, **kwargs):
    """Run one task in a fresh supervised worker: its value, or raise what it
    raised, or WorkerLost."""
    with Pool(1) as pool:
        for _, ok, value in pool.run([(fn, args, kwargs)]):
            if ok:
                return value
            raise value
    raise RuntimeError("the worker returned nothing")  # not reached
