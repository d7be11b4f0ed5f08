"""glibc's vector atan and cosh on every binary32 argument: the platform contract opcert's float32 code assumes of
them where NumPy's loops are not AVX-512 (expr.primitives.platform_array), and their speed against NumPy's.

    .venv/bin/python bench/libmvec_binary32.py                # both functions, every binary32 value
    NPY_DISABLE_CPU_FEATURES="AVX512_ICL X86_V4" .venv/bin/python bench/libmvec_binary32.py --speed-only

For each function, over every finite binary32 value t of its domain (atan: both signs; cosh: t >= 0, as the
operators call it, cosh(|x|)), in increasing order of t, in blocks of 2^26 and across the blocks:
- pairs out of order (f(t1) > f(t2) for t1 < t2): the contract's "non-decreasing";
- NaN at a finite argument;
- atan: f(-t) != -f(t) bit for bit ("odd"), |f(t)| > pi/2 rounded to binary64 ("bounds"); cosh: f(t) < 1, and
  f(t) other than +inf from 711 on (where expr.primitives._NARROW_FILLED fills a block with +inf without the call);
- the values at +-0, +-inf and NaN the record states.
Then ns per value of the vector function, of the function opcert's narrow code calls (platform_array: the
binary32 test around it, and cosh's fill), and of NumPy's, over the same 2^24 random binary32 values in
[2^-8, 2^8] (both signs for atan), one core, best of three. The C library the figures hold for is printed. The contract's 4 ULPs (glibc's stated bound) is checked against
Arb in tests/test_libm_arrays.py.
"""

import argparse
import math
import platform
import time

import numpy as np

from opcert.expr import libm_arrays, primitives
from opcert.expr.primitives import _numpy_avx512

BLOCK = 1 << 26
PI_2 = math.pi / 2  # pi/2 rounded to binary64, the record's bound


def _values(lo: int, hi: int) -> np.ndarray:
    return np.arange(lo, hi, dtype=np.uint32).view(np.float32).astype(np.float64)


def check(name: str) -> dict:
    f = libm_arrays.on_binary32(name)
    out_of_order = parity = bounds = nan = not_inf = 0
    last = -math.inf
    first_bad = None
    for lo in range(0, 0x7F800000, BLOCK):  # the finite positive values (and +0), in increasing order
        t = _values(lo, min(lo + BLOCK, 0x7F800000))
        y = f(t)
        with np.errstate(invalid="ignore"):  # inf - inf past cosh's overflow
            steps = np.flatnonzero(np.diff(y) < 0)
        out_of_order += steps.size + int(y[0] < last)
        if steps.size and first_bad is None:
            first_bad = float(t[steps[0]])
        last = y[-1]
        nan += int(np.count_nonzero(np.isnan(y)))
        if name == "atan":
            parity += int(np.count_nonzero(f(-t).view(np.uint64) != (-y).view(np.uint64)))
            bounds += int(np.count_nonzero(np.abs(y) > PI_2))
        else:
            bounds += int(np.count_nonzero(y < 1))
            not_inf += int(np.count_nonzero((t >= 711.0) & (y != np.inf)))
    special = f(np.array([0.0, -0.0, np.inf, -np.inf, np.nan]))
    if name == "atan":
        specials_ok = (
            special[0] == 0
            and not np.signbit(special[0])
            and np.signbit(special[1])
            and special[2] == PI_2
            and special[3] == -PI_2
            and np.isnan(special[4])
        )
    else:
        specials_ok = special[0] == 1 and special[2] == np.inf and np.isnan(special[4])
    return {
        "values": 0x7F800000,
        "out_of_order": out_of_order,
        "first_out_of_order": first_bad,
        "parity_differs": parity if name == "atan" else None,
        "outside_bounds": bounds,
        "nan_at_finite": nan,
        "not_inf_from_711": not_inf if name == "cosh" else None,
        "specials_as_recorded": bool(specials_ok),
    }


def speed(name: str) -> tuple[float, float]:
    rng = np.random.default_rng(1)
    t = np.exp2(rng.uniform(-8, 8, 1 << 24)).astype(np.float32).astype(np.float64)
    if name == "atan":
        t *= rng.choice([-1.0, 1.0], t.size)
    f, g = libm_arrays.on_binary32(name), {"atan": np.arctan, "cosh": np.cosh}[name]
    narrow = primitives.platform_array(primitives.REGISTRY[name], 24, of_input=True)
    y = np.empty_like(t)
    best = {}
    for label, fn in (("vector", f), ("narrow", narrow), ("numpy", g)):
        runs = []
        for _ in range(3):
            t0 = time.perf_counter()
            fn(t, out=y)
            runs.append(time.perf_counter() - t0)
        best[label] = min(runs) / t.size * 1e9
    return best["vector"], best["narrow"], best["numpy"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--speed-only", action="store_true")
    args = ap.parse_args()
    print(
        f"C library: {' '.join(platform.libc_ver())}; {libm_arrays.status()}; NumPy's AVX-512 loops: {_numpy_avx512()}"
    )
    for name in libm_arrays.ON_BINARY32_NAMES:
        if libm_arrays.on_binary32(name) is None:
            print(f"{name}: no vector function here ({libm_arrays.status()})")
            continue
        if not args.speed_only:
            print(name, check(name))
        v, w, n = speed(name)
        print(f"{name}: {v:.2f} ns a value (vector), {w:.2f} ns (opcert's narrow code's), {n:.2f} ns (NumPy's)")


if __name__ == "__main__":
    main()
