"""NumPy interpretation of an expression, in binary64: the meaning of opcert's implementation.
impl.run runs calls of MIN_SIZE elements or more with expr.compiled_eval, which computes these values in
compiled loops (tests/test_compiled_eval.py holds the two to the same bits).

Inputs are widened exactly to binary64 and the caller rounds the result once
into the output format. `fma(a, b, c)` whose product operands are the input and
an attribute is a*b + c in binary64 when the input has at most 26 significant
bits: the product is then exact, so the single rounding is that of a fused
multiply-add. Otherwise it is LLVM's fma (compiled with numba: the CPU's fused
multiply-add, or libm's fma where the CPU has none), far faster than libm's
through ctypes (bench/README.md, 'Figures behind choices in the code').
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools

import numpy as np

from opcert.expr import NAMED, PRIMITIVES, Expr
from opcert.expr.fold import Domain, fold
from opcert.expr.pow_record import numpy_power
from opcert.expr.primitives import argument_is_input, platform_array


def fma_as_mul_add(node, input_bits: int) -> bool:
    """Whether this interpreter computes the fma node as a*b + c in binary64 (see the module's docstring):
    its product's operands are leaves and the input has at most 26 bits. expr.compiled_eval asks the same."""
    return input_bits <= 26 and all(a.op in ("var", "attr", "const") for a in node.args[:2])


def fma(a, b, c):
    """a * b + c with one rounding (tests/test_impl.py checks it against rational arithmetic).
    Compiled in expr.fma_kernel, imported here at the first call: importing opcert then does not import
    numba (bench/README.md, 'Figures behind choices in the code')."""
    from opcert.expr.fma_kernel import fma_ufunc  # lazy: see above

    return fma_ufunc()(a, b, c)


_libm = ctypes.CDLL(ctypes.util.find_library("m"))
_libm.fma.restype = ctypes.c_double
_libm.fma.argtypes = (ctypes.c_double,) * 3
_fma = np.frompyfunc(_libm.fma, 3, 1)  # the C library's, per element: the tests' second opinion


def _minimum(a, b):
    # IEEE 754-2019 minimum: NaN if either is NaN, and -0 < +0. np.minimum gives NaN for a NaN
    # and the smaller of two unequal numbers; where they are equal (only +0 and -0 differ in
    # bits), the one with the sign bit. Two passes where the plain version took seven
    # (tests/test_impl.py: the same bits as that version, kept there, on every pair of specials).
    return _fix_equal(np.minimum(a, b), a, b, True)


def _maximum(a, b):
    return _fix_equal(np.maximum(a, b), a, b, False)


def _fix_equal(r, a, b, take_negative):
    # NaN results become the default quiet NaN, as np.where(..., np.nan, r) made them
    fix = np.equal(a, b) | np.isnan(r)
    if not np.any(fix):
        return r
    a, b, r = np.broadcast_arrays(a, b, r)
    return np.where(fix, np.where(np.isnan(r), np.nan, np.where(np.signbit(a) == take_negative, a, b)), r)


_BINARY = {
    "add": np.add,
    "sub": np.subtract,
    "mul": np.multiply,
    "div": np.divide,
    "min": _minimum,
    "max": _maximum,
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
    "eq": np.equal,
    "and": np.logical_and,
    "or": np.logical_or,
}
_UNARY = {
    "neg": np.negative,
    "abs": np.abs,
    "isnan": np.isnan,
    "not": np.logical_not,
    **{name: p.numpy for name, p in PRIMITIVES.items()},
}


def pairwise_sum(a: np.ndarray) -> np.ndarray:
    """The sum over the last axis (kept, of length 1), by halves: each term takes part in at most
    depth(n) = ceil(log2 n) additions, so the rounding error is at most gamma_depth * sum |a_j| (Higham,
    Accuracy and Stability, 4.2), whatever NumPy's own np.sum would do on this memory layout. The
    reference's fast path (numerics.ball) bounds its error by that; opcert's implementation runs the same."""
    a = np.asarray(a)
    if a.shape[-1] == 0:
        return np.zeros(a.shape[:-1] + (1,), dtype=a.dtype)
    while a.shape[-1] > 1:
        m = a.shape[-1]
        h = m // 2
        s = a[..., :h] + a[..., h : 2 * h]
        a = np.concatenate([s, a[..., 2 * h :]], axis=-1) if m % 2 else s
    return a


def depth(n: int) -> int:
    """The additions a term of pairwise_sum takes part in, at most."""
    return max(0, (n - 1).bit_length())


def row_maximum(v: np.ndarray) -> np.ndarray:
    """IEEE 754-2019 maximum over the last axis (kept): NaN if any is NaN, +0 above -0."""
    if v.shape[-1] == 0:
        return np.full(v.shape[:-1] + (1,), -np.inf, dtype=v.dtype)
    m = np.max(v, axis=-1, keepdims=True)
    zero = m == 0
    if np.any(zero):
        plus = np.any((v == 0) & ~np.signbit(v), axis=-1, keepdims=True)
        m = np.where(zero & plus, v.dtype.type(0), m)
    return m


def row_first_max(v: np.ndarray) -> np.ndarray:
    """True at the first element of each row (last axis) equal to the row's maximum; a row holding a NaN
    has no maximum that an element equals: False throughout."""
    eq = v == row_maximum(v)
    first = np.argmax(eq, axis=-1)[..., None]
    return (np.arange(v.shape[-1]) == first) & np.any(eq, axis=-1, keepdims=True)


def reduce_rows(e: Expr, v, shape) -> np.ndarray:
    """rowsum, rowmax or rowfirstmax of the values v (an array broadcast to the rows' shape)."""
    v = np.broadcast_to(v, shape)
    if e.op == "rowsum":
        return pairwise_sum(v)
    if e.op == "rowmax":
        return row_maximum(v)
    return row_first_max(v)


def eval_numpy(e: Expr, x: np.ndarray, attrs: dict[str, float], input_bits: int = 53) -> np.ndarray:
    """Evaluate `e` at the binary64 array x; `input_bits` is the precision of
    the format x was widened from. An expression that reduces over rows takes x
    as rows along its last axis."""
    with np.errstate(all="ignore"):
        return np.asarray(fold(e, NumpyDomain(x, attrs, input_bits)), dtype=None)


@functools.cache
def uses_x(e: Expr) -> bool:
    """Whether e depends on the input (expr.compiled_eval asks it too)."""
    return e.uses("var")


def const_value(e: Expr) -> np.float64:
    """A constant's binary64 value, as this interpreter and expr.compiled_eval take it."""
    return np.float64(NAMED[e.name].value64()) if e.name is not None else np.float64(e.value)


class _Binary64(Domain):
    """What the NumPy domains share: binary64 arrays, NumPy's ufuncs, the platform's primitives."""

    def __init__(self, x, attrs):
        self.x, self.attrs = x, attrs

    def var(self, e):
        return self.x

    def attr(self, e):
        return np.float64(self.attrs[e.name])

    def const(self, e):
        return const_value(e)

    def isnan(self, e, walk):
        return np.isnan(walk(e.args[0]))

    def compare(self, op, a, b):
        return _BINARY[op](a, b)

    def connective(self, op, args):
        return np.logical_not(args[0]) if op == "not" else _BINARY[op](args[0], args[1])

    def primitive(self, p, a, node=None):
        bits = getattr(self, "input_bits", 53)
        return platform_array(p, bits, node is not None and argument_is_input(node))(a)

    def power(self, a, b, node=None):
        return numpy_power(a, b)

    def reduction(self, e, walk):
        return reduce_rows(e, walk(e.args[0]), np.shape(self.x))


class NumpyDomain(_Binary64):
    """opcert's implementation as it runs. Two shortcuts, each giving the very values of the plain
    interpretation (PlainDomain: np.where over both branches, every node on its own): a subexpression written
    twice (Mish's exp(x), four times) is computed once (the memo), the same ufunc on the same array; and a
    select whose condition is a scalar (an attribute's choice: Gelu's form) or has one value over the array
    evaluates only the branch it takes. tests/test_impl.py checks both against the plain interpretation on
    every operator."""

    def __init__(self, x, attrs, input_bits: int = 53):
        super().__init__(x, attrs)
        self.input_bits = input_bits
        self.memo = {}

    def select(self, e, walk):
        x = self.x
        c = walk(e.args[0])
        if np.ndim(c) == 0:
            chosen = e.args[1] if bool(c) else e.args[2]
            other = e.args[2] if bool(c) else e.args[1]
            v = walk(chosen)
            # np.where's result has the shape of all three operands
            return np.broadcast_to(v, np.broadcast_shapes(np.shape(v), np.shape(x) if uses_x(other) else ()))
        if c.dtype == np.bool_ and c.size and (c.all() or not c.any()):
            # one branch for every element (a sweep's block has one sign): np.where would take
            # every value from it; the other is not computed (Swish's four selects, measured)
            chosen = e.args[1] if c.flat[0] else e.args[2]
            other = e.args[2] if c.flat[0] else e.args[1]
            v = walk(chosen)
            shape = np.broadcast_shapes(np.shape(c), np.shape(v), np.shape(x) if uses_x(other) else ())
            return np.broadcast_to(np.asarray(v, dtype=np.result_type(v, np.float64)), shape)
        return np.where(c, walk(e.args[1]), walk(e.args[2]))

    def arithmetic(self, op, args, node=None):
        if op == "fma":
            if fma_as_mul_add(node, self.input_bits):
                return args[0] * args[1] + args[2]
            return fma(*(np.asarray(v, dtype=np.float64) for v in args))
        return _BINARY[op](args[0], args[1]) if op in _BINARY else _UNARY[op](args[0])


class PlainDomain(_Binary64):
    """The plain interpretation, for binary64 inputs: every node on its own, both branches of every select
    over every element, fma through the C library."""

    def select(self, e, walk):
        return np.where(walk(e.args[0]), walk(e.args[1]), walk(e.args[2]))

    def arithmetic(self, op, args, node=None):
        if op == "fma":
            a, b, c = np.broadcast_arrays(*(np.asarray(v, dtype=np.float64) for v in args))
            return _fma(a, b, c).astype(np.float64)
        return _BINARY[op](args[0], args[1]) if op in _BINARY else _UNARY[op](args[0])


def eval_plain(e: Expr, x, attrs: dict[str, float]):
    """The plain interpretation (PlainDomain): what eval_numpy's shortcuts must reproduce bit for bit
    (tests/test_impl.py); the baseline of bench/impl_eval.py."""
    return fold(e, PlainDomain(x, attrs))
