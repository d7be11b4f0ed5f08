"""Verification of a kernel against the specification, in rooms by what they decide:

accuracy/    measure(): ULP accuracy of any target and its properties on the same outputs (the public
             entry); the exhaustive binary32 sweep (sweep, sweep_kernel), its statistics, the input sets,
             attribute sweeps
paths/       the `layout` property: every code path of a kernel (lengths, positions, strides, mixed
             vectors, long calls, threads)
properties/  the declared properties checked on a target's outputs (black box), and their scan kernels
tensor/      the tensor operators (Softmax, ...): rows, axes, layouts, pair enumeration, row properties
proofs/      z3 proofs at the specification and implementation levels, enumeration where z3 cannot decide
result.py    the verdict every room returns (PropertyResult)
ulp.py       the ULP arithmetic (DESIGN.md's definition), exact and vectorised

Each room imports only the rooms below it in pyproject.toml's "verify's rooms" contract.
"""
