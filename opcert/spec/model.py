"""The data that declares an operator. Every layer reads these records."""
from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

from ..expr import Expr


@dataclass(frozen=True)
class Domain:
    """The allowed values of an attribute (always a finite binary32 value)."""
    lower: float | None = None       # None: unbounded below
    lower_open: bool = False         # True: lower itself is excluded
    description: str = "any finite binary32 value"

    def contains(self, v: Fraction) -> bool:
        if self.lower is None:
            return True
        return v > Fraction(self.lower) if self.lower_open else v >= Fraction(self.lower)


@dataclass(frozen=True)
class Attribute:
    name: str                                  # ONNX spelling
    doc: str
    domain: Domain = Domain()
    aliases: tuple[str, ...] = ()              # DirectML and other spellings


@dataclass(frozen=True)
class Support:
    """Data types and dimension counts from one version or feature level on."""
    since: str                                 # ONNX opset or DirectML feature level
    dtypes: tuple[str, ...]
    ranks: tuple[int, int] | None = None       # inclusive; None: any rank


@dataclass(frozen=True)
class Standard:
    key: str                                   # "onnx", "directml", "sonnx"
    op_name: str                               # the standard's own name of the operator
    document: str                              # where the text comes from
    formula_text: str                          # the formula as the standard writes it
    formula: Expr                              # the same formula, as an expression
    defaults: dict[str, float]                 # attribute defaults, by ONNX name
    attribute_names: dict[str, str]            # ONNX name -> this standard's name
    support: tuple[Support, ...]               # ascending by `since`
    in_place: bool = True
    notes: str = ""

    def support_at(self, level: str | None) -> Support | None:
        """The support table in force at `level` (the newest one when None)."""
        if level is None:
            return self.support[-1]
        chosen = None
        for s in self.support:
            if version_key(s.since) <= version_key(level):
                chosen = s
        return chosen


def version_key(v: str) -> tuple[int, ...]:
    return tuple(int(p) for p in str(v).split("."))


# Property kinds. Every kind is decided at the specification level (z3 over the
# reals), on opcert's implementation (z3 models and enumeration), and on any
# black-box target (every input enumerated, or samples): see verify/properties.py.
KINDS = {
    "range": "lower <= f(x) <= upper (either side may be absent), for x in the domain",
    "monotonic": "non-decreasing over the domain",
    "odd": "f(-x) = -f(x)",
    "point_symmetry": "f(-x) = center - f(x)",
    "exact_point": "f(p) = v at each declared point",
    "constant": "f(x) = value for every x in the domain (dead zones, saturation)",
    "limit": "f(+-inf) is the operator's limit, zero sign included",
    "nan_propagation": "a NaN input gives a NaN output",
    "continuity": "the real function is continuous at the declared points (a property of the exact definition)",
}
SPEC_ONLY = frozenset({"continuity"})


@dataclass(frozen=True)
class Property:
    """A mathematical property the operator declares.

    `condition` is a boolean expression over the attributes under which the
    property is claimed (None: always). `domain` restricts x to [lo, hi]
    (closed; None: unbounded on that side), both expressions over the
    attributes. Bounds, points, values and centers are expressions over the
    attributes. `holds = False` declares that the property does NOT hold (Gelu
    is not monotone): provers then look for the counterexample. `zero_sign`
    (odd): f(-x) = -f(x) bit for bit, zeros' signs included; else as values.
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

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"property {self.name}: unknown kind {self.kind!r}")

    @property
    def spec_only(self) -> bool:
        """A property of the real function that no float kernel can be checked for."""
        return self.kind in SPEC_ONLY

    @property
    def bounded_domain(self) -> bool:
        return self.domain != (None, None)


@dataclass(frozen=True)
class Operator:
    name: str                                   # ONNX spelling
    summary: str
    attributes: tuple[Attribute, ...]
    standards: tuple[Standard, ...]
    primary: str                                # key of the standard the reference follows by default
    implementation: Expr                        # what opcert runs and proves
    fast_reference: Expr                        # well-conditioned float64 formula (see spec.reference)
    fast_reference_rel_error: Fraction          # bound on its relative error in binary64
    limits: Callable[[int, dict], Fraction | float]  # f(x) as x -> sign*inf
    special_points: Callable[[dict, object], list[Fraction]]  # (attrs, format) -> branch points, thresholds
    properties: tuple[Property, ...] = ()
    integer_semantics: str = ""                 # how integer inputs are handled, if any
    standards_differ_where: Expr | None = None  # attribute region where the standards' definitions differ
    notes: str = ""
    family: str = ""
    extra: dict = field(default_factory=dict)

    def standard(self, key: str | None = None) -> Standard:
        key = key or self.primary
        for s in self.standards:
            if s.key == key:
                return s
        from ..errors import UsageError, choices
        raise UsageError(f"{self.name} is not defined by standard {key!r}; "
                         f"it is defined by: {choices(s.key for s in self.standards)}")

    @property
    def definition(self) -> Expr:
        return self.standard().formula

    @property
    def dtypes(self) -> tuple[str, ...]:
        """Every data type some standard allows, in a stable order."""
        seen = []
        for s in self.standards:
            for sup in s.support:
                for d in sup.dtypes:
                    if d not in seen:
                        seen.append(d)
        order = ["float16", "bfloat16", "float32", "float64", "int8", "int16", "int32",
                 "int64", "uint8", "uint16", "uint32", "uint64"]
        return tuple(sorted(seen, key=order.index))
