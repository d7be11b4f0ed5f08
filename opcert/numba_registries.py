"""numba's type registries, loaded once per process without importing scipy.linalg.

numba loads its registries at a process's first compile or cache load (cpu_target's refresh). One of them,
numba.np.arraymath, probes at import whether BLAS is there by importing scipy.linalg.cython_blas, which
imports scipy.linalg: about half of that load's time, in every process that runs a kernel (a command, each
spawned worker, each test worker; bench/README.md, 'Figures behind choices in the code'). That probe only
decides how numba's np.correlate and np.convolve are compiled; the overloads that call BLAS import it
themselves when they compile. Here the probe looks for SciPy's cython_blas on disk instead, so the answer is
the same and scipy.linalg is imported only by a kernel that calls BLAS.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path

_DONE = False
_LOCK = threading.Lock()


def blas_present() -> None:
    """numba.np.linalg.ensure_blas as arraymath's import-time probe reads it: ImportError (with numba's
    words) where SciPy or its cython_blas module is not installed, found without importing them."""
    spec = importlib.util.find_spec("scipy")
    places = (spec.submodule_search_locations or []) if spec is not None else []
    if not any(next(Path(p, "linalg").glob("cython_blas.*"), None) for p in places):
        raise ImportError("scipy 0.16+ is required for linear algebra")


def load() -> None:
    """numba's registries, as its first compile or cache load would load them, with arraymath imported
    under blas_present. Once per process (a forked child inherits them); where numba's internals moved,
    nothing: its own first compile loads them as before."""
    global _DONE
    if _DONE:
        return
    with _LOCK:  # another thread's compile must not see the probe swapped
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
