"""The tensor operators (Softmax, LogSoftmax, Hardmax): rows and axes (measure.py), pair enumeration
(pairs.py, pairs_kernel.py), layouts (layouts.py), row properties (properties.py), the target call
(calls.py)."""
