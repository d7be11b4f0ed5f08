"""The data that declares an operator. Every layer reads these records."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction

from opcert.errors import UsageError, choices
from opcert.expr import Expr
from opcert.numerics.exact import eval_rational


@dataclass(frozen=True)
class AttributeDomain:
    """The allowed values of an attribute (always a finite binary32 value)."""

    lower: float | None = None  # None: unbounded below
    lower_open: bool = False  # True: lower itself is excluded
    description: str = "any finite binary32 value"

    def contains(self, v: Fraction) -> bool:
        if self.lower is None:
            return True
        return v > Fraction(self.lower) if self.lower_open else v >= Fraction(self.lower)


@dataclass(frozen=True)
class Attribute:
    """An attribute. kind "float": a binary32 value (ONNX and DirectML FLOAT
    attributes). kind "choice": one of `choices` (Gelu's `approximate`); in
    expressions it is the index of the choice. `input`: a tensor input in the
    standards (PRelu's slope), checked one scalar value at a time. `example`:
    the value opcert uses where no standard gives a default (said so in results)."""

    name: str  # opcert's spelling (ONNX's where ONNX has the attribute)
    doc: str
    domain: AttributeDomain = AttributeDomain()
    aliases: tuple[str, ...] = ()  # DirectML and other spellings
    kind: str = "float"
    choices: tuple[str, ...] = ()
    input: bool = False
    example: object = None


@dataclass(frozen=True)
class Support:
    """Data types and dimension counts from one version or feature level on."""

    since: str  # ONNX opset or DirectML feature level
    dtypes: tuple[str, ...]
    ranks: tuple[int, int] | None = None  # inclusive; None: any rank


@dataclass(frozen=True)
class Standard:
    key: str  # "onnx", "directml", "sonnx", ...
    op_name: str  # the standard's own name of the operator
    document: str  # where the text comes from
    formula_text: str  # the formula as the standard writes it
    formula: Expr  # the same formula, as an expression
    defaults: dict[str, object]  # attribute defaults, by opcert's name (absent: none given)
    attribute_names: dict[str, str]  # opcert's name -> this standard's name: the attributes it has
    support: tuple[Support, ...]  # ascending by `since`
    in_place: bool = True
    notes: str = ""
    implementation: Expr | None = None  # opcert's implementation of this standard's form, when the
    #                                            operator's own (`Operator.implementation`) does not apply
    reference_form: Expr | None = None  # well-conditioned, proved equal to `formula` (numerics.ball)
    # the declared variant of a ScaleBias (spec.scale_bias): x * scale + bias first rounded in the tensor's type,
    # selected as KEY+rounded (`--standard directml+rounded`)
    rounded_scale_bias: bool = False
    # where the implementation's binary64 value carries an absolute error, not one relative to it (a sum whose terms
    # cancel next to a zero: DirectML's periodic forms, spec.elementwise.periodic_scaled): y64 -> a bound on that
    # error in binary64 ULPs of y64, which impl.run holds against the narrow format's rounding boundaries; called as
    # absolute_error(y64, attrs), attrs the attributes' binary64 values (BatchNormalization's bound takes B)
    absolute_error: Callable | None = None
    # a float64 tensor's values by a correctly rounded evaluation of the standard's own: "module:function" of
    # f(x64, attrs) -> (values, undecided), for the finite binary64 inputs x64 (flat; attrs their binary64 values),
    # the exact value taken where undecided (named, not imported: such code loads numba, which `import opcert` does
    # not). Where the implementation's binary64 value has no relative bound (BatchNormalization: an error absolute in
    # |y| + |B|), this replaces it in float64, which the implementation's proofs still describe
    float64_rounded: str | None = None
    # how the ONNX models give the tensor-input attributes (Attribute.input): "scalar", 0-d tensors in X's type,
    # broadcast (PRelu's slope, Clip's bounds); "channel", X viewed as (1, 1, n) and each a one-element 1-D tensor
    # in binary32 (binary64 for a float64 X), one channel's parameters (BatchNormalization)
    tensor_inputs: str = "scalar"
    # f's slope at the once-rounded scale-bias s (binary64 in, out; inf where unbounded) where f's condition there
    # is unbounded (acos and asin at +-1): impl.run bounds f(s)'s error from the sum's rounding lo by |lo| slope(s),
    # and where that reaches a rounding boundary of the narrow format it rounds `steep_form` instead, a form over
    # the sum's exact parts (the implementation stays f(s): monotonic as the provers see it)
    slope: Callable | None = None
    steep_form: Expr | None = None
    # the expression whose IEEE value gives an exact zero result its sign, where the formula's does not: the
    # formula in binary64 rounds x * scale + bias first, and Ceil of a sum in (-1, 0) rounded to -1 is -1, not
    # IEEE's -0 (None: the formula)
    zero_sign_form: Expr | None = None

    @property
    def zero_form(self) -> Expr:
        return self.zero_sign_form if self.zero_sign_form is not None else self.formula

    @property
    def name(self) -> str:
        """The key that selects this standard and its variant: "directml", "directml+rounded"."""
        return self.key + ROUNDED if self.rounded_scale_bias else self.key

    def support_at(self, level: str | None) -> Support | None:
        """The support table in force at `level` (the newest one when None)."""
        return support_at(self.support, level)

    def has(self, attr: str) -> bool:
        return attr in self.attribute_names


def support_at(support: tuple, level: str | None):
    """Of a standard's support tables (ascending by `since`), the one in force at `level` (the newest when
    None; None before the first). For the element-wise and the tensor standards alike."""
    if level is None:
        return support[-1]
    chosen = None
    for s in support:
        if version_key(s.since) <= version_key(level):
            chosen = s
    return chosen


ROUNDED = "+rounded"  # a standard's key + this: its ScaleBias rounded in the tensor's type (spec.scale_bias)


def standard_of(op, key: str | None):
    """op's standard called `key` (None: its primary); UsageError naming the ones it has. For the
    element-wise operators and the tensor ones (spec.tensor) alike. KEY+rounded: the standard KEY with its
    ScaleBias rounded in the tensor's type (spec.scale_bias), for a standard that has one."""
    key = key or op.primary
    if key.endswith(ROUNDED):
        base = standard_of(op, key[: -len(ROUNDED)])
        if not (isinstance(base, Standard) and base.has("scale") and base.has("bias")):
            raise UsageError(
                f"{key!r}: {op.name}'s {base.key} standard has no ScaleBias, whose rounding the {ROUNDED} variant "
                f"declares; it applies to: {choices(_scale_bias_keys(op)) if _scale_bias_keys(op) else 'none'}"
            )
        return replace(base, rounded_scale_bias=True)
    for s in op.standards:
        if s.key == key:
            return s
    raise UsageError(
        f"{op.name} is not defined by standard {key!r}; it is defined by: {choices(s.key for s in op.standards)}"
    )


def _scale_bias_keys(op) -> list[str]:
    return [s.key + ROUNDED for s in op.standards if isinstance(s, Standard) and s.has("scale") and s.has("bias")]


@functools.lru_cache(maxsize=256)
def version_key(v: str) -> tuple[int, ...]:
    # cached: the descriptor proof asks it ~10^6 times per operator (40% of its time)
    return tuple(int(p) for p in str(v).split("."))


# Property kinds. Every kind is decided at the specification level (z3 over the
# reals), on opcert's implementation (z3 models and enumeration), and on any
# black-box target (every input enumerated, or samples): see verify/properties/checks.py.
KINDS = {
    "range": "lower <= f(x) <= upper (either side may be absent), for x in the domain",
    "monotonic": "non-decreasing over the domain (non-increasing where the property says `decreasing`)",
    "odd": "f(-x) = -f(x)",
    "even": "f(-x) = f(x)",
    "point_symmetry": "f(-x) = center - f(x)",
    "exact_point": "f(p) = v at each declared point",
    "constant": "f(x) = value for every x in the domain (dead zones, saturation)",
    "limit": "f(+-inf) is the operator's limit, zero sign included",
    "nan_propagation": "a NaN input gives a NaN output",
    "continuity": "the real function is continuous at the declared points (a property of the exact definition)",
    "layout": "a kernel's output for x does not depend on where x sits: the call's length, the element's "
    "position, the buffer's alignment, strides, shape, threads, in-place execution",
}
SPEC_ONLY = frozenset({"continuity"})
KERNEL_ONLY = frozenset({"layout"})  # properties of a kernel's code paths: no real function has them or not


def layout_invariance() -> Property:
    """The property every element-wise operator declares (Operator adds it): each element is mapped on its
    own, so nothing about the array it sits in may change its output (verify.paths.layout checks it)."""
    return Property(
        "layout",
        "layout",
        "element-wise: f(x) is the same bits wherever x sits (length of the call, position, "
        "alignment, strides, shape, threads, in place)",
    )


@dataclass(frozen=True)
class Property:
    """A mathematical property the operator declares.

    `condition` is a boolean expression over the attributes under which the
    property is claimed (None: always). `domain` restricts x to [lo, hi]
    (closed; None: unbounded on that side), both expressions over the
    attributes. Bounds, points, values and centers are expressions over the
    attributes. `holds = False` declares that the property does NOT hold (Gelu
    is not monotone): provers then look for the counterexample. `zero_sign`
    (odd, even): f(-x) = -f(x) (even: f(x)) bit for bit, zeros' signs included; else as values.
    `decreasing` (monotonic only): non-increasing instead of non-decreasing, x1 <= x2 => f(x1) >= f(x2). The
    statement must say so: every layer prints it as the property's claim.
    """

    name: str
    kind: str
    statement: str
    condition: Expr | None = None
    lower: Expr | None = None
    upper: Expr | None = None
    at: tuple[Expr, ...] = ()
    points: tuple[tuple[Expr, Expr], ...] = ()
    domain: tuple[Expr | None, Expr | None] = (None, None)
    value: Expr | None = None
    center: Expr | None = None
    zero_sign: bool = True
    holds: bool = True
    standards: tuple[str, ...] | None = None  # the standards whose definition it is declared for (None: all)
    decreasing: bool = False  # monotonic: non-increasing

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"property {self.name}: unknown kind {self.kind!r}")
        if self.decreasing and self.kind != "monotonic":
            raise ValueError(f"property {self.name}: `decreasing` is for kind 'monotonic', not {self.kind!r}")

    @property
    def spec_only(self) -> bool:
        """A property of the real function that no float kernel can be checked for."""
        return self.kind in SPEC_ONLY

    @property
    def kernel_only(self) -> bool:
        """A property of a kernel's code paths, decided on a target's outputs only (verify.paths.layout)."""
        return self.kind in KERNEL_ONLY

    @property
    def bounded_domain(self) -> bool:
        return self.domain != (None, None)

    def not_claimed(self, attrs: dict, standard: str) -> str | None:
        """Why the property is not claimed for `standard`'s definition at these
        attribute values (None: it is claimed). One rule for every layer."""
        if self.standards is not None and standard not in self.standards:
            return f"declared for {', '.join(self.standards)}'s definition, not {standard}'s"
        if self.condition is None:
            return None
        try:
            if eval_rational(self.condition, Fraction(0), attrs):
                return None
        except KeyError as exc:
            return f"its condition {self.condition} names {exc.args[0]}, which {standard}'s definition does not have"
        shown = ", ".join(f"{k}={float(v)!r}" for k, v in attrs.items())
        return f"claimed only when {self.condition}, which these attributes break ({shown})"


@dataclass(frozen=True)
class Limit:
    """f(x) as x -> side * inf: an expression over the attributes, or "inf" /
    "-inf"; `zero_sign` is the sign of a zero limit (-1 where f approaches 0
    from below: Gelu, SiLU and Mish at -inf are -0). Limits are tried in
    order; the first whose `condition` holds applies."""

    side: int
    value: object
    zero_sign: int = 1
    condition: Expr | None = None


@dataclass(frozen=True)
class RuntimeMap:
    """How a runtime library computes this operator, where its definition is the operator's.

    function: a dotted path in the library (torch.nn.functional.elu).
    kwargs: the function's keyword -> an attribute name (its binary32 value, or
    its choice string), or a constant (a non-string value). condition: the
    attribute values where the library's definition is the operator's
    (elsewhere the target skips, with `why_not`)."""

    function: str
    kwargs: dict = field(default_factory=dict)
    condition: Expr | None = None
    why_not: str = ""
    positional: tuple = ()  # attribute names passed positionally after x


@dataclass(frozen=True)
class IntegerSemantics:
    """Integer tensors: the exact value of the definition at the integer input,
    rounded to the nearest integer (ties to even) and saturated to the type's
    range. `note` says what the standards leave open."""

    note: str


@dataclass(frozen=True)
class Operator:
    name: str  # ONNX spelling
    summary: str
    attributes: tuple[Attribute, ...]
    standards: tuple[Standard, ...]
    primary: str  # key of the standard the reference follows by default
    implementation: Expr  # what opcert runs and proves
    limits: tuple[Limit, ...]  # f at +-inf
    properties: tuple[Property, ...] = ()
    integer: IntegerSemantics | None = None
    standards_differ_where: Expr | None = None  # attribute region where two standards' definitions differ
    notes: str = ""
    family: str = ""
    budget64: float = 1.0  # opcert's implementation in binary64: max ULP error (tested)
    onnx_opsets: dict = field(default_factory=dict)  # dtype -> the ONNX opset the runtime targets build
    runtimes: dict = field(default_factory=dict)  # "torch", "jax" -> RuntimeMap
    hard_points: Callable | None = None  # attrs -> [Fraction]: points sampling must include
    constants: dict = field(default_factory=dict)  # decimal constants of the formulas, as the standard writes them
    # (property, dtype) -> why the built-in gate does not require this property of opcert's own
    # implementation in that dtype: a finding about the code, or a proof no prover here decides in
    # the gate's time. ("subnormals", dtype): flushed subnormal outputs are counted, not failed.
    # Stated in the gate's results; a user's kernel is still held to it.
    own_exceptions: dict = field(default_factory=dict)
    elementwise: bool = True  # declares layout invariance (model.layout_invariance)
    # ((condition on the attributes, value), ...): where a condition holds, a NaN input gives that value, not NaN
    # (ConstantPow at exponent 0: IEEE 754's pow(NaN, 0) = 1); the first that holds applies
    nan_results: tuple = ()

    def __post_init__(self):
        if self.elementwise and not any(p.kind == "layout" for p in self.properties):
            object.__setattr__(self, "properties", tuple(self.properties) + (layout_invariance(),))

    def standard(self, key: str | None = None) -> Standard:
        return standard_of(self, key)

    @property
    def definition(self) -> Expr:
        return self.standard().formula

    def implementation_for(self, key: str | None = None) -> Expr:
        return self.standard(key).implementation or self.implementation

    def reference_form(self, key: str | None = None) -> Expr:
        s = self.standard(key)
        return s.reference_form or s.formula

    def attribute(self, name: str) -> Attribute:
        return next(a for a in self.attributes if a.name == name)

    @property
    def dtypes(self) -> tuple[str, ...]:
        """Every data type some standard allows, in a stable order."""
        seen = []
        for s in self.standards:
            for sup in s.support:
                for d in sup.dtypes:
                    if d not in seen:
                        seen.append(d)
        order = [
            "float16",
            "bfloat16",
            "float32",
            "float64",
            "int8",
            "int16",
            "int32",
            "int64",
            "uint8",
            "uint16",
            "uint32",
            "uint64",
        ]
        return tuple(sorted(seen, key=order.index))

    @property
    def integer_dtypes(self) -> tuple[str, ...]:
        return tuple(d for d in self.dtypes if d.startswith(("int", "uint"))) if self.integer else ()

    def nan_result(self, attrs: dict) -> float:
        """What a NaN input gives at these attributes: NaN, or the value of the first of `nan_results` whose
        condition holds."""
        for condition, value in self.nan_results:
            try:
                if eval_rational(condition, Fraction(0), attrs):
                    return float(value)
            except KeyError:  # a condition on an attribute this standard does not have
                continue
        return float("nan")

    def limit(self, side: int, attrs: dict) -> Limit:
        for lim in self.limits:
            if lim.side != side:
                continue
            try:
                holds = lim.condition is None or eval_rational(lim.condition, Fraction(0), attrs)
            except KeyError:  # a condition on an attribute this standard does not have
                holds = False
            if holds:
                return lim
        raise ValueError(f"{self.name} declares no limit at {side:+d}*inf for {attrs}")
