"""Real runtimes under test: ONNX Runtime (CPU), onnx.reference, PyTorch (CPU), JAX (CPU), OpenVINO (CPU).

Each builds what its library needs once per operator, dtype and attributes.
A combination the library does not support is reported as unsupported with
the library's own reason; anything that fails at run time is a crash.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
from fractions import Fraction
from typing import Callable

import numpy as np

from opcert.errors import UsageError
from opcert.targets.layouts import cores, padded_stride, row_buffer

# onnx.TensorProto element types (numbers, so that importing this module does not import onnx)
ONNX_ELEM = {"float16": 10, "bfloat16": 16, "float32": 1, "float64": 11, "int8": 3, "int16": 5, "int32": 6,
             "int64": 7, "uint8": 2, "uint16": 4, "uint32": 12, "uint64": 13}


def onnx_standard(op):
    """The operator's ONNX standard, or None where ONNX does not define it."""
    return next((s for s in op.standards if s.key == "onnx"), None)


def onnx_opset(op, dtype: str, known: frozenset[int] | None = None) -> int | None:
    """The opset a one-node model of `op` is built at: the operator's override
    for the dtype (ScaledTanh, experimental, lived in opsets 1-9), else the
    newest version the ONNX standard lists; None where ONNX does not define it.

    known: the versions of the operator the runtime has a schema for (None: all).
    A runtime older than the standard's newest version refuses a model stamped
    with it (ONNX Runtime 1.30 and Celu-28) although it runs the operator: the
    model is then built at the newest version the runtime knows that lists
    `dtype` (Celu-12 for float32). The catalog's versions of an operator differ
    in their types only; None where no version the runtime knows lists `dtype`."""
    if op.onnx_opsets:
        return op.onnx_opsets.get(dtype)
    std = onnx_standard(op)
    if std is None:
        return None
    newest = int(std.support[-1].since)
    if not known or newest <= max(known):
        return newest
    fits = [int(s.since) for s in std.support if dtype in s.dtypes and int(s.since) <= max(known)]
    return max(fits) if fits else None


def onnx_mismatch(op, attrs: dict) -> str | None:
    """Why these attributes cannot be given to ONNX's operator (None: they can)."""
    std = onnx_standard(op)
    if std is None:
        if op.onnx_opsets:    # an experimental ONNX operator the runtimes still register, attributes as opcert's
            return None
        return f"ONNX has no {op.name} operator (it is defined by {', '.join(s.key for s in op.standards)})"
    extra = [k for k in attrs if not std.has(k)]
    if extra:
        return f"ONNX's {std.op_name} has no attribute {', '.join(extra)}"
    return None


def onnx_model(op, dtype: str, attrs: dict[str, Fraction], shape=None, copies: int = 1, opset: int | None = None):
    """A one-node ONNX model: Y = op(X), X and Y of `dtype` and `shape`
    (None: unknown). A tensor-input attribute (PRelu's slope) is a
    one-element initializer, broadcast by the operator. copies > 1: that many
    independent nodes, Yi = op(Xi) (targets.layouts: many calls in one run).
    opset: the runtime's choice (onnx_opset with what it knows); None: the newest."""
    from onnx import helper, numpy_helper
    from opcert.formats import get_format
    from opcert.spec.attrs import user_value
    std = onnx_standard(op)
    op_name, names = (std.op_name, std.attribute_names) if std is not None else (op.name, {})
    elem = ONNX_ELEM[dtype]
    inputs, inits, node_attrs = ["X"], [], {}
    for k, v in attrs.items():
        a = op.attribute(k)
        if a.input:
            name = names.get(k, k)
            arr = np.asarray([float(v)]).astype(get_format(dtype).dtype)
            t = numpy_helper.from_array(arr.view(np.uint16) if dtype == "bfloat16" else arr, name)
            if dtype == "bfloat16":
                t.data_type = elem
            inputs.append(name)
            inits.append(t)
        else:
            node_attrs[names.get(k, k)] = user_value(op, k, v)
    if copies == 1:
        nodes = [helper.make_node(op_name, inputs, ["Y"], **node_attrs)]
        xs, ys = ["X"], ["Y"]
    else:
        xs, ys = [f"X{i}" for i in range(copies)], [f"Y{i}" for i in range(copies)]
        nodes = [helper.make_node(op_name, [xi] + inputs[1:], [yi], **node_attrs) for xi, yi in zip(xs, ys)]
    graph = helper.make_graph(nodes, f"opcert_{op.name}",
                              [helper.make_tensor_value_info(x, elem, shape) for x in xs],
                              [helper.make_tensor_value_info(y, elem, shape) for y in ys], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset or onnx_opset(op, dtype))],
                              producer_name="opcert")
    model.ir_version = 9   # what ONNX Runtime 1.16 and later accept
    return model


def _is_bf16(x):
    return x.dtype.name == "bfloat16"


def _built(cache: dict, op, dtype, attrs, build):
    """build() once per operator, dtype and attributes; its error message, as
    a string, where the library cannot build it (an unsupported combination)."""
    key = (op.name, dtype, tuple(sorted(attrs.items())))
    if key not in cache:
        try:
            cache[key] = build()
        except Exception as exc:  # the library's own refusal: NOT_IMPLEMENTED, unknown schema, ...
            cache[key] = str(exc).splitlines()[0][:300]
    return cache[key]


def _schema_versions(schemas) -> dict[str, frozenset[int]]:
    """ONNX operator name -> the versions (opsets) of it that a library has a schema for (the ONNX domain)."""
    out: dict[str, set[int]] = {}
    for sc in schemas:
        if sc.domain in ("", "ai.onnx"):
            out.setdefault(sc.name, set()).add(int(sc.since_version))
    return {k: frozenset(v) for k, v in out.items()}


def _newest(known: dict[str, frozenset[int]]) -> int | None:
    """The newest operator version (opset) among a library's schemas: what its provenance says it knows."""
    return max((v for vs in known.values() for v in vs), default=None)


class _OnnxVersions:
    """The opset choice of a runtime that loads ONNX models and knows the versions in `known`
    (operator name -> versions; set before the first question, which is remembered)."""

    def __init__(self, label: str, known: dict[str, frozenset[int]]):
        self.label, self.known = label, known
        self._too_new: dict = {}

    def opset(self, op, dtype: str) -> int | None:
        std = onnx_standard(op)
        return onnx_opset(op, dtype, self.known.get(std.op_name) if std is not None else None)

    def too_new(self, op, dtype: str) -> str | None:
        """Why this runtime cannot load any version of the operator that has `dtype` (None: it can).
        Asked at every call of the target (a sweep makes 2^17): answered once per operator and dtype."""
        key = (op.name, dtype)
        if key not in self._too_new:
            self._too_new[key] = self._why_too_new(op, dtype)
        return self._too_new[key]

    def _why_too_new(self, op, dtype: str) -> str | None:
        std = onnx_standard(op)
        if std is None or op.onnx_opsets or self.opset(op, dtype) is not None:
            return None
        first = next((s.since for s in std.support if dtype in s.dtypes), None)
        lists = f"{dtype} is in {std.op_name}-{first} and later" if first else f"no version lists {dtype}"
        return (f"{self.label} knows ONNX {std.op_name} up to {std.op_name}-{max(self.known[std.op_name])}; "
                f"{lists} (the standard's newest is {std.op_name}-{std.support[-1].since})")


def ort_calls(runtime, copies: int = 256) -> Callable:
    """calls() for ONNX Runtime: a graph of `copies` independent nodes of the operator, each with its own
    graph input and output of length n, bound (io_binding) to rows of buffers opcert owns: one run is
    `copies` calls of the kernel, each on a buffer at the offset asked for. One lane per core, each with its
    own buffers and binding, runs the one session (one intra-op thread each; ORT releases the GIL in a run):
    a call costs 1-2.5 us of ORT's own per-node work, and a 16-bit format's calls are 8.5 million."""
    sessions = {}

    def calls(op, X, attrs, offset: int = 0, in_place: bool = False):
        from concurrent.futures import ThreadPoolExecutor
        m, n = X.shape
        dtype = X.dtype.name
        key = (op.name, dtype, tuple(sorted(attrs.items())))
        if key not in sessions:
            ort = runtime.ort
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            model = onnx_model(op, dtype, attrs, shape=["n"], copies=copies, opset=runtime.opset(op, dtype))
            sessions[key] = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        sess = sessions[key]
        k = copies
        itemsize = X.dtype.itemsize
        stride = padded_stride(n, itemsize)
        elem = ONNX_ELEM[dtype]
        make = runtime.ort.OrtValue.ortvalue_from_numpy_with_onnx_type
        bits = f"uint{8 * itemsize}"
        out = np.empty((m, n), X.dtype)
        lanes = max(1, min(cores(), -(-m // k)))

        def lane(j: int) -> None:
            xin = row_buffer(k, n, X.dtype, stride, offset)
            yout = row_buffer(k, n, X.dtype, stride, offset)
            io = sess.io_binding()
            xb, yb = xin.view(bits), yout.view(bits)
            for i in range(k):
                io.bind_ortvalue_input(f"X{i}", make(xb[i], elem))
                io.bind_ortvalue_output(f"Y{i}", make(yb[i], elem))
            for r in range(j * k, m, lanes * k):
                part = X[r:r + k]
                xin[:part.shape[0]] = part
                sess.run_with_iobinding(io)
                out[r:r + k] = yout[:part.shape[0]]
        if lanes == 1:
            lane(0)
        else:
            with ThreadPoolExecutor(lanes) as pool:
                list(pool.map(lane, range(lanes)))     # re-raises a lane's exception here
        return out
    return calls


class OnnxRuntime(_OnnxVersions):
    name = "onnxruntime"

    def __init__(self):
        import onnxruntime as ort
        self.ort = ort
        self.version = ort.__version__
        build = ort.get_build_info() if hasattr(ort, "get_build_info") else ""
        try:   # ORT's public API does not say which opsets it knows; its binding does (absent: the newest is built)
            known = _schema_versions(ort.capi._pybind_state.get_all_operator_schema())
        except Exception:  # noqa: BLE001 - a minimal build without schemas
            known = {}
        super().__init__(f"onnxruntime {ort.__version__}", known)
        self.details = {"onnxruntime": ort.__version__, "build": build, "execution_provider": "CPUExecutionProvider",
                        "newest_onnx_schema": _newest(self.known),
                        "isa": "MLAS picks its kernels by cpuid; ONNX Runtime has no switch for them and does "
                               "not report its choice"}
        self.sessions = {}
        self.threads = 1      # opcert parallelises over processes; the layout check also runs with every core

    def _session(self, op, dtype, attrs):
        n = self.threads

        def build():
            opts = self.ort.SessionOptions()
            opts.intra_op_num_threads = n
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            model = onnx_model(op, dtype, attrs, opset=self.opset(op, dtype))
            return self.ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        return _built(self.sessions, op, dtype, dict(attrs, __threads=n) if n != 1 else attrs, build)

    def layouts(self):
        from opcert.targets.layouts import LayoutSupport
        return LayoutSupport(views=False, rows=False, offsets=True, calls=ort_calls(self),
                             threads=self._with_threads, concurrent=True,
                             cannot={"strides": "ONNX Runtime's Python API copies a non-contiguous array into a "
                                                "contiguous tensor: its kernels never see strides",
                                     "in place": "ONNX Runtime decides in-place reuse inside a graph; a one-node "
                                                 "session's output is its own buffer"})

    @contextlib.contextmanager
    def _with_threads(self, n: int):
        before, self.threads = self.threads, n
        try:
            yield
        finally:
            self.threads = before

    def unsupported(self, op, dtype, attrs):
        why = onnx_mismatch(op, attrs)
        if why:
            return f"onnxruntime {self.version}: {why}"
        why = self.too_new(op, dtype)
        if why:
            return why
        s = self._session(op, dtype, attrs)
        return f"onnxruntime {self.version} cannot run {op.name} in {dtype}: {s}" if isinstance(s, str) else None

    def __call__(self, op, x, attrs):
        sess = self._session(op, x.dtype.name, attrs)
        if _is_bf16(x):
            # NumPy has no bfloat16 for ONNX Runtime's Python API: bind both tensors to uint16 buffers
            # of the same bits (the output buffer is the one ONNX Runtime writes into)
            xb = np.ascontiguousarray(x).view(np.uint16)
            yb = np.zeros(x.shape, dtype=np.uint16)
            make = self.ort.OrtValue.ortvalue_from_numpy_with_onnx_type
            io = sess.io_binding()
            io.bind_ortvalue_input("X", make(xb, ONNX_ELEM["bfloat16"]))
            io.bind_ortvalue_output("Y", make(yb, ONNX_ELEM["bfloat16"]))
            sess.run_with_iobinding(io)
            return yb.view(x.dtype)
        return sess.run(["Y"], {"X": x})[0]


class OnnxReference(_OnnxVersions):
    name = "onnx-reference"

    def __init__(self):
        import onnx
        self.version = onnx.__version__
        super().__init__(f"onnx.reference {onnx.__version__}",
                         _schema_versions(onnx.defs.get_all_schemas_with_history()))
        from opcert.provenance import simd
        self.details = {"onnx": onnx.__version__, "numpy": np.__version__, "isa": f"NumPy: {simd()}",
                        "newest_onnx_schema": _newest(self.known)}
        self.evaluators = {}

    def _evaluator(self, op, dtype, attrs):
        from onnx.reference import ReferenceEvaluator
        return _built(self.evaluators, op, dtype, attrs,
                      lambda: ReferenceEvaluator(onnx_model(op, dtype, attrs, opset=self.opset(op, dtype))))

    def unsupported(self, op, dtype, attrs):
        why = onnx_mismatch(op, attrs)
        if why:
            return f"onnx.reference {self.version}: {why}"
        why = self.too_new(op, dtype)
        if why:
            return why
        e = self._evaluator(op, dtype, attrs)
        return f"onnx.reference {self.version} cannot run {op.name}: {e}" if isinstance(e, str) else None

    def __call__(self, op, x, attrs):
        return self._evaluator(op, x.dtype.name, attrs).run(None, {"X": x})[0]

    def layouts(self):
        from opcert.targets.layouts import LayoutSupport
        return LayoutSupport(views=True, rows=True, rows_are_calls=True, offsets=True, concurrent=True,
                             cannot={"threads": "onnx.reference runs NumPy on one thread",
                                     "in place": "onnx.reference has no in-place form"})


def runtime_function(op, library: str, attrs: dict):
    """(the library's function with the attributes bound, None) where the
    operator declares a RuntimeMap for `library` whose condition these
    attributes meet; else (None, why not)."""
    from opcert.numerics.exact import eval_rational
    maps = op.runtimes.get(library)
    if maps is None:
        return None, f"opcert maps no {library} function to {op.name} ({op.summary})"
    maps = maps if isinstance(maps, tuple) else (maps,)
    why = ""
    for m in maps:
        if m.condition is not None and not eval_rational(m.condition, Fraction(0), attrs):
            why = why or m.why_not
            continue
        return m, None
    return None, why or f"{maps[0].function} is not {op.name} at these attributes"


def _resolve(dotted: str):
    import importlib
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(dotted)


def _arguments(op, m, attrs, tensor):
    """The RuntimeMap's positional and keyword arguments at these attributes;
    `tensor(value)` makes a one-element tensor in the input's dtype."""
    from opcert.spec.attrs import user_value
    args = [user_value(op, a, attrs[a]) for a in m.positional]
    kwargs = {}
    for kw, spec in m.kwargs.items():
        if isinstance(spec, str):
            if spec in attrs:     # absent: the check's standard lacks it (ONNX Softplus has no steepness), and
                kwargs[kw] = user_value(op, spec, attrs[spec])   # the library's default is that standard's value
        elif isinstance(spec, tuple) and spec[0] == "tensor":
            kwargs[kw] = tensor(float(attrs[spec[1]]))
        elif isinstance(spec, tuple) and spec[0] == "choice":   # the library's value for each choice of `kw`
            kwargs[kw] = spec[1][user_value(op, kw, attrs[kw])]
        else:
            kwargs[kw] = spec
    return args, kwargs


class Torch:
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
        self.details = {"torch": torch.__version__, "git": torch.version.git_version, "device": device,
                        "config_sha256": hashlib.sha256(torch.__config__.show().encode()).hexdigest()[:16],
                        "isa": _torch_isa(torch)}
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
        bf16 = _is_bf16(x)
        # x is the call's own copy (Target.run), with the layout the caller gave: torch sees its strides
        # and its alignment (from_numpy shares the buffer)
        t = (torch.from_numpy(x.view(np.int16)).view(torch.bfloat16) if bf16
             else torch.from_numpy(x)).to(self.device)
        args, kwargs = _arguments(op, m, attrs, lambda v: torch.tensor([v], dtype=t.dtype, device=self.device))
        if self.in_place_call:
            kwargs["inplace"] = True
        y = _resolve(m.function)(t, *args, **kwargs)
        if not isinstance(y, torch.Tensor):
            return np.asarray(y)   # judged as the wrong thing it is
        y = y.cpu()
        if bf16 and y.dtype == torch.bfloat16:
            return y.view(torch.int16).numpy().view(x.dtype)
        return y.detach().float().numpy() if y.dtype == torch.bfloat16 else y.detach().numpy()


    def layouts(self):
        from opcert.targets.layouts import LayoutSupport, torch_threads
        if self.device != "cpu":
            return LayoutSupport(cannot={"every layout": "the tensor is copied to the GPU (.to(device)), which "
                                                         "makes its own contiguous buffer"})
        return LayoutSupport(views=True, rows=True, rows_are_calls=True, offsets=True, concurrent=True,
                             threads=lambda n: torch_threads(self.torch, n), in_place=self._in_place,
                             in_place_for=self._has_in_place)

    def _has_in_place(self, op, attrs) -> bool:
        """Whether the function has an in-place form (`inplace=True`: F.elu, F.relu, ...)."""
        import inspect
        m, _ = runtime_function(op, "torch", attrs)
        try:
            return "inplace" in inspect.signature(_resolve(m.function)).parameters
        except (TypeError, ValueError):
            return False

    def _in_place(self, op, x, attrs):
        self.in_place_call = True
        try:
            return self(op, x, attrs)
        finally:
            self.in_place_call = False


def _torch_isa(torch) -> str:
    """The CPU capability torch's kernels were dispatched for (ATEN_CPU_CAPABILITY caps it)."""
    try:
        level = torch.backends.cpu.get_cpu_capability()
    except Exception:  # noqa: BLE001 - an old torch: the setting, if any, is all there is
        level = "unknown"
    cap = os.environ.get("ATEN_CPU_CAPABILITY")
    return f"{level} (ATEN_CPU_CAPABILITY={cap})" if cap else level


class Jax:
    """JAX (CPU, 64-bit enabled so that float64 stays float64) functions the
    catalog declares (Operator.runtimes["jax"]), jit-compiled per operator and attributes."""
    name = "jax"
    floats = ("float16", "bfloat16", "float32", "float64")

    def __init__(self, device: str = "cpu"):
        import os
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
        except RuntimeError as exc:   # no such backend on this machine (or JAX was started CPU-only)
            self.dev_error = str(exc).splitlines()[0]
        import jaxlib
        self.details = {"jax": jax.__version__, "jaxlib": jaxlib.__version__, "device": device,
                        "backend": str(self.dev.platform) if self.dev is not None else None,
                        "isa": "XLA compiles for the host CPU's features; JAX has no switch opcert sets"}
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
            f = _resolve(m.function)

            def call(t):
                args, kwargs = _arguments(op, m, attrs, lambda v: jnp.asarray([v], t.dtype))
                return f(t, *args, **kwargs)
            self.compiled[key] = self.jax.jit(call)
        return np.asarray(self.compiled[key](self.jax.device_put(x, self.dev)))


    def layouts(self):
        from opcert.targets.layouts import LayoutSupport
        why = "jax.device_put copies the array into a buffer of XLA's own (contiguous, aligned by XLA)"
        return LayoutSupport(compiles_per_shape=True, concurrent=True,
                             cannot={"strides": why, "offsets": why,
                                     "threads": "XLA's CPU thread pool is set when JAX starts (XLA_FLAGS), "
                                                "not per call",
                                     "in place": "JAX arrays are immutable"})


class OpenVino:
    """OpenVINO's CPU plugin, running the one-node ONNX model through its ONNX
    frontend; inference precision pinned to f32 (the plugin would otherwise
    pick bf16 on CPUs that have it), one thread."""
    name = "openvino"

    def __init__(self):
        import openvino as ov
        self.ov = ov
        self.core = ov.Core()
        self.version = ov.__version__
        self.details = {"openvino": ov.__version__, "device": "CPU", "inference_precision_hint": "f32",
                        "cpu": self.core.get_property("CPU", "FULL_DEVICE_NAME"),
                        "isa": f"oneDNN, ONEDNN_MAX_CPU_ISA={os.environ['ONEDNN_MAX_CPU_ISA']}"
                               if os.environ.get("ONEDNN_MAX_CPU_ISA") else "oneDNN, as the CPU allows (no cap set)"}
        self.models = {}

    def _compiled(self, op, dtype, attrs):
        def build():
            model = self.core.read_model(onnx_model(op, dtype, attrs, shape=["N"]).SerializeToString())
            return self.core.compile_model(model, "CPU", {"INFERENCE_NUM_THREADS": 1,
                                                          "INFERENCE_PRECISION_HINT": "f32"})
        return _built(self.models, op, dtype, attrs, build)

    def unsupported(self, op, dtype, attrs):
        why = onnx_mismatch(op, attrs)
        if why:
            return f"openvino {self.version}: {why}"
        if dtype == "bfloat16":
            return f"openvino {self.version}: opcert feeds OpenVINO NumPy arrays, which have no bfloat16"
        c = self._compiled(op, dtype, attrs)
        return f"openvino {self.version} cannot run {op.name} in {dtype}: {c}" if isinstance(c, str) else None

    def __call__(self, op, x, attrs):
        c = self._compiled(op, x.dtype.name, attrs)
        flat = np.ascontiguousarray(x).reshape(-1)
        y = np.asarray(c([flat])[0])
        return y.reshape(x.shape) if y.size == x.size else y


    def layouts(self):
        from opcert.targets.layouts import LayoutSupport
        return LayoutSupport(cannot={"strides": "opcert gives OpenVINO a flat contiguous array (its compiled "
                                                "model has one dynamic dimension)",
                                     "offsets": "OpenVINO copies its input into a tensor of its own",
                                     "threads": "the compiled model's INFERENCE_NUM_THREADS is fixed at 1 here",
                                     "caller threads": "the compiled model's call shares one infer request, "
                                                       "which is not for use from several threads at once",
                                     "in place": "OpenVINO's outputs are its own tensors"})


RUNTIMES = {"onnxruntime": OnnxRuntime, "onnx-reference": OnnxReference, "torch": Torch, "jax": Jax,
            "openvino": OpenVino}
# The extra of pyproject.toml that installs each runtime's library.
EXTRAS = {"onnxruntime": "onnxruntime", "onnx-reference": "onnxruntime", "torch": "torch", "jax": "jax",
          "openvino": "openvino"}


def load(name: str, timeout: float | None = None):
    from opcert.targets.base import Target, TargetInfo
    base, _, device = name.partition(":")
    try:
        rt = RUNTIMES[base](device) if device else RUNTIMES[base]()
    except ImportError as exc:
        extra = EXTRAS[base]
        raise UsageError(f"target {name} needs {extra}, which is not installed ({exc}): pip install "
                         f"'opcert[{extra}]' (or 'opcert[runtimes]' for every runtime)") from None
    fp = hashlib.sha256(json.dumps([name, rt.details], sort_keys=True).encode()).hexdigest()[:32]
    # plain str and JSON values: torch.__version__ is a TorchVersion, and a result holding one imports torch
    # where it is unpickled (the parent of an isolated worker, which must not load a multithreaded runtime)
    info = TargetInfo(name, "runtime", str(rt.version), fp, json.loads(json.dumps(rt.details, default=str)))
    tgt = Target(info, rt, rt.unsupported, timeout=timeout)
    tgt.layouts = rt.layouts()
    return tgt
