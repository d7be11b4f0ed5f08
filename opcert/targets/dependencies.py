"""What a target's results depend on beyond its own code: the key of a sweep's checkpoints.

A target's own fingerprint (its module's source, a C library's bytes) misses
what it reaches at run time: a shared library its library links (DT_NEEDED),
a `.so` a Python kernel loads through ctypes, a helper module imported inside
the kernel function, a data file it reads. `begin` is called before the
target is loaded and `end` after its first call; between the two:

- shared objects: every executable file mapping the process gained (from
  /proc/self/maps), by path, size, inode and modification time, and by content
  up to SMALL bytes;
- modules: every module the process gained, by the bytes of its file;
- files: every file opened for reading through Python (an audit hook), by
  content up to LARGE bytes, else by size and modification time.

Left out, because opcert itself loads them lazily (so whether they are new
depends on what the calling process did before, and a key must not): what
lies in the Python installation, its site-packages (installed distributions
count by version in the target's own fingerprint), the system's library
directories (/usr, /lib; /usr/local counts), and opcert's caches of compiled
code: its kernel cache (files.kernel_cache_dir: generated kernels, the C
library shim) and numba's NUMBA_CACHE_DIR. A cache file exists or not, and
is read or not, depending on whether an earlier process compiled it: with
them counted, the first sweep on a machine with empty caches did not resume
on its second run (tests/test_faults.py, on an empty kernel cache).

What none of these sees (a file read by C code, a network service) is caught
by the replay of every resumed chunk (verify.accuracy.sweep.replay_chunk).
"""

from __future__ import annotations

import hashlib
import os
import sys

from opcert.files import kernel_cache_dir
from opcert.targets.python import opcert_dir, site_dirs

SMALL = 4 << 20  # shared objects up to this size are hashed by content
LARGE = 64 << 20  # data files likewise
_opened: list | None = None
_hooked = False
_SKIP_PREFIXES = ("/proc/", "/sys/", "/dev/")
_SYSTEM = ("/usr/lib/", "/usr/lib64/", "/usr/libexec/", "/usr/share/", "/lib/", "/lib64/", "/etc/")


def _hook(event, args):
    if _opened is None or event != "open" or not args:
        return
    path, mode = args[0], args[1] if len(args) > 1 else "r"
    if isinstance(path, (str, bytes)) and (mode is None or "r" in str(mode) or "+" in str(mode)):
        _opened.append(os.fsdecode(path))


def _mapped() -> set[str]:
    out = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and "x" in parts[1]:
                    path = parts[5].strip()
                    if path.startswith("/") and not path.endswith("(deleted)"):
                        out.add(path)
    except OSError:
        pass
    return out


def begin() -> tuple:
    """The process's state before the target is loaded; from here Python's file opens are recorded."""
    global _opened, _hooked
    if not _hooked:
        sys.addaudithook(_hook)  # for the life of the process: it records only between begin and end
        _hooked = True
    _opened = []
    return _mapped(), set(sys.modules)


def _file_digest(path: str, limit: int) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    ident = f"size {st.st_size} ino {st.st_ino} mtime {st.st_mtime_ns}"
    if st.st_size > limit:
        return ident
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return ident + " unreadable"
    return h.hexdigest()


def _caches() -> tuple[str, ...]:
    """opcert's caches of compiled code (see the module's docstring), as path prefixes."""
    dirs = [kernel_cache_dir(), os.environ.get("NUMBA_CACHE_DIR") or None]
    return tuple(os.path.realpath(d) + os.sep for d in dirs if d)


def _metadata(path: str) -> bool:
    """Whether path is in a distribution's metadata (NAME.dist-info, NAME.egg-info): what importlib.metadata
    reads, for instance numba's first compilation in a process reading every distribution's entry points.
    That read happens once a process, in whichever call comes first, and is no kernel's data; an editable
    install keeps opcert's own outside site-packages, where it made the first in-process probe's key differ
    from every later one's (a sweep that did not resume)."""
    return any(part.endswith((".dist-info", ".egg-info")) for part in path.split(os.sep))


def end(before: tuple) -> tuple[str, dict]:
    """(a digest, what it covers by kind) of what the target brought in since `begin`."""
    global _opened
    mapped0, modules0 = before
    opened, _opened = _opened or [], None
    skip = (
        tuple(site_dirs())
        + (opcert_dir(),)
        + _SKIP_PREFIXES
        + _SYSTEM
        + tuple(os.path.realpath(p) + os.sep for p in {sys.prefix, sys.base_prefix, sys.exec_prefix})
        + _caches()
    )
    h = hashlib.sha256()
    cover = {"shared_objects": [], "modules": [], "files": []}
    for path in sorted(_mapped() - mapped0):
        if os.path.realpath(path).startswith(skip):
            continue
        h.update(f"so {path} {_file_digest(path, SMALL)}\n".encode())
        cover["shared_objects"].append(path)
    for name in sorted(set(sys.modules) - modules0):
        path = getattr(sys.modules.get(name), "__file__", None)
        if not isinstance(path, str):
            continue
        real = os.path.realpath(path)
        if real.startswith(skip):
            continue
        h.update(f"module {name} {real} {_file_digest(real, LARGE)}\n".encode())
        cover["modules"].append(real)
    files = set()
    for path in opened:
        real = os.path.realpath(path)
        if real.startswith(skip) or real.endswith((".py", ".pyc")) or _metadata(real) or not os.path.isfile(real):
            continue
        files.add(real)
    for real in sorted(files):
        h.update(f"file {real} {_file_digest(real, LARGE)}\n".encode())
        cover["files"].append(real)
    return h.hexdigest()[:32], cover
