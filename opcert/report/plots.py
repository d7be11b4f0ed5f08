"""Plots for the reports (matplotlib, Agg): ULP error over the input range, and its histogram."""
from __future__ import annotations

import io

import numpy as np

DPI = 72   # a report holds two plots per check, hundreds of checks for a catalog: keep each small


def _fig():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _quiet(f):
    """Symlog axes over binary64's range overflow in matplotlib's transforms (drawing, not
    only saving): harmless, and not for the gate's output."""
    import functools
    import warnings

    @functools.wraps(f)
    def run(*a, **k):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return f(*a, **k)
    return run


@_quiet
def error_plot(data, title: str, budget: float | None) -> bytes:
    """PNG bytes. data: (inputs, errors) arrays, or ("chunks", [max error per 2^24 chunk])."""
    plt = _fig()
    fig, ax = plt.subplots(figsize=(7.5, 3.2), dpi=DPI)
    if isinstance(data[0], str):
        chunk_max = np.asarray(data[1], dtype=float)
        ax.step(np.arange(chunk_max.size) * 2 ** 24, chunk_max, where="post", lw=1)
        ax.set_xlabel("input bit pattern (binary32; chunks of 2^24; sign bit at 2^31)")
        ax.set_ylabel("max ULP error in chunk")
    else:
        x, err = np.asarray(data[0]), np.asarray(data[1])
        ok = np.isfinite(x) & ~np.isnan(err)
        ax.scatter(x[ok], err[ok], s=1.5, alpha=0.5, lw=0)
        lin = 2.0 ** -14
        ax.set_xscale("symlog", linthresh=lin)
        ticks = _symlog_ticks(float(np.max(np.abs(x[ok]))) if ok.any() else 1.0, lin)
        ax.set_xticks(ticks, [_tick_label(t) for t in ticks])
        ax.set_xlabel("input x (symmetric log scale; linear within +-2^-14)")
        ax.tick_params(axis="x", labelsize=7, labelrotation=45)
        ax.set_ylabel("ULP error")
    if budget is not None:
        ax.axhline(budget, color="red", lw=0.8, ls="--", label=f"budget {budget:g}")
        ax.legend(loc="upper right", fontsize=8)
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    return _png(fig, plt)


def _symlog_ticks(top: float, lin: float, per_side: int = 5) -> list:
    """0 and a few decades on each side: none closer to 0 than 100 x the linear
    threshold (their labels would overlap the 0 label), at most `per_side` a side."""
    lo = int(np.ceil(np.log10(lin * 100)))
    hi = int(np.floor(np.log10(max(top, 10.0 ** lo))))
    step = max(1, -(-(hi - lo + 1) // per_side))
    decades = list(range(hi, lo - 1, -step))[::-1]
    pos = [10.0 ** d for d in decades]
    return [-p for p in reversed(pos)] + [0.0] + pos


def _tick_label(t: float) -> str:
    if t == 0:
        return "0"
    return f"{'-' if t < 0 else ''}1e{int(round(np.log10(abs(t))))}"


@_quiet
def histogram_plot(hist: dict, title: str) -> bytes:
    plt = _fig()
    fig, ax = plt.subplots(figsize=(7.5, 2.6), dpi=DPI)
    labels, counts = list(hist), [max(v, 0) for v in hist.values()]
    ax.bar(range(len(labels)), counts, color="#4477aa")
    ax.set_xticks(range(len(labels)), labels, fontsize=7)
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylabel("inputs")
    ax.set_xlabel("ULP error")
    ax.set_title(title, fontsize=10)
    return _png(fig, plt)


@_quiet
def attr_sweep_plot(result) -> bytes:
    """PNG bytes: max ULP over each attribute's grid (verify.attr_sweep), one panel per attribute."""
    plt = _fig()
    names = sorted({r["grid"] for r in result.rows if r["grid"]})
    fig, axes = plt.subplots(1, max(1, len(names)), figsize=(5.5 * max(1, len(names)), 3.8), squeeze=False)
    for ax, name in zip(axes[0], names):
        # one slot per grid value, labelled with it: the grid spans 40 decades on both sides of 0
        rows = [r for r in result.rows if r["grid"] == name]
        xs = list(range(len(rows)))
        labels = [v if isinstance(v, str) else f"{v:.2g}" for v in (r["attrs"][name] for r in rows)]
        floor = 1e-3
        for x, r in zip(xs, rows):
            mu = r.get("max_ulp")
            if r["status"] != "ok" or mu is None:
                ax.plot(x, floor, "x", color="0.6")            # skipped or crashed: a grey cross
            elif r.get("verdict") == "fail":
                ax.plot(x, max(mu, floor), "o", color="tab:red")
            else:
                ax.plot(x, max(mu, floor), "o", color="tab:blue")
        ax.set_yscale("log")
        ax.set_ylim(floor / 2, None)
        ax.set_xticks(xs, labels, rotation=60, fontsize=7)
        ax.set_xlabel(f"{name} (others at their defaults); x: skipped, red: failed; 0 ULP drawn at {floor:g}",
                      fontsize=8)
        ax.set_ylabel("max ULP error")
        ax.set_title(f"{result.op} {result.dtype} on {result.target}", fontsize=9)
    return _png(fig, plt, dpi=110)


def _png(fig, plt, dpi: int = DPI) -> bytes:
    import warnings
    buf = io.BytesIO()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # symlog axes over binary64's range overflow in matplotlib's inverse transform: harmless
        warnings.simplefilter("ignore", RuntimeWarning)
        fig.tight_layout()
        fig.savefig(buf, format="png", dpi=dpi, pil_kwargs={"optimize": True})
    plt.close(fig)
    return buf.getvalue()
