"""The library functions the catalog declares for torch and JAX compute the operator only at the attributes they
take: an attribute the function does not take (DirectML's ScaleBias, HardSwish's alpha and beta, Round's
rounding mode, Softplus's steepness) must be at its standard's value, or the runtime skips the check with the
reason, instead of measuring torch.tanh(x) against tanh(2 x) and calling torch wrong."""

from fractions import Fraction

import pytest

from opcert.spec import get_operator, operators
from opcert.spec.attrs import resolve
from opcert.targets.runtimes.functions import runtime_function


@pytest.mark.parametrize(
    "op, standard, given, says",
    [
        ("Tanh", "directml", {"scale": 2}, "torch.tanh takes no scale: it computes Tanh at scale = 1.0 only"),
        ("Exp", "directml", {"bias": 0.5}, "torch.exp takes no bias"),
        ("HardSwish", "directml", {"alpha": 0.25}, "hardswish takes no alpha"),
        ("Round", "directml", {"rounding_mode": "toward_zero"}, "halves_to_nearest_even only (given toward_zero)"),
        ("Softplus", "directml-parametric", {"beta": 3}, "softplus takes no beta"),
    ],
)
def test_an_attribute_the_function_does_not_take_makes_the_runtime_skip(op, standard, given, says):
    o = get_operator(op)
    m, why = runtime_function(o, "torch", resolve(o, given, standard))
    assert m is None and says in why
    m, why = runtime_function(o, "torch", resolve(o, {}, standard))  # at the standard's own values: measured
    assert m is not None and why is None


def test_every_declared_function_is_measured_at_each_standards_own_attributes():
    """The rule refuses nothing the catalog measured before at the standards' values: each operator with a torch
    or JAX function keeps it under every standard (where its declared condition holds there)."""
    for o in operators():
        for library in o.runtimes:
            for std in o.standards:
                try:
                    attrs = resolve(o, {}, std.key)
                except Exception:  # noqa: BLE001 - a standard that needs an attribute given: nothing to check
                    continue
                m, why = runtime_function(o, library, attrs)
                assert m is not None or "takes no" not in why, (o.name, library, std.key, why)


def test_a_scale_of_one_and_a_bias_of_zero_are_the_plain_function():
    o = get_operator("Sin")
    m, why = runtime_function(o, "jax", {"scale": Fraction(1), "bias": Fraction(0)})
    assert m.function == "jax.numpy.sin" and why is None
