"""Where a cold test run's numba compilation goes: a pytest plugin that logs every compilation, and its summary.

    rm -f /tmp/opcert-compiles.txt
    env XDG_CACHE_HOME=$(mktemp -d) PYTHONPATH=bench .venv/bin/python -m pytest -q -n 2 -p compile_time
    .venv/bin/python bench/compile_time.py /tmp/opcert-compiles.txt

With an empty XDG_CACHE_HOME (and the package's own numba caches removed: `find opcert -name '*.nb[ic]' -delete`)
every kernel is compiled in the run, as on a CI machine. The plugin registers a listener for numba's
"numba:compile" event in each pytest worker, inherited by the processes they fork (a sweep's workers), and
appends one line per compilation (start, end, pid, function, test) to OPCERT_COMPILE_LOG
(/tmp/opcert-compiles.txt). A compilation inside another (a callee's) is counted once, in the outer one: the
summary adds up, per process, the intervals no other one contains. A cache load is a short compilation event too.
"""

import collections
import os
import sys
import time

LOG = os.environ.get("OPCERT_COMPILE_LOG", "/tmp/opcert-compiles.txt")


def _register():
    from numba.core import event

    class Listener(event.Listener):
        def __init__(self):
            self.started = {}

        def on_start(self, ev):
            self.started[id(ev.data.get("dispatcher"))] = time.perf_counter()

        def on_end(self, ev):
            d = ev.data.get("dispatcher")
            t0 = self.started.pop(id(d), None)
            if t0 is None:
                return
            f = getattr(d, "py_func", None)
            name = f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', '?')}"
            test = os.environ.get("PYTEST_CURRENT_TEST", "?").split(" ")[0]
            with open(LOG, "a") as fh:
                fh.write(f"{t0:.4f} {time.perf_counter():.4f} {os.getpid()} {name} {test}\n")

    event.register("numba:compile", Listener())


def pytest_configure(config):
    _register()


def summary(path: str) -> None:
    per_pid = collections.defaultdict(list)
    for line in open(path):
        t0, t1, pid, name, _test = line.split(" ", 4)
        per_pid[pid].append((float(t0), float(t1), name))
    by_kind, total = collections.Counter(), 0.0
    for spans in per_pid.values():
        spans.sort()
        end = -1.0
        for t0, t1, name in spans:
            if t0 < end:  # inside an outer compilation
                end = max(end, t1)
                continue
            end = t1
            total += t1 - t0
            kind = "generated ball kernels" if "opcert_ball_" in name else name
            kind = "generated implementation kernels" if "opcert_impl_" in name else kind
            by_kind[kind] += t1 - t0
    print(f"{len(per_pid)} processes, {total:.1f} s of compilation at the top level")
    for kind, s in by_kind.most_common(15):
        print(f"{s:8.2f} s  {kind}")


if __name__ == "__main__":
    summary(sys.argv[1] if len(sys.argv) > 1 else LOG)
