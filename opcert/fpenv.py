"""The floating-point environment of the calling thread: saved, compared, restored.

A target runs in the process where opcert computes its reference and classifies
the outputs. Whatever a target does to the floating-point control registers
would otherwise change those computations too: a shared library built with
gcc's -Ofast turns flush-to-zero (FTZ) and denormals-are-zero (DAZ) on when it
is loaded (crtfastmath.o), and opcert then reads subnormal inputs as 0. So
every target load and call runs between `Guard.enter` and `Guard.leave`:
the target gets the environment it set for itself (as in a user's process,
where nothing resets it), and opcert gets its own back.

glibc's fegetenv/fesetenv save and restore the whole environment (on x86-64
the x87 control word and MXCSR, FTZ and DAZ included). Only the control bits
are compared: the exception flags change with every operation.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform

_SIZE = 64  # bytes: more than any fenv_t of glibc (x86-64: 32, aarch64: 8)
_MACHINE = platform.machine().lower()
_X86, _ARM = _MACHINE in ("x86_64", "amd64"), _MACHINE in ("aarch64", "arm64")
_libm = None
_AVAILABLE: bool | None = None


def _lib():
    global _libm, _AVAILABLE
    if _AVAILABLE is None:
        try:
            _libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
            _libm.fegetenv.argtypes = [ctypes.c_void_p]
            _libm.fesetenv.argtypes = [ctypes.c_void_p]
            _AVAILABLE = True
        except (OSError, AttributeError):
            _AVAILABLE = False
    return _libm if _AVAILABLE else None


_ROUNDING = {0: "to nearest", 1: "down", 2: "up", 3: "toward zero"}


def controls(env: bytes | None) -> dict:
    """The control settings in an environment, by name (only what this platform's layout tells)."""
    if env is None:
        return {}
    if _X86:
        x87 = int.from_bytes(env[0:2], "little")
        mxcsr = int.from_bytes(env[28:32], "little")
        return {
            "flush-to-zero": bool(mxcsr & 0x8000),
            "denormals-are-zero": bool(mxcsr & 0x0040),
            "SSE rounding": _ROUNDING[(mxcsr >> 13) & 3],
            "SSE exception traps": f"0x{~(mxcsr >> 7) & 0x3F:02x}" if (~(mxcsr >> 7) & 0x3F) else "none",
            "x87 rounding": _ROUNDING[(x87 >> 10) & 3],
            "x87 precision": {0: "24 bits", 1: "reserved", 2: "53 bits", 3: "64 bits"}[(x87 >> 8) & 3],
            "x87 exception traps": f"0x{~x87 & 0x3F:02x}" if (~x87 & 0x3F) else "none",
        }
    if _ARM:
        fpcr = int.from_bytes(env[0:4], "little")
        return {
            "flush-to-zero": bool(fpcr & (1 << 24)),
            "rounding": _ROUNDING_ARM[(fpcr >> 22) & 3],
            "exception traps": f"0x{(fpcr >> 8) & 0x9F:02x}" if (fpcr >> 8) & 0x9F else "none",
        }
    return {}


_ROUNDING_ARM = {0: "to nearest", 1: "up", 2: "down", 3: "toward zero"}


def _control_bits(env: bytes | None) -> bytes | None:
    """The bytes of an environment that hold its controls (what `controls` reads), without the
    exception flags: two environments with the same control bits have the same controls."""
    if env is None:
        return None
    if _X86:
        return env[0:2] + (int.from_bytes(env[28:32], "little") & ~0x3F).to_bytes(4, "little")
    if _ARM:
        return env[0:4]
    return env


def changes(before: bytes | None, after: bytes | None) -> list[str]:
    """What differs between two environments' control settings, as 'name: a -> b'."""
    a, b = controls(before), controls(after)
    out = []
    for k in a:
        if a[k] != b.get(k):
            va, vb = a[k], b.get(k)
            if isinstance(va, bool):
                out.append(f"{k} turned {'on' if vb else 'off'}")
            else:
                out.append(f"{k} {va} -> {vb}")
    return out


class Guard:
    """The two environments of one target: the one it runs under, and opcert's.

    `target_env` starts as opcert's; a target that changes the environment when
    it is loaded or called keeps the change for its next call (it is measured
    under the mode it set for itself), and every change is recorded in `events`.

    A sweep makes 2^17 calls: the environments live in three buffers made once
    (fegetenv into them, fesetenv from them), not in bytes built per call (a
    buffer made for each save and restore cost more per call: bench/README.md,
    'Figures behind choices in the code')."""

    def __init__(self):
        self._lib = _lib()
        if self._lib is None:
            self._own = self._target = self._after = None
            self.events: list[str] = []
            return
        self._own, self._target, self._after = (ctypes.create_string_buffer(_SIZE) for _ in range(3))
        self._lib.fegetenv(self._own)
        ctypes.memmove(self._target, self._own, _SIZE)
        self.events = []

    def enter(self) -> None:
        if self._lib is None:
            return
        self._lib.fegetenv(self._own)
        if self._target.raw != self._own.raw:
            self._lib.fesetenv(self._target)

    def leave(self, what: str) -> None:
        if self._lib is None:
            return
        self._lib.fegetenv(self._after)
        after = self._after.raw
        before = self._target.raw
        if _control_bits(after) != _control_bits(before):  # nearly never: no names built per call
            event = f"the target's {what}: " + ", ".join(changes(before, after))
            if event not in self.events:  # once each: a sweep makes 2^17 calls
                self.events.append(event)
        ctypes.memmove(self._target, self._after, _SIZE)
        self._lib.fesetenv(self._own)
