"""Row layout invariance (the `layout` property of Softmax, LogSoftmax and Hardmax): a row's outputs must not
depend on the tensor around it. Kernels right in the measured call and different in one other layout (a
row called alone, another position in the call, another reduction axis, another thread count) are refuted
in that layout with a replayed example; a kernel that treats every row alike is `checked` (a sample); over
every pair of 16-bit values the two layouts of the exhaustive pass give `proved` or `refuted`."""

import contextlib

import numpy as np
import pytest

from opcert.formats import get_format
from opcert.spec import get_tensor_operator
from opcert.verify.tensor.measure import measure_rows


def _layout(r):
    return next(p for p in r.properties if p["kind"] == "row_layout" and not p["name"].endswith("(pairs)"))


WORDS = {"alone": "alone: a call of one row", "other position": "reverse order", "other axis": "reduced over axes [0]"}


@pytest.mark.parametrize(
    "kernel, differing",
    [
        ("softmax_alone_sloppy", {"alone"}),
        ("softmax_other_axis_float32", {"other axis"}),
        # its measured rows are the odd ones: every layout that moves them off the tail shows it
        ("softmax_tail_rows_off", {"alone", "other position", "other axis"}),
    ],
)
def test_a_kernel_different_in_one_layout_is_refuted_there(kernel, differing):
    r = measure_rows("Softmax", f"tensor_kernels:{kernel}", "float32", samples=3000, isolation="none")
    v = _layout(r)
    assert v["status"] == "refuted", v
    fams = {f["family"]: f for f in v["layouts"]}
    assert {name for name, f in fams.items() if f.get("differ")} == differing, fams
    ex = v["counterexample"]
    assert ex["replayed"] is True and ex["got"] != ex["got_in_layout"] and ex["positions_differing"]
    assert any(WORDS[f] in ex["layout"] for f in differing), ex["layout"]


def test_the_careful_kernel_is_checked_in_every_layout_a_callable_can_be_given():
    r = measure_rows("Softmax", "tensor_kernels:softmax_careful", "float32", samples=3000, isolation="none")
    v = _layout(r)
    assert v["status"] == "checked" and v["violations"] == 0 and v["inputs_checked"] > 1000
    fams = {f["family"]: f for f in v["layouts"]}
    assert {"alone", "other position", "other axis"} <= {n for n, f in fams.items() if f.get("rows")}
    assert "threads" in fams and "no switch" in fams["threads"]["not_given"] and "threads" in v["note"]


def test_a_layout_that_is_worse_sets_the_checks_worst_error():
    """The accuracy of a check is the worst over every layout it ran: the one-row path's error, not the
    batched path's half an ULP."""
    r = measure_rows("Softmax", "tensor_kernels:softmax_alone_sloppy", "float32", samples=3000, isolation="none")
    careful = measure_rows("Softmax", "tensor_kernels:softmax_careful", "float32", samples=3000, isolation="none")
    assert careful.max_ulp <= 0.5
    assert r.max_ulp > 0.5 and "alone" in r.worst["case"] and r.worst["replayed"] is True


class _Threaded:
    """A tensor target with a thread switch whose kernel rounds one way on one thread and another on
    several: its threads(n) is what the check turns."""

    name, version = "threaded", "1"

    def __init__(self):
        self.n = 1

    def unsupported(self, *a):
        return None

    @contextlib.contextmanager
    def _on(self, n):
        before, self.n = self.n, n
        try:
            yield
        finally:
            self.n = before

    def threads(self, n):
        return self._on(n)

    def call(self, op, std, x, reduced):
        import opcert

        y = opcert.run("Softmax", x, axis=reduced[0])
        return y if self.n == 1 else np.nextafter(y, np.float32(np.inf)).astype(x.dtype)


def test_a_target_whose_bits_depend_on_its_thread_count_is_refuted(monkeypatch):
    import opcert.verify.tensor.layouts as rl
    from opcert.targets import tensor

    monkeypatch.setattr(tensor, "load", lambda name: _Threaded())
    monkeypatch.setattr(rl, "host_cores", lambda: 2)  # a one-core runner still turns the switch
    v = _layout(measure_rows("Softmax", "threaded", "float32", samples=1000, isolation="none"))
    fams = {f["family"]: f for f in v["layouts"]}
    assert v["status"] == "refuted" and fams["threads"]["differ"] >= 1
    assert v["counterexample"]["layout"] == "the same call on 2 thread(s)" and v["counterexample"]["replayed"]


def test_onnx_runtime_is_run_on_one_thread_and_on_every_core():
    r = measure_rows("Softmax", "onnxruntime", "float32", samples=1000)
    v = _layout(r)
    fams = {f["family"]: f for f in v["layouts"]}
    from opcert.targets.layouts import cores

    if cores() < 2:
        assert "one core" in fams["threads"]["not_given"]
    else:
        assert fams["threads"]["rows"] > 0
    assert v["status"] in ("checked", "refuted") and fams["other axis"]["rows"] > 0


def test_every_pair_in_two_layouts_is_proved_or_refuted():
    """The exhaustive pass's second layout (the rows one place along, transposed, axis 0) over every pair
    of 120 float16 values: a kernel different on that path is refuted with the pair, replayed; opcert's
    own is proved."""
    from opcert.impl.tensor_run import run
    from opcert.verify.tensor.pairs import PairSweep, _all_values

    op, _ = get_tensor_operator("Softmax")
    fmt = get_format("float16")
    values = _all_values(fmt)[np.linspace(0, 65535, 120).astype(int)]

    def careful(X):
        return run(op, X, axis=1)

    def transposed_off(X):  # the second layout: the outputs of rows whose first value is above 1 moved
        y = run(op, X, axis=1)
        return np.where(X[:, :1].astype(np.float64) > 1, np.nextafter(y, np.float16(np.inf)), y).astype(X.dtype)

    for second, want in ((careful, "proved"), (transposed_off, "refuted")):
        sweep = PairSweep(op, fmt, careful, 0.5, values=values, layout=(second, "a test layout"))
        sweep.run()
        v = next(d for d in sweep.verdicts() if d["name"] == "layout (pairs)")
        assert v["status"] == want and v["inputs_checked"] == values.size**2, v
        if want == "refuted":
            ex = v["counterexample"]
            assert ex["row"][0] > 1 and ex["got"] != ex["got_in_layout"] and ex["replayed"] is True
            assert ex["layout"] == "a test layout"


def test_a_gate_fails_a_kernel_that_breaks_layout_invariance_and_says_where(cli, tmp_path):
    cfg = tmp_path / "g.toml"
    cfg.write_text(
        '[[check]]\nop = "Softmax"\ndtypes = ["float32"]\n'
        'target = "tensor_kernels:softmax_other_axis_float32"\nsamples = 2000\nmax_ulp = 8\n'
        'proofs = "all"\naccept_sampled_evidence = true\n'
    )
    code, out, err = cli("gate", "--config", cfg, "--json", tmp_path / "g.json", "--report", tmp_path / "rep")
    assert code == 1, out + err
    md = (tmp_path / "rep" / "report.md").read_text()
    line = next(x for x in md.splitlines() if x.startswith("- proof `layout`"))
    # the report says what each family of layouts covered, and what could not be given, with why
    assert "**refuted**" in line and "differ; other axis: " in line and "threads: not given (a callable's" in line
    import json

    (check,) = json.loads((tmp_path / "g.json").read_text())["checks"]
    why = " ".join(check["reasons"])
    assert "layout" in why and "reduced over axes [0]" in why, why
    assert [p["status"] for p in check["proofs"] if p["name"] == "layout"] == ["refuted"]


def test_a_target_that_fails_only_in_the_second_layout_is_refuted_there_and_the_pairs_go_on():
    """The measured layout ran, so its accuracy figures stand; the target raising in the other layout breaks
    the property on the rows it was given, with the error, replayed (it raised again)."""
    from opcert.errors import TargetFailure
    from opcert.impl.tensor_run import run
    from opcert.verify.tensor.pairs import PairSweep, _all_values

    op, _ = get_tensor_operator("Softmax")
    fmt = get_format("float16")
    values = _all_values(fmt)[np.linspace(0, 65535, 80).astype(int)]

    def careful(X):
        return run(op, X, axis=1)

    def raises_on_big(X):
        if np.nanmax(X[:, 1].astype(np.float64)) > 1000:  # the block of the largest values of b
            raise TargetFailure("ValueError: no kernel for this block (input float16 (2, 6401), axes [0])")
        return careful(X)

    sweep = PairSweep(op, fmt, careful, 0.5, values=values, layout=(raises_on_big, "a test layout"))
    sweep.run()
    assert sweep.pairs == values.size**2 and sweep.max_err <= 0.5  # the measured layout: every pair
    v = next(d for d in sweep.verdicts() if d["name"] == "layout (pairs)")
    assert v["status"] == "refuted" and 0 < v["violations"] < v["inputs_checked"], v
    ex = v["counterexample"]
    assert "no kernel for this block" in ex["error"] and ex["replayed"] is True and ex["got_in_layout"] is None
    from opcert.gating.run import describe_counterexample

    assert "a test layout: the target failed: ValueError" in describe_counterexample(ex)
