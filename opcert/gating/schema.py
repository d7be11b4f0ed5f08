"""The JSON Schema of a gate configuration (opcert.toml, or [tool.opcert] of pyproject.toml), for editors.

Generated from the declaration the reader validates against (gating.config: CHECK_KEYS, TOP_KEYS: the keys,
their types, and the allowed values taken from the same constants), so that it cannot drift from it. It says
what a schema can: the keys, their types, the allowed words and bounds; what depends on the operator (its
properties, its attributes and their domains) is the reader's to check (`opcert gate` names each error).
`opcert schema` prints text(); docs/opcert.schema.json is this text (tests/test_config_errors.py holds them
equal). Draft 7, which the TOML editors' schema support reads (Even Better TOML / taplo, tombi).
"""

from __future__ import annotations

import json

from opcert.gating.config import CHECK_KEYS, TOP_KEYS


def _property(key) -> dict:
    return {**key.schema, "description": f"{key.meaning} (type: {key.type}; default: {key.default})"}


def schema() -> dict:
    return {
        "$schema": "http://json-schema.org/draft-07/schema#",
        "title": "opcert gate configuration",
        "description": "opcert.toml, or [tool.opcert] of pyproject.toml: the checks `opcert gate` runs "
        "(docs/gating.md; docs/configuration.md lists every key)",
        "type": "object",
        "properties": {k: _property(v) for k, v in TOP_KEYS.items()},
        "required": ["check"],
        "additionalProperties": False,
        "definitions": {
            "check": {
                "description": "a [[check]] table: an operator (or several), dtypes, a target, a budget and the "
                "properties required",
                "type": "object",
                "properties": {k: _property(v) for k, v in CHECK_KEYS.items()},
                "required": ["op"],
                "additionalProperties": False,
            }
        },
    }


def text() -> str:
    """The schema as `opcert schema` prints it (and docs/opcert.schema.json holds)."""
    return json.dumps(schema(), indent=2) + "\n"


__all__ = ["schema", "text"]
