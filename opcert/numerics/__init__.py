"""The reference's numerics, below the catalog: exact evaluation with Arb (exact.py), the ball arithmetic
(ball_rules.py: its rules, written once; ball.py: over arrays, binary64 and long double; ball_compiled.py:
generated numba code for the float32 sweep), results on a midpoint (one_sided.py), error-free
transformations (errorfree.py), and the steps of the rounded outputs of a row of two (pair_steps.py: the
tensor operators' sweep of every pair)."""
