"""Prompt templates filled in one pass (pure, no Django).

``{name}`` is replaced by its value, ``{{`` and ``}}`` by a literal brace (as ``str.format``,
so a template written for the reference implementation renders to the same bytes). Each
placeholder of the *template* is filled once, left to right; the inserted text is never
scanned again, so a goal that contains ``{n}`` or ``{steps}`` stays exactly as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """``template`` with its placeholders filled from ``values``; a placeholder with no value
    raises ``KeyError`` naming it."""

    def one(match: re.Match) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = match.group(1)
        if name not in values:
            raise KeyError(f"template placeholder {{{name}}} has no value")
        return str(values[name])

    return _FIELD.sub(one, template)
