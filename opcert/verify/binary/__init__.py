"""The checks of the binary element-wise operators (spec.binary): pairs (x, y) through a target against the
correctly rounded reference, sampled (pairs) or every pair of a 16-bit format (exhaustive)."""
