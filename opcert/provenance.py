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
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "mpmath": mpmath.__version__,
        "target": target_name,
        "target_version": target_version,
        "cpu": cpu_model(),
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    }


def command_line(argv=None) -> str:
    return shlex.join(["opcert"] + list(sys.argv[1:] if argv is None else argv))
