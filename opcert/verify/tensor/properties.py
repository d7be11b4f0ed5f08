"""The declared row properties of a tensor operator, decided on a target's outputs (verify.tensor.measure).

Each is decided on the rows the measurement ran and on the target run again where the property relates
two calls (a shifted row, a permuted row, a nudged element). A target is held to the property within
what its per-output accuracy allows: `max_ulp` (0.5: correctly rounded) per output, so a shifted or
permuted row may move an output by 2 max_ulp ULPs and a row sum by max_ulp 2^(1-p) (module rows).
Bit-for-bit claims (the rule for NaN and infinite entries, Hardmax's one-hot row, monotonicity in one
element) allow nothing. A sample is never a proof: a property that held is `checked`; one that failed is
`refuted`, with the row, after the target gave the same output again (replayed).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from opcert.spec.tensor import DEFAULT_INF_RULE, INF_RULES, block_call, to_rows
from opcert.verify.result import PropertyResult
from opcert.verify.tensor import layouts as row_layouts
from opcert.verify.tensor.calls import EXP, EXP_MOVED, call_target, row_list
from opcert.verify.ulp import ordinal_distance, ordinals, same_bits


def _rows_of(stats):
    """(case, reduced, x rows, y rows, reference) of every case that ran: the case's own rows (Case.own_rows)."""
    for case, reduced, y, ref in stats.outputs:
        yield case, reduced, case.rows_of(case.x, reduced), case.rows_of(y, reduced), ref


def _result(p, status, checked, bad, example=None, note=None):
    method = "every output of the measured rows and the target run again on related rows (a sample)"
    return PropertyResult(
        p.name,
        p.kind,
        p.statement,
        status,
        method,
        inputs_checked=int(checked),
        violations=int(bad),
        counterexample=example,
        note=note,
    )


def check(op, std, fmt, tgt, stats, max_ulp: float) -> list[PropertyResult]:
    out = []

    def rerun(x, reduced):
        return call_target(tgt, op, std, x, reduced)

    for p in op.properties:
        kind = p.kind
        if kind == "infinite_entries" and std.inf_rule != DEFAULT_INF_RULE:  # the rule the standard's key names
            p = dataclasses.replace(p, statement=f"the {std.inf_rule} rule ({std.name}): {INF_RULES[std.inf_rule]}")
        checked = bad = 0
        example = None
        note = None
        why = p.not_claimed(std)
        if why is not None:  # the property does not hold at these attributes: nothing to establish or enforce
            r = _result(p, "skipped", 0, 0, note=why)
            r.expected = "not claimed"
            out.append(r)
            continue
        if kind in ("range", "nan_row", "infinite_entries", "one_hot_first", "row_sum", "max_log_bounds", *ROW_MOMENTS):
            for case, reduced, xr, yr, ref in _rows_of(stats):
                rr = case.rows_of(ref.rounded, reduced)
                y64, x64 = yr.astype(np.float64), xr.astype(np.float64)
                nan_row = np.isnan(x64).any(axis=1)
                inf_row = np.isinf(x64).any(axis=1) & ~nan_row
                if kind == "range":
                    sel = ~(nan_row | inf_row)[:, None] & np.ones(yr.shape, bool)  # rows with +-inf: "infinite"
                    viol = sel & (
                        np.isnan(y64)
                        | ((y64 < p.lower) if p.lower is not None else False)
                        | ((y64 > p.upper) if p.upper is not None else False)
                    )
                    checked += int(sel.sum())
                elif kind == "nan_row":
                    viol = nan_row[:, None] & ~np.isnan(y64)
                    checked += int(nan_row.sum())
                elif kind == "infinite_entries":
                    # NaN, infinities and zeros where the rule puts them; other values within max_ulp
                    tol = max(0, math.ceil(max_ulp - 0.5))
                    viol = inf_row[:, None] & (ordinal_distance(yr, rr, fmt) > tol)
                    checked += int(inf_row.sum())
                elif kind in ROW_MOMENTS:
                    viol, n_rows = _moments(p, fmt, x64, y64, rr, max_ulp, std.values())
                    checked += n_rows
                elif kind == "max_log_bounds":
                    viol, n_rows = _max_log_bounds(fmt, xr, yr, max_ulp)
                    checked += n_rows
                elif kind == "one_hot_first":
                    viol = ~nan_row[:, None] & ~same_bits(yr, rr, fmt)
                    checked += int((~nan_row).sum())
                else:
                    viol, n_rows = _row_sums(p, fmt, x64, y64, ref, reduced, max_ulp)
                    checked += n_rows
                bad_rows = np.nonzero(np.asarray(viol).reshape(yr.shape[0], -1).any(axis=1))[0]
                bad += len(bad_rows)
                if len(bad_rows) and example is None:
                    i = int(bad_rows[0])
                    again = to_rows(rerun(case.x, reduced), reduced)[0]
                    example = {
                        "case": case.label,
                        "row": row_list(xr[i]),
                        "got": row_list(yr[i]),
                        "want": row_list(rr[i]),
                        "replayed": bool(np.all(ordinal_distance(again[i], yr[i], fmt) == 0)),
                    }
        elif kind in ("shift_invariance", "scale_invariance", "permutation", "row_monotonic"):
            checked, bad, example, note = _related(op, std, kind, p, fmt, stats, rerun, max_ulp)
        elif kind == "row_layout":
            out.append(row_layouts.check(op, std, fmt, tgt, stats, p))
            continue
        else:
            out.append(_result(p, "skipped", 0, 0, note=f"no black-box check of kind {kind}"))
            continue
        if checked == 0:
            out.append(
                _result(p, "skipped", 0, 0, note="no measured row applies (a case the target could not be given?)")
            )
            continue
        status = "refuted" if bad else "checked"
        out.append(_result(p, status, checked, bad, example, note))
    return out


ROW_MOMENTS = ("nonfinite_row", "row_bound", "moments")


def _moments(p, fmt, x64, y64, rr, max_ulp, attrs=None):
    """(violations per row, rows checked) of the normalizations' row claims. nonfinite_row: a row holding NaN or
    +-inf gives the standard's formula's IEEE values bit for bit (any NaN for a NaN). row_bound and moments, on
    the rows whose reference is a number, with the standard's scale s and B (1 and 0 where it has none: attrs):
    an output within e = max(max_ulp, 1/2) ULPs of its exact value t_i is within r |t_i| + a of it (r = e 2^(1-p),
    a = e times the smallest subnormal: an ULP there), so |y_i - B| <= |s| sqrt(n - k) + r |t_i| + a, the root mean
    square of y - B is at most |s| + r rms(t) + a (Minkowski), and |sum (y_i - B)| <= r sum |t_i| + n a where the
    exact mean is B. |t_i| is bounded by the reference's correctly rounded value rr_i: |t_i| <= |rr_i| (1 + 2^-p)
    plus half that subnormal (never by the output measured, which may be anything)."""
    nonfinite = ~np.isfinite(x64).all(axis=1)
    if p.kind == "nonfinite_row":  # bit for bit (any NaN for a NaN): the formula's NaN, +-0 and +-inf
        r64 = np.asarray(rr, dtype=np.float64)
        exact = ~np.isfinite(r64) | (r64 == 0)
        # a finite value (LogSumExp's row with -inf entries dropped) is held to max_ulp like any other output
        allowed = np.where(exact, 0, max(0, math.ceil(max_ulp - 0.5)))
        return nonfinite[:, None] & (ordinal_distance(y64.astype(fmt.dtype), rr, fmt) > allowed), int(nonfinite.sum())
    n = x64.shape[1]
    if n == 0:  # an empty row has no outputs to hold to anything
        return np.zeros((x64.shape[0], 1), dtype=bool), 0
    attrs = attrs or {}
    scale, bias = abs(float(attrs.get("scale", 1.0))), float(attrs.get("B", 0.0))
    r64 = np.asarray(rr, dtype=np.float64)
    keep = ~nonfinite & ~np.isnan(r64).any(axis=1) & (n > 0)
    e = max(max_ulp, 0.5)
    rel = e * 2.0 ** (1 - fmt.p)
    tiny = 2.0 ** (fmt.emin - fmt.p + 1)
    a = e * tiny
    viol = np.zeros(x64.shape[0], dtype=bool)
    with np.errstate(all="ignore"):
        t_mag = np.abs(r64) * (1 + 2.0**-fmt.p) + tiny / 2  # |t_i|, from the reference
        if p.kind == "row_bound":
            bound = scale * math.sqrt(max(n - p.bound_less, 0)) + rel * t_mag + a
            viol = ~(np.abs(y64 - bias) <= bound * (1 + 2.0**-40)).all(axis=1)
        else:
            y = y64.astype(np.longdouble) - np.longdouble(bias)
            ms = np.mean(y * y, axis=1)
            rms_t = np.sqrt(np.mean(t_mag.astype(np.longdouble) ** 2, axis=1))
            viol = ~(ms <= (scale + rel * rms_t + a) ** 2 * (1 + 2.0**-40))
            if p.mean_zero:
                # sum (y_i - B), exactly: the outputs and n copies of -B, as math.fsum adds them
                sums = np.array(
                    [
                        abs(math.fsum([*r, *([-bias] * n)] if bias else r)) if np.isfinite(r).all() else math.inf
                        for r in y64
                    ]
                )
                viol |= ~(sums <= (rel * t_mag.sum(axis=1) + n * a) * (1 + 2.0**-40))
    return (viol & keep)[:, None], int(keep.sum())


def _max_log_bounds(fmt, xr, yr, max_ulp):
    """(violations per row, rows checked): max(x) <= y <= max(x) + log(n) on the rows of finite entries, of
    length 1 or more; y may be ceil(max_ulp - 1/2) values of the format beyond either bound (0: correctly rounded,
    whose rounding cannot cross a bound that is a value of the format, or the upper bound rounded up)."""
    x64 = xr.astype(np.float64)
    n = x64.shape[1]
    keep = np.isfinite(x64).all(axis=1) & (n > 0)
    if not keep.any():
        return np.zeros((x64.shape[0], 1), dtype=bool), 0
    tol = max(0, math.ceil(max_ulp - 0.5))
    top = np.where(keep, np.max(x64, axis=1, initial=-np.inf), 0.0)
    lower = top.astype(fmt.dtype)  # a value of the format: exact
    with np.errstate(all="ignore"):
        up64 = top + math.log(n) * (1 + 2.0**-50) + 2.0**-1074
        upper = up64.astype(fmt.dtype)
        short = upper.astype(np.float64) < up64
        upper = np.where(short, _next_up(upper, fmt) if fmt.p < 53 else np.nextafter(upper, np.inf), upper)
    y = yr[:, 0]
    y64 = y.astype(np.float64)
    below = ~(y64 >= lower.astype(np.float64)) & (ordinal_distance(y, lower, fmt) > tol)
    above = ~(y64 <= upper.astype(np.float64)) & (ordinal_distance(y, upper, fmt) > tol)
    return (keep & (below | above))[:, None], int(keep.sum())


def _row_sums(p, fmt, x64, y64, ref, reduced, max_ulp):
    """(violations per row, rows checked): rows without NaN or infinite entries, of length 1 or more."""
    keep = np.isfinite(x64).all(axis=1) & (x64.shape[1] > 0)
    viol = np.zeros(x64.shape[0], dtype=bool)
    u = 2.0 ** (1 - fmt.p)
    tiny = 2.0 ** (fmt.emin - fmt.p + 1)
    hr = to_rows(ref.exact_hi, reduced)[0][: x64.shape[0]]
    for i in np.nonzero(keep)[0]:
        y = y64[i]
        n = y.size
        bound = 0.0
        if not np.all(np.isfinite(y)):
            gap = math.inf  # a NaN or infinite output in a row of finite entries: no sum of 1
        elif p.sum_of == "y":
            gap = abs(math.fsum(list(y) + [-1.0]))  # sum - 1, rounded once
            bound = max_ulp * u + n * max_ulp * tiny
        else:
            gap = abs(float(np.sum(EXP.numpy(y.astype(np.longdouble))) - 1))  # in long double: near 1 it cancels
            t = hr[i]
            # y_i within max_ulp ULPs of t_i moves exp(t_i) by at most exp(t_i) expm1(max_ulp ulp(t_i))
            ulp_t = np.ldexp(1.0, np.maximum(np.frexp(np.abs(t))[1] - 1, fmt.emin) - fmt.p + 1)
            with np.errstate(all="ignore"):
                bound = float(np.sum(EXP_MOVED(EXP.numpy(t), t, max_ulp * ulp_t))) * 1.001 + n * 2.0**-62
        viol[i] = not (gap <= bound)
    return viol[:, None], int(keep.sum())


def _related(op, std, kind, p, fmt, stats, rerun, max_ulp):
    """Shift, scaling, permutation and monotonicity: the target run again on related rows of the random cases."""
    checked = bad = 0
    example = None
    tol = 0 if op.name == "Hardmax" else math.ceil(2 * max_ulp)
    rng = np.random.default_rng(1)
    # scaling also on the rows of small spread: a kernel's own epsilon, hidden beside a random row's variance of 1 in
    # a 16-bit format, is of the order of theirs
    labels = ("random rows", "ties", *(("spread",) if kind == "scale_invariance" else ()))
    for case, _reduced, xr, _yr, _ref in _rows_of(stats):
        if not case.label.startswith(labels) or xr.shape[1] < 2 or xr.shape[0] > 4096:
            continue
        x64 = xr.astype(np.float64)
        if kind == "shift_invariance":
            # whole numbers shift exactly: the rows rounded to integers (exact in every format up to 2^8)
            base = np.clip(np.round(x64), -60, 60)
            c = 8.0
            xa = base.astype(fmt.dtype)
            xb = (base + c).astype(fmt.dtype)
            ya, yb = _call_rows(rerun, std, xa), _call_rows(rerun, std, xb)
            dist = ordinal_distance(ya, yb, fmt)
            related = (xa, xb, ya, yb)
            words = f"the row plus {c:g}"
        elif kind == "scale_invariance":
            # a power of two scales every value of the format exactly (the random rows stay far from overflow)
            c = 4.0
            xa = xr
            xb = (x64 * c).astype(fmt.dtype)
            ya, yb = _call_rows(rerun, std, xa), _call_rows(rerun, std, xb)
            dist = ordinal_distance(ya, yb, fmt)
            related = (xa, xb, ya, yb)
            words = f"the row times {c:g}"
        elif kind == "permutation":
            xa = xr
            if op.name == "Hardmax":  # on rows without ties only
                srt = np.sort(x64, axis=1)
                no_ties = ~np.any(srt[:, 1:] == srt[:, :-1], axis=1)
                xa = xr[no_ties]
                if not xa.shape[0]:
                    continue
            perm = rng.permutation(xa.shape[1])
            ya = _call_rows(rerun, std, xa)
            yb = _call_rows(rerun, std, np.ascontiguousarray(xa[:, perm]))
            if op.reduces:  # one output per row: the same for the permuted row
                dist = ordinal_distance(ya, yb, fmt)
                related = (xa, xa[:, perm], ya, yb)
                words = "the row permuted (its one output compared)"
            else:
                dist = ordinal_distance(ya[:, perm], yb, fmt)
                related = (xa, xa[:, perm], ya[:, perm], yb)
                words = "the row permuted (outputs compared in the permuted order)"
        else:
            # nudge element 0 of each row up by one value of the format: y_0 must not fall, the others not rise
            xa = xr
            xb = xr.copy()
            xb[:, 0] = (
                np.nextafter(xr[:, 0].astype(np.float64), np.inf).astype(fmt.dtype)
                if fmt.p == 53
                else _next_up(xr[:, 0], fmt)
            )
            ya, yb = _call_rows(rerun, std, xa), _call_rows(rerun, std, xb)
            oa, ob = ordinals(ya, fmt), ordinals(yb, fmt)
            oa, ob = oa.astype(np.float64), ob.astype(np.float64)
            fall = np.zeros(oa.shape)
            fall[:, 0] = np.maximum(oa[:, 0] - ob[:, 0], 0)
            fall[:, 1:] = np.maximum(ob[:, 1:] - oa[:, 1:], 0)
            dist = fall
            related = (xa, xb, ya, yb)
            words = "element 0 nudged up by one value of the format"
        allowed = 0 if kind == "row_monotonic" else tol
        rows_bad = np.nonzero((dist > allowed).any(axis=1))[0]
        checked += xa.shape[0]
        bad += len(rows_bad)
        if len(rows_bad) and example is None:
            i = int(rows_bad[0])
            xa_, xb_, ya_, yb_ = related
            again = _call_rows(rerun, std, xb_)
            example = {
                "case": case.label,
                "row": row_list(xa_[i]),
                "related_row": row_list(xb_[i]),
                "how": words,
                "got": row_list(ya_[i]),
                "got_related": row_list(yb_[i]),
                "distance_ulps": float(np.max(dist[i])),
                "allowed_ulps": allowed,
                "replayed": bool(np.all(ordinal_distance(again[i], yb[i], fmt) == 0)),
            }
    note = None
    if kind in ("shift_invariance", "scale_invariance", "permutation") and tol:
        note = f"outputs may move by {tol} ULP(s): twice the {max_ulp:g} ULP each output may be off"
    return checked, bad, example, note


def _call_rows(rerun, std, rows2d) -> np.ndarray:
    """The target on these rows as a 2-D tensor, its last axis reduced (every standard's rule can say so; the
    spatial rule's as (m, 1, n): spec.tensor.block_call), its outputs as rows."""
    x, reduced, back = block_call(std, np.ascontiguousarray(rows2d))
    return back(rerun(x, reduced))


def _next_up(v, fmt):
    bits = np.ascontiguousarray(v).view(fmt.uint).astype(np.int64)
    sign = 1 << (fmt.bits - 1)
    neg = (bits & sign) != 0
    zero = (bits & (sign - 1)) == 0
    up = np.where(neg & ~zero, bits - 1, np.where(neg & zero, 1, bits + 1))
    return up.astype(fmt.uint).view(fmt.dtype)
