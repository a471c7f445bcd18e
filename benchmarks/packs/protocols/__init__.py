"""Generation protocols: how a generation run prompts, budgets and reads the answers for the
items of one scorer pack, as that pack's paper does. Pure: no Django.

``how2everything`` (the default) is the H.2 protocol of :mod:`benchmarks.generation` and has
no object here; every other protocol is named after the scorer pack its outputs are scored by:

- ``longproc-html-to-tsv``, ``longproc-pseudocode-to-code``, ``longproc-path-traversal``, ``longproc-tom-tracking``,
  ``longproc-countdown``, ``longproc-travel`` (:mod:`.longproc`);
- ``procbench`` (:mod:`.procbench`), ``scirecipe`` (:mod:`.scirecipe`),
  ``customplans`` (:mod:`.customplans`).
"""

from __future__ import annotations

from benchmarks.packs.protocols.base import (
    Protocol,
    ProtocolAnswer,
    ProtocolError,
    ProtocolRequest,
)
from benchmarks.packs.protocols.customplans import CustomPlansProtocol
from benchmarks.packs.protocols.longproc import TASKS, LongProcProtocol
from benchmarks.packs.protocols.procbench import ProcBenchProtocol
from benchmarks.packs.protocols.scirecipe import SciRecipeProtocol

DEFAULT_PROTOCOL = "how2everything"

_PROTOCOLS: dict[str, Protocol] = {
    p.name: p
    for p in (
        *(LongProcProtocol(task) for task in TASKS),
        ProcBenchProtocol(),
        SciRecipeProtocol(),
        CustomPlansProtocol(),
    )
}

PROTOCOL_CHOICES: list[tuple[str, str]] = [
    (DEFAULT_PROTOCOL, "How2Everything (H.2 prompts, the default)"),
    *((p.name, p.label) for p in _PROTOCOLS.values()),
]
PROTOCOL_NAMES = tuple(name for name, _ in PROTOCOL_CHOICES)


def get_protocol(name: str) -> Protocol | None:
    """The protocol named ``name``; None for the default (H.2) protocol; ``ProtocolError``
    naming the known ones otherwise."""
    if name in ("", DEFAULT_PROTOCOL):
        return None
    try:
        return _PROTOCOLS[name]
    except KeyError:
        raise ProtocolError(
            f"unknown protocol {name!r}; use one of {', '.join(PROTOCOL_NAMES)}", field="protocol"
        ) from None


__all__ = [
    "DEFAULT_PROTOCOL",
    "PROTOCOL_CHOICES",
    "PROTOCOL_NAMES",
    "Protocol",
    "ProtocolAnswer",
    "ProtocolError",
    "ProtocolRequest",
    "get_protocol",
]
