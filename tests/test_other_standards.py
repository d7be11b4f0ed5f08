"""opcert's code under every operator's other standards (the built-in gate checks the primary one), at each standard's
attribute sweep sets (verify.accuracy.attr_sweep.attribute_sets), in bfloat16, float16 and float32 where the standard
has them: the reference's values, bit for bit, on sampled inputs. The slow run's gate over every 16-bit input is
tests/test_own_attr_sweep.py -k other_standards; bench/other_standards.py is the wider probe (3,000 + 2,000 inputs a
set). Before 34fbd25 such sets gave NaN at +-inf, -inf for log of tiny values and reference crashes (bench/README.md,
"The other standards' attribute sets")."""

import ml_dtypes
import numpy as np
import pytest

import opcert
from opcert.errors import UsageError
from opcert.formats import get_format
from opcert.verify.accuracy.attr_sweep import attribute_sets
from opcert.verify.ulp import ordinal_distance

DTYPES = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float32": np.dtype(np.float32), "float16": np.dtype(np.float16)}
BITS = {2: np.uint16, 4: np.uint32}
SPECIAL = [0, -0.0, 1, -1, 0.5, -0.5, 2, -2, np.inf, -np.inf, np.nan]
OTHERS = [
    pytest.param(op.name, st.key, id=f"{op.name}-{st.key}")
    for op in opcert.operators()
    for st in op.standards
    if not st.rounded_scale_bias and st.key != op.primary
]


def compare(op, standard: str, rng, randoms: int, uniforms: int) -> tuple[int, list[str]]:
    """opcert.run against opcert.reference at each attribute set of the standard and each of its formats, on
    `randoms` random bit patterns, `uniforms` uniform values in [-8, 8] and the special values, zeros' signs
    included: (how many set-and-format pairs were compared, each one that differed or where either raised). A set
    outside an attribute's domain is refused by both and skipped, as the sweep skips it. bench/other_standards.py
    runs the same comparison wider."""
    st = op.standard(standard)
    compared, wrong = 0, []
    for s in attribute_sets(op, standard):
        for dname, dt in DTYPES.items():
            if not any(dname in sp.dtypes for sp in st.support):
                continue
            u = BITS[dt.itemsize]
            xs = np.concatenate(
                [
                    rng.integers(0, np.iinfo(u).max, randoms, dtype=u, endpoint=True).view(dt),
                    rng.uniform(-8, 8, uniforms).astype(dt),
                    np.array(SPECIAL, dt),
                ]
            )
            try:
                r = opcert.reference(op, xs, standard=standard, **s.attrs)
                y = opcert.run(op, xs, standard=standard, **s.attrs)
            except UsageError:
                continue
            except Exception as e:  # noqa: BLE001 - the code or the reference raising is a finding, described
                wrong.append(f"{s.attrs} {dname}: raised {type(e).__name__}: {str(e)[:120]}")
                continue
            d = ordinal_distance(y, r, get_format(dname))
            y64, r64 = y.astype(np.float64), r.astype(np.float64)
            d[(y64 == 0) & (r64 == 0) & (np.signbit(y64) != np.signbit(r64))] = 1  # ordinal_distance: +0 = -0
            compared += 1
            if d.max() > 0:
                k = int(np.argmax(d))
                wrong.append(
                    f"{s.attrs} {dname}: {int((d > 0).sum())} not the reference's, x = {float(xs[k])!r} gives "
                    f"{float(y[k])!r}, {float(r[k])!r} due"
                )
    return compared, wrong


@pytest.mark.parametrize("name,standard", OTHERS)
def test_opcerts_code_is_the_reference_at_every_attribute_set_of_the_standard(name, standard):
    """1,000 random bit patterns, 500 uniform values in [-8, 8] and the special values, per set and format; zeros'
    signs included."""
    rng = np.random.default_rng(len(name) * 31 + len(standard))
    compared, wrong = compare(opcert.get_operator(name), standard, rng, 1000, 500)
    assert compared > 0
    assert not wrong, wrong[:5]
