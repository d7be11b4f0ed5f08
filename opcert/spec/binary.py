"""The data that declares a binary element-wise operator: z = f(x, y), both inputs tensors of one format,
broadcast against each other (ONNX's multidirectional broadcasting; DirectML's tensors of equal sizes).

Such an operator is not an element-wise operator of spec/ops/ with an attribute: its second input varies per
element, and its checks enumerate pairs (every pair of 16-bit values: 2^32 of them) rather than values. The
catalog (opcert.spec.BINARY_CATALOG) loads one module per operator from spec/binary_ops/. What a pair's
exact value is, is the operator's `reference` (a function of arrays: spec.pow_reference for Pow); what
opcert's own implementation computes is `implementation`, an expression of x with the second input as the
attribute named by `second`, evaluated by the same interpreters as every other operator's.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass

from opcert.expr import Expr
from opcert.spec.model import Attribute, Support, standard_of, support_at

# What each property kind claims over the pairs; verify.binary decides each on every pair enumerated (a
# 16-bit format's 2^32) or on the sampled pairs and their neighbours.
PAIR_KINDS = {
    "special_cases": "the IEEE 754 special cases of the operator give their value bit for bit (NaN: any NaN)",
    "monotonic_first": "non-decreasing in x (y fixed) where the property's rule says so, non-increasing where it "
    "says so",
    "monotonic_second": "non-decreasing in y (x fixed) where the property's rule says so, non-increasing where it "
    "says so",
    "parity": "f(-x, y) = f(x, y) for an even integer y, -f(x, y) for an odd one, bit for bit",
    "range": "f(x, y) >= 0 where the rule says so",
    "layout": "the same bits when the inputs come broadcast (a row of x against a column of y) as when they come "
    "as two tensors of one shape",
}


@dataclass(frozen=True)
class PairProperty:
    name: str
    kind: str  # PAIR_KINDS
    statement: str
    standards: tuple[str, ...] = ()  # () = every standard


@dataclass(frozen=True)
class BinaryStandard:
    key: str  # "onnx", "directml"
    op_name: str
    document: str
    formula_text: str
    support: tuple[Support, ...]
    attribute_names: dict[str, str]  # opcert's name -> the standard's: the attributes it has (ScaleBias)
    implementation: Expr  # opcert's code: an expression of x, the second input as the attribute `second`
    notes: str = ""
    defaults: dict | None = None

    def support_at(self, level: str | None) -> Support | None:
        return support_at(self.support, level)

    def has(self, attr: str) -> bool:
        return attr in self.attribute_names


@dataclass(frozen=True)
class BinaryOperator:
    name: str
    family: str
    summary: str
    inputs: tuple[str, str]  # the standards' names of the two inputs, as ONNX's ("X", "Y")
    second: str  # the attribute name the implementation's expression reads the second input by
    attributes: tuple[Attribute, ...]  # beside the inputs (DirectML's ScaleBias)
    standards: tuple[BinaryStandard, ...]
    primary: str
    # "module:function" of the reference, f(x, y, fmt, standard key, **attrs) -> the correctly rounded outputs (an
    # array of fmt's dtype), imported at its first use: its compiled kernels load numba, which `import opcert` must not
    reference_at: str
    properties: tuple[PairProperty, ...]
    budget64: float  # opcert's binary64 outputs: within this many ULP (binary16/32 and bfloat16: 0.5)
    runtimes: dict  # the library function torch and JAX call, by runtime ({"torch": RuntimeMap("torch.pow")})
    elementwise = False  # not an operator of spec/ops/: the element-wise checks' keys do not apply (gating.config)

    def reference(self, x, y, fmt, standard: str = "onnx", **attrs):
        """The correctly rounded f(x, y) of every pair (the module `reference_at` names)."""
        return _resolve(self.reference_at)(x, y, fmt, standard, **attrs)

    def standard(self, key: str | None):
        return standard_of(self, key)

    def properties_of(self, key: str) -> tuple[PairProperty, ...]:
        return tuple(p for p in self.properties if not p.standards or key in p.standards)


@functools.cache
def _resolve(at: str):
    module, _, name = at.partition(":")
    return getattr(importlib.import_module(module), name)
