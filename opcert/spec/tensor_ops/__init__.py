"""The tensor operators (they reduce over axes), one module per operator, as spec/ops/ holds the element-wise ones."""
