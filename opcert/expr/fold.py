"""One walk over an expression, parameterised by a domain: what a variable, an attribute, a constant,
an arithmetic operation, a comparison, a connective, a select and a primitive mean there.

An interpreter of the expression language is a `Domain`; `fold(e, domain)` evaluates e in it. The node
kinds are a partition of the language's operations (`KINDS`; tests/test_fold.py checks that every
operation of `ARITY` has exactly one kind), so a new operation is either one more case of a kind every
domain already handles (a primitive: a row of expr.primitives) or a new kind that every domain must say
something about. The domains (tests/test_fold.py lists them): NumPy's two (expr.numpy_eval) and the code
generator of the compiled implementation (expr.compiled_eval), the exact
reference's rationals, tiny-argument enclosures and Arb balls (numerics.exact), the binary64 ball over arrays
and its code generator (numerics.ball, numerics.ball_compiled: both run the rules of numerics.ball_rules), the
midpoints a block's compiled kernel is given (numerics.ball_compiled), the one-sided decision
(numerics.one_sided), the provers' rounded intervals, spans and monotonicity directions, and the z3 models
over floats and reals (verify.proofs); and the analyses that give a node a meaning too: which primitives a
compiled loop needs and which every element reaches (expr.compiled_eval), which nodes a block reaches
(numerics.ball_compiled), what the one-sided decision can take on (numerics.one_sided: supported, the sign
and bound of a product, a condition on the attributes). A question of which operations occur is a search
over Expr.nodes(), not a fold (Expr.uses).
"""

from __future__ import annotations

from opcert.expr import ARITY, PRIMITIVES, REDUCTIONS, Expr

LEAVES = frozenset({"var", "attr", "const"})
ARITHMETIC = frozenset({"neg", "abs", "add", "sub", "mul", "div", "min", "max", "fma"})
COMPARISONS = frozenset({"lt", "le", "gt", "ge", "eq"})
CONNECTIVES = frozenset({"and", "or", "not"})
KINDS = {
    "leaf": LEAVES,
    "arithmetic": ARITHMETIC,
    "comparison": COMPARISONS,
    "connective": CONNECTIVES,
    "select": frozenset({"select"}),
    "isnan": frozenset({"isnan"}),
    "primitive": frozenset(PRIMITIVES),
    "power": frozenset({"pow"}),
    "reduction": REDUCTIONS,
}


class NoRows(ValueError):
    """An element-wise interpreter met a reduction over a row (a tensor operator's expression)."""


class Domain:
    """An interpreter's meaning of each kind of node. `walk` evaluates a child in the same domain (select
    and isnan get it, to evaluate lazily: a branch not taken is not evaluated). A domain whose `memo` is a
    dict has each node computed once per fold (a subexpression written twice: Mish's exp(x), four times)."""

    memo: dict | None = None

    def var(self, e: Expr):
        raise NotImplementedError

    def attr(self, e: Expr):
        raise NotImplementedError

    def const(self, e: Expr):
        raise NotImplementedError

    def arithmetic(self, op: str, args: list, node: Expr | None = None):
        """node: the expression node, for a domain whose rule depends on its operands' form."""
        raise NotImplementedError

    def compare(self, op: str, a, b):
        raise NotImplementedError

    def connective(self, op: str, args: list):
        """Python truth values: the decided comparisons of a numeric domain."""
        if op == "and":
            return args[0] and args[1]
        if op == "or":
            return args[0] or args[1]
        return not args[0]

    def select(self, e: Expr, walk):
        return walk(e.args[1]) if walk(e.args[0]) else walk(e.args[2])

    def isnan(self, e: Expr, walk):
        """Real-valued domains have no NaN: a NaN input is decided apart (the reference's special values)."""
        return False

    def primitive(self, p, a, node: Expr | None = None):
        """node: the expression node, for a domain that keeps facts about nodes (the code generator)."""
        raise NotImplementedError

    def power(self, a, b, node: Expr | None = None):
        """a^b (expr.power; its facts in expr.pow_record): C's pow in floating point, the real power where it is defined (the node's doc)."""
        raise NotImplementedError

    def reduction(self, e: Expr, walk):
        """rowsum, rowmax, rowfirstmax over the row the element sits in. `walk` evaluates e's argument
        in this domain (a domain over whole rows reduces what it gives); a domain of one element at a time
        evaluates the argument at each element of its row itself."""
        raise NotImplementedError


def element_wise_only(self, e: Expr, walk):
    """`reduction` of a domain that interprets one element on its own: it refuses, naming itself."""
    raise NoRows(
        f"{type(self).__name__} interprets element-wise expressions; {e.op} reduces over a row "
        "(a tensor operator), which it does not model"
    )


def fold(e: Expr, domain: Domain):
    def step(n: Expr):
        op = n.op
        if op == "var":
            return domain.var(n)
        if op == "attr":
            return domain.attr(n)
        if op == "const":
            return domain.const(n)
        if op == "select":
            return domain.select(n, walk)
        if op == "isnan":
            return domain.isnan(n, walk)
        if op in REDUCTIONS:
            return domain.reduction(n, walk)
        args = [walk(a) for a in n.args]
        if op in ARITHMETIC:
            return domain.arithmetic(op, args, n)
        if op in COMPARISONS:
            return domain.compare(op, *args)
        if op in CONNECTIVES:
            return domain.connective(op, args)
        if op in PRIMITIVES:
            return domain.primitive(PRIMITIVES[op], args[0], n)
        if op == "pow":
            return domain.power(args[0], args[1], n)
        raise ValueError(f"{type(domain).__name__}: no meaning for operation {op}")

    memo = domain.memo
    if memo is None:
        walk = step
    else:

        def walk(n: Expr):
            v = memo.get(n, memo)
            if v is memo:
                v = memo[n] = step(n)
            return v

    try:
        return walk(e)
    finally:
        # step and walk refer to each other: unbound, they and what they hold (the domain, its memo of
        # arrays of 10^6 elements) are freed now, not at the next cyclic collection (a proof's 268 million
        # evaluations ran at half speed with the garbage)
        walk = step = None


OVERLOADED = frozenset({"add", "sub", "mul", "neg", "fma"})


def by_operators(op: str, a: list):
    """add, sub, mul, neg and fma through Python's operators: the meaning in every domain whose values
    overload them exactly (rationals, Arb balls, spans, z3 reals)."""
    if op == "add":
        return a[0] + a[1]
    if op == "sub":
        return a[0] - a[1]
    if op == "mul":
        return a[0] * a[1]
    if op == "neg":
        return -a[0]
    return a[0] * a[1] + a[2]  # fma


def kind_of(op: str) -> str:
    (kind,) = [k for k, ops in KINDS.items() if op in ops]
    return kind


assert set().union(*KINDS.values()) == set(ARITY), "every operation of the language has a kind"
