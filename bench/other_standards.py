"""opcert's own code on every operator's other standards (not the primary one the built-in gate checks), at the
attribute sweep's sets, against the reference: a sampled probe.

    .venv/bin/python bench/other_standards.py

Per operator, standard, attribute set (verify.accuracy.attr_sweep.attribute_sets) and format (bfloat16, float16,
float32 where the standard has it): 3,000 random bit patterns, 2,000 uniform values in [-8, 8] and the special
values (+-0, +-1/2, +-1, +-2, +-inf, NaN). Prints each set where a value is not the reference's (or where either
raised), and how many. The figures of bench/README.md ("The other standards' attribute sets")."""

import ml_dtypes
import numpy as np

import opcert
from opcert.errors import UsageError
from opcert.formats import get_format
from opcert.verify.accuracy.attr_sweep import attribute_sets
from opcert.verify.ulp import ordinal_distance

DTYPES = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float32": np.dtype(np.float32), "float16": np.dtype(np.float16)}
BITS = {2: np.uint16, 4: np.uint32}
SPECIAL = [0, -0.0, 1, -1, 0.5, -0.5, 2, -2, np.inf, -np.inf, np.nan]


def main():
    rng = np.random.default_rng(4)
    wrong = checked = 0
    for op in opcert.operators():
        for st in op.standards:
            if st.rounded_scale_bias or st.key == op.primary:
                continue
            for s in attribute_sets(op, st.key):
                for dname, dt in DTYPES.items():
                    if not any(dname in sp.dtypes for sp in st.support):
                        continue
                    u = BITS[dt.itemsize]
                    xs = np.concatenate(
                        [
                            rng.integers(0, np.iinfo(u).max, 3000, dtype=u, endpoint=True).view(dt),
                            rng.uniform(-8, 8, 2000).astype(dt),
                            np.array(SPECIAL, dt),
                        ]
                    )
                    try:
                        y = opcert.run(op, xs, standard=st.key, **s.attrs)
                        r = opcert.reference(op, xs, standard=st.key, **s.attrs)
                    except UsageError:
                        continue  # outside the attribute's domain
                    except Exception as e:  # noqa: BLE001 - a probe: any crash is a finding, printed
                        wrong += 1
                        print(f"{op.name} {st.key} {s.attrs} {dname}: raised {type(e).__name__}: {str(e)[:120]}")
                        continue
                    checked += 1
                    d = ordinal_distance(y, r, get_format(dname))
                    k = int(np.argmax(d))
                    if d[k] > 0:
                        wrong += 1
                        print(
                            f"{op.name} {st.key} {s.attrs} {dname}: {int((d > 0).sum())} not the reference's, "
                            f"at x = {float(xs[k])!r}: {float(y[k])!r} against {float(r[k])!r}"
                        )
    print(f"{wrong} sets wrong or raising; {checked} compared")


if __name__ == "__main__":
    main()
