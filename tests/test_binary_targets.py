"""The targets of the binary element-wise operators (opcert.targets.binary): Pow on each runtime and on opcert's
own implementation, at IEEE 754's special cases of pow, written down here as literal values (not computed by the
code under test), and on broadcast inputs; what each target refuses, with the reason.

The runtimes run in a worker (opcert.workers.run_isolated): loaded into the test process, they would make its
later workers spawn rather than fork (tests/conftest.py)."""

import importlib.util
import math
import sys

import ml_dtypes
import numpy as np
import pytest
from conftest import same_bits

from opcert.errors import UsageError
from opcert.runtime_table import RUNTIMES, binary_target_names, threaded_modules
from opcert.spec.binary_ops.pow import OPERATOR as POW
from opcert.targets import binary
from opcert.targets.runtimes import resolve
from opcert.workers import run_isolated

INF, NAN = math.inf, math.nan
SQRT2 = {"float16": 1.4140625, "bfloat16": 1.4140625, "float32": 1.41421353816986083984375}  # 0x3DA8, 0x3FB5,
#                                                                                                0x3FB504F3
# (x, y, IEEE 754's pow(x, y)); None: the dtype's sqrt(2). 1/3 is no integer in any format: a finite negative
# base to a non-integer power is NaN (C's pow raises invalid; math.pow raises ValueError).
PAIRS = [
    (2.0, 3.0, 8.0),
    (2.0, 0.5, None),
    (-8.0, 1 / 3, NAN),
    (0.0, -1.0, INF),  # pow(+0, y) for an odd integer y < 0: +inf (divide by zero)
    (-0.0, -3.0, -INF),  # pow(-0, y) for an odd integer y < 0: -inf
    (INF, -1.0, 0.0),  # pow(+inf, y < 0): +0
    (NAN, 0.0, 1.0),  # pow(x, +-0) = 1 for every x, NaN included
    (1.0, NAN, 1.0),  # pow(+1, y) = 1 for every y, NaN included
    (-2.0, INF, INF),  # pow(x, +inf) for |x| > 1: +inf
]
DTYPES = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16, "float32": np.float32}
# Where Pow's bfloat16 is the library's to refuse: ONNX Runtime has no bfloat16 Pow kernel on the CPU (its
# NOT_IMPLEMENTED, from the session it was asked to build); opcert feeds OpenVINO NumPy arrays, which have none
NO_BFLOAT16 = {"onnxruntime": "NOT_IMPLEMENTED", "openvino": "no bfloat16"}
TARGETS = [*binary_target_names(), "numpy:power"]
MODULES = {"onnx-reference": "onnx"}  # the module a target needs, where it is not the target's name


def _installed(name: str) -> None:
    """Skip where the target's package is absent (make test installs each). Asked with find_spec, not
    pytest.importorskip: importing a runtime into the test process is what the worker is for."""
    module = MODULES.get(name, name.partition(":")[0])
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"not installed: {module}")


def _expected(dtype: str) -> np.ndarray:
    return np.array([SQRT2[dtype] if z is None else z for _, _, z in PAIRS], dtype=np.float64)


def _inputs(dtype: str):
    t = DTYPES[dtype]
    return np.array([x for x, _, _ in PAIRS], dtype=t), np.array([y for _, y, _ in PAIRS], dtype=t)


def _pow_on(name: str) -> dict:
    """In a worker: the target's Pow at PAIRS per dtype (its output's dtype, shape and values in binary64, or its
    reason not to run), on broadcast inputs, and its reasons for what it is not given."""
    t = binary.load(name)
    std = POW.standard("onnx")
    out = {}
    for dtype in DTYPES:
        why = t.unsupported(POW, std, dtype, {})
        if why is not None:
            out[dtype] = why
            continue
        x, y = _inputs(dtype)
        with np.errstate(all="ignore"):  # NumPy's power raises its flags (numpy:power, onnx.reference)
            z = t.call(POW, std, x, y, {})
        out[dtype] = (str(z.dtype), z.shape, np.asarray(z).astype(np.float64))
    xs = np.array([[1.0, 2.0, 3.0]], np.float16)  # (1, 3) against (4, 1)
    ys = np.array([[0.0], [1.0], [2.0], [3.0]], np.float16)
    zb = t.call(POW, std, xs, ys, {})
    out["broadcast"] = (str(zb.dtype), zb.shape, np.asarray(zb).astype(np.float64))
    out["directml"] = t.unsupported(POW, POW.standard("directml"), "float32", {"scale": 1.0, "bias": 0.0})
    out["scaled"] = t.unsupported(POW, std, "float32", {"scale": 2.0})
    out["plain"] = t.unsupported(POW, std, "float32", {"scale": 1.0, "bias": 0.0})
    return out


@pytest.mark.parametrize("name", TARGETS)
def test_pow_at_the_special_cases_and_broadcast(name):
    _installed(name)
    got = run_isolated(_pow_on, name)
    for dtype in DTYPES:
        if isinstance(got[dtype], str):
            assert name in NO_BFLOAT16 and dtype == "bfloat16", f"{name} refuses {dtype}: {got[dtype]}"
            assert NO_BFLOAT16[name] in got[dtype], got[dtype]
            continue
        assert name not in NO_BFLOAT16 or dtype != "bfloat16", f"{name} now runs bfloat16: say so above"
        zdtype, shape, z = got[dtype]
        assert (zdtype, shape) == (dtype, (len(PAIRS),))
        want = _expected(dtype)
        bad = [(PAIRS[i][:2], z[i], want[i]) for i in np.flatnonzero(~same_bits(z, want))]
        assert not bad, f"{name} {dtype}: (x, y), got, IEEE 754's pow: {bad}"
    zdtype, shape, zb = got["broadcast"]
    assert (zdtype, shape) == ("float16", (4, 3))
    assert zb.tolist() == [[1, 1, 1], [1, 2, 3], [1, 4, 9], [1, 8, 27]]
    if name == "numpy:power":  # a callable implements what it implements: DirectML's is not refused
        assert got["directml"] is None and "takes no keyword scale" in got["scaled"] and "bias" in got["plain"]
        return
    assert "no runtime here runs DirectML" in got["directml"]
    assert "no attribute scale" in got["scaled"] and "no runtime here runs DirectML" in got["scaled"]
    assert got["plain"] is None  # DirectML's defaults are the plain function: ONNX's


def test_opcert_is_pow_rounded_once():
    t = binary.load("opcert")
    std = POW.standard("onnx")
    pairs = [(2.0, 3.0), (2.0, 0.5), (1.5, 2.5), (10.0, -2.0), (0.5, 10.0), (3.0, 0.25), (-2.0, 3.0), (-2.0, -2.0)]
    for dtype in ("float16", "float32", "float64"):
        x = np.array([p[0] for p in pairs], dtype)
        y = np.array([p[1] for p in pairs], dtype)
        z = t.call(POW, std, x, y, {})
        want = np.array([math.pow(a, b) for a, b in pairs]).astype(dtype)
        assert z.dtype == np.dtype(dtype) and z.view(f"u{z.itemsize}").tolist() == want.view(f"u{z.itemsize}").tolist()
    # bfloat16: exact powers, and sqrt(2) to nearest (0x3FB5)
    x = np.array([2.0, 4.0, 0.5, 2.0, -2.0], ml_dtypes.bfloat16)
    y = np.array([3.0, 0.5, 10.0, 0.5, -3.0], ml_dtypes.bfloat16)
    z = t.call(POW, std, x, y, {})
    assert z.dtype == x.dtype and z.view(np.uint16).tolist() == [0x4100, 0x4000, 0x3A80, 0x3FB5, 0xBE00]
    # IEEE 754's special cases, and a row of x against a column of y
    for dtype in DTYPES:
        z = t.call(POW, std, *_inputs(dtype), {})
        assert same_bits(z, _expected(dtype)).all(), (dtype, z)
    zb = t.call(
        POW, std, np.array([[1.0, 2.0, 3.0]], np.float32), np.array([[0.0], [1.0], [2.0], [3.0]], np.float32), {}
    )
    assert zb.shape == (4, 3) and zb.tolist() == [[1, 1, 1], [1, 2, 3], [1, 4, 9], [1, 8, 27]]
    # DirectML's standard is opcert's too: its defaults fill the attributes not given
    dml = POW.standard("directml")
    assert t.unsupported(POW, dml, "float16", {}) is None and t.unsupported(POW, dml, "bfloat16", {}) is not None
    z = t.call(POW, dml, np.array([3.0], np.float32), np.array([2.0], np.float32), {"scale": 2.0})
    assert z.tolist() == [36.0]  # (3 * 2 + 0)^2


def test_names_rows_and_refusals():
    assert binary.NAMES == ("opcert",) + binary_target_names()
    assert set(binary_target_names()) == {"onnxruntime", "onnx-reference", "torch", "jax", "openvino"}
    before = {m for m in threaded_modules() if m in sys.modules}
    for r in RUNTIMES:
        if r.binary is not None:
            side = resolve(r.binary)
            assert side.name == r.name and all(callable(getattr(side, m, None)) for m in ("unsupported", "call"))
    assert {m for m in threaded_modules() if m in sys.modules} == before  # no runtime imported by the rows
    with pytest.raises(UsageError, match="binary operators do not yet have a C ABI"):
        binary.load("c:./libk.so:k")
    with pytest.raises(UsageError, match="allowed: opcert, onnxruntime"):
        binary.load("nonesuch")
    with pytest.raises(UsageError, match="on the CPU only"):
        binary.load("torch:cuda")
    t = binary.load("numpy:power")
    assert t.name == "numpy:power" and t.version == np.__version__
