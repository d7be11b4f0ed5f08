"""Descriptor validation: the tensor constraints of each standard, read from the catalog.

A DirectML operator descriptor binds an input and an output tensor; both must
have the same data type, dimension count and sizes, a data type and dimension
count that the feature level supports, and the output may alias the input
(in-place execution) where the operator allows it. ONNX fixes no rank bound.
"""

from __future__ import annotations

from dataclasses import dataclass

from opcert.errors import UsageError, choices
from opcert.spec import get_operator, get_tensor_operator, is_tensor_operator
from opcert.spec.model import version_key
from opcert.spec.tensor import kept_shape, reduced_axes


@dataclass(frozen=True)
class TensorDesc:
    dtype: str
    sizes: tuple[int, ...]

    @property
    def rank(self) -> int:
        return len(self.sizes)


def violations(
    op,
    inp: TensorDesc,
    out: TensorDesc,
    *,
    standard: str = "directml",
    level: str | None = None,
    in_place: bool = False,
) -> list[str]:
    """Every constraint the descriptor breaks (empty when it is valid)."""
    op = get_operator(op)
    std = op.standard(standard)
    sup = std.support_at(level)
    if sup is None:
        return [f"{op.name} is not available before {standard} level {std.support[0].since} (asked for {level})"]
    found = _tables(op.name, sup, inp, out, standard, level, in_place and not std.in_place)
    return found


def tensor_violations(
    op,
    inp: TensorDesc,
    out: TensorDesc,
    *,
    standard: str = "directml-1",
    level: str | None = None,
    in_place: bool = False,
    axis=None,
    axes=None,
) -> list[str]:
    """Every constraint a tensor operator's descriptor breaks: the element-wise ones (types, dimension
    counts per level, equal sizes, in place), the axis rule (axis in range; Axes non-empty, distinct, in
    range) and DirectML's plain descriptors' effective rank (at most 2: dimensions after leading sizes of 1)."""
    op, _ = get_tensor_operator(op)
    std = op.standard(standard)
    sup = std.support_at(level)
    if sup is None:
        return [f"{op.name} is not available before {standard} level {std.support[0].since} (asked for {level})"]
    found = _tables(op.name, sup, inp, out, standard, level, in_place and not std.in_place, reduction=op.reduces)
    try:
        reduced = reduced_axes(op, std, inp.rank, axis, axes)
    except UsageError as exc:
        found.append(str(exc))
    else:
        want = kept_shape(tuple(inp.sizes), reduced)
        if op.reduces and inp.rank == out.rank and tuple(out.sizes) != want:
            found.append(
                f"output sizes {tuple(out.sizes)} are not the input's with each reduced axis of size 1 ({want})"
            )
    if std.axes.kind == "last":
        sizes = list(inp.sizes)
        while len(sizes) > 1 and sizes[0] == 1:
            sizes.pop(0)
        if len(sizes) > 2:
            found.append(
                f"input effective rank {len(sizes)} (sizes {inp.sizes} without leading 1s) is more than 2, "
                f"which {std.op_name} allows"
            )
    return found


def _tables(name, sup, inp, out, standard, level, in_place_refused, reduction: bool = False) -> list[str]:
    """The constraints of the support tables, and equal sizes (a reduction's output sizes are checked by its
    caller: the input's with each reduced axis of size 1)."""
    found = []
    for role, t in (("input", inp), ("output", out)):
        if t.dtype not in sup.dtypes:
            found.append(
                f"{role} data type {t.dtype} is not supported at {standard} level "
                f"{level or sup.since}; allowed: {choices(sup.dtypes)}"
            )
        if sup.ranks is not None and not (sup.ranks[0] <= t.rank <= sup.ranks[1]):
            lo, hi = sup.ranks
            allowed = str(lo) if lo == hi else f"{lo} to {hi}"
            found.append(
                f"{role} dimension count {t.rank} is not supported at {standard} level "
                f"{level or sup.since}; allowed: {allowed}"
            )
        if any(s < 0 for s in t.sizes):
            found.append(f"{role} sizes {t.sizes} have a negative size")
    if inp.dtype != out.dtype:
        found.append(f"input and output data types differ ({inp.dtype} vs {out.dtype})")
    if inp.rank != out.rank:
        found.append(f"input and output dimension counts differ ({inp.rank} vs {out.rank})")
    elif inp.sizes != out.sizes and not reduction:
        found.append(f"input and output sizes differ ({inp.sizes} vs {out.sizes})")
    if in_place_refused:
        found.append(f"{name} does not allow in-place execution in {standard}")
    return found


def validate(
    op,
    inp: TensorDesc,
    out: TensorDesc,
    *,
    standard: str = "directml",
    level: str | None = None,
    in_place: bool = False,
    **axes,
) -> None:
    """Raise UsageError naming every broken constraint, if any (a tensor operator: axis= or axes=)."""
    if is_tensor_operator(op):
        name = get_tensor_operator(op)[0].name
        found = tensor_violations(op, inp, out, standard=standard, level=level, in_place=in_place, **axes)
    else:
        name = get_operator(op).name
        found = violations(op, inp, out, standard=standard, level=level, in_place=in_place)
    if found:
        raise UsageError(f"invalid {name} descriptor: " + "; ".join(found))


def levels(op, standard: str) -> list[str]:
    std = get_operator(op).standard(standard)
    return sorted({s.since for s in std.support}, key=version_key)
