"""Where a result came from: versions, machine, date."""
from __future__ import annotations

import datetime
import platform
import shlex
import sys
from functools import lru_cache


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


def provenance(target_name: str = "", target_version: str = "") -> dict:
    import mpmath
    import numpy

    from . import __version__
    return {
        "opcert": __version__,
        "opcert_commit": opcert_commit(),
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "mpmath": mpmath.__version__,
        "target": target_name,
        "target_version": target_version,
        "cpu": cpu_model(),
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def _git(*args) -> str | None:
    import os
    import subprocess
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
    import os
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
