"""JUnit XML: one test case per (check, dtype); a failure names the operator,
dtype, worst input and its error, and the command that reproduces it."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from opcert.report.text import xml


def junit_xml(gate: dict) -> str:
    checks = gate["checks"]
    suite = ET.Element(
        "testsuite",
        name="opcert gate",
        tests=str(len(checks)),
        failures=str(sum(c["status"] == "fail" for c in checks)),
        skipped=str(sum(c["status"] == "skipped" for c in checks)),
        time=f"{gate['elapsed_s']:.3f}",
    )
    for c in checks:
        # every text may come from a target (report.text): clipped, and only characters XML 1.0 can hold
        case = ET.SubElement(
            suite,
            "testcase",
            classname=xml(f"opcert.{c['op']}.{c['dtype']}", 200),
            name=xml(f"{c['op']} {c['dtype']} {c['target']}", 300),
            time=f"{c['elapsed_s']:.3f}",
        )
        acc = c.get("accuracy") or {}
        if c["status"] == "fail":
            head = (
                f"{c['op']} {c['dtype']} {c['target']}: max ULP error {acc.get('max_ulp')!r} at "
                f"x = {acc.get('worst_input')!r} ({acc.get('worst_input_bits')})"
            )
            f = ET.SubElement(case, "failure", message=xml(head), type="opcert.check")
            f.text = "\n".join([xml(r) for r in c["reasons"]] + [f"reproduce: {xml(c['command'])}"])
        elif c["status"] == "skipped":
            ET.SubElement(case, "skipped", message=xml("; ".join(xml(r) for r in c["reasons"])))
        out = ET.SubElement(case, "system-out")
        out.text = xml(
            f"max_ulp={acc.get('max_ulp')!r} inputs={acc.get('inputs_checked')} "
            f"correctly_rounded={acc.get('correctly_rounded')} reproduce: {xml(c['command'])}",
            None,
        )
    ET.indent(suite)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"
