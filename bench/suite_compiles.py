"""Where the test suite's numba compilations go, on cold caches (a CI machine's first run).

Runs pytest (the README's test command unless arguments are given after `--`) with empty kernel caches
(OPCERT_KERNEL_CACHE, NUMBA_CACHE_DIR in a fresh temporary directory) and bench/compile_events on
PYTHONPATH, which records every compilation of every Python process the run starts; then sums them:
by kind (generated ball kernels, generated implementation kernels, opcert's modules), the functions
compiled more than once in one process (another signature: another layout or type of an argument)
and the tests that compiled most.

    .venv/bin/python bench/suite_compiles.py                      # the whole suite, -n 2
    .venv/bin/python bench/suite_compiles.py -- tests/test_sweep.py -q
    .venv/bin/python bench/suite_compiles.py --events DIR          # sum a recorded run again

Seconds are those of the compiling process (nested compilations are inside their callers' and are
not added again); the two xdist workers compile at once, so wall time is about half the sum.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _kind(name: str) -> str:
    if name.startswith("opcert_ball_"):
        return "generated ball kernels"
    if name.startswith("opcert_impl_"):
        return "generated implementation kernels"
    if name.startswith("opcert_"):
        return "generated " + name.split("_")[1]
    return name.rsplit(".", 1)[0]


def summarise(events: Path, top: int = 15) -> dict:
    rows = [json.loads(line) for f in events.glob("*.jsonl") for line in f.read_text().splitlines()]
    outer = [r for r in rows if r["depth"] == 0]
    kinds = collections.defaultdict(lambda: [0, 0.0])
    for r in outer:
        k = kinds[_kind(r["name"])]
        k[0] += 1
        k[1] += r["s"]
    again = collections.defaultdict(list)
    for r in outer:
        again[(r["name"], r["pid"])].append(r)
    twice = {k: v for k, v in again.items() if len(v) > 1}
    tests = collections.defaultdict(float)
    for r in outer:
        tests[r["test"].split(" ")[0] or f"<{r['argv']}>"] += r["s"]
    return {
        "compilations": len(outer),
        "seconds": round(sum(r["s"] for r in outer), 1),
        "processes": len({r["pid"] for r in rows}),
        "by_kind": {
            k: {"count": n, "seconds": round(s, 1)} for k, (n, s) in sorted(kinds.items(), key=lambda kv: -kv[1][1])
        },
        "compiled_again_in_one_process": {
            "count": sum(len(v) - 1 for v in twice.values()),
            "seconds": round(sum(r["s"] for v in twice.values() for r in v[1:]), 1),
            "functions": sorted({k[0] for k in twice}),
        },
        "tests": dict(sorted(((t, round(s, 1)) for t, s in tests.items()), key=lambda kv: -kv[1])[:top]),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=Path, help="sum this recorded run instead of running the suite")
    ap.add_argument("--json", action="store_true", help="print the summary as JSON")
    ap.add_argument("pytest_args", nargs="*", help="after --: pytest's arguments (default: -q -n 2 --dist worksteal)")
    a = ap.parse_args()
    events = a.events
    if events is None:
        work = Path(tempfile.mkdtemp(prefix="opcert-compiles-"))
        events = work / "events"
        env = dict(os.environ)
        env.update(
            OPCERT_COMPILE_EVENTS=str(events),
            OPCERT_KERNEL_CACHE=str(work / "kernels"),
            NUMBA_CACHE_DIR=str(work / "numba"),
            PYTHONPATH=os.pathsep.join([str(ROOT / "bench" / "compile_events"), env.get("PYTHONPATH", "")]).rstrip(
                os.pathsep
            ),
        )
        args = a.pytest_args or ["-q", "-n", "2", "--dist", "worksteal"]
        subprocess.run([sys.executable, "-m", "pytest", *args], cwd=ROOT, env=env, check=False)
        print(f"events: {events}")
    s = summarise(events)
    if a.json:
        print(json.dumps(s, indent=1))
        return 0
    print(f"{s['compilations']} compilations, {s['seconds']} s, in {s['processes']} processes")
    for k, v in s["by_kind"].items():
        print(f"  {v['seconds']:7.1f} s {v['count']:4d}  {k}")
    t = s["compiled_again_in_one_process"]
    print(f"compiled again in one process (another signature): {t['count']}, {t['seconds']} s")
    for f in t["functions"]:
        print(f"  {f}")
    print("the tests that compiled most:")
    for k, v in s["tests"].items():
        print(f"  {v:7.1f} s  {k}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
