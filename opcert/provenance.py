"""Where a result came from: versions, machine, date."""

from __future__ import annotations

import datetime
import os
import platform
import shlex
import subprocess
import sys
from functools import lru_cache

import mpmath
import numpy

try:  # NumPy's private names: where they move, simd() says so rather than guess
    from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__
except ImportError:
    __cpu_baseline__ = __cpu_dispatch__ = __cpu_features__ = None

from opcert._version import __version__


@lru_cache(maxsize=1)
def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


@lru_cache(maxsize=1)
def simd() -> str:
    """The SIMD code paths NumPy dispatches to on this CPU (its baseline and the dispatch
    targets the CPU has). Results of NumPy-based code, onnx.reference included, and of the
    runtimes' own kernels can depend on them: onnx.reference's float32 Elu differs at
    x = -0.007776596117764711 with AVX-512 (X86_V4) and without. NPY_DISABLE_CPU_FEATURES,
    when set, is shown too: it changes the dispatch."""
    if __cpu_features__ is None:
        return "unknown (NumPy does not say)"
    found = [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]
    out = " ".join(list(__cpu_baseline__) + found)
    off = os.environ.get("NPY_DISABLE_CPU_FEATURES")
    return out + (f" (NPY_DISABLE_CPU_FEATURES={off})" if off else "")


def provenance(target_name: str = "", target_version: str = "") -> dict:

    return {
        "opcert": __version__,
        "opcert_commit": opcert_commit(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "mpmath": mpmath.__version__,
        "target": target_name,
        "target_version": target_version,
        "cpu": cpu_model(),
        "simd": simd(),
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
    }


def _git(*args) -> str | None:
    here = os.path.dirname(os.path.abspath(__file__))
    try:
        out = subprocess.run(["git", "-C", here, *args], capture_output=True, text=True, timeout=5)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


_COMMIT: list = []


def opcert_commit() -> str | None:
    """The git commit opcert runs from (with "+modified" for uncommitted changes), or None
    outside its own checkout (an installed wheel). Asked once per process."""
    if not _COMMIT:
        # only opcert's own checkout: an installed copy inside someone else's repository (a .venv
        # in a project) must not report that project's commit as opcert's
        top = _git("rev-parse", "--show-toplevel")
        here = os.path.dirname(os.path.abspath(__file__))
        if top is None or os.path.realpath(os.path.join(top, "opcert")) != os.path.realpath(here):
            _COMMIT.append(None)
            return None
        head = _git("rev-parse", "--short=12", "HEAD")
        dirty = _git("status", "--porcelain", "--untracked-files=no", "--", ".")
        _COMMIT.append(None if head is None else head + ("+modified" if dirty else ""))
    return _COMMIT[0]


def command_line(argv=None) -> str:
    return shlex.join(["opcert"] + list(sys.argv[1:] if argv is None else argv))
