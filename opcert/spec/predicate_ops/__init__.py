"""The predicate operators (spec.predicate): one module per operator, each `OPERATOR = PredicateOperator(...)` with
its reference (IEEE 754's classification, NumPy on the input's dtype) and opcert's implementation (from the bits)."""
