"""What the layout families cost a check, against the kernel's own cost over the same outputs.

    .venv/bin/python bench/layout_cost.py [--dtype float16] [--targets numpy:tanh,c,opcert] [--op Tanh]

For each target: one exhaustive (16-bit) or sampled measurement, its layout check's time per family (the
`elapsed_s` of each entry of `layouts`), and, in the same process, the time the kernel alone takes over as
many outputs as each family compared (one contiguous call per 2^20 elements, the target's function called
directly, no opcert around it). The ratio family / kernel-alone is what opcert adds to that path's floor.
`c` is a C Tanh built here (cc -O2) with the float16 ABI of opcert.targets.c_abi; `c-relu` a C Relu on the bits,
which costs next to nothing (`--op Relu --targets c-relu`): what opcert's own work around a kernel costs.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

C_TANH = r"""
#include <math.h>
#include <stddef.h>
#include <stdint.h>
void tanh16(const _Float16 *x, _Float16 *y, size_t n, const float *a) {
    for (size_t i = 0; i < n; i++) y[i] = (_Float16)tanh((double)x[i]);
}
void tanh32(const float *x, float *y, size_t n, const float *a) {
    for (size_t i = 0; i < n; i++) y[i] = (float)tanh((double)x[i]);
}
/* a kernel that costs next to nothing (Relu on the bits, NaN kept): what opcert's own work around it costs */
void relu16(const uint16_t *x, uint16_t *y, size_t n, const float *a) {
    for (size_t i = 0; i < n; i++) y[i] = (x[i] & 0x8000) && (x[i] & 0x7fff) <= 0x7c00 ? 0 : x[i];
}
void relu32(const uint32_t *x, uint32_t *y, size_t n, const float *a) {
    for (size_t i = 0; i < n; i++) y[i] = (x[i] >> 31) && (x[i] & 0x7fffffff) <= 0x7f800000 ? 0 : x[i];
}
"""


def c_target(dtype: str, kind: str = "tanh") -> str:
    d = tempfile.mkdtemp(prefix="opcert-bench-")
    src, so = os.path.join(d, "t.c"), os.path.join(d, "libt.so")
    with open(src, "w") as fh:
        fh.write(C_TANH)
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", so, src, "-lm"], check=True)
    return f"c:{so}:{kind}{'16' if dtype == 'float16' else '32'}"


def kernel_alone(target: str, op: str, dtype: str, outputs: int) -> float:
    """Seconds the target's own function takes over `outputs` elements, in calls of 2^20, no opcert around."""
    from opcert.formats import get_format
    from opcert.spec import get_operator
    from opcert.spec.attrs import resolve
    from opcert.targets import load_target

    fmt = get_format(dtype)
    tgt = load_target(target)
    o = get_operator(op)
    attrs = resolve(o, {})
    x = np.linspace(-4, 4, 1 << 20).astype(fmt.dtype)
    tgt._call(o, x[:1024], attrs)
    left, t0 = outputs, time.perf_counter()
    while left > 0:
        n = min(left, x.size)
        tgt._call(o, x[:n], attrs)
        left -= n
    return time.perf_counter() - t0


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--dtype", default="float16")
    p.add_argument("--op", default="Tanh")
    p.add_argument("--targets", default="numpy:tanh,c,opcert")
    a = p.parse_args()
    from opcert.verify.accuracy.measure import measure

    for name in a.targets.split(","):
        target = c_target(a.dtype, "relu" if name == "c-relu" else "tanh") if name.startswith("c") else name
        mode = "exhaustive" if a.dtype in ("float16", "bfloat16") else "sample"
        t0 = time.perf_counter()
        res = measure(a.op, target, a.dtype, mode, isolation="none")
        whole = time.perf_counter() - t0
        lay = next(q for q in res.properties if q["kind"] == "layout")
        print(f"{a.op} {a.dtype} {name}: measurement {whole:.2f} s, layout {lay['elapsed_s']:.2f} s ({lay['status']})")
        for f in lay["layouts"]:
            alone = kernel_alone(target, a.op, a.dtype, f["evaluated"]) if f["evaluated"] else 0.0
            ratio = f["elapsed_s"] / alone if alone > 0 else float("nan")
            print(
                f"  {f['family']:<20} {f['evaluated']:>12,} outputs  {f['elapsed_s']:7.3f} s  "
                f"kernel alone {alone:7.3f} s  ratio {ratio:6.1f}"
            )


if __name__ == "__main__":
    main()
