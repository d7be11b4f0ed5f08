"""What the proofs assume of exp, expm1 and tanh.

Over the reals (spec level) these are true theorems of analysis. At the
implementation level they are the *contract* of the platform's binary64
functions (NumPy's, which call libm or SIMD kernels): tests/test_contracts.py
checks it on every binary64 value widened from float16 and bfloat16 and on 10**6
random binary64 values, and bench/ on every binary32 value.
"""

SPEC_AXIOMS = {
    "tanh": ["-1 < tanh(t) < 1", "tanh(0) = 0, and tanh(t) has the sign of t", "tanh is increasing",
             "tanh is odd", "0 <= tanh(t) <= t for t >= 0"],
    "exp": ["exp(t) > 0", "exp(t) >= 1 + t", "exp(0) = 1", "exp is increasing"],
    "expm1": ["expm1(t) > -1", "expm1(t) >= t", "expm1(0) = 0", "expm1 is increasing"],
}

PLATFORM_CONTRACT = {
    "tanh": ["-1 <= tanh(t) <= 1", "tanh(+-0) = +-0, and tanh(t) has the sign of t",
             "tanh is non-decreasing", "tanh is odd", "tanh(+-inf) = +-1", "tanh(NaN) is NaN"],
    "exp": ["exp(t) >= 0", "exp(0) = 1", "exp is non-decreasing", "exp(NaN) is NaN"],
    "expm1": ["expm1(t) >= -1", "expm1(+-0) = +-0, and expm1(t) has the sign of t",
              "expm1 is non-decreasing", "expm1(-inf) = -1", "expm1(NaN) is NaN"],
}
