"""ONNX Runtime (the CPU execution provider): a one-node ONNX model per operator, dtype and attributes.

Element-wise: the model at the newest opset the standard lists, or the newest version the installed ONNX
Runtime knows that lists the dtype (onnx_models.onnx_opset); many calls of one length in one run for the
layout check (`ort_calls`). Tensor: the standard's one-node model (onnx_models.OnnxTensorModels), on one
thread or on n (the layout check). Binary (Pow): Z = op(X, Y) at the newest version of the operator ONNX
Runtime knows (onnx_models.binary_model), dynamic shapes, one session per operator, dtype and ranks, one thread.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from opcert.targets.layouts import LayoutSupport, ThreadCount, cores, padded_stride, row_buffer
from opcert.targets.runtimes.onnx_models import (
    ONNX_ELEM,
    BinaryRuntime,
    OnnxTensorModels,
    OnnxVersions,
    binary_model,
    binary_opset,
    built,
    is_bfloat16,
    newest_schema,
    onnx_mismatch,
    onnx_model,
    schema_versions,
)


def ort_calls(runtime, copies: int = 256) -> Callable:
    """calls() for ONNX Runtime: a graph of `copies` independent nodes of the operator, each with its own
    graph input and output of length n, bound (io_binding) to rows of buffers opcert owns: one run is
    `copies` calls of the kernel, each on a buffer at the offset asked for. One lane per core, each with its
    own buffers and binding, runs the one session (one intra-op thread each; ORT releases the GIL in a run):
    each call pays ORT's own per-node work (bench/README.md, 'Figures behind choices in the code'), and a
    16-bit format's calls are 8.5 million."""
    sessions = {}

    def calls(op, X, attrs, offset: int = 0, in_place: bool = False):
        m, n = X.shape
        dtype = X.dtype.name
        key = (op.name, dtype, tuple(sorted(attrs.items())))
        if key not in sessions:
            model = runtime.model(op, dtype, attrs, shape=["n"], copies=copies)
            sessions[key] = runtime.ort.InferenceSession(
                model.SerializeToString(), runtime.options(1), providers=["CPUExecutionProvider"]
            )
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
                part = X[r : r + k]
                xin[: part.shape[0]] = part
                sess.run_with_iobinding(io)
                out[r : r + k] = yout[: part.shape[0]]

        if lanes == 1:
            lane(0)
        else:
            with ThreadPoolExecutor(lanes) as pool:
                list(pool.map(lane, range(lanes)))  # re-raises a lane's exception here
        return out

    return calls


class OnnxRuntimeElementWise(OnnxVersions):
    name = "onnxruntime"

    def __init__(self):
        import onnxruntime as ort

        self.ort = ort
        self.version = ort.__version__
        build = ort.get_build_info() if hasattr(ort, "get_build_info") else ""
        try:  # ORT's public API does not say which opsets it knows; its binding does (absent: the newest is built)
            known = schema_versions(ort.capi._pybind_state.get_all_operator_schema())
        except Exception:  # noqa: BLE001 - a minimal build without schemas
            known = {}
        super().__init__(f"onnxruntime {ort.__version__}", known)
        self.details = {
            "onnxruntime": ort.__version__,
            "build": build,
            "execution_provider": "CPUExecutionProvider",
            "newest_onnx_schema": newest_schema(self.known),
            "isa": "MLAS picks its kernels by cpuid; ONNX Runtime has no switch for them and does "
            "not report its choice",
        }
        self.sessions = {}
        self.threads = 1  # opcert parallelises over processes; the layout check also runs with every core

    def options(self, threads: int):
        """The session options of every session this side builds: `threads` intra-op threads."""
        opts = self.ort.SessionOptions()
        opts.intra_op_num_threads = threads
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        return opts

    def model(self, op, dtype, attrs, shape=None, copies: int = 1):
        """The ONNX model run for the operator: its one node (copies > 1: that many independent ones)."""
        return onnx_model(op, dtype, attrs, shape=shape, copies=copies, opset=self.opset(op, dtype))

    def _session(self, op, dtype, attrs):
        n = self.threads

        def build():
            return self.ort.InferenceSession(
                self.model(op, dtype, attrs).SerializeToString(), self.options(n), providers=["CPUExecutionProvider"]
            )

        return built(self.sessions, op, dtype, dict(attrs, __threads=n) if n != 1 else attrs, build)

    def layouts(self):
        return LayoutSupport(
            views=False,
            rows=False,
            offsets=True,
            calls=ort_calls(self),
            threads=self._with_threads,
            cannot={
                "strides": "ONNX Runtime's Python API copies a non-contiguous array into a "
                "contiguous tensor: its kernels never see strides",
                "in place": "ONNX Runtime decides in-place reuse inside a graph; a one-node "
                "session's output is its own buffer",
            },
        )

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
        if is_bfloat16(x):
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


def ort_status_errors(ort) -> tuple:
    """ONNX Runtime's status errors (NOT_IMPLEMENTED, INVALID_GRAPH, FAIL, ...): how it refuses a model or a run."""
    from onnxruntime.capi import onnxruntime_pybind11_state as state

    names = (
        "Fail",
        "InvalidArgument",
        "InvalidGraph",
        "InvalidProtobuf",
        "NotImplemented",
        "RuntimeException",
        "EPFail",
    )
    return tuple(getattr(state, n) for n in names if isinstance(getattr(state, n, None), type))


class OnnxRuntimeTensor(ThreadCount, OnnxTensorModels):
    name = "onnxruntime"

    def __init__(self):
        import onnxruntime as ort

        self.ort = ort
        self.version = ort.__version__
        self.sessions = {}
        self.refused = {}
        self.refuses = ort_status_errors(ort)

    def unsupported(self, op, std, dtype, reduced, rank):
        why = super().unsupported(op, std, dtype, reduced, rank)
        if why:
            return why
        return self.refusal(op, std, dtype, reduced, rank)

    def call(self, op, std, x, reduced):
        key = (op.name, std.key, std.attrs, x.dtype.name, x.shape, tuple(reduced), self.n_threads)
        if key not in self.sessions:
            opts = self.ort.SessionOptions()
            opts.log_severity_level = 3
            if self.n_threads:
                opts.intra_op_num_threads = self.n_threads
            self.sessions[key] = self.ort.InferenceSession(
                self.model(op, std, x, reduced).SerializeToString(), opts, providers=["CPUExecutionProvider"]
            )
        sess = self.sessions[key]
        if is_bfloat16(x):
            # NumPy has no bfloat16 for ONNX Runtime's Python API (an OrtValue of it has no .numpy()): both tensors
            # bound to uint16 buffers of the same bits, the output's of the operator's output shape
            make = self.ort.OrtValue.ortvalue_from_numpy_with_onnx_type
            yb = np.zeros(op.output_shape(x.shape, reduced), dtype=np.uint16)
            io = sess.io_binding()
            io.bind_ortvalue_input("X", make(np.ascontiguousarray(x).view(np.uint16), ONNX_ELEM["bfloat16"]))
            io.bind_ortvalue_output("Y", make(yb, ONNX_ELEM["bfloat16"]))
            sess.run_with_iobinding(io)
            return yb.view(x.dtype)
        return sess.run(None, {"X": x})[0]


class OnnxRuntimeBinary(BinaryRuntime):
    """ONNX Runtime's CPU execution provider on a one-node model Z = op(X, Y), one intra-op thread (opcert
    parallelises over processes, as for the element-wise side)."""

    name = "onnxruntime"

    def __init__(self):
        import onnxruntime as ort

        self.ort = ort
        self.version = ort.__version__
        try:  # the versions of each operator ONNX Runtime knows (as the element-wise side asks them)
            self.known = schema_versions(ort.capi._pybind_state.get_all_operator_schema())
        except Exception:  # noqa: BLE001 - a minimal build without schemas: the standard's newest is built
            self.known = {}
        self.sessions = {}

    def _session(self, op, std, dtype: str, ranks: tuple[int, int]):
        key = (op.name, std.op_name, dtype, ranks)
        if key not in self.sessions:
            opts = self.ort.SessionOptions()
            opts.intra_op_num_threads = 1
            opts.inter_op_num_threads = 1
            opts.log_severity_level = 3
            model = binary_model(op, std, dtype, ranks, binary_opset(std, self.known.get(std.op_name)))
            self.sessions[key] = self.ort.InferenceSession(
                model.SerializeToString(), opts, providers=["CPUExecutionProvider"]
            )
        return self.sessions[key]

    def call(self, op, std, x, y, attrs):
        sess = self._session(op, std, x.dtype.name, (x.ndim, y.ndim))
        a, b = op.inputs
        if is_bfloat16(x):
            # NumPy has no bfloat16 for ONNX Runtime's Python API: the inputs as uint16 buffers of the same bits
            make = self.ort.OrtValue.ortvalue_from_numpy_with_onnx_type
            elem = ONNX_ELEM["bfloat16"]
            feeds = {
                a: make(np.ascontiguousarray(x).view(np.uint16), elem),
                b: make(np.ascontiguousarray(y).view(np.uint16), elem),
            }
            z = np.asarray(sess.run_with_ort_values(["Z"], feeds)[0].numpy())
            return z.view(x.dtype) if z.dtype == np.uint16 else z
        return sess.run(["Z"], {a: x, b: y})[0]
