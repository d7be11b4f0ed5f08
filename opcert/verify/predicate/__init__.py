"""The checks of the predicate operators (spec.predicate: IsNaN, IsInf): truth values through a target against IEEE
754's classification, on every pattern of a 16-bit format, every one of float32's 2^32 (exhaustive), or samples
that hold every special class of pattern (float32 without --exhaustive, float64)."""
