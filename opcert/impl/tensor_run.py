"""opcert's implementation of a tensor operator: its expression over each row in binary64 (the row maximum
subtracted, the row sum by halves: expr.numpy_eval), rounded once into the tensor's format."""
from __future__ import annotations

import numpy as np

from ..errors import UsageError
from ..expr.numpy_eval import eval_numpy
from ..formats import to_format
from ..spec import get_tensor_operator
from ..spec.row_reference import check_float
from ..spec.tensor import over_rows, tensor_rows


def run(op, x, *, out: np.ndarray | None = None, standard: str | None = None, axis=None, axes=None) -> np.ndarray:
    """opcert's implementation of the tensor operator `op` on x (rank 1 to 8, empty allowed), over the rows
    that `standard`'s axis rule makes with `axis` (ONNX) or `axes` (DirectML's `1` forms). `out`: as for
    the element-wise operators (x's dtype and shape; x itself runs in place)."""
    op, named = get_tensor_operator(op)
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    fmt = check_float(op, x)
    if out is not None and (not isinstance(out, np.ndarray) or out.dtype != x.dtype or out.shape != x.shape):
        got = f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
        raise UsageError(f"out must have the input's dtype and shape ({x.dtype} {x.shape}); got {got}")
    rows, back, std = tensor_rows(op, x, standard or named, axis, axes)
    with np.errstate(invalid="ignore"):
        rows64 = rows.astype(np.float64)
    values = over_rows(op, rows64, lambda b: eval_numpy(op.implementation, b, {}, input_bits=fmt.p))
    result = back(to_format(values, fmt))
    if out is None:
        return result
    out[...] = result
    return out
