"""The one text gate: free text from outside (forms, API bodies, query strings, imported files,
the CLI) may not carry NUL or other control characters — tab, newline and carriage return
aside — nor lone surrogates (PostgreSQL refuses NUL and invalid UTF-8 outright; the rest
corrupt exports and displays).

Where a person typed the text, it is refused with a message naming the field
(:func:`text_error`, :func:`check_text`, :func:`first_bad_text` for nested JSON); where the
source is a file, the characters are stripped and the line named (:func:`strip_controls`).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

# C0 controls but \t \n \r, DEL, C1 controls, lone surrogates
_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")


def _describe(char: str) -> str:
    code = f"U+{ord(char):04X}"
    if char == "\x00":
        return f"{code} NUL"
    if "\ud800" <= char <= "\udfff":
        return f"{code}, a lone surrogate"
    name = unicodedata.name(char, "")
    return f"{code} {name}".strip() if name else f"{code}, a control character"


def text_error(value: Any, field: str) -> str | None:
    """Why ``value`` is refused as text of ``field``, or None (non-strings pass)."""
    if not isinstance(value, str):
        return None
    match = _BAD.search(value)
    if match is None:
        return None
    return (
        f"{field}: contains a control character ({_describe(match.group())}) at character "
        f"{match.start() + 1}; remove it (only tab, newline and carriage return are allowed)"
    )


def length_error(value: Any, field: str, limit: int | None) -> str | None:
    """Why ``value`` is refused as too long for ``field`` (the limit named), or None: over-long
    text is refused, never cut."""
    if not isinstance(value, str) or limit is None or len(value) <= limit:
        return None
    return (
        f"{field}: {len(value):,} characters, over the limit of {limit:,}; shorten it "
        "(nothing was cut)"
    )


def typed_text_error(value: Any, field: str, limit: int | None = None) -> str | None:
    """The gate for typed text: a refused character first, then the length limit."""
    return text_error(value, field) or length_error(value, field, limit)


def check_text(value: Any, field: str) -> None:
    """Raise ValidationError ``{field: message}`` when ``value`` carries a refused character."""
    from django.core.exceptions import ValidationError  # the readers using this module are pure

    message = text_error(value, field)
    if message:
        raise ValidationError({field: message})


def _walk(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _walk(str(key), f"{path}.<key>" if path else "<key>")
            yield from _walk(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            yield from _walk(item, f"{path}[{i}]")


def first_bad_text(value: Any, path: str = "") -> tuple[str, str] | None:
    """(field path, message) for the first refused string in a nested JSON-like value."""
    for where, text in _walk(value, path):
        message = text_error(text, where or "value")
        if message:
            return where or "value", message
    return None


def strip_controls(value: str) -> tuple[str, int]:
    """``value`` without the refused characters, and how many were removed (file imports)."""
    cleaned, n = _BAD.subn("", value)
    return cleaned, n


def strip_value(value: Any) -> tuple[Any, int]:
    """A decoded JSON value (or CSV row) with the refused characters removed from every string
    (keys too), and how many were removed in all."""
    if isinstance(value, str):
        return strip_controls(value)
    if isinstance(value, Mapping):
        out, total = {}, 0
        for key, item in value.items():
            clean_key, n_key = strip_value(key)
            clean_item, n_item = strip_value(item)
            out[clean_key] = clean_item
            total += n_key + n_item
        return out, total
    if isinstance(value, list):
        items = [strip_value(item) for item in value]
        return [item for item, _ in items], sum(n for _, n in items)
    return value, 0


def stripped_note(line: int, n: int, *, unit: str = "line") -> str:
    """What an import says about a line it cleaned."""
    return f"{unit} {line}: removed {n} control character(s) (NUL or similar)"


def argv_error(args: list[str]) -> str | None:
    """The first command-line argument the gate refuses, named by its option (manage.py; the
    operating system already keeps NUL out of arguments)."""
    for i, arg in enumerate(args):
        before = args[i - 1] if i else ""
        name = arg.split("=", 1)[0] if arg.startswith("--") else ""
        label = name or (before if before.startswith("-") else f"argument {i + 1}")
        message = text_error(arg, label)
        if message:
            return message
    return None
