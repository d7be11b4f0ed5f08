"""Execute an operator's implementation expression on a tensor."""

from __future__ import annotations

import functools
import importlib

import numpy as np

from opcert.errors import UsageError
from opcert.expr.compiled_eval import evaluate
from opcert.expr.numpy_eval import eval_numpy
from opcert.formats import FloatFormat, IntFormat, format_of, to_format
from opcert.impl.rounding_test import decide, near_boundary, near_indices, to_float32, width_ulps
from opcert.impl.tensor_run import run as run_tensor
from opcert.spec import get_operator, is_tensor_operator, scale_bias, standard_named
from opcert.spec.attrs import resolve, standard_for
from opcert.spec.reference import check_dtype, reference_detailed

# Calls from this size run the compiled loops (expr.compiled_eval: numpy_eval's values). Below it the
# loops' start costs more than NumPy's passes save, and a process making only small calls does not
# import numba for them.
MIN_SIZE = 1 << 12


def run(op, x, *, out: np.ndarray | None = None, standard: str | None = None, **attrs) -> np.ndarray:
    """opcert's implementation of `op` on tensor x (rank 0 to 8, empty allowed).

    The values are numpy_eval's interpretation of the operator's implementation expression, rounded once
    into x's format; a call of MIN_SIZE elements or more computes them with expr.compiled_eval (the same
    bits, tests/test_compiled_eval.py). `out` receives the result when given; it must have x's dtype and
    shape and may be x itself (in place). Raises UsageError on an unsupported dtype, unknown or
    out-of-domain attributes, or a mismatched `out`. A tensor operator (Softmax) takes
    axis= or axes= besides its attributes (opcert.impl.tensor_run)."""
    if is_tensor_operator(op):
        axis, axes, given = attrs.pop("axis", None), attrs.pop("axes", None), attrs.pop("attrs", None)
        # the attributes as keywords, as for the element-wise operators (epsilon=1e-3 was a TypeError)
        return run_tensor(op, x, out=out, standard=standard, axis=axis, axes=axes, attrs={**(given or {}), **attrs})
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
            got = f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
            raise UsageError(f"out must have the input's dtype and shape ({x.dtype} {x.shape}); got {got}")
    std = standard_for(op, attrs, standard)
    if isinstance(fmt, FloatFormat) and op.standard(std).rounded_scale_bias:
        # the variant: f at x * scale + bias rounded in the tensor's type (spec.scale_bias)
        x, attrs, std = (
            scale_bias.rounded_argument(x, attrs, fmt),
            scale_bias.plain_attributes(attrs),
            op.standard(std).key,
        )
    if isinstance(fmt, IntFormat):
        # integers: the exact value, rounded half to even and saturated (the operator's integer semantics)
        result = reference_detailed(op, x, attrs, std).rounded
    else:
        with np.errstate(invalid="ignore"):
            x64 = x.astype(np.float64)
        impl = op.implementation_for(std)
        a64 = {k: float(v) for k, v in attrs.items()}
        # the same values as eval_numpy's, in a few compiled loops (expr.compiled_eval), from MIN_SIZE elements
        y64 = evaluate(impl, x64, a64, fmt.p) if x64.size >= MIN_SIZE else None
        if fmt.name == "float64":
            result = y64 if y64 is not None else to_format(eval_numpy(impl, x64, a64, input_bits=fmt.p), fmt)
            result = np.broadcast_to(result, x.shape).copy() if result.shape != x.shape else result
            named = op.standard(std).float64_rounded
            if named is not None:
                rounded64 = _named_function(named)
                # the standard's correctly rounded binary64 evaluation, and the exact value where it cannot decide
                flat = x64.reshape(-1)
                fin = np.flatnonzero(np.isfinite(flat))
                if fin.size:
                    values, undecided = rounded64(flat[fin], a64)
                    result = _put(result, fin, values)
                    off = fin[undecided]
                    if off.size:
                        result = _put(result, off, reference_detailed(op, x.reshape(-1)[off], attrs, std).rounded)
            elif scale_bias.has_scale_bias(op.standard(std)) and not scale_bias.is_plain(a64):
                # a float64 tensor's x * scale is not exact in binary64: f of the rounded sum is off by f's
                # condition number (Exp at scale 3: 192 ULPs; Sin past 2^53: any value), and the forms over the
                # sum's exact parts assume an exact product (spec.elementwise). Every finite input takes the
                # reference's value: only there, and the C library's values beside correctly rounded ones would
                # break the order monotonicity claims (Acos: a rising pair, 1 ULP)
                off = np.flatnonzero(np.isfinite(x64.reshape(-1)))
                if off.size:
                    result = _put(result, off, reference_detailed(op, x.reshape(-1)[off], attrs, std).rounded)
        else:
            if y64 is None:
                y64 = np.broadcast_to(eval_numpy(impl, x64, a64, input_bits=fmt.p), x.shape)
            result = _rounded(op, x, y64, attrs, std, fmt)
            absolute_error, slope = op.standard(std).absolute_error, op.standard(std).slope
            if slope is not None and not scale_bias.is_plain(a64):
                # f's condition unbounded at the rounded sum s (acos at 1): where its error from the sum's rounding,
                # |lo| slope(s), reaches a rounding boundary, the standard's form over the sum's exact parts
                flat_y = np.asarray(y64, dtype=np.float64).reshape(-1)
                with np.errstate(divide="ignore", invalid="ignore"):
                    ulps = 16 + _sum_rounding_error(x64, a64, slope) / np.abs(np.spacing(flat_y))
                off = np.flatnonzero(near_boundary(flat_y, fmt, ulps=ulps))
                if off.size:
                    xs = x.reshape(-1)[off]
                    steep = eval_numpy(op.standard(std).steep_form, x64.reshape(-1)[off], a64, input_bits=fmt.p)
                    result = _put(result, off, _rounded(op, xs, np.broadcast_to(steep, xs.shape), attrs, std, fmt))
            if absolute_error is not None:
                # an error absolute, not relative to the value (a sum whose terms cancel): where it reaches a
                # rounding boundary, the exact value's rounding, whichever it is
                flat_y = np.asarray(y64, dtype=np.float64).reshape(-1)
                ulps = absolute_error(flat_y, a64)
                # within the rounding test's own width, _rounded has decided already (BatchNormalization: every
                # |y| >= |B| / 3); near_boundary's dozen passes only where the bound is wider
                wide = np.flatnonzero(ulps > width_ulps(fmt))
                off = wide[near_boundary(flat_y[wide], fmt, ulps=ulps[wide])] if wide.size else wide
                if off.size:
                    result = _put(result, off, _exact_rounded(op, x.reshape(-1)[off], attrs, std, fmt))
    if out is None:
        return result
    out[...] = result
    return out


def _rounded(op, x: np.ndarray, y64: np.ndarray, attrs: dict, std, fmt) -> np.ndarray:
    """y64 (binary64 values of the operator at x, x's shape) rounded into the narrow format fmt: where a value is
    too near a midpoint, the exact value decides between its two neighbours (impl.rounding_test)."""
    if fmt.name == "float32":
        result, near = to_float32(y64)
    else:
        result, near = to_format(y64, fmt), near_indices(y64, fmt.p, fmt.emin)
    if near.size:
        exact = _exact_rounded(op, x.reshape(-1)[near], attrs, std, fmt)
        result = _put(result, near, decide(np.asarray(y64).reshape(-1)[near], result.reshape(-1)[near], exact, fmt))
    return result


@functools.cache
def _named_function(path: str):
    """The function a declaration names as "module:function" (Standard.float64_rounded)."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)


def _put(result: np.ndarray, flat: np.ndarray, values) -> np.ndarray:
    """result with its elements at the flat indices replaced by values (in place where result is contiguous)."""
    out = result.reshape(-1)
    out[flat] = values
    return out.reshape(result.shape)


def _sum_rounding_error(x64: np.ndarray, attrs: dict, slope) -> np.ndarray:
    """For binary32 (or narrower) x: a bound on |f(s) - f(x * scale + bias)|, s the sum rounded once in binary64
    (x * scale is exact there: 48 bits), flat: |lo| slope(s) doubled (slope is f's at s, not its largest between s
    and the sum), lo the sum's two-sum error. 0 where the sum is exact and at +-inf and NaN (their values are the
    limits')."""
    s, lo = scale_bias.sum_parts(x64.reshape(-1), attrs["scale"], attrs["bias"])
    with np.errstate(invalid="ignore", over="ignore"):
        inexact = np.isfinite(lo) & (lo != 0)
        err = np.zeros(s.shape)
        err[inexact] = 2.0 * np.abs(lo[inexact]) * slope(s[inexact])
    return err


# The reference's rounding of the inputs whose binary64 values were near a midpoint, per operator, standard,
# attributes and format, by input bits: a check calls the kernel on the same inputs in many layouts (the mixed
# vectors repeat one input along a call, the lengths and positions call it again), and each exact value costs a
# rational evaluation. A call with more distinct such inputs than _CACHED_CALL (a sweep's block of Gelu's or
# Linear's subnormals, half of them on a midpoint) has none to reuse: it goes to the reference as it is, each input
# once. Bounded per key. The layout check calls the kernel from several threads at once: the dict is only read
# with get, and changed by single calls (clear, update).
_DECIDED: dict[tuple, tuple[object, dict[int, object]]] = {}
_DECIDED_MAX = 1 << 16
_CACHED_CALL = 1 << 10
_ABSENT = object()


def _exact_rounded(op, xs: np.ndarray, attrs: dict, std, fmt) -> np.ndarray:
    view = xs.view(np.dtype(f"u{xs.dtype.itemsize}"))
    if view.size > _CACHED_CALL and np.all(view[1:] > view[:-1]):  # a sweep's block: distinct, in order
        return reference_detailed(op, xs, attrs, std).rounded
    u, first, inverse = np.unique(view, return_index=True, return_inverse=True)
    try:
        key = (op.name, id(op), std, tuple(sorted(attrs.items())), fmt.name)
        hash(key)
    except TypeError:
        key = None
    # no key, or too many to keep: straight to the reference; the operator held: its id names no other while kept
    held, known = (None, None) if key is None or u.size > _CACHED_CALL else _DECIDED.setdefault(key, (op, {}))
    if held is not op:
        return reference_detailed(op, xs[first], attrs, std).rounded[inverse]
    bits = u.tolist()
    values = {b: known.get(b, _ABSENT) for b in bits}
    missing = [j for j, b in enumerate(bits) if values[b] is _ABSENT]
    if missing:
        fresh = dict(
            zip((bits[j] for j in missing), reference_detailed(op, xs[first[missing]], attrs, std).rounded.tolist())
        )
        values.update(fresh)
        if len(known) + len(fresh) > _DECIDED_MAX:
            known.clear()
        if len(fresh) <= _DECIDED_MAX:
            known.update(fresh)
    return np.array([values[b] for b in bits], dtype=xs.dtype)[inverse]
