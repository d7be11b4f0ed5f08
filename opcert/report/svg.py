"""The plots as SVG text: in the reports (inline), the ULP error over the input range, its histogram and a
tensor check's rows; `opcert accuracy --attr-sweep --plot FILE.svg`, the max ULP of each attribute set.

A catalog's report has two plots per check and hundreds of checks; drawn with matplotlib they took
most of a gate's report time and most of its size (PNG, base64; bench/README.md,
'Figures behind choices in the code'). Here each is a few kilobytes of SVG text written in
milliseconds: the error plot keeps, of the up to 2^16 points of a check, the largest and the smallest
error of each pixel column (what the eye can see of a scatter at that width: the envelope is exact,
the points inside it are not drawn twice), drawn as one path.
"""

from __future__ import annotations

import html

import numpy as np

WIDTH, HEIGHT = 620, 250
LEFT, RIGHT, TOP, BOTTOM = 58, 12, 24, 46
LIN = 2.0**-14  # the symmetric log scale is linear within +-LIN


def _fmt(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _symlog(x):
    return np.sign(x) * np.log10(1 + np.abs(x) / LIN)


def _frame(title: str, kind: str) -> list[str]:
    return [
        f"<svg xmlns='http://www.w3.org/2000/svg' class='plot {kind}' viewBox='0 0 {WIDTH} {HEIGHT}' "
        f"width='{WIDTH}' height='{HEIGHT}' role='img' aria-label='{html.escape(title, quote=True)}' "
        "font-family='sans-serif' font-size='10'>",
        f"<text x='{WIDTH / 2}' y='14' text-anchor='middle' font-size='12'>{html.escape(title)}</text>",
    ]


def _axes(xticks, yticks, xlabel: str, ylabel: str) -> list[str]:
    """xticks, yticks: (pixel, label) pairs."""
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP
    out = [f"<rect x='{x0}' y='{y1}' width='{x1 - x0}' height='{y0 - y1}' fill='none' stroke='#999'/>"]
    for px, label in xticks:
        out.append(
            f"<line x1='{_fmt(px)}' x2='{_fmt(px)}' y1='{y1}' y2='{y0}' stroke='#ddd'/>"
            f"<text x='{_fmt(px)}' y='{y0 + 12}' text-anchor='middle'>{html.escape(label)}</text>"
        )
    for py, label in yticks:
        out.append(
            f"<line x1='{x0}' x2='{x1}' y1='{_fmt(py)}' y2='{_fmt(py)}' stroke='#ddd'/>"
            f"<text x='{x0 - 4}' y='{_fmt(py + 3)}' text-anchor='end'>{html.escape(label)}</text>"
        )
    out.append(f"<text x='{(x0 + x1) / 2}' y='{HEIGHT - 8}' text-anchor='middle'>{html.escape(xlabel)}</text>")
    out.append(
        f"<text transform='translate(12 {(y0 + y1) / 2}) rotate(-90)' text-anchor='middle'>{html.escape(ylabel)}</text>"
    )
    return out


def _nice_ticks(top: float, n: int = 5) -> list[float]:
    if not np.isfinite(top) or top <= 0:
        return [0.0]
    step = 10.0 ** np.floor(np.log10(top / n))
    for m in (1, 2, 5, 10):
        if top / (m * step) <= n:
            step *= m
            break
    return [float(v) for v in np.arange(0, top * (1 + 1e-9) + step / 2, step) if v <= top * (1 + 1e-9)]


def _symlog_ticks(top: float, lin: float, per_side: int = 5) -> list:
    """0 and a few decades on each side: none closer to 0 than 100 x the linear
    threshold (their labels would overlap the 0 label), at most `per_side` a side."""
    lo = int(np.ceil(np.log10(lin * 100)))
    hi = int(np.floor(np.log10(max(top, 10.0**lo))))
    step = max(1, -(-(hi - lo + 1) // per_side))
    decades = list(range(hi, lo - 1, -step))[::-1]
    pos = [10.0**d for d in decades]
    return [-p for p in reversed(pos)] + [0.0] + pos


def _tick_label(t: float) -> str:
    if t == 0:
        return "0"
    return f"{'-' if t < 0 else ''}1e{int(round(np.log10(abs(t))))}"


def _label(v: float) -> str:
    return f"{v:g}"


def envelope(cols: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The indices of the largest and the smallest value in each column (each once)."""
    order = np.lexsort((values, cols))
    c = cols[order]
    starts = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    ends = np.r_[starts[1:], c.size] - 1
    return np.unique(np.concatenate([order[starts], order[ends]]))


def error_svg(data, title: str, budget: float | None) -> str:
    """data: (inputs, errors) arrays, or ("chunks", [max error per 2^24 chunk])."""
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP
    out = _frame(title, "errors")
    with np.errstate(all="ignore"):
        if isinstance(data[0], str):
            err = np.asarray(data[1], dtype=float)
            xs = np.arange(err.size, dtype=float)
            ok = ~np.isnan(err)
            xs, err = xs[ok], err[ok]
            lo, hi = 0.0, float(max(len(data[1]), 1))
            xticks_v = [0.0, hi / 4, hi / 2, 3 * hi / 4]
            to_px = lambda v: x0 + (v - lo) / (hi - lo) * (x1 - x0)  # noqa: E731
            xticks = [(to_px(v), f"{int(v) * 2**24:#x}") for v in xticks_v]
            xlabel = "input bit pattern (binary32; chunks of 2^24; sign bit at 0x80000000)"
            ylabel = "max ULP error in chunk"
        else:
            x, err = np.asarray(data[0], dtype=float), np.asarray(data[1], dtype=float)
            ok = np.isfinite(x) & ~np.isnan(err)
            x, err = x[ok], err[ok]
            s = _symlog(x)
            top = float(np.max(np.abs(x))) if x.size else 1.0
            lim = float(_symlog(np.float64(max(top, 1.0))))
            to_px = lambda v: x0 + (v + lim) / (2 * lim) * (x1 - x0)  # noqa: E731
            xs = s
            xticks = [
                (to_px(float(_symlog(np.float64(t)))), _tick_label(t))
                for t in _symlog_ticks(top, LIN)
                if abs(float(_symlog(np.float64(t)))) <= lim
            ]
            xlabel = "input x (symmetric log scale; linear within +-2^-14)"
            ylabel = "ULP error"
        err = np.where(np.isinf(err), np.finfo(float).max, err)
        ytop = max(float(err.max()) if err.size else 0.0, budget or 0.0, 1e-300) * 1.08
        to_py = lambda v: y0 - v / ytop * (y0 - y1)  # noqa: E731
        yticks = [(to_py(v), _label(v)) for v in _nice_ticks(ytop / 1.08)]
        out += _axes(xticks, yticks, xlabel, ylabel)
        if xs.size:
            px, py = to_px(xs), to_py(err)
            if isinstance(data[0], str):  # a step line over the chunks
                pts = []
                for a, b, v in zip(px, to_px(xs + 1), py):
                    pts.append(f"{_fmt(a)},{_fmt(v)} {_fmt(b)},{_fmt(v)}")
                out.append(f"<polyline fill='none' stroke='#3366aa' stroke-width='1.2' points='{' '.join(pts)}'/>")
            else:
                keep = envelope(np.floor(px).astype(np.int64), py)
                d = "".join(f"M{_fmt(a)} {_fmt(b)}h0" for a, b in zip(px[keep], py[keep]))
                out.append(
                    f"<path d='{d}' stroke='#3366aa' stroke-width='2.2' stroke-linecap='round' stroke-opacity='0.7'/>"
                )
        if budget is not None and np.isfinite(budget):
            by = to_py(budget)
            out.append(
                f"<line x1='{x0}' x2='{x1}' y1='{_fmt(by)}' y2='{_fmt(by)}' stroke='#cc2222' "
                "stroke-dasharray='5 3'/>"
                f"<text x='{x1 - 4}' y='{_fmt(by - 4)}' text-anchor='end' fill='#cc2222'>"
                f"budget {html.escape(_label(budget))}</text>"
            )
    out.append("</svg>")
    return "".join(out)


def histogram_svg(hist: dict, title: str) -> str:
    """Bars of the inputs per ULP-error bin, on a log scale (log10(1 + count))."""
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP
    labels, counts = list(hist), [max(int(v), 0) for v in hist.values()]
    out = _frame(title, "histogram")
    top = np.log10(1 + max(counts + [1])) * 1.05  # headroom above the tallest bar
    to_py = lambda c: y0 - np.log10(1 + c) / top * (y0 - y1)  # noqa: E731
    decades = [10**k for k in range(0, int(np.floor(top)) + 1)]
    yticks = [(float(to_py(d)), f"{d:,}" if d < 10**4 else f"1e{len(str(d)) - 1}") for d in decades]
    n = max(len(labels), 1)
    w = (x1 - x0) / n
    xticks = [(x0 + (i + 0.5) * w, lab) for i, lab in enumerate(labels)]
    out += _axes(xticks, yticks, "ULP error", "inputs")
    for i, c in enumerate(counts):
        if c:
            top_px = float(to_py(c))
            out.append(
                f"<rect x='{_fmt(x0 + i * w + w * 0.1)}' y='{_fmt(top_px)}' width='{_fmt(w * 0.8)}' "
                f"height='{_fmt(y0 - top_px)}' fill='#4477aa'><title>{html.escape(labels[i])}: {c:,}</title></rect>"
            )
    out.append("</svg>")
    return "".join(out)


def rows_svg(cases: list, title: str, budget: float | None, worst: dict | None = None) -> str:
    """A tensor check: each case's worst element (ULP) against its row length, both on log scales
    (log10(1 + ULP) up, log10(length) across): summation error growing with the length shows as a rising
    cloud. Random rows blue, the hard cases orange, a case with wrong special values red; the check's worst
    a purple square where no case's point shows it: another layout of a row gave it (the `layout`
    property's measurement: the row alone, along another axis...) or the exhaustive pairs did."""
    x0, x1, y0, y1 = LEFT, WIDTH - RIGHT, HEIGHT - BOTTOM, TOP
    pts = []
    for c in cases:
        if c.get("max_ulp") is None or not np.isfinite(float(c["max_ulp"])) or not c.get("shape"):
            continue  # no figure to place (a crashed case; an error without a finite ULP figure)
        n = int(np.prod([c["shape"][a] for a in c.get("axes", [len(c["shape"]) - 1])]))
        pts.append((max(n, 1), float(c["max_ulp"]), c.get("label", ""), c.get("specials_wrong", 0)))
    labels = {c.get("label") for c in cases}
    other = None
    if (
        worst
        and worst.get("case") not in labels
        and worst.get("length")
        and worst.get("ulp") is not None
        and np.isfinite(float(worst["ulp"]))
    ):
        other = (int(worst["length"]), float(worst["ulp"]), str(worst["case"]))
    out = _frame(title, "rows")
    ranged = pts + ([other] if other else [])
    longest = max([p[0] for p in ranged] + [10])
    top = max([p[1] for p in ranged] + [budget or 0.0, 1.0])
    xtop, ytop = np.log10(longest) * 1.02 or 1.0, np.log10(1 + top) * 1.1
    to_px = lambda n: x0 + np.log10(n) / xtop * (x1 - x0)  # noqa: E731
    to_py = lambda u: y0 - np.log10(1 + u) / ytop * (y0 - y1)  # noqa: E731
    xticks = [(float(to_px(10**k)), f"{10**k:,}") for k in range(0, int(np.floor(xtop)) + 1)]
    yvals = [0.0, 0.5, 1.0] + [10.0**k for k in range(1, int(np.floor(ytop)) + 1)]
    yticks = [(float(to_py(v)), _label(v)) for v in yvals if np.log10(1 + v) <= ytop]
    out += _axes(xticks, yticks, "row length (log scale)", "worst ULP error (log(1 + ULP))")
    if budget is not None and np.isfinite(budget):
        py = float(to_py(budget))
        out.append(
            f"<line x1='{x0}' x2='{x1}' y1='{_fmt(py)}' y2='{_fmt(py)}' stroke='#cc3311' "
            f"stroke-dasharray='4 3'/><text x='{x1 - 2}' y='{_fmt(py - 3)}' text-anchor='end' "
            f"fill='#cc3311'>budget {_label(budget)}</text>"
        )
    if other is not None:
        n, u, label = other
        tip = html.escape(f"{label}: {u:.6g} ULP, the check's worst")
        cx, cy = float(to_px(max(n, 1))), float(to_py(u))
        out.append(
            f"<rect class='check-worst' x='{_fmt(cx - 4)}' y='{_fmt(cy - 4)}' width='8' height='8' "
            f"fill='#aa3377'><title>{tip}</title></rect>"
        )
    for n, u, label, wrong in pts:
        color = "#cc3311" if wrong else ("#4477aa" if label.startswith("random rows") else "#ee7733")
        tip = html.escape(f"{label}: {u:.6g} ULP" + (f", {wrong} special values wrong" if wrong else ""))
        out.append(
            f"<circle class='case' cx='{_fmt(float(to_px(n)))}' cy='{_fmt(float(to_py(u)))}' r='3' "
            f"fill='{color}'><title>{tip}</title></circle>"
        )
    out.append("</svg>")
    return "".join(out)


SWEEP_FLOOR = 1e-3  # the log axis's floor: 0 ULP (and any error below it) is drawn there
SLOT, PANEL_H, SWEEP_TOP, SWEEP_BOTTOM = 28, 200, 40, 84  # pixels: a grid value's slot, a panel's plot height
PASS, FAIL, SKIP = "#4477aa", "#cc3311", "#999999"


def _sweep_value(v) -> str:
    return v if isinstance(v, str) else f"{v:.2g}"


def _sweep_tip(r: dict) -> str:
    """A set's tooltip: where it comes from, its attributes, its max ULP and its status."""
    attrs = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v:.9g}" for k, v in r["attrs"].items())
    mu = r.get("max_ulp")
    if r["status"] == "skipped":
        status = f"skipped: {r.get('reason') or ''}"
    elif r["status"] != "ok":
        status = f"fail: {r['status']}: {r.get('reason') or ''}"
    else:
        status = r.get("verdict") or "-"
    text = f"{r['label']}: {attrs}: max ULP {'-' if mu is None else repr(mu)}; {status}"
    return text if len(text) <= 300 else text[:297] + "..."


def _log_ticks(lo: int, hi: int, most: int = 7) -> list[int]:
    """Decades lo..hi, at most `most` of them (every k-th, from lo)."""
    step = max(1, -(-(hi - lo + 1) // most))
    return list(range(lo, hi + 1, step))


def _decade(k: int) -> str:
    return f"{10.0**k:g}" if -3 <= k <= 4 else f"1e{k}"


def attr_sweep_svg(result, budget: float | None = None) -> str:
    """An attribute sweep (verify.accuracy.attr_sweep) as SVG text: one panel per attribute with a grid,
    its values in grid order on a categorical axis, each set's max ULP error on a log axis (0 ULP, and any
    error below SWEEP_FLOOR, at the floor). Blue: the set passed, red: it failed (a red cross at the floor:
    it failed without a finite max ULP figure, a crash or a NaN output; an up triangle at the top: an
    infinite one); a grey cross at the floor: skipped (outside the attribute's domain, or unsupported by
    the target). budget: the --max-ulp line, where one was given. Each point's <title> names the set, its
    attributes, its max ULP and its status; the defaults' and ONNX tests' own sets are in the table and the
    JSON result, not here (the grid holds the defaults' values)."""
    names = list(dict.fromkeys(r["grid"] for r in result.rows if r.get("grid")))
    panels = [(name, [r for r in result.rows if r.get("grid") == name]) for name in names]
    widths = [LEFT + RIGHT + SLOT * max(len(rows), 6) for _, rows in panels] or [LEFT + RIGHT + SLOT * 6]
    width, height = max(sum(widths), 560), SWEEP_TOP + PANEL_H + SWEEP_BOTTOM
    title = f"{result.op} {result.dtype} on {result.target}: max ULP error per attribute set"
    out = [
        f"<svg xmlns='http://www.w3.org/2000/svg' class='plot attr-sweep' viewBox='0 0 {width} {height}' "
        f"width='{width}' height='{height}' role='img' aria-label='{html.escape(title, quote=True)}' "
        "font-family='sans-serif' font-size='10'>",
        f"<text x='{width / 2}' y='14' text-anchor='middle' font-size='12'>{html.escape(title)}</text>",
    ]

    def figure(r):
        mu = r.get("max_ulp")
        return None if mu is None or np.isnan(float(mu)) else float(mu)

    finite = [f for _, rows in panels for r in rows if (f := figure(r)) is not None and np.isfinite(f)]
    b = float(budget) if budget is not None and np.isfinite(float(budget)) else None
    lo = np.log10(SWEEP_FLOOR / 2)
    hi = np.log10(max(finite + [b or 0.0, 1.0])) + 0.3  # headroom above the largest figure
    y0, y1 = SWEEP_TOP + PANEL_H, SWEEP_TOP
    to_py = lambda v: y0 - (np.log10(max(v, SWEEP_FLOOR)) - lo) / (hi - lo) * (y0 - y1)  # noqa: E731
    yticks = _log_ticks(int(np.log10(SWEEP_FLOOR)), int(np.floor(hi)))
    left = (width - sum(widths)) // 2  # centred where the legend is the wider
    for (name, rows), w in zip(panels, widths):
        x0, x1 = left + LEFT, left + w - RIGHT
        slot = (x1 - x0) / max(len(rows), 1)
        out.append(f"<g class='panel' data-attr='{html.escape(name, quote=True)}'>")
        out.append(f"<rect x='{x0}' y='{y1}' width='{x1 - x0}' height='{y0 - y1}' fill='none' stroke='#999'/>")
        out.append(
            f"<text x='{_fmt((x0 + x1) / 2)}' y='{y1 - 6}' text-anchor='middle' font-size='11'>"
            f"grid {html.escape(name)}</text>"
        )
        for k in yticks:
            py = float(to_py(10.0**k))
            out.append(
                f"<line x1='{x0}' x2='{x1}' y1='{_fmt(py)}' y2='{_fmt(py)}' stroke='#ddd'/>"
                f"<text x='{x0 - 4}' y='{_fmt(py + 3)}' text-anchor='end'>{_decade(k)}</text>"
            )
        out.append(
            f"<text transform='translate({left + 12} {(y0 + y1) / 2}) rotate(-90)' text-anchor='middle'>"
            "max ULP error (log scale)</text>"
        )
        if b is not None:
            py = float(to_py(b))
            out.append(
                f"<line x1='{x0}' x2='{x1}' y1='{_fmt(py)}' y2='{_fmt(py)}' stroke='{FAIL}' "
                f"stroke-dasharray='4 3'/><text x='{x1 - 2}' y='{_fmt(py - 3)}' text-anchor='end' "
                f"fill='{FAIL}'>budget {_label(b)}</text>"
            )
        for i, r in enumerate(rows):
            px = x0 + (i + 0.5) * slot
            label = html.escape(_sweep_value(r["attrs"][name]))
            out.append(
                f"<text transform='translate({_fmt(px + 3)} {y0 + 8}) rotate(-60)' text-anchor='end'>{label}</text>"
            )
            f, tip = figure(r), f"<title>{html.escape(_sweep_tip(r))}</title>"
            if r["status"] == "skipped":
                kind, color = "skipped", SKIP
            else:
                failed = r["status"] != "ok" or r.get("verdict") == "fail"
                kind, color = ("fail", FAIL) if failed else ("pass", PASS)
            if r["status"] == "skipped" or f is None:
                py = float(to_py(SWEEP_FLOOR))
                out.append(
                    f"<path class='set {kind}' d='M{_fmt(px - 4)} {_fmt(py - 4)}l8 8m0 -8l-8 8' stroke='{color}' "
                    f"stroke-width='1.6' fill='none'>{tip}</path>"
                )
            elif not np.isfinite(f):
                out.append(f"<path class='set {kind}' d='M{_fmt(px)} {y1}l4.5 8h-9z' fill='{color}'>{tip}</path>")
            else:
                out.append(
                    f"<circle class='set {kind}' cx='{_fmt(px)}' cy='{_fmt(float(to_py(f)))}' r='3.5' "
                    f"fill='{color}'>{tip}</circle>"
                )
        out.append(
            f"<text x='{_fmt((x0 + x1) / 2)}' y='{height - 22}' text-anchor='middle'>"
            f"{html.escape(name)} (the others at their defaults)</text>"
        )
        out.append("</g>")
        left += w
    if not panels:
        out.append(f"<text x='{width / 2}' y='{(y0 + y1) / 2}' text-anchor='middle'>no attribute grid</text>")
    out.append(
        f"<text x='{width / 2}' y='{height - 6}' text-anchor='middle' fill='#555'>"
        f"blue: pass; red: fail (a cross: no max ULP figure; a triangle: infinite); grey cross: skipped; "
        f"0 ULP drawn at {SWEEP_FLOOR:g}</text>"
    )
    out.append("</svg>")
    return "".join(out)
