"""What a check's worker processes cost to start, with and without the parent's warm-up before forking.

A float32 check of a Python target runs three supervised workers (probe, chunk, replay). Each forked worker
used to load numba's type registries at its first compilation or cache load (numba.np.arraymath imports
scipy.linalg); opcert.workers now does that once in the parent. Both variants run here, alternating, each in
a fresh interpreter (the warm-up cannot be undone in a process): `cold` replaces the warm-up by nothing.

    .venv/bin/python bench/worker_start.py [--rounds 3]

Prints, per variant, the first check in a process (which pays the warm-up once) and the next two (best of
the rounds), and the ratio warm/cold.
"""

import argparse
import json
import subprocess
import sys
import tempfile
import textwrap

SCRIPT = textwrap.dedent("""
    import json, sys, tempfile, time
    sys.path.insert(0, {tmp!r})
    import opcert.workers
    if {cold!r}:
        opcert.workers._warm_before_fork = lambda: None
    from opcert.verify.accuracy.measure import measure
    out = []
    for i in range(3):
        with tempfile.TemporaryDirectory() as ck:
            t = time.perf_counter()
            r = measure("Tanh", "bench_kernel:tanh", "float32", "exhaustive",
                        magnitude_range=(0x3F000000, 0x3F010000), workers=1, checkpoint=ck)
            out.append(time.perf_counter() - t)
            assert r.status == "ok", r.error
    print(json.dumps(out))
""")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp()
    with open(f"{tmp}/bench_kernel.py", "w") as f:
        f.write("import numpy as np\n\ndef tanh(x):\n    return np.tanh(x)\n")
    times = {"cold": [], "warm": []}
    for _ in range(args.rounds):
        for variant in ("cold", "warm"):
            code = SCRIPT.format(tmp=tmp, cold=variant == "cold")
            r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
            times[variant].append(json.loads(r.stdout.strip().splitlines()[-1]))
    from opcert.provenance import simd

    print(f"SIMD (NumPy's dispatch): {simd()}; {args.rounds} rounds, alternating; best of the rounds")
    print("| variant | first check in a process | next checks |")
    print("|---|---|---|")
    best = {}
    for v, runs in times.items():
        first = min(r[0] for r in runs)
        nxt = min(min(r[1:]) for r in runs)
        best[v] = (first, nxt)
        print(f"| {v} | {first:.2f} s | {nxt:.2f} s |")
    print(f"warm/cold: first {best['warm'][0] / best['cold'][0]:.2f}, next {best['warm'][1] / best['cold'][1]:.2f}")


if __name__ == "__main__":
    main()
