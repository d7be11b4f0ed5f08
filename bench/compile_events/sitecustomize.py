"""Records every numba compilation of every Python process started with this folder on PYTHONPATH
(the test suite's xdist workers, the CLI commands and sweep workers they start): one JSON line per
compilation in $OPCERT_COMPILE_EVENTS/<pid>.jsonl. bench/compile_events.py runs the suite this way and
sums the lines. numba is not imported here: the listener is registered when numba.core.event is."""

import importlib.abc
import importlib.machinery
import json
import os
import sys
import time

_OUT = os.environ.get("OPCERT_COMPILE_EVENTS")


def _register(event):
    stack, path = [], os.path.join(_OUT, f"{os.getpid()}.jsonl")

    class _Listener(event.Listener):
        def on_start(self, ev):
            stack.append(time.perf_counter())

        def on_end(self, ev):
            t0 = stack.pop() if stack else time.perf_counter()
            d = ev.data or {}
            disp = d.get("dispatcher")
            f = getattr(disp, "py_func", None)
            name = f"{getattr(f, '__module__', '?')}.{getattr(f, '__qualname__', '?')}" if f else repr(disp)
            row = {
                "name": name,
                "sig": str(d.get("args")),
                "s": time.perf_counter() - t0,
                "depth": len(stack),
                "pid": os.getpid(),
                "test": os.environ.get("PYTEST_CURRENT_TEST", ""),
                "argv": " ".join(sys.argv[:3]),
            }
            with open(path, "a") as fh:
                fh.write(json.dumps(row) + "\n")

    event.register("numba:compile", _Listener())


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "numba.core.event":
            return None
        sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        inner = spec.loader.exec_module

        def exec_module(module):
            inner(module)
            _register(module)

        spec.loader.exec_module = exec_module
        return spec


if _OUT:
    os.makedirs(_OUT, exist_ok=True)
    sys.meta_path.insert(0, _Finder())
