"""The reductions of issue 53 on every runtime here: ReduceLogSumExp, ReduceLogSum, ReduceL2 and ReduceSumSquare
through torch (torch.logsumexp, torch.linalg.vector_norm; no function for the others), JAX (jax.nn.logsumexp),
ONNX Runtime, onnx.reference and OpenVINO (one-node ONNX models of opset 18, keepdims = 1), in float16, bfloat16
and float32, each over the sampled and the generated hard rows of `opcert accuracy`.

    python bench/reductions.py [--samples 20000] [--out bench/reductions.md]

The table and its JSON are bench/normalizations.py's (one `opcert accuracy` command per cell, which replays it).
"""

from __future__ import annotations

import sys

from normalizations import main

OPS = (("ReduceLogSumExp", ()), ("ReduceLogSum", ()), ("ReduceL2", ()), ("ReduceSumSquare", ()))

if __name__ == "__main__":
    sys.exit(
        main(ops=OPS, name="reductions", title="The reductions", settings="one output per row, the reduced axes kept")
    )
