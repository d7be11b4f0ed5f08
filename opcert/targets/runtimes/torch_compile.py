"""torch.compile: the function the operator's file declares for torch (as targets.runtimes.torch calls it eagerly),
compiled by TorchInductor for the CPU, so that the code measured is the C++ Inductor generates for it.

Settings, as results state them: `torch.compile(f, backend="inductor", mode=None, dynamic=True,
fullgraph=True)`, where f is the declared function with the operator's attributes bound as Python constants (as a
user writes `torch.compile(lambda x: F.elu(x, alpha=0.5))`). dynamic=True gives one kernel per dtype, rank and
stride pattern whatever the length, except that dynamo specialises a dimension of size 0 or 1: a one-element call
runs code of its own, which the layout check's one-element family covers. Graph breaks and dynamo's recompile
limit are errors (fullgraph, fail_on_recompile_limit_hit), never a silent fall back to eager torch: a result
is always the compiled code's. `torch.compile-emulate-casts` is the same with Inductor's emulate_precision_casts
on (TORCHINDUCTOR_EMULATE_PRECISION_CASTS=1: the rounding of 16-bit intermediates eager torch does is kept).

Inductor picks its vector ISA from ATEN_CPU_CAPABILITY, as eager torch picks its kernels: the row's ISA switch
is torch's. Its on-disk cache does not key the code it generates by that choice (torch 2.13: a Gelu kernel
generated for AVX-512 and run again with ATEN_CPU_CAPABILITY=avx2 gave 32,768 of 65,536 float16 outputs other
than eager torch, and failed to compile at "default": bench/torch_compile_cache_isa.py), so this target keeps
each ISA level's code in a cache directory of its own, beside Inductor's default one, unless
TORCHINDUCTOR_CACHE_DIR is set (then that one, shared, as the user has it; the details say which).
"""

from __future__ import annotations

import functools
import os

from opcert.targets.layouts import LayoutSupport
from opcert.targets.runtimes.functions import arguments, resolve_function, runtime_function
from opcert.targets.runtimes.torch import TorchElementWise, array_of, tensor_of, torch_threads

# dynamo keeps one compiled entry per guard set (dtype, rank, strides, sizes 0 and 1): the layout check's
# shapes and views need a few dozen; past the limit dynamo would run eager torch instead, which
# fail_on_recompile_limit_hit turns into an error
RECOMPILE_LIMIT = 256

# the user's Inductor cache, as the process started (read before torch sets the variable itself)
USER_CACHE = os.environ.get("TORCHINDUCTOR_CACHE_DIR")


def cache_directory(default: str) -> tuple[str, str]:
    """(Inductor's cache directory for this process, why): the user's TORCHINDUCTOR_CACHE_DIR where set, else one
    per ISA level (ATEN_CPU_CAPABILITY) inside Inductor's default directory, `default`."""
    if USER_CACHE:
        return USER_CACHE, (
            "TORCHINDUCTOR_CACHE_DIR as set: shared by every ISA level, whose code Inductor's cache does not tell "
            "apart (bench/torch_compile_cache_isa.py)"
        )
    level = os.environ.get("ATEN_CPU_CAPABILITY") or "host"
    return os.path.join(default, f"opcert-isa-{level}"), (
        "one per ISA level (ATEN_CPU_CAPABILITY), beside Inductor's default: its cache does not tell the levels' "
        "code apart (bench/torch_compile_cache_isa.py)"
    )


class TorchCompiledElementWise(TorchElementWise):
    """The catalog's torch function (Operator.runtimes["torch"]), compiled once per operator, attributes and
    in-place form; dynamo compiles it again for each dtype, rank and stride pattern it is called with."""

    name = "torch.compile"
    emulate_casts = False

    def __init__(self):
        super().__init__("cpu")
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir

        cache, why = cache_directory(default_cache_dir())
        os.environ["TORCHINDUCTOR_CACHE_DIR"] = cache  # before Inductor first asks for it
        import torch._dynamo.config as dynamo_config
        import torch._inductor.config as inductor_config

        dynamo_config.recompile_limit = RECOMPILE_LIMIT
        dynamo_config.accumulated_recompile_limit = 16 * RECOMPILE_LIMIT
        dynamo_config.fail_on_recompile_limit_hit = True
        self.inductor_config = inductor_config
        self.compiled = {}
        self.details.update(
            {
                "compile": "torch.compile(f, backend='inductor', mode=None, dynamic=True, fullgraph=True)",
                "emulate_precision_casts": self.emulate_casts,
                "inductor_cache": f"{cache}: {why}",
                "isa": f"Inductor's vector ISA: {self._vec_isa()} (ATEN_CPU_CAPABILITY caps it); eager kernels: "
                + self.details["isa"],
            }
        )

    def _vec_isa(self) -> str:
        try:
            from torch._inductor.cpu_vec_isa import pick_vec_isa

            isa = pick_vec_isa()
            return str(isa) if isa else "none (scalar C++)"
        except Exception as exc:  # noqa: BLE001 - a torch without this helper: say so
            return f"unknown ({type(exc).__name__})"

    def _function(self, op, attrs, dtype):
        # the dtype too: a tensor attribute is made in the input's dtype (a float16 input with a float32 slope
        # would be promoted, and its wrong dtype blamed on torch)
        key = (op.name, tuple(sorted(attrs.items())), self.in_place_call, dtype)
        if key not in self.compiled:
            torch = self.torch
            m, _ = runtime_function(op, "torch", attrs)
            # tensor attributes (PRelu's slope) as one-element tensors of the input's dtype, made once and
            # closed over: constants of the compiled graph, as in a user's module
            args, kwargs = arguments(op, m, attrs, lambda v: torch.tensor([v], dtype=dtype))
            if self.in_place_call:
                kwargs["inplace"] = True
            fn = functools.partial(resolve_function(m.function), *args, **kwargs)
            self.compiled[key] = torch.compile(fn, backend="inductor", dynamic=True, fullgraph=True)
        return self.compiled[key]

    def __call__(self, op, x, attrs):
        t = tensor_of(self.torch, x)
        fn = self._function(op, attrs, t.dtype)
        with self.inductor_config.patch(emulate_precision_casts=self.emulate_casts):
            return array_of(self.torch, fn(t), x)

    def layouts(self):
        return LayoutSupport(
            views=True,
            offsets=True,
            compiles_per_shape=True,
            threads=lambda n: torch_threads(self.torch, n),
            in_place=self._in_place,
            in_place_for=self._has_in_place,
        )  # no rows: Inductor compiles a 2-D view as a 2-D loop of its own, so a row is not a call of its length


class TorchCompiledEmulatedCasts(TorchCompiledElementWise):
    """torch.compile as above, with Inductor's emulate_precision_casts on."""

    name = "torch.compile-emulate-casts"
    emulate_casts = True
