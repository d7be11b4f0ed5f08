"""The library functions the catalog declares for an operator (Operator.runtimes: "torch", "jax" ->
RuntimeMap), shared by the runtimes that call a function rather than run a model (torch, JAX)."""

from __future__ import annotations

import importlib
from fractions import Fraction

from opcert.errors import UsageError
from opcert.numerics.exact import eval_rational
from opcert.spec.attrs import resolve, user_value


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
        dropped = _not_taken(op, m, attrs)
        if dropped:
            why = why or dropped
            continue
        return m, None
    return None, why or f"{maps[0].function} is not {op.name} at these attributes"


def _attr_names(expr, out: set) -> set:
    if expr is not None:
        if getattr(expr, "op", None) == "attr":
            out.add(expr.name)
        for a in getattr(expr, "args", ()) or ():
            _attr_names(a, out)
    return out


_PLAIN: dict = {}


def _plain(op, name: str) -> frozenset:
    """The values of an attribute at which a function that does not take it computes the operator: the value each
    standard having it gives by default (DirectML's ScaleBias: scale 1, bias 0; HardSwish's 1/6 and 1/2)."""
    key = (op.name, name)
    if key not in _PLAIN:
        values = set()
        for std in op.standards:
            if std.has(name):
                try:
                    values.add(resolve(op, {}, std.key)[name])
                except UsageError:  # a standard that gives the attribute no value: none is plain
                    pass
        _PLAIN[key] = frozenset(values)
    return _PLAIN[key]


def _not_taken(op, m, attrs: dict) -> str | None:
    """Why the function cannot compute the operator at these attributes because it does not take one of them
    (torch.tanh has no ScaleBias: with scale = 2 it would be measured as tanh(x), against tanh(2x)); None where
    each attribute it does not take is at its standard's value."""
    taken = set(m.positional) | _attr_names(m.condition, set())
    for kw, spec in m.kwargs.items():
        if isinstance(spec, str):
            taken.add(spec)
        elif isinstance(spec, tuple) and spec[0] == "tensor":
            taken.add(spec[1])
        elif isinstance(spec, tuple) and spec[0] == "choice":
            taken.add(kw)
    for name, value in attrs.items():
        if name in taken or value in _plain(op, name):
            continue
        shown = " or ".join(str(user_value(op, name, v)) for v in sorted(_plain(op, name))) or "none"
        return (
            f"{m.function} takes no {name}: it computes {op.name} at {name} = {shown} only "
            f"(given {user_value(op, name, value)})"
        )
    return None


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
