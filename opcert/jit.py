"""numba, with opcert's compiled kernels cached under a key of all of opcert's source.

numba's on-disk cache keys a function by its own source file alone. opcert's
kernels inline functions of other modules (the sweep's kernel and the
symmetry pass inline verify.ulp's ulp; a generated ball kernel inlines
numerics.errorfree and numerics.ball_rules) and read other modules' globals as
constants: after a change to one of those (an edit, a `git pull` that
leaves the kernel's own file alone) numba would load the old compiled code,
and a verdict would come from code that no longer exists. Every opcert
module imports numba from here, so that each kernel cached from opcert's
package or from its generated kernels (files.kernel_cache_dir) is keyed by
the code fingerprint too: any change to opcert's source compiles them
again. The cache files stay where numba puts them (NUMBA_CACHE_DIR is
honoured); one of another fingerprint is replaced, not kept beside.

A kernel is compiled once across processes: a sweep's workers, a gate's
workers and the commands a test suite starts all ask for the same kernels
at the same moment on a cold cache, and each compiled its own copy (a
generated ball kernel takes seconds). The first compiles it under a file
lock beside numba's index; the others wait and load what it saved.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading
from pathlib import Path

try:
    import fcntl
except ImportError:  # Windows: each process compiles its own, as numba alone does
    fcntl = None

import numba
from numba.core import caching, dispatcher

from opcert import numba_registries
from opcert.files import kernel_cache_dir, touch, unused
from opcert.fingerprint import code_fingerprint

__all__ = ["numba", "keyed", "load_generated"]

_PACKAGE = Path(__file__).resolve().parent
_IMPL = getattr(caching, "CacheImpl", None) or caching._CacheImpl  # numba 0.61 renamed it


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


# numba's own method (a reload of this module must not wrap the wrapper: it would wait on its own lock)
_COMPILE = getattr(dispatcher.Dispatcher.compile, "numba_compile", dispatcher.Dispatcher.compile)
_HELD: set[str] = set()  # the lock files this process holds: a nested compile of the same kernel,
_HELD_GUARD = threading.Lock()  # or another thread's, must not wait on this process's own lock


def _lock_path(disp) -> str | None:
    if fcntl is None:
        return None
    cache = getattr(disp, "_cache", None)
    if not isinstance(getattr(getattr(cache, "_impl", None), "locator", None), _KeyedLocator):
        return None
    index = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
    return index + ".lock" if index else None


def _compile_once(self, sig):
    """numba's Dispatcher.compile, for opcert's cached kernels under a lock across processes: the
    process that waited finds the kernel in numba's cache, whose index it reads again."""
    numba_registries.load()
    path = _lock_path(self)
    if path is None:
        return _COMPILE(self, sig)
    with _HELD_GUARD:
        mine = path not in _HELD
        if mine:
            _HELD.add(path)
    if not mine:
        return _COMPILE(self, sig)
    try:
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:  # a cache directory that cannot take the lock: compile as numba alone would
            return _COMPILE(self, sig)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return _COMPILE(self, sig)
        finally:
            os.close(fd)  # releases the lock
    finally:
        with _HELD_GUARD:
            _HELD.discard(path)


_compile_once.numba_compile = _COMPILE


def _install() -> None:
    classes = _IMPL._locator_classes
    if _KeyedLocator not in classes:
        classes.insert(0, _KeyedLocator)
    chosen = getattr(numba.config, "CACHE_LOCATOR_CLASSES", None)  # newer numba only
    if chosen and "opcert.jit._KeyedLocator" not in chosen:
        # NUMBA_CACHE_LOCATOR_CLASSES replaces numba's list by names: opcert's is put first in it (for
        # opcert's files only; it places them as numba's default locators would)
        numba.config.CACHE_LOCATOR_CLASSES = "opcert.jit._KeyedLocator," + chosen
    dispatcher.Dispatcher.compile = _compile_once


_install()


def _evict(d: Path, prefix: str) -> None:
    """Remove the generated kernels of one kind (source and numba's cache files) not used for
    files.KEEP_DAYS: every attribute value swept makes one, and nothing else removes them."""
    for src in d.glob(prefix + "*.py"):
        if not unused(src):
            continue
        try:
            for f in [src, *(d / "__pycache__").glob(src.stem + ".*")]:
                f.unlink(missing_ok=True)
        except OSError:  # another process removed it first
            pass


def load_generated(src: str, prefix: str):
    """A module generated by opcert (the compiled balls, the compiled implementation), imported from
    the kernel cache under a name keyed by its source, so that numba's cache serves later processes
    (a sweep's workers, the next run) without compiling; where no cache is writable, compiled in this
    process only. The file is written atomically: concurrent workers may race here."""
    digest = hashlib.sha256(src.encode()).hexdigest()[:24]
    name = f"{prefix}{digest}"
    d = kernel_cache_dir()
    if d is None:
        mod = type(sys)(name)
        exec(compile(src.replace("cache=True", "cache=False"), name, "exec"), mod.__dict__)
        return mod
    path = d / f"{name}.py"
    if not path.exists() or path.read_text() != src:
        _evict(d, prefix)
        fd, tmp = tempfile.mkstemp(dir=d, suffix=".tmp")
        with os.fdopen(fd, "w") as fh:
            fh.write(src)
        os.replace(tmp, path)
    else:
        touch(path)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod
