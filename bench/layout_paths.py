"""What the `layout` property costs: every 16-bit input at every position of every short call.

    .venv/bin/python bench/layout_paths.py

One line per (operator, target): the layout check's wall time (the measurement's
own call excluded), its verdict, and the outputs it compared per family. The bar
(issue 25): under 10 s per operator and target on 2 cores for float16 and
bfloat16. Each target runs in its supervised worker, as in a gate.
"""

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from opcert.verify.accuracy.measure import measure

RELU_F16 = r"""
#include <stddef.h>
#include <stdint.h>
void relu(const uint16_t *x, uint16_t *y, size_t n, const float *a) {
    for (size_t i = 0; i < n; i++) { uint16_t b = x[i]; y[i] = ((b & 0x7fff) <= 0x7c00 && (b & 0x8000)) ? 0 : b; }
}
"""


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dtype", default="float16")
    args = ap.parse_args(argv)
    cases = [
        ("Tanh", "torch"),
        ("Elu", "torch"),
        ("Tanh", "onnxruntime"),
        ("Relu", "onnxruntime"),
        ("Tanh", "onnx-reference"),
        ("Tanh", "numpy:tanh"),
        ("Tanh", "jax"),
    ]
    tmp = tempfile.mkdtemp(prefix="opcert-bench-")
    if shutil.which("cc"):
        src = Path(tmp) / "relu.c"
        src.write_text(RELU_F16)
        so = Path(tmp) / "librelu.so"
        subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(so), str(src)], check=True)
        cases.append(("Relu", f"c:{so}:relu"))
    print("| operator | target | layout check (s) | whole check (s) | verdict | outputs compared |")
    print("|---|---|---|---|---|---|")
    for op, tgt in cases:
        t0 = time.perf_counter()
        r = measure(op, tgt, args.dtype, "exhaustive", properties=("layout",))
        whole = time.perf_counter() - t0
        if r.status != "ok":
            print(f"| {op} | {tgt} | - | {whole:.1f} | {r.status}: {r.error} | - |", flush=True)
            continue
        lay = r.properties[-1]
        fams = ", ".join(f"{f['family']} {f['evaluated']:,}" for f in lay["layouts"])
        name = "C kernel (numba loop of calls)" if tgt.startswith("c:") else tgt
        print(f"| {op} | {name} | {lay['elapsed_s']:.2f} | {whole:.1f} | {lay['status']} | {fams} |", flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
