"""Atomic writes: a report is either the old one or the new one, never half of one.

The new content goes to a temporary file in the target's directory, then
replaces the target by rename. A symbolic link is followed (the file it points
to is replaced, the link stays); a path that is not a regular file (a device
such as /dev/stdout, a FIFO) is written directly, since it cannot be renamed
over. `-` means standard output.
"""

from __future__ import annotations

import json
import os
import stat
import sys
import tempfile
import time
from pathlib import Path

from opcert.errors import UsageError


def _real(path: str) -> str:
    return os.path.realpath(path) if os.path.islink(path) else path


def _special(path: str) -> bool:
    try:
        return not stat.S_ISREG(os.stat(path).st_mode) and not stat.S_ISDIR(os.stat(path).st_mode)
    except OSError:
        return False


JSON_STDOUT = None  # where "-" writes while the CLI has set standard output aside (cli.json_stdout)


def write_bytes_atomic(path: str, data: bytes) -> None:
    if path == "-":
        out = JSON_STDOUT if JSON_STDOUT is not None else sys.stdout
        out = getattr(out, "buffer", out)
        out.write(data)
        out.flush()
        return
    path = _real(path)
    if _special(path):
        with open(path, "wb") as f:
            f.write(data)
        return
    directory = os.path.dirname(os.path.abspath(path))
    os.makedirs(directory, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".opcert-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp makes it private; a report is for reading
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def write_text_atomic(path: str, text: str) -> None:
    write_bytes_atomic(path, text.encode("utf-8"))


def write_json_atomic(path: str, data) -> None:
    write_text_atomic(path, json.dumps(data, indent=2, default=str) + "\n")


def check_writable(path: str, what: str, directory: bool = False) -> None:
    """Before a long run: refuse an output path that cannot be written (UsageError)."""
    if path == "-" and not directory:
        return
    path = _real(path)
    if directory:
        if os.path.exists(path) and not os.path.isdir(path):
            raise UsageError(f"{what} {path}: exists and is not a directory")
        probe = path
        while not os.path.exists(probe):
            probe = os.path.dirname(os.path.abspath(probe))
        if not os.access(probe, os.W_OK | os.X_OK):
            raise UsageError(f"{what} {path}: cannot be written (no write permission in {probe})")
        return
    if os.path.isdir(path):
        raise UsageError(f"{what} {path}: is a directory; give a file name")
    if _special(path):
        if not os.access(path, os.W_OK):
            raise UsageError(f"{what} {path}: cannot be written")
        return
    parent = os.path.dirname(os.path.abspath(path))
    probe = parent
    while not os.path.exists(probe):
        probe = os.path.dirname(probe)
    if not os.path.isdir(probe):
        raise UsageError(f"{what} {path}: {probe} is not a directory")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise UsageError(f"{what} {path}: cannot be written (no write permission in {probe})")
    if os.path.exists(path) and not os.access(path, os.W_OK) and not os.access(parent, os.W_OK):
        raise UsageError(f"{what} {path}: cannot be written")


def kernel_cache_dir() -> Path | None:
    """Where compiled kernels live between processes (generated numba sources, the C library
    shim): OPCERT_KERNEL_CACHE, else $XDG_CACHE_HOME/opcert/kernels; None where it cannot be
    written (then each process compiles for itself)."""
    root = os.environ.get("OPCERT_KERNEL_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "opcert", "kernels"
    )
    try:
        Path(root).mkdir(parents=True, exist_ok=True)
        return Path(root) if os.access(root, os.W_OK) else None
    except OSError:
        return None


KEEP_DAYS = 30  # a file of the kernel cache not used for this long is removed when another of its kind is written


def touch(path) -> None:
    """Mark a kernel cache file as used now (its modification time), so that unused() keeps it."""
    try:
        os.utime(path)
    except OSError:
        pass


def unused(path) -> bool:
    """Whether a kernel cache file was not used (touched or written) for KEEP_DAYS; False where it is gone."""
    try:
        return os.stat(path).st_mtime < time.time() - KEEP_DAYS * 86400
    except OSError:
        return False
