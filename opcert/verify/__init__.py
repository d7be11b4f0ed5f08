"""Verification of a kernel against the specification.

accuracy     measure(): ULP accuracy of any target, its properties on the same outputs (the public entry)
sweep        the exhaustive binary32 sweep: chunks in workers, checkpoints, resume
stats        the per-element comparison with the reference (float_stats) and its mergeable Stats
ulp          the ULP arithmetic (DESIGN.md's definition), exact and vectorised
inputs       the inputs of a measurement: every value of a 16-bit format, stratified samples
properties   the declared properties checked on a target's outputs (black box)
layout       the `layout` property: every code path of a kernel (lengths, positions, strides, threads)
attr_sweep   measure() over a grid of attribute values
proofs/      z3 proofs at the specification and implementation levels, enumeration where z3 cannot decide
"""
