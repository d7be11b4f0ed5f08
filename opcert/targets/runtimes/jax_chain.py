"""JAX with the operator inside a chain, jitted as one computation: `jax.jit(lambda x: f(x * scale + bias))`, f the
function the operator's file declares for JAX (as the `jax` target calls it). XLA fuses the multiply, the add and
f into one loop, and may keep the intermediate in another precision than the tensor's: this is the code a model
runs for an activation fed by a scale and a bias, not the standalone call.

The chain is DirectML's ScaleBias form, g(x) = x * scale + bias before f, so its exact reference is the operator's
under a DirectML standard with the same scale and bias: `--standard directml` reads the chain exactly (the
activation's error and the chain's roundings together), `--standard directml+rounded` with x * scale + bias
rounded once in the tensor's type first (then f's own error and whatever else the fused chain rounds). scale and
bias are given to XLA as constants of the tensor's dtype, as a model holds them (a float16 model's scale is a
float16 value: where the binary32 scale is not one, the chain computes with another scale than the reference's,
and the error says so). Checks of a standard without a ScaleBias are skipped, saying so. A trailing multiply
(the issue's chain) is not added: its exact reference would be a product the catalog does not declare.
"""

from __future__ import annotations

import numpy as np

from opcert.spec.attrs import user_value
from opcert.spec.scale_bias import PLAIN
from opcert.targets.runtimes.functions import arguments, resolve_function, runtime_function
from opcert.targets.runtimes.jax import JaxElementWise


class JaxChainElementWise(JaxElementWise):
    name = "jax-chain"

    def __init__(self):
        super().__init__("cpu")
        self.details["chain"] = "jax.jit(lambda x: f(x * scale + bias)), scale and bias constants of x's dtype"

    def unsupported(self, op, dtype, attrs):
        if "scale" not in attrs or "bias" not in attrs:
            return (
                f"jax-chain computes f(x * scale + bias): {op.name}'s standard here has no ScaleBias (give a "
                "DirectML standard: --standard directml, or directml+rounded)"
            )
        return super().unsupported(op, dtype, {**attrs, **PLAIN})  # f itself, the scale-bias applied here

    def __call__(self, op, x, attrs):
        key = (op.name, tuple(sorted(attrs.items())))
        if key not in self.compiled:
            plain = {**attrs, **PLAIN}
            m, _ = runtime_function(op, "jax", plain)
            import jax.numpy as jnp

            f = resolve_function(m.function)
            scale, bias = float(user_value(op, "scale", attrs["scale"])), float(user_value(op, "bias", attrs["bias"]))

            def chain(t):
                args, kwargs = arguments(op, m, plain, lambda v: jnp.asarray([v], t.dtype))
                return f(t * jnp.asarray(scale, t.dtype) + jnp.asarray(bias, t.dtype), *args, **kwargs)

            self.compiled[key] = self.jax.jit(chain)
        return np.asarray(self.compiled[key](self.jax.device_put(x, self.dev)))
