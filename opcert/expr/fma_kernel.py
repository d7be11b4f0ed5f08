"""Fused multiply-add for binary64 arrays, compiled (numba): imported at its first use by
numpy_eval.fma, so that importing opcert does not import numba."""

import functools

from llvmlite import ir
from numba.core import cgutils, types
from numba.extending import intrinsic

from opcert.jit import numba


@intrinsic
def llvm_fma(typingctx, a, b, c):
    # llvm.fma (not llvm.fmuladd): a * b + c rounded once, whatever the target
    def codegen(context, builder, signature, args):
        fnty = ir.FunctionType(ir.DoubleType(), [ir.DoubleType()] * 3)
        return builder.call(cgutils.get_or_insert_function(builder.module, fnty, "llvm.fma.f64"), args)

    return types.float64(types.float64, types.float64, types.float64), codegen


@functools.cache
def fma_ufunc():
    """The compiled ufunc, built at its first use: a vectorize with a signature compiles (or
    loads its cache) when applied (bench/README.md, 'Figures behind choices in the code'), and the
    generated ball kernels import this module for llvm_fma alone (a sweep worker's start)."""
    return numba.vectorize(["float64(float64, float64, float64)"], cache=True, nopython=True)(_fma)


def _fma(a, b, c):
    return llvm_fma(a, b, c)
