"""opcert's own code on every operator's other standards (not the primary one the built-in gate checks), at the
attribute sweep's sets, against the reference: a sampled probe.

    .venv/bin/python bench/other_standards.py

Per operator, standard, attribute set (verify.accuracy.attr_sweep.attribute_sets) and format (bfloat16, float16,
float32 where the standard has it): 3,000 random bit patterns, 2,000 uniform values in [-8, 8] and the special
values (+-0, +-1/2, +-1, +-2, +-inf, NaN), zeros' signs included: tests/test_other_standards.py's comparison,
wider. Prints each set where a value is not the reference's (or where either raised), and how many. The figures of
bench/README.md ("The other standards' attribute sets")."""

import os
import sys

import numpy as np

import opcert

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests"))
from test_other_standards import compare  # noqa: E402 - the test's comparison, beside it in tests/


def main():
    rng = np.random.default_rng(4)
    wrong = checked = 0
    for op in opcert.operators():
        for st in op.standards:
            if st.rounded_scale_bias or st.key == op.primary:
                continue
            n, bad = compare(op, st.key, rng, 3000, 2000)
            checked += n
            wrong += len(bad)
            for line in bad:
                print(f"{op.name} {st.key} {line}")
    print(f"{wrong} sets wrong or raising; {checked} compared")


if __name__ == "__main__":
    main()
