"""Print the Markdown table of opcert's own accuracy (README, 'What the implementation achieves').

    .venv/bin/python bench/accuracy_table.py
Exhaustive for float16 and bfloat16, stratified samples (with hard cases) for
float32 (100,000) and float64 (10,000); default attributes; seed 0.
"""

from opcert.spec import operators
from opcert.verify.accuracy.measure import measure

DTYPES = ("float16", "bfloat16", "float32", "float64")


def main():
    print("| operator | " + " | ".join(DTYPES) + " |")
    print("|---|" + "---|" * len(DTYPES))
    for op in operators():
        cells = []
        for dt in DTYPES:
            mode = "exhaustive" if dt in ("float16", "bfloat16") else "sample"
            r = measure(op.name, "opcert", dt, mode)
            cells.append(f"{r.max_ulp!r} ({r.correctly_rounded:,}/{r.inputs_checked:,} CR)")
        print(f"| {op.name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
