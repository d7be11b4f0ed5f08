"""opcert: formal specification and verification of element-wise activation operators.

Library API (the CLI is a thin layer over it):

    opcert.operators(), opcert.get_operator(name)    the catalog
    opcert.reference(op, x, **attrs)                  the correctly rounded reference
    opcert.run(op, x, out=None, **attrs)              opcert's implementation
    (a tensor operator, Softmax, LayerNormalization, ..., takes axis= or axes= besides standard= and its
    attributes, epsilon=: opcert.spec.tensor_operators())
    opcert.measure(op, target, dtype, inputs, options, attrs=...)
                                                      ULP accuracy of any target, and its properties
    opcert.given_outputs(x, y)                        outputs computed elsewhere, as a target
    opcert.Options(samples=..., seed=..., ...)        how a measurement is made
    opcert.prove(op, dtype=None, attrs=None, ...)     the declared properties: z3, enumeration, samples
    opcert.gate(config=None, ...)                     a CI gate: every check of a configuration, judged

A check that could not be done is a failure with its reason, never a pass:
see README.md ("How to read a report").
"""

from opcert._version import __version__  # noqa: E402
from opcert.errors import OpcertError, TargetFailure, UsageError  # noqa: E402
from opcert.options import Options  # noqa: E402
from opcert.spec import get_operator, operators  # noqa: E402
from opcert.spec.reference import reference  # noqa: E402
from opcert.targets.function import TableTarget  # noqa: E402  (it loads neither numba nor z3)

# The four entry points below import their layer when called: `import opcert` (and so the pytest plugin, which
# pytest loads in every session on a host where opcert is installed) loads neither numba nor z3.


def run(op, x, *, out=None, standard=None, **attrs):
    """opcert's implementation of `op` on the tensor x (see opcert.impl.run)."""
    from opcert.impl.run import run as _run  # lazy: see the note above

    return _run(op, x, out=out, standard=standard, **attrs)


def measure(op, target="opcert", dtype="float32", inputs="sample", options=None, *, attrs=None, **keywords):
    """ULP accuracy of `target` against the reference, and the declared
    properties checked on the same outputs (see opcert.verify.accuracy.measure.measure).
    options: an opcert.Options (how: samples, seed, workers, ...); attrs: the
    operator's attributes. Keywords are options where they name one, else
    attributes (one that names both is refused)."""
    from opcert.verify.accuracy.measure import measure as _measure  # lazy: see the note above

    return _measure(op, target, dtype, inputs, options, attrs=attrs, **keywords)


def prove(op, dtype=None, attrs=None, properties=None, rlimit=None, standard=None, **kwargs):
    """Proofs of the declared properties (see opcert.verify.proofs.prove); rlimit: z3's resource units
    per query (default: each query family's budget), never seconds."""
    from opcert.verify.proofs import prove as _prove  # lazy: see the note above

    return _prove(op, dtype, attrs, properties, rlimit, standard, **kwargs)


def given_outputs(x, y, name="given outputs"):
    """Outputs a kernel already produced, as a target: opcert.measure(op, opcert.given_outputs(x, y), dtype,
    inputs) measures y against the reference at x (every input measured must be in x). No kernel is called,
    so the layout property is skipped and says why (targets.function.TableTarget)."""
    return TableTarget(x, y, name)


def gate(config=None, *, workers=None, keyword=None):
    """Run a gate: `config` is a path (opcert.toml or pyproject.toml), a
    GateConfig, or None (./opcert.toml, ./pyproject.toml [tool.opcert], else
    the built-in default over the whole catalog). keyword: only the checks
    whose names match this expression, as `opcert gate -k` reads it
    ("tanh and not float16"). Returns a GateResult (`.ok`, `.to_dict()`)."""
    from opcert.gating import GateConfig, load_config, run_gate, select  # lazy: see the note above

    cfg = config if isinstance(config, GateConfig) else load_config(config)
    if keyword is not None:
        cfg = select(cfg, keyword)
    return run_gate(cfg, workers=workers, argv=[])


__all__ = [
    "OpcertError",
    "Options",
    "TargetFailure",
    "UsageError",
    "__version__",
    "gate",
    "get_operator",
    "measure",
    "operators",
    "prove",
    "reference",
    "run",
]
