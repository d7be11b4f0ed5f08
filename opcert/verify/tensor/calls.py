"""Calling a tensor operator's target, and showing its rows: what the tensor checks share."""

from __future__ import annotations

import numpy as np

from opcert.errors import TargetFailure
from opcert.expr import PRIMITIVES
from opcert.expr.ball_ops import over_arrays
from opcert.targets.isolation import child_ends
from opcert.workers import activity

EXP = PRIMITIVES["exp"]  # the row sums of exponentials: the primitive table's exp, and how far it moves
EXP_MOVED = over_arrays(EXP.moved)  # |e^y - e^t| for |y - t| <= w, over arrays


def call_target(tgt, op, std, x, reduced, copy: bool = True) -> np.ndarray:
    """The target's output, checked: an array of x's dtype and shape, a reduction's with each reduced axis of
    size 1 (keepdims; one without the reduced axes, keepdims = 0, is taken in that shape), anything else, or an
    exception, is a TargetFailure naming the input's shape. The target gets a copy of x (it may write over its
    input), unless copy=False: x is the caller's own scratch tensor."""
    try:
        with (
            activity(f"running on a {x.dtype.name} tensor of shape {x.shape}, rows over axes {list(reduced)}"),
            np.errstate(all="ignore"),
            child_ends(tgt.name),
        ):
            y = tgt.call(op, std, x.copy() if copy else x, reduced)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # noqa: BLE001 - whatever the target raises (SystemExit too) is its failure
        raise TargetFailure(
            f"{type(exc).__name__}: {str(exc)[:300]} (input {x.dtype.name} {x.shape}, axes {list(reduced)})"
        ) from None
    if not isinstance(y, np.ndarray):
        try:
            y = np.asarray(y)
        except Exception:  # noqa: BLE001
            raise TargetFailure(f"returned {type(y).__name__}, not an array") from None
    want = op.output_shape(x.shape, reduced)
    if op.reduces and y.dtype == x.dtype and y.shape != want:
        dropped = tuple(d for a, d in enumerate(x.shape) if a not in set(reduced))
        if y.shape == dropped:  # keepdims = 0
            y = y.reshape(want)
    if y.shape != want or y.dtype != x.dtype:
        shape = f"{x.dtype} {want}" + (" (the reduced axes kept with size 1) or without them" if op.reduces else "")
        raise TargetFailure(f"returned {y.dtype} {y.shape} for an input of {x.dtype} {x.shape}: wanted {shape}")
    return y


def row_list(x) -> list:
    """A row as a JSON list: its first 16 values, then "..." where it is longer."""
    x = np.asarray(x, dtype=np.float64)
    return [float(v) for v in x] if x.size <= 16 else [float(v) for v in x[:16]] + ["..."]


def row_excerpt(row: np.ndarray, j: int, fmt) -> dict:
    """A row as people can find it again: its length, the element, its neighbours, its maximum (and the row
    itself where it is 16 elements or fewer)."""
    row64 = row.astype(np.float64)
    lo, hi = max(0, j - 3), min(row.size, j + 4)
    return {
        "length": int(row.size),
        "position": int(j),
        "x": float(row64[j]) if j < row.size else None,  # (a reduction's empty row has no element)
        "neighbours": {int(k): float(row64[k]) for k in range(lo, hi)},
        "row_max": float(np.max(row64)) if row.size else None,
        "row": [float(v) for v in row64] if row.size <= 16 else None,
    }
