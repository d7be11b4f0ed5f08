"""ISA levels: the instruction-set levels a runtime can be told to use, on this host.

Runtimes pick their kernels by cpuid, and the result of a kernel can depend on
the pick (onnx.reference's float32 Elu: 0.77 ULP and monotone with NumPy's
AVX-512 paths off, 2.35 ULP and not monotone with them on, on one host). Some
let a process cap the level, through an environment variable read when the
library loads (each runtime's row of opcert.runtime_table names its switch);
`--isa all` runs a check once per level the host has, each in a fresh process
started with that variable:

- torch: ATEN_CPU_CAPABILITY = default, avx2, avx512 (torch reports the one
  it dispatched for: torch.backends.cpu.get_cpu_capability());
- NumPy (NumPy callables, onnx.reference, opcert's own code):
  NPY_DISABLE_CPU_FEATURES turns off the dispatch targets above a level;
- oneDNN inside OpenVINO: ONEDNN_MAX_CPU_ISA = SSE41, AVX2, AVX512_CORE.

ONNX Runtime (MLAS), JAX (XLA) and C kernels have no such switch: they get
one result, at the host's level, and the result says so.

An ISA level is a code path: `--isa all` and the gate's isa key also compare
the levels' outputs bit for bit on the same inputs (compare_levels: every
input of a 16-bit format, the check's samples of float32 and float64, a
stated sample in a float32 sweep), and where two levels differ the layout
property is refuted with an input run again at both levels (torch's float16
erf: 6,584 of the 65,536 outputs differ between default and avx2 on a Xeon
with AVX-512; avx2 and avx512 agree). Each level's own figures stay.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__

from opcert.errors import TargetFailure, UsageError, choices
from opcert.formats import bits_differ, get_format
from opcert.options import Options
from opcert.runtime_table import NUMPY_ISA, RUNTIMES, isa_switches, runtime_of
from opcert.spec import get_operator
from opcert.spec.attrs import resolve
from opcert.spec.reference import reference_detailed
from opcert.targets import load_target, trusted
from opcert.verify.accuracy import inputs as inputs_mod
from opcert.verify.accuracy.measure import SWEEP_LAYOUT_SAMPLES, AccuracyResult, default_samples, exact_error
from opcert.verify.properties.checks import value_of
from opcert.workers import WorkerLost, run_isolated

# library -> the environment variable that caps its ISA level
SWITCHES = {s.library: s.variable for s in isa_switches()}


def _numpy_features() -> tuple[list[str], list[str]]:
    """(NumPy's baseline, the dispatch targets this CPU has, in NumPy's order)."""
    return list(__cpu_baseline__), [f for f in __cpu_dispatch__ if __cpu_features__.get(f)]


def _host_has(feature: str) -> bool:
    """Whether the CPU has a NumPy feature name, whatever NPY_DISABLE_CPU_FEATURES says (it is read from
    /proc/cpuinfo flags where NumPy's own view may be capped)."""
    flags = ""
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("flags"):
                    flags = line
                    break
    except OSError:
        pass
    need = {"AVX2": ("avx2", "fma"), "AVX512": ("avx512f", "avx512bw", "avx512vl", "avx512dq")}[feature]
    return all(f" {n}" in flags for n in need)


# a callable module:function whose module starts with one of these computes with a runtime's library
_RUNTIME_MODULES = tuple(m for r in RUNTIMES for m in r.modules)


def switch_for(target: str) -> str | None:
    """The library whose ISA switch applies to `target` (None: it has none)."""
    if target.startswith("c:"):
        return None  # a C kernel picks its own
    row = runtime_of(target)
    if row is not None:  # a runtime: its row's switch, on its own device (not on NAME:DEVICE, a GPU)
        return row.isa.library if row.isa is not None and target == row.name else None
    if target == "opcert" or (":" in target and not target.startswith(_RUNTIME_MODULES)):
        return NUMPY_ISA.library  # opcert's own code, and a callable's, run on NumPy's dispatch
    return None  # a callable inside a runtime's library: none opcert sets for a callable


# the switch and its levels, lowest first, with the CPU feature each needs (None: every x86-64 host)
_CAPPED = {s.library: (s.variable, s.levels) for s in isa_switches() if s.levels}


def levels(target: str) -> list[tuple[str, dict]]:
    """[(level name, environment)] for every level this host supports, lowest first."""
    lib = switch_for(target)
    if lib in _CAPPED:
        var, table = _CAPPED[lib]
        return [(name, {var: name}) for name, need in table if need is None or _host_has(need)]
    if lib == NUMPY_ISA.library:
        _, have = _numpy_features()
        out = []
        for i in range(len(have) + 1):
            off = have[i:]
            name = have[i - 1] if i else "baseline"  # NumPy's baseline: every dispatch target off
            out.append((name, {NUMPY_ISA.variable: " ".join(off)}))
        return out
    return []


def check_isa(value, target: str) -> str | None:
    """Validate --isa / `isa`: "all", "host" or a level name of the target's switch."""
    if value in (None, "host"):
        return None
    names = [n for n, _ in levels(target)]
    if value == "all":
        return value
    if not names:
        raise UsageError(
            f"--isa {value}: target {target} has no ISA switch opcert can set (ONNX Runtime's MLAS, "
            "XLA and C kernels pick theirs by cpuid); allowed: host, all (one result, at the host's "
            "level)"
        )
    if value not in names:
        raise UsageError(
            f"--isa {value!r}: not a level of {switch_for(target)} on this host; allowed: "
            f"{choices(['all', 'host'] + names)}"
        )
    return value


def environment(target: str, level: str) -> dict:
    """The environment of one level of `target` (UsageError where it has no such level)."""
    for name, env in levels(target):
        if name == level:
            return env
    raise UsageError(
        f"ISA level {level!r}: not a level of {target} on this host; allowed: {choices([n for n, _ in levels(target)])}"
    )


def accuracy_argv(
    op: str,
    target: str,
    dtype: str,
    options: Options = Options(),
    *,
    exhaustive=False,
    attrs=(),
    max_ulp=None,
) -> list[str]:
    """The arguments of `opcert accuracy` for one check (attrs: "NAME=VALUE" strings or (name, value) pairs).
    Of `options`: samples, seed, standard, layout_samples, target_timeout, workers, checkpoint, and isolation
    "none" as --in-process; the others have no flag here."""
    argv = [op, "--dtype", dtype, "--target", target, "--seed", str(options.seed)]
    for a in attrs:
        if not isinstance(a, str):
            k, v = a
            a = f"{k}={v}" if isinstance(v, str) else f"{k}={float(v)!r}"
        argv += ["--attr", a]
    for flag, value in (
        ("--standard", options.standard),
        ("--samples", options.samples),
        ("--max-ulp", max_ulp),
        ("--layout-samples", options.layout_samples),
        ("--target-timeout", options.target_timeout),
        ("--workers", options.workers),
        ("--checkpoint", options.checkpoint),
    ):
        if value is not None:
            argv += [flag, str(value)]
    in_process = options.isolation == "none"
    return argv + (["--exhaustive"] if exhaustive else []) + (["--in-process"] if in_process else [])


def shown(env: dict) -> str:
    """A level's environment as a shell prefix."""
    return " ".join(f"{k}={v!r}" for k, v in env.items())


def run_accuracy(
    env: dict,
    argv: list[str],
    capture: bool = True,
    stdout=None,
    outputs: str | None = None,
    inputs: str | None = None,
    only: bool = False,
) -> tuple[int, dict | None, str]:
    """`opcert accuracy ARGV` in a fresh process with `env` added to this one's: (exit status, its JSON result
    or None where it wrote none, its stderr where captured). capture=False: its output goes to this
    process's streams (stdout: where its table goes; None: this process's stdout). outputs: a directory where
    the process also writes its outputs on the compared inputs (level_outputs); inputs: a file of those
    inputs' bit patterns (else it draws them); only: it writes those outputs alone (no measurement, no JSON
    result)."""
    with tempfile.TemporaryDirectory(prefix="opcert-isa-") as tmp:
        path = os.path.join(tmp, "r.json")
        run = [sys.executable, "-m", "opcert", "accuracy", *argv, "--json", path]
        if outputs:
            run += (
                ["--isa-outputs", outputs]
                + (["--isa-inputs", inputs] if inputs else [])
                + (["--isa-outputs-only"] if only else [])
            )
        full = dict(os.environ, **env)
        proc = (
            subprocess.run(run, env=full, capture_output=True, text=True)
            if capture
            else subprocess.run(run, env=full, stdout=stdout)
        )
        try:
            with open(path, encoding="utf-8") as fh:
                result = json.load(fh)
        except (OSError, ValueError):
            result = None
    return proc.returncode, result, proc.stderr if capture else ""


def measure_at_level(
    level: str,
    op: str,
    target: str,
    dtype: str,
    mode: str,
    *,
    options: Options = Options(),
    attrs=(),
    compare: bool = True,
):
    """An AccuracyResult of `opcert accuracy` run in a fresh process at one ISA level (its library reads the
    switch when it loads, so a process that has loaded it cannot change level). options: as accuracy_argv
    reads them. compare: its outputs are also compared bit for bit with every other level's the host has
    (compare_levels, each in a fresh process), and its layout property says so: refuted, with the replayed
    input and both levels' outputs, where they differ."""
    env = environment(target, level)
    argv = accuracy_argv(op, target, dtype, options, exhaustive=mode == "exhaustive", attrs=attrs)
    others = [(n, e) for n, e in levels(target) if n != level] if compare else []
    with tempfile.TemporaryDirectory(prefix="opcert-isa-") as tmp:
        own = os.path.join(tmp, "level")
        code, d, err = run_accuracy(env, argv, outputs=own if others else None)
        if d is None:
            raise RuntimeError(
                f"opcert accuracy at ISA level {level} wrote no result (exit {code}): {err.strip()[-500:]}"
            )
        res = AccuracyResult(**d)
        res.command = shown(env) + " " + res.command
        res.notes.append(f"run at ISA level {level} ({shown(env)}), in a process of its own")
        if others and res.status == "ok":
            mine = LevelOutputs.read(level, env, own, code, err)
            runs = []
            for i, (name, e) in enumerate(levels(target)):
                if name == level:
                    runs.append(mine)
                elif mine.x is not None:
                    runs.append(outputs_at(name, e, argv, os.path.join(own, "x.npy"), os.path.join(tmp, f"o{i}")))
            cmp = compare_levels(runs, argv, tmp, against=level)
            lay = next((p for p in res.properties if p.get("kind") == "layout"), None)
            if lay is not None:
                apply_to_layout(lay, cmp)
            res.notes.append(compared_note(cmp))
    return res


def compared_note(cmp: dict) -> str:
    """The comparison in one sentence."""
    if len(cmp["levels"]) < 2:
        return (
            "ISA levels not compared: " + "; ".join(f"{lv}: {why}" for lv, why in cmp["missing"].items())
            if cmp["missing"]
            else "ISA levels not compared: the host has one"
        )
    text = f"ISA levels compared bit for bit on {cmp['scope']}: " + "; ".join(
        f"{p['levels'][0]} vs {p['levels'][1]}: {p['differ']:,} differ" for p in cmp["pairs"]
    )
    if cmp["missing"]:
        text += "; no outputs at " + "; ".join(f"{lv} ({why})" for lv, why in cmp["missing"].items())
    return text


# ---- the levels compared bit for bit --------------------------------------------------------------------
#
# `--isa all` (and the gate's isa = "all") also compares the levels' outputs with each other: each level's
# process (`opcert accuracy ... --isa-outputs DIR`, the same command that measures it) runs the target once
# on the compared inputs, in one call, and writes their bit patterns to DIR; the parent compares them (any
# NaN equals any NaN: formats.bits_differ). Where two levels differ, the call is run again at both levels,
# each in a fresh process (`--isa-inputs FILE`: those inputs, outputs only), before the difference is
# reported as a refutation of the layout property.


def compared_inputs(op, fmt, resolved, mode: str, options: Options):
    """(the inputs the levels are compared on, in bit order; what they are, in words; whether they are every
    input of the format): every input of a 16-bit format; the check's own sampled inputs of float32 and
    float64; for an exhaustive float32 sweep a stratified sample as large as its layout sample. Of `options`:
    samples, seed, standard, layout_samples."""
    seed = options.seed
    if fmt.bits <= 16:
        x = inputs_mod.exhaustive(fmt)
        return x, f"every {fmt.name} input ({x.size:,})", True
    if mode == "exhaustive":
        n = options.layout_samples or SWEEP_LAYOUT_SAMPLES
        x = inputs_mod.sample(op, fmt, resolved, n, seed, options.standard)
        return (
            x,
            (
                f"{x.size:,} stratified {fmt.name} inputs (seed {seed}; as many as the sweep's layout sample, "
                "--layout-samples), not all 2^32"
            ),
            False,
        )
    n = options.samples or default_samples(op, fmt.name, options.standard)[0]
    x = inputs_mod.sample(op, fmt, resolved, n, seed, options.standard)
    return x, f"the check's {x.size:,} sampled {fmt.name} inputs (seed {seed})", False


def draw_compared(path: str, op_name: str, dtype: str, attrs: dict, mode: str, options: Options) -> tuple[str, bool]:
    """The compared inputs' bit patterns written to `path` (.npy), drawn in this process (of `options`:
    samples, seed, standard, layout_samples): (their scope in words, whether they are every input of the
    format)."""
    op, fmt = get_operator(op_name), get_format(dtype)
    x, scope, complete = compared_inputs(op, fmt, resolve(op, attrs, options.standard), mode, options)
    np.save(path, np.ascontiguousarray(x).view(fmt.uint))
    return scope, complete


def _dispatched(target: str) -> str | None:
    """What the target's library says it dispatches for, in this process (the switch took effect)."""
    lib = switch_for(target)
    try:
        if lib == "torch":
            import torch

            return f"torch.backends.cpu.get_cpu_capability() = {torch.backends.cpu.get_cpu_capability()}"
        if lib == "numpy":
            _, have = _numpy_features()
            return "NumPy's dispatch targets on: " + (" ".join(have) or "none (its baseline)")
    except Exception:  # noqa: BLE001 - a library that cannot say: the level is still the switch's
        return None
    return None


def _outputs_here(target, op_name, dtype, attrs, standard, timeout, xbits):
    """In the process that runs the target: (its outputs' bit patterns for the inputs xbits in one call, or
    None; why not, or None; what its library says it dispatches for)."""
    op, fmt = get_operator(op_name), get_format(dtype)
    tgt = load_target(target, timeout, standard)
    why = tgt.unsupported(op, fmt.name, dict(attrs))
    if why:
        return None, f"unsupported: {why}", _dispatched(target)
    x = np.ascontiguousarray(xbits).view(fmt.dtype)
    y = tgt.run(op, x, dict(attrs), label=f"{x.size:,} {fmt.name} inputs compared across ISA levels")
    y = np.ascontiguousarray(np.asarray(y, dtype=fmt.dtype)).reshape(-1)
    if y.size != x.size:
        return None, f"{y.size:,} outputs for {x.size:,} inputs", _dispatched(target)
    return y.view(fmt.uint).copy(), None, _dispatched(target)


@dataclass(frozen=True)
class OutputsRequest:
    """What a level's process is asked for besides its measurement (`opcert accuracy ... --isa-outputs DIR
    [--isa-inputs FILE] [--isa-outputs-only]`): the directory its outputs go to, the file of the input bit
    patterns to run (None: it draws them), and whether the outputs alone are asked for."""

    directory: str
    inputs: str | None = None
    only: bool = False


def level_outputs(
    request: OutputsRequest, op_name: str, target: str, dtype: str, attrs: dict, mode: str, options: Options
) -> bool:
    """In a level's process (`opcert accuracy ... --isa-outputs DIR [--isa-inputs FILE] [--isa-outputs-only]`):
    the target's outputs on the compared inputs (FILE: those input bit patterns, drawn by the parent; else
    drawn here, compared_inputs), in one call, written to DIR: x.npy and y.npy (bit patterns) and level.json
    (the inputs in words, the attributes, what the library says it dispatches for, or why there are no
    outputs). Of `options`: samples, seed, standard, layout_samples, target_timeout, isolation. Returns
    `request.only`: True where the outputs alone were asked for (a replay, or another level of a gate
    check), so no measurement follows.

    The inputs are drawn once, in one process, and given to the others: opcert's sampler places inputs
    beside the operator's special points, which it computes with NumPy, so at another NumPy level it can
    draw other inputs (float64 Tanh's saturation neighbours: 40 of 8,236 differ)."""
    directory, inputs, standard = request.directory, request.inputs, options.standard
    op, fmt = get_operator(op_name), get_format(dtype)
    resolved = resolve(op, attrs, standard)
    os.makedirs(directory, exist_ok=True)
    if inputs:
        try:
            x = np.load(inputs).view(fmt.uint)
        except (OSError, ValueError) as exc:
            raise UsageError(f"--isa-inputs {inputs}: not a file of {fmt.name} bit patterns ({exc})") from None
        scope, complete = None, None
    else:
        x, scope, complete = compared_inputs(op, fmt, resolved, mode, options)
        x = np.ascontiguousarray(x).view(fmt.uint)
    info = {
        "op": op.name,
        "dtype": fmt.name,
        "standard": standard,
        "scope": scope,
        "complete": complete,
        "inputs": int(x.size),
        "error": None,
        "dispatched": None,
        "attrs": {k: f"{v.numerator}/{v.denominator}" for k, v in resolved.items()},
    }
    args = (target, op.name, fmt.name, tuple(resolved.items()), standard, options.target_timeout, x)
    y = None
    try:
        if options.isolation == "none" or trusted(target):
            y, info["error"], info["dispatched"] = _outputs_here(*args)
        else:
            y, info["error"], info["dispatched"] = run_isolated(_outputs_here, *args)
    except TargetFailure as exc:
        info["error"] = str(exc)
    except WorkerLost as lost:
        info["error"] = f"target {target} {lost}"
    np.save(os.path.join(directory, "x.npy"), x)
    if y is not None:
        np.save(os.path.join(directory, "y.npy"), y)
    with open(os.path.join(directory, "level.json"), "w", encoding="utf-8") as fh:
        json.dump(info, fh)
    return bool(request.only)


@dataclass
class LevelOutputs:
    """One level's outputs on the compared inputs, as its process wrote them (level_outputs)."""

    level: str
    env: dict
    x: np.ndarray | None = None  # input bit patterns
    y: np.ndarray | None = None  # output bit patterns (None: the level gave none; info["error"] says why)
    info: dict = field(default_factory=dict)

    @classmethod
    def read(cls, level: str, env: dict, directory: str, code: int | None = None, err: str = ""):
        out = cls(level, env)
        try:
            with open(os.path.join(directory, "level.json"), encoding="utf-8") as fh:
                out.info = json.load(fh)
            out.x = np.load(os.path.join(directory, "x.npy"))
            if os.path.exists(os.path.join(directory, "y.npy")):
                out.y = np.load(os.path.join(directory, "y.npy"))
        except (OSError, ValueError) as exc:
            out.info = {
                "error": f"its process wrote no outputs (exit {code}): "
                f"{(err or '').strip()[-500:] or type(exc).__name__}"
            }
            out.x = out.y = None
        return out


def outputs_at(level: str, env: dict, argv: list[str], inputs: str, directory: str) -> LevelOutputs:
    """The target's outputs on the input bit patterns in the file `inputs`, at one level, in a fresh process
    (`opcert accuracy ARGV --isa-outputs DIR --isa-inputs FILE`)."""
    code, _, err = run_accuracy(env, argv, outputs=directory, inputs=inputs, only=True)
    return LevelOutputs.read(level, env, directory, code, err)


def compare_levels(
    runs: list[LevelOutputs],
    argv: list[str],
    workdir: str,
    against: str | None = None,
    scope: tuple[str, bool] | None = None,
) -> dict:
    """The levels' outputs compared bit for bit on the same inputs (any NaN equals any NaN): every pair of
    levels, or (against: a level's name) that level with each other one. Where two differ, the same call is
    run again at both, each in a fresh process, and the counterexample is an input whose two outputs came
    back the same (`replayed`). A JSON-ready dict: levels, scope, inputs, complete, pairs, differ (inputs
    where some compared pair differs), missing (levels without outputs, and why), dispatched, counterexample.
    scope: (the inputs in words, whether they are every input of the format) where the caller drew them."""
    have = [r for r in runs if r.y is not None and r.x is not None]
    first = have[0] if have else (runs[0] if runs else None)
    # the inputs in words come from a level that drew them (the others were given them), or the caller
    info = dict(next((r.info for r in runs if r.info.get("scope")), first.info if first else {}))
    if scope is not None:
        info["scope"], info["complete"] = scope
    dtype = info.get("dtype")
    out = {
        "levels": [r.level for r in have],
        "environments": {r.level: r.env for r in runs},
        "scope": info.get("scope"),
        "inputs": int(first.x.size) if first is not None and first.x is not None else 0,
        "complete": bool(info.get("complete")) and len(have) == len(runs),
        "pairs": [],
        "differ": 0,
        "missing": {r.level: r.info.get("error") or "no outputs" for r in runs if r not in have},
        "dispatched": {r.level: r.info.get("dispatched") for r in have},
        "counterexample": None,
    }
    if len(have) < 2:
        out["complete"] = False
        return out
    fmt = get_format(dtype)
    x = have[0].x
    for r in have[1:]:
        if r.x.size != x.size or (r.x != x).any():  # not expected: every level draws the same inputs
            raise RuntimeError(f"ISA level {r.level} ran other inputs than level {have[0].level}")
    any_differ = np.zeros(x.size, dtype=bool)
    found = None
    for a, b in itertools.combinations(have, 2):
        if against is not None and against not in (a.level, b.level):
            continue
        d = bits_differ(a.y.view(fmt.uint), b.y.view(fmt.uint), fmt)
        any_differ |= d
        out["pairs"].append({"levels": [a.level, b.level], "differ": int(d.sum())})
        if found is None and d.any():
            found = (a, b, np.flatnonzero(d))
    out["differ"] = int(any_differ.sum())
    if found is not None:
        a, b, where = found
        xfile = os.path.join(workdir, "replay-x.npy")
        np.save(xfile, x)
        again = [
            outputs_at(r.level, r.env, argv, xfile, os.path.join(workdir, f"replay-{i}")) for i, r in enumerate((a, b))
        ]
        out["counterexample"] = _counterexample(get_operator(info["op"]), fmt, info, x, a, b, where, again)
    return out


def _counterexample(op, fmt, info, x, a: LevelOutputs, b: LevelOutputs, where, again) -> dict:
    """The first input (in bit order) where levels a and b differ and both came back the same when run
    again, with both levels' outputs, the correctly rounded reference and each output's error."""
    ra, rb = again
    if ra.y is not None and rb.y is not None:
        same = ~bits_differ(ra.y[where].view(fmt.uint), a.y[where].view(fmt.uint), fmt) & ~bits_differ(
            rb.y[where].view(fmt.uint), b.y[where].view(fmt.uint), fmt
        )
    else:
        same = np.zeros(where.size, dtype=bool)
    k = int(where[np.flatnonzero(same)[0]]) if same.any() else int(where[0])
    attrs = {n: Fraction(v) for n, v in info.get("attrs", {}).items()}
    xi = x[k : k + 1].view(fmt.dtype)
    rounded = np.asarray(reference_detailed(op, xi, attrs, info.get("standard")).rounded).reshape(-1)[0]

    def level(r: LevelOutputs, replay: LevelOutputs) -> dict:
        yv = r.y[k : k + 1].view(fmt.dtype)
        with np.errstate(invalid="ignore"):
            e = exact_error(op, xi, float(yv.astype(np.float64)[0]), attrs, info.get("standard"), fmt)
        d = {
            "level": r.level,
            "environment": r.env,
            "output": value_of(yv[0], fmt),
            "ulp": e[0] if e else None,
            "dispatched": r.info.get("dispatched"),
        }
        d["replayed"] = (
            value_of(replay.y[k : k + 1].view(fmt.dtype)[0], fmt) if replay.y is not None else replay.info.get("error")
        )
        return d

    la, lb = level(a, ra), level(b, rb)
    calls = f"the same call of {x.size:,} inputs"
    ce = {
        "which": "first",
        "inputs": {"x": value_of(xi[0], fmt)},
        "outputs": {"f(x)": lb["output"]},
        "reference": {"f(x)": value_of(np.asarray(rounded, dtype=fmt.dtype), fmt)},
        "layout": f"ISA level {b.level} ({shown(b.env)})",
        "base": {"layout": f"ISA level {a.level} ({shown(a.env)})", "output": la["output"]},
        "levels": [la, lb],
        "replayed": bool(same.any()),
        "violations": int(where.size),
        "replay": f"{calls} run again at {a.level} and at {b.level}, each in a fresh process: "
        f"{int(same.sum()):,} of the {where.size:,} differing inputs gave both outputs again",
    }
    if not same.any():
        ce["note"] = (
            "run again, the two levels did not give these outputs again: the difference is not "
            "reproducible (the output depends on more than the ISA level)"
        )
    return ce


def isa_family(cmp: dict) -> dict:
    """The comparison as one family of the layout property's `layouts` (verify.paths.layout's Family.summary)."""
    n, levels_ = cmp["inputs"], cmp["levels"]
    names = ", ".join(levels_) or "none"
    how = (
        f"ISA levels {names} compared bit for bit, one call each in a process of its own, on "
        f"{cmp['scope'] or 'no inputs'}: "
        + "; ".join(f"{p['levels'][0]} vs {p['levels'][1]}: {p['differ']:,} differ" for p in cmp["pairs"])
    )
    errors = [f"ISA level {lv}: {why}" for lv, why in cmp["missing"].items()]
    return {
        "family": "isa levels",
        "how": how,
        "evaluated": n * max(0, len(levels_) - 1),
        "complete": bool(cmp["complete"]),
        "inputs": n,
        "scope": f"{'every' if cmp['complete'] else 'a sample of the'} {n:,} inputs, at levels {names}",
        "differ": cmp["differ"],
        "errors": errors[:3],
    }


def apply_to_layout(prop: dict, cmp: dict) -> dict:
    """The layout property (a PropertyResult dict) with the levels' comparison added: refuted, with the
    comparison's counterexample, where two levels differ (a counterexample it had is kept in its note);
    `checked` at best where the comparison was not over every input or a level gave no outputs."""
    fam = isa_family(cmp)
    prop["layouts"] = list(prop.get("layouts") or []) + [fam]
    prop["inputs_checked"] = (prop.get("inputs_checked") or 0) + fam["evaluated"]
    prop["method"] = (prop.get("method") or "") + "; " + fam["how"]
    notes = [prop["note"]] if prop.get("note") else []
    if cmp["differ"]:
        prop["violations"] = (prop.get("violations") or 0) + cmp["differ"]
        if prop.get("status") == "refuted" and prop.get("counterexample"):
            own = prop["counterexample"]
            x = ((own.get("inputs") or {}).get("x") or {}).get("bits")
            within = f"ISA level {own['isa_level']}" if own.get("isa_level") else "its level"
            notes.append(
                f"also refuted within {within}"
                + (f": x = {x}" if x else "")
                + (f" in {own['layout']}" if own.get("layout") else "")
            )
        prop["status"], prop["counterexample"] = "refuted", cmp["counterexample"]
        a, b = cmp["counterexample"]["levels"]
        notes.insert(
            0,
            f"ISA levels {a['level']} and {b['level']} give other bits for "
            f"{next(p['differ'] for p in cmp['pairs'] if p['levels'] == [a['level'], b['level']]):,} of "
            f"{cmp['inputs']:,} inputs",
        )
    else:
        if len(cmp["levels"]) >= 2:
            notes.append(f"ISA levels {', '.join(cmp['levels'])} give the same bits on {cmp['scope']}")
        if cmp["missing"]:
            notes.append("not compared: " + "; ".join(fam["errors"]))
        if not cmp["complete"] and prop.get("status") == "proved":
            prop["status"] = "checked"
            notes.append("checked, not proved: the ISA levels were not all compared on every input")
    prop["note"] = "; ".join(notes) or None
    prop["ok"] = prop.get("status") == ("proved" if prop.get("expected", "holds") == "holds" else "refuted")
    return prop


_RANK = ("refuted", "unknown", "skipped", "checked", "proved")


def combined_layout(results: list[tuple[str, dict | None]], cmp: dict | None) -> dict | None:
    """The layout property of `--isa all` as a whole: the worst of the levels' own layout verdicts (their
    families named with their level), with the levels' comparison added (apply_to_layout)."""
    props = []
    for name, r in results:
        p = next((p for p in (r or {}).get("properties", []) if p.get("kind") == "layout"), None)
        if p is not None:
            props.append((name, p))
    if not props:
        return None
    name, worst = min(props, key=lambda t: _RANK.index(t[1]["status"]) if t[1]["status"] in _RANK else 0)
    out = copy.deepcopy(worst)
    if out.get("counterexample"):
        out["counterexample"]["isa_level"] = name
    out["method"] = "at each ISA level, its own layouts (" + "; ".join(f"{n}: {p['status']}" for n, p in props) + ")"
    out["layouts"] = [
        dict(f, family=f"{f.get('family')} (ISA level {n})") for n, p in props for f in (p.get("layouts") or [])
    ]
    out["inputs_checked"] = sum(p.get("inputs_checked") or 0 for _, p in props)
    out["violations"] = sum(p.get("violations") or 0 for _, p in props)
    if cmp is not None:
        apply_to_layout(out, cmp)
    return out
