"""What a target is, written down: the methods opcert's measurements call on each kind of target.

- `ElementWiseTarget`: a loaded element-wise target as the measurements use it (verify.accuracy.measure,
  the float32 sweep, verify.paths.layout). `targets.base.Target` is the one implementation: it wraps a
  kernel in the call contract (a copy of the inputs per call, the time limit, the isolation, the checks of
  the output's type, dtype and shape).
- `ElementWiseRuntime`: what a runtime's element-wise side provides (opcert.runtime_table's `elementwise`);
  `targets.runtimes.load` wraps it in a `Target`.
- `TensorTarget`: a target of the tensor operators (verify.tensor), called with a whole tensor and the axes
  its standard reduces over. Every tensor side implements it directly; subclassing it gives the defaults
  (no refusal, no thread switch).
- `BinaryTarget`: a target of the binary element-wise operators (z = f(x, y), both tensors: Pow), called with
  the two inputs, which broadcast against each other (opcert.targets.binary loads them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from fractions import Fraction
from typing import Any, Protocol

import numpy as np

from opcert.targets.layouts import LayoutSupport


class ElementWiseTarget(Protocol):
    """A loaded element-wise target: (operator, input array, attributes) -> an output array of the input's
    dtype and shape."""

    info: Any  # targets.base.TargetInfo: name, kind, version, fingerprint, details
    timeout: float | None  # seconds per call (None: opcert's default for the call's size)
    layouts: LayoutSupport  # which layouts reach its kernel, and how (verify.paths.layout)
    modified_input: bool  # sticky: some call wrote into its input

    @property
    def name(self) -> str: ...

    @property
    def version(self) -> str: ...

    @property
    def findings(self) -> list[str]:
        """What the target did to the process beyond its results (the floating-point environment it set)."""
        ...

    @property
    def kernel(self) -> Callable:
        """The target's own function (op, x, attrs) -> y, outside the call contract (the layout check calls it
        from threads of its own)."""
        ...

    def unsupported(self, op, dtype: str, attrs: dict[str, Fraction]) -> str | None:
        """Why the target cannot run this operator, dtype and attribute set (a skip); None where it can."""
        ...

    def run(
        self,
        op,
        x: np.ndarray,
        attrs: dict[str, Fraction],
        label: str | None = None,
        guard_globals: bool = True,
        keep_layout: bool = False,
        call=None,
        owned: bool = False,
        counted: bool = False,
    ) -> np.ndarray:
        """The output for x, under the call contract (TargetFailure for anything the target does wrong); counted:
        `call` compares its own outputs and returns how many differ (LayoutSupport.count_calls), that number."""
        ...

    def run_each(self, op, xs, attrs: dict[str, Fraction], labels, call=None) -> Iterator:
        """run() over many buffers, in order: each output, or the TargetFailure its call raised."""
        ...

    def check_globals(self, where: str = "") -> None:
        """TargetFailure where the target replaced a function of the modules opcert computes with."""
        ...


class ElementWiseRuntime(Protocol):
    """A runtime's element-wise side (a row's `elementwise` class, made with no argument or with its device).
    Its unsupported() and __call__ are the Target's; a failure to import the library in the constructor
    (ImportError) is reported with the row's extra."""

    name: str
    version: str  # the library's version, as results record it
    details: dict  # JSON values: what identifies the build (the target's fingerprint hashes them)

    def unsupported(self, op, dtype: str, attrs: dict[str, Fraction]) -> str | None:
        """Why this operator, dtype and attribute set cannot be run (the library's own reason); None: it can."""
        ...

    def __call__(self, op, x: np.ndarray, attrs: dict[str, Fraction]) -> np.ndarray:
        """The library's output for x (a copy owned by this call)."""
        ...

    def layouts(self) -> LayoutSupport:
        """Which layouts reach the library's kernel, and why the others cannot (whether calls may come from
        several threads at once is the row's `concurrent`, set by the loader)."""
        ...


class TensorTarget(Protocol):
    """A target of the tensor operators: call(op, std, x, reduced) -> y, where `reduced` lists the axes (of x's
    own shape) the check's standard reduces over; for GroupNormalization (spec.tensor.Grouped) the axes 1 to
    rank - 1 and `reduced.groups`, the group count: each row is one sample's group of consecutive channels."""

    name: str
    version: str
    no_threads: str = "a callable's threads are its own: opcert has no switch for them"  # why threads(n) is None

    def unsupported(self, op, std, dtype: str, reduced: tuple[int, ...], rank: int) -> str | None:
        """Why this case cannot be given to the target (a skip, with the reason); None where it can."""
        return None

    def call(self, op, std, x: np.ndarray, reduced: tuple[int, ...]) -> np.ndarray:
        """The target's output for the tensor x."""
        ...

    def threads(self, n: int) -> AbstractContextManager | None:
        """A context in which the target runs on n threads; None where opcert has no switch for them
        (`no_threads` says why)."""
        return None


class BinaryTarget(Protocol):
    """A target of the binary element-wise operators: call(op, std, x, y, attrs) -> z, where x and y have one
    dtype and broadcast against each other ((N,) and (N,), or (1, N) and (M, 1)). `op` is a
    spec.binary.BinaryOperator, `std` one of its BinaryStandard, `attrs` the attributes beside the inputs (name ->
    float: DirectML's scale and bias). The output is the library's as it gives it: opcert judges its dtype and
    shape (a wrong one is a finding), so no side casts or reshapes it."""

    name: str
    version: str

    def unsupported(self, op, std, dtype: str, attrs: dict) -> str | None:
        """Why this operator, standard, dtype and attribute set cannot be given to the target (a skip, with the
        library's own reason where it has one); None where it can."""
        return None

    def call(self, op, std, x: np.ndarray, y: np.ndarray, attrs: dict) -> np.ndarray:
        """The target's output for the inputs x and y (the second input of the operator: Pow's exponent)."""
        ...
