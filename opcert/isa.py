"""ISA levels: the instruction-set levels a runtime can be told to use, on this host.

Runtimes pick their kernels by cpuid, and the result of a kernel can depend on
the pick (onnx.reference's float32 Elu: 0.77 ULP and monotone with NumPy's
AVX-512 paths off, 2.35 ULP and not monotone with them on, on one host). Some
let a process cap the level, through an environment variable read when the
library loads; `--isa all` runs a check once per level the host has, each in a
fresh process started with that variable:

- torch: ATEN_CPU_CAPABILITY = default, avx2, avx512 (torch reports the one
  it dispatched for: torch.backends.cpu.get_cpu_capability());
- NumPy (NumPy callables, onnx.reference, opcert's own code):
  NPY_DISABLE_CPU_FEATURES turns off the dispatch targets above a level;
- oneDNN inside OpenVINO: ONEDNN_MAX_CPU_ISA = SSE41, AVX2, AVX512_CORE.

ONNX Runtime (MLAS), JAX (XLA) and C kernels have no such switch: they get
one result, at the host's level, and the result says so.
"""
from __future__ import annotations

from .errors import UsageError, choices

SWITCHES = {"torch": "ATEN_CPU_CAPABILITY", "numpy": "NPY_DISABLE_CPU_FEATURES", "openvino": "ONEDNN_MAX_CPU_ISA"}


def _numpy_features() -> tuple[list[str], list[str]]:
    """(NumPy's baseline, the dispatch targets this CPU has, in NumPy's order)."""
    from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__
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


def switch_for(target: str) -> str | None:
    """The library whose ISA switch applies to `target` (None: it has none)."""
    base = target.split(":")[0] if not target.startswith("c:") else "c"
    if base == "torch" and target in ("torch", "torch:cpu"):
        return "torch"
    if base == "openvino":
        return "openvino"
    if base in ("onnx-reference", "opcert") or (":" in target and not target.startswith(("c:", "torch", "jax"))):
        return "numpy"
    return None


# the switch and its levels, lowest first, with the CPU feature each needs (None: every x86-64 host)
_CAPPED = {"torch": ("ATEN_CPU_CAPABILITY", (("default", None), ("avx2", "AVX2"), ("avx512", "AVX512"))),
           "openvino": ("ONEDNN_MAX_CPU_ISA", (("SSE41", None), ("AVX2", "AVX2"), ("AVX512_CORE", "AVX512")))}


def levels(target: str) -> list[tuple[str, dict]]:
    """[(level name, environment)] for every level this host supports, lowest first."""
    lib = switch_for(target)
    if lib in _CAPPED:
        var, table = _CAPPED[lib]
        return [(name, {var: name}) for name, need in table if need is None or _host_has(need)]
    if lib == "numpy":
        _, have = _numpy_features()
        out = []
        for i in range(len(have) + 1):
            off = have[i:]
            name = have[i - 1] if i else "baseline"     # NumPy's baseline: every dispatch target off
            out.append((name, {"NPY_DISABLE_CPU_FEATURES": " ".join(off)}))
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
        raise UsageError(f"--isa {value}: target {target} has no ISA switch opcert can set (ONNX Runtime's MLAS, "
                         "XLA and C kernels pick theirs by cpuid); allowed: host, all (one result, at the host's "
                         "level)")
    if value not in names:
        raise UsageError(f"--isa {value!r}: not a level of {switch_for(target)} on this host; allowed: "
                         f"{choices(['all', 'host'] + names)}")
    return value


def environment(target: str, level: str) -> dict:
    """The environment of one level of `target` (UsageError where it has no such level)."""
    for name, env in levels(target):
        if name == level:
            return env
    raise UsageError(f"ISA level {level!r}: not a level of {target} on this host; allowed: "
                     f"{choices([n for n, _ in levels(target)])}")


def accuracy_argv(op: str, target: str, dtype: str, *, exhaustive=False, samples=None, seed=0, standard=None,
                  attrs=(), target_timeout=None, in_process=False, layout_samples=None, max_ulp=None, workers=None,
                  checkpoint=None) -> list[str]:
    """The arguments of `opcert accuracy` for one check (attrs: "NAME=VALUE" strings or (name, value) pairs)."""
    argv = [op, "--dtype", dtype, "--target", target, "--seed", str(seed)]
    for a in attrs:
        if not isinstance(a, str):
            k, v = a
            a = f"{k}={v}" if isinstance(v, str) else f"{k}={float(v)!r}"
        argv += ["--attr", a]
    for flag, value in (("--standard", standard), ("--samples", samples), ("--max-ulp", max_ulp),
                        ("--layout-samples", layout_samples), ("--target-timeout", target_timeout),
                        ("--workers", workers), ("--checkpoint", checkpoint)):
        if value is not None:
            argv += [flag, str(value)]
    return argv + (["--exhaustive"] if exhaustive else []) + (["--in-process"] if in_process else [])


def shown(env: dict) -> str:
    """A level's environment as a shell prefix."""
    return " ".join(f"{k}={v!r}" for k, v in env.items())


def run_accuracy(env: dict, argv: list[str], capture: bool = True, stdout=None) -> tuple[int, dict | None, str]:
    """`opcert accuracy ARGV` in a fresh process with `env` added to this one's: (exit status, its JSON result
    or None where it wrote none, its stderr where captured). capture=False: its output goes to this
    process's streams (stdout: where its table goes; None: this process's stdout)."""
    import json
    import os
    import subprocess
    import sys
    import tempfile
    with tempfile.TemporaryDirectory(prefix="opcert-isa-") as tmp:
        path = os.path.join(tmp, "r.json")
        run = [sys.executable, "-m", "opcert", "accuracy", *argv, "--json", path]
        full = dict(os.environ, **env)
        proc = subprocess.run(run, env=full, capture_output=True, text=True) if capture else \
            subprocess.run(run, env=full, stdout=stdout)
        try:
            with open(path, encoding="utf-8") as fh:
                result = json.load(fh)
        except (OSError, ValueError):
            result = None
    return proc.returncode, result, proc.stderr if capture else ""


def measure_at_level(level: str, op: str, target: str, dtype: str, mode: str, *, samples=None, seed=0,
                     standard=None, attrs=(), target_timeout=None, isolation="process", layout_samples=None):
    """An AccuracyResult of `opcert accuracy` run in a fresh process at one ISA level (its library reads the
    switch when it loads, so a process that has loaded it cannot change level)."""
    from .verify.accuracy import AccuracyResult
    env = environment(target, level)
    argv = accuracy_argv(op, target, dtype, exhaustive=mode == "exhaustive", samples=samples, seed=seed,
                         standard=standard, attrs=attrs, target_timeout=target_timeout,
                         in_process=isolation == "none", layout_samples=layout_samples)
    code, d, err = run_accuracy(env, argv)
    if d is None:
        raise RuntimeError(f"opcert accuracy at ISA level {level} wrote no result (exit {code}): "
                           f"{err.strip()[-500:]}")
    res = AccuracyResult(**d)
    res.command = shown(env) + " " + res.command
    res.notes.append(f"run at ISA level {level} ({shown(env)}), in a process of its own")
    return res
