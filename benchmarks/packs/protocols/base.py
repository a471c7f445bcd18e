"""What every generation protocol provides: the request for one item, the answer read from the
reply (and, for ProcBench free text, the conversion step), its named options. Pure: no Django.

An *item* is the pack's record without an output: ``{"id", "goal", **gold}`` — the procedure's
``payload`` as the pack import stored it, plus its id and goal. A protocol turns it into a
:class:`ProtocolRequest` (chat messages, token budget, decoding) and turns the model's reply into
a :class:`ProtocolAnswer`: the extracted answer, the steps shown on the pages, and the
``payload`` stored on the generation, which :func:`benchmarks.formats.packs.pack_record` merges
into the pack's record so that the scoring run reads it without any conversion (the raw reply
itself stays in ``model_completion``; its ``finish_reason`` in ``finish_reason``).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.packs.registry import RecordError

PROMPTS_DIR = Path(__file__).resolve().parents[2] / "prompts"


class ProtocolError(RecordError):
    """An item or an option the protocol cannot use (a :class:`RecordError`: ``message``,
    ``field``)."""


@dataclass(frozen=True)
class ProtocolRequest:
    """One chat request: ``messages``, the token budget (``max_tokens``; None: the server's)
    and decoding (``temperature``, ``top_p``, ``extra`` sent as is)."""

    messages: list[dict[str, str]]
    max_tokens: int | None = None
    temperature: float = 0.0
    top_p: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    json_schema: dict[str, Any] | None = None
    json_schema_name: str = "response"


@dataclass(frozen=True)
class ProtocolAnswer:
    """What a reply gave: ``extracted`` (the tagged answer, the parsed JSON, the parsed steps;
    None when nothing was found), ``steps`` (text lines shown on the pages and used by the
    studies) and ``payload`` (stored on the generation: the pack's output fields, if any,
    plus ``"protocol"``, the protocol's own record of what it did)."""

    extracted: Any
    steps: list[str]
    payload: dict[str, Any]


@cache
def prompt_text(filename: str) -> str:
    return (PROMPTS_DIR / filename).read_text(encoding="utf-8")


def prompt_files_sha256(filenames: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for name in filenames:
        digest.update(name.encode())
        digest.update(b"\0")
        digest.update(prompt_text(name).encode("utf-8"))
    return digest.hexdigest()


def check_options(
    options: Any, defaults: Mapping[str, Any], *, protocol: str, types: Mapping[str, tuple]
) -> dict[str, Any]:
    """The run's protocol options over the defaults; ``ProtocolError`` naming an unknown
    option or one of the wrong type."""
    if options is None:
        options = {}
    if not isinstance(options, Mapping):
        raise ProtocolError("must be a JSON object of option names", field="protocol_options")
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        known = ", ".join(sorted(defaults)) or "none"
        raise ProtocolError(
            f"unknown option(s) {', '.join(unknown)} for {protocol}; known: {known}",
            field="protocol_options",
        )
    out = {**defaults, **options}
    for key, allowed in types.items():
        value = out.get(key)
        if value is None and type(None) in allowed:
            continue
        if isinstance(value, bool) and bool not in allowed:
            raise ProtocolError(f"{key} must be {_type_words(allowed)}", field="protocol_options")
        if not isinstance(value, allowed):
            raise ProtocolError(f"{key} must be {_type_words(allowed)}", field="protocol_options")
    return out


def _type_words(types: tuple) -> str:
    names = {
        str: "a string",
        int: "an integer",
        float: "a number",
        bool: "true or false",
        type(None): "null",
        list: "a list",
    }
    return " or ".join(dict.fromkeys(names.get(t, t.__name__) for t in types))


def item_text(item: Mapping[str, Any], name: str, *, required: bool = True) -> str | None:
    """``item[name]`` as a non-empty string, else ``ProtocolError`` naming the field (None
    when absent and not required)."""
    value = item.get(name)
    if value is None or (isinstance(value, str) and not value.strip()):
        if required:
            raise ProtocolError("is required by the protocol's prompt", field=name)
        return None
    if not isinstance(value, str):
        raise ProtocolError("must be a string", field=name)
    return value


class Protocol:
    """Base class: subclasses set ``name``, ``label``, ``pack``, ``prompt_files``,
    ``defaults`` and ``option_types`` and implement :meth:`request` and :meth:`answer`."""

    name: str = ""
    label: str = ""
    pack: str = ""  # the scorer pack its outputs are scored by
    prompt_files: tuple[str, ...] = ()
    defaults: Mapping[str, Any] = {}
    option_types: Mapping[str, tuple] = {}

    def options(self, options: Any) -> dict[str, Any]:
        return check_options(options, self.defaults, protocol=self.name, types=self.option_types)

    def prompt_sha256(self) -> str:
        return prompt_files_sha256(self.prompt_files)

    def request(self, item: Mapping[str, Any], options: Mapping[str, Any]) -> ProtocolRequest:
        raise NotImplementedError

    def answer(
        self, raw: str, item: Mapping[str, Any], options: Mapping[str, Any]
    ) -> ProtocolAnswer:
        raise NotImplementedError

    # the conversion step (ProcBench free text): none by default
    def needs_conversion(self, options: Mapping[str, Any]) -> bool:
        return False

    def conversion_request(
        self, raw: str, item: Mapping[str, Any], options: Mapping[str, Any]
    ) -> ProtocolRequest:
        raise NotImplementedError

    def converted(
        self,
        raw: str,
        conversion: str,
        item: Mapping[str, Any],
        options: Mapping[str, Any],
    ) -> ProtocolAnswer:
        raise NotImplementedError
