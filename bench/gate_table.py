"""Max ULP error of opcert's implementation per operator and dtype, from a gate
result (`opcert gate --json F`; `make gate` writes build/gate/gate.json):
python bench/gate_table.py build/gate/gate.json"""

import json
import sys

d = json.load(open(sys.argv[1] if len(sys.argv) > 1 else "build/gate/gate.json"))
dts = ("float16", "bfloat16", "float32", "float64")
rows = {}
for c in d["checks"]:
    a = c.get("accuracy") or {}
    if a.get("max_ulp") is None:
        continue
    rows.setdefault(c["op"], {})[c["dtype"]] = (a["max_ulp"], a["correctly_rounded"], a["inputs_checked"], c["status"])
print("| operator | " + " | ".join(dts) + " |")
print("|---|" + "---|" * len(dts))
for op in sorted(rows):
    cells = []
    for dt in dts:
        if dt not in rows[op]:
            cells.append("-")
            continue
        m, cr, n, st = rows[op][dt]
        cells.append(f"{m:.10g} ({cr:,}/{n:,} CR){'' if st == 'pass' else ' **' + st + '**'}")
    print(f"| {op} | " + " | ".join(cells) + " |")
