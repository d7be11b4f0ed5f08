"""Resident memory of opcert's heavy commands: the whole process tree, sampled.

    .venv/bin/python bench/memory.py          # both commands below (the sweep: ~5 min on 2 cores)

Runs each command as a subprocess and, every 0.1 s, sums the resident set
(VmRSS from /proc) of the command and every process under it (the sweep's
workers, the isolated target's worker), and prints the peak of that sum and the
peak of the largest single process. The sum over-counts pages shared between
processes (NumPy's and the runtimes' libraries are mapped in each), so it is
an upper bound on what the machine had to hold.

Commands:
  opcert accuracy Tanh --dtype float64 --target numpy:tanh --samples 1000000
  opcert accuracy Tanh --dtype float32 --target numpy:tanh --exhaustive --checkpoint <fresh dir>
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OPCERT = str(Path(sys.executable).with_name("opcert"))


def _children() -> dict[int, list[int]]:
    kids: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d))
    return kids


def _rss_kib(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree_rss(root: int) -> tuple[int, int, int]:
    """(sum of VmRSS in KiB, largest single VmRSS, number of processes) of root and its descendants."""
    kids, todo, seen = _children(), [root], []
    while todo:
        p = todo.pop()
        seen.append(p)
        todo.extend(kids.get(p, []))
    sizes = [_rss_kib(p) for p in seen]
    return sum(sizes), max(sizes, default=0), len(seen)


def measure(cmd: list[str]) -> dict:
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    peak_sum = peak_one = procs = 0
    while proc.poll() is None:
        s, one, n = tree_rss(proc.pid)
        peak_sum, peak_one, procs = max(peak_sum, s), max(peak_one, one), max(procs, n)
        time.sleep(0.1)
    err = proc.stderr.read()
    return {
        "command": " ".join(cmd),
        "exit": proc.returncode,
        "wall_s": time.perf_counter() - t0,
        "peak_tree_mib": peak_sum / 1024,
        "peak_process_mib": peak_one / 1024,
        "processes": procs,
        "stderr_tail": err.strip().splitlines()[-1:] if proc.returncode not in (0, 1) else [],
    }


def main():
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    cmds = [[OPCERT, "accuracy", "Tanh", "--dtype", "float64", "--target", "numpy:tanh", "--samples", "1000000"]]
    ck = tempfile.mkdtemp(prefix="opcert-mem-")
    sweep = [
        OPCERT,
        "accuracy",
        "Tanh",
        "--dtype",
        "float32",
        "--target",
        "numpy:tanh",
        "--exhaustive",
        "--checkpoint",
        ck,
    ]
    cmds.append(sweep)
    for cmd in cmds:
        r = measure(cmd)
        print(
            f"{r['command']}\n  exit {r['exit']}, {r['wall_s']:.1f} s wall; peak resident memory: "
            f"{r['peak_tree_mib']:.0f} MiB over the process tree ({r['processes']} processes), "
            f"{r['peak_process_mib']:.0f} MiB in the largest process {' '.join(r['stderr_tail'])}"
        )


if __name__ == "__main__":
    main()
