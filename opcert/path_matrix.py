"""The path matrix: the same operator through several code paths of a runtime, side by side.

A path is a target (eager `torch`, `torch.compile`, `onnxruntime`, a fused subgraph, a callable) at an ISA
level where its library has a switch (`torch@avx2`; `torch@all` is every level the host has). Each path is
measured by the same `opcert accuracy` command a user runs, in a fresh process of its own (its worst ULP, its
properties, every layout family with its thread counts; every input of a 16-bit format), and the same process also runs it once on the
compared inputs, drawn here once for every path (opcert.isa's mechanism, which compares ISA levels the same
way): every input of a 16-bit format, the check's sampled inputs in float32 and float64. The outputs are then
compared bit for bit for every pair of paths (any NaN equals any NaN), with the largest distance between two
outputs in representable values (what NumPy's assert_array_max_ulp counts); paths whose bits are all equal
form one group. Where two paths differ, both are run again on the same inputs, each in a fresh process, and
the pair's example is the first input whose two outputs both came back: the input, both outputs, the
correctly rounded value and each output's error in ULP.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

import numpy as np

from opcert.errors import UsageError, choices
from opcert.formats import bits_differ, get_format
from opcert.isa import LevelOutputs, accuracy_argv, draw_compared, levels, outputs_at, run_accuracy, shown
from opcert.options import Options
from opcert.spec import get_operator, is_binary_operator, is_predicate_operator, is_tensor_operator
from opcert.spec.attrs import resolve, user_value
from opcert.spec.reference import reference_detailed
from opcert.targets import check_name
from opcert.verify.accuracy.measure import exact_error
from opcert.verify.properties.checks import value_of
from opcert.verify.ulp import ulp_distance


@dataclass(frozen=True)
class Path:
    """One code path: a target, and the environment its process starts with (an ISA level's switch)."""

    name: str  # as the matrix shows it: TARGET, or TARGET@LEVEL
    target: str
    env: dict = field(default_factory=dict)


def parse_paths(spec) -> list[Path]:
    """Paths from "A,B,..." (or a list): each a target name, or TARGET@LEVEL for one ISA level of its library's
    switch, or TARGET@all for every level the host has. UsageError naming what is allowed otherwise."""
    items = [s.strip() for s in (spec.split(",") if isinstance(spec, str) else list(spec or ()))]
    if len(items) < 2 or not all(items):
        raise UsageError(
            f"--paths {spec!r}: allowed is two paths or more, comma-separated, each a target (torch, "
            "torch.compile, onnxruntime, module:function, ...) or TARGET@LEVEL, TARGET@all for its ISA levels"
        )
    out: list[Path] = []
    for item in items:
        target, at, level = item.rpartition("@") if "@" in item else (item, "", "")
        name = check_name(target)
        if not isinstance(name, str):
            raise UsageError(f"path {item!r}: a path is a target's name (each path runs in a process of its own)")
        if not at:
            out.append(Path(item, name))
            continue
        have = levels(name)
        if not have:
            raise UsageError(f"path {item!r}: target {name} has no ISA switch opcert can set; give it as {name}")
        chosen = have if level == "all" else [(n, e) for n, e in have if n == level]
        if not chosen:
            raise UsageError(
                f"path {item!r}: {level!r} is not an ISA level of {name} on this host; allowed: "
                f"{choices(['all'] + [n for n, _ in have])}"
            )
        out += [Path(f"{name}@{n}", name, e) for n, e in chosen]
    names = [p.name for p in out]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise UsageError(f"--paths names {', '.join(twice)} twice; each path once")
    return out


def _summary(path: Path, argv: list[str], code: int, result: dict | None, err: str) -> dict:
    """A path's own measurement, as the matrix shows it."""
    command = (shown(path.env) + " " if path.env else "") + "opcert accuracy " + " ".join(argv)
    d = {"path": path.name, "target": path.target, "environment": path.env, "exit_code": code, "command": command}
    if result is None:
        d.update(status="crashed", error=f"opcert accuracy wrote no result (exit {code}): {err.strip()[-500:]}")
        return d
    d.update(
        status=result.get("status"),
        error=result.get("error"),
        max_ulp=result.get("max_ulp"),
        inputs=result.get("inputs_checked"),
        worst_layout=result.get("worst_layout"),
        correctly_rounded=result.get("correctly_rounded"),
        nan_mismatches=result.get("nan_mismatches"),
        inf_mismatches=result.get("inf_mismatches"),
        properties={p["name"]: p["status"] for p in result.get("properties") or []},
        target_details=(result.get("target_info") or {}).get("details"),
    )
    return d


def _pair(op, fmt, resolved, standard, x, a: LevelOutputs, b: LevelOutputs, d, again: dict) -> dict:
    """Two paths' outputs compared (d: where their bits differ): how many differ, how far apart, and the first
    replayed input."""
    ya, yb = a.y.view(fmt.uint), b.y.view(fmt.uint)
    out = {"paths": [a.level, b.level], "differ": int(d.sum()), "max_apart": 0, "nan_differ": 0, "example": None}
    if not d.any():
        return out
    va, vb = ya.view(fmt.dtype), yb.view(fmt.dtype)
    with np.errstate(invalid="ignore"):
        na, nb = np.isnan(va.astype(np.float64)), np.isnan(vb.astype(np.float64))
    one_nan = na != nb
    out["nan_differ"] = int(one_nan.sum())
    both = d & ~na & ~nb
    if both.any():
        out["max_apart"] = int(ulp_distance(va[both], vb[both]).max())
    where = np.flatnonzero(d)
    ra, rb = again.get(a.level), again.get(b.level)
    same = np.zeros(where.size, dtype=bool)
    if ra is not None and rb is not None and ra.y is not None and rb.y is not None:
        same = ~bits_differ(ra.y[where].view(fmt.uint), ya[where], fmt) & ~bits_differ(
            rb.y[where].view(fmt.uint), yb[where], fmt
        )
    k = int(where[np.flatnonzero(same)[0]]) if same.any() else int(where[0])
    xi = x[k : k + 1].view(fmt.dtype)
    rounded = np.asarray(reference_detailed(op, xi, resolved, standard).rounded).reshape(-1)[0]

    def side(r: LevelOutputs, replay) -> dict:
        yv = r.y[k : k + 1].view(fmt.dtype)
        with np.errstate(invalid="ignore"):
            e = exact_error(op, xi, float(yv.astype(np.float64)[0]), resolved, standard, fmt)
        return {
            "path": r.level,
            "output": value_of(yv[0], fmt),
            "ulp": e[0] if e else None,
            "replayed": value_of(replay.y[k : k + 1].view(fmt.dtype)[0], fmt)
            if replay is not None and replay.y is not None
            else None,
        }

    out["example"] = {
        "x": value_of(xi[0], fmt),
        "correctly_rounded": value_of(np.asarray(rounded, dtype=fmt.dtype), fmt),
        "outputs": [side(a, ra), side(b, rb)],
        "replayed": bool(same.any()),
        "replay": f"both paths run again on the same {x.size:,} inputs, each in a fresh process: "
        f"{int(same.sum()):,} of the {where.size:,} differing inputs gave both outputs again",
    }
    return out


def _missing(runs: list[LevelOutputs]) -> dict:
    """The paths that gave no outputs, and why."""
    return {r.level: r.info.get("error") or "no outputs" for r in runs if r.y is None}


def _compared(op, fmt, resolved, standard, x, runs, argvs: dict, xfile: str, tmp: str, say) -> list[dict]:
    """Every pair of the paths with outputs compared (_pair), after each path that differs from another has run
    the compared inputs again, once, in a fresh process."""
    have = [r for r in runs if r.y is not None]
    masks = {
        (i, j): bits_differ(have[i].y.view(fmt.uint), have[j].y.view(fmt.uint), fmt)
        for i in range(len(have))
        for j in range(i + 1, len(have))
    }
    again = {}
    for i in sorted({k for pair, d in masks.items() if d.any() for k in pair}):
        r = have[i]
        say(f"path {r.level}: run again on the compared inputs")
        again[r.level] = outputs_at(r.level, r.env, argvs[r.level], xfile, os.path.join(tmp, f"again{i}"))
    return [_pair(op, fmt, resolved, standard, x, have[i], have[j], d, again) for (i, j), d in masks.items()]


def pair_text(pr: dict) -> tuple[str, str]:
    """A pair in words, as the tables show it: (how far apart, the replayed example or "-")."""
    apart = f"{pr['max_apart']:,}" + (f" (+{pr['nan_differ']:,} NaN vs number)" if pr["nan_differ"] else "")
    ex = pr["example"]
    if not ex:
        return apart, "-"
    a, b = ex["outputs"]

    def ulp(v) -> str:
        return "-" if v is None else f"{v:.4g}"

    return apart, (
        f"x = {ex['x']['value']} ({ex['x']['bits']}): {a['path']} {a['output']['bits']} ({ulp(a['ulp'])} ULP), "
        f"{b['path']} {b['output']['bits']} ({ulp(b['ulp'])} ULP); correctly rounded {ex['correctly_rounded']['bits']}"
        + ("" if ex["replayed"] else "; NOT reproduced when run again")
    )


def _groups(names: list[str], pairs: list[dict]) -> list[list[str]]:
    """Paths whose outputs are all the same bits, grouped (a path alone where it matches no other)."""
    parent = {n: n for n in names}

    def root(n):
        while parent[n] != n:
            n = parent[n]
        return n

    for p in pairs:
        if p["differ"] == 0:
            a, b = (root(n) for n in p["paths"])
            parent[b] = a
    groups: dict[str, list[str]] = {}
    for n in names:
        groups.setdefault(root(n), []).append(n)
    return list(groups.values())


def path_matrix(
    op_name: str,
    dtype: str,
    paths,
    *,
    mode: str = "sample",
    options: Options = Options(),
    attrs=None,
    say=None,
) -> dict:
    """The path matrix of one element-wise operator and format (see the module's text), JSON-ready: op, dtype,
    attrs, scope, inputs, complete (every input of the format, every path's outputs), paths (each path's own
    measurement and the command that reproduces it), pairs (bits compared), groups (paths giving the same bits).
    attrs: {name: "value"}; options: samples, seed, standard, layout_samples, target_timeout; say(text): where
    progress goes."""
    if is_tensor_operator(op_name) or is_binary_operator(op_name) or is_predicate_operator(op_name):
        raise UsageError(f"the path matrix covers the element-wise operators; {op_name} is not one")
    op, fmt = get_operator(op_name), get_format(dtype)
    if fmt.kind != "float":
        raise UsageError(f"the path matrix covers float formats; {dtype} is not one")
    plist = parse_paths(paths)
    if fmt.bits <= 16:
        mode = "exhaustive"  # every input is compared: each path is measured on every input too
    attrs = dict(attrs or {})
    resolved = resolve(op, attrs, options.standard)
    say = say or (lambda text: None)
    attr_args = [f"{k}={v}" for k, v in attrs.items()]
    with tempfile.TemporaryDirectory(prefix="opcert-paths-") as tmp:
        xfile = os.path.join(tmp, "compared-x.npy")
        scope, complete = draw_compared(xfile, op.name, fmt.name, attrs, mode, options)
        x = np.load(xfile)
        runs, summaries, argvs = [], [], {}
        for i, p in enumerate(plist):
            say(f"path {p.name} ({i + 1} of {len(plist)})" + (f": {shown(p.env)}" if p.env else ""))
            argv = accuracy_argv(op.name, p.target, fmt.name, options, exhaustive=mode == "exhaustive", attrs=attr_args)
            argvs[p.name] = argv
            where = os.path.join(tmp, f"path{i}")
            code, result, err = run_accuracy(p.env, argv, outputs=where, inputs=xfile)
            summaries.append(_summary(p, argv, code, result, err))
            runs.append(LevelOutputs.read(p.name, p.env, where, code, err))
        missing = _missing(runs)
        pairs = _compared(op, fmt, resolved, options.standard, x, runs, argvs, xfile, tmp, say)
    return {
        "op": op.name,
        "dtype": fmt.name,
        "standard": options.standard,
        "attrs": {k: str(user_value(op, k, v)) for k, v in resolved.items()},
        "scope": scope,
        "inputs": int(x.size),
        "complete": bool(complete) and not missing,
        "paths": summaries,
        "missing": missing,
        "pairs": pairs,
        "groups": _groups([r.level for r in runs if r.y is not None], pairs),
    }


def compare_paths(
    op_name: str,
    dtype: str,
    target: str,
    against: str,
    *,
    mode: str = "sample",
    options: Options = Options(),
    attrs=None,
    env: dict | None = None,
) -> dict:
    """`target`'s outputs against another path's, `against`, both started with `env` (an ISA level's switch), on the
    compared inputs (as path_matrix draws them), outputs only, each in a fresh process; both run again where
    they differ. The gate's `against` key. A JSON-ready dict: scope, inputs, complete, missing (a path without
    outputs, and why), and the pair as path_matrix gives it (differ, max_apart, nan_differ, example)."""
    op, fmt = get_operator(op_name), get_format(dtype)
    attrs = dict(attrs or {})
    resolved = resolve(op, attrs, options.standard)
    attr_args = [f"{k}={v}" for k, v in attrs.items()]
    # both at the same ISA level: the gate's command for the check (its switch in the environment) runs both so
    paths = (Path(target, target, dict(env or {})), Path(against, against, dict(env or {})))
    with tempfile.TemporaryDirectory(prefix="opcert-paths-") as tmp:
        xfile = os.path.join(tmp, "compared-x.npy")
        scope, complete = draw_compared(xfile, op.name, fmt.name, attrs, mode, options)
        x = np.load(xfile)
        argvs = {
            p.name: accuracy_argv(
                op.name, p.target, fmt.name, options, exhaustive=mode == "exhaustive", attrs=attr_args
            )
            for p in paths
        }
        runs = [
            outputs_at(p.name, p.env, argvs[p.name], xfile, os.path.join(tmp, f"path{i}")) for i, p in enumerate(paths)
        ]
        out = {
            "paths": [p.name for p in paths],
            "environment": dict(env or {}),
            "scope": scope,
            "inputs": int(x.size),
            "missing": _missing(runs),
        }
        out["complete"] = bool(complete) and not out["missing"]
        if out["missing"]:
            return dict(out, differ=None, max_apart=None, nan_differ=None, example=None)
        (pair,) = _compared(op, fmt, resolved, options.standard, x, runs, argvs, xfile, tmp, lambda text: None)
    return {**out, **pair}  # the pair's "paths" are the same two names
