"""Prompt templates filled in one pass (pure, no Django).

``{name}`` is replaced by its value, ``{{`` and ``}}`` by a literal brace (as ``str.format``,
so a template written for the reference implementation renders to the same bytes). Each
placeholder of the *template* is filled once, left to right; the inserted text is never
scanned again, so a goal that contains ``{n}`` or ``{steps}`` stays exactly as written.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import lru_cache

_FIELD = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


@lru_cache(maxsize=64)
def _parts(template: str) -> tuple[tuple[str, str | None], ...]:
    """The template as (literal text, placeholder name or None) pairs, parsed once."""
    out: list[tuple[str, str | None]] = []
    pos = 0
    for match in _FIELD.finditer(template):
        token = match.group(0)
        literal = template[pos : match.start()]
        if token in ("{{", "}}"):
            out.append((literal + token[0], None))
        else:
            out.append((literal, match.group(1)))
        pos = match.end()
    out.append((template[pos:], None))
    return tuple(out)


def fill_template(template: str, values: Mapping[str, str]) -> str:
    """``template`` with its placeholders filled from ``values``; a placeholder with no value
    raises ``KeyError`` naming it."""
    pieces: list[str] = []
    for literal, name in _parts(template):
        pieces.append(literal)
        if name is not None:
            if name not in values:
                raise KeyError(f"template placeholder {{{name}}} has no value")
            pieces.append(str(values[name]))
    return "".join(pieces)
