"""The accuracy measurement: measure() (measure.py), the exhaustive binary32 sweep (sweep.py, its
numba kernel sweep_kernel.py), the per-element comparison and its statistics (stats.py, classify.py), the
input sets (inputs.py), and measure() over a grid of attribute values (attr_sweep.py)."""
