"""What a target call may change in the process that calls it, and how it is put back.

A target runs in the process where opcert computes its reference and judges
the outputs (a worker's, or the main one with isolation = "none"). Around
every load and call (`Isolation.call`):

- the floating-point environment (opcert.fpenv): the target runs under the
  mode it set for itself, opcert under its own;
- the working directory: a target's chdir does not move opcert's files;
- `os._exit` in the main process: a target that calls it fails its check
  instead of ending opcert with exit status 0 and no output (in a worker the
  supervisor sees the exit);
- Ctrl-C: a KeyboardInterrupt the user did not cause is the target's;
- fork: a child process that returns from the target's call ends there, and
  children the target leaves running are stopped and reported;
- the functions of numpy and math (`restore_globals`): a target that replaces
  one is reported, and the original put back before opcert computes again.
"""

from __future__ import annotations

import contextlib
import operator
import os
import signal
import sys
import threading

from opcert import fpenv
from opcert.errors import TargetFailure
from opcert.workers import in_worker

# modules whose functions opcert's reference, implementation and comparison call
_GUARDED = ("numpy", "math", "ml_dtypes", "mpmath", "flint", "numba")


class TargetExit(BaseException):
    def __init__(self, code):
        super().__init__(code)
        self.code = code

    def __str__(self):
        return f"the target called os._exit({self.code!r})"


def _snapshot() -> list:
    out = []
    for name in _GUARDED:
        mod = sys.modules.get(name)
        if mod is not None:
            d = vars(mod)
            items = list(d.items())
            keys = [k for k, _ in items]
            out.append((name, d, items, operator.itemgetter(*keys), [v for _, v in items]))
    return out


def _unchanged(d, get, values) -> bool:
    """Every guarded name still bound to its object (the common case, in one C-level pass: bench/README.md,
    'Figures behind choices in the code')."""
    try:
        return all(map(operator.is_, get(d), values))
    except KeyError:  # a name removed
        return False


class Isolation:
    """trusted: opcert's own implementation, which changes none of this: nothing is saved or checked
    (in the main process the check for child processes reads /proc at each call: bench/README.md,
    'Figures behind choices in the code')."""

    def __init__(self, trusted: bool = False):
        self.trusted = trusted
        self.fp = fpenv.Guard()
        self.user_interrupted = False
        self._globals = [] if trusted else _snapshot()

    @contextlib.contextmanager
    def call(self, target: str, what: str = "call"):
        if self.trusted:
            yield
            return
        pid, cwd = os.getpid(), _cwd()
        worker = in_worker()
        main = not worker and threading.current_thread() is threading.main_thread()
        # the main process: only children of this thread (one file; every thread's costs more per call:
        # bench/README.md, 'Figures behind choices in the code')
        before = None if worker else _children(own_thread=True)
        saved_exit, saved_int = os._exit, None
        if main:
            os._exit = _raise_exit
            saved_int = signal.getsignal(signal.SIGINT)
            signal.signal(signal.SIGINT, self._interrupt(saved_int))
        self.fp.enter()
        try:
            yield
        finally:
            self.end_if_forked(pid, target)
            self.fp.leave(what)
            if main:
                os._exit = saved_exit
                signal.signal(signal.SIGINT, saved_int)
            if cwd is not None and _cwd() != cwd:
                with contextlib.suppress(OSError):
                    os.chdir(cwd)
            left = _stop_children(before)
            if left:
                raise TargetFailure(
                    f"target {target} left {len(left)} child process(es) running after its "
                    f"{what} (pid {', '.join(map(str, left))}); opcert stopped them"
                )

    @staticmethod
    def end_if_forked(pid: int, target: str) -> None:
        """In a child the target forked (the process is not pid), returning from its call: end it there, as
        it must not go on as opcert."""
        if os.getpid() != pid:
            os.write(2, f"opcert: a process forked by target {target} returned from its call and was ended\n".encode())
            _REAL_EXIT(0)

    def _interrupt(self, previous):
        def handler(signum, frame):
            self.user_interrupted = True
            if callable(previous):
                previous(signum, frame)
            raise KeyboardInterrupt

        return handler

    def restore_globals(self) -> list[str]:
        """Put back every replaced or removed function of the guarded modules; their names."""
        out = []
        for name, d, items, get, values in self._globals:
            if _unchanged(d, get, values):
                continue
            for k, v in items:
                if d.get(k, _MISSING) is not v:
                    out.append(f"{name}.{k}")
                    d[k] = v
        return out


@contextlib.contextmanager
def child_ends(target: str):
    """Around a call made without an Isolation (the tensor, binary and predicate operators' targets): a child
    the target forked that returns from the call, or raises out of it, is ended here, inside the call's
    activity (whose record it shares with its parent)."""
    pid = os.getpid()
    try:
        yield
    finally:
        Isolation.end_if_forked(pid, target)


_MISSING = object()
_REAL_EXIT = os._exit  # the main process's os._exit is replaced during a call (_raise_exit)


def _raise_exit(code=0):
    raise TargetExit(code)


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:
        return None


def _children(own_thread: bool = False) -> set[int]:
    kids = set()
    try:
        files = (
            ["/proc/thread-self/children"]
            if own_thread
            else [f"/proc/self/task/{tid}/children" for tid in os.listdir("/proc/self/task")]
        )
        for name in files:
            with open(name) as f:
                kids.update(int(p) for p in f.read().split())
    except OSError:
        pass
    return kids


def _stop_children(before: set[int] | None) -> list[int]:
    """Child processes the call started and left running: stopped, their pids returned. In a worker
    (before = None: it has no children of its own), one system call where there are none; the main
    process has children of its own (its workers, a test runner's), which are left alone, and whose
    exit status waitpid(-1) would take from their owners."""
    if before is None:
        try:
            os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return []
    kids = _children(own_thread=before is not None) - (before or set())
    for k in kids:
        with contextlib.suppress(OSError):
            os.kill(k, signal.SIGKILL)
    for k in kids:
        with contextlib.suppress(OSError):
            os.waitpid(k, 0)
    return sorted(kids)
