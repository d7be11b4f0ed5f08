"""JAX: the `jax.nn` / `jax.scipy.special` function the operator's file declares, jit-compiled on the CPU
(or, jax:gpu, a GPU) with 64-bit enabled so that float64 stays float64; the tensor operators through
jax.nn's softmax and log_softmax; the binary operators (Pow) through the function the operator's file declares
(op.runtimes["jax"]: jax.numpy.power), jit-compiled on the CPU."""

from __future__ import annotations

import os

import numpy as np

from opcert.targets.layouts import LayoutSupport
from opcert.targets.protocol import TensorTarget
from opcert.targets.runtimes.functions import arguments, resolve_function, runtime_function
from opcert.targets.runtimes.onnx_models import BinaryRuntime

# the tensor operators jax.nn has a function for
TENSOR_FUNCTIONS = {"Softmax": "softmax", "LogSoftmax": "log_softmax"}
# over the reduced axes, with the standard's epsilon; standardize's default algorithm ("fast": the variance as
# mean(x^2) - mean(x)^2, clipped at 0), as users call it
NORMALIZATIONS = {"LayerNormalization": "standardize"}
# the reductions jax.nn has (keepdims=True: the reduced axes kept with size 1)
REDUCTIONS = {"ReduceLogSumExp": "logsumexp"}


class JaxElementWise:
    """JAX (CPU, 64-bit enabled so that float64 stays float64) functions the
    catalog declares (Operator.runtimes["jax"]), jit-compiled per operator and attributes."""

    name = "jax"
    floats = ("float16", "bfloat16", "float32", "float64")

    def __init__(self, device: str = "cpu"):
        if device == "cpu":
            os.environ.setdefault("JAX_PLATFORMS", "cpu")
        else:
            # A sweep runs one worker per core, each its own JAX client; by default each client takes 75% of
            # the GPU's memory at its first array, so the second worker's would fail. The user's setting wins.
            os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax

        jax.config.update("jax_enable_x64", True)
        self.jax = jax
        self.version = jax.__version__
        self.device, self.dev, self.dev_error = device, None, None
        try:
            self.dev = jax.devices(device)[0]
        except RuntimeError as exc:  # no such backend on this machine (or JAX was started CPU-only)
            self.dev_error = str(exc).splitlines()[0]
        import jaxlib

        self.details = {
            "jax": jax.__version__,
            "jaxlib": jaxlib.__version__,
            "device": device,
            "backend": str(self.dev.platform) if self.dev is not None else None,
            "isa": "XLA compiles for the host CPU's features; JAX has no switch opcert sets",
        }
        self.compiled = {}

    def unsupported(self, op, dtype, attrs):
        if self.dev is None:
            return f"jax {self.version}: no {self.device} device on this machine ({self.dev_error})"
        m, why = runtime_function(op, "jax", attrs)
        if m is None:
            return f"jax {self.version}: {why}"
        if dtype not in self.floats:
            return f"jax {self.version}: opcert maps {m.function} for float dtypes only"
        return None

    def __call__(self, op, x, attrs):
        key = (op.name, tuple(sorted(attrs.items())))
        if key not in self.compiled:
            m, _ = runtime_function(op, "jax", attrs)
            import jax.numpy as jnp

            f = resolve_function(m.function)

            def call(t):
                args, kwargs = arguments(op, m, attrs, lambda v: jnp.asarray([v], t.dtype))
                return f(t, *args, **kwargs)

            self.compiled[key] = self.jax.jit(call)
        return np.asarray(self.compiled[key](self.jax.device_put(x, self.dev)))

    def layouts(self):
        why = "jax.device_put copies the array into a buffer of XLA's own (contiguous, aligned by XLA)"
        return LayoutSupport(
            compiles_per_shape=True,
            cannot={
                "strides": why,
                "offsets": why,
                "threads": "XLA's CPU thread pool is set when JAX starts (XLA_FLAGS), not per call",
                "in place": "JAX arrays are immutable",
            },
        )


class JaxTensor(TensorTarget):
    name = "jax"
    no_threads = "XLA's CPU thread pool is fixed when JAX starts: a process has no switch for it"

    def __init__(self):
        import jax

        jax.config.update("jax_enable_x64", True)
        self.jax = jax
        self.version = jax.__version__

    def unsupported(self, op, std, dtype, reduced, rank):
        if op.name not in TENSOR_FUNCTIONS and op.name not in NORMALIZATIONS and op.name not in REDUCTIONS:
            return f"jax {self.version} has no {op.name} function in jax.nn"
        held = op.input_values(std)
        if held.get("scale", 1.0) != 1.0 or held.get("B", 0.0) != 0.0:
            # the scale and bias are a library's layer (flax's LayerNorm), not jax.nn's function
            return (
                f"jax {self.version}'s jax.nn.{NORMALIZATIONS.get(op.name, op.name)} takes no scale or bias "
                f"(scale={held.get('scale', 1.0):g}, B={held.get('B', 0.0):g} given)"
            )
        return None

    def call(self, op, std, x, reduced):
        axis = reduced[0] if len(reduced) == 1 else tuple(reduced)
        if op.name in NORMALIZATIONS:
            fn = getattr(self.jax.nn, NORMALIZATIONS[op.name])
            return np.asarray(fn(self.jax.numpy.asarray(x), axis=axis, epsilon=std.values()["epsilon"]))
        if op.name in REDUCTIONS:
            fn = getattr(self.jax.nn, REDUCTIONS[op.name])
            return np.asarray(fn(self.jax.numpy.asarray(x), axis=tuple(reduced), keepdims=True))
        fn = getattr(self.jax.nn, TENSOR_FUNCTIONS[op.name])
        return np.asarray(fn(self.jax.numpy.asarray(x), axis=axis))


class JaxBinary(BinaryRuntime):
    """The function the binary operator's file declares (BinaryOperator.runtimes["jax"]: jax.numpy.power),
    jit-compiled per operator on the CPU, 64-bit enabled so that float64 stays float64."""

    name = "jax"

    def __init__(self):
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
        import jax

        jax.config.update("jax_enable_x64", True)
        self.jax = jax
        self.version = jax.__version__
        self.dev = jax.devices("cpu")[0]
        self.compiled = {}

    def refuse(self, op, std, dtype, attrs):
        if "jax" not in op.runtimes:
            return f"opcert maps no jax function to {op.name}"
        return None

    def call(self, op, std, x, y, attrs):
        if op.name not in self.compiled:
            self.compiled[op.name] = self.jax.jit(resolve_function(op.runtimes["jax"].function))
        put = self.jax.device_put
        return np.asarray(self.compiled[op.name](put(x, self.dev), put(y, self.dev)))
