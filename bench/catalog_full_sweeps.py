"""Every operator's whole float32 sweep, timed: the slowest first.

    .venv/bin/python bench/catalog_full_sweeps.py [--ops Mish Gelu] [--target opcert] [--fresh-kernels]
    .venv/bin/python bench/catalog_full_sweeps.py --onnx-test-attrs     # the ONNX backend tests' attributes

For each operator of the catalog at its default attributes, runs the command a
user runs,

    opcert accuracy OP --dtype float32 --target opcert --exhaustive

(all 2^32 inputs, every declared property, every core; with --onnx-test-attrs,
at each attribute set of ONNX's backend node tests instead, from
opcert/spec/onnx_backend_attrs.py, `--attr` per value), in a subprocess with a
fresh, empty checkpoint directory (a resumed sweep is not a timing), and prints
its wall time, the peak resident memory of its largest process (GNU time's %M,
where /usr/bin/time exists), the inputs left to the exact reference and the
status (ok, or what failed), slowest first, against the speed issue's bar of 60 s.

The compiled reference kernels are cached in ~/.cache/opcert/kernels (or
$OPCERT_KERNEL_CACHE) after their first use on a machine, and numba caches
those of opcert's package beside its sources (or in $NUMBA_CACHE_DIR);
--fresh-kernels gives each sweep both empty, so its time includes compiling
them all (a first run's cost). A whole sweep of every operator takes 15-25 minutes.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BAR = 60.0


def run(op: str, target: str, fresh_kernels: bool, attrs: dict | None = None) -> dict:
    with tempfile.TemporaryDirectory(prefix=f"opcert-sweep-{op}-") as d:
        env = dict(os.environ, OPCERT_CACHE=os.path.join(d, "cache"))
        if fresh_kernels:
            # both caches: opcert's generated kernels, and numba's of opcert's package (in __pycache__
            # or NUMBA_CACHE_DIR), which would otherwise be compiled by the first sweep alone
            env["OPCERT_KERNEL_CACHE"] = os.path.join(d, "kernels")
            env["NUMBA_CACHE_DIR"] = os.path.join(d, "numba")
        out = os.path.join(d, "result.json")
        cmd = [
            sys.executable,
            "-m",
            "opcert",
            "accuracy",
            op,
            "--dtype",
            "float32",
            "--target",
            target,
            "--exhaustive",
            "--checkpoint",
            os.path.join(d, "ck"),
            "--json",
            out,
        ]
        for k, v in (attrs or {}).items():
            cmd += ["--attr", f"{k}={v}"]
        mem = os.path.join(d, "mem")
        gnu_time = shutil.which("time") or ("/usr/bin/time" if os.path.exists("/usr/bin/time") else None)
        if gnu_time:
            cmd = [gnu_time, "-f", "%M", "-o", mem] + cmd
        t0 = time.perf_counter()
        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        label = op + (" " + ", ".join(f"{k}={v}" for k, v in attrs.items()) if attrs else "")
        row = {"op": label, "wall_s": wall, "exit": p.returncode, "rss_mb": None, "undecided": None, "verdict": None}
        if gnu_time and os.path.exists(mem):
            try:
                row["rss_mb"] = int(open(mem).read().split()[-1]) / 1024
            except (ValueError, IndexError):
                pass
        try:
            res = json.load(open(out))
            row["verdict"] = res["status"]
            row["undecided"] = res["sweep"]["undecided"]
            row["max_ulp"] = res["max_ulp"]
        except (OSError, ValueError, KeyError, IndexError, TypeError):
            row["verdict"] = f"no result (exit {p.returncode}): {p.stderr.strip()[-200:]}"
        return row


def main():
    import opcert

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", nargs="*", help="operators (default: the catalog)")
    ap.add_argument("--target", default="opcert")
    ap.add_argument("--fresh-kernels", action="store_true", help="an empty kernel cache per sweep (compile included)")
    ap.add_argument(
        "--onnx-test-attrs",
        action="store_true",
        help="each attribute set of ONNX's backend node tests instead of the defaults",
    )
    a = ap.parse_args()
    ops = a.ops or [op.name for op in opcert.operators()]
    runs = [(op, None) for op in ops]
    if a.onnx_test_attrs:
        from opcert.spec.onnx_backend_attrs import ATTRS

        runs = [(op, attrs) for op in ops for attrs in ATTRS.get(op, [])]
    rows = []
    for op, attrs in runs:
        r = run(op, a.target, a.fresh_kernels, attrs)
        rows.append(r)
        print(f"{r['op']}: {r['wall_s']:.1f} s, exit {r['exit']}", file=sys.stderr, flush=True)
    print(
        f"\n| operator | wall time, 2^32 inputs | under {BAR:.0f} s | peak RSS (largest process) | "
        "left to the exact path | max ULP | status |\n|---|---|---|---|---|---|---|"
    )
    for r in sorted(rows, key=lambda r: -r["wall_s"]):
        rss = f"{r['rss_mb']:.0f} MB" if r["rss_mb"] else "-"
        und = f"{r['undecided']:,}" if isinstance(r["undecided"], int) else "-"
        ulp = r.get("max_ulp")
        print(
            f"| {r['op']} | {r['wall_s']:.1f} s | {'yes' if r['wall_s'] <= BAR else '**no**'} | {rss} | {und} | "
            f"{ulp if ulp is not None else '-'} | {r['verdict']} |"
        )
    slow = [r for r in rows if r["wall_s"] > BAR]
    print(
        f"\nslowest: {max(rows, key=lambda r: r['wall_s'])['op']}; over {BAR:.0f} s: "
        + (", ".join(r["op"] for r in slow) or "none")
    )


if __name__ == "__main__":
    main()
