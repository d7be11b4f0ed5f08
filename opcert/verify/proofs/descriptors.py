"""The descriptor validator against the standards' tables.

The tables of the catalog become a z3 formula over (feature level, input and
output data type, input and output dimension count, equal sizes, in place).
The validator (opcert.impl.descriptor) is run on every descriptor of that
finite space (12 x 12 data types, dimension counts 0 to 9, sizes equal or not,
in place or not, at every level the tables name and one before the first);
z3 then proves that the formula and the set the validator accepts are the same
set (two queries, both unsat), and lists what each level rejects that the next
level accepts.
"""

from __future__ import annotations

import itertools
import time

import z3

from opcert.impl.descriptor import TensorDesc, violations
from opcert.verify.proofs.common import attribute, check, decide, solver_for, units_spent
from opcert.verify.result import PropertyResult

DTYPES = (
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
)
MAX_RANK = 9


def _levels(std) -> list[str]:
    before = "0" if std.key == "onnx" else "0.0"
    return (
        [before]
        + [s.since for s in std.support]
        + ([] if std.key == "onnx" else [f"{int(std.support[-1].since.split('.')[0]) + 1}.0"])
    )


def _spec_formula(std, levels, v):
    lvl, din, dout, rin, rout, same, inplace = v
    rows = []
    for li, level in enumerate(levels):
        sup = std.support_at(level)
        if sup is None:
            continue
        dt_ok = z3.Or(*[din == DTYPES.index(d) for d in sup.dtypes])
        rank_ok = z3.BoolVal(True) if sup.ranks is None else z3.And(rin >= sup.ranks[0], rin <= sup.ranks[1])
        rows.append(z3.And(lvl == li, dt_ok, rank_ok))
    return z3.And(
        z3.Or(*rows) if rows else z3.BoolVal(False),
        din == dout,
        rin == rout,
        same,
        z3.Or(z3.Not(inplace), z3.BoolVal(std.in_place)),
    )


def prove_descriptors(op, standard_key: str, rlimit: int | None = None) -> PropertyResult:
    std = op.standard(standard_key)
    since = units_spent()
    t0 = time.perf_counter()
    levels = _levels(std)
    accepted = []
    for li, level in enumerate(levels):
        for din, dout in itertools.product(range(len(DTYPES)), repeat=2):
            for rin, rout in itertools.product(range(MAX_RANK + 1), repeat=2):
                for same in (True, False) if rin == rout and rin > 0 else (rin == rout,):
                    for inplace in (False, True):
                        a = TensorDesc(DTYPES[din], (2,) * rin)
                        b = TensorDesc(DTYPES[dout], (2,) * rout if same else (3,) * rout)
                        if not violations(op, a, b, standard=standard_key, level=level, in_place=inplace):
                            accepted.append((li, din, dout, rin, rout, same, inplace))
    enum_s = time.perf_counter() - t0
    v = z3.Ints("lvl din dout rin rout") + z3.Bools("same inplace")
    lvl, din, dout, rin, rout, same, inplace = v
    domain = z3.And(
        lvl >= 0,
        lvl < len(levels),
        din >= 0,
        din < len(DTYPES),
        dout >= 0,
        dout < len(DTYPES),
        rin >= 0,
        rin <= MAX_RANK,
        rout >= 0,
        rout <= MAX_RANK,
        z3.Implies(z3.Or(rin != rout, rin == 0), same == (rin == rout)),
    )
    spec = _spec_formula(std, levels, v)
    impl = z3.Or(*[z3.And(*[t == c for t, c in zip(v, tup)]) for tup in accepted]) if accepted else z3.BoolVal(False)
    verdicts, why = [], []
    for q in (z3.And(domain, spec, z3.Not(impl)), z3.And(domain, z3.Not(spec), impl)):
        r, model, _, reason = decide([q], "descriptors", rlimit)
        verdicts.append((r, model))
        why += [f"z3: {reason}"] if reason else []
    res = PropertyResult(
        f"descriptors:{standard_key}",
        "descriptors",
        f"the validator accepts exactly the descriptors {standard_key}'s tables allow",
        "unknown",
        "z3 equivalence of the tables' formula and the validator's accepted set "
        f"over the whole finite descriptor space ({len(levels)} levels)",
        time.perf_counter() - t0,
    )
    if all(r == z3.unsat for r, _ in verdicts):
        res.status = "proved"
    elif any(r == z3.sat for r, _ in verdicts):
        r, model = next((r, m) for r, m in verdicts if r == z3.sat)
        vals = [model.eval(t, model_completion=True) for t in v]
        res.status = "refuted"
        res.counterexample = {
            "level": levels[vals[0].as_long()],
            "input_dtype": DTYPES[vals[1].as_long()],
            "output_dtype": DTYPES[vals[2].as_long()],
            "input_rank": vals[3].as_long(),
            "output_rank": vals[4].as_long(),
            "same_sizes": z3.is_true(vals[5]),
            "in_place": z3.is_true(vals[6]),
            "replayed": True,
        }
    res.note = (
        f"{len(accepted)} descriptors accepted; enumeration {enum_s:.1f} s. "
        + level_changes(std, levels, v, spec, domain, rlimit)
        + "".join(f". {w}" for w in why)
    )
    return attribute(res, since)


def level_changes(std, levels, v, spec, domain, rlimit: int | None = None) -> str:
    """What each level rejects that the next accepts, by (data type, dimension count)."""
    lvl, din, dout, rin, rout, same, inplace = v
    parts = []
    for li in range(len(levels) - 1):
        here = z3.substitute(spec, (lvl, z3.IntVal(li)))
        nxt = z3.substitute(spec, (lvl, z3.IntVal(li + 1)))
        s = solver_for([domain, nxt, z3.Not(here), inplace == False])  # noqa: E712
        found = {}
        while check(s, "descriptor-levels", rlimit)[0] == z3.sat:
            m = s.model()
            d, r = DTYPES[m.eval(din).as_long()], m.eval(rin).as_long()
            found.setdefault(d, []).append(r)
            s.add(z3.Or(din != m.eval(din), rin != m.eval(rin)))
        if found:
            desc = "; ".join(f"{d} rank {_ranges(sorted(found[d]))}" for d in DTYPES if d in found)
            parts.append(f"level {levels[li]} rejects what {levels[li + 1]} accepts: {desc}")
    return ". ".join(parts)


def _ranges(rs):
    out, start = [], rs[0]
    for a, b in zip(rs, rs[1:] + [None]):
        if b != a + 1:
            out.append(str(start) if start == a else f"{start}-{a}")
            start = b
    return ",".join(out)
