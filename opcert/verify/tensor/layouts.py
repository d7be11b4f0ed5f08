"""Row layout invariance: the `layout` property every tensor operator declares.

A row's outputs are a function of that row alone, so a kernel must give the same bits for a row whatever
the tensor around it: how many rows the call holds and where the row sits among them (a kernel splits rows
between threads and vector lanes, and treats a short batch or the last rows apart), the reduction axis's
place in the shape (a kernel over a non-last axis runs a strided loop, or vectorises across rows), and the
thread count. The measurement (verify.tensor.measure) runs each case once; this check runs its random rows again in
other layouts and compares every output bit for bit (any NaN equals any NaN) with the measured one:

- alone: rows of every length the cases hold, each as a call of one row;
- other position: the whole block in reverse order (each row at another place in a call of the same
  shape: a runtime that compiles per shape compiles nothing new);
- other axis: the block transposed, its rows along axis 0 (ONNX opset 13, DirectML's `1` forms), or for
  ONNX opsets 1 and 11 the row split over two trailing axes (the coerced 2-D view makes the same rows);
  DirectML's plain form reduces the last axis only: nothing else to give;
- threads: 1 and every core, where the target has a switch (ONNX Runtime's intra-op threads, torch's
  threads, OpenVINO's inference threads); the others say why not.

A sample is not a proof: `checked`, or `refuted` with the row, both layouts and both outputs, after the
differing layout ran again and gave the same bits (replayed). An output that differs is measured against
the reference too: the check's worst error is the worst over every layout run. Rows of two 16-bit
values are decided over every pair in two layouts by the exhaustive pass (verify.tensor.pairs).
"""

from __future__ import annotations

import time

import numpy as np

from opcert.errors import TargetFailure
from opcert.spec.tensor import Grouped, block_call, groups_of_standard, to_rows
from opcert.targets.layouts import cores as host_cores
from opcert.verify.result import PropertyResult
from opcert.verify.tensor.calls import call_target, row_excerpt, row_list
from opcert.verify.ulp import same_bits, ulp_error

ALONE_PER_CASE = 3  # rows of each random case called alone
METHOD = "the measured random rows run again in other layouts, every output compared bit for bit (a sample)"


def other_axis(std, X: np.ndarray):
    """(x, reduced, back) giving the rows of the 2-D block X (last axis reduced) in another arrangement of
    axes the standard can express, back(y) -> the outputs as rows of X; or (None, why, None)."""
    m, n = X.shape
    kind = std.axes.kind
    if kind in ("single", "list"):
        return np.ascontiguousarray(X.T), (0,), lambda y: np.asarray(y).T
    a = _factor(n)
    if kind == "coerce-2d":
        return X.reshape(m, a, n // a), (1, 2), lambda y: np.asarray(y).reshape(m, n)
    if kind == "spatial":  # the same rows over two spatial axes: (m, 1, a, n / a)
        return X.reshape(m, 1, a, n // a), (2, 3), lambda y: np.asarray(y).reshape(m, -1)
    if kind == "groups":  # the same rows over two spatial axes: block_call's (k, G c, s) as (k, G c, b, s / b)
        x, grouped, back = block_call(std, X)
        s = x.shape[2]
        b = _factor(s)
        return x.reshape(x.shape[:2] + (b, s // b)), Grouped((1, 2, 3), grouped.groups), back
    return (
        None,
        (
            f"{std.op_name} reduces the last axis of a tensor of effective rank 2 at most: no other "
            "arrangement of the axes makes the same rows"
        ),
        None,
    )


def _factor(n: int) -> int:
    """n's smallest factor above 1 (n itself where it is prime, 1 or 0): n as a * (n / a), a row over two axes."""
    return next((k for k in range(2, int(n**0.5) + 1) if n % k == 0), n)


def layouts(X: np.ndarray, std, tgt, op, fmt):
    """The layouts of one block of rows: [(family, words, x, reduced, rows, back)] (back(y) -> the outputs
    of X's rows `rows`, in that order), and {family: why} for those that cannot be given."""
    m, n = X.shape
    out, cannot = [], {}
    for i in sorted({0, m // 2, m - 1})[:ALONE_PER_CASE]:
        out.append(
            (
                "alone",
                f"row {i} alone: a call of one row of {n}"
                + (" (one sample, every group a copy of it)" if std.axes.kind == "groups" else ""),
                X[i : i + 1].copy(),
                (1,),
                [i],
                lambda y: np.asarray(y),
            )
        )
    out.append(
        (
            "other position",
            f"the {m} rows in reverse order: row i at position {m - 1} - i",
            X[::-1].copy(),
            (1,),
            list(range(m)),
            lambda y: np.asarray(y)[::-1],
        )
    )
    x2, how, back = other_axis(std, X)
    why = how if x2 is None else tgt.unsupported(op, std, fmt.name, how, x2.ndim)
    if why:
        cannot["other axis"] = why
    else:
        out.append(
            ("other axis", f"shape {list(x2.shape)}, reduced over axes {list(how)}", x2, how, list(range(m)), back)
        )
    return out, cannot


def check(op, std, fmt, tgt, stats, p) -> PropertyResult:
    """The layout property on a target, from the measured random rows (stats: verify.tensor.measure._Stats)."""
    t0 = time.perf_counter()
    checked = bad = 0
    example = None
    ran: dict[str, list] = {}  # family -> [rows compared, rows that differ]
    cannot: dict[str, str] = {}
    switch = getattr(tgt, "threads", lambda n: None)
    n_cores = host_cores()
    if switch(1) is None:
        cannot["threads"] = getattr(tgt, "no_threads", "no thread switch")
    elif n_cores < 2:
        cannot["threads"] = "this host runs the process on one core"
    for measured in stats.outputs:
        case, reduced, Y, ref = measured
        if not case.label.startswith(("random rows", "ties")) or not _a_block(std, case.x, reduced):
            continue
        # the block's own rows: (m, 1, n) of the spatial rule, (k, G, n) of the groups rule as its first m of k * G
        X, Y = case.rows_of(case.x, reduced), case.rows_of(Y, reduced)
        fams, why = layouts(X, std, tgt, op, fmt)
        cannot.update(why)
        runs = [(fam, words, x2, red2, rows, back, None) for fam, words, x2, red2, rows, back in fams]
        if "threads" not in cannot:
            runs += [
                ("threads", f"the same call on {k} thread(s)", X.copy(), (1,), list(range(X.shape[0])), np.asarray, k)
                for k in sorted({1, n_cores})
            ]
        for fam, words, x2, red2, rows, back, k in runs:
            if x2.ndim == 2 and tuple(red2) == (1,):  # a 2-D block: as the standard's rule takes one
                x2, red2, given = block_call(std, x2)
                back = (lambda b, g: lambda y: b(g(y)))(back, given)

            def run(x2=x2, red2=red2, back=back, k=k):
                if k is None:
                    return back(call_target(tgt, op, std, x2, red2))
                with switch(k):
                    return back(call_target(tgt, op, std, x2, red2))

            try:
                y2 = run()
            except TargetFailure as exc:
                cannot.setdefault(fam, f"the target failed on it: {exc}")
                continue
            differ = ~same_bits(Y[rows], y2, fmt)
            checked += len(rows)
            bad_rows = np.nonzero(differ.any(axis=1))[0]
            bad += len(bad_rows)
            tally = ran.setdefault(fam, [0, 0])
            tally[0] += len(rows)
            tally[1] += len(bad_rows)
            if not len(bad_rows):
                continue
            again = run()
            _measure(stats, measured, rows, y2, again, differ, f"{case.label}; {words}")
            if example is None:
                r = int(bad_rows[0])
                i = rows[r]
                example = {
                    "case": case.label,
                    "row": row_list(X[i]),
                    "measured_in": f"row {i} of the measured call (shape {list(case.x.shape)}, axes {list(reduced)})",
                    "layout": words,
                    "got": row_list(Y[i]),
                    "got_in_layout": row_list(y2[r]),
                    "positions_differing": [int(j) for j in np.nonzero(differ[r])[0][:16]],
                    "replayed": bool(np.all(same_bits(again[r], y2[r], fmt))),
                }
    return _verdict(p, (checked, bad, example), ran, cannot, time.perf_counter() - t0)


def _a_block(std, x, reduced) -> bool:
    """Whether the case is a 2-D block of rows as measure.cases makes them: (m, n) over axis 1, or the spatial
    rule's (m, 1, n) over axis 2."""
    if std.axes.kind == "spatial":
        return x.ndim == 3 and x.shape[1] == 1 and tuple(reduced) == (2,)
    if std.axes.kind == "groups":
        return x.ndim == 3 and x.shape[1] % groups_of_standard(std) == 0 and tuple(reduced) == (1, 2)
    return x.ndim == 2 and tuple(reduced) == (1,)


def _verdict(p, found, ran, cannot, elapsed) -> PropertyResult:
    """found: (rows compared, rows that differ, the first one's example); ran: family -> [rows compared, rows
    that differ]; cannot: family -> why it was not given."""
    checked, bad, example = found
    families = [{"family": f, "rows": r, "differ": d} for f, (r, d) in ran.items()] + [
        {"family": f, "not_given": w} for f, w in cannot.items() if f not in ran
    ]
    said = {"layouts": families, "elapsed_s": elapsed}
    if checked == 0:
        why = "no random rows were measured (a case the target could not be given?)"
        return PropertyResult(p.name, p.kind, p.statement, "skipped", METHOD, note=why, **said)
    missing = "; ".join(f"{f} ({w})" for f, w in cannot.items() if f not in ran)
    said.update(note=f"not given: {missing}" if missing else None, inputs_checked=checked, violations=bad)
    status = "refuted" if bad else "checked"
    return PropertyResult(p.name, p.kind, p.statement, status, METHOD, counterexample=example, **said)


def _measure(stats, measured, rows, y2, again, differ, label) -> None:
    """The finite outputs that differ, measured against the reference: the result's worst over every layout
    (an output the layout did not give again is not taken; a NaN or an infinity where a number is due
    refutes the property, as in the measured call it is a special value, not an ULP figure). measured: the
    case as stats holds it (case, reduced, outputs, reference); rows: those the layout gave (y2), again."""
    res, fmt = stats.res, stats.fmt
    case, reduced, _, ref = measured
    hr, lr, rr = (to_rows(a, reduced)[0][rows] for a in (ref.exact_hi, ref.exact_lo, ref.rounded))
    keep = differ & np.isfinite(rr.astype(np.float64)) & np.isfinite(y2.astype(np.float64)) & same_bits(again, y2, fmt)
    with np.errstate(all="ignore"):
        err = np.where(keep, ulp_error(y2, hr, lr, fmt), np.nan)
    if np.all(np.isnan(err)):
        return
    k = int(np.nanargmax(err))
    e = float(err.flat[k])
    if e > res.max_ulp:
        r, j = divmod(k, y2.shape[1])
        res.max_ulp = e
        res.worst = {
            "case": label,
            **row_excerpt(to_rows(case.x, reduced)[0][rows[r]], j, fmt),
            "got": float(np.float64(y2[r, j])),
            "want": float(np.float64(rr[r, j])),
            "ulp": e,
            "replayed": True,
        }
