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
    x = np.arange(2 ** 16, dtype=np.uint16).view(np.float16).astype(np.float64)
    rng = np.random.default_rng(0)
    err = rng.uniform(0, 0.5, x.size)
    err[12345] = 3.0                                       # the worst, far above the rest
    svg = error_svg((x, err), "Tanh float16 t: ULP error", 1.0)
    root = ET.fromstring(svg)
    assert root.tag == NS + "svg"
    assert len(svg) < 40_000, len(svg)                     # 65,536 points, a few kilobytes
    path = next(e for e in root.iter(NS + "path"))
    ys = [float(seg.split()[1].rstrip("h0")) for seg in path.get("d").split("M")[1:]]
    top_px = min(ys)                                       # SVG's y grows downwards: the worst point is the topmost
    frame = next(e for e in root.iter(NS + "rect"))
    assert top_px < float(frame.get("y")) + 0.15 * float(frame.get("height"))
    assert "budget 1" in svg


def test_chunk_plot_and_histogram():
    svg = error_svg(("chunks", [0.1] * 255 + [float("nan")]), "sweep", 0.5)
    ET.fromstring(svg)
    h = histogram_svg({"0": 10, "(0, 0.5]": 0, "(0.5, 1]": 3}, "hist")
    root = ET.fromstring(h)
    bars = [e for e in root.iter(NS + "rect")][1:]         # the frame, then one bar per non-empty bin
    assert len(bars) == 2
