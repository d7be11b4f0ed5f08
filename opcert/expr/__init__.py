"""One small expression language for operator definitions and implementations.

An operator's formula is written once as an `Expr` tree and interpreted several
ways: in floating point with NumPy (`opcert.expr.numpy_eval`); exactly, in
rationals and Arb balls (`opcert.numerics.exact`, `opcert.numerics.ball` and its
compiled form `opcert.numerics.ball_compiled`, `opcert.numerics.one_sided`); as
intervals for the proofs (`opcert.verify.proofs.interval`, `monotone`,
`real_monotone`); and as z3 models (`opcert.verify.proofs.fp_model`,
`real_model`). Most of them are domains of one walk (`opcert.expr.fold`):
each says what a constant, an operation, a comparison, a select and a
primitive mean there. The primitives (tanh, exp, ...) are declared once, one
record each, in `opcert.expr.primitives`. The operations are those of FPCore (FPBench), to
which `to_fpcore` exports an expression.

Semantics shared by every interpreter:
- `min`/`max` are IEEE 754-2019 minimum/maximum: a NaN operand gives NaN, and
  -0 < +0.
- comparisons with a NaN operand are false; `select(c, a, b)` is `a` where c.
- `fma(a, b, c)` is a*b + c rounded once.
- the reductions `rowsum(e)`, `rowmax(e)` and `rowfirstmax(e)` range over the row the
  element sits in (the tensor operators: Softmax reduces over axes): inside them `x`
  is each element x_j of the row in turn, outside them the element x_i itself.
  rowsum is the exact sum, rowmax the IEEE maximum (NaN if any is NaN),
  rowfirstmax is true at the first j where e(x_j) is the row's maximum. An
  element-wise interpreter (the provers, the compiled ball) refuses them by name.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from flint import arb, ctx

from opcert.expr.primitives import REGISTRY as PRIMITIVES
from opcert.formats import FLOAT_FORMATS, round_fraction

ARITY = {
    "var": 0,
    "attr": 0,
    "const": 0,
    "neg": 1,
    "abs": 1,
    "isnan": 1,
    "add": 2,
    "sub": 2,
    "mul": 2,
    "div": 2,
    "min": 2,
    "max": 2,
    "lt": 2,
    "le": 2,
    "gt": 2,
    "ge": 2,
    "eq": 2,
    "and": 2,
    "or": 2,
    "not": 1,
    "fma": 3,
    "pow": 2,
    "select": 3,
    "rowsum": 1,
    "rowmax": 1,
    "rowfirstmax": 1,
    **{name: 1 for name in PRIMITIVES},
}
REDUCTIONS = frozenset({"rowsum", "rowmax", "rowfirstmax"})
TRANSCENDENTAL = frozenset(PRIMITIVES)
BOOLEAN = frozenset({"lt", "le", "gt", "ge", "eq", "isnan", "and", "or", "not", "rowfirstmax"})


@dataclass(frozen=True)
class Named:
    """An irrational constant the standards write by name: sqrt(2/pi), 1/sqrt(2).
    The exact specification uses the real number (an Arb enclosure); NumPy uses
    its correctly rounded binary64 value; z3 uses a real variable bounded by a
    rational enclosure 2^-80 wide, with its algebraic identities where it has some."""

    name: str
    ball: object  # prec -> flint.arb
    square: Fraction | None = None  # c^2, when rational

    def value64(self) -> float:
        """The correctly rounded binary64 value."""
        if self.name in _VALUE64:
            return _VALUE64[self.name]
        lo, hi = self.enclosure(200)
        f64 = FLOAT_FORMATS["float64"]
        a, b = round_fraction(lo, f64), round_fraction(hi, f64)
        assert a == b, f"{self.name}: enclosure too wide to round"
        _VALUE64[self.name] = a
        return a

    def enclosure(self, bits: int = 80) -> tuple[Fraction, Fraction]:
        saved = ctx.prec
        try:
            ctx.prec = bits + 20
            b = self.ball(bits + 20)
            lo, hi = b.lower().man_exp(), b.upper().man_exp()
            return (Fraction(int(lo[0])) * Fraction(2) ** int(lo[1]), Fraction(int(hi[0])) * Fraction(2) ** int(hi[1]))
        finally:
            ctx.prec = saved


_VALUE64: dict = {}


def _sqrt_2_over_pi(prec):
    return (2 / arb.pi()).sqrt()


def _inv_sqrt2(prec):
    return 1 / arb(2).sqrt()


def _half_pi(prec):
    return arb.pi() / 2


def _pi(prec):
    return arb.pi()


NAMED = {
    c.name: c
    for c in (
        Named("sqrt(2/pi)", _sqrt_2_over_pi),
        Named("1/sqrt(2)", _inv_sqrt2, Fraction(1, 2)),
        Named("pi/2", _half_pi),
        Named("pi", _pi),
    )
}


@dataclass(frozen=True)
class Expr:
    op: str
    args: tuple = ()
    name: str | None = None  # for var and attr; for a named irrational constant
    value: Fraction | None = None  # for a rational const

    def __post_init__(self):
        if self.op not in ARITY or len(self.args) != ARITY[self.op]:
            raise ValueError(f"bad expression node {self.op}/{len(self.args)}")

    def __hash__(self):
        # cached: the NumPy interpreter memoises subexpressions by value, and a frozen
        # dataclass rehashes the whole subtree each time (111 hashes per block of ScaledTanh)
        try:
            return self.__dict__["_hash"]
        except KeyError:
            h = hash((self.op, self.args, self.name, self.value))
            object.__setattr__(self, "_hash", h)
            return h

    def __getstate__(self):
        # a hash is only valid in the process that computed it (string hashing is salted)
        return {k: v for k, v in self.__dict__.items() if k != "_hash"}

    def __setstate__(self, state):
        for k, v in state.items():
            object.__setattr__(self, k, v)

    # Operator overloading keeps the catalog readable: alpha * tanh(beta * x).
    def __add__(self, o):
        return Expr("add", (self, lift(o)))

    def __radd__(self, o):
        return Expr("add", (lift(o), self))

    def __sub__(self, o):
        return Expr("sub", (self, lift(o)))

    def __rsub__(self, o):
        return Expr("sub", (lift(o), self))

    def __mul__(self, o):
        return Expr("mul", (self, lift(o)))

    def __rmul__(self, o):
        return Expr("mul", (lift(o), self))

    def __truediv__(self, o):
        return Expr("div", (self, lift(o)))

    def __rtruediv__(self, o):
        return Expr("div", (lift(o), self))

    def __neg__(self):
        return Expr("neg", (self,))

    def __lt__(self, o):
        return Expr("lt", (self, lift(o)))

    def __le__(self, o):
        return Expr("le", (self, lift(o)))

    def __gt__(self, o):
        return Expr("gt", (self, lift(o)))

    def __ge__(self, o):
        return Expr("ge", (self, lift(o)))

    def __str__(self) -> str:
        return to_infix(self)

    def nodes(self):
        yield self
        for a in self.args:
            yield from a.nodes()

    def uses(self, op: str) -> bool:
        return any(n.op == op for n in self.nodes())

    def attributes(self) -> set[str]:
        return {n.name for n in self.nodes() if n.op == "attr"}


def lift(v) -> Expr:
    if isinstance(v, Expr):
        return v
    if isinstance(v, bool):
        raise TypeError("booleans are not expression constants")
    return const(v)


def var(name: str = "x") -> Expr:
    return Expr("var", name=name)


def attr(name: str) -> Expr:
    return Expr("attr", name=name)


def const(v) -> Expr:
    """A rational constant. A float is taken at its exact binary64 value: write
    decimals the standards print (0.044715) as strings, which are exact."""
    if isinstance(v, str) and v in NAMED:
        return Expr("const", name=v)
    return Expr("const", value=Fraction(v))


def named(name: str) -> Expr:
    if name not in NAMED:
        raise ValueError(f"unknown named constant {name!r}; known: {', '.join(NAMED)}")
    return Expr("const", name=name)


def _unary(op):
    def build(a) -> Expr:
        return Expr(op, (lift(a),))

    build.__name__ = op
    return build


# one constructor per primitive of the table (`from opcert.expr import exp`): a new record adds its own
globals().update({_name: _unary(_name) for _name in PRIMITIVES})
exp, expm1, tanh, log1p, log, erf, erfc, sqrt = (
    globals()[n]
    for n in ("exp", "expm1", "tanh", "log1p", "log", "erf", "erfc", "sqrt")  # named here for readers and linters
)
sinh, asinh, atan, asin, acos, atanh, acosh = (
    globals()[n] for n in ("sinh", "asinh", "atan", "asin", "acos", "atanh", "acosh")
)
sin, cos, tan, cosh, floor = (globals()[n] for n in ("sin", "cos", "tan", "cosh", "floor"))


def isnan(a) -> Expr:
    return Expr("isnan", (lift(a),))


def power(a, b) -> Expr:
    """a^b (C's pow): over the reals, defined for a > 0; at a = 0 for b >= 0 (0^0 = 1); for a < 0 where b is an
    integer, (-1)^b |a|^b; a pole at a = 0 for b < 0. Elsewhere (a < 0, b not an integer) IEEE 754's NaN. In
    floating point the platform's binary64 pow (expr.pow_record: its contract)."""
    return Expr("pow", (lift(a), lift(b)))


def minimum(a, b) -> Expr:
    return Expr("min", (lift(a), lift(b)))


def maximum(a, b) -> Expr:
    return Expr("max", (lift(a), lift(b)))


def fma(a, b, c) -> Expr:
    return Expr("fma", (lift(a), lift(b), lift(c)))


def select(c, a, b) -> Expr:
    return Expr("select", (c, lift(a), lift(b)))


def eq(a, b) -> Expr:
    return Expr("eq", (lift(a), lift(b)))


def both(a, b) -> Expr:
    return Expr("and", (a, b))


def either(a, b) -> Expr:
    return Expr("or", (a, b))


def negate(a) -> Expr:
    return Expr("not", (a,))


def absolute(a) -> Expr:
    return Expr("abs", (lift(a),))


def rowsum(a) -> Expr:
    return Expr("rowsum", (lift(a),))


def rowmax(a) -> Expr:
    return Expr("rowmax", (lift(a),))


def rowfirstmax(a) -> Expr:
    return Expr("rowfirstmax", (lift(a),))


def reduces(e: Expr) -> bool:
    """Whether e reduces over a row (a tensor operator's expression)."""
    return any(n.op in REDUCTIONS for n in e.nodes())


def parity(e: Expr) -> str | None:
    """ "odd" where the real function x -> e(x) satisfies e(-x) = -e(x) wherever it is
    defined, "even" where e(-x) = e(x), None where these rules cannot tell (they
    are structural: x is odd, a constant even, and parity passes through negation,
    sums, products, quotients and the primitives' own oddness or evenness). The float32
    sweep takes the reference of -x from the one of x where this says so."""
    op, a = e.op, e.args
    if op == "var":
        return "odd"
    if op in ("const", "attr"):
        return "even"
    if op == "neg":
        return parity(a[0])
    if op == "abs":
        return "even" if parity(a[0]) else None
    if op in ("add", "sub"):
        p, q = parity(a[0]), parity(a[1])
        return p if p == q else None
    if op in ("mul", "div"):
        p, q = parity(a[0]), parity(a[1])
        return None if p is None or q is None else ("even" if p == q else "odd")
    if op == "fma":
        return parity(Expr("add", (Expr("mul", a[:2]), a[2])))
    if op == "pow":  # a^n for a constant integer n: n's parity
        n = a[1].value if a[1].op == "const" and a[1].name is None else None
        p = parity(a[0])
        if n is None or n.denominator != 1 or p is None:
            return None
        return "even" if p == "even" or n % 2 == 0 else "odd"
    if op in PRIMITIVES:
        p, f = parity(a[0]), PRIMITIVES[op]
        if p == "even" or (p == "odd" and f.even):
            return "even"
        return "odd" if p == "odd" and f.odd else None
    if op == "select":
        if _odd_extension(e):
            return "odd"
        if _even_condition(a[0]):  # the same branch is taken at x and -x
            p, q = parity(a[1]), parity(a[2])
            return p if p == q else None
    return None  # min, max, other selects, comparisons: not decided structurally


_COMPARISONS = ("lt", "le", "gt", "ge", "eq")


def _even_condition(c: Expr) -> bool:
    """c(-x) = c(x): a comparison of even terms (|x| >= 2^52, mode == 0), or and/or/not of such."""
    if c.op in _COMPARISONS:
        return parity(c.args[0]) == "even" and parity(c.args[1]) == "even"
    if c.op in ("and", "or", "not"):
        return all(_even_condition(b) for b in c.args)
    return False


def _substitute(e: Expr, old: Expr, new: Expr) -> Expr:
    if e == old:
        return new
    if not e.args:
        return e
    return Expr(e.op, tuple(_substitute(b, old, new) for b in e.args), e.name, e.value)


def _odd_extension(e: Expr) -> bool:
    """e is select(x < 0, -r(-x), select(x > 0, r(x), x)) for some r: r on x > 0 extended as an odd function, +-0
    and NaN being x itself (Round's forms)."""
    c, neg_side, rest = e.args
    if c.op != "lt" or c.args[0].op != "var" or c.args[1] != Expr("const", value=Fraction(0)):
        return False
    x = c.args[0]
    if rest.op != "select" or rest.args[0] != Expr("gt", (x, c.args[1])) or rest.args[2] != x:
        return False
    r_pos = rest.args[1]
    return neg_side.op == "neg" and neg_side.args[0] == _substitute(r_pos, x, Expr("neg", (x,)))


_INFIX = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "eq": "==",
    "and": "and",
    "or": "or",
}


def to_infix(e: Expr) -> str:
    if e.op in ("var", "attr"):
        return e.name
    if e.op == "const" and e.name is not None:
        return e.name
    if e.op == "const":
        v = e.value
        if v.numerator == 1 and v.denominator > 1 and v.denominator & (v.denominator - 1) == 0:
            return f"2^-{v.denominator.bit_length() - 1}"
        return str(v.numerator) if v.denominator == 1 else f"({v})"
    if e.op in _INFIX:
        return f"({to_infix(e.args[0])} {_INFIX[e.op]} {to_infix(e.args[1])})"
    if e.op == "neg":
        return f"-{to_infix(e.args[0])}"
    if e.op == "not":
        return f"not {to_infix(e.args[0])}"
    if e.op == "select":
        c, a, b = (to_infix(x) for x in e.args)
        return f"({a} if {c} else {b})"
    return f"{e.op}({', '.join(to_infix(a) for a in e.args)})"


_FPCORE = {
    "add": "+",
    "sub": "-",
    "mul": "*",
    "div": "/",
    "neg": "-",
    "abs": "fabs",
    "lt": "<",
    "le": "<=",
    "gt": ">",
    "ge": ">=",
    "eq": "==",
    "select": "if",
    "min": "fmin",
    "max": "fmax",
    "and": "and",
    "or": "or",
    "not": "not",
}


def to_fpcore(e: Expr, name: str, variables=("x",), attributes=()) -> str:
    """Export as an FPCore benchmark. FPCore's fmin/fmax ignore NaN operands,
    unlike this language's min/max; the export says so in a property."""
    if reduces(e):
        raise ValueError(f"FPCore has no reduction over a row: {to_infix(e)} cannot be exported")

    def walk(n: Expr) -> str:
        if n.op in ("var", "attr"):
            return n.name
        if n.op == "const" and n.name is not None:
            return {"sqrt(2/pi)": "(sqrt (/ 2 PI))", "1/sqrt(2)": "(/ 1 (sqrt 2))"}[n.name]
        if n.op == "const":
            return (
                str(n.value.numerator) if n.value.denominator == 1 else f"(/ {n.value.numerator} {n.value.denominator})"
            )
        head = _FPCORE.get(n.op, n.op)
        if n.op == "isnan":
            head = "isnan"
        return f"({head} {' '.join(walk(a) for a in n.args)})"

    args = " ".join(list(variables) + list(attributes))
    return f'(FPCore ({args})\n  :name "{name}"\n  :opcert-minmax "ieee-754-2019-minimum-maximum"\n  {walk(e)})'
