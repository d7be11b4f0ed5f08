"""Progress of a long run, as people and CI logs want it.

On a terminal: a rich bar with the count, the rate and the time left (erased when the run ends). Elsewhere
(a CI log, a pipe): one line on standard error every OPCERT_PROGRESS_SECONDS seconds (default 10; 0 turns the
lines off), also while one long unit runs (a thread keeps time), and a last line with the total time once a run
has lasted that long: a short run prints nothing.

A long phase that advances no unit (a resumed sweep's replay of its finished chunks, one attribute set's
measurement and layout check) names itself: `phase(text)` shows the text beside the count, on the bar and
in the lines, until the next phase (None: none). A run reports its phases through its progress callback
(`tell(callback, text)`): a callback that takes the keyword `phase` (Progress.advance and update do) gets
them; one that does not gets its counts as before.
"""

from __future__ import annotations

import inspect
import os
import sys
import threading
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeRemainingColumn
from rich.progress import Progress as Bar

DEFAULT_SECONDS = 10.0
_KEEP = object()  # advance() and update() without phase=: the phase stays as it is


def takes_phase(callback) -> bool:
    """Whether a progress callback takes the keyword `phase` (tell's messages)."""
    try:
        params = inspect.signature(callback).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "phase" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def tell(callback, text: str | None) -> None:
    """Tell a run's progress callback which phase it is in (None: the phase ended), as callback(phase=text),
    where the callback takes that keyword (takes_phase); else nothing: its counts go on as before."""
    if callback is not None and takes_phase(callback):
        callback(phase=text)


def _seconds() -> float:
    raw = os.environ.get("OPCERT_PROGRESS_SECONDS", "")
    try:
        v = float(raw) if raw else DEFAULT_SECONDS
    except ValueError:
        v = DEFAULT_SECONDS
    return v if v >= 0 else DEFAULT_SECONDS


def _count(n: float, unit: str) -> str:
    if unit == "inputs" and n >= 1e6:
        return f"{n / 1e6:,.1f} M"
    return f"{n:,.0f}" if float(n).is_integer() else f"{n:,.1f}"


def _rate(n: float, unit: str) -> str:
    if n >= 1e6:
        return f"{n / 1e6:,.1f} M {unit}/s"
    return f"{n:,.2f} {unit}/s" if n < 10 else f"{n:,.0f} {unit}/s"


def _duration(s: float) -> str:
    s = int(round(s))
    h, m = divmod(s, 3600)
    m, sec = divmod(m, 60)
    return f"{h}h {m:02d}m" if h else (f"{m}m {sec:02d}s" if m else f"{sec}s")


class Progress:
    """Progress over `total` units of `what` (a context manager); advance(n) or update(done, total).

    stream and clock are for tests; tty forces the bar (True) or the lines (False)."""

    def __init__(
        self,
        what: str,
        total: float,
        unit: str = "",
        *,
        stream=None,
        tty: bool | None = None,
        seconds: float | None = None,
        clock=time.monotonic,
    ):
        self.what, self.total, self.unit = what, float(total), unit
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.seconds = _seconds() if seconds is None else seconds
        self.clock = clock
        self.done = self.base = 0.0
        self._bar = self._task = None
        self._printed = False
        self._first = None  # (time, units done) when the first unit of this run ended
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._beat = None
        self.current: str | None = None  # the phase now (phase())

    def __enter__(self) -> Progress:
        self.t0 = self._last = self.clock()
        if not self.tty and self.seconds:
            self._beat = threading.Thread(target=self._heartbeat, daemon=True)
            self._beat.start()
        if self.tty:
            self._bar = Bar(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn(self.unit),
                TextColumn("{task.fields[rate]}"),
                TimeRemainingColumn(),
                transient=True,
                console=Console(file=self.stream),
            )
            self._bar.__enter__()
            self._task = self._bar.add_task(self.what, total=self.total, rate="")
        return self

    def resume_at(self, done: float) -> None:
        """Units done before this run (a resumed sweep's chunks): counted, but not in the rate."""
        self.done = self.base = float(done)

    def phase(self, text: str | None) -> None:
        """Name the phase the run is in (None: none): shown beside the count until the next one."""
        self.current = text or None
        if self._bar is not None:
            self._bar.update(self._task, description=self._described())

    def _described(self) -> str:
        return f"{self.what}: {self.current}" if self.current else self.what

    def advance(self, n: float | None = None, *, phase=_KEEP) -> None:
        """n more units done (1 where n is not given; none where only phase= is given)."""
        if phase is not _KEEP:
            self.phase(phase)
            if n is None:
                return
        self.update(self.done + (1 if n is None else n))

    def update(self, done: float | None = None, total: float | None = None, *, phase=_KEEP) -> None:
        """done units of total (done None: the count stays; phase=: the phase, phase())."""
        if phase is not _KEEP:
            self.phase(phase)
            if done is None and total is None:
                return
        if done is None:
            done = self.done
        self.done = float(done)
        if total is not None:
            self.total = float(total)
        now = self.clock()
        if self._first is None and self.done > self.base:
            self._first = (now, self.done)
        if self._bar is not None:
            pace = self._pace(now)
            self._bar.update(
                self._task, completed=self.done, total=self.total, rate=_rate(pace, self.unit) if pace else ""
            )
        else:
            self._maybe_line(now)

    def _maybe_line(self, now: float) -> None:
        with self._lock:
            if self.seconds and now - self._last >= self.seconds:
                self._last = now
                self._line(now)

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.seconds):
            self._maybe_line(self.clock())

    def _pace(self, now: float) -> float | None:
        """Units a second since the first unit of this run ended; None before a second one has: a run's
        start-up (compiling, loading a runtime, a float32 sweep's layout check) is not its pace."""
        if self._first is not None and self.done > self._first[1] and now > self._first[0]:
            return (self.done - self._first[1]) / (now - self._first[0])
        return None

    def _line(self, now: float) -> None:
        el = now - self.t0
        pct = f" ({100 * self.done / self.total:.0f}%)" if self.total else ""
        rate = self._pace(now)
        left = f", about {_duration((self.total - self.done) / rate)} left" if rate and self.total else ""
        speed = f", {_rate(rate, self.unit)}" if rate else ""
        now_doing = f"; now {self.current}" if self.current else ""
        print(
            f"opcert: {self.what}: {_count(self.done, self.unit)}/{_count(self.total, self.unit)} {self.unit}{pct}"
            f" in {_duration(el)}{speed}{left}{now_doing}",
            file=self.stream,
            flush=True,
        )
        self._printed = True

    def __exit__(self, *exc) -> bool:
        self._stop.set()
        if self._beat is not None:
            self._beat.join()
        if self._bar is not None:
            self._bar.__exit__(*exc)
        elif self._printed and exc[0] is None:
            el = self.clock() - self.t0
            print(
                f"opcert: {self.what}: {_count(self.done, self.unit)} {self.unit} in {_duration(el)}",
                file=self.stream,
                flush=True,
            )
        return False
