"""Markdown and self-contained HTML reports of a gate result (JSON schema opcert.gate/1).

Layout: a summary matrix (operator x dtype x target: max ULP and verdicts), then
a section per check with its plot of ULP error over the inputs, the histogram,
the worst case, the special-value mismatches, the proofs with their
counterexamples, and the command that reproduces it; provenance at the end.
"""

from __future__ import annotations

import decimal
import html
import json
import math
import os
import re
from pathlib import Path

from opcert.files import write_bytes_atomic, write_text_atomic
from opcert.report.svg import error_svg, histogram_svg, rows_svg
from opcert.report.text import LONG_LIMIT, clip, md, md_code
from opcert.verify.result import verdict_text

# Text from a gate result may come from a target (its errors, notes, name, version): every text is clipped
# (report.text.clip) once where it is taken from the result, and escaped for the format it is written in
# (md, md_code: Markdown; html.escape: HTML), never written as it is.

MARK = {"pass": "PASS", "fail": "FAIL", "skipped": "skipped"}


def short_ulp(v: float) -> str:
    """An error figure to 4 significant digits, rounded up: 0.5000000000000001 shows as 0.5001."""
    if not math.isfinite(v):
        return str(v)
    d = decimal.Decimal(v)
    if d == 0:
        return "0"
    q = decimal.Decimal(1).scaleb(d.adjusted() - 3)
    up = d.quantize(q, rounding=decimal.ROUND_CEILING)
    return f"{up:.3e}" if up.adjusted() >= 6 else f"{up.normalize():f}"


def _cell(c) -> str:
    a = c.get("accuracy") or {}
    if c["status"] == "skipped":
        return "skipped"
    mu = a.get("max_ulp")
    proofs = c.get("proofs") or []
    pv = ""
    if proofs:
        n_ok = sum(p["ok"] for p in proofs)
        pv = f"; proofs {n_ok}/{len(proofs)}"
        sampled = sum(p["status"] == "checked" for p in proofs)
        if sampled and (c.get("identity") or {}).get("accept_sampled_evidence"):
            pv += f", {sampled} checked on samples (accepted)"
    return f"{MARK[c['status']]} {short_ulp(mu)} ULP{pv}" if mu is not None else f"{MARK[c['status']]}{pv}"


def target_group(target: str) -> str:
    """The summary's column: a module:function target is grouped by its module's last name."""
    return target.split(":")[0].rsplit(".", 1)[-1] if ":" in target else target


def _matrix(checks):
    ops = list(dict.fromkeys(c["op"] for c in checks))
    cols = list(dict.fromkeys((target_group(c["target"]), c["dtype"]) for c in checks))
    rows = []
    for op in ops:
        row = []
        for t, d in cols:
            cs = [c for c in checks if c["op"] == op and target_group(c["target"]) == t and c["dtype"] == d]
            row.append("<br>".join(_cell(c) for c in cs) if cs else "")
        rows.append((op, row))
    return cols, rows


def _facts(c) -> list[tuple[str | None, str]]:
    """What both report formats say of a check, as (bold label or None, text)."""
    a = c.get("accuracy") or {}
    attrs = clip(", ".join(f"{k}={v['exact']}" for k, v in (a.get("attrs") or {}).items()) or "-")
    out = [
        (None, f"attributes: {attrs}"),
        (
            None,
            f"mode: {c['mode']}, {a.get('inputs_checked', 0):,} inputs; policy: max ULP "
            f"{c['policy']['max_ulp']!r}, signed zero {c['policy']['signed_zero']}, "
            f"subnormals {c['policy']['subnormals']}",
        ),
    ]
    out += [("reason" if c["status"] == "fail" else "skipped", clip(r)) for r in c["reasons"]]
    out += _enforcement(c.get("enforcement"))
    out += _against(c.get("against"))
    if a.get("max_ulp") is not None:
        out.append(
            (
                "max ULP error",
                clip(
                    f"{a['max_ulp']!r} at x = {a['worst_input']!r} ({a['worst_input_bits']}): "
                    f"output {a['worst_output']!r} ({a['worst_output_bits']}), correctly "
                    f"rounded {a['worst_reference']!r} ({a['worst_reference_bits']}), exact "
                    f"{a.get('worst_exact') or '-'}",
                    LONG_LIMIT,
                ),
            )
        )
        out.append(
            (
                None,
                f"correctly rounded: {a['correctly_rounded']:,} / {a['inputs_checked']:,}; NaN mismatches "
                f"{a['nan_mismatches']}, infinity {a['inf_mismatches']}, signed zero "
                f"{a['signed_zero_mismatches']}, flushed subnormals {a['subnormal_flushes']}",
            )
        )
    # what the target did besides computing (the FP mode it set, a write into its input), and the like
    out += [("note", clip(n)) for n in a.get("notes") or []]
    return out


def _against(cmp: dict | None) -> list[tuple[str, str]]:
    """The `against` key's comparison: the two paths' bits on the same inputs (path_matrix.compare_paths)."""
    if not cmp:
        return []
    a, b = cmp["paths"]
    if cmp.get("missing"):
        return [(f"against {b}", clip("not compared: " + "; ".join(f"{k}: {v}" for k, v in cmp["missing"].items())))]
    text = f"{cmp['differ']:,} of {cmp['inputs']:,} outputs differ from {a}'s ({cmp['scope']})"
    if cmp["differ"]:
        text += f", at most {cmp['max_apart']:,} representable value{'s' if cmp['max_apart'] != 1 else ''} apart"
        if cmp.get("nan_differ"):
            text += f", {cmp['nan_differ']:,} a NaN against a number"
        ex = cmp.get("example")
        if ex:
            oa, ob = ex["outputs"]
            text += (
                f"; x = {ex['x']['value']!r} ({ex['x']['bits']}): {a} {oa['output']['bits']}, {b} "
                f"{ob['output']['bits']}, correctly rounded {ex['correctly_rounded']['bits']}"
                + (" (replayed)" if ex.get("replayed") else " (not reproduced when run again)")
            )
    return [(f"against {b}", clip(text, LONG_LIMIT))]


def _enforcement(e: dict | None) -> list[tuple[str, str]]:
    """Which declared properties the check enforced, reported only, and waived (each waived one as its verdict
    and "waived: REASON": measured, shown, never counted as established)."""
    if not e:
        return []

    def names(entries):
        return ", ".join(f"{x['name']} ({verdict_text(x)})" for x in entries) or "none"

    out = [("properties enforced", clip(names(e.get("enforced") or [])))]
    if e.get("reported"):
        out.append(("properties reported only", clip(names(e["reported"]))))
    out += [
        ("property " + clip(w["name"], 200), clip(f"{w['status']} (waived: {w['reason']})"))
        for w in e.get("waived") or []
    ]
    return out


def _slug(c, i) -> str:
    """A file name and HTML id: letters, digits, '.', '_' and '-' only (a target's path may hold anything)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", clip(f"check-{i:03d}-{c['op']}-{c['dtype']}-{c['target']}", 120))


def _images(c, i, plots) -> dict:
    """The check's plots, as SVG text (report.svg): kind -> svg."""
    a = c.get("accuracy") or {}
    out = {}
    if plots.get(i) is not None and a:
        out["errors"] = error_svg(plots[i], f"{c['op']} {c['dtype']} {c['target']}: ULP error", c["policy"]["max_ulp"])
    if a.get("histogram"):
        out["histogram"] = histogram_svg(a["histogram"], "ULP error histogram")
    if a.get("cases"):  # a tensor check: worst error per case against the row length
        out["rows"] = rows_svg(
            a["cases"],
            f"{c['op']} {c['dtype']} {c['target']}: worst ULP error per case",
            c["policy"]["max_ulp"],
            a.get("worst"),
        )
    return out


def images(gate: dict, plots=None, progress=None) -> dict:
    """Every check's plots (index -> kind -> svg), drawn once for all the reports; progress() after each check."""
    plots = plots or {}
    out = {}
    for i, c in enumerate(gate["checks"]):
        if c.get("accuracy"):
            out[i] = _images(c, i, plots)
        if progress:
            progress()
    return out


def provenance_rows(gate: dict) -> list:
    """What produced the report: opcert (version, commit), the command, the machine, the date,
    and every target's version as its checks recorded it."""
    prov = dict(gate.get("provenance") or {})
    rows = [
        ("opcert", f"{prov.get('opcert')} (commit {prov.get('opcert_commit') or 'unknown: not a git checkout'})"),
        ("command", gate.get("command")),
        ("date", prov.get("date")),
        ("cpu", prov.get("cpu")),
        ("SIMD (NumPy's dispatch)", prov.get("simd", "not recorded")),
        ("the reference's array functions", prov.get("reference_functions", "not recorded")),
        ("platform", prov.get("platform")),
        ("python", prov.get("python")),
        ("numpy", prov.get("numpy")),
        ("mpmath", prov.get("mpmath")),
    ]
    targets = {}
    for c in gate.get("checks", []):
        info = (c.get("accuracy") or {}).get("target_info") or {}
        if info.get("name") and info["name"] not in targets:
            targets[info["name"]] = f"{info.get('kind')} {info.get('version')}"
    rows += [(f"target {k}", v) for k, v in sorted(targets.items())]
    return rows


def _result_line(gate: dict) -> str:
    return (
        f"Result: **{'PASS' if gate['ok'] else 'FAIL'}**: {gate['counts']['pass']} passed, "
        f"{gate['counts']['fail']} failed, {gate['counts']['skipped']} skipped; configuration: "
        f"{md(gate['config'])}; {gate['elapsed_s']:.1f} s."
    )


def _matrix_lines(gate: dict) -> list[str]:
    cols, rows = _matrix(gate["checks"])
    L = ["| operator | " + " | ".join(md(f"{d} {t}", 200) for t, d in cols) + " |", "|---|" + "---|" * len(cols)]
    return L + [f"| {md(op, 200)} | " + " | ".join(row) + " |" for op, row in rows]


def failing_lines(gate: dict) -> list[str]:
    """Each failing check with its reasons and reproduce command (Markdown), or nothing."""
    failing = [c for c in gate["checks"] if c["status"] == "fail"]
    if not failing:
        return []
    lines = ["", "### Failing checks", ""]
    for c in failing:
        lines.append(f"- **{md(c['name'], 200)}**: " + "; ".join(md(r) for r in c["reasons"]))
        lines.append(f"  reproduce: {md_code(c['command'])}")
    return lines


def _head(gate: dict, title: str, *intro: str) -> list[str]:
    """A Markdown page's start: title, result, reproduce command, intro paragraphs, provenance, summary table."""
    L = [f"# {title}", "", _result_line(gate), "", f"Reproduce: {md_code(gate['command'])}", ""]
    for paragraph in intro:
        L += [paragraph, ""]
    L += ["## Provenance", ""] + [f"- {md(k, 200)}: {md(v)}" for k, v in provenance_rows(gate)] + ["", "## Summary", ""]
    return L + _matrix_lines(gate)


def summary_page(gate: dict) -> str:
    """A gate result in a page small enough to commit (reports/README.md): the result, the reproduce
    command, the provenance, the summary table and the failing checks; the full report (plots, every
    check's facts and proofs) is `report.html`, which this page does not replace."""
    L = _head(
        gate,
        "opcert gate: summary",
        "A summary: the full report (plots, every check's facts, proofs and counterexamples) is the "
        "`report.html` the gate wrote beside its result; `opcert report RESULT.json --out DIR` writes it "
        "again from the JSON result.",
    )
    return "\n".join(L + failing_lines(gate)) + "\n"


def summary_markdown(gate: dict) -> str:
    """The result, the reproduce command and the summary table (a CI job summary: report.ci)."""
    return "\n".join(
        ["## opcert gate", "", _result_line(gate), "", f"Reproduce: {md_code(gate['command'])}", ""]
        + _matrix_lines(gate)
    )


def markdown(gate: dict, images_dir: str | None = None, plots=None, drawn: dict | None = None) -> str:
    """drawn: images(gate, plots), where the caller has them already."""
    drawn = images(gate, plots) if drawn is None and images_dir else drawn or {}
    L = _head(gate, "opcert gate report")
    L.append("")
    for i, c in enumerate(gate["checks"]):
        a = c.get("accuracy") or {}
        L += [f"## {md(c['name'], 200)}: {MARK[c['status']]}", ""]
        L += [f"- **{label}**: {md(text, None)}" if label else f"- {md(text, None)}" for label, text in _facts(c)]
        if images_dir and a:
            for kind, svg in drawn.get(i, {}).items():
                name = f"{_slug(c, i)}-{kind}.svg"
                write_bytes_atomic(str(Path(images_dir, name)), svg.encode())
                L.append(f"\n![{kind}]({os.path.basename(images_dir)}/{name})")
        for p in c.get("proofs") or []:
            line = (
                f"- proof {md_code(p['name'], 200)}: **{md(p['status'], 200)}** ({md(_method(p), None)}, "
                f"{p.get('elapsed_s', 0.0):.2f} s)"
            )
            if p.get("counterexample"):
                line += f"; counterexample: {md_code(p['counterexample'])}"
            L.append(line)
        if c.get("proof_note"):
            L.append(f"- proofs: {md(c['proof_note'])}")
        L += ["", f"Reproduce: {md_code(c['command'])}", ""]
    return "\n".join(L)


def _method(p: dict) -> str:
    """How a verdict was reached and, for the layout property, what each family of layouts covered (and
    which could not be given, with why): a verdict says which code paths it covered."""
    text = clip(p.get("method", "-"), LONG_LIMIT)
    parts = []
    for f in p.get("layouts") or []:
        if "not_given" in f:
            parts.append(f"{f['family']}: not given ({clip(f['not_given'])})")
        elif "rows" in f:
            parts.append(f"{f['family']}: {f['rows']:,} rows, {f.get('differ', 0):,} differ")
        elif "evaluated" in f:
            parts.append(
                f"{f['family']}: {f['evaluated']:,} outputs, {f.get('differ', 0):,} differ"
                + ("" if f.get("complete", True) else " (a sample)")
            )
    return clip(text + ("; " + "; ".join(parts) if parts else ""), LONG_LIMIT)


def html_page(gate: dict, plots=None, drawn: dict | None = None) -> str:
    drawn = images(gate, plots) if drawn is None else drawn
    e = html.escape
    cols, rows = _matrix(gate["checks"])
    css = (
        "body{font-family:system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:4px 8px;font-size:13px}th{background:#f3f3f3}"
        ".PASS{color:#176f2c}.FAIL{color:#b00020;font-weight:bold}.skipped{color:#777}"
        "code{background:#f6f6f6;padding:1px 4px}section{border-top:1px solid #ddd;margin-top:1.5em}"
        ".wide{overflow-x:auto;max-width:100%}svg.plot{max-width:100%;height:auto;display:block}"
    )
    H = [
        f"<!doctype html><html><head><meta charset='utf-8'><title>opcert gate report</title>"
        f"<style>{css}</style></head><body>",
        f"<h1>opcert gate report</h1><p id='verdict' class='{'PASS' if gate['ok'] else 'FAIL'}'>"
        f"Result: {'PASS' if gate['ok'] else 'FAIL'}: {gate['counts']['pass']} passed, "
        f"{gate['counts']['fail']} failed, {gate['counts']['skipped']} skipped "
        f"({e(clip(gate['config']))}; {gate['elapsed_s']:.1f} s)</p>",
        f"<p>Reproduce: <code>{e(clip(gate['command']))}</code></p>",
        "<h2>Provenance</h2><ul id='provenance'>"
        + "".join(f"<li>{e(clip(k, 200))}: {e(clip(v))}</li>" for k, v in provenance_rows(gate))
        + "</ul>",
        "<h2>Summary</h2><div class='wide'><table id='summary'><tr><th>operator</th>"
        + "".join(f"<th>{e(clip(d, 200))}<br>{e(clip(t, 200))}</th>" for t, d in cols)
        + "</tr>",
    ]
    for op, row in rows:
        H.append(
            f"<tr><th>{e(clip(op, 200))}</th>"
            + "".join(f"<td class='{v.split(' ')[0] if v else ''}'>{v}</td>" for v in row)
            + "</tr>"
        )
    H.append("</table></div>")
    for i, c in enumerate(gate["checks"]):
        a = c.get("accuracy") or {}
        H.append(
            f"<section class='check' id='{_slug(c, i)}'><h2 class='{MARK[c['status']]}'>"
            f"{e(clip(c['name'], 200))}: {MARK[c['status']]}</h2><ul>"
        )
        H += [f"<li><b>{e(label)}</b>: {e(text)}</li>" if label else f"<li>{e(text)}</li>" for label, text in _facts(c)]
        H.append("</ul>")
        if a:
            H += list(drawn.get(i, {}).values())
        if c.get("proofs"):
            H.append(
                "<table class='proofs'><tr><th>property</th><th>verdict</th><th>method</th><th>time</th>"
                "<th>counterexample</th></tr>"
            )
            for p in c["proofs"]:
                H.append(
                    f"<tr><td>{e(clip(p['name'], 200))}</td><td>{e(clip(p['status'], 200))}</td>"
                    f"<td>{e(_method(p))}</td><td>{p.get('elapsed_s', 0.0):.2f} s</td>"
                    f"<td>{e(clip(p.get('counterexample') or ''))}</td></tr>"
                )
            H.append("</table>")
        if c.get("proof_note"):
            H.append(f"<p>{e(clip(c['proof_note']))}</p>")
        H.append(f"<p>Reproduce: <code>{e(clip(c['command']))}</code></p></section>")
    H.append("</body></html>")
    return "\n".join(H)


def write_reports(gate: dict, directory: str, plots=None, progress=None) -> list[str]:
    """gate.json, report.md (with images/), report.html (self-contained); each atomically. progress() is called
    after each check's plots are drawn (most of the time)."""
    d = Path(directory)
    (d / "images").mkdir(parents=True, exist_ok=True)
    write_text_atomic(str(d / "gate.json"), json.dumps(gate, indent=2, default=str) + "\n")
    drawn = images(gate, plots, progress)
    write_text_atomic(str(d / "report.md"), markdown(gate, str(d / "images"), plots, drawn))
    write_text_atomic(str(d / "report.html"), html_page(gate, plots, drawn))
    return [str(d / n) for n in ("gate.json", "report.md", "report.html")]
