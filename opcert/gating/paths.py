"""Where a configuration's Python targets are imported from: its `pythonpath`.

`pythonpath = ["src", "."]` (in opcert.toml or [tool.opcert]) names directories relative to the
configuration file; without the key it is ["."], the file's own directory, so a module beside opcert.toml
(`target = "mykernels:tanh"`) is found from any working directory. `activate` puts them on sys.path (the
given ones at the front, the implicit one at the end), which the worker processes inherit (forked ones with the process; multiprocessing hands a spawned
one the parent's sys.path), and of PYTHONPATH (what a target's own Python subprocesses read).

A check whose module lies in a directory only the configuration put on the path records that directory
(Check.pythonpath), and its reproduce command starts with `PYTHONPATH=...` (`reproduce_env`), so that it
runs as printed from the directory the gate ran in.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import os
import shlex
import sys

# directories configurations put on sys.path in this process (a second reading of the same file still
# knows they are the configuration's, not the user's)
_ADDED: set[str] = set()


def _real(entry: str) -> str:
    return os.path.realpath(entry or os.curdir)


def activate(dirs, front: bool = True) -> tuple[str, ...]:
    """Put `dirs` (absolute) on sys.path and PYTHONPATH, in order: at the front (a `pythonpath` the file
    gives), or at the end (the implicit ["."]: a directory that happens to hold a package of the name of an
    installed one does not hide it); returns those that are on the path because of a configuration (not
    already there before one added them)."""
    present = {_real(p) for p in sys.path}
    for d in dirs:
        if _real(d) not in present:
            _ADDED.add(d)
    env = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in dirs]
    if front:
        sys.path[:] = [*dirs, *(p for p in sys.path if p not in dirs)]
        os.environ["PYTHONPATH"] = os.pathsep.join([*dirs, *env])
    else:
        sys.path.extend(d for d in dirs if _real(d) not in present)
        os.environ["PYTHONPATH"] = os.pathsep.join([*env, *dirs])
    importlib.invalidate_caches()
    return tuple(d for d in dirs if d in _ADDED)


def module_of(target: str) -> str | None:
    """The top-level module a module:function target imports (None for any other target)."""
    if target.startswith("c:") or ":" not in target:
        return None
    return target.partition(":")[0].split(".")[0]


def providing(target: str, dirs) -> tuple[str, ...]:
    """The one of `dirs` that the target's module is imported from, as sys.path now stands (empty where it
    is another directory, or none, or the target is not a module)."""
    top = module_of(target)
    if top is None:
        return ()
    spec = importlib.machinery.PathFinder.find_spec(top)
    if spec is None:
        return ()
    if spec.submodule_search_locations:  # a package (a namespace one too): the directory that holds it
        root = os.path.dirname(os.path.realpath(next(iter(spec.submodule_search_locations))))
    elif spec.origin and os.path.isabs(spec.origin):
        root = os.path.dirname(os.path.realpath(spec.origin))
    else:
        return ()
    return next(((d,) for d in dirs if _real(d) == root), ())


def reproduce_env(check) -> str:
    """The prefix of a check's reproduce command: `PYTHONPATH=DIR:... ` where its module is found only
    through the configuration's pythonpath (Check.pythonpath), else nothing. The rest of PYTHONPATH, as the
    gate ran with it, follows."""
    dirs = list(getattr(check, "pythonpath", ()) or ())
    if not dirs:
        return ""
    rest = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p and p not in dirs]
    return "PYTHONPATH=" + shlex.quote(os.pathsep.join([*dirs, *rest])) + " "
