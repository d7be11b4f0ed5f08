"""The report's inline SVG plots: well-formed, small, and the error plot keeps what the eye sees (the
largest and smallest error of every pixel column, checked against a plain loop)."""

import xml.etree.ElementTree as ET

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from opcert.report.svg import envelope, error_svg, histogram_svg

NS = "{http://www.w3.org/2000/svg}"


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 30), st.floats(-1e6, 1e6, allow_nan=False)), min_size=1, max_size=200))
def test_envelope_keeps_each_columns_extremes(points):
    cols = np.array([c for c, _ in points], dtype=np.int64)
    vals = np.array([v for _, v in points])
    keep = envelope(cols, vals)
    assert len(set(keep.tolist())) == keep.size
    for c in set(cols.tolist()):
        mine = [i for i in range(len(points)) if cols[i] == c]
        kept = [i for i in keep if cols[i] == c]
        assert 1 <= len(kept) <= 2
        assert max(vals[i] for i in kept) == max(vals[i] for i in mine)
        assert min(vals[i] for i in kept) == min(vals[i] for i in mine)


def test_error_plot_is_small_well_formed_and_shows_the_worst_point():
    x = np.arange(2**16, dtype=np.uint16).view(np.float16).astype(np.float64)
    rng = np.random.default_rng(0)
    err = rng.uniform(0, 0.5, x.size)
    err[12345] = 3.0  # the worst, far above the rest
    svg = error_svg((x, err), "Tanh float16 t: ULP error", 1.0)
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    assert len(svg) < 40_000, len(svg)  # 65,536 points, a few kilobytes
    path = next(e for e in root.iter(NS + "path"))
    ys = [float(seg.split()[1].rstrip("h0")) for seg in path.get("d").split("M")[1:]]
    top_px = min(ys)  # SVG's y grows downwards: the worst point is the topmost
    frame = next(e for e in root.iter(NS + "rect"))
    assert top_px < float(frame.get("y")) + 0.15 * float(frame.get("height"))
    assert "budget 1" in svg


def test_chunk_plot_and_histogram():
    svg = error_svg(("chunks", [0.1] * 255 + [float("nan")]), "sweep", 0.5)
    ET.fromstring(svg)
    h = histogram_svg({"0": 10, "(0, 0.5]": 0, "(0.5, 1]": 3}, "hist")
    root = ET.fromstring(h)
    bars = [e for e in root.iter(NS + "rect")][1:]  # the frame, then one bar per non-empty bin
    assert len(bars) == 2


def test_rows_plot_places_each_case_at_its_length_and_error():
    """A tensor check's plot: one point per case at (log10 row length, log10(1 + ULP)), the worst case
    highest, a case with wrong special values red, the budget drawn; well-formed and small."""
    from opcert.report.svg import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, rows_svg

    cases = [
        {"label": "random rows of 1", "shape": [10, 1], "axes": [1], "max_ulp": 0.0},
        {"label": "random rows of 100", "shape": [3, 100], "axes": [1], "max_ulp": 3.0},
        {"label": "a long row", "shape": [1, 100000], "axes": [1], "max_ulp": 181.0},
        {"label": "NaN rows", "shape": [2, 5, 4], "axes": [1, 2], "max_ulp": 0.5, "specials_wrong": 2},
        {"label": "crashed", "shape": [2, 3], "axes": [1], "max_ulp": None},
    ]
    svg = rows_svg(cases, "t", 1.0)
    root = ET.fromstring(svg)
    pts = root.findall(f"{NS}circle")
    assert len(pts) == 4 and len(svg) < 5000
    x = [float(p.get("cx")) for p in pts]
    y = [float(p.get("cy")) for p in pts]
    x0, x1, y0 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM
    assert x[0] == x0 and x[0] < x[3] < x[1] < x[2]  # lengths 1 < 20 (5 x 4) < 100 < 100,000
    xtop = np.log10(100000) * 1.02
    assert abs(x[2] - (x0 + np.log10(100000) / xtop * (x1 - x0))) < 0.1
    assert y[0] == y0 and min(y) == y[2] and y[2] >= TOP  # the worst case is the highest point
    assert pts[3].get("fill") == "#cc3311" and "2 special values wrong" in pts[3].find(f"{NS}title").text
    assert "budget 1" in svg


def test_the_rows_plot_shows_a_worst_that_no_case_shows():
    """The check's worst came from the `layout` measurement (a row of 4 run alone: 64.9 ULP), not from a
    case: a purple square at that length and error, above every case, the axis stretched to hold it, its
    tooltip naming the layout; the same for the exhaustive pairs' worst (rows of 2); a worst that is a
    case's own is that case's point, not drawn twice."""
    from opcert.report.svg import BOTTOM, HEIGHT, LEFT, RIGHT, TOP, WIDTH, rows_svg

    cases = [
        {"label": "random rows of 4", "shape": [20, 4], "axes": [1], "max_ulp": 0.5},
        {"label": "a long row", "shape": [1, 4096], "axes": [1], "max_ulp": 2.0},
    ]
    x0, x1, y0 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM
    xtop = np.log10(4096) * 1.02
    for worst, n, u, words in [
        (
            {"case": "random rows of 4; row 3 alone: a call of one row of 4", "length": 4, "position": 1, "ulp": 64.9},
            4,
            64.9,
            "alone",
        ),
        ({"case": "every pair", "length": 2, "position": 0, "ulp": 3.5}, 2, 3.5, "every pair"),
    ]:
        root = ET.fromstring(rows_svg(cases, "t", 1.0, worst))
        sq = [r for r in root.iter(f"{NS}rect") if r.get("class") == "check-worst"]
        assert len(sq) == 1 and sq[0].get("fill") == "#aa3377" and words in sq[0].find(f"{NS}title").text
        cx, cy = float(sq[0].get("x")) + 4, float(sq[0].get("y")) + 4
        ytop = np.log10(1 + max(u, 2.0)) * 1.1
        assert abs(cx - (x0 + np.log10(n) / xtop * (x1 - x0))) < 0.1
        assert abs(cy - (y0 - np.log10(1 + u) / ytop * (y0 - TOP))) < 0.1
        assert cy < min(float(c.get("cy")) for c in root.findall(f"{NS}circle"))
    own = {"case": "a long row", "length": 4096, "position": 7, "ulp": 2.0}
    assert "check-worst" not in rows_svg(cases, "t", 1.0, own)
    endless = rows_svg(cases, "t", 1.0, {**own, "case": "every pair", "ulp": float("inf")})
    assert "check-worst" not in endless and "nan" not in endless.lower()  # not drawn: no axis to hold it
    endless = rows_svg(cases + [{"label": "x", "shape": [1, 3], "axes": [1], "max_ulp": float("inf")}], "t", 1.0)
    assert len(ET.fromstring(endless).findall(f"{NS}circle")) == 2 and "nan" not in endless.lower()


def test_a_tensor_checks_report_has_the_rows_plot():
    from opcert.report.render import _images

    check = {
        "op": "Softmax",
        "dtype": "float16",
        "target": "t",
        "policy": {"max_ulp": 1.0},
        "accuracy": {"cases": [{"label": "random rows of 3", "shape": [4, 3], "axes": [1], "max_ulp": 0.5}]},
    }
    drawn = _images(check, 0, {})
    assert list(drawn) == ["rows"] and "worst ULP error per case" in drawn["rows"]


def test_the_attribute_sweep_plot_has_a_panel_per_grid_and_a_point_per_set():
    """`--plot FILE.svg`: a panel per grid attribute (a choice's names as its labels), every set of a grid a
    point in grid order with its tooltip; a failed set red, a skipped one a grey cross, a set that failed
    without a figure a red cross, an infinite figure a triangle, 0 ULP at the floor; the sets off the grids
    (defaults, ONNX tests) are not drawn, text is escaped, the budget drawn where given."""
    from types import SimpleNamespace

    from opcert.report.svg import attr_sweep_svg

    base = {"alpha": 1.0, "mode": "a"}

    def row(grid, value, **k):
        return {"label": f"grid {grid}", "grid": grid, "attrs": {**base, grid: value}, "status": "ok", **k}

    rows = [
        {"label": "default (onnx)", "grid": None, "attrs": base, "status": "ok", "max_ulp": 0.5, "verdict": "pass"},
        row("alpha", -1.0, status="skipped", reason="alpha must be > 0 <here>"),
        row("alpha", 0.5, max_ulp=0.0, verdict="pass"),
        row("alpha", 1.0, max_ulp=0.5, verdict="pass"),
        row("alpha", 2.5, max_ulp=4096.0, verdict="fail"),
        row("alpha", 1e4, max_ulp=float("inf"), verdict="fail"),
        row("alpha", 3.4e38, status="crashed", reason="worker lost", max_ulp=None, verdict="fail"),
        row("mode", "a", max_ulp=0.25, verdict="pass"),
        row("mode", "b&c", max_ulp=float("nan"), verdict="fail"),
    ]
    res = SimpleNamespace(op="Op", dtype="float16", target="t<1>", rows=rows)
    svg = attr_sweep_svg(res, 1.0)
    root = ET.fromstring(svg)
    assert root.get("class") == "plot attr-sweep" and len(svg) < 20_000
    panels = root.findall(f"{NS}g[@class='panel']")
    assert [p.get("data-attr") for p in panels] == ["alpha", "mode"]
    points = {p.get("data-attr"): [e for e in p.iter() if (e.get("class") or "").startswith("set ")] for p in panels}
    kinds = ["set skipped", "set pass", "set pass", "set fail", "set fail", "set fail"]
    assert [e.get("class") for e in points["alpha"]] == kinds
    assert [e.tag.removeprefix(NS) for e in points["alpha"]] == ["path", "circle", "circle", "circle", "path", "path"]
    tips = [e.find(NS + "title").text for e in points["alpha"]]
    assert tips[0] == "grid alpha: alpha=-1, mode='a': max ULP -; skipped: alpha must be > 0 <here>"
    assert tips[3] == "grid alpha: alpha=2.5, mode='a': max ULP 4096.0; fail"
    assert tips[5] == "grid alpha: alpha=3.4e+38, mode='a': max ULP -; fail: crashed: worker lost"
    cy = [float(e.get("cy")) for e in points["alpha"][1:4]]
    assert cy[0] > cy[1] > cy[2]  # 0 at the floor, then 0.5, then 4096 highest
    labels = [t.text for t in panels[1].iter(NS + "text")]
    assert "a" in labels and "b&c" in labels and "budget 1" in svg
    assert [e.get("class") for e in points["mode"]] == ["set pass", "set fail"]  # NaN: a red cross
    assert points["mode"][1].tag == NS + "path"
    assert not any("default (onnx)" in (t.text or "") for t in root.iter(NS + "title"))
