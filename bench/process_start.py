"""What every opcert process pays before it measures anything: ml_dtypes' import, numba's registries and a Python
target's distributions, each the old way and opcert's way, in fresh processes run alternately; and a whole command.

    .venv/bin/python bench/process_start.py [--rounds 8] [--command "accuracy Tanh --dtype float64 ..."]

ml_dtypes: its import after NumPy's, the version installed (0.7.0 is excluded in pyproject.toml: its extension
loaded in 1.2-1.3 s where 0.6.0's took 13 ms, bench/README.md). numba's registries (its first compile or cache
load in a process): numba's own refresh, which imports scipy.linalg through arraymath's BLAS probe, against
opcert.numba_registries.load (the probe on disk). A
Python target's distributions: importlib.metadata read in full (opcert.targets.python._read_distributions)
against the copy kept in the kernel cache (_distributions, warm). Each figure is the median of --rounds fresh
processes, timed inside the process (its start excluded); the command is timed from outside, whole, as
`python -m opcert` runs it and, alternately, as main() and the interpreter's own exit (what cli.entry skips)."""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time

PROBES = {
    # every opcert process loads ml_dtypes (opcert.formats); to compare another version, put it first on
    # PYTHONPATH (`pip install --no-deps --target DIR ml_dtypes==V`, then PYTHONPATH=DIR)
    "ml_dtypes imported (NumPy already)": (
        "import numpy, time; t = time.perf_counter(); import ml_dtypes; print(time.perf_counter() - t)"
    ),
    "numba's own refresh": (
        "import numba, time; t = time.perf_counter(); from numba.core.registry import cpu_target; "
        "cpu_target.target_context.refresh(); print(time.perf_counter() - t)"
    ),
    "opcert.numba_registries.load": (
        "import numba, time; from opcert import numba_registries; t = time.perf_counter(); "
        "numba_registries.load(); print(time.perf_counter() - t)"
    ),
    "distributions read in full": (
        "import time; from opcert.targets import python as p; t = time.perf_counter(); "
        "p._read_distributions(); print(time.perf_counter() - t)"
    ),
    "distributions from the kernel cache": (
        "import time; from opcert.targets import python as p; t = time.perf_counter(); "
        "p._distributions(); print(time.perf_counter() - t)"
    ),
}

DEFAULT_COMMAND = "accuracy Tanh --dtype float64 --target numpy:tanh --samples 1000000"


def probe(code: str) -> float:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def command(args: list[str], teardown: bool = False) -> float:
    """The command's wall time: as `python -m opcert` runs it (cli.entry: no interpreter teardown), or with
    teardown, main() and then the interpreter's own exit (every module's objects freed)."""
    run = (
        [sys.executable, "-c", f"import sys; from opcert.cli import main; sys.argv[1:] = {args!r}; sys.exit(main())"]
        if teardown
        else [sys.executable, "-m", "opcert", *args]
    )
    t = time.perf_counter()
    subprocess.run(run, capture_output=True, check=False)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=8)
    ap.add_argument("--command", default=DEFAULT_COMMAND, help="an opcert command, timed whole ('' for none)")
    a = ap.parse_args()
    probe(PROBES["distributions from the kernel cache"])  # the cache filled once, as the first run would
    times = {name: [] for name in PROBES}
    for _ in range(a.rounds):
        for name, code in PROBES.items():
            times[name].append(probe(code))
    print(f"median of {a.rounds} fresh processes each, run alternately (s):")
    for name, ts in times.items():
        print(f"  {name:40s} {statistics.median(ts):.3f}  (min {min(ts):.3f}, max {max(ts):.3f})")
    if a.command:
        args = shlex.split(a.command)
        command(args)  # warm: kernels loaded from their caches, as in every later run
        ts, torn = [], []
        for _ in range(a.rounds):  # alternately: the command as it runs, and with the interpreter's teardown
            ts.append(command(args))
            torn.append(command(args, teardown=True))
        for what, t in (("", ts), (" with the interpreter's teardown (main(), then its own exit)", torn)):
            print(
                f"`opcert {a.command}`{what}, whole, median of {a.rounds}: {statistics.median(t):.3f} s "
                f"(min {min(t):.3f}, max {max(t):.3f})"
            )
    print(f"NPY_DISABLE_CPU_FEATURES={os.environ.get('NPY_DISABLE_CPU_FEATURES', '')!r}")


if __name__ == "__main__":
    main()
