"""A hash of opcert's own source: what a sweep checkpoint and opcert's own target are keyed by."""

from __future__ import annotations

import hashlib
from pathlib import Path

_FINGERPRINT: list = []


def code_fingerprint() -> str:
    """A hash of opcert's own source files: a changed reference, kernel or
    implementation never resumes a sweep that older code started."""
    if not _FINGERPRINT:
        root = Path(__file__).resolve().parent
        h = hashlib.sha256()
        for f in sorted(root.rglob("*.py")):
            h.update(str(f.relative_to(root)).encode())
            h.update(f.read_bytes())
        _FINGERPRINT.append(h.hexdigest())
    return _FINGERPRINT[0]
