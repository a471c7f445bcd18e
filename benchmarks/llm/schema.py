"""Bounds on a JSON schema sent for structured output (pure).

Guided decoding makes any model's reply match the schema, but an unbounded string or array
lets a small or untrained model write until ``max_tokens`` runs out (the reply is then cut and
fails to parse). :func:`bounded_schema` adds ``maxLength`` to every string and ``maxItems`` to
every array that has none. A judge asks for it with ``json_max_string_length`` /
``json_max_items`` in its decoding (part of its configuration and hash).
"""

from __future__ import annotations

import copy
from typing import Any


def bounded_schema(
    schema: dict[str, Any], *, max_string_length: int | None = None, max_items: int | None = None
) -> dict[str, Any]:
    """A copy of ``schema`` with the bounds added where the schema sets none."""
    if not max_string_length and not max_items:
        return schema
    out = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "string" and max_string_length:
                node.setdefault("maxLength", int(max_string_length))
            if node.get("type") == "array" and max_items:
                node.setdefault("maxItems", int(max_items))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(out)
    return out
