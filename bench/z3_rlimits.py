"""What z3's queries spend, in resource units (rlimit), over the whole proof suite of the catalog.

    .venv/bin/python bench/z3_rlimits.py [--workers N] [--times K] [--cross-check] [--json FILE] [--log FILE]

Runs what `opcert prove --all --no-enumerate` runs (every operator: the specification, and opcert's
implementation in every float format; the tensor operators over the reals), recording each z3 query's
family (opcert.verify.proofs.common.BUDGETS), result and the units it spent, and the pieces of each
interval proof. Prints, per family: the queries, the largest spend of a decided query and where, the
undecided ones, and the budget as a multiple of that largest spend. --times K multiplies the budgets of
every family but the short first tries (common.QUICK) by K, to see whether a larger budget would decide
more. The units are z3's own count: the same whatever the host's load (they can vary a little with the
order of the queries in a process).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))


class _Log(list):
    """The records, also appended to a file as they come (--log: to watch a long run)."""

    def __init__(self, path, label):
        super().__init__()
        self.path, self.label = path, label

    def append(self, item):
        super().append(item)
        if self.path:
            with open(self.path, "a") as fh:
                fh.write(json.dumps(list(self.label) + list(item)) + "\n")


def _task(args):
    op, dtype, times, log, cross_check = args
    from opcert.verify.proofs import common, prove

    if times != 1:
        for k in common.BUDGETS:
            if k not in common.QUICK:
                common.BUDGETS[k] = min(int(common.BUDGETS[k] * times), 2**32 - 1)
    common.RECORD = _Log(log, (op, dtype))
    t0 = time.perf_counter()
    r = prove(op, dtype, cross_check=cross_check)
    dt = time.perf_counter() - t0
    rows = [(op, dtype) + tuple(e) for e in common.RECORD]
    unknown = [(op, dtype, p.name, p.note) for p in r.properties if p.status == "unknown"]
    return rows, unknown, dt, len(r.properties)


def _shard(tasks):
    return [_task(t) for t in tasks]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--times", type=float, default=1.0, help="budgets but the short first tries, times K")
    ap.add_argument("--json", help="write every query's record here")
    ap.add_argument("--log", help="append each query's record to this file as it comes")
    ap.add_argument(
        "--cross-check",
        action="store_true",
        help="only float16 and bfloat16, with the bit-precise "
        "model beside the enumeration (the `fp` family; not part of `prove --all`)",
    )
    a = ap.parse_args(argv)
    from opcert.spec import operators, tensor_operators
    from opcert.verify.proofs.common import BUDGETS, QUICK

    if a.cross_check:
        tasks = [(op.name, dt, a.times, a.log, True) for op in operators() for dt in ("float16", "bfloat16")]
    else:
        tasks = [(op.name, "real", a.times, a.log, False) for op in tensor_operators()]
        tasks += [
            (op.name, dt, a.times, a.log, False)
            for op in operators()
            for dt in ("real", "float16", "bfloat16", "float32", "float64")
        ]
    t0 = time.perf_counter()
    # each worker a fixed share of the pairs, in order, as prove_all (a query's units depend on what its
    # process asked z3 before)
    with ProcessPoolExecutor(a.workers) as pool:
        shards = list(pool.map(_shard, [tasks[k :: a.workers] for k in range(a.workers)]))
    results = [r for shard in shards for r in shard]
    wall = time.perf_counter() - t0
    rows = [r for res in results for r in res[0]]
    unknown = [u for res in results for u in res[1]]
    props = sum(res[3] for res in results)
    print(
        f"{len(tasks)} (operator, format) pairs, {props} verdicts, {wall:.1f} s wall on {a.workers} "
        f"worker(s) (sum of the pairs {sum(res[2] for res in results):.1f} s); unknown: {len(unknown)}"
    )
    for u in unknown:
        print(f"  unknown: {u[0]} {u[1]} {u[2]}: {(u[3] or '')[:160]}")
    print()
    print(
        f"{'family':<18} {'queries':>7} {'decided':>7} {'largest decided':>16} {'budget':>14} {'x':>7} "
        f"{'undecided':>9}  largest in"
    )
    fams = sorted({r[2] for r in rows})
    for f in fams:
        rs = [r for r in rows if r[2] == f]
        if f in ("intervals", "monotone"):  # pieces, not units
            done = [r for r in rs if r[3] == "proved"]
            top = max(done, key=lambda r: r[4]) if done else None
            budget = rs[0][5]
            print(
                f"{f:<18} {len(rs):>7} {len(done):>7} {top[4] if top else 0:>16,} {budget:>14,} "
                f"{budget / top[4] if top else 0:>7.1f} {len(rs) - len(done):>9}  "
                f"{top[0] + ' ' + top[1] if top else '-'}   (pieces)"
            )
            continue
        done = [r for r in rs if r[3] in ("sat", "unsat")]
        top = max(done, key=lambda r: r[4]) if done else None
        und = [r for r in rs if r[3] not in ("sat", "unsat")]
        budget = BUDGETS[f] if a.times == 1 or f in QUICK else min(int(BUDGETS[f] * a.times), 2**32 - 1)
        mark = " (short first try)" if f in QUICK else ""
        print(
            f"{f:<18} {len(rs):>7} {len(done):>7} {top[4] if top else 0:>16,} {budget:>14,} "
            f"{budget / top[4] if top and top[4] else 0:>7.1f} {len(und):>9}  "
            f"{top[0] + ' ' + top[1] if top else '-'}{mark}"
        )
    if a.json:
        with open(a.json, "w") as fh:
            json.dump({"wall_s": wall, "workers": a.workers, "times": a.times, "unknown": unknown, "queries": rows}, fh)
    return 0


if __name__ == "__main__":
    sys.exit(main())
