"""The normalizations with Scale and B other than 1 and 0 (issue 53) on every runtime here: LayerNormalization,
InstanceNormalization and GroupNormalization at scale 1.25 and B -0.5 (scale z cancels B next to z = 0.4),
RMSNormalization at scale 1.25, as bench/normalizations.py measures them at the identity: torch (weight and bias
tensors of those values), JAX (jax.nn.standardize takes neither: skipped, saying so), ONNX Runtime, onnx.reference
and OpenVINO (one-node ONNX models, Scale and B initializers of those values in X's type), in float16, bfloat16 and
float32.

    python bench/normalizations_affine.py [--samples 20000] [--out bench/normalizations_affine.md] [--only OP ...]
"""

from __future__ import annotations

import sys

from normalizations import main

AFFINE = (("scale", 1.25), ("B", -0.5))
OPS = (
    ("LayerNormalization", AFFINE),
    ("RMSNormalization", (("scale", 1.25),)),
    ("InstanceNormalization", AFFINE),
    ("GroupNormalization", (("num_groups", "2"), *AFFINE)),
)

if __name__ == "__main__":
    sys.exit(
        main(
            ops=OPS,
            name="normalizations_affine",
            title="The normalizations with Scale and B",
            settings="epsilon 1e-5 as binary32; scale 1.25 and B -0.5 (RMSNormalization: scale 1.25, no B), every "
            "element of the Scale and B tensors that value",
        )
    )
