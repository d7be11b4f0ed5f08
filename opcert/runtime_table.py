"""The runtimes opcert measures: one row each, and every list of runtimes derived from these rows.

A row says what the rest of opcert needs to know without loading the runtime: its target name (and the
devices it also runs on, as NAME:DEVICE targets), the pip extra that installs it, the modules whose import
starts its threads (opcert.workers spawns its workers, rather than forking them, once one is loaded), where
its element-wise, tensor and binary sides are ("module:attribute", imported when the target is loaded), its
ISA switch (opcert.isa), and whether its calls may be made from several threads at once (the layout check's
"caller threads" family). The target names (opcert.targets), the tensor operators' target names
(opcert.targets.tensor), the binary operators' (opcert.targets.binary), the ISA switches (opcert.isa), the
threaded modules (opcert.workers) and the help texts come from here. docs/targets.md ("Adding a runtime")
says how to add one: a file under opcert/targets/runtimes/ and a row below.

Data only: this module imports nothing of opcert's and no runtime, so every layer may read it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class IsaSwitch:
    """An environment variable that caps the instruction-set level a library picks its kernels by, read when
    the library loads (opcert.isa runs a check once per level, each in a fresh process)."""

    library: str  # whose switch, as results name it ("switch": torch, numpy, openvino)
    variable: str  # the environment variable
    levels: tuple[tuple[str, str | None], ...] = ()  # (level, the CPU feature it needs; None: every x86-64
    #                                                   host), lowest first; (): asked of the library (NumPy's
    #                                                   dispatch targets on this CPU)


# NumPy's dispatch: opcert's own code, NumPy callables and onnx.reference run on it
NUMPY_ISA = IsaSwitch(library="numpy", variable="NPY_DISABLE_CPU_FEATURES")

# torch's dispatch: its eager kernels, and the vector ISA TorchInductor generates code for (torch.compile)
TORCH_ISA = IsaSwitch(
    library="torch",
    variable="ATEN_CPU_CAPABILITY",
    levels=(("default", None), ("avx2", "AVX2"), ("avx512", "AVX512")),
)

# oneDNN's inside OpenVINO's CPU plugin
OPENVINO_ISA = IsaSwitch(
    library="openvino",
    variable="ONEDNN_MAX_CPU_ISA",
    levels=(("SSE41", None), ("AVX2", "AVX2"), ("AVX512_CORE", "AVX512")),
)


@dataclass(frozen=True, kw_only=True)
class Runtime:
    """One runtime under test (the fields are keywords: a row reads as what it says)."""

    name: str  # the target's name (--target NAME, target = "NAME")
    extra: str  # the extra of pyproject.toml that installs it: pip install 'opcert[EXTRA]'
    elementwise: str  # "module:attribute" of its element-wise side (targets.protocol.ElementWiseRuntime),
    #                             called with no argument, or with the device for NAME:DEVICE
    tensor: str | None = None  # "module:attribute" of its tensor side (targets.protocol.TensorTarget), called with
    #                             no argument; None: the tensor operators cannot be run on it
    binary: str | None = None  # "module:attribute" of its binary side (targets.protocol.BinaryTarget), called with
    #                             no argument; None: the binary operators (Pow) cannot be run on it
    predicate: str | None = None  # "module:attribute" of its predicate side (targets.predicate.PredicateTarget),
    #                                called with no argument; None: the predicate operators (IsNaN, IsInf) cannot
    #                                be run on it
    devices: tuple[str, ...] = ()  # other devices its element-wise side runs on, as targets NAME:DEVICE
    modules: tuple[str, ...] = ()  # modules whose import starts the runtime's threads (after which fork() may
    #                                 deadlock a child): a process that has one loaded spawns its workers
    isa: IsaSwitch | None = None  # the switch of its kernels' ISA level on its own device; None: it has none
    concurrent: bool = False  # its element-wise calls may be made from other threads, and from several at once


RUNTIMES = (
    Runtime(
        name="onnxruntime",
        extra="onnxruntime",
        modules=("onnxruntime",),
        concurrent=True,
        elementwise="opcert.targets.runtimes.onnxruntime:OnnxRuntimeElementWise",
        tensor="opcert.targets.runtimes.onnxruntime:OnnxRuntimeTensor",
        binary="opcert.targets.runtimes.onnxruntime:OnnxRuntimeBinary",
        predicate="opcert.targets.runtimes.predicates:OnnxRuntimePredicate",
    ),
    Runtime(
        name="onnxruntime-subgraph",
        extra="onnxruntime",
        modules=("onnxruntime",),
        concurrent=True,
        elementwise="opcert.targets.runtimes.onnxruntime_subgraph:OnnxRuntimeSubgraph",
    ),
    Runtime(
        name="onnxruntime-subgraph-unfused",
        extra="onnxruntime",
        modules=("onnxruntime",),
        concurrent=True,
        elementwise="opcert.targets.runtimes.onnxruntime_subgraph:OnnxRuntimeSubgraphUnfused",
    ),
    Runtime(
        name="onnx-reference",
        extra="onnxruntime",
        isa=NUMPY_ISA,
        concurrent=True,
        elementwise="opcert.targets.runtimes.onnx_reference:OnnxReferenceElementWise",
        tensor="opcert.targets.runtimes.onnx_reference:OnnxReferenceTensor",
        binary="opcert.targets.runtimes.onnx_reference:OnnxReferenceBinary",
        predicate="opcert.targets.runtimes.predicates:OnnxReferencePredicate",
    ),
    Runtime(
        name="torch",
        extra="torch",
        modules=("torch",),
        devices=("cuda",),
        concurrent=True,
        isa=TORCH_ISA,
        elementwise="opcert.targets.runtimes.torch:TorchElementWise",
        tensor="opcert.targets.runtimes.torch:TorchTensor",
        binary="opcert.targets.runtimes.torch:TorchBinary",
        predicate="opcert.targets.runtimes.predicates:TorchPredicate",
    ),
    Runtime(
        name="torch.compile",
        extra="torch",
        modules=("torch",),
        isa=TORCH_ISA,
        elementwise="opcert.targets.runtimes.torch_compile:TorchCompiledElementWise",
    ),
    Runtime(
        name="torch.compile-emulate-casts",
        extra="torch",
        modules=("torch",),
        isa=TORCH_ISA,
        elementwise="opcert.targets.runtimes.torch_compile:TorchCompiledEmulatedCasts",
    ),
    Runtime(
        name="jax",
        extra="jax",
        modules=("jax", "jaxlib"),
        devices=("gpu",),
        concurrent=True,
        elementwise="opcert.targets.runtimes.jax:JaxElementWise",
        tensor="opcert.targets.runtimes.jax:JaxTensor",
        binary="opcert.targets.runtimes.jax:JaxBinary",
        predicate="opcert.targets.runtimes.predicates:JaxPredicate",
    ),
    Runtime(
        name="jax-chain",
        extra="jax",
        modules=("jax", "jaxlib"),
        concurrent=True,
        elementwise="opcert.targets.runtimes.jax_chain:JaxChainElementWise",
    ),
    Runtime(
        name="openvino",
        extra="openvino",
        modules=("openvino",),
        isa=OPENVINO_ISA,
        elementwise="opcert.targets.runtimes.openvino:OpenVinoElementWise",
        tensor="opcert.targets.runtimes.openvino:OpenVinoTensor",
        binary="opcert.targets.runtimes.openvino:OpenVinoBinary",
        predicate="opcert.targets.runtimes.predicates:OpenVinoPredicate",
    ),
    Runtime(
        name="openvino-subgraph",
        extra="openvino",
        modules=("openvino",),
        isa=OPENVINO_ISA,
        elementwise="opcert.targets.runtimes.openvino_subgraph:OpenVinoSubgraph",
    ),
)

# Modules no row measures whose presence means threads were started too: a library a user's callable may load
# (tensorflow), and numba's GNU OpenMP pool, which a user's numba kernel with parallel=True starts (opcert's own
# kernels do not use numba's threading layers for this reason: verify.tensor.pairs runs its parts in Python
# threads). GNU OpenMP is not fork-safe, and torch's wheel loads the same libgomp.so.1: a worker forked after
# the pool started hung in torch's first call from two threads (the layout check) until the time limit called
# torch crashed (tests/test_target_environment.py keeps both).
OTHER_THREADED_MODULES = ("tensorflow", "numba.np.ufunc.omppool")


def target_names() -> tuple[str, ...]:
    """Every runtime target: each row's name, then its NAME:DEVICE forms."""
    return tuple(r.name for r in RUNTIMES) + tuple(f"{r.name}:{d}" for r in RUNTIMES for d in r.devices)


def tensor_target_names() -> tuple[str, ...]:
    """The runtimes the tensor operators can be run on."""
    return tuple(r.name for r in RUNTIMES if r.tensor is not None)


def binary_target_names() -> tuple[str, ...]:
    """The runtimes the binary element-wise operators (Pow) can be run on."""
    return tuple(r.name for r in RUNTIMES if r.binary is not None)


def predicate_target_names() -> tuple[str, ...]:
    """The runtimes the predicate operators (IsNaN, IsInf) can be run on."""
    return tuple(r.name for r in RUNTIMES if r.predicate is not None)


def runtime_of(target: str) -> Runtime | None:
    """The row of a runtime target (NAME or NAME:DEVICE); None where `target` is no runtime's."""
    base, _, device = target.partition(":")
    for r in RUNTIMES:
        if r.name == base and (not device or device in r.devices):
            return r
    return None


def threaded_modules() -> tuple[str, ...]:
    """The modules whose presence in sys.modules means a multithreaded runtime is loaded."""
    return tuple(m for r in RUNTIMES for m in r.modules) + OTHER_THREADED_MODULES


def isa_switches() -> tuple[IsaSwitch, ...]:
    """Every ISA switch opcert can set: NumPy's (opcert's own code and NumPy callables run on it), then the
    runtimes' own, each once."""
    out = [NUMPY_ISA]
    for r in RUNTIMES:
        if r.isa is not None and r.isa not in out:
            out.append(r.isa)
    return tuple(out)
