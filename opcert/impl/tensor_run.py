"""opcert's implementation of a tensor operator: its expression over each row in binary64 (the row maximum
subtracted exactly, the row sum by halves: expr.numpy_eval), rounded once into the tensor's format.

Rounding a binary64 value that carries a few binary64 ULPs of error into a narrower format is wrong where
the value sits that close to a rounding boundary of the format (LogSoftmax of the bfloat16 row
[-16.75, 17.375] is -34.125 - 1.5e-15, a hair past a bfloat16 midpoint, and -34.125 in binary64: it rounded
to even, -34.0, not -34.25). Those elements (each one whose binary64 value, moved by 16 binary64 ULPs either
way, would round to another value) are taken from the reference, for the whole row they sit in; every
other element is the expression's value rounded once."""

from __future__ import annotations

import math

import numpy as np

from opcert.errors import UsageError
from opcert.expr.numpy_eval import eval_numpy
from opcert.formats import to_format
from opcert.impl.rounding_test import near_boundary
from opcert.spec import get_tensor_operator
from opcert.spec.row_reference import check_float, reference_rows
from opcert.spec.tensor import over_rows, reduced_axes, row_outputs, to_rows


def run(
    op, x, *, out: np.ndarray | None = None, standard: str | None = None, axis=None, axes=None, attrs=None
) -> np.ndarray:
    """opcert's implementation of the tensor operator `op` on x (rank 1 to 8, empty allowed), over the rows
    that `standard`'s axis rule makes with `axis` (ONNX) or `axes` (DirectML's `1` forms). `out`: as for
    the element-wise operators (x's dtype and shape; x itself runs in place; a reduction's output has each
    reduced axis of size 1). attrs: the attributes
    (LayerNormalization's epsilon), rounded to binary32; the standard's defaults for the others."""
    op, named = get_tensor_operator(op)
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    fmt = check_float(op, x)
    # with its attributes first: they may pick the rows (GroupNormalization's num_groups)
    std = op.with_values(op.standard(standard or named), attrs)
    reduced = reduced_axes(op, std, x.ndim, axis, axes)
    rows, back = to_rows(x, reduced)
    shape = op.output_shape(x.shape, reduced)
    if out is not None and (not isinstance(out, np.ndarray) or out.dtype != x.dtype or out.shape != shape):
        got = f"{out.dtype} {out.shape}" if isinstance(out, np.ndarray) else type(out).__name__
        what = (
            "the input's dtype and shape"
            if not op.reduces
            else "the input's dtype, and its shape with each reduced axis of size 1"
        )
        raise UsageError(f"out must have {what} ({x.dtype} {shape}); got {got}")
    op = op.for_standard(std)
    values_of = std.values()
    with np.errstate(invalid="ignore"):
        rows64 = rows.astype(np.float64)
    if fmt.p == 53 and op.reference_in_binary64:
        values = reference_rows(op, rows64, fmt, rule=std.inf_rule, attrs=values_of)[0]
        result = back(row_outputs(op, values))
        if out is None:
            return result
        out[...] = result
        return out
    values = over_rows(
        op,
        rows64,
        lambda b: eval_numpy(op.implementation, b, values_of, input_bits=fmt.p),
        rule=std.inf_rule,
        attrs=values_of,
    )
    if op.nonfinite == "formula":
        # the squares of a normalization's row beyond binary64's range (|x| from 2^512 on overflows, from
        # 2^-537 down underflows): those rows, rare, are the reference's
        with np.errstate(all="ignore"):
            mag = np.abs(rows64).max(axis=1, initial=0.0)
            wide = np.isfinite(rows64).all(axis=1) & ((mag > 2.0**480) | ((mag < 2.0**-480) & (mag > 0)))
        if wide.any():
            values[wide] = reference_rows(op, rows64[wide], fmt, attrs=values_of)[0]
    if op.nonfinite == "formula":
        # a row of finite entries whose binary64 value is NaN or +-inf where the exact one need not be (ReduceLogSum
        # of [1e30, 1, -1e30]: the binary64 sum cancels to 0, log(0) = -inf; the exact sum is 1): the reference's
        with np.errstate(invalid="ignore"):
            off = np.isfinite(rows64).all(axis=1) & ~np.isfinite(values).all(axis=1)
        if off.any():
            values[off] = reference_rows(op, rows64[off], fmt, rule=std.inf_rule, attrs=values_of)[0]
    if fmt.p < 53:
        rng = next((p for p in op.properties if p.kind == "range"), None)
        nonnegative = rng is not None and rng.lower is not None and rng.lower >= 0
        ulps = 16 if op.error_bound is None else op.error_bound(rows64)
        if "scale" in values_of and not _exact_affine(values_of["scale"], values_of.get("B", 0.0)):
            ulps = _through_affine(ulps, values, values_of.get("B", 0.0))
        near = np.nonzero(near_boundary(values, fmt, nonnegative, ulps).any(axis=1))[0]
        if near.size:
            values[near] = reference_rows(op, rows64[near], fmt, rule=std.inf_rule, attrs=values_of)[0]
    result = back(to_format(row_outputs(op, values), fmt))
    if out is None:
        return result
    out[...] = result
    return out


def _exact_affine(scale: float, bias: float) -> bool:
    """Whether fma(z, scale, B) is z times a power of two, exactly (B 0, scale +-2^k: the identity among them): y
    then has z's significand, and z's bound in its own ULPs is y's (a wider band would send rows to the reference
    that need not go there)."""
    return bias == 0.0 and scale != 0.0 and math.frexp(abs(scale))[0] == 0.5


def _through_affine(ulps, values: np.ndarray, bias: float) -> np.ndarray:
    """The bound of y = fma(z, scale, B) (spec.tensor_declarations.affine) from z's bound of `ulps` binary64 ULPs:
    an ULP of z is at most 2^-52 |z|, so z's error times |scale| is at most ulps |scale z| 2^-52 = ulps |y - B| 2^-52,
    and an ULP of y at least 2^-53 |y|: 2 ulps |y - B| / |y| ULPs of y, and the fma's rounding (half of one; one is
    allowed). Unbounded where y is 0 (B cancelled exactly): those elements are the reference's."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.abs(values - bias) / np.abs(values)
    ratio = np.where(np.isnan(ratio), np.inf, ratio)
    return 2.0 * ulps * ratio * (1 + 2.0**-40) + 1.0
