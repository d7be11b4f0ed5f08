"""One-node ONNX models, shared by the runtimes that run them (ONNX Runtime, onnx.reference, OpenVINO).

Element-wise: `onnx_model` builds Y = op(X) at the opset a runtime can load (`onnx_opset`, `OnnxVersions`).
Tensor: `OnnxTensorModels` builds Softmax, LogSoftmax and Hardmax at the standard's opset (ONNX opsets 1, 11,
13; DirectML's forms as the opset whose rule makes the same rows: one axis is opset 13, trailing axes opset 11,
proved equal in verify.proofs.axes). Binary (Pow): `binary_model` builds Z = op(X, Y), both inputs of one dtype
and of dynamic shapes; `BinaryRuntime` is what every runtime's binary side shares (the runtimes implement ONNX's
standard only). Nothing here imports onnx before a model is built.
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np

from opcert.formats import get_format, not_values_of
from opcert.spec.attrs import choice_number, user_value
from opcert.targets.protocol import BinaryTarget, TensorTarget

# onnx.TensorProto element types (numbers, so that importing this module does not import onnx)
ONNX_ELEM = {
    "float16": 10,
    "bfloat16": 16,
    "float32": 1,
    "float64": 11,
    "int8": 3,
    "int16": 5,
    "int32": 6,
    "int64": 7,
    "uint8": 2,
    "uint16": 4,
    "uint32": 12,
    "uint64": 13,
}


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
        if op.onnx_opsets:  # an experimental ONNX operator the runtimes still register, attributes as opcert's
            return None
        return f"ONNX has no {op.name} operator (it is defined by {', '.join(s.key for s in op.standards)})"
    extra = [k for k in attrs if not std.has(k)]
    if extra:
        return f"ONNX's {std.op_name} has no attribute {', '.join(extra)}"
    return None


def onnx_model(
    op,
    dtype: str,
    attrs: dict[str, Fraction],
    shape=None,
    copies: int = 1,
    opset: int | None = None,
    parameters_in_x_type: bool = False,
):
    """A one-node ONNX model: Y = op(X), X and Y of `dtype` and `shape`
    (None: unknown). A tensor-input attribute (PRelu's slope) is a
    0-d initializer, broadcast by the operator. copies > 1: that many
    independent nodes, Yi = op(Xi) (targets.layouts: many calls in one run).
    opset: the runtime's choice (onnx_opset with what it knows); None: the newest. parameters_in_x_type: a
    `channel` operator's parameters in X's type (a runtime that refuses ONNX-15's mixed types: the caller has
    checked that each value is exact in it, channel_parameters_exact)."""
    from onnx import helper

    std = onnx_standard(op)
    op_name, names = (std.op_name, std.attribute_names) if std is not None else (op.name, {})
    channel = std is not None and std.tensor_inputs == "channel"
    elem = ONNX_ELEM[dtype]
    inputs, inits, node_attrs = ["X"], [], {}
    for k, v in attrs.items():
        a = op.attribute(k)
        if a.input:
            # the initializer's own name: ONNX Pow calls its exponent input Y, which is this graph's output
            name = f"opcert_{names.get(k, k)}"
            inputs.append(name)
            if channel:  # one channel's parameter, in binary32 (binary64 for a float64 X): not rounded to X's type
                wide = dtype if parameters_in_x_type or dtype == "float64" else "float32"
                inits.append(ones_initializer((1,), wide, name, float(v)))
            else:
                # a 0-d tensor: ONNX's scalars (Clip's min and max); Pow broadcasts both ways, and a one-element Y of
                # shape (1,) made a 0-d X's output (1,)
                inits.append(scalar_initializer(v, dtype, name))
        else:
            node_attrs[names.get(k, k)] = user_value(op, k, v)
    xs, ys = copy_names(copies)
    if channel:
        nodes = [n for xi, yi in zip(xs, ys) for n in channel_nodes(op_name, xi, yi, inputs[1:], node_attrs)]
        inits.append(_int64_initializer("opcert_one_channel", [1, 1, -1]))
    else:
        nodes = [helper.make_node(op_name, [xi] + inputs[1:], [yi], **node_attrs) for xi, yi in zip(xs, ys)]
    return graph_model(nodes, f"opcert_{op.name}", xs, ys, elem, shape, inits, opset or onnx_opset(op, dtype))


def channel_parameters_exact(op, dtype: str, attrs: dict[str, Fraction]) -> str | None:
    """Why a `channel` operator's parameters cannot be given in X's type without rounding (None: each is exact
    in it, or the operator has none)."""
    std = onnx_standard(op)
    if std is None or std.tensor_inputs != "channel":
        return None
    return not_values_of({k: v for k, v in attrs.items() if op.attribute(k).input}, dtype)


def channel_nodes(op_name: str, x: str, y: str, params: list[str], node_attrs: dict) -> list:
    """y = op(x) with x viewed as one channel, (1, 1, n), and the result given x's shape back (Standard.tensor_inputs
    "channel": BatchNormalization's X is (N, C, ...), its parameters one value per channel)."""
    from onnx import helper

    return [
        helper.make_node("Shape", [x], [f"{x}_shape"]),
        helper.make_node("Reshape", [x, "opcert_one_channel"], [f"{x}_channel"]),
        helper.make_node(op_name, [f"{x}_channel", *params], [f"{y}_channel"], **node_attrs),
        # allowzero: a 0 in X's shape is a size of 0, not "the same as the input's" (X of shape (3, 0, 2))
        helper.make_node("Reshape", [f"{y}_channel", f"{x}_shape"], [y], allowzero=1),
    ]


def _int64_initializer(name: str, values: list[int]):
    from onnx import numpy_helper

    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def copy_names(copies: int) -> tuple[list[str], list[str]]:
    """The graph's inputs and outputs: X and Y, or X0.., Y0.. for `copies` > 1 independent copies of it."""
    if copies == 1:
        return ["X"], ["Y"]
    return [f"X{i}" for i in range(copies)], [f"Y{i}" for i in range(copies)]


def scalar_initializer(value, dtype: str, name: str):
    """A 0-d initializer: value rounded to dtype (bfloat16 through its bits, typed as ONNX's bfloat16)."""
    from onnx import numpy_helper

    arr = np.asarray(float(value)).astype(get_format(dtype).dtype)
    t = numpy_helper.from_array(arr.view(np.uint16) if dtype == "bfloat16" else arr, name)
    if dtype == "bfloat16":
        t.data_type = ONNX_ELEM["bfloat16"]
    return t


def ones_initializer(shape, dtype: str, name: str, value: float = 1.0):
    """An initializer of ones (or `value`) of `shape` in dtype (bfloat16 through its bits, typed as ONNX's
    bfloat16)."""
    from onnx import numpy_helper

    arr = np.full(tuple(shape), value, dtype=get_format(dtype).dtype)
    t = numpy_helper.from_array(arr.view(np.uint16) if dtype == "bfloat16" else arr, name)
    if dtype == "bfloat16":
        t.data_type = ONNX_ELEM["bfloat16"]
    return t


# the reductions' models (ReduceLogSumExp): the opset whose version takes the axes as an input
REDUCE_OPSET = 18

# the tensor operators whose ONNX node takes a Scale input over the normalized shape (filled with the standard's scale)
SCALED_NORMALIZATIONS = ("LayerNormalization", "RMSNormalization")


def graph_model(nodes, name: str, xs, ys, elem: int, shape, inits, opset: int):
    """A model of these nodes: inputs xs and outputs ys of ONNX type `elem` and `shape`, the default domain at
    `opset`."""
    from onnx import helper

    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info(x, elem, shape) for x in xs],
        [helper.make_tensor_value_info(y, elem, shape) for y in ys],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="opcert")
    model.ir_version = 9  # what ONNX Runtime 1.16 and later accept
    return model


def is_bfloat16(x) -> bool:
    return x.dtype.name == "bfloat16"


def built(cache: dict, op, dtype, attrs, build):
    """build() once per operator, dtype and attributes; its error message, as
    a string, where the library cannot build it (an unsupported combination)."""
    key = (op.name, dtype, tuple(sorted(attrs.items())))
    if key not in cache:
        try:
            cache[key] = build()
        except Exception as exc:  # the library's own refusal: NOT_IMPLEMENTED, unknown schema, ...
            cache[key] = refusal_text(exc)
    return cache[key]


def refusal_text(exc: Exception, most: int = 400) -> str:
    """A library's refusal in one line: its message's lines that say something, without those that only name
    where it was raised (OpenVINO's first line is "Exception from src/inference/src/cpp/core.cpp:105:")."""
    lines = [ln.strip() for ln in str(exc).splitlines() if ln.strip()]
    told = [ln for ln in lines if not re.fullmatch(r"Exception from \S+:\d+:", ln)]
    text = " ".join(told or lines) or type(exc).__name__
    return text if len(text) <= most else text[: most - 3] + "..."


def schema_versions(schemas) -> dict[str, frozenset[int]]:
    """ONNX operator name -> the versions (opsets) of it that a library has a schema for (the ONNX domain)."""
    out: dict[str, set[int]] = {}
    for sc in schemas:
        if sc.domain in ("", "ai.onnx"):
            out.setdefault(sc.name, set()).add(int(sc.since_version))
    return {k: frozenset(v) for k, v in out.items()}


def newest_schema(known: dict[str, frozenset[int]]) -> int | None:
    """The newest operator version (opset) among a library's schemas: what its provenance says it knows."""
    return max((v for vs in known.values() for v in vs), default=None)


class OnnxVersions:
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
        return (
            f"{self.label} knows ONNX {std.op_name} up to {std.op_name}-{max(self.known[std.op_name])}; "
            f"{lists} (the standard's newest is {std.op_name}-{std.support[-1].since})"
        )


# ---- the tensor operators ----------------------------------------------------------------------------------


def _trailing(reduced, rank) -> bool:
    return tuple(reduced) == tuple(range(reduced[0], rank))


class OnnxTensorModels(TensorTarget):
    """A tensor side that runs one-node models of the standard's ONNX opset (or, for DirectML's forms, the
    opset whose rule makes the same rows). Subclasses set `refused = {}` and define call()."""

    refused: dict
    # the exceptions that are the library's refusal of a case (refusal()); any other raised by the probe is an error
    # of the call's own code and propagates (ONNX Runtime: its status errors only; a plain RuntimeError from reading
    # an output was once reported as its refusal of bfloat16)
    refuses: tuple = (Exception,)

    def _opset_axis(self, std, reduced, rank, op=None, dtype=None):
        if std.key in ORT_KERNELS:  # ONNX Runtime's own operators, next to the default domain at 17
            return 17, reduced[0]
        if op is not None and op.reduces:  # ReduceLogSumExp-18: any axes, as an input (13: as an attribute)
            return (13 if std.key == "onnx-13" else REDUCE_OPSET), None
        if std.axes.kind in ("spatial", "groups"):  # Instance-, GroupNormalization: the standard's version
            # (DirectML's form of InstanceNormalization: ONNX's, the same rows and formula)
            own = std if std.key.startswith("onnx") else onnx_standard(op)
            return next((int(s.since) for s in own.support if dtype in s.dtypes), int(own.support[0].since)), None
        if std.key.startswith("onnx"):  # the standard's own opset: Softmax 1, 11, 13; LayerNormalization 17
            return int(std.support[0].since), reduced[0]
        if len(reduced) == 1:
            return 13, reduced[0]
        if _trailing(reduced, rank):
            return 11, reduced[0]
        return None, None

    def unsupported(self, op, std, dtype, reduced, rank):
        if std.key in ORT_KERNELS and self.name != "onnxruntime":
            return f"{std.op_name} ({std.key}) is ONNX Runtime's own operator: only the onnxruntime target runs it"
        onnx = next((s for s in op.standards if s.key.startswith("onnx")), None)
        if onnx is not None and not std.key.startswith("onnx") and std.formula != onnx.formula:
            return (
                f"a one-node ONNX model computes ONNX's {op.name} ({onnx.formula_text}); {std.op_name} ({std.key}) "
                f"is another formula ({std.formula_text}): no ONNX runtime runs it"
            )
        inexact = op.inputs_inexact(std, dtype)
        if inexact:  # the standards' Scale and B tensors have X's type
            return (
                f"{std.op_name} takes its scale and B tensors in X's type, and {inexact}: rounding it first would "
                "measure another operator"
            )
        opset, _ = self._opset_axis(std, reduced, rank, op, dtype)
        if opset is None:
            return (
                f"ONNX's {op.name} reduces over one axis (opset 13) or the trailing axes (opsets 1, 11): "
                f"axes {list(reduced)} of a rank-{rank} tensor have no ONNX form"
            )
        return None

    def refusal(self, op, std, dtype, reduced, rank) -> str | None:
        """The library's own refusal of this case (a type it has no kernel for), from a call on zeros: its
        message, once per case."""
        probe = (op.name, std.key, std.attrs, dtype, tuple(reduced), rank)
        if probe not in self.refused:
            shape = [2] * rank
            if std.axes.kind == "groups":  # channels the groups divide
                shape[1] = reduced.groups
            try:
                self.call(op, std, np.zeros(shape, dtype=get_format(dtype).dtype), reduced)
                self.refused[probe] = None
            except self.refuses as exc:  # NOT_IMPLEMENTED and the like: the library's message
                self.refused[probe] = f"{self.name} {self.version}: {str(exc).splitlines()[0][:300]}"
        return self.refused[probe]

    def model(self, op, std, x, reduced):
        from onnx import helper, numpy_helper

        if std.key in ORT_KERNELS:
            return _ort_kernel_model(op, std, x, reduced)
        opset, axis = self._opset_axis(std, reduced, x.ndim, op, x.dtype.name)
        elem = ONNX_ELEM[x.dtype.name]
        inputs, inits = ["X"], []
        out_shape = op.output_shape(x.shape, reduced)
        if op.reduces and opset >= REDUCE_OPSET:  # the axes input (opset 18), keepdims = 1 (the default, said)
            inputs.append("axes")
            inits.append(numpy_helper.from_array(np.asarray(reduced, dtype=np.int64), "axes"))
        held = op.input_values(std)  # scale and B, one value each (unsupported() found them exact in X's type)
        if op.name in SCALED_NORMALIZATIONS:  # Scale (and LayerNormalization's B) over the normalized shape
            inputs.append("Scale")
            inits.append(ones_initializer(x.shape[axis:], x.dtype.name, "Scale", held["scale"]))
            if held.get("B", 0.0) != 0.0:  # B is optional: absent at 0, as the standard without it
                inputs.append("B")
                inits.append(ones_initializer(x.shape[axis:], x.dtype.name, "B", held["B"]))
        if std.axes.kind in ("spatial", "groups"):
            # Instance- and GroupNormalization: a scale and a bias, inputs the standards require, one per channel;
            # GroupNormalization-18's one per group
            per = reduced.groups if std.axes.kind == "groups" and opset < 21 else x.shape[1]
            inputs += ["scale", "bias"]
            inits += [
                ones_initializer((per,), x.dtype.name, n, held[k]) for n, k in (("scale", "scale"), ("bias", "B"))
            ]
        # the standard's own axis attribute: one `axis`, or an `axes` list (MeanVarianceNormalization)
        if op.reduces:
            where = {"keepdims": 1} if opset >= REDUCE_OPSET else {"keepdims": 1, "axes": [int(a) for a in reduced]}
        elif std.axes.kind in ("spatial", "groups"):  # no axis attribute (the groups: num_groups, given below)
            where = {}
        elif std.axes.kind == "list":
            where = {"axes": [int(a) for a in reduced]}
        else:
            where = {"axis": int(axis)}
        # attributes as the standard spells them: a binary32 value a FLOAT, a choice named by a number an INT
        # (LpNormalization's p), another choice its name
        given = {k: v if choice_number(v) is None else choice_number(v) for k, v in op.node_attributes(std).items()}
        node = helper.make_node(op.name, inputs, ["Y"], **where, **given)
        g = helper.make_graph(
            [node],
            f"opcert_{op.name}",
            [helper.make_tensor_value_info("X", elem, x.shape)],
            [helper.make_tensor_value_info("Y", elem, out_shape)],
            initializer=inits,
        )
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)], producer_name="opcert")
        m.ir_version = 9
        return m


# ONNX Runtime's own kernels for the normalizations, by standard key: (operator, domain; None: the default one)
ORT_KERNELS = {
    "ort-skip": ("SkipLayerNormalization", "com.microsoft"),
    "ort-simplified": ("SimplifiedLayerNormalization", None),
    "ort-skip-simplified": ("SkipSimplifiedLayerNormalization", "com.microsoft"),
}


def _ort_kernel_model(op, std, x, reduced):
    """A model of ONNX Runtime's own kernel for the standard: Skip(Simplified)LayerNormalization (com.microsoft) on
    x as (1, rows, last axis), with a skip of zeros, a gamma of opcert's scale and (LayerNormalization's) a beta of
    its B; SimplifiedLayerNormalization (ONNX Runtime's, in the default domain) with `axis` and a scale of opcert's
    scale."""
    from onnx import helper, numpy_helper

    name, domain = ORT_KERNELS[std.key]
    elem, dtype = ONNX_ELEM[x.dtype.name], x.dtype.name
    given, held = op.node_attributes(std), op.input_values(std)
    nodes, inits = [], []
    if name.startswith("Skip"):  # the last axis of a (batch, sequence, hidden) tensor
        n = x.shape[-1] if x.ndim else 1
        three = (1, int(np.prod(x.shape[:-1], dtype=np.int64)), n)
        inits += [
            numpy_helper.from_array(np.asarray(three, dtype=np.int64), "three"),
            numpy_helper.from_array(np.asarray(x.shape, dtype=np.int64), "shape"),
            ones_initializer(three, dtype, "skip", 0.0),
            ones_initializer((n,), dtype, "gamma", held["scale"]),
        ]
        beta = ["beta"] if held.get("B", 0.0) != 0.0 else []  # SkipLayerNormalization's optional beta (opcert's B)
        if beta:
            inits.append(ones_initializer((n,), dtype, "beta", held["B"]))
        nodes += [
            # allowzero: a 0 in the shape is a size of 0 (rows of no element), not "as the input's"
            helper.make_node("Reshape", ["X", "three"], ["X3"], allowzero=1),
            helper.make_node(name, ["X3", "skip", "gamma", *beta], ["Y3"], domain=domain, **given),
            helper.make_node("Reshape", ["Y3", "shape"], ["Y"], allowzero=1),
        ]
    else:
        inits.append(ones_initializer(x.shape[reduced[0] :], dtype, "scale", held["scale"]))
        nodes.append(helper.make_node(name, ["X", "scale"], ["Y"], axis=int(reduced[0]), **given))
    g = helper.make_graph(
        nodes,
        f"opcert_{name}",
        [helper.make_tensor_value_info("X", elem, x.shape)],
        [helper.make_tensor_value_info("Y", elem, x.shape)],
        initializer=inits,
    )
    imports = [helper.make_opsetid("", 17)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    m = helper.make_model(g, opset_imports=imports, producer_name="opcert")
    m.ir_version = 9
    return m


# ---- the binary operators ----------------------------------------------------------------------------------

_STANDARDS = {"onnx": "ONNX", "directml": "DirectML"}


def binary_mismatch(label: str, op, std, dtype: str, attrs: dict) -> str | None:
    """Why no runtime here can be given this case of a binary operator (None: opcert has no objection; the
    library may still refuse it). The runtimes implement ONNX's standard only: DirectML's, or attributes other
    than DirectML's defaults (the plain function: scale = 1, bias = 0), are no runtime's here; a dtype ONNX's
    operator does not list is none of theirs either."""
    if std.key != "onnx":
        who = _STANDARDS.get(std.key, std.key)
        return (
            f"{label}: no runtime here runs {who} ({who}'s {std.op_name}): the runtimes implement ONNX's {op.name} only"
        )
    plain: dict = {}
    for s in op.standards:
        plain.update(s.defaults or {})
    odd = [k for k, v in attrs.items() if k not in plain or float(v) != float(plain[k])]
    if odd:
        named = ", ".join(f"{k} = {float(attrs[k]):g}" for k in odd)
        return (
            f"{label}: ONNX's {std.op_name} has no attribute {', '.join(odd)} ({named}: a DirectML ScaleBias, "
            "and no runtime here runs DirectML)"
        )
    if not any(dtype in s.dtypes for s in std.support):
        listed = sorted({d for s in std.support for d in s.dtypes})
        return f"{label}: ONNX's {std.op_name} lists no {dtype} (its types: {', '.join(listed)})"
    return None


def binary_opset(std, known: frozenset[int] | None) -> int:
    """The opset of a binary operator's one-node model: the newest version of the operator the runtime knows
    (`known`; None or empty: the standard's newest). ONNX's versions of Pow differ in their types only, and
    only the newest (Pow-15) lists bfloat16 for the exponent as well as for the base."""
    return max(known) if known else int(std.support[-1].since)


def binary_model(op, std, dtype: str, ranks: tuple[int, int], opset: int):
    """A one-node ONNX model: Z = op(X, Y) at `opset`, X and Y of `dtype` and of the given ranks, every
    dimension dynamic (each its own name: X and Y broadcast against each other), Z's shape left to the
    runtime."""
    from onnx import helper

    elem = ONNX_ELEM[dtype]
    names = op.inputs
    node = helper.make_node(std.op_name, list(names), ["Z"])
    graph = helper.make_graph(
        [node],
        f"opcert_{op.name}",
        [helper.make_tensor_value_info(n, elem, [f"{n.lower()}{i}" for i in range(r)]) for n, r in zip(names, ranks)],
        [helper.make_tensor_value_info("Z", elem, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="opcert")
    model.ir_version = 9  # what ONNX Runtime 1.16 and later accept
    return model


class BinaryRuntime(BinaryTarget):
    """What the runtimes' binary sides share. unsupported(): opcert's objection (binary_mismatch), then the
    side's own (`refuse`: a library with no way to take the dtype), then the library's refusal of a call on
    two zeros (no kernel for the type: its message), answered once per case. Subclasses set name and version
    and define call()."""

    def refuse(self, op, std, dtype: str, attrs: dict) -> str | None:
        return None

    def unsupported(self, op, std, dtype, attrs):
        cache = self.__dict__.setdefault("_refused", {})
        key = (op.name, std.key, dtype, tuple(sorted((k, float(v)) for k, v in attrs.items())))
        if key not in cache:
            label = f"{self.name} {self.version}"
            why = binary_mismatch(label, op, std, dtype, attrs)
            if why is None:
                why = self.refuse(op, std, dtype, attrs)
                why = f"{label}: {why}" if why else None
            if why is None:
                zeros = np.zeros(2, dtype=get_format(dtype).dtype)
                try:
                    self.call(op, std, zeros, zeros.copy(), attrs)
                except Exception as exc:  # noqa: BLE001 - NOT_IMPLEMENTED and the like: the library's message
                    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
                    why = f"{label} cannot run {op.name} in {dtype}: {first}"
            cache[key] = why
        return cache[key]
