"""Calling a tensor operator's target and comparing bits: what verify.rows and verify.row_properties share."""
from __future__ import annotations

import numpy as np

from ..errors import TargetFailure


def same_bits(a, b, fmt) -> np.ndarray:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return ((a == b) & (np.signbit(a) == np.signbit(b))) | (np.isnan(a) & np.isnan(b))


def call_target(tgt, op, std, x, reduced) -> np.ndarray:
    """The target's output, checked: an array of x's dtype and shape (anything else, or an exception, is a
    TargetFailure naming the input's shape)."""
    from ..workers import activity
    try:
        with activity(f"running on a {x.dtype.name} tensor of shape {x.shape}, rows over axes {list(reduced)}"), \
                np.errstate(all="ignore"):
            y = tgt.call(op, std, x.copy(), reduced)
    except Exception as exc:   # noqa: BLE001 - whatever the target raises is its failure
        raise TargetFailure(f"{type(exc).__name__}: {str(exc)[:300]} (input {x.dtype.name} {x.shape}, axes "
                            f"{list(reduced)})") from None
    if not isinstance(y, np.ndarray):
        try:
            y = np.asarray(y)
        except Exception:   # noqa: BLE001
            raise TargetFailure(f"returned {type(y).__name__}, not an array") from None
    if y.shape != x.shape or y.dtype != x.dtype:
        raise TargetFailure(f"returned {y.dtype} {y.shape} for an input of {x.dtype} {x.shape}")
    return y
