"""TorchInductor's on-disk cache does not tell apart the code it generated for different ISA levels.

    python bench/torch_compile_cache_isa.py

torch.compile(F.gelu) over every float16 input, compared bit for bit with eager F.gelu (any NaN equals any NaN), in
a fresh process per
ATEN_CPU_CAPABILITY level: first all levels sharing one new cache directory (the highest level first, as a host
with AVX-512 fills it), then each level with a new directory of its own. Where the shared cache hands a lower
level the code generated for a higher one, its outputs are wrong (a 32-lane float16 loop run with 16-lane
vectors) or it does not compile. opcert's torch.compile target therefore keeps one cache per level
(opcert/targets/runtimes/torch_compile.py). Needs torch, and a host with AVX-512 for the first level.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

CHILD = r"""
import numpy as np, torch, torch.nn.functional as F
torch.set_num_threads(1)
x = torch.from_numpy(np.arange(65536, dtype=np.uint16).view(np.float16).copy())
try:
    y = torch.compile(F.gelu, dynamic=True, fullgraph=True)(x)
except Exception as exc:
    print("fails:", type(exc).__name__, str(exc).splitlines()[0][:120])
else:
    e = F.gelu(x)
    differ = (y.view(torch.int16) != e.view(torch.int16)) & ~(torch.isnan(y) & torch.isnan(e))  # any NaN = any NaN
    print("differ from eager:", int(differ.sum()), "of 65536")
"""

LEVELS = ("avx512", "avx2", "default")


def run(level: str, cache: str) -> str:
    env = dict(os.environ, ATEN_CPU_CAPABILITY=level, TORCHINDUCTOR_CACHE_DIR=cache)
    out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True, text=True)
    lines = (out.stdout or out.stderr).strip().splitlines()
    return lines[-1] if lines else f"no output (exit {out.returncode})"


def main() -> int:
    import torch

    print(f"torch {torch.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        shared = os.path.join(tmp, "shared")
        for level in LEVELS:
            print(f"shared cache, ATEN_CPU_CAPABILITY={level}: {run(level, shared)}")
        for level in LEVELS:
            print(f"own cache,    ATEN_CPU_CAPABILITY={level}: {run(level, os.path.join(tmp, level))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
