"""`module:function` targets: any callable f(x: numpy.ndarray, **attrs) -> numpy.ndarray, and, for the tensor
operators, f(x, axis=int or tuple) -> numpy.ndarray (`PythonTensorTarget`).

Attributes are passed by ONNX name: numbers as Python floats holding the
binary32 values, a choice by its name (Gelu's approximate="tanh"). The
fingerprint that keys sweep checkpoints covers the code the
function can reach (see `fingerprint`): editing the kernel, or any module of
the user's it imports, changes it; upgrading a library it uses does too.
"""

from __future__ import annotations

import csv
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import platform
import re
import sys
import sysconfig
from functools import lru_cache
from importlib.metadata import distributions
from importlib.metadata import version as dist_version
from types import ModuleType

from opcert.errors import TargetFailure, UsageError
from opcert.files import kernel_cache_dir, touch, unused, write_json_atomic
from opcert.fingerprint import code_fingerprint
from opcert.provenance import simd
from opcert.spec.attrs import user_value
from opcert.targets.base import Target, TargetInfo
from opcert.targets.isolation import TargetExit
from opcert.targets.layouts import PYTHON, LayoutSupport
from opcert.targets.protocol import TensorTarget

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")


def split(spec: str) -> tuple[str, str]:
    module_name, sep, func_name = spec.partition(":")
    if not sep or not _NAME.match(module_name) or not _NAME.match(func_name):
        raise UsageError(
            f"target {spec!r} is not of the form module:function (a dotted module path, a colon, "
            "a function name), e.g. numpy:tanh"
        )
    return module_name, func_name


def load(spec: str, timeout: float | None = None) -> Target:
    module_name, func_name = split(spec)
    top = module_name.split(".")[0]
    if top not in sys.modules and importlib.util.find_spec(top) is None:
        raise UsageError(
            f"target {spec!r}: cannot import module {module_name!r} (no module named {top!r} on "
            "the path; PYTHONPATH adds directories)"
        )
    try:
        module = importlib.import_module(module_name)
    except KeyboardInterrupt:
        raise
    except SystemExit as exc:  # a module that ends the process at import: the target's failure
        raise TargetFailure(
            f"target {spec!r}: importing module {module_name!r} raised SystemExit({exc.code!r})"
        ) from None
    except TargetExit as exc:
        raise TargetFailure(f"target {spec!r}: importing module {module_name!r}: {exc}") from None
    except BaseException as exc:  # noqa: BLE001 - cannot be loaded: the target as given is unusable
        raise UsageError(
            f"target {spec!r}: importing module {module_name!r} failed with {type(exc).__name__}: {exc}"
        ) from None
    func = module
    for part in func_name.split("."):
        func = getattr(func, part, None)
        if func is None:
            raise UsageError(f"target {spec!r}: module {module_name!r} has no {func_name!r}")
    if not callable(func):
        raise UsageError(f"target {spec!r}: {func_name!r} is not callable")
    version = str(getattr(sys.modules[top], "__version__", "unknown"))

    def call(op, x, attrs):
        # by ONNX's spelling: a number as a Python float, a choice by its name (Gelu's approximate="tanh")
        return func(x, **{k: user_value(op, k, v) for k, v in attrs.items()})

    # NumPy's dispatch (NPY_DISABLE_CPU_FEATURES) is keyed too: a NumPy callable's bits can depend on it
    fp = hashlib.sha256(f"{fingerprint(module)} {simd()}".encode()).hexdigest()[:32]
    info = TargetInfo(
        spec, "python", version, fp, {"module_file": getattr(module, "__file__", None), "numpy_isa": simd()}
    )
    tgt = Target(info, call, timeout=timeout)
    tgt.layouts = LayoutSupport(**PYTHON)
    return tgt


def load_callable(name: str, signature: str) -> tuple:
    """(the callable `module:function` names, its top module's version) for the tensor, binary and predicate
    operators' Python targets; UsageError naming what is wrong (`signature`: the form the message asks for)."""
    module, attr = split(name)
    try:
        obj = importlib.import_module(module)
    except ImportError as exc:
        raise UsageError(f"target {name!r}: cannot import module {module!r} ({exc})") from None
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"target {name!r}: module {module!r} has no {attr!r}") from None
    if not callable(obj):
        raise UsageError(f"target {name!r}: {attr!r} is not callable (a function {signature})")
    return obj, str(getattr(importlib.import_module(module.split(".")[0]), "__version__", ""))


def keywords_of(fn) -> tuple[dict | None, bool]:
    """fn's parameters (None where it has no signature to read: a ufunc, a builtin) and whether it takes **kwargs."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return None, False
    return params, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values())


def keywords_not_taken(name: str, fn, given: dict) -> str | None:
    """Why `fn` cannot be given these keyword attributes (names its signature does not take; every one for a ufunc
    or a builtin, which have no signature to read), or None where it takes them all."""
    if not given:
        return None
    params, takes_all = keywords_of(fn)
    missing = [k for k in given if params is None or (k not in params and not takes_all)]
    if not missing:
        return None
    # a binary32 value as a number, a choice by its name (GroupNormalization's num_groups = "2")
    named = ", ".join(f"{k} = {given[k]!r}" if isinstance(given[k], str) else f"{k} = {given[k]:g}" for k in missing)
    return f"{name} takes no keyword {', '.join(missing)} (its signature), and the check gives {named}"


class PythonTensorTarget(TensorTarget):
    """`module:function` for the tensor operators: f(x, axis=int or tuple) -> array; an operator's attributes
    as keywords besides (LayerNormalization: f(x, axis=..., epsilon=...))."""

    def __init__(self, name: str):
        self.fn, self.version = load_callable(name, "f(x, axis=...) -> ndarray")
        self.name = name
        params, self.takes_all = keywords_of(self.fn)  # read once, not at every call
        self.keywords = frozenset(params or ())

    def unsupported(self, op, std, dtype, reduced, rank):
        return keywords_not_taken(self.name, self.fn, self._given(op, std))

    def call(self, op, std, x, reduced):
        return self.fn(x, axis=reduced[0] if len(reduced) == 1 else tuple(reduced), **self._given(op, std))

    def _given(self, op, std) -> dict:
        """op.given(std), less each tensor input (a normalization's scale and B) that the kernel takes no keyword
        for and that holds the standard's default: a kernel without a Scale or a B computes the formula with a Scale
        of ones and no B, which that default is. At any other value the kernel is refused (keywords_not_taken)."""
        given = op.given(std)
        if self.takes_all:
            return given
        held = std.values()
        for a in op.attributes:
            if a.input and a.name in given and a.name not in self.keywords and a.name in std.defaults:
                if held[a.name] == float(std.defaults[a.name]):
                    del given[a.name]
        return given


@lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    """importlib.metadata.packages_distributions(), kept between processes in the kernel cache under a key of
    what is installed (_installed_key): reading every distribution's metadata was a large part of the start
    of each process that loads a Python target (bench/README.md, 'Figures behind choices in the code'). The
    same mapping (tests/test_sweep.py checks it)."""
    d = kernel_cache_dir()
    path = None if d is None else d / "distributions" / f"{_installed_key()}.json"
    if path is not None:
        try:
            with open(path) as f:
                held = json.load(f)
            if isinstance(held, dict) and all(isinstance(v, list) for v in held.values()):
                touch(path)
                return held
        except (OSError, ValueError):
            pass
    out = _read_distributions()
    if path is not None:
        try:
            write_json_atomic(str(path), out)
            _evict_old(path.parent)
        except OSError:  # a cache that cannot be written: read again next time
            pass
    return out


_METADATA_FILES = ("METADATA", "PKG-INFO", "top_level.txt", "RECORD")  # what _read_distributions reads of each


def _installed_key() -> str:
    """A hash of what importlib.metadata reads distributions from: each sys.path entry; in each directory, each
    *.dist-info or *.egg-info (an install or a removal adds or removes one) with its modification time and its
    files' that _read_distributions reads (an edit in place); a zip or an egg file's own time; the interpreter;
    and opcert's code (a change to how the mapping is read). Not a directory's own time: writing a report into
    the working directory (sys.path's first entry for `python -m opcert`) would read everything again."""
    h = hashlib.sha256(f"{sys.executable} {sys.version} {code_fingerprint()}".encode())
    for p in sys.path:
        h.update(f"\0{p}".encode())
        try:
            entries = list(os.scandir(p or "."))
        except OSError:  # not there, or not a directory: a zip (importlib reads those too) by its time
            h.update(repr(_mtime(p)).encode())
            continue
        for e in sorted(entries, key=lambda e: e.name):
            if e.name.lower().endswith((".dist-info", ".egg-info", ".egg")):
                stamps = [_mtime(e.path)] + [_mtime(os.path.join(e.path, f)) for f in _METADATA_FILES]
                stamps += [_mtime(os.path.join(e.path, "EGG-INFO", f)) for f in _METADATA_FILES]
                h.update(f"\0{e.name} {stamps}".encode())
    return h.hexdigest()[:32]


def _mtime(path: str):
    """A path's modification time, or None where it is not there or cannot be read (a dangling link: the entry
    still counts by its name)."""
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return None


def _evict_old(d) -> None:
    """Remove the mappings not read for files.KEEP_DAYS (each install that changes the key writes one; a read
    touches its file)."""
    for f in d.glob("*.json"):
        if unused(f):
            try:
                f.unlink(missing_ok=True)
            except OSError:  # a cache directory this process cannot clean: the next one may
                pass


def _read_distributions() -> dict[str, list[str]]:
    """importlib.metadata.packages_distributions(), read faster: the distributions without top_level.txt have
    their RECORD read as text rather than as 26,000 PackagePath objects."""
    out: dict[str, list[str]] = {}
    for dist in distributions():
        tops = (dist.read_text("top_level.txt") or "").split()
        if not tops:
            record = dist.read_text("RECORD")
            if record is None:  # no RECORD (an egg-info install): the library's own reading of its files
                paths = [str(f) for f in (dist.files or [])]
            else:
                paths = [row[0] for row in csv.reader(record.splitlines()) if row]
            names = set()
            for path in paths:
                parts = [p for p in path.split("/") if p not in ("", ".")]
                if parts and parts[-1].endswith(".py") and parts[-1] != ".py":
                    names.add(parts[0] if len(parts) > 1 else parts[0][:-3])
            tops = list(names)
        for top in tops:
            out.setdefault(top, []).append(dist.metadata["Name"])
    return out


def site_dirs() -> list[str]:
    paths = {sysconfig.get_paths()[k] for k in ("purelib", "platlib", "stdlib", "platstdlib")}
    return [os.path.realpath(p) + os.sep for p in paths if p]


def opcert_dir() -> str:
    return os.path.realpath(os.path.dirname(os.path.dirname(__file__))) + os.sep


# opcert's own dependencies are loaded in every worker, whatever the target:
# their versions always count.
_BASE_DISTS = ("numpy", "ml_dtypes", "mpmath", "numba", "llvmlite", "z3-solver", "python-flint", "rich")


def fingerprint(module) -> str:
    """A hash of the code the target's module can reach: its own file and, through
    its globals, every module of the user's (outside site-packages and the
    standard library) that it imports, by the bytes of their files, transitively;
    the installed distributions those modules use, by name and version; and the
    Python version. Code imported inside a function at call time is not seen."""
    h = hashlib.sha256(f"python {platform.python_version()} {platform.machine()}".encode())
    dists, files = set(_BASE_DISTS), set()
    site, own, top_dists = site_dirs(), opcert_dir(), _distributions()
    seen, stack = set(), [module]
    while stack:
        m = stack.pop()
        name = getattr(m, "__name__", None)
        if not isinstance(name, str) or name in seen:
            continue
        seen.add(name)
        path = getattr(m, "__file__", None)
        if not isinstance(path, str):
            continue
        real = os.path.realpath(path)
        if real.startswith(own):
            continue
        if any(real.startswith(d) for d in site):
            dists.update(top_dists.get(name.split(".")[0], []))
            continue
        files.add(real)
        parent = name.rpartition(".")[0]
        if parent and parent in sys.modules:
            stack.append(sys.modules[parent])
        for v in list(vars(m).values()):
            if isinstance(v, ModuleType):
                stack.append(v)
            else:
                owner = getattr(v, "__module__", None)
                if isinstance(owner, str) and owner in sys.modules:
                    stack.append(sys.modules[owner])
    for d in sorted(dists):
        try:
            h.update(f"dist {d} {dist_version(d)}\n".encode())
        except Exception:  # noqa: BLE001 - not installed, or no metadata: the name still counts
            h.update(f"dist {d} ?\n".encode())
    for f in sorted(files):
        h.update(f"file {f}\n".encode())
        try:
            with open(f, "rb") as fh:
                h.update(hashlib.sha256(fh.read()).digest())
        except OSError:
            h.update(b"unreadable")
    return h.hexdigest()[:32]
