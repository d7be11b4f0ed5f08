"""What the proofs assume of the primitives: read from the registry (expr.primitives).

Over the reals (spec level) these are theorems of analysis. At the
implementation level they are the *contract* of the platform's binary64
functions (NumPy's and libm's): tests/test_contracts.py checks each clause.
"""

from opcert.expr.primitives import REGISTRY

PLATFORM_CONTRACT = {name: list(p.contract) + [f"error within {p.ulps:g} binary64 ULP"] for name, p in REGISTRY.items()}
