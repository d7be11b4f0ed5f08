"""The C library's math functions over whole arrays, where NumPy has no fast loop:
glibc's vector functions (libmvec) for binary64, and its long double erf and erfc.

Why: on a CPU without AVX-512 NumPy's binary64 tanh, exp, expm1 and log1p run
their scalar paths, much slower than libmvec's AVX2 functions (bench/README.md,
'Figures behind choices in the code'), and NumPy has no erf at all, in any
format. The float32 sweep's ball and the binary64 reference's long double path
spend most of their time there; so does opcert's own float32 code, for atan and
cosh (`on_binary32()`, at binary32 arguments only: its order, oddness and
bounds are checked on every binary32 value). A small C file calls the
functions; it is compiled once a machine with the system's C compiler into the
kernel cache (opcert.files) and loaded with ctypes. No compiler, another C
library or another CPU: `vector()`, `on_binary32()` and `long_double()` return
None, and the callers keep NumPy's functions (or the exact path), with the
reason in `status()`.

The contracts, part of the primitives' records where they are used:
- libmvec: glibc states that its x86-64 vector functions were tested by
  random sampling against a 4-ULP maximum error (sourceware.org/glibc/wiki/libmvec);
  VECTOR_ULPS is that figure. tests/test_libm_arrays.py checks every function
  against Arb on hard and random points and the clauses the ball relies on
  (signs, bounds, values at 0 and at the infinities, NaN).
- erfl and erfcl: the long double contract of the other long double functions
  (expr.primitives: 8 ULPs of that format), checked the same way.

The vector functions are called through their vector ABI names
(_ZGVdN4v_tanh: four binary64 lanes in a ymm register) from explicit AVX2
code, not by asking the compiler to vectorise a loop, which needs
-ffast-math (and gcc then links a start-up file that sets flush-to-zero for
the whole process).
"""

from __future__ import annotations

import ctypes
import functools
import hashlib
import os
import platform
import subprocess
import tempfile
from pathlib import Path

import numpy as np

from opcert.files import kernel_cache_dir

VECTOR_ULPS = 4.0
VECTOR_NAMES = ("exp", "expm1", "tanh", "log1p", "log", "erf", "erfc", "sin", "cos")
# the functions opcert's float16, bfloat16 and float32 code takes where NumPy's loops are not AVX-512, for a node
# whose argument is the input (expr.primitives.platform_array: binary32 values), not the reference's: each is in
# order and odd (atan) on every binary32 value, which bench/libmvec_binary32.py checks and
# tests/test_libm_arrays.py samples
ON_BINARY32_NAMES = ("atan", "cosh")
LONG_DOUBLE_NAMES = ("erf", "erfc")

_VECTOR_FN = """
__attribute__((target("avx2,fma"))) void opcert_v_{f}(const double *x, double *y, size_t n) {{
    size_t i = 0;
    for (; i + 4 <= n; i += 4)
        _mm256_storeu_pd(y + i, _ZGVdN4v_{f}(_mm256_loadu_pd(x + i)));
    if (i < n) {{      /* the last one to three values: a padded vector (1.0 is in every domain) */
        double a[4] = {{1.0, 1.0, 1.0, 1.0}}, b[4];
        for (size_t j = 0; i + j < n; j++) a[j] = x[i + j];
        _mm256_storeu_pd(b, _ZGVdN4v_{f}(_mm256_loadu_pd(a)));
        for (size_t j = 0; i + j < n; j++) y[i + j] = b[j];
    }}
}}
"""
_LONG_DOUBLE_FN = """
void opcert_l_{f}(const long double *x, long double *y, size_t n) {{
    for (size_t i = 0; i < n; i++) y[i] = {f}l(x[i]);
}}
"""


def _source() -> str:
    head = "#include <stddef.h>\n#include <math.h>\n#include <immintrin.h>\n" + "".join(
        f"__m256d _ZGVdN4v_{f}(__m256d);\n" for f in VECTOR_NAMES + ON_BINARY32_NAMES
    )
    return (
        head
        + "".join(_VECTOR_FN.format(f=f) for f in VECTOR_NAMES + ON_BINARY32_NAMES)
        + "".join(_LONG_DOUBLE_FN.format(f=f) for f in LONG_DOUBLE_NAMES)
    )


def _cpu_has_avx2_fma() -> bool:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    return {"avx2", "fma"} <= flags
    except OSError:
        pass
    return False


@functools.cache
def _library() -> tuple[ctypes.CDLL | None, str]:
    """(the loaded library or None, what was done or why not)."""
    if os.environ.get("OPCERT_LIBMVEC", "1") == "0":
        return None, "turned off (OPCERT_LIBMVEC=0)"
    if platform.system() != "Linux" or platform.machine() not in ("x86_64", "AMD64"):
        return None, f"not built: needs glibc on x86-64 (this is {platform.system()} {platform.machine()})"
    src = _source()
    digest = hashlib.sha256(src.encode()).hexdigest()[:16]
    d = kernel_cache_dir()
    if d is None:
        d = Path(tempfile.mkdtemp(prefix="opcert-libm-"))
    path = d / f"opcert_libm_{digest}.so"
    if not path.exists():
        cc = os.environ.get("CC", "cc")
        fd, tmp_c = tempfile.mkstemp(dir=d, suffix=".c")
        tmp_so = tmp_c[:-2] + ".so"
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(src)
            run = subprocess.run(
                [cc, "-O2", "-fPIC", "-shared", "-fno-math-errno", tmp_c, "-o", tmp_so, "-lmvec", "-lm"],
                capture_output=True,
                text=True,
                timeout=120,
            )
            if run.returncode != 0:
                why = (run.stderr.strip().splitlines() or ["no message"])[-1]
                return None, f"not built: {cc} failed ({why})"
            os.replace(tmp_so, path)  # atomically: sweep workers may build it at the same time
        except (OSError, subprocess.SubprocessError) as exc:
            return None, f"not built: {type(exc).__name__}: {exc}"
        finally:
            for f in (tmp_c, tmp_so):
                try:
                    os.unlink(f)
                except OSError:
                    pass
    try:
        return ctypes.CDLL(str(path)), f"glibc libmvec (AVX2) and erfl/erfcl, {path.name}"
    except OSError as exc:
        return None, f"not loaded: {exc}"


def status() -> str:
    """What the array functions are on this host, for provenance."""
    lib, why = _library()
    if lib is not None and not _cpu_has_avx2_fma():
        return "long double erf/erfc from glibc; binary64 vector functions not used (the CPU has no AVX2/FMA)"
    return why


def apply_flat(kernel, x, dtype, out=None):
    """kernel(a, y) (a and y flat, contiguous, of dtype: y[i] from a[i]) over x as a ufunc applies: any
    shape, into out where given, a NumPy scalar for a 0-d input and no out. Used for glibc's functions
    here and for expr.special's compiled loops."""
    a = np.asarray(x, dtype=dtype)
    if not a.flags.c_contiguous:
        a = a.copy()
    y = (
        np.empty(a.shape, dtype=dtype)
        if out is None or out.dtype != dtype or not out.flags.c_contiguous or out.shape != a.shape
        else out
    )
    kernel(a.reshape(-1), y.reshape(-1))
    if out is not None and y is not out:
        out[...] = y
        return out
    return y if a.ndim else y[()]


def _wrap(fn, dtype):
    fn.restype = None
    fn.argtypes = (ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)

    def call(a, y):
        fn(a.ctypes.data, y.ctypes.data, a.size)

    def apply(x, out=None):
        return apply_flat(call, x, dtype, out)

    return apply


def _vector_of(name: str, names: tuple):
    if name not in names or not _cpu_has_avx2_fma():
        return None
    lib, _ = _library()
    return None if lib is None else _wrap(getattr(lib, f"opcert_v_{name}"), np.float64)


@functools.cache
def vector(name: str):
    """glibc's binary64 vector function `name` over arrays (x, out=None), or None where it is
    not available here. Its contract: VECTOR_ULPS."""
    return _vector_of(name, VECTOR_NAMES)


@functools.cache
def on_binary32(name: str):
    """glibc's binary64 vector function `name` of ON_BINARY32_NAMES over arrays (x, out=None), or None where it
    is not available here: for arguments that are binary32 values (the caller keeps to them). Its contract:
    VECTOR_ULPS."""
    return _vector_of(name, ON_BINARY32_NAMES)


@functools.cache
def long_double(name: str):
    """glibc's long double function `name` (erfl, erfcl) over long double arrays, or None."""
    if name not in LONG_DOUBLE_NAMES or np.finfo(np.longdouble).nmant < 63:
        return None
    lib, _ = _library()
    return None if lib is None else _wrap(getattr(lib, f"opcert_l_{name}"), np.longdouble)
