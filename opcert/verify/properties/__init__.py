"""The declared properties checked on a target's outputs, as a black box (checks.py), and the numba scans
they run over the exhaustive sweep's blocks (kernels.py)."""
