"""The command line: a thin layer over the library API.

Exit codes: 0 success; 1 a check failed (a target crashed, a NaN or infinity
mismatch, a budget exceeded); 2 bad usage (the message says what is allowed).
"""

from __future__ import annotations

import argparse
import atexit
import decimal
import json
import math
import os
import signal
import sys
import tempfile
import threading
import time
from fractions import Fraction

import numpy as np
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from opcert import __version__, cli_binary, cli_paths, cli_predicate, policy
from opcert import files as io
from opcert.errors import ConfigErrors, OpcertError, UsageError, choices
from opcert.files import check_writable, write_json_atomic, write_text_atomic
from opcert.formats import FLOAT_FORMATS, get_format, hex_bits, round_fraction
from opcert.gating import load_config, run_gate, select
from opcert.gating.config import parse_check
from opcert.gating.recheck import load_gate
from opcert.gating.run import describe_counterexample, enforcement_lines, run_check
from opcert.gating.schema import text as schema_text
from opcert.isa import (
    LevelOutputs,
    OutputsRequest,
    accuracy_argv,
    check_isa,
    combined_layout,
    compare_levels,
    compared_note,
    draw_compared,
    level_outputs,
    levels,
    run_accuracy,
    shown,
    switch_for,
)
from opcert.numbers import Huge, Tiny, is_bit_pattern, parse_real
from opcert.numerics.exact import FAR
from opcert.options import Options
from opcert.progress import Progress
from opcert.report import ci
from opcert.report.diff import regressions
from opcert.report.junit import junit_xml
from opcert.report.render import summary_page, write_reports
from opcert.report.svg import attr_sweep_svg
from opcert.report.text import LIMIT, log
from opcert.runtime_table import isa_switches, target_names
from opcert.spec import (
    binary_operators,
    get_binary_operator,
    get_operator,
    get_predicate_operator,
    get_tensor_operator,
    is_binary_operator,
    is_predicate_operator,
    is_tensor_operator,
    operators,
    predicate_operators,
    row_reference,
    tensor_operators,
)
from opcert.spec.attrs import describe, exact_decimal, resolve
from opcert.spec.reference import check_dtype, reference_detailed
from opcert.spec.row_reference import check_float
from opcert.spec.tensor import reduced_axes, to_rows
from opcert.verify.accuracy.attr_sweep import attribute_sets, sweep_attributes
from opcert.verify.accuracy.measure import AccuracyResult, enforcement, measure, parse_waivers
from opcert.verify.tensor.measure import LONGEST_ROW, measure_rows


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse exits 2 too; keep its message, lose the noise
        self.print_usage(sys.stderr)
        raise UsageError(message)


def _attrs(pairs) -> dict[str, str]:
    out = {}
    for p in pairs or []:
        key, sep, value = p.partition("=")
        if not sep or not key:
            raise UsageError(f"--attr {p!r} is not of the form name=value")
        out[key.strip()] = value.strip()
    return out


def esc(text) -> str:
    """Text for rich: brackets in names, lists and messages are not markup."""
    return escape(str(text))


def safe(text) -> str:
    """Text that may come from a target (its exception messages, notes), for the console and the CI log: clipped
    with a note, and no line of it starts a line of the log, so none is read as a workflow command
    (report.text.log)."""
    return log(text)


def _console(stderr: bool = False):
    # Piped output (CI logs, files) gets wide tables rather than wrapped cells.
    stream = sys.stderr if stderr else sys.stdout
    return Console(highlight=False, width=None if stream.isatty() else 160, stderr=stderr)


# ---- ops ----------------------------------------------------------------------


def _support_records(std) -> list[dict]:
    return [
        {"since": u.since, "dtypes": list(u.dtypes), "ranks": list(u.ranks) if u.ranks else None} for u in std.support
    ]


def _attribute_records(op) -> list[dict]:
    """Each attribute: its names, domain, meaning and default per standard (element-wise and tensor operators)."""
    return [
        {
            "name": a.name,
            "aliases": list(a.aliases),
            "domain": a.domain.description,
            "doc": a.doc,
            "defaults": {s.key: s.defaults[a.name] for s in op.standards if a.name in s.defaults},
        }
        for a in op.attributes
    ]


def operator_record(op) -> dict:
    return {
        "name": op.name,
        "kind": "element-wise",
        "summary": op.summary,
        "family": op.family,
        "primary_standard": op.primary,
        "dtypes": list(op.dtypes),
        "attributes": _attribute_records(op),
        "standards": [
            {
                "key": s.key,
                "name": s.op_name,
                "document": s.document,
                "formula": s.formula_text,
                "defaults": s.defaults,
                "attribute_names": s.attribute_names,
                "in_place": s.in_place,
                "support": _support_records(s),
                "notes": s.notes,
            }
            for s in op.standards
        ],
        "implementation": str(op.implementation),
        "properties": [
            {
                "name": p.name,
                "kind": p.kind,
                "statement": p.statement,
                "condition": str(p.condition) if p.condition is not None else None,
                "decreasing": p.decreasing,  # monotonic: non-increasing
            }
            for p in op.properties
        ],
        "integer_semantics": op.integer.note if op.integer else None,
        "notes": op.notes or None,
    }


def tensor_record(op) -> dict:
    return {
        "name": op.name,
        "kind": "tensor",
        "summary": op.summary,
        "family": op.family,
        "primary_standard": op.primary,
        "dtypes": list(op.dtypes),
        "attributes": _attribute_records(op),
        "standards": [
            {
                "key": s.key,
                "name": s.op_name,
                "document": s.document,
                "formula": s.formula_text,
                "versions": list(s.versions),
                "attribute_names": dict(s.attribute_names),
                "axes": {"rule": s.axes.kind, "default": s.axes.default, "text": s.axes.text},
                "in_place": s.in_place,
                "support": _support_records(s),
                # a standard with its own formula (DirectML's MEAN_VARIANCE_NORMALIZATION1): opcert's forms of it
                **({"implementation": str(s.implementation)} if s.implementation is not None else {}),
                **({"reference_form": str(s.reference_form)} if s.reference_form is not None else {}),
            }
            for s in op.standards
        ],
        "implementation": str(op.implementation),
        "reference_form": str(op.reference_form),
        "absent": str(op.absent),
        "properties": [{"name": p.name, "kind": p.kind, "statement": p.statement} for p in op.properties],
        "notes": op.notes or None,
    }


def _one_operator(args) -> int:
    """`opcert ops OP`: one operator's standards, attributes (each standard's name and default), properties."""
    if is_binary_operator(args.op):
        return cli_binary.cmd_ops_one(sys.modules[__name__], args)
    if is_predicate_operator(args.op):
        return cli_predicate.cmd_ops_one(sys.modules[__name__], args)
    tensor = is_tensor_operator(args.op)
    r = tensor_record(get_tensor_operator(args.op)[0]) if tensor else operator_record(get_operator(args.op))
    if args.json:
        print(json.dumps(r, indent=2))
        return 0
    con = _console()
    con.print(f"[bold]{esc(r['name'])}[/bold] ({r['kind']}, {esc(r['family'])}): {esc(r['summary'])}")
    con.print(f"dtypes: {', '.join(r['dtypes'])}; primary standard: {r['primary_standard']}")
    t = Table(title="standards")
    for col in ("key", "name", "formula", "support (since: dtypes)", "document"):
        t.add_column(col)
    for s in r["standards"]:
        support = "; ".join(f"{u['since']}: {', '.join(u['dtypes'])}" for u in s["support"])
        t.add_row(s["key"], esc(s["name"]), esc(s["formula"]), esc(support), esc(s["document"]))
    con.print(t)
    if r.get("attributes"):
        t = Table(title="attributes (--attr NAME=VALUE; defaults per standard)")
        for col in ("name", "names in the standards", "defaults", "allowed", "meaning"):
            t.add_column(col)
        for a in r["attributes"]:
            names = ", ".join(
                f"{s['key']}: {s['attribute_names'][a['name']]}"
                for s in r["standards"]
                if a["name"] in s.get("attribute_names", {})
            )
            defaults = (
                ", ".join(f"{k}: {v:g}" if not isinstance(v, str) else f"{k}: {v}" for k, v in a["defaults"].items())
                or "-"
            )
            t.add_row(a["name"], esc(names), esc(defaults), esc(a["domain"]), esc(a["doc"]))
        con.print(t)
    t = Table(title="properties (proofs = [...] and properties = [...] take these names)")
    for col in ("name", "kind", "statement"):
        t.add_column(col)
    for p in r["properties"]:
        kind = p["kind"] + (" (non-increasing)" if p.get("decreasing") else "")
        t.add_row(p["name"], kind, esc(p["statement"]))
    con.print(t)
    return 0


def cmd_ops(args) -> int:
    if args.op is not None:
        return _one_operator(args)
    records = [operator_record(op) for op in operators()]
    tensors = [tensor_record(op) for op in tensor_operators()]
    binaries = [cli_binary.binary_record(op) for op in binary_operators()]
    binaries += [cli_predicate.predicate_record(op) for op in predicate_operators()]
    if args.json:
        print(json.dumps(sorted(records + tensors + binaries, key=lambda r: r["name"]), indent=2))
        return 0
    t = Table(title="opcert operator catalog")
    for col in ("operator", "standards", "attributes (defaults)", "dtypes (standards)", "definition"):
        t.add_column(col)
    for op, r in zip(operators(), records):
        stds = ", ".join(f"{s.key}:{s.op_name}" for s in op.standards)
        at = (
            ", ".join(
                f"{a['name']}="
                + (
                    "/".join(
                        v if isinstance(v, str) else f"{v:g}" for v in sorted(set(a["defaults"].values()), key=str)
                    )
                    or "-"
                )
                for a in r["attributes"]
            )
            or "-"
        )
        t.add_row(op.name, esc(stds), esc(at), ", ".join(op.dtypes), esc(op.standard().formula_text))
    _console().print(t)
    t = Table(title="tensor operators: each output is a function of its row (opcert ref --axis/--axes)")
    for col in ("operator", "standard", "rows (axis rule)", "dtypes"):
        t.add_column(col)
    for op in tensor_operators():
        for s in op.standards:
            t.add_row(
                esc(f"{op.name}: {op.summary}") if s is op.standards[0] else "",
                esc(f"{s.key}:{s.op_name}"),
                esc(s.axes.text),
                ", ".join(d for d in op.dtypes if any(d in u.dtypes for u in s.support)),
            )
    _console().print(t)
    cli_binary.ops_rows(sys.modules[__name__], _console())
    cli_predicate.ops_rows(sys.modules[__name__], _console())
    return 0


# ---- ref ----------------------------------------------------------------------


def _parse_input(text: str, fmt) -> np.ndarray:
    """One `ref` input: a decimal, a hex float (0x1.8p-3), an unsigned bit
    pattern (0x3c00), inf or nan; integers for the integer formats."""
    t = text.strip()
    if fmt.kind == "int":
        try:
            v = int(t, 10)
        except ValueError:
            raise UsageError(f"input {text!r} is not an integer (decimal digits, optional sign)") from None
        if not (fmt.min <= v <= fmt.max):
            raise UsageError(f"input {text!r} is outside {fmt.name}: allowed {fmt.min} to {fmt.max}")
        return np.array([v], dtype=fmt.dtype)
    if is_bit_pattern(t):
        bits = int(t, 16)
        if bits >= 1 << fmt.bits:
            raise UsageError(
                f"input {text!r} has more than {fmt.bits} bits (a {fmt.name} bit pattern is "
                f"0x0 to 0x{(1 << fmt.bits) - 1:x})"
            )
        return np.array([bits], dtype=np.uint64).astype(fmt.uint).view(fmt.dtype)
    low = t.lower()
    if low.lstrip("+-") in ("nan", "inf", "infinity"):
        with np.errstate(invalid="ignore"):
            return np.array([float(low)]).astype(fmt.dtype)
    try:
        q = parse_real(t, "input")
    except Huge as h:
        return np.array([-np.inf if h.negative else np.inf]).astype(fmt.dtype)
    except Tiny as tz:
        return np.array([-0.0 if tz.negative else 0.0]).astype(fmt.dtype)
    except UsageError as exc:
        raise UsageError(f"{exc}, a bit pattern such as 0x3c00, inf or nan") from None
    with np.errstate(over="ignore"):
        return np.array([round_fraction(q, fmt, negative_zero=t.startswith("-"))]).astype(fmt.dtype)


def _ints(text: str | None, flag: str, lo: int = None) -> list[int] | None:
    if text is None:
        return None
    try:
        vals = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise UsageError(f"{flag} {text!r}: give integers separated by commas (such as 2,3)") from None
    if lo is not None and any(v < lo for v in vals):
        raise UsageError(f"{flag} {text!r}: every value must be {lo} or more")
    return vals


def cmd_ref_tensor(args) -> int:
    op, named = get_tensor_operator(args.op)
    if args.attr and not op.attributes:
        raise UsageError(f"{op.name} has no attributes; it takes --axis (ONNX) or --axes (DirectML's 1 forms)")
    fmt = get_format(args.dtype)
    if not args.x:
        raise UsageError("give at least one input value")
    x = np.concatenate([_parse_input(t, fmt) for t in args.x])
    check_float(op, x)
    shape = _ints(args.shape, "--shape", 0) or [x.size]
    if int(np.prod(shape)) != x.size:
        raise UsageError(f"--shape {args.shape} holds {int(np.prod(shape))} elements; {x.size} values were given")
    x = x.reshape(shape)
    axis = None if args.axis is None else _ints(args.axis, "--axis")[0]
    axes = _ints(args.axes, "--axes")
    standard = args.standard or named
    r = row_reference.reference_detailed(op, x, standard=standard, axis=axis, axes=axes, attrs=_attrs(args.attr))
    std = op.with_values(op.standard(standard), _attrs(args.attr))
    reduced = reduced_axes(op, std, x.ndim, axis, axes)
    rows_in, _ = to_rows(x, reduced)
    rows_out, _ = to_rows(r.rounded, reduced)
    if op.reduces:  # one result per row
        rows = [
            {
                "row": i,
                "input": [_num(v, fmt) for v in rows_in[i]],
                "result": _num(rows_out[i, 0], fmt),
                "result_bits": hex_bits(rows_out[i, 0], fmt),
            }
            for i in range(rows_in.shape[0])
        ]
    else:
        rows = [
            {
                "row": i,
                "position": j,
                "input": _num(rows_in[i, j], fmt),
                "input_bits": hex_bits(rows_in[i, j], fmt),
                "result": _num(rows_out[i, j], fmt),
                "result_bits": hex_bits(rows_out[i, j], fmt),
            }
            for i in range(rows_in.shape[0])
            for j in range(rows_in.shape[1])
        ]
    out = {
        "op": op.name,
        "dtype": fmt.name,
        "standard": std.name,
        "shape": list(x.shape),
        "reduced_axes": list(reduced),
        "output_shape": list(r.rounded.shape),
        "attrs": describe(dict(std.attrs), op),
        "exact_path_elements": r.slow_path,
        "results": rows,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    each = "each row's result" if op.reduces else "each element"
    t = Table(
        title=esc(
            f"{op.name} ({std.name}, {std.op_name}) reference, {fmt.name}, shape {tuple(x.shape)}, rows "
            f"over axes {list(reduced)}"
            + "".join(f", {k} = {v}" for k, v in std.values().items())
            + f": {each} correctly rounded (nearest, ties to even)"
        )
    )
    if op.reduces:
        for col in ("row", "x", "result", "result bits"):
            t.add_column(col)
        for row in rows:
            shown = row["input"] if len(row["input"]) <= 8 else [*row["input"][:8], "..."]
            t.add_row(str(row["row"]), ", ".join(map(str, shown)), str(row["result"]), row["result_bits"])
    else:
        for col in ("row", "position", "x", "x bits", "result", "result bits"):
            t.add_column(col)
        for row in rows:
            t.add_row(
                str(row["row"]),
                str(row["position"]),
                str(row["input"]),
                row["input_bits"],
                str(row["result"]),
                row["result_bits"],
            )
    _console().print(t)
    return 0


def cmd_ref(args) -> int:
    if is_binary_operator(args.op):
        return cli_binary.cmd_ref(sys.modules[__name__], args)
    if is_predicate_operator(args.op):
        return cli_predicate.cmd_ref(sys.modules[__name__], args)
    if is_tensor_operator(args.op):
        return cmd_ref_tensor(args)
    if args.axis is not None or args.axes is not None or args.shape is not None:
        raise UsageError(
            f"--axis, --axes and --shape are for the tensor operators (Softmax, LogSoftmax, Hardmax); "
            f"{args.op} is element-wise"
        )
    op = get_operator(args.op)
    fmt = get_format(args.dtype)
    check_dtype(op, fmt)
    attrs = resolve(op, _attrs(args.attr), args.standard)
    if not args.x:
        raise UsageError("give at least one input value")
    x = np.concatenate([_parse_input(t, fmt) for t in args.x])
    r = reference_detailed(op, x, attrs, args.standard, exact_bits=64 if fmt.kind == "float" else 0)
    rows = []
    for i in range(x.size):
        xv, rv = x[i], r.rounded[i]
        rows.append(
            {
                "input": _num(xv, fmt),
                "input_bits": hex_bits(xv, fmt),
                "result": _num(rv, fmt),
                "result_bits": hex_bits(rv, fmt),
                "exact": _exact_text(r.exact_hi[i], r.exact_lo[i], fmt),
            }
        )
    out = {
        "op": op.name,
        "dtype": fmt.name,
        "standard": args.standard or op.primary,
        "attrs": {k: {"value": float(v), "exact": exact_decimal(v)} for k, v in attrs.items()},
        "results": rows,
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    title = f"{op.name} reference, {fmt.name}, correctly rounded (nearest, ties to even)"
    if attrs:
        title += "; " + ", ".join(f"{k}={exact_decimal(v)}" for k, v in attrs.items())
    t = Table(title=esc(title))
    for col in ("x", "x bits", "result", "result bits", "exact value (about)"):
        t.add_column(col)
    for row in rows:
        t.add_row(str(row["input"]), row["input_bits"], str(row["result"]), row["result_bits"], row["exact"])
    _console().print(t)
    return 0


def _num(v, fmt):
    if fmt.kind == "int":
        return int(v)
    f = float(np.asarray(v).astype(np.float64))
    return "nan" if math.isnan(f) else f


def _exact_text(hi, lo, fmt=None) -> str:
    if math.isnan(hi):
        return "nan"
    if math.isinf(hi):
        return str(hi)
    q = Fraction(float(hi)) + Fraction(float(lo))
    if fmt is not None and fmt.kind == "float" and q != 0:
        # the exact evaluation stands for a value beyond these bounds by one inside them (numerics.exact: _far_above,
        # _far_below): 2^(3e38) is no 9.4e57, which that representative would print
        above, below = fmt.emax + 1 + FAR, fmt.emin - fmt.p - FAR
        if abs(q) >= Fraction(2) ** above:
            return f"{'-' if q < 0 else ''}beyond 2^{above} (rounds to {'-' if q < 0 else ''}inf)"
        if abs(q) <= Fraction(2) ** below:
            return f"{'-' if q < 0 else ''}below 2^{below} (rounds to {'-' if q < 0 else ''}0)"
    with decimal.localcontext() as ctx:
        ctx.prec = 25
        return str(+(decimal.Decimal(q.numerator) / decimal.Decimal(q.denominator)))


# ---- accuracy -----------------------------------------------------------------


def _outputs(args, files=(), dirs=()) -> None:
    """Refuse unwritable output paths before a long run."""
    for flag in files + dirs:
        v = getattr(args, flag, None)
        if v and v != "-":
            # absolute now: a target that changes the working directory does not move opcert's files
            setattr(args, flag, os.path.abspath(v))
    for flag in files:
        v = getattr(args, flag, None)
        if v:
            check_writable(v, f"--{flag}")
    for flag in dirs:
        v = getattr(args, flag, None)
        if v:
            check_writable(v, f"--{flag}", directory=True)


def _write(path: str, flag: str, fn) -> None:
    try:
        fn()
    except OSError as exc:
        raise UsageError(f"cannot write {flag} {path}: {exc.strerror or exc}") from None


def _isolation(args) -> str:
    return "none" if getattr(args, "in_process", False) else "process"


def _level_options(args) -> Options:
    """The options `opcert accuracy` hands on to each ISA level's process (opcert.isa)."""
    return Options(
        samples=args.samples,
        seed=args.seed,
        standard=args.standard,
        workers=args.workers,
        checkpoint=args.checkpoint,
        isolation=_isolation(args),
        target_timeout=args.target_timeout,
        layout_samples=args.layout_samples,
    )


def cmd_accuracy_tensor(args) -> int:
    """A tensor operator's target over sampled rows (verify.tensor.measure)."""
    op, _ = get_tensor_operator(args.op)
    for flag, given in (
        ("--attr", args.attr and not op.attributes),
        ("--workers", args.workers),
        ("--scheduler", args.scheduler),
        ("--checkpoint", args.checkpoint),
        ("--attr-sweep", args.attr_sweep),
        ("--plot", args.plot),
        ("--isa", args.isa),
        ("--layout-samples", args.layout_samples),
    ):
        if given:
            raise UsageError(
                f"{flag} applies to the element-wise operators; {op.name} is a tensor operator (its "
                "rows are sampled: --samples, --seed, --standard, --max-ulp; --exhaustive adds every "
                "row of two 16-bit values)"
            )
    fmt = get_format(args.dtype)
    waived = parse_waivers(op, args.waive)
    if args.samples is not None:
        policy.samples(args.samples, "--samples")
    policy.seed(args.seed, "--seed")
    if args.max_ulp is not None:
        policy.number(args.max_ulp, "--max-ulp")
    _outputs(args, files=("json",))
    if args.require is not None or args.signed_zero or args.subnormals or args.accept_sampled_evidence:
        return _accuracy_as_check(args, fmt, "exhaustive" if args.exhaustive else "sample")
    # the per-output error the row properties allow: --max-ulp; else correctly rounded, or for opcert's own
    # binary64 code its stated bound (TensorOperator.budget64 at the longest row measured)
    allowed = (
        max(0.5, args.max_ulp)
        if args.max_ulp is not None
        else op.budget64(LONGEST_ROW)
        if (args.target == "opcert" and fmt.name == "float64")
        else 0.5
    )
    res = measure_rows(
        op,
        args.target,
        fmt.name,
        standard=args.standard,
        samples=args.samples,
        seed=args.seed,
        max_ulp=allowed,
        isolation=_isolation(args),
        exhaustive=args.exhaustive,
        attrs=tuple(_attrs(args.attr).items()),
    )
    res.enforcement = enforcement(res.properties, waived)
    to_stdout = args.json == "-"
    _print_rows(res, stderr=to_stdout)
    if args.json:
        _write(args.json, "--json", lambda: write_json_atomic(args.json, res.gate_accuracy()))
    if res.status == "unsupported":
        print(f"opcert: skipped: {safe(res.error)}", file=sys.stderr)
        return 0
    failed = not res.ok
    if res.status != "ok":
        print(f"opcert: {safe(res.error)}", file=sys.stderr)
    for f in res.call_failures:
        print(f"opcert: {res.target} failed on {f['case']} (shape {f['shape']}): {safe(f['error'])}", file=sys.stderr)
    refuted = res.enforcement["failing"]
    if refuted:
        print(f"opcert: declared properties refuted on {res.target}: {', '.join(refuted)}", file=sys.stderr)
        failed = True
    for line in enforcement_lines(res.enforcement):
        print(f"opcert: {safe(line)}", file=sys.stderr)
    if args.max_ulp is not None and res.status == "ok" and res.max_ulp > args.max_ulp:
        w = res.worst or {}
        print(
            f"opcert: max ULP error {res.max_ulp!r} > --max-ulp {args.max_ulp!r} at element {w.get('position')} of "
            f"a row of {w.get('length')} ({w.get('case')})",
            file=sys.stderr,
        )
        failed = True
    return 1 if failed else 0


def _print_rows(res, stderr: bool = False) -> None:
    con = _console(stderr)
    if res.status != "ok":
        con.print(
            esc(f"{res.op} {res.dtype} {res.target} ({res.standard}): {res.status}: {safe(res.error)}"), soft_wrap=True
        )
        return
    w = res.worst or {}
    t = Table(
        title=esc(
            f"{res.op} ({res.standard}) {res.dtype}, target {res.target} {res.target_version}: "
            f"{res.elements:,} elements in {res.rows:,} rows, {res.elapsed_s:.1f} s"
        )
    )
    t.add_column("measure")
    t.add_column("value")
    t.add_row(
        "max ULP error",
        esc(
            f"{res.max_ulp!r} at element {w.get('position')} of a row of {w.get('length')} "
            f"({w.get('case')}): x = {w.get('x')!r}, output {w.get('got')!r}, correctly "
            f"rounded {w.get('want')!r}"
        ),
    )
    t.add_row("correctly rounded", f"{res.correctly_rounded:,} / {res.elements:,}")
    if res.signed_zero_mismatches:
        t.add_row("zeros of the wrong sign", f"{res.signed_zero_mismatches:,}")
    if res.subnormal_flushes:
        e = res.flush_example
        t.add_row(
            "subnormal outputs flushed to 0",
            esc(
                f"{res.subnormal_flushes:,} (not in the ULP figure)"
                + (
                    f"; first at element {e['position']} of a row of {e['length']} ({e['case']}): {e['want']!r} is due"
                    if e
                    else ", in the pairs"
                )
            ),
        )
    t.add_row(
        "NaN / infinity mismatches",
        f"{res.nan_mismatches} / {res.inf_mismatches}"
        + (
            esc(
                f"; first: row {res.special_examples[0].get('row')} -> element {res.special_examples[0]['position']} "
                f"{res.special_examples[0]['got']!r}, declared {res.special_examples[0]['want']!r}"
            )
            if res.special_examples
            else ""
        ),
    )
    if res.inf_rule_text:
        t.add_row("rows with +-inf entries", esc(res.inf_rule_text))
    if res.row_sum:
        rs = res.row_sum
        t.add_row(
            f"row sum ({'outputs' if rs['sum_of'] == 'y' else 'exp of the outputs'})",
            esc(
                f"|sum - 1| up to {rs['max_abs_error']:.3g} = {rs['max_units_of_2^-p']:.3g} x 2^-p, in a row of "
                f"{rs['row_length']} ({rs['case']})"
            ),
        )
    skipped = [c for c in res.cases if "skipped" in c]
    if skipped:
        t.add_row("cases not run", esc(f"{len(skipped)}: {skipped[0]['skipped']}"))
    if res.pairs:
        pr = res.pairs
        worst = "every output within 0.5 ULP" if pr["max_ulp"] is None else f"max {pr['max_ulp']:.4g} ULP"
        t.add_row(
            "every pair (rows of 2)",
            esc(
                f"{pr['pairs']:,} pairs in {pr['elapsed_s']:.0f} s: {worst}, "
                f"{pr['correctly_rounded']:,} outputs "
                f"correctly rounded, {pr['special_mismatches']:,} against the "
                f"NaN/inf rule, {pr['subnormal_flushes']:,} flushed"
            ),
        )
    if res.call_failures:
        f = res.call_failures[0]
        t.add_row("target failures", esc(f"{len(res.call_failures)} case(s); first {f['case']}: {f['error']}"))
    con.print(t)
    p = Table(
        title=f"declared row properties, on the measured rows and related calls (a sample: checked at best); "
        f"each output allowed {res.allowed_ulp:g} ULP (--max-ulp)"
    )
    for col in ("property", "verdict", "checked", "violations", "first counterexample"):
        p.add_column(col)
    for v in res.properties:
        p.add_row(
            v["name"],
            v["status"] + (f" (waived: {v['waived']})" if v.get("waived") else ""),
            f"{v.get('inputs_checked') or 0:,}",
            f"{v.get('violations') or 0:,}",
            esc(describe_counterexample(v.get("counterexample"))[:300]),
        )
    con.print(p)
    con.print(esc(f"reproduce: {res.command}"))


def cmd_accuracy(args) -> int:
    if is_binary_operator(args.op):
        return cli_binary.cmd_accuracy(sys.modules[__name__], args)
    if is_predicate_operator(args.op):
        return cli_predicate.cmd_accuracy(sys.modules[__name__], args)
    if is_tensor_operator(args.op):
        return cmd_accuracy_tensor(args)
    if args.exhaustive and args.samples is not None:
        raise UsageError("--exhaustive and --samples exclude each other")
    fmt = get_format(args.dtype)
    mode = "exhaustive" if args.exhaustive else "sample"
    if fmt.kind == "int":
        raise UsageError("accuracy sweeps cover float formats; integer Shrink is checked by the tests")
    if args.workers is not None:
        policy.workers(args.workers, "--workers")
    if args.max_ulp is not None:
        policy.number(args.max_ulp, "--max-ulp")
    if args.samples is not None:
        policy.samples(args.samples, "--samples")
    policy.seed(args.seed, "--seed")
    if args.target_timeout is not None:
        policy.timeout(args.target_timeout, "--target-timeout")
    if args.scheduler and not args.scheduler.startswith("dask://"):
        raise UsageError(f"--scheduler {args.scheduler!r}: allowed is dask://HOST:PORT")
    if (args.workers or args.scheduler or args.checkpoint) and not (args.exhaustive and fmt.name == "float32"):
        raise UsageError("--workers, --scheduler and --checkpoint apply to exhaustive float32 sweeps")
    if args.plot and not args.attr_sweep:
        raise UsageError("--plot draws an attribute sweep: give --attr-sweep with it")
    if args.plot and not args.plot.lower().endswith(".svg"):
        raise UsageError(f"--plot {args.plot!r}: allowed is a file name ending in .svg (the plot is SVG)")
    waived = parse_waivers(get_operator(args.op), args.waive)
    if args.attr_sweep:
        return _accuracy_attr_sweep(args, fmt, mode)
    if args.isa_outputs and level_outputs(
        OutputsRequest(args.isa_outputs, args.isa_inputs, args.isa_outputs_only),
        args.op,
        args.target,
        fmt.name,
        _attrs(args.attr),
        mode,
        _level_options(args),
    ):
        return 0  # a level's process of --isa all asked for its outputs alone (opcert.isa)
    if check_isa(args.isa, args.target):
        return _accuracy_per_isa(args)
    _outputs(args, files=("json",))
    if args.max_ulp_apart is not None and not args.against:
        raise UsageError("--max-ulp-apart applies with --against TARGET (the other path)")
    if args.against and args.isa:
        raise UsageError(
            "--against compares the target with another path at one ISA level: give the level's switch in the "
            "environment (as the gate's printed command does), not --isa"
        )
    if args.require is not None or args.signed_zero or args.subnormals or args.accept_sampled_evidence or args.against:
        return _accuracy_as_check(args, fmt, mode)
    with _sweep_progress(args.exhaustive and fmt.name == "float32") as progress:
        options = Options(
            samples=args.samples,
            seed=args.seed,
            standard=args.standard,
            workers=args.workers,
            scheduler=args.scheduler,
            checkpoint=args.checkpoint,
            progress=progress,
            isolation=_isolation(args),
            target_timeout=args.target_timeout,
            layout_samples=args.layout_samples,
        )
        res = measure(args.op, args.target, fmt.name, mode, options, attrs=_attrs(args.attr))
    res.enforcement = enforcement(res.properties, waived)
    to_stdout = args.json == "-"
    _print_accuracy(res, stderr=to_stdout)
    if args.json:
        _write(args.json, "--json", lambda: write_json_atomic(args.json, res.to_dict()))
    if res.status == "unsupported":
        print(f"opcert: skipped: {safe(res.error)}", file=sys.stderr)
        return 0
    if res.status != "ok":
        print(f"opcert: {safe(res.error)}", file=sys.stderr)
    failed = res.status != "ok" or res.failed_special_values
    if (res.replay or {}).get("differ"):
        print(
            f"opcert: {res.target} returned other bits for {res.replay['differ']:,} input(s) when called again "
            f"({res.replay['how']}): its output depends on its call history",
            file=sys.stderr,
        )
        failed = True
    refuted = res.enforcement["failing"]
    if refuted:
        print(f"opcert: declared properties refuted on {res.target}: {', '.join(refuted)}", file=sys.stderr)
        failed = True
    for line in enforcement_lines(res.enforcement):
        print(f"opcert: {safe(line)}", file=sys.stderr)
    if args.max_ulp is not None and (res.max_ulp is None or res.max_ulp > args.max_ulp) and res.status == "ok":
        if res.max_ulp is not None:
            print(
                f"opcert: max ULP error {res.max_ulp!r} > --max-ulp {args.max_ulp!r} at x = {res.worst_input!r} "
                f"({res.worst_input_bits})",
                file=sys.stderr,
            )
            failed = True
    return 1 if failed else 0


def _accuracy_as_check(args, fmt, mode) -> int:
    """`opcert accuracy` with a check's policy (--require, --max-ulp, ...): the gate's own run and judgment
    of that one check (gating.run.run_check), so the command a gate prints gives the gate's verdict."""
    if args.max_ulp is None:
        raise UsageError(
            "--require, --signed-zero, --subnormals, --accept-sampled-evidence and --against judge the check as a "
            "gate does: give its budget with --max-ulp"
        )
    raw = {
        "op": args.op,
        "target": args.target,
        "dtypes": [fmt.name],
        "mode": mode,
        "seed": args.seed,
        "max_ulp": args.max_ulp,
        "attrs": _attrs(args.attr),
        "isolation": _isolation(args),
    }
    req = "none" if args.require is None else args.require.strip()
    raw["proofs"] = (
        "all" if req == "all" else [] if req in ("none", "") else [n.strip() for n in req.split(",") if n.strip()]
    )
    for key, value in (
        ("samples", args.samples),
        ("standard", args.standard),
        ("signed_zero", args.signed_zero),
        ("subnormals", args.subnormals),
        ("target_timeout", args.target_timeout),
        ("layout_samples", args.layout_samples),
    ):
        if value is not None:
            raw[key] = value
    if args.accept_sampled_evidence:
        raw["accept_sampled_evidence"] = True
    if args.against:
        raw["against"] = args.against
        if args.max_ulp_apart is not None:
            raw["max_ulp_apart"] = args.max_ulp_apart
    if args.waive:
        target_op = (
            get_binary_operator(args.op)
            if is_binary_operator(args.op)
            else get_predicate_operator(args.op)
            if is_predicate_operator(args.op)
            else get_tensor_operator(args.op)[0]
            if is_tensor_operator(args.op)
            else get_operator(args.op)
        )
        raw["waive"] = parse_waivers(target_op, args.waive)
    checks = parse_check(raw, 0, "the command line")
    if len(checks) != 1:
        raise UsageError("--require judges one check: give one attribute set")
    with _sweep_progress(args.exhaustive and fmt.name == "float32") as progress:
        verdict = run_check(checks[0], fmt.name, workers=args.workers, checkpoint=args.checkpoint, progress=progress)
    to_stdout = args.json == "-"
    acc = verdict.accuracy or {}
    if acc.get("kind") == "rows":  # a tensor operator's rows (verify.tensor.measure's gate_accuracy)
        print(
            f"opcert: {args.op} {fmt.name} on {args.target}: max ULP error {acc.get('max_ulp')!r} over "
            f"{acc.get('inputs_checked') or 0:,} elements in {acc.get('rows') or 0:,} rows",
            file=sys.stderr,
        )
    elif acc.get("kind") == "predicate":  # a predicate operator's outputs (verify.predicate.measure)
        print(
            f"opcert: {args.op} {fmt.name} on {args.target}: {acc.get('mismatches') or 0:,} wrong outputs over "
            f"{acc.get('inputs_checked') or 0:,} inputs",
            file=sys.stderr,
        )
    elif acc.get("kind") == "pairs":  # a binary operator's pairs (verify.binary.measure's gate_accuracy)
        worst = acc.get("max_ulp")
        print(
            f"opcert: {args.op} {fmt.name} on {args.target}: "
            + ("every output correctly rounded" if worst is None else f"max ULP error {worst!r}")
            + f" over {acc.get('inputs_checked') or 0:,} pairs",
            file=sys.stderr,
        )
    elif acc:
        _print_accuracy(
            AccuracyResult(**{k: v for k, v in acc.items() if k in AccuracyResult.__dataclass_fields__}),
            stderr=to_stdout,
        )
    if args.json:
        _write(args.json, "--json", lambda: write_json_atomic(args.json, {**acc, "check": verdict.to_dict()}))
    if verdict.status == "skipped":
        print(f"opcert: skipped: {safe('; '.join(verdict.reasons))}", file=sys.stderr)
        return 0
    for reason in verdict.reasons:
        print(f"opcert: {safe(reason)}", file=sys.stderr)
    for line in enforcement_lines(verdict.enforcement):
        print(f"opcert: {safe(line)}", file=sys.stderr)
    print(f"opcert: check {verdict.status}", file=sys.stderr)
    return 1 if verdict.status == "fail" else 0


def _accuracy_per_isa(args) -> int:
    """--isa: the same check once per ISA level (opcert.isa), each in a fresh process started with the
    level's switch, one result per level."""
    _outputs(args, files=("json",))
    chosen = levels(args.target)
    if args.isa != "all":
        chosen = [lv for lv in chosen if lv[0] == args.isa]
    note = None
    if not chosen:
        chosen = [("host", {})]
        note = (
            f"{args.target} has no ISA switch opcert can set (ONNX Runtime's MLAS, XLA and C kernels pick "
            "theirs by cpuid): one result, at the host's level"
        )
    options = _level_options(args)
    argv = accuracy_argv(
        args.op,
        args.target,
        args.dtype,
        options,
        exhaustive=args.exhaustive,
        attrs=args.attr or (),
        max_ulp=args.max_ulp,
    )
    # --isa all over two levels or more: the compared inputs are drawn here, once; each level's process also
    # writes its outputs on them, and the levels are compared bit for bit here (opcert.isa.compare_levels)
    comparing = args.isa == "all" and len(chosen) >= 2
    out, worst, runs = [], 0, []
    tmp = tempfile.TemporaryDirectory(prefix="opcert-isa-")
    xfile = os.path.join(tmp.name, "compared-x.npy")
    scope = (
        draw_compared(
            xfile, args.op, args.dtype, _attrs(args.attr), "exhaustive" if args.exhaustive else "sample", options
        )
        if comparing
        else None
    )
    for i, (name, env) in enumerate(chosen):
        print(f"opcert: ISA level {name}" + (f" ({shown(env)})" if env else ""), file=sys.stderr)
        where = os.path.join(tmp.name, f"level{i}") if comparing else None
        # the child's table goes where this command's would: stderr when the JSON goes to stdout
        code, result, _ = run_accuracy(
            env,
            argv,
            capture=False,
            stdout=sys.stderr if args.json == "-" else None,
            outputs=where,
            inputs=xfile if comparing else None,
        )
        worst = max(worst, code) if code in (0, 1, 2) else 3
        out.append(
            {
                "level": name,
                "switch": switch_for(args.target),
                "environment": env,
                "exit_code": code,
                "result": result,
                "command": (shown(env) + " " if env else "") + "opcert accuracy " + " ".join(argv),
            }
        )
        if comparing:
            runs.append(LevelOutputs.read(name, env, where, code))
    comparison = layout = None
    if comparing:
        with tmp:
            comparison = compare_levels(runs, argv, tmp.name, scope=scope)
        layout = combined_layout([(o["level"], o["result"]) for o in out], comparison)
    else:
        tmp.cleanup()

    def line(o):
        if not o["result"]:
            return "no result"
        refuted = [p["name"] for p in o["result"].get("properties", []) if p["status"] == "refuted"]
        return ", ".join([f"max ULP {o['result'].get('max_ulp')!r}"] + [f"{n} refuted" for n in refuted])

    print(f"opcert: {len(out)} ISA level(s): " + "; ".join(f"{o['level']}: {line(o)}" for o in out), file=sys.stderr)
    if note:
        print(f"opcert: {note}", file=sys.stderr)
    if comparison is not None:
        print(f"opcert: {compared_note(comparison)}", file=sys.stderr)
        if comparison["counterexample"]:
            ce = comparison["counterexample"]
            print(
                f"opcert: layout refuted across ISA levels: {describe_counterexample(ce)}; {ce['replay']}",
                file=sys.stderr,
            )
            worst = max(worst, 1)
    if args.json:
        doc = {
            "schema": "opcert.accuracy-isa/1",
            "op": args.op,
            "dtype": args.dtype,
            "target": args.target,
            "note": note,
            "levels": out,
        }
        if comparison is not None:
            # the levels compared with each other, and the layout property of the levels together
            doc["comparison"] = comparison
            doc["properties"] = [layout] if layout is not None else []
            # the accuracy of the levels together: the worst level's, named (each level's figures stay above)
            scored = [o for o in out if o["result"] and o["result"].get("max_ulp") is not None]
            top = max(scored, key=lambda o: o["result"]["max_ulp"], default=None)
            doc["max_ulp"] = top["result"]["max_ulp"] if top else None
            doc["worst_level"] = top["level"] if top else None
        _write(args.json, "--json", lambda: write_json_atomic(args.json, doc))
    return worst


def _accuracy_attr_sweep(args, fmt, mode) -> int:
    if args.attr:
        raise UsageError("--attr-sweep chooses the attribute values; give no --attr with it")
    if args.exhaustive and fmt.name == "float32":
        raise UsageError(
            "--attr-sweep runs one check per attribute set: float32 is sampled there (--samples N); "
            "sweep all 2^32 inputs at one set with --attr instead"
        )
    if args.workers or args.scheduler or args.checkpoint:
        raise UsageError(
            "--workers, --scheduler and --checkpoint apply to one exhaustive float32 sweep, not to --attr-sweep"
        )
    _outputs(args, files=("json", "plot"))
    n = len(list(attribute_sets(get_operator(args.op), args.standard)))
    with Progress(f"{args.op} attribute sweep", n, "sets") as progress:
        options = Options(
            samples=args.samples,
            seed=args.seed,
            standard=args.standard,
            isolation=_isolation(args),
            target_timeout=args.target_timeout,
        )
        res = sweep_attributes(
            args.op,
            args.target,
            fmt.name,
            mode,
            options,
            max_ulp=args.max_ulp,
            progress=progress.advance,
            waive=parse_waivers(get_operator(args.op), args.waive),
        )
    to_stdout = args.json == "-"
    console = _console(stderr=to_stdout)
    t = Table(title=f"{res.op} {res.dtype} target={res.target} ({mode}, {len(res.rows)} attribute sets)")
    for c in ("set", "attributes", "inputs", "max ULP", "CR", "properties refuted", "result"):
        t.add_column(c)
    for r in res.rows:
        attrs = ", ".join(f"{k}={v!r}" if isinstance(v, str) else f"{k}={v:.9g}" for k, v in r["attrs"].items())
        if r["status"] == "skipped":
            t.add_row(r["label"], attrs, "-", "-", "-", "-", f"skipped: {r['reason']}")
            continue
        cr = f"{r['correctly_rounded']:,}/{r['inputs']:,}" if r.get("inputs") else "-"
        mu = "-" if r.get("max_ulp") is None else repr(r["max_ulp"])
        result = r["verdict"] if r["status"] == "ok" else f"fail: {r['status']}: {r['reason']}"
        t.add_row(
            r["label"], attrs, f"{r.get('inputs') or 0:,}", mu, cr, ", ".join(r.get("refuted") or []) or "-", result
        )
    console.print(t)
    w = res.worst
    if w is None:
        print("opcert: every attribute set was skipped (reasons above): nothing was checked", file=sys.stderr)
    else:
        print(
            f"worst attribute set: {w['label']} {w['attrs']}: max ULP {w.get('max_ulp')!r}"
            + (f" at x = {w['worst_input']!r} ({w['worst_input_bits']})" if w.get("worst_input_bits") else "")
            + (f"; reproduce: {w['command']}" if w.get("command") else ""),
            file=sys.stderr,
        )
    if args.json:
        _write(args.json, "--json", lambda: write_json_atomic(args.json, res.to_dict()))
    if args.plot and w is not None:
        _write(args.plot, "--plot", lambda: write_text_atomic(args.plot, attr_sweep_svg(res, args.max_ulp)))
    failed = [r for r in res.rows if r.get("verdict") == "fail"]
    for r in failed:
        print(
            f"opcert: FAIL at {r['attrs']}:"
            + (f" {r['reason']}" if r.get("reason") else "")
            + "".join(f" {r[k]} {k.replace('_', ' ')}" for k in ("nan_mismatches", "inf_mismatches") if r.get(k))
            + (f" refuted {r['refuted']}" if r.get("refuted") else "")
            + (
                f" max ULP {r['max_ulp']!r} > --max-ulp {args.max_ulp!r}"
                if args.max_ulp is not None and r.get("max_ulp") is not None and r["max_ulp"] > args.max_ulp
                else ""
            ),
            file=sys.stderr,
        )
    return 1 if failed or w is None else 0


class _sweep_progress:
    """The float32 sweep's progress (opcert.progress), as the sweep's callback (chunks done, chunks)."""

    def __init__(self, active: bool):
        self.active = active
        self.p = None

    def __enter__(self):
        if not self.active:
            return None
        self.p = Progress("float32 sweep", 2.0**32, "inputs").__enter__()
        first = [True]

        def update(done=None, total=None, **kw):
            if "phase" in kw:
                self.p.phase(kw["phase"])
            if done is None:
                return
            n = done * 2.0**32 / total
            if first[0]:
                first[0] = False
                self.p.resume_at(n)  # chunks from a checkpoint are not part of this run's rate
            self.p.update(n)

        return update

    def __exit__(self, *exc):
        if self.p:
            self.p.__exit__(*exc)
        return False


def _print_accuracy(res, stderr: bool = False) -> None:
    c = _console(stderr)
    t = Table(
        title=esc(
            f"{res.op} {res.dtype} target={res.target} "
            f"({'exhaustive' if res.exhaustive else res.mode}, {res.inputs_checked:,} inputs)"
        )
    )
    t.add_column("measure")
    t.add_column("value")
    if res.status != "ok":
        t.add_row("status", f"[red]{res.status}[/red]: {esc(safe(res.error))}")
    else:
        t.add_row("attributes", ", ".join(f"{k}={v['exact']}" for k, v in res.attrs.items()) or "-")
        t.add_row("max ULP error", f"{res.max_ulp!r}" if res.max_ulp is not None else "-")
        t.add_row("max distance (representable values)", str(res.max_ulp_distance))
        if res.worst_input is not None:
            t.add_row("worst input", f"{res.worst_input!r} ({res.worst_input_bits})")
            t.add_row("output there", f"{res.worst_output!r} ({res.worst_output_bits})")
            t.add_row("correctly rounded", f"{res.worst_reference!r} ({res.worst_reference_bits})")
            t.add_row("exact value", str(res.worst_exact))
            if res.worst_layout:
                t.add_row("worst error's layout", esc(res.worst_layout))
        t.add_row("correctly rounded results", f"{res.correctly_rounded:,} / {res.inputs_checked:,}")
        for key, label in (
            ("nan_mismatches", "NaN mismatches"),
            ("inf_mismatches", "infinity mismatches"),
            ("signed_zero_mismatches", "signed-zero mismatches"),
            ("subnormal_flushes", "subnormal outputs flushed to zero"),
        ):
            n = getattr(res, key)
            t.add_row(label, f"[red]{n}[/red]" if n and key in ("nan_mismatches", "inf_mismatches") else str(n))
        for kind, ex in res.examples.items():
            t.add_row(
                f"first {kind.replace('_', ' ')}",
                esc(
                    f"x={ex['input']['value']} ({ex['input']['bits']}) -> {ex['output']['value']} "
                    f"({ex['output']['bits']}); reference {ex['reference']['value']} ({ex['reference']['bits']})"
                ),
            )
        t.add_row("histogram", ", ".join(f"{k}: {v}" for k, v in res.histogram.items() if v))
        # what a fused or compiled target reports it ran (targets.runtimes: the subgraph targets' kernels)
        for label, k in (
            (((res.target_info or {}).get("details") or {}).get("observed") or {}).get("kernels", {}).items()
        ):
            t.add_row("kernels run", esc(f"{label}: {', '.join(k['nodes_run'])}"))
        if res.properties:
            t.add_row(
                "properties",
                esc(
                    ", ".join(
                        f"{p['name']}: {p['status']}" + (f" (waived: {p['waived']})" if p.get("waived") else "")
                        for p in res.properties
                    )
                ),
            )
        lay = next((p for p in res.properties if p.get("kind") == "layout"), None)
        if lay and lay.get("counterexample"):
            ce = lay["counterexample"]
            t.add_row(
                "layout",
                esc(
                    f"x={ce['inputs']['x']['value']} ({ce['inputs']['x']['bits']}) -> "
                    f"{ce['outputs']['f(x)']['bits']} in {ce['layout']}; "
                    f"{ce['base']['output']['bits']} in {ce['base']['layout']}"
                    f"{'' if ce.get('replayed') else ' (not reproduced when run again)'}"
                ),
            )
        for note in res.notes:
            t.add_row("note", esc(safe(note)))
        t.add_row("elapsed", f"{res.elapsed_s:.2f} s")
        if res.sweep:
            rate = res.sweep.get("inputs_per_s")
            t.add_row(
                "sweep",
                esc(
                    f"{res.sweep['chunks']} chunks ({res.sweep['resumed_chunks']} resumed from "
                    f"{res.sweep['checkpoint']}); undecided by the fast path: {res.sweep['undecided']}"
                    + (f"; {rate / 1e6:.1f} M inputs/s" if rate else "")
                ),
            )
    t.add_row("reproduce", esc(res.command))
    c.print(t)
    bad = [p for p in res.properties if p["status"] == "refuted"]
    for p in bad:
        c.print(
            f"[red]property {esc(p['name'])} refuted[/red] ({p['violations']:,} of {p['inputs_checked']:,}): "
            f"{esc(safe(_ce_text(p)))}" + (f" (waived: {esc(p['waived'])})" if p.get("waived") else ""),
            soft_wrap=True,
        )


def _ce_text(p) -> str:
    first = describe_counterexample(p.get("counterexample"))
    worst = describe_counterexample(p.get("worst"))
    if not first:  # refuted by what the target did (it raised in a layout): the note says what
        return p.get("note") or "no counterexample recorded"
    return f"first {first}" + (f"; worst {worst}" if worst and worst != first else "")


# ---- prove --------------------------------------------------------------------


def cmd_prove(args) -> int:
    from opcert.verify.proofs import prove, prove_all  # lazy: z3 loads only for the commands that prove

    if args.timeout is not None:
        raise UsageError(
            "--timeout was removed: z3 runs under resource limits, not seconds, so a verdict does "
            "not depend on how busy the host is; give --rlimit N (z3's resource units per query; "
            "the default is each query family's budget, docs/proofs.md)"
        )
    if args.rlimit is not None and not 1 <= args.rlimit < 2**32:
        raise UsageError(f"--rlimit: must be an integer from 1 to {2**32 - 1} (z3's resource units per query)")
    if args.samples is not None:
        policy.samples(args.samples, "--samples")
    if args.target_timeout is not None:
        policy.timeout(args.target_timeout, "--target-timeout")
    _outputs(args, files=("json",))
    if args.all:
        if args.op or args.dtype or args.attr or args.property or args.target != "opcert":
            raise UsageError(
                "--all proves every operator at every dtype on opcert's implementation; give no "
                "operator, --dtype, --attr, --property or --target with it"
            )
        t0 = time.perf_counter()
        with Progress(
            "prove --all: (operator, format)", 5 * len(operators()) + len(tensor_operators()), "pairs"
        ) as progress:
            reports = prove_all(args.rlimit, progress=progress.advance, enumerate_float32=args.enumerate is not False)
        wall = time.perf_counter() - t0
    else:
        if not args.op:
            raise UsageError("give an operator, or --all")
        if args.target != "opcert" and not args.dtype:
            raise UsageError(
                "--target needs --dtype: a target's properties are decided in one float format "
                "(the exact specification has no target)"
            )
        if args.samples is not None and args.target == "opcert":
            raise UsageError("--samples applies to --target T (opcert's implementation is proved with z3)")
        if args.enumerate and (args.target != "opcert" or not args.dtype or get_format(args.dtype).name != "float32"):
            raise UsageError(
                "--enumerate decides opcert's own float32 properties by running its code on every "
                "float32 input: give --dtype float32 and no --target (a --target's float32 "
                "properties are always decided on every input)"
            )
        reports = [
            prove(
                args.op,
                args.dtype,
                _attrs(args.attr),
                args.property,
                args.rlimit,
                args.standard,
                target=args.target,
                samples=args.samples,
                isolation=_isolation(args),
                target_timeout=args.target_timeout,
                enumerate_float32=bool(args.enumerate),
            )
        ]
        wall = reports[0].elapsed_s
    to_stdout = args.json == "-"
    _print_proofs(reports, wall, stderr=to_stdout)
    if args.json:
        _write(
            args.json,
            "--json",
            lambda: write_json_atomic(
                args.json, {"schema": "opcert.proofs/1", "wall_s": wall, "reports": [r.to_dict() for r in reports]}
            ),
        )
    crashed = [r for r in reports if getattr(r, "error", None)]
    for r in crashed:
        print(f"opcert: {safe(r.error)}", file=sys.stderr)
    return 0 if all(r.ok for r in reports) and not crashed else 1


def _print_proofs(reports, wall, stderr: bool = False) -> None:
    c = _console(stderr)
    t = Table(title=f"opcert proofs ({wall:.1f} s wall)")
    for col in ("operator", "dtype", "property", "verdict", "expected", "method", "time"):
        t.add_column(col)
    colour = {"proved": "green", "refuted": "red", "unknown": "yellow", "skipped": "dim", "checked": "yellow"}
    details = []
    for r in reports:
        for p in r.properties:
            verdict = f"[{colour[p.status]}]{p.status}[/{colour[p.status]}]"
            if not p.ok and not (p.status == "skipped" and p.expected == "not claimed"):  # nothing to establish
                verdict += " [red](!)[/red]"
            t.add_row(r.op, r.dtype, esc(p.name), verdict, p.expected, esc(_short(p.method)), f"{p.elapsed_s:.2f} s")
            if p.counterexample or p.note or (p.outside_condition or {}).get("counterexample"):
                details.append((r, p))
    c.print(t)
    for r, p in details:
        c.print(f"[bold]{esc(f'{r.op} {r.dtype} {p.name}')}[/bold]: {esc(p.statement)}")
        if p.counterexample and p.violations is not None:
            c.print(f"  {p.violations:,} of {p.inputs_checked:,} violate it; {esc(_ce_text(p.to_dict()))}")
        elif p.counterexample:
            c.print(f"  counterexample: {esc(json.dumps(p.counterexample))}")
        oc = p.outside_condition or {}
        if oc.get("counterexample"):
            c.print(f"  outside its condition ({oc['status']}): {esc(json.dumps(oc['counterexample']))}")
        if p.note:
            c.print(f"  note: {esc(p.note)}")


def _short(method: str) -> str:
    return method.split(";")[0].split(" (")[0][:60]


# ---- gate, diff, report -----------------------------------------------------------


def cmd_gate(args) -> int:
    if args.workers is not None:
        policy.workers(args.workers, "--workers")
    _outputs(args, files=("json", "junit"), dirs=("report",))
    try:
        config = load_config(args.config)
    except ConfigErrors as exc:  # every error of the file, listed in the --json result too
        listed = exc.to_dict()
        if args.json:
            _write(args.json, "--json", lambda: write_json_atomic(args.json, listed))
        raise
    if args.keyword is not None:
        config = select(config, args.keyword)
    baseline = load_gate(args.baseline) if args.baseline else None
    n = sum(len(c.dtypes) for c in config.checks)
    with Progress(f"gate {config.source}", n, "checks") as progress:
        result = run_gate(config, workers=args.workers, progress=progress.advance)
    data = result.to_dict()
    plots = {i: r.plot for i, r in enumerate(result.results)}
    _print_gate(data, stderr=args.json == "-")
    if args.json:
        _write(args.json, "--json", lambda: write_json_atomic(args.json, data))
    if args.junit:
        _write(args.junit, "--junit", lambda: write_text_atomic(args.junit, junit_xml(data)))
    if args.report:
        _write_reports(data, args.report, "--report", plots)
    _tell_ci(data, to_stderr=args.json == "-")
    failed = not result.ok
    if baseline is not None:
        found = regressions(baseline, data)
        for r in found:
            print(f"regression: {log(r, 2 * LIMIT)}", file=sys.stderr)
        failed = failed or bool(found)
    if result.internal_errors:
        print(
            f"opcert: internal error in {result.internal_errors} check(s); their results are in the report "
            "(please report it)",
            file=sys.stderr,
        )
        return 3
    return 1 if failed else 0


def _tell_ci(data, to_stderr: bool) -> None:
    """GitHub Actions: the job summary and one annotation per failing check (report.ci)."""
    summary = os.environ.get("GITHUB_STEP_SUMMARY")
    if summary:
        try:
            with open(summary, "a", encoding="utf-8") as f:
                f.write(ci.step_summary(data))
        except OSError as exc:  # the job summary is a courtesy: the gate's own outputs are written
            print(f"opcert: could not append to GITHUB_STEP_SUMMARY ({summary}): {exc}", file=sys.stderr)
    if os.environ.get("GITHUB_ACTIONS") == "true":
        stream = sys.stderr if to_stderr else sys.stdout  # --json - keeps standard output pure JSON
        for line in ci.annotations(data):
            print(line, file=stream)
        stream.flush()


def _print_gate(data, stderr: bool = False) -> None:
    c = _console(stderr)
    t = Table(title=esc(f"opcert gate: {data['config']} ({data['elapsed_s']:.1f} s)"))
    for col in ("check", "mode", "inputs", "max ULP", "budget", "properties", "result"):
        t.add_column(col)
    colour = {"pass": "green", "fail": "red", "skipped": "dim"}
    for ch in data["checks"]:
        a = ch.get("accuracy") or {}
        proofs = ch.get("proofs") or []
        req = ch["policy"]["proofs"]
        pv = f"{sum(p['status'] == 'proved' or bool(p.get('accepted')) for p in proofs)}/{len(req)}" if req else "-"
        t.add_row(
            esc(log(ch["name"], 200)),
            ch["mode"],
            f"{a.get('inputs_checked', 0):,}",
            repr(a["max_ulp"]) if a.get("max_ulp") is not None else "-",
            repr(ch["policy"]["max_ulp"]),
            pv,
            f"[{colour[ch['status']]}]{ch['status']}[/{colour[ch['status']]}]",
        )
    c.print(t)
    # a target's text (its name, its exception messages) is clipped, and none of its lines starts a line of the
    # log (report.text.log): a `::` command in it is not read by the CI system; rich breaks no line (soft_wrap)
    for ch in data["checks"]:
        if ch["status"] == "fail":
            c.print(f"[red]FAIL[/red] {esc(log(ch['name'], 200))}:", soft_wrap=True)
            for r in ch["reasons"]:
                c.print(f"  {esc(log(r))}", soft_wrap=True)
            for line in enforcement_lines(ch.get("enforcement")):
                c.print(f"  {esc(log(line))}", soft_wrap=True)
            c.print(f"  reproduce: {esc(log(ch['command']))}", soft_wrap=True)
        elif ch["status"] == "pass" and (ch.get("enforcement") or {}).get("waived"):
            for w in ch["enforcement"]["waived"]:
                c.print(
                    f"{esc(log(ch['name'], 200))}: property {esc(w['name'])} {w['status']} "
                    f"(waived: {esc(log(w['reason']))})",
                    soft_wrap=True,
                )
        elif ch["status"] == "skipped":
            c.print(f"skipped {esc(log(ch['name'], 200))}: {esc(log('; '.join(ch['reasons'])))}", soft_wrap=True)
    k = data["counts"]
    c.print(f"{k['pass']} passed, {k['fail']} failed, {k['skipped']} skipped")
    if data.get("verdict_note"):
        c.print(f"[red]FAIL[/red]: {esc(data['verdict_note'])}")


def cmd_schema(args) -> int:
    """`opcert schema`: the JSON Schema of opcert.toml (gating.schema)."""
    print(schema_text(), end="")
    return 0


def cmd_diff(args) -> int:
    found = regressions(load_gate(args.old), load_gate(args.new))
    if args.json:
        print(json.dumps({"regressions": found}, indent=2))
    else:
        for r in found:  # a check's reasons may hold a target's text (report.text.log)
            print(f"regression: {log(r, 2 * LIMIT)}")
        print(f"{len(found)} regression(s) between {args.old} and {args.new}")
    return 1 if found else 0


def _write_reports(data: dict, directory: str, flag: str, plots=None) -> list[str]:
    """The reports of a gate result in directory, with progress over its checks: the files written."""
    files = []
    with Progress(f"report {directory}", len(data["checks"]), "checks") as progress:
        _write(directory, flag, lambda: files.extend(write_reports(data, directory, plots, progress.advance)))
    return files


def cmd_paths(args) -> int:
    return cli_paths.cmd_paths(sys.modules[__name__], args)


def cmd_report(args) -> int:
    if not args.out and not args.summary:
        raise UsageError(
            "opcert report: give --out DIR (the full reports), --summary FILE (a short Markdown page), or both"
        )
    _outputs(args, files=("summary",), dirs=("out",))
    data = load_gate(args.results)
    files = []
    if args.out:
        files.extend(_write_reports(data, args.out, "--out"))
    if args.summary:
        _write(args.summary, "--summary", lambda: write_text_atomic(args.summary, summary_page(data)))
        files.append(args.summary)
    if args.json:
        print(json.dumps({"written": files}))
    else:
        for f in files:
            print(f)
    return 0


# ---- main ---------------------------------------------------------------------


def _int(flag):
    def parse(text):
        try:
            return int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} takes an integer (got {text!r})") from None

    parse.__name__ = "integer"
    return parse


def _float(flag):
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{flag} takes a number (got {text!r})") from None
        return v

    parse.__name__ = "number"
    return parse


def _target_options(s) -> None:
    s.add_argument(
        "--in-process",
        action="store_true",
        help="run the target in opcert's own process (faster; a target that exits or crashes then "
        "takes opcert down): by default every target but opcert runs in a supervised worker",
    )
    s.add_argument(
        "--target-timeout",
        type=_float("--target-timeout"),
        metavar="SECONDS",
        help="fail a target call that does not return within SECONDS (isolated targets)",
    )


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(
        prog="opcert",
        description="Formal specification and verification of activation operators.",
        epilog="Exit status: 0 every check passed (a target that does not support a combination is skipped, "
        "with the reason); 1 a check failed: a target crashed or returned a wrong dtype or shape, a NaN or "
        "infinity mismatch, an error above --max-ulp or a budget, a declared property refuted, or (gate, "
        "--require, prove) a required property not proved; 2 bad usage or configuration (the message says "
        "what is allowed); 3 an internal error of opcert (OPCERT_DEBUG=1 shows the traceback).",
    )
    p.add_argument("--version", action="version", version=f"opcert {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    sub.required = True

    s = sub.add_parser("ops", help="list the operator catalog, or one operator (opcert ops OP)")
    s.add_argument("op", nargs="?", help="one operator: its standards, attributes and properties")
    s.add_argument("--json", action="store_true", help="print the catalog (or the operator) as JSON")
    s.set_defaults(func=cmd_ops)

    dtypes = choices(FLOAT_FORMATS)
    s = sub.add_parser("ref", help="correctly rounded reference values")
    s.add_argument("op")
    s.add_argument("--dtype", default="float32", help=f"one of {dtypes} (integers for Shrink); default float32")
    s.add_argument("--attr", action="append", metavar="NAME=VALUE", help="attribute (ONNX or DirectML name)")
    s.add_argument(
        "--standard",
        help="whose definition: onnx, directml, sonnx (default: the operator's primary); "
        "tensor operators: onnx-1, onnx-11, onnx, directml, directml-1",
    )
    s.add_argument("--shape", help="tensor operators: the inputs' shape, such as 2,3 (default: one row)")
    s.add_argument("--axis", help="tensor operators, ONNX: the axis (default: the opset's, -1 or 1)")
    s.add_argument("--axes", help="tensor operators, DirectML's 1 forms: the Axes, such as 0,2")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.add_argument(
        "x",
        nargs="*",
        help="inputs: decimal, hex float, bit pattern (0x3c00), inf, nan (put -- before values such as -inf)",
    )
    s.set_defaults(func=cmd_ref)

    s = sub.add_parser("accuracy", help="ULP accuracy of a target against the reference")
    s.add_argument("op")
    s.add_argument("--dtype", required=True, help=f"one of {dtypes}")
    s.add_argument(
        "--target",
        default="opcert",
        help=f"what to measure: opcert (its own implementation; the default), a runtime "
        f"({', '.join(target_names())}), module:function (any f(x, **attrs) -> array of x's dtype and shape, "
        "imported from PYTHONPATH; numpy:NAME audits NumPy itself, e.g. numpy:tanh), or c:PATH:SYMBOL (a C "
        "kernel in a shared library: void SYMBOL(const T *x, T *y, size_t n, const float *attrs)). A Python "
        "callable itself (a function, lambda, bound method) is a target of opcert.measure and the pytest "
        "fixture opcert_check, which the command line cannot name",
    )
    s.add_argument("--attr", action="append", metavar="NAME=VALUE")
    s.add_argument("--standard")
    s.add_argument("--exhaustive", action="store_true", help="every input (16-bit formats; float32: all 2^32)")
    s.add_argument("--workers", type=_int("--workers"), help="processes for float32 sweeps (default: every core)")
    s.add_argument("--scheduler", help="run float32 sweep chunks on a Dask cluster: dask://HOST:PORT")
    s.add_argument(
        "--checkpoint",
        help="directory of finished chunks (default .opcert-cache/sweeps/KEY); running the same command again resumes",
    )
    s.add_argument(
        "--samples",
        type=_int("--samples"),
        help="stratified samples (default 100000 float32; float64 1000000, or 10000 where the operator's "
        "reference has no long double fast path on this host: the result says so)",
    )
    s.add_argument("--seed", type=_int("--seed"), default=0)
    s.add_argument("--max-ulp", type=_float("--max-ulp"), help="fail (exit 1) above this ULP error")
    s.add_argument(
        "--require",
        metavar="PROPS",
        help="judge as a gate check does (what a gate's reproduce line "
        "gives): PROPS (comma-separated), all or none must be established, other declared properties "
        "are reported but do not fail; needs --max-ulp",
    )
    s.add_argument(
        "--against",
        metavar="TARGET",
        help="judge as a gate check with `against`: the target's outputs compared bit for bit with another path "
        "of the same function (torch for torch.compile) on the same inputs; fails past --max-ulp-apart",
    )
    s.add_argument(
        "--max-ulp-apart",
        type=int,
        metavar="N",
        help="with --against: the most representable values the two outputs may be apart (default 0: same bits)",
    )
    s.add_argument(
        "--waive",
        action="append",
        metavar="PROPERTY[=REASON]",
        help="a declared property whose refutation fails nothing (repeatable): still measured and shown as "
        "'refuted (waived: REASON)'; with --require, dropped from what it requires",
    )
    s.add_argument(
        "--signed-zero",
        choices=("strict", "ignore"),
        help="with --require: whether a zero of the wrong sign fails (default strict)",
    )
    s.add_argument(
        "--subnormals",
        choices=("strict", "flush-allowed"),
        help="with --require: whether flushing subnormal outputs to zero fails (default strict)",
    )
    s.add_argument(
        "--accept-sampled-evidence",
        action="store_true",
        help="with --require: a required property checked on samples passes (default: only proved passes)",
    )
    s.add_argument(
        "--attr-sweep",
        action="store_true",
        help="run the check at every standard's defaults, the "
        "values of ONNX's backend tests, and a grid over each attribute's domain",
    )
    s.add_argument("--plot", metavar="FILE.svg", help="with --attr-sweep: max ULP over each attribute's grid, as SVG")
    s.add_argument(
        "--json", metavar="FILE", help="write the result as JSON ('-' for stdout; the table goes to stderr then)"
    )
    s.add_argument(
        "--isa",
        metavar="LEVEL",
        help="all: run the check once per ISA level the host has, where the "
        "target's library can be told its level ("
        + ", ".join(f"{sw.library}: {sw.variable}" for sw in isa_switches())
        + "), each in a fresh process; or one level's name; host (default): as the host picks. all "
        "also compares the levels' outputs bit for bit (every input of a 16-bit format; the check's "
        "samples of float32 and float64; a sample as large as the layout sample in a float32 sweep): the layout property is refuted, "
        "with a replayed input and both levels' outputs, where they differ",
    )
    # a level's process of --isa all: its outputs on the compared inputs (FILE: drawn by the parent) go to DIR
    # (opcert.isa.level_outputs); --isa-outputs-only: those alone, without a measurement
    s.add_argument("--isa-outputs", metavar="DIR", help=argparse.SUPPRESS)
    s.add_argument("--isa-inputs", metavar="FILE", help=argparse.SUPPRESS)
    s.add_argument("--isa-outputs-only", action="store_true", help=argparse.SUPPRESS)
    s.add_argument(
        "--layout-samples",
        type=_int("--layout-samples"),
        metavar="N",
        help="inputs per layout where the layouts are not enumerated (default 1024; 1,000,000 in a "
        "float32 sweep of the whole format; the layout property: lengths, positions, offsets, "
        "strides, threads)",
    )
    _target_options(s)
    s.set_defaults(func=cmd_accuracy)

    s = sub.add_parser("prove", help="z3 proofs of the declared properties")
    s.add_argument("op", nargs="?")
    s.add_argument(
        "--dtype",
        help="a float format: proofs about opcert's implementation in it "
        "(default: the exact specification, for every attribute value)",
    )
    s.add_argument("--attr", action="append", metavar="NAME=VALUE")
    s.add_argument("--standard")
    s.add_argument("--property", action="append", help="only this property (repeatable)")
    s.add_argument(
        "--rlimit",
        type=_int("--rlimit"),
        metavar="N",
        help="z3's resource units per query (its rlimit; never seconds, so a verdict does not depend on "
        "the host's load); default: each query family's calibrated budget",
    )
    s.add_argument("--timeout", help=argparse.SUPPRESS)  # removed: z3 runs under --rlimit (a clear error)
    s.add_argument("--all", action="store_true", help="every operator, the specification and every float dtype")
    s.add_argument(
        "--target",
        default="opcert",
        help=f"decide the properties on this target's outputs: every input of float16, bfloat16 and float32 "
        "(a proof for that target), samples of float64 (evidence). Targets as for opcert accuracy: opcert, "
        f"a runtime ({', '.join(target_names())}), module:function (numpy:NAME for NumPy's own), or "
        "c:PATH:SYMBOL (a C kernel)",
    )
    s.add_argument(
        "--samples",
        type=_int("--samples"),
        help="float64 samples for --target (default 1000000, or 10000 where the operator's reference has no "
        "long double fast path on this host)",
    )
    s.add_argument(
        "--enumerate",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="float32: decide what the provers leave unknown by running opcert's code on every float32 "
        "input (a sweep of all 2^32 per operator; the default with --all, where "
        "--no-enumerate leaves them unknown)",
    )
    _target_options(s)
    s.add_argument("--json", metavar="FILE", help="write the results as JSON ('-' for stdout)")
    s.set_defaults(func=cmd_prove)

    s = sub.add_parser("gate", help="run the accuracy gate (opcert.toml, [tool.opcert], or the built-in default)")
    s.add_argument(
        "--config",
        help="opcert.toml or pyproject.toml (default: ./opcert.toml, then "
        "./pyproject.toml [tool.opcert], then the built-in default)",
    )
    s.add_argument("--json", metavar="FILE", help="the result (schema opcert.gate/1)")
    s.add_argument("--junit", metavar="FILE", help="JUnit XML")
    s.add_argument("--report", metavar="DIR", help="gate.json, report.md and report.html with plots")
    s.add_argument("--baseline", metavar="FILE", help="a previous --json result: fail on any regression")
    s.add_argument("--workers", type=_int("--workers"), help="processes (default: every core)")
    s.add_argument(
        "-k",
        dest="keyword",
        metavar="EXPR",
        help="only the checks whose names match EXPR: words (matched in the name, its operator, dtype and "
        "target, ignoring case) joined by and, or, not and parentheses, as pytest's -k; e.g. -k 'tanh and not "
        "float16'",
    )
    s.set_defaults(func=cmd_gate)

    cli_paths.add_parser(sub, cmd_paths)

    s = sub.add_parser("schema", help="print the JSON Schema of opcert.toml (for editors; docs/opcert.schema.json)")
    s.set_defaults(func=cmd_schema)
    s = sub.add_parser("diff", help="regressions between two gate results (exit 1 on any)")
    s.add_argument("old")
    s.add_argument("new")
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_diff)

    s = sub.add_parser("report", help="write Markdown and HTML reports from a gate result")
    s.add_argument("results", help="a gate --json result")
    s.add_argument("--out", metavar="DIR", help="write gate.json, report.md (images/) and report.html there")
    s.add_argument(
        "--summary",
        metavar="FILE",
        help="write a short Markdown page: result, provenance, summary table, failing checks",
    )
    s.add_argument("--json", action="store_true")
    s.set_defaults(func=cmd_report)
    return p


def _terminate_as_interrupt(signum, frame):
    raise KeyboardInterrupt  # `kill` stops a sweep as cleanly as Ctrl-C: finished chunks stay on disk


class json_stdout:
    """With --json -: standard output carries the JSON alone. Whatever else is written there while opcert
    runs (a target's print, in this process or in a worker, which inherits the descriptor) goes to
    standard error; the JSON goes to the real standard output."""

    def __init__(self, active: bool):
        self.active = active
        self.saved_fd = None

    def __enter__(self):
        if not self.active:
            return self
        self.stream = sys.stdout
        try:
            fd = sys.stdout.fileno()
        except (AttributeError, OSError, ValueError):
            fd = None  # not a file (a test's capture): Python-level output only
        sys.stdout.flush()
        if fd == 1:
            self.saved_fd = os.dup(1)
            os.dup2(2, 1)
            self.stream = os.fdopen(self.saved_fd, "wb", closefd=False)
        io.JSON_STDOUT = self.stream
        self.old_stdout, sys.stdout = sys.stdout, sys.stderr
        return self

    def __exit__(self, *exc):
        if not self.active:
            return False
        sys.stdout = self.old_stdout
        io.JSON_STDOUT = None
        if self.saved_fd is not None:
            self.stream.flush()
            os.dup2(self.saved_fd, 1)
            os.close(self.saved_fd)
        return False


def _resumable(args) -> bool:
    """Whether the interrupted command keeps finished sweep chunks (the element-wise sweeps' checkpoints; a
    tensor operator's measurement and the pair sweep keep nothing)."""
    if args is None or getattr(args, "command", None) not in ("accuracy", "gate"):
        return False
    return args.command == "gate" or not is_tensor_operator(getattr(args, "op", ""))


def main(argv=None) -> int:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _terminate_as_interrupt)
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        extra = [e for e in extra if e != "--"]
        if extra:
            # `ref` takes its inputs anywhere on the line (argparse binds all
            # positionals at their first position); anything else is an error.
            flags = [e for e in extra if e.startswith("--")]
            if args.command != "ref" or flags:
                parser.error(f"unrecognized arguments: {' '.join(flags or extra)}")
            args.x = list(args.x) + extra
        with json_stdout(getattr(args, "json", None) == "-"):
            return args.func(args)
    except UsageError as exc:
        # a message may hold a target's text: clipped, no line a command (report.text.log)
        print(f"opcert: error: {log(exc, 4 * LIMIT)}", file=sys.stderr)
        return 2
    except OpcertError as exc:
        print(f"opcert: {log(exc, 4 * LIMIT)}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(
            "opcert: interrupted"
            + (
                "; finished sweep chunks are kept: run the same command again to resume"
                if _resumable(locals().get("args"))
                else ""
            ),
            file=sys.stderr,
        )
        return 130
    except BrokenPipeError:
        # the reader of our output went away (`opcert ops --json | head`): not an error of opcert. Python
        # would complain again flushing stdout at exit: point it at /dev/null
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # as a shell reports a process killed by SIGPIPE (128 + 13)
    except Exception as exc:  # a bug in opcert: say so in one line; OPCERT_DEBUG=1 shows the traceback
        if os.environ.get("OPCERT_DEBUG"):
            raise
        print(
            f"opcert: internal error: {type(exc).__name__}: {exc} (run with OPCERT_DEBUG=1 for the traceback, "
            "and please report it)",
            file=sys.stderr,
        )
        return 3


_hard_exit = os._exit  # taken at import: a target run in this process has its os._exit replaced while it runs


def entry() -> None:
    """The `opcert` command (the console script and `python -m opcert`): main(), then the process ends
    without tearing the interpreter down. Everything a command leaves is done when main returns: its files
    are written whole and closed (files.write_*_atomic), its worker processes joined, and the atexit handlers
    (logging's, multiprocessing's, tempfile's finalizers) run here first; what is skipped is the freeing of
    every module's objects (numba's and LLVM's among them), a short command's last quarter second or so
    (bench/README.md, 'Figures behind choices in the code'). main() itself returns, for callers in a process
    that goes on (the tests, a library)."""
    try:
        code = main()
    except SystemExit as exc:  # argparse's --help and usage errors
        code = exc.code
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    run_exit_handlers = getattr(atexit, "_run_exitfuncs", None)
    if run_exit_handlers is None:  # an interpreter without it: the ordinary exit
        raise SystemExit(code)
    run_exit_handlers()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader went away (main's own rule: 141 where nothing else failed)
            code = code or 141
        except (OSError, ValueError):  # a full disk, a closed stream: what could not be written is lost
            code = code or 1
    _hard_exit(code)
