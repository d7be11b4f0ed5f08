"""The one walk over expressions (opcert.expr.fold) and the interpreters that are domains of it."""

import importlib
from fractions import Fraction

import pytest

from opcert.expr import ARITY
from opcert.expr.fold import KINDS, Domain, fold, kind_of

DOMAINS = [
    ("opcert.numerics.exact", "RationalDomain"),
    ("opcert.numerics.exact", "TinyDomain"),
    ("opcert.numerics.exact", "ArbDomain"),
    ("opcert.verify.proofs.interval", "RoundedDomain"),
    ("opcert.verify.proofs.real_monotone", "SpanDomain"),
    ("opcert.verify.proofs.fp_model", "_FPDomain"),
    ("opcert.verify.proofs.real_model", "_RealDomain"),
    ("opcert.verify.proofs.monotone", "DirectionDomain"),
    ("opcert.expr.numpy_eval", "NumpyDomain"),
    ("opcert.expr.numpy_eval", "PlainDomain"),
    ("opcert.numerics.ball", "Balls"),
    ("opcert.numerics.ball_compiled", "_Gen"),
    ("opcert.numerics.one_sided", "OneSided"),
    ("opcert.expr.compiled_eval", "_Code"),
    ("opcert.numerics.ball_compiled", "Midpoints"),
    # analyses: which primitives a loop needs, which nodes a block reaches, what one_sided can take on
    ("opcert.expr.compiled_eval", "_Primitives"),
    ("opcert.numerics.ball_compiled", "_Reached"),
    ("opcert.numerics.one_sided", "_Supported"),
    ("opcert.numerics.one_sided", "_SignBound"),
    ("opcert.numerics.one_sided", "_AttrCondition"),
]
REQUIRED = ("var", "attr", "const", "arithmetic", "compare", "primitive", "power", "reduction")
ROWS = {"NumpyDomain", "PlainDomain", "Balls", "RationalDomain", "ArbDomain", "TinyDomain"}  # reduce over rows
NOT_KNOWN = {"_Supported", "_SignBound", "_AttrCondition"}  # say "not known" of a reduction, as of any node


def test_every_operation_has_exactly_one_kind():
    for op in ARITY:
        assert sum(op in ops for ops in KINDS.values()) == 1, op
        assert kind_of(op) in KINDS


@pytest.mark.parametrize("module, name", DOMAINS)
def test_every_domain_gives_every_kind_a_meaning(module, name):
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, Domain)
    missing = [m for m in REQUIRED if getattr(cls, m) is getattr(Domain, m)]
    assert missing == [], f"{name} says nothing about {missing}"


@pytest.mark.parametrize("module, name", DOMAINS)
def test_an_element_wise_domain_refuses_a_row_by_name(module, name):
    """A domain that interprets one element on its own says so when it meets rowsum; the others reduce."""
    from opcert.expr import rowsum, var
    from opcert.expr.fold import NoRows, element_wise_only

    cls = getattr(importlib.import_module(module), name)
    assert (cls.reduction is element_wise_only) == (name not in ROWS | NOT_KNOWN)
    if name not in ROWS | NOT_KNOWN:
        with pytest.raises(NoRows, match=name):
            cls.reduction(object.__new__(cls), rowsum(var("x")), None)


def test_a_domain_that_lacks_a_kind_fails_loudly():
    class Half(Domain):
        def var(self, e):
            return Fraction(1, 2)

    from opcert.expr import exp, var

    with pytest.raises(NotImplementedError):
        fold(exp(var("x")), Half())


def test_select_walks_only_the_branch_taken():
    """A branch not taken is not evaluated (log of a negative number there raises in the exact domains)."""
    from opcert.expr import const, log, select, var
    from opcert.numerics.exact import Undefined, eval_ball, eval_rational

    x = var("x")
    e = select(x < 0, x, log(x))
    assert eval_rational(e, Fraction(-3), {}) == Fraction(-3)
    assert eval_ball(e, Fraction(-3), {}, 64) == -3
    with pytest.raises(Undefined):
        eval_rational(select(x < 0, log(x), const(0)), Fraction(-3), {})


def test_a_fold_leaves_nothing_for_the_cyclic_collector():
    """The walk's closures refer to each other; fold unbinds them, so the domain and the arrays it holds are
    freed when the call returns (held until a cyclic collection, a proof over 268 million inputs ran at half
    speed)."""
    import gc
    import weakref

    import numpy as np

    from opcert.expr import exp, var
    from opcert.expr.numpy_eval import NumpyDomain

    x = var("x")
    d = NumpyDomain(np.linspace(-1, 1, 1000), {})
    ref = weakref.ref(d)
    enabled = gc.isenabled()
    gc.disable()
    try:
        fold(exp(x) * exp(x) + x, d)
        del d
        assert ref() is None
    finally:
        if enabled:
            gc.enable()
