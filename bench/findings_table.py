"""Every CPU runtime's float32 max ULP per function, from exhaustive sweeps (issue 52, deliverable 7).

    nice -n 19 .venv/bin/python bench/findings_table.py                       # every cell still missing
    nice -n 19 .venv/bin/python bench/findings_table.py --targets torch onnxruntime jax
    nice -n 19 .venv/bin/python bench/findings_table.py --ops Exp Log --targets numpy
    NPY_DISABLE_CPU_FEATURES="AVX512_ICL X86_V4" ATEN_CPU_CAPABILITY=avx2 \\
        nice -n 19 .venv/bin/python bench/findings_table.py --ops Exp --targets torch numpy --label avx2
    .venv/bin/python bench/findings_table.py --print                          # the cells so far, no sweep

Each cell is `opcert.verify.accuracy.measure.measure(op, target, "float32", "exhaustive")` with a fresh,
empty checkpoint directory (so nothing resumes from an earlier sweep): all 2^32 float32 inputs, every declared
property proved or refuted on that target (the layout property on the sweep's layout samples). What is kept per
cell: max ULP (opcert's error |y - v| / ulp(v) against the exact value v, DESIGN.md), the integer distance in
float32 values from the correctly rounded result (max_ulp_distance, what JAX's and glibc's tables count), the
correctly rounded share, special-value mismatches, subnormal flushes, the properties refuted (with their first
counterexample), the versions and ISA, the wall and CPU time, and `r.command`, the `opcert accuracy` command
line that reproduces the cell.

Resumable: each finished cell is written at once to bench/findings_table.json (next to this file), keyed by
"OP|TARGET" (and "|LABEL" with --label, for runs under another ISA level); a cell already there is skipped
(--redo runs it again). Targets: a runtime name (torch, onnxruntime, jax, openvino), `numpy` (each operator's
NumPy function, numpy:exp ... numpy:arctan; operators NumPy lacks, Erf and Sigmoid, are skipped), or any
`module:function` target, used for every operator given, or `glibc` (the C library's expf ... sqrtf through a
C kernel, c:/tmp/opcert-findings/libm_shim.so:opcert_expf; build it first with --build-glibc).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "findings_table.json"

OPS = [
    "Exp", "Log", "Sin", "Cos", "Tan", "Tanh", "Sigmoid", "Erf", "Sinh", "Cosh",
    "Asinh", "Acosh", "Atanh", "Asin", "Acos", "Atan", "Sqrt",
]  # fmt: skip
TARGETS = ["torch", "onnxruntime", "jax", "numpy", "openvino"]
NUMPY = {
    "Exp": "exp", "Log": "log", "Sin": "sin", "Cos": "cos", "Tan": "tan", "Tanh": "tanh", "Sinh": "sinh",
    "Cosh": "cosh", "Asinh": "arcsinh", "Acosh": "arccosh", "Atanh": "arctanh", "Asin": "arcsin",
    "Acos": "arccos", "Atan": "arctan", "Sqrt": "sqrt",
}  # fmt: skip
# the C library's own float functions (glibc here), each through a C kernel `void f(const float *x, float *y,
# size_t n, const float *attrs)` that calls it element by element (targets.c_abi), built by --build-glibc
LIBM = {
    "Exp": "expf", "Log": "logf", "Sin": "sinf", "Cos": "cosf", "Tan": "tanf", "Tanh": "tanhf", "Erf": "erff",
    "Sinh": "sinhf", "Cosh": "coshf", "Asinh": "asinhf", "Acosh": "acoshf", "Atanh": "atanhf", "Asin": "asinf",
    "Acos": "acosf", "Atan": "atanf", "Sqrt": "sqrtf",
}  # fmt: skip
SHIM = Path("/tmp/opcert-findings/libm_shim.so")
ENV = ("NPY_DISABLE_CPU_FEATURES", "ATEN_CPU_CAPABILITY", "XLA_FLAGS", "OMP_NUM_THREADS")


# Published float32 figures, beside the measured ones in --markdown, each source with its citation and what its
# numbers count (rendered under the table by --markdown; docs/findings_float32.md explains the differences).
PUBLISHED = {
    "jax": {
        "column": "JAX published, CPU",
        "source": "jax-ml/jax, docs/accuracy.md at commit 031068b03451af03f8797eee4c0e0a228fbbd6de "
        "(https://docs.jax.dev/en/latest/accuracy.html), section `float32` accuracy, column CPU; lax.logistic for "
        "Sigmoid, lax.erf for Erf",
        "version": "the page names no JAX version; its freshness tag says reviewed 2026-09-18, and the JAX "
        "repository snapshot of 2026-08-08 (commit cec06d11, jax/version.py _version = 0.11.1, CHANGELOG: JAX "
        "0.11.0 July 16, 2026) does not yet have the page: it describes a JAX after 0.11.0; installed here: "
        "jax/jaxlib 0.10.2 (CHANGELOG: June 17, 2026)",
        "isa": "CPU: x86_64 (no ISA level stated; atan and rsqrt bounds 'depend on AMD vs Intel')",
        "ulp": "fractional error against a float64 reference (|c - r| / ulp(r), ulp(r) = 2^(min(max(floor(log2 "
        "|r|), emin), emax) - (p - 1)), 0.5 = correctly rounded); float32 unary functions exhaustive over all "
        "2^32 inputs; subnormal inputs and outputs flushed (ftz=True: |c|, |r| < 2^emin counts 0, distances across "
        "the subnormal gap contracted so that -2^emin, 0, +2^emin are 1 ULP apart); a reference beyond the "
        "overflow threshold is infinity, a finite result in the top binade measured with infinity at 2^(emax+1)",
        "earlier": "the earlier stored version of the page (commit ce79c7ddbf5505b15471c21bce2d14bf0a7af7c9, same "
        "freshness tag, without the ULP formula and the FTZ rules) differs for asin only: 8388608.0",
        "figures": {
            "Exp": "1.5", "Log": "1.5", "Sin": "0.5", "Cos": "0.5", "Tan": "0.5", "Tanh": "5.0", "Sigmoid": "2.5",
            "Erf": "7.0", "Sinh": "25.0", "Cosh": "25.0", "Asinh": "3.5", "Acosh": "4.5", "Atanh": "3.0",
            "Asin": "2.0 (8388608.0 before)", "Acos": "1.5", "Atan": "4.0-5.5 (AMD vs Intel)", "Sqrt": "0.5",
        },
    },
    "glibc": {
        "column": "glibc 2.36 published, float",
        "source": "bminor/glibc (mirror of sourceware glibc), sysdeps/x86_64/fpu/libm-test-ulps at tag glibc-2.36 "
        "(commit c804cd1c00adde061ca51711f63068c103e94eef; file last changed by 047512374a95, 2022-01-12), the "
        "`float:` line of each round-to-nearest entry (`Function: \"sin\":`); the same file on "
        "release/2.36/master (Debian's 2.36-9+deb12u14 here follows that branch) is unchanged",
        "version": "glibc 2.36, the C library of this host (ldd: Debian GLIBC 2.36-9+deb12u14)",
        "isa": "x86_64 scalar functions (the vlen4/vlen8/vlen16 entries of the same file are libmvec's vector "
        "variants, not these)",
        "ulp": "math/libm-test-support.c: ULPDIFF = |computed - expected| / ulp(expected), expected being the "
        "correctly rounded float from MPFR (math/auto-libm-test-out-*), ulp of a subnormal or zero the "
        "smallest subnormal; the file keeps the ceiling of the largest error the test suite saw "
        "(print_function_ulps: ceil). The manual (manual/math.texi, Known Maximum Errors in Math Functions): "
        "the maximum error 'exposed by one of the existing tests in the test suite'... 'this is often not "
        "achieved due to the large search space'; 'Functions not listed do not have known errors'. A lower "
        "bound of the true maximum, from some 40 to 120 float inputs per function (the `tonearest binary32` "
        "lines of math/auto-libm-test-out-F at glibc-2.36: exp 120, log 39, sin 80, cos 85, tan 100, tanh 90, "
        "erf 94, sinh 96, cosh 87, asinh 101, acosh 69, atanh 103, asin 68, acos 89, atan 41, sqrt 115)",
        # sqrtf is not listed (IEEE 754 requires it correctly rounded); the C library has no logistic function
        "figures": {
            "Exp": "1", "Log": "1", "Sin": "1", "Cos": "1", "Tan": "1", "Tanh": "2", "Sigmoid": "-", "Erf": "1",
            "Sinh": "2", "Cosh": "2", "Asinh": "2", "Acosh": "2", "Atanh": "2", "Asin": "1", "Acos": "1",
            "Atan": "1", "Sqrt": "0 (not listed)",
        },
    },
}  # fmt: skip
JAX_CPU = PUBLISHED["jax"]["figures"]
GLIBC_236 = PUBLISHED["glibc"]["figures"]


def target_of(op: str, target: str) -> str | None:
    if target == "numpy":
        return f"numpy:{NUMPY[op]}" if op in NUMPY else None
    if target == "glibc":
        return f"c:{SHIM}:opcert_{LIBM[op]}" if op in LIBM else None
    return target


def build_shim() -> Path:
    """The C kernels over the C library's float functions (-O2, no vectorisation, no fast-math: one libm
    call per element; sqrtf becomes the sqrtss instruction, correctly rounded as IEEE 754 requires)."""
    import subprocess

    SHIM.parent.mkdir(parents=True, exist_ok=True)
    src = SHIM.with_suffix(".c")
    body = "#include <math.h>\n#include <stddef.h>\n" + "".join(
        f"void opcert_{f}(const float *x, float *y, size_t n, const float *a) "
        f"{{ (void)a; for (size_t i = 0; i < n; i++) y[i] = {f}(x[i]); }}\n"
        for f in LIBM.values()
    )
    src.write_text(body)
    subprocess.run(
        ["gcc", "-O2", "-fno-tree-vectorize", "-fno-fast-math", "-shared", "-fPIC", "-o", str(SHIM), str(src), "-lm"],
        check=True,
    )
    return SHIM


def cpu_seconds() -> float:
    """This process's and its reaped children's CPU time (user + system)."""
    t = os.times()
    return t.user + t.system + t.children_user + t.children_system


def workers_cpu() -> float:
    """CPU time of this process's live descendants (the sweep's worker pool is not reaped between cells)."""
    total = 0.0
    tick = os.sysconf("SC_CLK_TCK")
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit() or int(pid) == me:
            continue
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        ppid = int(fields[1])
        if _descends(ppid, me):
            total += (int(fields[11]) + int(fields[12])) / tick
    return total


def _descends(pid: int, root: int, depth: int = 8) -> bool:
    for _ in range(depth):
        if pid == root:
            return True
        if pid <= 1:
            return False
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return False
        pid = int(stat[stat.rindex(")") + 2 :].split()[1])
    return False


FLUSH_FLAGS = " --max-ulp 1e30 --subnormals flush-allowed"  # the CLI's way to count flushes apart (a gate check)


NORMAL = (0x00800000, 2**31)  # magnitude_range of the normal inputs (and infinities, NaNs), both signs


def python_command(op: str, target: str, flush_allowed: bool) -> str:
    """The command of a sweep over the normal inputs alone: the CLI has no option for magnitude_range."""
    kw = ", flush_allowed=True" if flush_allowed else ""
    return (
        '.venv/bin/python -c "from opcert.verify.accuracy.measure import measure; '
        f"r = measure('{op}', '{target}', 'float32', 'exhaustive'{kw}, magnitude_range=(0x00800000, 2**31)); "
        'print(r.max_ulp, r.max_ulp_distance, r.correctly_rounded, r.inputs_checked)"'
    )


def record(
    r, op: str, target: str, label: str, wall: float, cpu: float, flush_allowed: bool = False, normal: bool = False
) -> dict:
    refuted = [
        {
            "name": p["name"],
            "violations": p.get("violations"),
            "inputs_checked": p.get("inputs_checked"),
            "counterexample": p.get("counterexample"),
        }
        for p in r.properties
        if p["status"] == "refuted" and p.get("expected", "holds") == "holds"
    ]
    env = {k: os.environ[k] for k in ENV if k in os.environ}
    prefix = " ".join(f'{k}="{v}"' if " " in v else f"{k}={v}" for k, v in env.items())
    return {
        "op": op,
        "target": target,
        "label": label,
        "status": r.status,
        "error": r.error,
        "inputs_checked": r.inputs_checked,
        "exhaustive": r.exhaustive,
        "max_ulp": r.max_ulp,
        "max_ulp_distance": r.max_ulp_distance,
        "worst_input": r.worst_input,
        "worst_input_bits": r.worst_input_bits,
        "worst_output": r.worst_output,
        "worst_reference": r.worst_reference,
        "worst_layout": r.worst_layout,
        "correctly_rounded": r.correctly_rounded,
        "nan_mismatches": r.nan_mismatches,
        "inf_mismatches": r.inf_mismatches,
        "signed_zero_mismatches": r.signed_zero_mismatches,
        "subnormal_flushes": r.subnormal_flushes,
        "histogram": r.histogram,
        "properties": {p["name"]: p["status"] for p in r.properties},
        "refuted": refuted,
        "command": (prefix + " " if prefix else "")
        + (python_command(op, target, flush_allowed) if normal else r.command + (FLUSH_FLAGS if flush_allowed else "")),
        "flush_allowed": flush_allowed,
        "normal_inputs_only": normal,
        "env": env,
        "target_info": r.target_info,
        "numpy_simd": (r.provenance or {}).get("simd"),
        "target_isa": ((r.target_info or {}).get("details") or {}).get("isa") or (r.target_info or {}).get("numpy_isa"),
        "cpu": (r.provenance or {}).get("cpu"),
        "provenance": r.provenance,
        "notes": r.notes,
        "elapsed_s": round(r.elapsed_s, 1),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "host": platform.node(),
    }


def load() -> dict:
    return json.loads(OUT.read_text()) if OUT.exists() else {}


def save(cells: dict) -> None:
    tmp = OUT.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(cells, indent=1, sort_keys=True, default=str) + "\n")
    tmp.replace(OUT)


def short(x) -> str:
    if x is None:
        return "-"
    if x == 0:
        return "0"
    if abs(x) >= 1e4:
        return f"{x:.3e}"
    return f"{x:.4g}"


def summary(c: dict) -> str:
    if c["status"] != "ok":
        return f"{c['status']}: {c['error']}"
    cr = 100 * c["correctly_rounded"] / max(c["inputs_checked"], 1)
    s = f"{short(c['max_ulp'])} ULP (dist {c['max_ulp_distance']}), {cr:.4f}% CR"
    extra = [
        f"{c[k]} {n}"
        for k, n in (
            ("nan_mismatches", "NaN mm"),
            ("inf_mismatches", "inf mm"),
            ("signed_zero_mismatches", "-0 mm"),
            ("subnormal_flushes", "flushed"),
        )
        if c[k]
    ]
    if c["refuted"]:
        extra.append("refuted: " + ", ".join(p["name"] for p in c["refuted"]))
    return s + ("; " + ", ".join(extra) if extra else "")


def cell_text(c: dict, n: int) -> str:
    """One table cell: max ULP (opcert's error), [integer distance to the correctly rounded value], the
    correctly rounded share, flushes and refuted properties, and the footnote of its command."""
    if c["status"] != "ok":
        return f"{c['status']}[^{n}]"
    cr = 100 * c["correctly_rounded"] / max(c["inputs_checked"], 1)
    s = f"{short(c['max_ulp'])}{'*' if c.get('worst_layout') else ''} [{c['max_ulp_distance']}], {cr:.2f}%"
    extra = []
    if c.get("normal_inputs_only"):
        extra.append(f"normal inputs alone ({c['inputs_checked']:,})")
    if c["subnormal_flushes"]:
        extra.append(f"{c['subnormal_flushes']:,} flushed" + (" (apart)" if c.get("flush_allowed") else ""))
    for k, name in (("nan_mismatches", "NaN mm"), ("inf_mismatches", "inf mm"), ("signed_zero_mismatches", "-0 mm")):
        if c[k]:
            extra.append(f"{c[k]:,} {name}")
    if c["refuted"]:
        extra.append("**refuted: " + ", ".join(p["name"] for p in c["refuted"]) + "**")
    return s + ("; " + "; ".join(extra) if extra else "") + f"[^{n}]"


def markdown(cells: dict, ops, columns) -> str:
    """The table of the cells kept (rows: operators; columns: each target as given, `T` or `T|SUFFIX` for the
    cells keyed with a label or |ftz, then the published figures) and the footnotes with each cell's command."""
    heads = {"numpy": "NumPy", "glibc": "glibc 2.36 here", "openvino": "OpenVINO", "jax": "JAX"}
    rows, notes, missing = [], [], []
    cols = []
    for col in columns:
        t, _, suffix = col.partition("|")
        name = {"jaxrule": "JAX's rule: subnormals apart", "avx2": "AVX2 level"}.get(suffix, suffix.replace("|", ", "))
        cols.append(heads.get(t, t) + (f" ({name})" if suffix else ""))
    rows.append("| function | " + " | ".join(cols) + " | JAX published, CPU | glibc 2.36 published, float |")
    rows.append("|---" * (len(cols) + 3) + "|")
    for op in ops:
        out = []
        for col in columns:
            t, _, suffix = col.partition("|")
            tt = target_of(op, t)
            key = f"{op}|{tt}" + (f"|{suffix}" if suffix else "") if tt else None
            if suffix == "jaxrule" and tt:  # JAX's rule: subnormal inputs and outputs apart, where it was run
                key = next((k for k in (f"{op}|{tt}|normal|ftz", f"{op}|{tt}|ftz", f"{op}|{tt}") if k in cells), key)
            if tt is None:
                out.append("n/a")
            elif key not in cells:
                missing.append(f"`{measure_command(op, col)}`")
                out.append(f"not run[^m{len(missing)}]")
            else:
                notes.append(cells[key])
                text = cell_text(cells[key], len(notes))
                if suffix == "jaxrule" and not cells[key].get("normal_inputs_only"):
                    text = "(subnormal inputs in) " + text  # no |normal cell yet: the sweep of every input
                out.append(text)
        rows.append(f"| {op} | " + " | ".join(out) + f" | {JAX_CPU.get(op, '-')} | {GLIBC_236.get(op, '-')} |")
    foot = []
    for i, c in enumerate(notes, 1):
        w = ""
        if c["status"] == "ok" and c["worst_input_bits"]:
            w = (
                f" Worst at x = {c['worst_input']!r} ({c['worst_input_bits']}): {c['worst_output']!r}, "
                f"correctly rounded {c['worst_reference']!r}"
                + (f" (*in another layout: {c['worst_layout']})" if c.get("worst_layout") else "")
                + "."
            )
        ref = "".join(
            f" Refuted {p['name']}: {p['violations']:,} of {p['inputs_checked']:,}"
            + (f", first {_cx(p['counterexample'])}" if p.get("counterexample") else "")
            + "."
            for p in c["refuted"]
            if p.get("violations") is not None
        )
        foot.append(f"[^{i}]: `{c['command']}` ({c['wall_s']:.0f} s, {c['date']}).{w}{ref}")
    foot += [f"[^m{i}]: not measured; the command that measures it: {m}" for i, m in enumerate(missing, 1)]
    return "\n".join(rows) + "\n\n" + "\n".join(foot) + "\n"


def same_groups(cells: dict) -> list[tuple[str, float, int, str, list[str]]]:
    """Cells of one operator with the same max ULP, the same worst input and the same number of correctly
    rounded results over all 2^32 inputs: (op, max ULP, correctly rounded, worst input bits, keys)."""
    groups: dict = {}
    for key, c in sorted(cells.items()):
        if c["status"] == "ok":
            groups.setdefault((c["op"], c["max_ulp"], c["correctly_rounded"], c["worst_input_bits"]), []).append(key)
    return [(k[0], k[1], k[2], k[3], v) for k, v in groups.items() if len(v) > 1]


def _col(key: str) -> str:
    """A cell key's column name, briefly (the glibc shim's target as `glibc`)."""
    t = key.split("|", 1)[1]
    return "glibc" if t.startswith(f"c:{SHIM}") else t


def compact_table(cells: dict, ops, columns) -> str:
    """The table of docs/findings_float32.md: max ULP [distance] per cell (`*`: worst in another layout; `†`: a
    property refuted; `-`: not measured; `n/a`: no such function), then the published figures."""
    heads = {"numpy": "NumPy", "glibc": "glibc here", "openvino": "OpenVINO", "jax": "JAX"}
    names = {"jaxrule": "JAX's rule", "avx2": "AVX2"}
    cols = [
        heads.get(c.partition("|")[0], c.partition("|")[0])
        + (f" ({names.get(c.partition('|')[2], c.partition('|')[2])})" if "|" in c else "")
        for c in columns
    ]
    rows = [
        "| function | " + " | ".join(cols) + " | JAX published, CPU | glibc 2.36 published |",
        "|---" * (len(cols) + 3) + "|",
    ]
    for op in ops:
        out = []
        for col in columns:
            t, _, suffix = col.partition("|")
            tt = target_of(op, t)
            if tt is None:
                out.append("n/a")
                continue
            key = f"{op}|{tt}" + (f"|{suffix}" if suffix else "")
            if suffix == "jaxrule":
                key = f"{op}|{tt}|normal|ftz"
            c = cells.get(key)
            if c is None:
                out.append("-")
            elif c["status"] != "ok":
                out.append(c["status"])
            else:
                out.append(f"{short(c['max_ulp'])}{'*' if c.get('worst_layout') else ''} [{c['max_ulp_distance']}]"
                           + ("†" if c["refuted"] else ""))  # fmt: skip
        rows.append(f"| {op} | " + " | ".join(out) + f" | {JAX_CPU.get(op, '-')} | {GLIBC_236.get(op, '-')} |")
    return "\n".join(rows) + "\n"


def measure_command(op: str, col: str) -> str:
    """The command that measures the cell of `op` in column `col` (`T` or `T|SUFFIX`)."""
    t, _, suffix = col.partition("|")
    flags = {"jaxrule": " --normal-inputs --flush-allowed", "ftz": " --flush-allowed", "normal": " --normal-inputs",
             "normal|ftz": " --normal-inputs --flush-allowed"}.get(suffix)  # fmt: skip
    if flags is None and suffix:
        flags = f" --label {suffix}"
    env = AVX2_ENV.get(t, "") + " " if suffix == "avx2" and t in AVX2_ENV else ""
    return f"{env}nice -n 19 .venv/bin/python bench/findings_table.py --targets {t} --ops {op}{flags or ''} --workers 1"


# the environment of the cells labelled avx2: NumPy's and torch's dispatch capped at AVX2 on an AVX-512 host
AVX2_ENV = {"numpy": 'NPY_DISABLE_CPU_FEATURES="X86_V4 AVX512_ICL AVX512_SPR"', "torch": "ATEN_CPU_CAPABILITY=avx2"}


def _cx(cx: dict) -> str:
    """A refuted property's first counterexample, briefly (its replayed inputs, outputs and references)."""
    if not isinstance(cx, dict):
        return str(cx)

    def vals(d):
        return ", ".join(f"{k} = {v.get('value')!r} ({v.get('bits')})" for k, v in (d or {}).items())

    if "layout" in cx and "base" in cx:
        base = cx["base"]
        return (
            f"{vals(cx.get('inputs'))}: {base['output']['bits']} in {base['layout']}, "
            f"{vals(cx.get('outputs'))} in {cx['layout']}; correctly rounded {vals(cx.get('reference'))}"
        )
    if "inputs" in cx:
        return f"{vals(cx['inputs'])} -> {vals(cx.get('outputs'))}; correctly rounded {vals(cx.get('reference'))}"
    return json.dumps(cx, default=str)[:300]


F64 = {
    "Exp": "np.exp", "Log": "np.log", "Sin": "np.sin", "Cos": "np.cos", "Tan": "np.tan", "Tanh": "np.tanh",
    "Sigmoid": "1 / (1 + np.exp(-x))", "Erf": "math.erf", "Sinh": "np.sinh", "Cosh": "np.cosh",
    "Asinh": "np.arcsinh", "Acosh": "np.arccosh", "Atanh": "np.arctanh", "Asin": "np.arcsin", "Acos": "np.arccos",
    "Atan": "np.arctan", "Sqrt": "np.sqrt",
}  # fmt: skip


def f64_reference(op: str, x: float) -> float:
    """JAX's kind of reference: the function evaluated in binary64 at the float32 input (NumPy's float64 loops,
    math.erf)."""
    import math

    import numpy as np

    x = np.float64(x)
    if op == "Sigmoid":
        return float(1.0 / (1.0 + np.exp(-x)))
    if op == "Erf":
        return math.erf(float(x))
    return float(getattr(np, F64[op].removeprefix("np."))(x))


def jax_rule_error(c: float, r: float, ftz: bool) -> float:
    """The error as JAX's docs/accuracy.md defines it for float32 (p = 24, emin = -126, emax = 127):
    |c - r| / ulp(r), ulp(r) = 2^(min(max(floor(log2 |r|), emin), emax) - (p - 1)); with ftz, |c|, |r| < 2^emin
    counts 0 and the interval (-(2^emin - q), 2^emin - q) (q the smallest subnormal) contracts to a point."""
    import math

    tiny, q = 2.0**-126, 2.0**-149
    if math.isnan(c) or math.isnan(r) or math.isinf(r):
        return 0.0 if (c == r or (math.isnan(c) and math.isnan(r))) else math.inf
    if math.isinf(c):
        c = math.copysign(2.0**128, c)
    if ftz:
        if abs(c) < tiny and abs(r) < tiny:
            return 0.0

        def squeeze(v: float) -> float:
            return math.copysign(max(abs(v) - (tiny - q), 0.0), v)

        c, r_pos = squeeze(c), squeeze(r)
    else:
        r_pos = r
    e = math.floor(math.log2(abs(r))) if r else -126
    return abs(c - r_pos) / 2.0 ** (min(max(e, -126), 127) - 23)


BAR = " \\| "  # a key's `|` inside a Markdown table cell


def f64_check(cells: dict) -> str:
    """At each cell's worst input: opcert's error (exact reference) beside JAX's definition (float64 reference,
    without and with its FTZ rule). Equal figures mean the reference precision does not explain a difference."""
    lines = ["| cell | x | output | exact, correctly rounded | float64 reference | opcert | JAX def. | JAX def., FTZ |",
             "|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for key in sorted(cells):
        c = cells[key]
        if c["status"] != "ok" or not c.get("worst_input_bits"):
            continue
        op = c["op"]
        r = f64_reference(op, c["worst_input"])
        y = c["worst_output"]
        lines.append(
            f"| {key.replace('|', BAR)} | {c['worst_input']!r} ({c['worst_input_bits']}) | {y!r} | {c['worst_reference']!r} | {r!r} "
            f"| {_num(c['max_ulp'])} | {_num(jax_rule_error(y, r, False))} | {_num(jax_rule_error(y, r, True))} |"
        )
    return "\n".join(lines) + "\n"


def _num(x: float) -> str:
    return f"{x:.1f}" if abs(x) >= 1e4 else f"{x:.4g}"


def versions(cells: dict) -> dict:
    """The installed versions (importlib.metadata) and those the cells recorded."""
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for pkg in ("torch", "onnxruntime", "jax", "jaxlib", "numpy", "openvino", "opcert", "mpmath"):
        try:
            out[pkg] = version(pkg)
        except PackageNotFoundError:
            out[pkg] = "not installed"
    out["glibc"] = platform.libc_ver()[1] or "?"
    recorded = sorted({f"{c['target']}={(c.get('target_info') or {}).get('version')}" for c in cells.values()})
    return {"installed": out, "recorded": recorded}


COLUMNS = ["torch", "onnxruntime", "jax", "jax|jaxrule", "numpy", "numpy|avx2", "openvino", "glibc"]


def document(cells: dict) -> str:
    """bench/findings_table.md: how the cells were measured, the published sources, the table and its footnotes."""
    v = versions(cells)
    inst = ", ".join(f"{k} {x}" for k, x in v["installed"].items())
    isa = sorted({c.get("numpy_simd") or "?" for c in cells.values()})
    cpus = sorted({c.get("cpu") or "?" for c in cells.values()})
    dates = sorted(c["date"] for c in cells.values())
    n_ok = sum(c["status"] == "ok" for c in cells.values())
    shown = set()
    for op in OPS:
        for col in COLUMNS:
            t, _, suffix = col.partition("|")
            tt = target_of(op, t)
            if tt and suffix == "jaxrule":
                shown.add(
                    next((k for k in (f"{op}|{tt}|normal|ftz", f"{op}|{tt}|ftz", f"{op}|{tt}") if k in cells), "")
                )
            elif tt:
                shown.add(f"{op}|{tt}" + (f"|{suffix}" if suffix else ""))
    rest = [k for k in sorted(cells) if k not in shown]
    others = (
        "Cells kept but not in the table (another variant of a column's target):\n\n"
        + "\n".join(
            f"- {k}: {summary(cells[k])} (`{cells[k]['command']}`, {cells[k]['wall_s']:.0f} s, {cells[k]['date']})"
            for k in rest
        )
        + "\n"
        if rest
        else ""
    )
    same = "\n".join(
        f"- {op}: {', '.join(_col(k) for k in keys)} ({short(m)} ULP at {bits}, {cr:,} correctly rounded)"
        for op, m, cr, bits, keys in same_groups(cells)
    )
    src = "\n".join(
        f"- **{d['column']}**: {d['source']}. Version: {d['version']}. ISA: {d['isa']}. What it counts: {d['ulp']}."
        + (f" Note: {d['earlier']}." if d.get("earlier") else "")
        for d in PUBLISHED.values()
    )
    return f"""# Every CPU runtime's float32 max ULP per function, from exhaustive sweeps (issue 52, deliverable 7)

Rendered by `.venv/bin/python bench/findings_table.py --write-md` from bench/findings_table.json ({n_ok} cells,
measured {dates[0]} to {dates[-1]} on {", ".join(cpus)}, 2 cores with AVX-512 shared with other jobs; NumPy's
SIMD levels the cells record, numpy_simd: {"; ".join(isa)}). Installed: {inst}. Explanations of every difference from the published
figures: docs/findings_float32.md.

Each measured cell is `opcert.verify.accuracy.measure.measure(op, target, "float32", "exhaustive")`: every one of
the 2^32 float32 inputs, a fresh checkpoint directory, every declared property proved or refuted on the target. A
cell reads: opcert's max ULP error (|y - v| / ulp(v) against the exact value v, docs/error-analysis.md; `*` where
the worst output came from another layout than the sweep's), `[n]` the largest distance in float32 values from
the correctly rounded result (what glibc's table counts; a cell's two figures may come from different inputs),
the correctly rounded share, special-value mismatches, flushed subnormal outputs (`(apart)`: counted apart from
the ULP figure, opcert's flush_allowed), the properties refuted. Each footnote gives the command that
reproduces the cell (`opcert accuracy ...`, or a Python line for the sweeps of the normal inputs alone) and its
worst input; a cell not measured gives the command that measures it.

Columns: `JAX (JAX's rule: subnormals apart)` is JAX under its own table's rule, subnormal inputs left out
(`--normal-inputs`) and flushed subnormal outputs counted apart (`--flush-allowed`), where that cell was run
(elsewhere the sweep of every input, marked `(subnormal inputs in)`); `NumPy (AVX2 level)` is NumPy with its
AVX-512 loops switched off ({AVX2_ENV["numpy"]}: the float32 loops then dispatch X86_V3, or the baseline
X86_V2 where a function has no X86_V3 loop, numpy.lib.introspect.opt_func_info); `glibc 2.36 here` is the C
library's expf ... sqrtf called element by element through a C shim (`--build-glibc`).

Published figures:

{src}

{markdown(cells, OPS, COLUMNS)}
{others}
Cells that agree on all three of max ULP, worst input and the number of correctly rounded results over the 2^32
inputs (the same function, in all likelihood; `glibc` is the C library's own through the shim):

{same}
"""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ops", nargs="*", default=OPS)
    ap.add_argument("--targets", nargs="*", default=TARGETS)
    ap.add_argument("--label", default="", help="a tag for the cells' keys (e.g. avx2 under ATEN_CPU_CAPABILITY)")
    ap.add_argument("--workers", type=int, default=None, help="sweep processes (default: opcert's)")
    ap.add_argument(
        "--flush-allowed",
        action="store_true",
        help="count outputs flushed to zero where the exact value is subnormal apart from the ULP figure "
        "(opcert's flush_allowed; cells keyed with |ftz)",
    )
    ap.add_argument(
        "--normal-inputs",
        action="store_true",
        help="sweep the normal inputs alone (and infinities, NaNs; no zero or subnormal input), as JAX's table "
        "flushes subnormal inputs before its reference (cells keyed with |normal)",
    )
    ap.add_argument("--redo", action="store_true", help="run cells already in the JSON again")
    ap.add_argument("--print", action="store_true", help="print the cells kept so far and exit")
    ap.add_argument(
        "--markdown",
        action="store_true",
        help="print the Markdown table of the cells kept and exit (--targets T or T|SUFFIX: jax|ftz, torch|avx2)",
    )
    ap.add_argument(
        "--docs-table", action="store_true", help="print the compact table of docs/findings_float32.md and exit"
    )
    ap.add_argument("--write-md", action="store_true", help="write bench/findings_table.md from the JSON and exit")
    ap.add_argument(
        "--f64-check",
        action="store_true",
        help="at each cell's worst input, print opcert's error beside JAX's definition (float64 reference, "
        "with and without its FTZ rule) and exit",
    )
    ap.add_argument(
        "--build-glibc",
        action="store_true",
        help=f"build {SHIM} (the C library's float functions as c: targets; the target `glibc` needs it) and exit",
    )
    a = ap.parse_args()

    if a.build_glibc:
        print(build_shim())
        return 0
    cells = load()
    if a.markdown:
        print(markdown(cells, a.ops, a.targets), end="")
        return 0
    if a.docs_table:
        print(
            compact_table(
                cells, OPS, ["torch", "onnxruntime", "jax", "jax|jaxrule", "numpy", "numpy|avx2", "openvino", "glibc"]
            ),
            end="",
        )
        return 0
    if a.write_md:
        HERE.joinpath("findings_table.md").write_text(document(cells))
        print(HERE / "findings_table.md")
        return 0
    if a.f64_check:
        print(f64_check(cells), end="")
        return 0
    if a.print:
        for k in sorted(cells):
            c = cells[k]
            print(f"{k}: {summary(c)}; {c['wall_s']} s wall, {c['cpu_s']} s CPU\n    {c['command']}")
        return 0

    from opcert.options import Options
    from opcert.verify.accuracy.measure import measure

    for target in a.targets:
        for op in a.ops:
            t = target_of(op, target)
            if t is None:
                print(f"skip {op} {target}: no such function", file=sys.stderr)
                continue
            key = f"{op}|{t}" + "".join(
                f"|{x}" for x, on in ((a.label, a.label), ("normal", a.normal_inputs), ("ftz", a.flush_allowed)) if on
            )
            if key in cells and not a.redo:
                continue
            ckpt = tempfile.mkdtemp(prefix="findings-")
            print(f"{key} ...", file=sys.stderr, flush=True)
            t0, c0 = time.perf_counter(), cpu_seconds()
            w0 = workers_cpu()
            try:
                r = measure(
                    op,
                    t,
                    "float32",
                    "exhaustive",
                    Options(
                        checkpoint=ckpt,
                        workers=a.workers,
                        flush_allowed=a.flush_allowed,
                        magnitude_range=NORMAL if a.normal_inputs else None,
                    ),
                )
                wall = time.perf_counter() - t0
                cpu = cpu_seconds() - c0 + max(workers_cpu() - w0, 0.0)
            finally:
                shutil.rmtree(ckpt, ignore_errors=True)
            c = record(r, op, t, a.label, wall, cpu, a.flush_allowed, a.normal_inputs)
            cells = load()  # another run may have added cells meanwhile
            cells[key] = c
            save(cells)
            print(f"{key}: {summary(c)}; {c['wall_s']} s wall, {c['cpu_s']} s CPU", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
