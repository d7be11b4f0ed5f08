"""Execute an operator's implementation expression on a tensor."""
from __future__ import annotations

import numpy as np

from ..errors import UsageError
from ..expr.numpy_eval import eval_numpy
from ..formats import IntFormat, format_of, to_format
from ..spec import get_operator, standard_named
from ..spec.attrs import resolve, standard_for
from ..spec.reference import check_dtype


def run(op, x, *, out: np.ndarray | None = None, standard: str | None = None, **attrs) -> np.ndarray:
    """opcert's implementation of `op` on tensor x (rank 0 to 8, empty allowed).

    `out` receives the result when given; it must have x's dtype and shape and
    may be x itself (in place). Raises UsageError on an unsupported dtype,
    unknown or out-of-domain attributes, or a mismatched `out`. A tensor operator (Softmax) takes
    axis= or axes= (opcert.impl.tensor_run)."""
    from ..spec import is_tensor_operator
    if is_tensor_operator(op):
        from .tensor_run import run as run_tensor
        return run_tensor(op, x, out=out, standard=standard, **attrs)
    standard = standard or standard_named(op)
    op = get_operator(op)
    return run_resolved(op, x, resolve(op, attrs, standard), out=out, standard=standard)


def run_resolved(op, x, attrs, out=None, standard: str | None = None) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    fmt = format_of(x)
    check_dtype(op, fmt)
    if out is not None:
        if not isinstance(out, np.ndarray) or out.dtype != x.dtype or out.shape != x.shape:
            got = (f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__)
            raise UsageError(f"out must have the input's dtype and shape ({x.dtype} {x.shape}); got {got}")
    std = standard_for(op, attrs, standard)
    if isinstance(fmt, IntFormat):
        # integers: the exact value, rounded half to even and saturated (the operator's integer semantics)
        from ..spec.reference import reference_detailed
        result = reference_detailed(op, x, attrs, std).rounded
    else:
        with np.errstate(invalid="ignore"):
            x64 = x.astype(np.float64)
        y = eval_numpy(op.implementation_for(std), x64, {k: float(v) for k, v in attrs.items()},
                       input_bits=fmt.p)
        result = to_format(np.broadcast_to(y, x.shape), fmt)
    if out is None:
        return result
    out[...] = result
    return out
