"""opcert's implementation compiled: the NumPy interpretation (expr.numpy_eval) of an element-wise
expression, computed with a few loops over the inputs instead of a NumPy pass and a temporary per node.

Why: a float32 sweep against opcert runs opcert's implementation on 2^32 inputs, and its layout check
on 2 x 10^9 more. A NumPy pass and temporary per node made the arithmetic-heavy implementations
(HardSigmoid, Celu) slower than these loops; where a primitive is most of the time (Gelu's erfc) the loops
save little (bench/impl_compiled.py; bench/README.md, 'Figures behind choices in the code').

What is computed is numpy_eval's, value for value (tests/test_compiled_eval.py holds the two to the same
bits on every operator, standard and format, on special values, every binary16 input and random ones):

- the arithmetic, comparisons and selects are IEEE binary64 operations, one element at a time, in the
  order the expression gives (numba without fast-math: no contraction, no reassociation); min and max
  are numpy_eval's IEEE minimum and maximum (expr.compiled_ops); fma is numpy_eval's choice, a*b + c where
  its product is of two leaves and the input has at most 26 bits, else the fused multiply-add;
- each primitive (exp, tanh, ...) is the platform function numpy_eval calls (its record's `numpy`), called
  by NumPy on the whole block, on its argument computed by a loop beforehand; a primitive no element of
  the block reaches (the branch of a select none takes: Mish's tanh on a block of negative inputs) is not
  called, as numpy_eval does not call it;
- a subexpression of the attributes alone (no x) is numpy_eval's own value, computed once a call.

NaN payloads are not part of the implementation's meaning (nothing compares them: formats.bits_differ):
where both operands of an operation are NaN the CPU keeps one, and which one may differ.

The generated source is cached like the compiled balls (jit.load_generated); it does not depend on the
attributes' values, which the kernels read from an array.
"""

from __future__ import annotations

import collections
import functools
import hashlib
import math
import sys
import threading
from pathlib import Path

import numpy as np

from opcert.expr import BOOLEAN, PRIMITIVES, REDUCTIONS, Expr, compiled_ops, fma_kernel
from opcert.expr.fold import Domain, element_wise_only, fold
from opcert.expr.numpy_eval import NumpyDomain, const_value, fma_as_mul_add, uses_x
from opcert.expr.pow_record import numpy_power
from opcert.expr.primitives import argument_is_input, platform_array
from opcert.jit import load_generated

_ENABLED = True  # bench/impl_compiled.py and the tests turn it off to time or check numpy_eval alone


class NoLoopCode(Exception):
    """An expression the generator has no code for (a reduction over rows): numpy_eval runs it."""


def float_literal(v: float) -> str:
    """Python source for a binary64 value in generated code (which defines INF and imports math)."""
    v = float(v)
    if math.isnan(v):
        return "math.nan"
    if math.isinf(v):
        return "INF" if v > 0 else "-INF"
    return repr(v)  # Python's repr of a float reads back as the same float


_lit = float_literal


@functools.cache
def _has_primitive(e: Expr) -> bool:
    return any(_is_call(n) for n in e.nodes())


# pow(a, b) with b of the attributes alone is computed as a primitive is, by NumPy on the whole block (np.power on
# a's values and b's): NumPy's binary64 pow is SVML's where it has AVX-512 loops, numba's math.pow the C library's,
# other bits. An exponent that varies with x has no loop (numpy_eval runs it).
def _is_call(e: Expr) -> bool:
    return e.op in PRIMITIVES or e.op == "pow"


class _Primitives(Domain):
    """The primitive nodes of an expression in the order their values are needed (an argument's before it),
    each once (`found`); with branches=False, only those every element reaches (none under a select's
    branch)."""

    def __init__(self, branches: bool):
        self.branches = branches
        self.found: list[Expr] = []
        self.memo = {}

    def var(self, e):
        return None

    attr = const = var

    def arithmetic(self, op, args, node=None):
        return None

    def compare(self, op, a, b):
        return None

    def connective(self, op, args):
        return None

    def isnan(self, e, walk):
        walk(e.args[0])

    def select(self, e, walk):
        for a in e.args if self.branches else e.args[:1]:
            walk(a)

    def primitive(self, p, a, node=None):
        self.found.append(node)

    reduction = element_wise_only  # _Plan refuses a reduction first (NoLoopCode)

    def power(self, a, b, node=None):
        self.found.append(node)


def _primitives(e: Expr, branches: bool) -> list[Expr]:
    d = _Primitives(branches)
    fold(e, d)
    return d.found


def _boolean(e: Expr) -> bool:
    return e.op in BOOLEAN or (e.op == "select" and _boolean(e.args[1]))


class _Plan:
    """The expression rewritten for the generator, and what the caller computes for it: `slots`, the
    subexpressions of the attributes alone, each replaced by attr("__u<k>") (numpy_eval computes them
    once a call); each fma that numpy_eval computes as a*b + c rewritten so; `prims`, the primitive
    nodes in the order their values are needed (an argument's primitives before it)."""

    def __init__(self, e: Expr, input_bits: int):
        self.slots: list[Expr] = []
        self.memo: dict = {}
        self.root = self._rewrite(e, input_bits)
        self.prims = _primitives(self.root, branches=True)
        # the primitives every element reaches (none under a select's branch)
        self.always = {self.prims.index(n) for n in _primitives(self.root, branches=False)}
        # the primitives a block may not reach (under a select's branch): the reach loop looks
        self.flags = [k for k in range(len(self.prims)) if k not in self.always]
        self.groups: list[list[int]] = []  # the flags, by the truth values that reach them (_reach_kernel)
        self.of_prim: dict[int, int] = {}  # primitive k's argument is primitive j's value: no loop
        self.args: dict[int, list[int]] = {}  # primitive k's argument loop, and the primitives it reads
        self.used: list[int] = []  # the primitives the result loop reads

    def _rewrite(self, e: Expr, input_bits: int) -> Expr:
        """A rewrite (Expr to Expr), walked here, not folded: a subexpression of the attributes alone becomes
        a slot before its inside is visited, where a fold would give the inside's slots first."""
        if e in self.memo:
            return self.memo[e]
        if e.op in REDUCTIONS or (e.op == "pow" and uses_x(e.args[1])):
            raise NoLoopCode(e.op)
        if e.op == "const" or e.op == "var":
            r = e
        elif not uses_x(e):
            if e not in self.slots:
                self.slots.append(e)
            r = Expr("attr", name=f"__u{self.slots.index(e)}")
        else:
            args = tuple(self._rewrite(a, input_bits) for a in e.args)
            if e.op == "fma" and fma_as_mul_add(e, input_bits):
                # numpy_eval's a*b + c (NumpyDomain.arithmetic): two roundings, the first exact
                r = Expr("add", (Expr("mul", args[:2]), args[2]))
            else:
                r = Expr(e.op, args, e.name, e.value)
        self.memo[e] = r
        return r


class _Code(Domain):
    """The generator, as a fold domain: a node's value is the name of the local variable (or the literal)
    holding it in the generated loop's body."""

    def __init__(self, plan: _Plan, ind: int):
        self.plan = plan
        self.lines: list[str] = []
        self.ind = ind
        self.n = 0
        # a subexpression computed in a branch of a select is known in that branch, not after it: a scope
        # (maps[0]) per branch
        self.memo = collections.ChainMap()
        self.used: set[int] = set()  # the primitives whose values the code reads

    def emit(self, line: str):
        self.lines.append("    " * self.ind + line)

    def fresh(self) -> str:
        self.n += 1
        return f"v{self.n}"

    def assign(self, expr: str) -> str:
        v = self.fresh()
        self.emit(f"{v} = {expr}")
        return v

    def var(self, e):
        return "xi"

    def attr(self, e):
        return e.name[2:]  # "__u3" -> "u3", read before the loop

    def const(self, e):
        return _lit(const_value(e))

    def arithmetic(self, op, args, node=None):
        if op == "neg":
            return self.assign(f"-{args[0]}")
        if op == "abs":
            return self.assign(f"abs({args[0]})")
        if op in ("min", "max"):
            return self.assign(f"ieee_{op}({args[0]}, {args[1]})")
        if op == "fma":
            return self.assign(f"llvm_fma({args[0]}, {args[1]}, {args[2]})")
        sym = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[op]
        return self.assign(f"{args[0]} {sym} {args[1]}")

    def compare(self, op, a, b):
        sym = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "=="}[op]
        return self.assign(f"{a} {sym} {b}")

    def connective(self, op, args):
        if op == "not":
            return self.assign(f"not {args[0]}")
        return self.assign(f"{args[0]} {op} {args[1]}")

    def isnan(self, e, walk):
        a = walk(e.args[0])
        return self.assign(f"{a} != {a}")

    def select(self, e, walk):
        c = walk(e.args[0])
        v = self.fresh()
        self.emit(f"{v} = {'False' if _boolean(e.args[1]) else '0.0'}")
        for head, branch in ((f"if {c}:", e.args[1]), ("else:", e.args[2])):
            self.emit(head)
            self.ind += 1
            self.memo.maps.insert(0, {})
            self.emit(f"{v} = {walk(branch)}")
            self.memo.maps.pop(0)
            self.ind -= 1
        return v

    reduction = element_wise_only  # _Plan refuses a reduction first (NoLoopCode): numpy_eval runs it

    def primitive(self, p, a, node=None):
        # loaded at the top of the loop's body (see _loop): here the value is only named
        k = self.plan.prims.index(node)
        self.used.add(k)
        return f"p{k}"

    def power(self, a, b, node=None):
        return self.primitive(None, a, node)

    def value(self, e: Expr) -> str:
        return fold(e, self)

    def reach(self, e: Expr, path: str, done: set, paths: dict):
        """Code for the truth values (`path`: whether the element gets to e) under which each primitive k in
        e is reached, added to paths[k]: under a select, its condition's value and its negation, where the
        condition has no primitive (else both branches count as reached). Branch-free. Walked here, not
        folded: what a node adds depends on the path to it (one node, reached under two truth values), where
        a fold gives each node one meaning."""
        if not _has_primitive(e) or (e, path) in done:
            return
        done.add((e, path))
        if _is_call(e):
            paths.setdefault(self.plan.prims.index(e), set()).add(path)
            self.reach(e.args[0], path, done, paths)
            return
        if e.op == "select" and not _has_primitive(e.args[0]):
            c = self.value(e.args[0])
            yes = c if path == "True" else self.assign(f"{path} & {c}")
            no = self.assign(f"not {c}" if path == "True" else f"{path} & (not {c})")
            self.reach(e.args[1], yes, done, paths)
            self.reach(e.args[2], no, done, paths)
            return
        for a in e.args:
            self.reach(a, path, done, paths)


_HEADER = """# generated by opcert.expr.compiled_eval (generator {digest}): opcert's implementation of one expression
import math
import numpy as np
from opcert.jit import numba
from opcert.expr.compiled_ops import ieee_min, ieee_max
from opcert.expr.fma_kernel import llvm_fma

INF = math.inf
"""

_NJIT = '@numba.njit(cache=True, nogil=True, error_model="numpy")\n'


def _reads(plan: _Plan) -> str:
    # the attributes' values into locals before the loop: read from U inside it, LLVM could not keep them
    # in registers (out might alias U); a condition's as a truth value (U holds 1.0 or 0.0)
    return "".join(
        f"    u{k} = U[{k}] != 0.0\n" if _boolean(s) else f"    u{k} = U[{k}]\n" for k, s in enumerate(plan.slots)
    )


def _loop(name: str, plan: _Plan, root: Expr) -> tuple[str, list[int]]:
    g = _Code(plan, 2)
    v = g.value(root)
    used = sorted(g.used)
    params = "".join(f", P{k}" for k in used)
    # every primitive's value is loaded before the branches: a load inside a branch is one LLVM may not
    # move out of it (it cannot tell that P<k> is as long as x), and the loop then stays scalar
    loads = "".join(f"        p{k} = P{k}[i]\n" for k in used)
    return (
        _NJIT
        + f"def {name}(x, U{params}, out):\n"
        + _reads(plan)
        + "    for i in range(x.size):\n        xi = x[i]\n"
        + loads
        + "\n".join(g.lines)
        + "\n"
        + f"        out[i] = {v}\n"
    ), used


def _reach_kernel(plan: _Plan) -> str:
    # F[j, i]: whether element i reaches the primitives of plan.groups[j] (those reached under the same
    # truth values: Softplus's exp and the log1p of it); NumPy's any() then tells which the block
    # reaches. (A running "or" in the loop instead, which LLVM did not vectorise for AVX-512 targets,
    # made the loops slower than NumPy for Softplus, Sigmoid and Mish: bench/README.md.)
    g = _Code(plan, 2)
    paths: dict[int, set[str]] = {}
    g.reach(plan.root, "True", set(), paths)
    groups: dict[tuple, list[int]] = {}
    for k in plan.flags:
        groups.setdefault(tuple(sorted(paths[k])), []).append(k)
    plan.groups = list(groups.values())
    stores = "".join(f"        F[{j}, i] = {' | '.join(key)}\n" for j, key in enumerate(groups))
    return (
        _NJIT
        + "def reach(x, U, F):\n"
        + _reads(plan)
        + "    for i in range(x.size):\n        xi = x[i]\n"
        + "\n".join(g.lines)
        + "\n"
        + stores
    )


@functools.cache
def _generator_digest() -> str:
    h = hashlib.sha256()
    for mod in (compiled_ops, fma_kernel, sys.modules[__name__]):
        h.update(Path(mod.__file__).read_bytes())
    return h.hexdigest()[:16]


def source(e: Expr, input_bits: int) -> tuple[str, _Plan]:
    """The generated module for e (raises NoLoopCode): `arg<k>` computes primitive k's argument where it is
    neither x nor another primitive, `reach` which primitives the block's elements reach (where some are
    under a select's branch), `result` the value, stored into an array of binary64 or binary32."""
    plan = _Plan(e, input_bits)
    parts = [_HEADER.format(digest=_generator_digest())]
    for k, p in enumerate(plan.prims):
        if _is_call(p.args[0]):
            plan.of_prim[k] = plan.prims.index(p.args[0])
        elif p.args[0].op != "var":
            src, plan.args[k] = _loop(f"arg{k}", plan, p.args[0])
            parts.append(src)
    if plan.flags:
        parts.append(_reach_kernel(plan))
    src, plan.used = _loop("result", plan, plan.root)
    parts.append(src)
    return "\n\n".join(parts), plan


@functools.cache
def worth_compiling(e: Expr) -> bool:
    """Whether the loops save anything: an operation on x other than the primitives (Tanh, Erf: the
    primitive of x is all; Identity: nothing). Cached: every call of impl.run asks, and the walk over an
    expression's nodes is not negligible beside a sweep's block (bench/README.md, 'Figures behind choices in
    the code')."""
    return any(uses_x(n) and not _is_call(n) and n.op not in ("var", "attr", "const") for n in e.nodes()) and not any(
        n.op in REDUCTIONS for n in e.nodes()
    )


_KERNELS: dict = {}
_LOCK = threading.Lock()
_BUFFERS = threading.local()  # per thread: _ones and _flags


def _ones(n: int) -> np.ndarray:
    """The values of a primitive no element reaches: read by another primitive's argument loop at elements
    whose value is not used (1.0: no slow path of any function), never written."""
    have = getattr(_BUFFERS, "ones", None)
    if have is None or have.size < n:
        have = _BUFFERS.ones = np.ones(max(n, 1 << 16))
    return have[:n]


def _flags(k: int, n: int) -> np.ndarray:
    """The reach loop's rows, kept from one call to the next (per thread): the front of a flat array, so
    that they are C-contiguous whatever k and n (one layout, one compiled reach loop)."""
    have = getattr(_BUFFERS, "flags", None)
    if have is None or have.size < k * n:
        have = _BUFFERS.flags = np.empty(max(k * n, 4 << 16), np.bool_)
    return have[: k * n].reshape(k, n)


class _Kernel:
    def __init__(self, e: Expr, input_bits: int):
        src, self.plan = source(e, input_bits)
        self.mod = load_generated(src, "opcert_impl_")
        self.uniform: dict = {}

    def _slots(self, attrs: dict[str, float], input_bits: int) -> np.ndarray:
        key = tuple(sorted(attrs.items()))
        u = self.uniform.get(key)
        if u is None:
            d = NumpyDomain(np.zeros(0), attrs, input_bits)
            with np.errstate(all="ignore"):
                u = np.array([float(fold(s, d)) for s in self.plan.slots] or [0.0])
            self.uniform[key] = u
        return u

    def _exponent(self, node: Expr, u: np.ndarray) -> np.float64:
        b = node.args[1]  # after _Plan's rewrite: a slot of the attributes, or a constant
        return const_value(b) if b.op == "const" else np.float64(u[int(b.name[3:])])

    def __call__(self, x64: np.ndarray, attrs: dict[str, float], input_bits: int, out: np.ndarray):
        plan, mod = self.plan, self.mod
        n = x64.size
        u = self._slots(attrs, input_bits)
        reached = None
        if plan.flags:
            flags = _flags(len(plan.groups), n)
            mod.reach(x64, u, flags)
            reached = {k for j, group in enumerate(plan.groups) if flags[j].any() for k in group}
        vals: list[np.ndarray] = []
        with np.errstate(all="ignore"):
            for k, node in enumerate(plan.prims):
                if reached is not None and k not in plan.always and k not in reached:
                    vals.append(_ones(n))
                    continue
                if k in plan.of_prim:
                    arg = vals[plan.of_prim[k]]
                elif k in plan.args:
                    arg = np.empty(n)
                    getattr(mod, f"arg{k}")(x64, u, *(vals[j] for j in plan.args[k]), arg)
                else:
                    arg = x64
                v = (
                    platform_array(PRIMITIVES[node.op], input_bits, argument_is_input(node))(arg)
                    if node.op != "pow"
                    else numpy_power(arg, self._exponent(node, u))
                )
                if not (
                    isinstance(v, np.ndarray) and v.dtype == np.float64 and v.shape == (n,) and v.flags.c_contiguous
                ):
                    v = np.ascontiguousarray(np.broadcast_to(np.asarray(v, dtype=np.float64), (n,)))
                vals.append(v)
            mod.result(x64, u, *(vals[j] for j in plan.used), out)
        return out


def kernel(e: Expr, input_bits: int):
    """The compiled implementation of e for inputs of this many significant bits, or None where the
    generator does not know e (numpy_eval runs it). Built once a process (numba's cache serves the next)."""
    key = (e, input_bits <= 26)
    k = _KERNELS.get(key, False)
    if k is not False:
        return k
    with _LOCK:
        k = _KERNELS.get(key, False)
        if k is False:
            try:
                k = _Kernel(e, input_bits)
            except NoLoopCode:
                k = None
            _KERNELS[key] = k
    return k


def evaluate(e: Expr, x64: np.ndarray, attrs: dict[str, float], input_bits: int, out_dtype=np.float64):
    """numpy_eval's values of e at the binary64 inputs x64 (any shape), rounded to out_dtype (binary64 or
    binary32: the store rounds to nearest even, as NumPy's cast does), or None where this module does not
    run e (an expression it does not know or need not speed up: the caller runs numpy_eval). Which calls
    come here is the caller's choice (impl.run: from MIN_SIZE elements)."""
    if not _ENABLED or not worth_compiling(e):
        return None
    k = kernel(e, input_bits)
    if k is None:
        return None
    flat = np.ascontiguousarray(x64, dtype=np.float64).reshape(-1)
    out = np.empty(flat.size, out_dtype)
    k(flat, attrs, input_bits, out)
    return out.reshape(x64.shape)
