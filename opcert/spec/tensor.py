"""The data that declares a tensor operator: one that reduces over axes (Softmax, LogSoftmax, Hardmax).

Its definition is per element of a row: an expression in which `x` is the element and the reductions
(rowsum, rowmax, rowfirstmax: opcert.expr) range over the row. Which elements form a row is each
standard's axis rule, per version (`AxisRule`): ONNX opsets 1 and 11 coerce the tensor to 2-D at `axis`
and reduce over the flattened trailing dimensions, opset 13 reduces over the one axis `axis`, DirectML's
plain descriptors over the last dimension and its `1` forms over the listed `Axes`.

Rows with infinite entries are defined by one rule for every tensor operator (`limit_row`): an entry of
+-inf is +-M, for the same M, in the limit M -> inf. So -inf entries (a masked position) drop out
(they take `Operator.absent`: Softmax 0, LogSoftmax -inf), +inf entries share the row among themselves,
and a row of -inf only is a row of equal entries. A row holding a NaN gives NaN everywhere. The standards
leave such rows undefined; this is the default rule (`limit`). IEEE arithmetic on the formula gives NaN in
several of these cases (inf - inf): that is the named alternative `ieee` (INF_RULES), chosen with the
standard's key: `--standard onnx+ieee`, `standard = "directml-1+ieee"` (TensorOperator.standard).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np

from opcert.errors import UsageError, choices
from opcert.expr import Expr
from opcert.expr.numpy_eval import eval_numpy
from opcert.formats import not_values_of, round_fraction
from opcert.spec.attrs import resolve, user_value
from opcert.spec.model import Support, standard_of, support_at

# The rules for a row with infinite entries, which the standards leave undefined: the default, and the named
# alternative a standard's key selects with "+NAME" (`--standard onnx+ieee`). Declared once: the reference
# (over_rows), the measurement's `infinite` property and the outputs' texts read them.
INF_RULES = {
    "limit": "an entry of +-inf is +-M for one M, in the limit M -> inf: -inf entries drop out (Softmax 0, "
    "LogSoftmax -inf), +inf entries share the row (two: 1/2 each), a row of -inf only is a row of equal entries",
    "ieee": "the standard's formula with the row maximum subtracted (exp(x - max) / sum, as NumPy, ONNX Runtime "
    "and torch compute it) evaluated in IEEE arithmetic: NaN at every element of a row holding +inf "
    "(inf - inf) and of a row of -inf only (Softmax, LogSoftmax; Hardmax's formula takes no difference: as "
    "limit); a -inf entry beside a finite maximum gives what limit gives (Softmax 0, LogSoftmax -inf)",
}
DEFAULT_INF_RULE = "limit"
RULE_MARK = "+"  # standard key + rule name: onnx+ieee


# the one rule of the normalizations (TensorOperator.nonfinite = "formula"): every value it gives at such a row
# is NaN, +-0 or +-inf, exact in every format
NONFINITE_FORMULA = (
    "a row holding a NaN or an infinite entry takes the standard's formula in IEEE arithmetic: "
    "LayerNormalization and MeanVarianceNormalization are NaN at every element (x - mean is inf - inf or NaN), "
    "RMSNormalization NaN at a NaN or infinite entry and +-0 at the finite ones (x / inf)"
)


def inf_rule_text(rule: str, op_name: str = "", key: str = "onnx", nonfinite: str = "limit") -> str:
    """What a result says of its rows with infinite entries: the rule that applied, and how to choose the other."""
    if nonfinite == "formula":
        return f"rows with NaN or +-inf entries: {NONFINITE_FORMULA}"
    base = key.partition(RULE_MARK)[0]
    other = "ieee" if rule == DEFAULT_INF_RULE else DEFAULT_INF_RULE
    choose = f"{base}{RULE_MARK}ieee" if other == "ieee" else base
    return (
        f"rows with +-inf entries (which the standards leave undefined) follow the {rule} rule: {INF_RULES[rule]}. "
        f'The {other} rule: --standard {choose} (standard = "{choose}" in a gate check)'
    )


@dataclass(frozen=True)
class AxisRule:
    """How a standard's version picks the reduced axes. kind: "coerce-2d" (ONNX 1 and 11: axis and every
    later axis), "single" (ONNX 13: the one axis), "last" (DirectML's plain descriptors: the last
    dimension), "list" (DirectML's `1` forms: the Axes array), "spatial" (InstanceNormalization: the axes 2 to
    rank - 1 of an (N, C, D1, ..., Dk) tensor, one row per sample and channel), "groups" (GroupNormalization: the
    axes 1 to rank - 1 of an (N, C, D1, ..., Dk) tensor split into num_groups rows of C / num_groups channels each,
    one row per sample and group). `default`: the axis attribute's default; `negative`: whether negative axes count
    from the back."""

    kind: str
    default: int | None = None
    negative: bool = True
    text: str = ""
    # "list": the axes where none are given (ONNX MeanVarianceNormalization: 0, 2, 3; "all": every axis, the ONNX
    # reductions)
    default_axes: tuple | str | None = None

    def __post_init__(self):
        if self.kind not in ("coerce-2d", "single", "last", "list", "spatial", "groups"):
            raise ValueError(f"unknown axis rule {self.kind!r}")


@dataclass(frozen=True)
class TensorStandard:
    key: str  # "onnx-1", "onnx", "directml", "directml-1"
    op_name: str
    document: str
    formula_text: str
    formula: Expr
    axes: AxisRule
    support: tuple[Support, ...]  # ascending by `since`
    versions: tuple[str, ...] = ()  # the versions this rule covers (ONNX opsets 1 and 11)
    in_place: bool = True
    notes: str = ""
    inf_rule: str = DEFAULT_INF_RULE  # the rule for rows with infinite entries (INF_RULES): key+NAME selects one
    # the attributes (LayerNormalization's epsilon): each default, the standard's own spelling of each name, and
    # the values a run holds it to (name -> exact binary32 value, as pairs: with_values, spec.attrs.resolve)
    defaults: dict = field(default_factory=dict, hash=False, compare=False)
    attribute_names: dict = field(default_factory=dict, hash=False, compare=False)
    attrs: tuple = ()
    # a standard whose formula is not the operator's (DirectML's MEAN_VARIANCE_NORMALIZATION1: epsilon under the
    # square root): opcert's implementation and the reference's form of it (None: the operator's)
    implementation: Expr | None = field(default=None, hash=False, compare=False)
    reference_form: Expr | None = field(default=None, hash=False, compare=False)

    def has(self, name: str) -> bool:
        return name in self.attribute_names

    def values(self) -> dict:
        """The attributes a run holds the standard to, as binary64 (each a binary32 value exactly)."""
        return {k: float(v) for k, v in self.attrs}

    @property
    def name(self) -> str:
        """The key that selects this standard with its rule for infinite entries: "onnx", "onnx+ieee"."""
        return self.key if self.inf_rule == DEFAULT_INF_RULE else f"{self.key}{RULE_MARK}{self.inf_rule}"

    def support_at(self, level: str | None) -> Support | None:
        return support_at(self.support, level)


ROW_KINDS = {
    "range": "lower <= y_i <= upper for every element of every row without NaN",
    "row_sum": "the row's outputs (or their exponentials: sum_of) sum to 1",
    "shift_invariance": "f(x + c) = f(x) for a constant c added to a row",
    "scale_invariance": "f(c x) = f(x) for a constant c > 0 multiplying a row (where RowProperty.requires holds)",
    "permutation": "f(P x) = P f(x) for a permutation P of a row",
    "row_monotonic": "y_i non-decreasing in x_i, non-increasing in x_j (j != i)",
    "one_hot_first": "1 at the first maximum of the row, 0 elsewhere",
    "nan_row": "a row holding a NaN gives NaN everywhere",
    "infinite_entries": "the limit rule for +-inf entries (limit_row)",
    "row_layout": "a row's outputs do not depend on the tensor around it (verify.tensor.layouts)",
    "nonfinite_row": "a row holding a NaN or an infinite entry: the formula in IEEE arithmetic (NONFINITE_FORMULA)",
    "row_bound": "|y_i| <= sqrt(n - k) for a row of n (k: RowProperty.bound_less)",
    "moments": "the outputs' mean square is at most 1 (and their mean is 0: RowProperty.mean_zero)",
    "max_log_bounds": "max(x) <= y <= max(x) + log(n) for a row of n (LogSumExp)",
}


@dataclass(frozen=True)
class RowProperty:
    """A property of the operator over a row, declared (what it claims, stated). lower/upper: a range's
    bounds; sum_of: "y" or "exp(y)" for a row sum."""

    name: str
    kind: str
    statement: str
    lower: float | None = None
    upper: float | None = None
    sum_of: str = "y"
    bound_less: int = 0  # row_bound: the k in sqrt(n - k)
    mean_zero: bool = False  # moments: the mean is 0 too
    longest: int | None = None  # the longest row z3 is given (verify.proofs.rows.MAX_LENGTH where None)
    # (attribute, value) pairs the property is claimed at (scale invariance: epsilon = 0); elsewhere it is not
    # claimed, and no check or proof reports it as established
    requires: tuple = ()

    def __post_init__(self):
        if self.kind not in ROW_KINDS:
            raise ValueError(f"row property {self.name}: unknown kind {self.kind!r}")

    def not_claimed(self, std) -> str | None:
        """Why the property is not claimed for the standard std at the attribute values it holds (None: it is)."""
        held = std.values()
        for name, value in self.requires:
            if name not in held:
                return f"{self.name} is claimed where {name} = {value:g}; {std.op_name} ({std.key}) has no {name}"
            if held[name] != value:
                return (
                    f"{self.name} is claimed where {name} = {value:g} only; this check's {name} is {held[name]:g} "
                    f"(--attr {name}={value:g} checks it)"
                )
        return None


@dataclass(frozen=True)
class TensorOperator:
    name: str
    summary: str
    family: str
    standards: tuple[TensorStandard, ...]
    primary: str
    implementation: Expr  # what opcert runs (max subtracted)
    reference_form: Expr  # well-conditioned, equal to the formula over the reals
    absent: object  # the value at a -inf entry of a row with a larger entry: 0 or "-inf"
    properties: tuple[RowProperty, ...] = ()
    notes: str = ""
    # True where every output is x_i - max(x) minus a non-negative amount (LogSoftmax): where that amount is
    # too small for any enclosure (e^-1e38 beside a row maximum 1e38 above), the value rounds as x_i - max
    # approached from below (spec.row_reference)
    below_shift: bool = False
    # opcert's implementation in binary64: the most ULPs it may be off at an element of a row of n (tested)
    budget64: object = lambda n: 0.0
    runtimes: dict = field(default_factory=dict)
    attributes: tuple = ()  # spec.model.Attribute: binary32 values, given per standard (TensorStandard.defaults)
    # rows with a NaN or an infinite entry: "limit" (INF_RULES: Softmax's family) or "formula" (the formula in
    # IEEE arithmetic: the normalizations, NONFINITE_FORMULA)
    nonfinite: str = "limit"
    # the rows a check generates besides the random ones (verify.tensor.measure.HARD_CASES): "exp" (the
    # exponential's overflow and underflow, ties: Softmax's family) or "moments" (cancellation in the mean,
    # squares that overflow, stalled sums, epsilon beside the variance: the normalizations)
    hard_cases: str = "exp"
    # opcert's implementation in binary64, before it is rounded into a narrower format: a bound on its error in
    # binary64 ULPs of each value, f(rows) -> an array of the rows' shape (None: 16, Softmax's family); an
    # element that close to a rounding boundary of the format is taken from the reference (impl.tensor_run)
    error_bound: object = None
    # in binary64 opcert's implementation is the reference (correctly rounded, at its cost): where no bound in
    # ULPs holds for a binary64 expression (a deviation next to a row's mean, LayerNormalization)
    reference_in_binary64: bool = False
    # a reduction (ReduceLogSumExp): one output per row. Its expressions give that value at every element of the
    # row (tensor_declarations.per_row); its outputs have the input's shape with each reduced axis of size 1 (ONNX's
    # keepdims = 1, DirectML's output tensor), and a row of no elements has the value `empty_value`
    reduces: bool = False
    empty_value: float = math.nan
    # the formula a row with a NaN or an infinite entry takes in IEEE arithmetic, where the reference form's is
    # not the standard's (LogSumExp's max-subtracted form is NaN at a row holding +inf; log(sum(exp(x))) is +inf)
    nonfinite_form: Expr | None = None
    # a -inf entry contributes nothing (exp(-inf) = 0: LogSumExp): a row whose other entries are finite takes the
    # definition over those, exactly; the other rows with NaN or infinite entries the formula in IEEE arithmetic
    neg_inf_drops: bool = False
    elementwise = False

    def attribute(self, name: str):
        return next(a for a in self.attributes if a.name == name)

    def output_shape(self, shape: tuple, reduced) -> tuple:
        """The shape of the output for an input of `shape`: the same, or a reduction's, with each reduced axis of
        size 1 (keepdims)."""
        return kept_shape(shape, reduced) if self.reduces else tuple(shape)

    def for_standard(self, std: TensorStandard) -> TensorOperator:
        """The operator as std defines it: its implementation and reference form where std has its own."""
        if std.implementation is None and std.reference_form is None:
            return self
        return replace(
            self,
            implementation=std.implementation or self.implementation,
            reference_form=std.reference_form or self.reference_form,
        )

    def given(self, std: TensorStandard) -> dict:
        """std's attributes as a target is given them: binary32 values as floats, a choice by its name."""
        return {k: user_value(self, k, v) for k, v in std.attrs}

    def node_attributes(self, std: TensorStandard) -> dict:
        """given(std) without the tensor inputs (Attribute.input: a normalization's scale and B), which a runtime
        takes as tensors beside X, not as attributes of its node or keywords of its function."""
        inputs = {a.name for a in self.attributes if a.input}
        return {k: v for k, v in self.given(std).items() if k not in inputs}

    def input_values(self, std: TensorStandard) -> dict:
        """The tensor inputs' values std holds (scale, B: name -> binary64 value of the binary32 attribute)."""
        held = std.values()
        return {a.name: held[a.name] for a in self.attributes if a.input and a.name in held}

    def inputs_inexact(self, std: TensorStandard, dtype: str) -> str | None:
        """Why a runtime that takes the tensor inputs in X's type cannot be given them in dtype: the first value that
        is no value of dtype (rounding it first would measure another operator), or None."""
        return not_values_of(self.input_values(std), dtype)

    def with_values(self, std: TensorStandard, attrs: dict | None = None) -> TensorStandard:
        """std holding the attributes `attrs` (name or alias -> value; the standard's defaults for the rest),
        each rounded to binary32. UsageError naming an unknown attribute or a value outside its domain."""
        if not self.attributes:
            if attrs:
                raise UsageError(f"{self.name} has no attributes (got {', '.join(map(str, attrs))})")
            return std
        return replace(std, attrs=tuple(sorted(resolve(self, attrs, std.name).items())))

    def standard(self, key: str | None = None) -> TensorStandard:
        """The standard called `key`; "KEY+RULE" (onnx+ieee) is that standard with RULE (INF_RULES) for its
        rows with infinite entries, which the standards leave undefined."""
        base, mark, rule = (key or "").partition(RULE_MARK)
        if mark and self.nonfinite == "formula":
            raise UsageError(
                f"{self.name}: standard {key!r}: {self.name} has one rule for rows with NaN or infinite entries "
                f"({NONFINITE_FORMULA}); give the standard's key alone: {choices(s.key for s in self.standards)}"
            )
        if not mark:
            try:
                return standard_of(self, key)
            except UsageError as exc:
                raise UsageError(
                    f"{exc}; KEY+RULE picks a rule for rows with infinite entries: {choices(INF_RULES)}"
                ) from None
        if rule not in INF_RULES:
            raise UsageError(
                f"{self.name}: standard {key!r}: unknown rule {rule!r} for rows with infinite entries; allowed: "
                f"{choices(INF_RULES)} (e.g. {self.primary}{RULE_MARK}ieee)"
            )
        return replace(standard_of(self, base or None), inf_rule=rule)

    @property
    def dtypes(self) -> tuple[str, ...]:
        order = ["float16", "bfloat16", "float32", "float64"]
        seen = {d for s in self.standards for sup in s.support for d in sup.dtypes}
        return tuple(d for d in order if d in seen)


def round_just_below(q, fmt) -> float:
    """The rounding to nearest of a value an infinitesimal below the rational q: q's own rounding, or where q
    is a midpoint of fmt the value below it; a zero is -0."""
    if q == 0:
        return -0.0
    lo, hi = round_fraction(q, fmt, mode="down"), round_fraction(q, fmt, mode="up")
    beyond = Fraction(2) ** (fmt.emax + 1)  # where an infinity stands in the midpoint rule (IEEE 754)

    def at(v):
        return Fraction(v) if math.isfinite(v) else math.copysign(1, v) * beyond

    if lo != hi and q - at(lo) == at(hi) - q:
        return lo
    return round_fraction(q, fmt, negative_zero=q < 0)


class Grouped(tuple):
    """The axes 1 to rank - 1 of an (N, C, D1, ..., Dk) tensor, split along C into `groups` rows per sample
    (GroupNormalization): a tuple of those axes wherever axes are said, with the group count beside them."""

    groups: int

    def __new__(cls, axes, groups: int):
        t = super().__new__(cls, axes)
        t.groups = int(groups)
        return t

    def __reduce__(self):  # pickled (worker processes) with its group count
        return (Grouped, (tuple(self), self.groups))


# GroupNormalization's num_groups: ONNX's INT attribute, a choice among these counts (an index in expressions and
# in a standard's values: the counts opcert checks; each must divide the tensor's channel count)
GROUP_COUNTS = ("1", "2", "3", "4", "6", "8", "12", "16", "24", "32", "64")
GROUP_EXAMPLE = "2"  # where none is given: ONNX requires num_groups and gives no default


def groups_of_standard(std: TensorStandard) -> int:
    """The group count a standard of the "groups" rule holds (its num_groups attribute, else its default)."""
    held = dict(std.attrs)
    if "num_groups" in held:
        return int(GROUP_COUNTS[int(held["num_groups"])])
    return int(std.defaults.get("num_groups", GROUP_EXAMPLE))


def reduced_axes(
    op: TensorOperator, std: TensorStandard, rank: int, axis: int | None = None, axes=None
) -> tuple[int, ...]:
    """The axes (ascending, non-negative) a standard reduces over for a tensor of `rank` dimensions (the
    "groups" rule: a Grouped tuple). UsageError naming what was wrong and what is allowed."""
    rule = std.axes
    where = f"{op.name} ({std.key}, {std.op_name})"
    if rule.kind == "groups":
        if axis is not None or axes is not None:
            raise UsageError(
                f"{where} takes no axis: it normalizes each sample's groups of channels over the axes 1 to rank - 1 "
                "(num_groups= sets the groups)"
            )
        if rank < 2:
            raise UsageError(f"{where}: a tensor of rank {rank} has no channel axis; allowed ranks: 2 to 8 (N, C, ...)")
        return Grouped(range(1, rank), groups_of_standard(std))
    if rule.kind in ("coerce-2d", "single"):
        if axes is not None:
            raise UsageError(f"{where} takes one axis (axis=), not an axis list")
        a = rule.default if axis is None else int(axis)
        lo = -rank if rule.negative else 0
        if rank == 0 or not lo <= a <= rank - 1:
            allowed = "none (a 0-d tensor has no axis)" if rank == 0 else f"{lo} to {rank - 1}"
            raise UsageError(f"{where}: axis {a} is out of range for a tensor of rank {rank}; allowed: {allowed}")
        a %= rank
        return tuple(range(a, rank)) if rule.kind == "coerce-2d" else (a,)
    if rule.kind == "spatial":
        if axis is not None or axes is not None:
            raise UsageError(f"{where} takes no axis: it normalizes over the spatial axes, 2 to rank - 1")
        if rank < 3:
            raise UsageError(
                f"{where}: a tensor of rank {rank} has no spatial axis; allowed ranks: 3 to 8 (N, C, D1, ...)"
            )
        return tuple(range(2, rank))
    if axis is not None:
        raise UsageError(
            f"{where} takes no axis attribute"
            + ("; it reduces over the last dimension" if rule.kind == "last" else "; give axes=")
        )
    if rank == 0:
        raise UsageError(f"{where}: a 0-d tensor has no axis to reduce over; allowed ranks: 1 to 8")
    if rule.kind == "last":
        if axes is not None:
            raise UsageError(f"{where} reduces over the last dimension and takes no Axes")
        return (rank - 1,)
    lo = -rank if rule.negative else 0
    if axes is None:
        if rule.default_axes is None:
            raise UsageError(f"{where} needs Axes (a non-empty list of distinct axes in {lo} to {rank - 1})")
        axes = range(rank) if rule.default_axes == "all" else rule.default_axes
    got = [int(a) for a in axes]
    if not got and rule.default_axes == "all":  # ONNX's empty axes input (noop_with_empty_axes = 0): every axis
        return tuple(range(rank))
    if not got:
        raise UsageError(f"{where}: AxisCount is 0; allowed: 1 to {rank} distinct axes in {lo} to {rank - 1}")
    bad = [a for a in got if not lo <= a <= rank - 1]
    if bad:
        raise UsageError(f"{where}: Axes {got} hold {bad}, out of range; allowed: {lo} to {rank - 1} (rank {rank})")
    if len({a % rank for a in got}) != len(got):
        raise UsageError(f"{where}: Axes {got} repeat an axis; allowed: distinct axes")
    return tuple(sorted(a % rank for a in got))


def kept_shape(shape: tuple, axes) -> tuple:
    """A reduction's output shape: `shape` with each reduced axis of size 1 (keepdims)."""
    return tuple(1 if a in set(axes) else d for a, d in enumerate(shape))


def row_outputs(op: TensorOperator, values: np.ndarray, empty: float | None = None) -> np.ndarray:
    """op's outputs over rows, from its values at every element of each row: those values, or a reduction's one
    value per row (per_row: every element holds it) as one column, a row of no element taking `empty` (the
    operator's empty_value where None)."""
    if not op.reduces:
        return values
    if values.shape[1]:
        return values[:, :1]
    return np.full((values.shape[0], 1), op.empty_value if empty is None else empty)


def block_call(std: TensorStandard, rows: np.ndarray) -> tuple[np.ndarray, tuple, callable]:
    """A 2-D block of rows, each row reduced, as a tensor the standard's rule takes: (x, reduced axes, back), back(y)
    -> the outputs as rows. Every rule takes the block itself, its last axis reduced, but the spatial one
    (InstanceNormalization), which takes it as (m, 1, n), and the groups one (GroupNormalization, G groups), which
    takes it as (ceil(m / G), 2 G, n / 2) (two channels per group; (ceil(m / G), G, n) where n is odd), the last
    sample's missing groups filled with the block's first rows again (run as rows of their own; back drops
    them, and a check counts only the block's own: verify.tensor.measure.Case.own_rows)."""
    if std.axes.kind == "groups":
        m, n = rows.shape
        g = groups_of_standard(std)
        k = -(-m // g) if m else 0
        filled = rows if k * g == m else np.concatenate([rows, np.resize(rows, (k * g - m, n))])
        c = 2 if n % 2 == 0 and n else 1  # two channels per group where the row splits in two: C / G > 1 as in use
        x = filled.reshape(k, g * c, n // c)
        return x, Grouped((1, 2), g), lambda y: np.asarray(y).reshape(k * g, n)[:m]
    if std.axes.kind == "spatial":
        m = rows.shape[0]
        return rows.reshape(m, 1, rows.shape[1]), (2,), lambda y: np.asarray(y).reshape(m, -1)
    return rows, (1,), np.asarray


def to_rows(x: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, callable]:
    """x as rows (2-D: one row per combination of the other axes, the reduced axes flattened along the
    last, in x's index order; Grouped axes: one row per sample and group of channels) and the function that puts
    an array of rows back into x's shape."""
    groups = getattr(axes, "groups", None)
    if groups is not None:
        c = x.shape[1]
        if c % groups:
            raise UsageError(
                f"num_groups {groups} does not divide the {c} channels of a tensor of shape {list(x.shape)}: "
                "allowed: a channel count that is a multiple of num_groups"
            )
        rows = np.reshape(x, (x.shape[0] * groups, x.size // (x.shape[0] * groups) if x.shape[0] * groups else 0))
        return rows, lambda y: np.asarray(y).reshape(x.shape)
    rest = tuple(a for a in range(x.ndim) if a not in axes)
    perm = rest + tuple(axes)
    moved = np.transpose(x, perm)
    n = int(np.prod([x.shape[a] for a in axes], dtype=np.int64))
    rows = moved.reshape(-1, n) if n else moved.reshape(int(np.prod(moved.shape[: len(rest)], dtype=np.int64)), 0)
    inverse = np.argsort(perm)

    def back(y: np.ndarray) -> np.ndarray:
        """Rows of x's length back into x's shape; rows of one value (a reduction's) into the kept shape."""
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1 and n != 1:
            return np.transpose(y.reshape(moved.shape[: len(rest)] + (1,) * len(axes)), inverse)
        return np.transpose(y.reshape(moved.shape), inverse)

    return rows, back


def limit_row(row: np.ndarray) -> tuple[str, np.ndarray | None]:
    """How a row (binary64 values) is evaluated under the rule for non-finite entries:
    ("nan", None): every output NaN; ("finite", keep): the definition over the entries `keep` (the
    others take the operator's `absent` value); ("zeros", keep): the definition over a row of zeros at
    `keep` (the +inf entries, or every entry of a row of -inf), `absent` elsewhere."""
    if np.isnan(row).any():
        return "nan", None
    pos = np.isposinf(row)
    if pos.any():
        return "zeros", pos
    neg = np.isneginf(row)
    if neg.all() and row.size:
        return "zeros", np.ones(row.shape, dtype=bool)
    return "finite", ~neg


def ieee_nan(op: TensorOperator, row: np.ndarray) -> np.ndarray:
    """Where the `ieee` rule puts NaN in a row: where op's max-subtracted formula (its reference form, exp(x -
    max) / sum for Softmax), evaluated in binary64 with NumPy, gives NaN."""
    return np.isnan(eval_numpy(op.reference_form, np.asarray(row, dtype=np.float64)[None, :], {}))[0]


def over_rows(
    op: TensorOperator,
    rows: np.ndarray,
    finite_block,
    channels: int = 1,
    rule: str = DEFAULT_INF_RULE,
    attrs: dict | None = None,
):
    """op's values over rows (2-D, binary64 or wider), under the rule for non-finite entries (limit_row):
    finite_block(block) gives the values over a 2-D block of finite rows of one length (a tuple of
    `channels` arrays where channels > 1: the reference's rounded values and exact midpoints); a row with
    NaN, +-inf entries is reduced to such a block (its finite entries, or a row of zeros) and the rest filled
    with NaN (a NaN row) or the operator's `absent` value. rule "ieee" (INF_RULES): NaN besides, wherever
    the formula evaluated in IEEE arithmetic gives NaN (ieee_nan). An operator whose nonfinite rule is
    "formula" (the normalizations) takes its formula in IEEE arithmetic at every row with a NaN or an
    infinite entry, with the attributes `attrs` (NONFINITE_FORMULA)."""
    if rule not in INF_RULES:
        raise ValueError(f"unknown rule for infinite entries {rule!r}")
    outs = [np.full(rows.shape, np.nan) for _ in range(channels)]
    if rows.size == 0:
        return outs[0] if channels == 1 else tuple(outs)

    def put(where, got):
        for o, g in zip(outs, (got,) if channels == 1 else got):
            o[where] = g

    finite = np.isfinite(rows).all(axis=1)
    if finite.any():
        put(finite, finite_block(rows[finite]))
    if op.nonfinite == "formula":  # the other rows: the formula in IEEE arithmetic (NONFINITE_FORMULA)
        if op.neg_inf_drops:  # rows of finite and -inf entries: the definition over the finite ones
            dropping = ~finite & ~np.isnan(rows).any(axis=1) & ~np.isposinf(rows).any(axis=1)
            for i in np.nonzero(dropping & np.isfinite(rows).any(axis=1))[0]:
                keep = np.isfinite(rows[i])
                got = finite_block(rows[i][keep][None, :])
                put(i, got[0, :1] if channels == 1 else tuple(g[0, :1] for g in got))  # a reduction's one value
                finite[i] = True
        if (~finite).any():
            form = op.nonfinite_form or op.reference_form
            with np.errstate(all="ignore"):
                ieee = eval_numpy(form, rows[~finite].astype(np.float64), dict(attrs or {}))
            # every value it gives is NaN, +-0 or +-inf, exact in every format: no low part
            put(~finite, ieee if channels == 1 else (ieee, ieee, *[np.zeros(ieee.shape)] * (channels - 2)))
        return outs[0] if channels == 1 else tuple(outs)
    absent = -np.inf if op.absent == "-inf" else float(op.absent)
    nan_rows = np.isnan(rows).any(axis=1)  # every output NaN: left as filled, without a row's loop
    for i in np.nonzero(~finite & ~nan_rows)[0]:
        how, keep = limit_row(rows[i])
        if how == "nan":
            continue
        sub = rows[i][keep][None, :] if how == "finite" else np.zeros((1, int(keep.sum())), dtype=rows.dtype)
        got = finite_block(sub)
        for o in outs:
            o[i] = absent
        put((i, keep), got[0] if channels == 1 else tuple(g[0] for g in got))
        if rule == "ieee":
            for o in outs:
                o[i, ieee_nan(op, rows[i].astype(np.float64))] = np.nan
    return outs[0] if channels == 1 else tuple(outs)


def tensor_rows(op: TensorOperator, x: np.ndarray, standard: str | None, axis=None, axes=None, level=None, attrs=None):
    """(rows, back, standard) of x for op: x's rows under the standard's axis rule, the standard holding `attrs`
    (they may pick the rows: GroupNormalization's num_groups; UsageError where the axis, the axes, the rank or an
    attribute is not allowed)."""
    std = op.with_values(op.standard(standard), attrs)
    return (*to_rows(x, reduced_axes(op, std, x.ndim, axis, axes)), std)
