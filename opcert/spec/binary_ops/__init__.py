"""The binary element-wise operators (spec.binary), one module per operator, as spec/ops/ holds the unary ones."""
