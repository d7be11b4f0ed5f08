"""PyTorch: the function the operator's file declares (`runtimes={"torch": RuntimeMap(...)}`), on the CPU or
(torch:cuda) a CUDA device; the tensor operators through torch.nn.functional's softmax and log_softmax; the binary
operators (Pow) through the function the operator's file declares (op.runtimes["torch"]: torch.pow), on the CPU."""

from __future__ import annotations

import contextlib
import hashlib
import inspect
import os

import numpy as np

from opcert.formats import get_format
from opcert.spec.tensor_declarations import AFFINE_IDENTITY
from opcert.targets.layouts import LayoutSupport
from opcert.targets.protocol import TensorTarget
from opcert.targets.runtimes.functions import arguments, resolve_function, runtime_function
from opcert.targets.runtimes.onnx_models import BinaryRuntime

# the tensor operators torch has a function for (torch.nn.functional)
TENSOR_FUNCTIONS = {"Softmax": "softmax", "LogSoftmax": "log_softmax"}
# the normalizations: f(x, normalized_shape, weight, bias, eps=epsilon) over the trailing axes (weight and bias filled
# with the standard's scale and B; rms_norm has no bias)
NORMALIZATIONS = {"LayerNormalization": "layer_norm", "RMSNormalization": "rms_norm"}
# along one axis, p from the standard (torch's eps, 1e-12 below which the norm is taken as eps, is its own)
ALONG_AXIS = {"LpNormalization": "normalize"}
# over the spatial axes of (N, C, ...), one row per sample and channel (weight and bias per channel, no running
# statistics)
SPATIAL = {"InstanceNormalization": "instance_norm"}
# over each sample's groups of channels: group_norm(x, num_groups, weight, bias, eps=epsilon) (per channel)
GROUPED = {"GroupNormalization": "group_norm"}
# the reductions torch has a function for, over a tuple of dims with the reduced dims kept (keepdim=True)
REDUCTIONS = {
    "ReduceLogSumExp": lambda torch, t, dims: torch.logsumexp(t, dim=dims, keepdim=True),
    "ReduceL2": lambda torch, t, dims: torch.linalg.vector_norm(t, ord=2, dim=dims, keepdim=True),
}


@contextlib.contextmanager
def torch_threads(torch, n: int):
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def tensor_of(torch, x: np.ndarray):
    """x as a CPU tensor sharing its buffer (from_numpy: torch sees its strides and alignment); bfloat16 through
    its bits, as NumPy has no bfloat16 of its own."""
    return (
        torch.from_numpy(x.view(np.int16)).view(torch.bfloat16) if x.dtype.name == "bfloat16" else torch.from_numpy(x)
    )


def array_of(torch, y, x: np.ndarray):
    """A function's result as an array for input x: a bfloat16 tensor as x's bfloat16 bits; anything that is not a
    tensor as it is (judged as the wrong thing it is)."""
    if not isinstance(y, torch.Tensor):
        return np.asarray(y)
    y = y.cpu()
    if x.dtype.name == "bfloat16" and y.dtype == torch.bfloat16:
        return y.view(torch.int16).numpy().view(x.dtype)
    return y.detach().float().numpy() if y.dtype == torch.bfloat16 else y.detach().numpy()


def batch_norm_one_channel(x, *, mean: float, var: float, weight: float, bias: float, eps: float):
    """torch.nn.functional.batch_norm in inference form on x viewed as one channel, (1, 1, n), its result given x's
    shape back: the operator's parameters are one channel's (spec/ops/batch_normalization.py), as one-element tensors
    in binary32 (binary64 for a float64 x; torch's CPU kernel takes float32 parameters beside float16 and bfloat16
    inputs), so they are not rounded to x's type first."""
    import torch

    dt = torch.float64 if x.dtype == torch.float64 else torch.float32

    def one(v):
        return torch.tensor([v], dtype=dt, device=x.device)

    y = torch.nn.functional.batch_norm(
        x.reshape(1, 1, -1), one(mean), one(var), one(weight), one(bias), training=False, eps=eps
    )
    return y.reshape(x.shape)


def torch_isa(torch) -> str:
    """The CPU capability torch's kernels were dispatched for (ATEN_CPU_CAPABILITY caps it)."""
    try:
        level = torch.backends.cpu.get_cpu_capability()
    except Exception:  # noqa: BLE001 - an old torch: the setting, if any, is all there is
        level = "unknown"
    cap = os.environ.get("ATEN_CPU_CAPABILITY")
    return f"{level} (ATEN_CPU_CAPABILITY={cap})" if cap else level


class TorchElementWise:
    """PyTorch functions whose definition is the operator's, as the catalog
    declares them (Operator.runtimes["torch"]), and nothing else."""

    name = "torch"
    floats = ("float16", "bfloat16", "float32", "float64")

    def __init__(self, device: str = "cpu"):
        import torch

        torch.set_num_threads(1)
        self.torch = torch
        self.device = device
        self.version = torch.__version__
        self.details = {
            "torch": torch.__version__,
            "git": torch.version.git_version,
            "device": device,
            "config_sha256": hashlib.sha256(torch.__config__.show().encode()).hexdigest()[:16],
            "isa": torch_isa(torch),
        }
        self.in_place_call = False
        if device == "cuda" and torch.cuda.is_available():
            self.details["cuda_device"] = torch.cuda.get_device_name(0)

    def unsupported(self, op, dtype, attrs):
        if self.device == "cuda" and not self.torch.cuda.is_available():
            return f"torch {self.version}: no CUDA device on this machine (torch.cuda.is_available() is False)"
        m, why = runtime_function(op, "torch", attrs)
        if m is None:
            return f"torch {self.version}: {why}"
        if dtype not in self.floats:
            return f"torch {self.version}: opcert maps {m.function} for float dtypes only"
        return None

    def __call__(self, op, x, attrs):
        torch = self.torch
        m, _ = runtime_function(op, "torch", attrs)
        # x is the call's own copy (Target.run), with the layout the caller gave
        t = tensor_of(torch, x).to(self.device)
        args, kwargs = arguments(op, m, attrs, lambda v: torch.tensor([v], dtype=t.dtype, device=self.device))
        if self.in_place_call:
            kwargs["inplace"] = True
        return array_of(torch, resolve_function(m.function)(t, *args, **kwargs), x)

    def layouts(self):
        if self.device != "cpu":
            return LayoutSupport(
                cannot={
                    "every layout": "the tensor is copied to the GPU (.to(device)), which "
                    "makes its own contiguous buffer"
                }
            )
        return LayoutSupport(
            views=True,
            rows=True,
            rows_are_calls=True,
            offsets=True,
            threads=lambda n: torch_threads(self.torch, n),
            in_place=self._in_place,
            in_place_for=self._has_in_place,
        )

    def _has_in_place(self, op, attrs) -> bool:
        """Whether the function has an in-place form (`inplace=True`: F.elu, F.relu, ...)."""
        m, _ = runtime_function(op, "torch", attrs)
        try:
            return "inplace" in inspect.signature(resolve_function(m.function)).parameters
        except (TypeError, ValueError):
            return False

    def _in_place(self, op, x, attrs):
        self.in_place_call = True
        try:
            return self(op, x, attrs)
        finally:
            self.in_place_call = False


class TorchTensor(TensorTarget):
    name = "torch"

    def __init__(self):
        import torch

        torch.set_num_threads(1)
        self.torch = torch
        self.version = torch.__version__

    def unsupported(self, op, std, dtype, reduced, rank):
        if not any(op.name in t for t in (TENSOR_FUNCTIONS, NORMALIZATIONS, ALONG_AXIS, REDUCTIONS, SPATIAL, GROUPED)):
            return f"torch {self.version} has no {op.name} function"
        inexact = op.inputs_inexact(std, dtype)
        if inexact:  # weight and bias must have the input's dtype
            return (
                f"torch {self.version} takes {op.name}'s weight and bias in the input's dtype, and {inexact}: "
                "rounding it first would measure another operator"
            )
        return None

    def _affine(self, op, std, t, shape):
        """torch's weight and bias: tensors of `shape` in t's dtype holding the standard's scale and B; None where the
        standard has none or holds the identity (1, 0): the function without them, as torch's defaults."""
        held = op.input_values(std)
        return tuple(
            None
            if held.get(k, AFFINE_IDENTITY[k]) == AFFINE_IDENTITY[k]
            else self.torch.full(shape, held[k], dtype=t.dtype)
            for k in ("scale", "B")
        )

    def threads(self, n: int):
        return torch_threads(self.torch, n)

    def call(self, op, std, x, reduced):
        torch = self.torch
        t = (
            torch.from_numpy(np.ascontiguousarray(x).view(np.int16)).view(torch.bfloat16)
            if x.dtype.name == "bfloat16"
            else torch.from_numpy(np.ascontiguousarray(x))
        )
        r = x.ndim
        if op.name in NORMALIZATIONS:  # reduced: the trailing axes (the standard's rule)
            fn = getattr(torch.nn.functional, NORMALIZATIONS[op.name])
            shape = tuple(x.shape[reduced[0] :])
            weight, bias = self._affine(op, std, t, shape)
            extra = {"bias": bias} if op.name == "LayerNormalization" else {}  # rms_norm takes no bias
            y = fn(t, shape, weight=weight, eps=std.values()["epsilon"], **extra)
        elif op.name in ALONG_AXIS:
            y = getattr(torch.nn.functional, ALONG_AXIS[op.name])(t, p=float(op.given(std)["p"]), dim=reduced[0])
        elif op.name in SPATIAL:
            weight, bias = self._affine(op, std, t, (x.shape[1],))
            y = getattr(torch.nn.functional, SPATIAL[op.name])(t, weight=weight, bias=bias, eps=std.values()["epsilon"])
        elif op.name in GROUPED:
            weight, bias = self._affine(op, std, t, (x.shape[1],))
            y = getattr(torch.nn.functional, GROUPED[op.name])(
                t, reduced.groups, weight=weight, bias=bias, eps=std.values()["epsilon"]
            )
        elif op.name in REDUCTIONS:
            y = REDUCTIONS[op.name](torch, t, tuple(int(a) for a in reduced))
        elif len(reduced) == 1:
            fn = getattr(torch.nn.functional, TENSOR_FUNCTIONS[op.name])
            y = fn(t, dim=reduced[0])
        else:
            fn = getattr(torch.nn.functional, TENSOR_FUNCTIONS[op.name])
            rest = [a for a in range(r) if a not in reduced]
            perm = rest + list(reduced)
            moved = t.permute(perm)
            shape = moved.shape
            y2 = fn(moved.reshape(*shape[: len(rest)], -1), dim=-1).reshape(shape)
            y = y2.permute([int(i) for i in np.argsort(perm)])
        y = y.contiguous()
        if x.dtype.name == "bfloat16":
            return y.view(torch.int16).numpy().view(x.dtype)
        return y.numpy()


class TorchBinary(BinaryRuntime):
    """The function the binary operator's file declares (BinaryOperator.runtimes["torch"]: torch.pow), called on
    CPU tensors that share the inputs' buffers (torch.from_numpy; bfloat16 through its bits), one thread as the
    element-wise side."""

    name = "torch"

    def __init__(self):
        import torch

        torch.set_num_threads(1)
        self.torch = torch
        self.version = torch.__version__

    def refuse(self, op, std, dtype, attrs):
        if "torch" not in op.runtimes:
            return f"opcert maps no torch function to {op.name}"
        return None

    def _tensor(self, a: np.ndarray):
        a = np.ascontiguousarray(a)
        if not a.flags.writeable:  # torch.from_numpy warns of a read-only buffer (a broadcast view's)
            a = a.copy()
        if a.dtype.name == "bfloat16":
            return self.torch.from_numpy(a.view(np.int16)).view(self.torch.bfloat16)
        return self.torch.from_numpy(a)

    def call(self, op, std, x, y, attrs):
        torch = self.torch
        z = resolve_function(op.runtimes["torch"].function)(self._tensor(x), self._tensor(y))
        if not isinstance(z, torch.Tensor):
            return np.asarray(z)  # judged as the wrong thing it is
        z = z.detach().cpu().contiguous()
        if z.dtype == torch.bfloat16:  # its bits, as ml_dtypes' bfloat16 (NumPy has no bfloat16 of its own)
            return z.view(torch.int16).numpy().view(get_format("bfloat16").dtype)
        return z.numpy()
