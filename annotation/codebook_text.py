"""A codebook's content (the shape of :data:`annotation.codebook.CODEBOOK`) checked, and written
as plain text for the diff between two versions. Pure Python (no Django).

Shape (JSON): ``definition``, ``question``, ``l1_note`` (text); ``kinds``: ``[[group,
[[kind, description], …]], …]``; ``acceptable``: ``[text, …]``; ``critical_examples`` and
``acceptable_examples``: ``[[goal, what, why], …]``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from core.text import first_bad_text

TEXT_KEYS = ("definition", "question", "l1_note")
KEYS = (*TEXT_KEYS, "kinds", "acceptable", "critical_examples", "acceptable_examples")
ITEM_MAX_CHARS = 2000
MAX_ENTRIES = 100


def as_json(content: Mapping[str, Any]) -> dict[str, Any]:
    """``content`` with tuples as lists (what the database stores and gives back)."""
    return json.loads(json.dumps(dict(content), ensure_ascii=False))


def _text(value: Any, path: str) -> list[str]:
    if not isinstance(value, str) or not value.strip():
        return [f"{path}: must be a non-empty text"]
    if len(value) > ITEM_MAX_CHARS:
        return [f"{path}: at most {ITEM_MAX_CHARS} characters"]
    return []


def _texts(value: Any, path: str, n: int | None = None) -> list[str]:
    """Problems of a list of ``n`` texts (any number when ``n`` is None)."""
    if not isinstance(value, list) or (n is not None and len(value) != n):
        what = f"a list of {n} texts" if n is not None else "a list of texts"
        return [f"{path}: must be {what}"]
    return [e for i, text in enumerate(value) for e in _text(text, f"{path}[{i}]")]


def _entries(value: Any, key: str) -> list[Any] | str:
    if not isinstance(value, list) or not value:
        return f"{key}: must be a non-empty list"
    if len(value) > MAX_ENTRIES:
        return f"{key}: at most {MAX_ENTRIES} entries"
    return value


def codebook_errors(content: Any) -> list[str]:
    """Why ``content`` is not a codebook (empty: it is one), each problem naming its place."""
    if not isinstance(content, Mapping):
        return ["the codebook must be a JSON object"]
    errors = [f"{k}: unknown key" for k in content if k not in KEYS]
    errors += [f"{k}: missing" for k in KEYS if k not in content]
    if errors:
        return errors
    bad = first_bad_text(dict(content))
    if bad is not None:
        return [bad[1]]
    for key in TEXT_KEYS:
        errors += _text(content[key], key)
    for key, width in (("acceptable", None), ("critical_examples", 3), ("acceptable_examples", 3)):
        entries = _entries(content[key], key)
        if isinstance(entries, str):
            errors.append(entries)
            continue
        for i, entry in enumerate(entries):
            where = f"{key}[{i}]"
            errors += _text(entry, where) if width is None else _texts(entry, where, width)
    groups = _entries(content["kinds"], "kinds")
    if isinstance(groups, str):
        return [*errors, groups]
    for i, group in enumerate(groups):
        where = f"kinds[{i}]"
        if not (isinstance(group, list) and len(group) == 2 and isinstance(group[1], list)):
            errors.append(f"{where}: must be [group name, [[kind, description], …]]")
            continue
        errors += _text(group[0], f"{where}[0]")
        for k, kind in enumerate(group[1]):
            errors += _texts(kind, f"{where}[1][{k}]", 2)
    return errors


def codebook_text(content: Mapping[str, Any]) -> str:
    """The codebook as numbered, labelled lines: one line per definition, kind, variation and
    example, so a diff shows which ones changed."""
    lines = [
        f"Definition: {content['definition']}",
        f"Question: {content['question']}",
        f"L1 note: {content['l1_note']}",
    ]
    for group, kinds in content["kinds"]:
        lines += [f"Kind › {group} › {name}: {text}" for name, text in kinds]
    lines += [f"Acceptable variation: {text}" for text in content["acceptable"]]
    lines += [
        f"Critical example: {goal} | {what} | {why}"
        for goal, what, why in content["critical_examples"]
    ]
    lines += [
        f"Acceptable example: {goal} | {what} | {why}"
        for goal, what, why in content["acceptable_examples"]
    ]
    return "\n".join(lines)
