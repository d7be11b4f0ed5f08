"""numba, with opcert's compiled kernels cached under a key of all of opcert's source.

numba's on-disk cache keys a function by its own source file alone. opcert's
kernels inline functions of other modules (the sweep's kernel and the
symmetry pass inline verify.ulp's ulp; a generated ball kernel inlines
spec.errorfree and spec.ball_rules) and read other modules' globals as
constants: after a change to one of those (an edit, a `git pull` that
leaves the kernel's own file alone) numba would load the old compiled code,
and a verdict would come from code that no longer exists. Every opcert
module imports numba from here, so that each kernel cached from opcert's
package or from its generated kernels (files.kernel_cache_dir) is keyed by
the code fingerprint too: any change to opcert's source compiles them
again. The cache files stay where numba puts them (NUMBA_CACHE_DIR is
honoured); one of another fingerprint is replaced, not kept beside.
"""
from __future__ import annotations

from pathlib import Path

import numba
from numba.core import caching

from .files import kernel_cache_dir
from .fingerprint import code_fingerprint

__all__ = ["numba", "keyed"]

_PACKAGE = Path(__file__).resolve().parent
_IMPL = getattr(caching, "CacheImpl", None) or caching._CacheImpl    # numba 0.61 renamed it


def _ours(py_file: str) -> bool:
    """A file of opcert's package, or a kernel opcert generated into its kernel cache."""
    try:
        p = Path(py_file).resolve()
    except OSError:
        return False
    if p.is_relative_to(_PACKAGE):
        return True
    d = kernel_cache_dir()
    return d is not None and p.name.startswith("opcert_") and p.is_relative_to(d.resolve())


class _KeyedLocator(caching._CacheLocator):
    """numba's own choice of place for one of opcert's functions, with opcert's code fingerprint
    added to its source stamp (the stamp is what numba's index is checked against)."""

    def __init__(self, inner):
        self._inner = inner

    def ensure_cache_path(self):
        self._inner.ensure_cache_path()

    def get_cache_path(self):
        return self._inner.get_cache_path()

    def get_source_stamp(self):
        return self._inner.get_source_stamp(), code_fingerprint()

    def get_disambiguator(self):
        return self._inner.get_disambiguator()

    @classmethod
    def from_function(cls, py_func, py_file):
        if not _ours(py_file):
            return None
        for other in _IMPL._locator_classes:
            if other is cls:
                continue
            inner = other.from_function(py_func, py_file)
            if inner is not None:
                return cls(inner)
        return None


def keyed(dispatcher) -> bool:
    """Whether a cached numba function is cached under opcert's code fingerprint (tests ask)."""
    cache = getattr(dispatcher, "_cache", None)
    impl = getattr(cache, "_impl", None)
    return isinstance(getattr(impl, "locator", None), _KeyedLocator)


def _install() -> None:
    classes = _IMPL._locator_classes
    if _KeyedLocator not in classes:
        classes.insert(0, _KeyedLocator)
    chosen = getattr(numba.config, "CACHE_LOCATOR_CLASSES", None)     # newer numba only
    if chosen and "opcert.jit._KeyedLocator" not in chosen:
        # NUMBA_CACHE_LOCATOR_CLASSES replaces numba's list by names: opcert's is put first in it (for
        # opcert's files only; it places them as numba's default locators would)
        numba.config.CACHE_LOCATOR_CLASSES = "opcert.jit._KeyedLocator," + chosen


_install()
