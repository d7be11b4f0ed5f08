"""The library functions the catalog declares for an operator (Operator.runtimes: "torch", "jax" ->
RuntimeMap), shared by the runtimes that call a function rather than run a model (torch, JAX)."""

from __future__ import annotations

import importlib
from fractions import Fraction

from opcert.numerics.exact import eval_rational
from opcert.spec.attrs import user_value


def runtime_function(op, library: str, attrs: dict):
    """(the library's function with the attributes bound, None) where the
    operator declares a RuntimeMap for `library` whose condition these
    attributes meet; else (None, why not)."""
    maps = op.runtimes.get(library)
    if maps is None:
        return None, f"opcert maps no {library} function to {op.name} ({op.summary})"
    maps = maps if isinstance(maps, tuple) else (maps,)
    why = ""
    for m in maps:
        if m.condition is not None and not eval_rational(m.condition, Fraction(0), attrs):
            why = why or m.why_not
            continue
        return m, None
    return None, why or f"{maps[0].function} is not {op.name} at these attributes"


def resolve_function(dotted: str):
    """The object at a dotted path (torch.nn.functional.elu): the longest importable module, then attributes."""
    parts = dotted.split(".")
    for i in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for p in parts[i:]:
            obj = getattr(obj, p)
        return obj
    raise ImportError(dotted)


def arguments(op, m, attrs, tensor):
    """The RuntimeMap's positional and keyword arguments at these attributes;
    `tensor(value)` makes a one-element tensor in the input's dtype."""
    args = [user_value(op, a, attrs[a]) for a in m.positional]
    kwargs = {}
    for kw, spec in m.kwargs.items():
        if isinstance(spec, str):
            if spec in attrs:  # absent: the check's standard lacks it (ONNX Softplus has no steepness), and
                kwargs[kw] = user_value(op, spec, attrs[spec])  # the library's default is that standard's value
        elif isinstance(spec, tuple) and spec[0] == "tensor":
            kwargs[kw] = tensor(float(attrs[spec[1]]))
        elif isinstance(spec, tuple) and spec[0] == "choice":  # the library's value for each choice of `kw`
            kwargs[kw] = spec[1][user_value(op, kw, attrs[kw])]
        else:
            kwargs[kw] = spec
    return args, kwargs
