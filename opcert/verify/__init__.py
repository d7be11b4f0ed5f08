"""Verification: ULP accuracy measurement (and, later, proofs)."""
