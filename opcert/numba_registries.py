"""numba's type registries, loaded once per process without importing scipy.linalg.

numba loads its registries at a process's first compile or cache load (cpu_target's refresh). One of them,
numba.np.arraymath, probes at import whether BLAS is there by importing scipy.linalg.cython_blas, which
imports scipy.linalg: about half of that load's time, in every process that runs a kernel (a command, each
spawned worker, each test worker; bench/README.md, 'Figures behind choices in the code'). That probe only
decides how numba's np.correlate and np.convolve are compiled; the overloads that call BLAS import it
themselves when they compile. Here the probe looks for SciPy's built cython_blas module on disk instead
(blas_present says where its answer can differ), and scipy.linalg is imported only by a kernel that calls BLAS.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import sys
from pathlib import Path

_DONE = False


def blas_present() -> None:
    """numba.np.linalg.ensure_blas as arraymath's import-time probe reads it, without importing SciPy's
    linalg: ImportError (with numba's words) where SciPy or a built cython_blas extension module (a file with
    one of this interpreter's extension suffixes) is not installed; then numba's own check that SciPy's BLAS
    integer width is the one numba was built for (it reads scipy.__config__, not scipy.linalg). One case
    answers otherwise than numba's probe: a cython_blas built but failing to load (a broken SciPy). numba's
    np.correlate and np.convolve then compile through np.dot, whose own ensure_blas raises the ImportError."""
    spec = importlib.util.find_spec("scipy")
    places = (spec.submodule_search_locations or []) if spec is not None else []
    names = {"cython_blas" + suffix for suffix in importlib.machinery.EXTENSION_SUFFIXES}
    if not any(Path(p, "linalg", n).is_file() for p in places for n in names):
        raise ImportError("scipy 0.16+ is required for linear algebra")
    from numba.np import linalg

    width = getattr(linalg, "_check_lapack_int_width", None)
    if width is not None:
        width()


def load() -> None:
    """numba's registries, as its first compile or cache load would load them, with arraymath imported
    under blas_present. Once per process (a forked child inherits them); where numba's internals moved,
    nothing: its own first compile loads them as before. Under numba's global compiler lock, which its own
    refresh takes and which a compile already holds (re-entrant): no other thread compiles while the probe is
    swapped, and the locks are taken in numba's order."""
    global _DONE
    if _DONE:
        return
    from numba.core.compiler_lock import global_compiler_lock

    with global_compiler_lock:
        if _DONE:
            return
        try:
            if "numba.np.arraymath" not in sys.modules:
                from numba.np import linalg

                probe = linalg.ensure_blas
                linalg.ensure_blas = blas_present
                try:
                    from numba.np import arraymath
                finally:
                    linalg.ensure_blas = probe
                arraymath.ensure_blas = probe
            from numba.core.registry import cpu_target

            cpu_target.target_context.refresh()
        except Exception:  # noqa: BLE001 - numba's internals moved: see the docstring
            pass
        _DONE = True
