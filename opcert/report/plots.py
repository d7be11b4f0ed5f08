"""The attribute sweep's plot (matplotlib, Agg; `opcert accuracy --attr-sweep --plot PNG`). The gate's reports
draw their plots as inline SVG (report.svg)."""

from __future__ import annotations

import functools
import io
import warnings

import numpy as np

DPI = 72  # a report holds two plots per check, hundreds of checks for a catalog: keep each small


def _fig():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _quiet(f):
    """Symlog axes over binary64's range overflow in matplotlib's transforms (drawing, not
    only saving): harmless, and not for the gate's output."""

    @functools.wraps(f)
    def run(*a, **k):
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore", RuntimeWarning)
            return f(*a, **k)

    return run


@_quiet
def attr_sweep_plot(result) -> bytes:
    """PNG bytes: max ULP over each attribute's grid (verify.accuracy.attr_sweep), one panel per attribute."""
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
                ax.plot(x, floor, "x", color="0.6")  # skipped or crashed: a grey cross
            elif r.get("verdict") == "fail":
                ax.plot(x, max(mu, floor), "o", color="tab:red")
            else:
                ax.plot(x, max(mu, floor), "o", color="tab:blue")
        ax.set_yscale("log")
        ax.set_ylim(floor / 2, None)
        ax.set_xticks(xs, labels, rotation=60, fontsize=7)
        ax.set_xlabel(
            f"{name} (others at their defaults); x: skipped, red: failed; 0 ULP drawn at {floor:g}", fontsize=8
        )
        ax.set_ylabel("max ULP error")
        ax.set_title(f"{result.op} {result.dtype} on {result.target}", fontsize=9)
    return _png(fig, plt, dpi=110)


def _png(fig, plt, dpi: int = DPI) -> bytes:
    buf = io.BytesIO()
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        # symlog axes over binary64's range overflow in matplotlib's inverse transform: harmless
        warnings.simplefilter("ignore", RuntimeWarning)
        fig.tight_layout()
        fig.savefig(buf, format="png", dpi=dpi, pil_kwargs={"optimize": True})
    plt.close(fig)
    return buf.getvalue()
