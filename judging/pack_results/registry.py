"""What a pack results page is (see the package docstring for how to add one). Pure."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from judging.pack_results.common import Bootstrap, Instance

# attributes every page reads from an item's gold: a worked example names its source there
ALWAYS_ATTRS = ("worked_example",)


@dataclass(frozen=True)
class PackPage:
    name: str  # the URL's <name>
    title: str
    prefix: str  # pack names of the family: prefix itself or prefix-…
    build: Callable[[Sequence[Instance], Bootstrap], dict[str, Any]]
    attrs: tuple[str, ...] = ()  # the item's gold fields the builder reads
    template: str = "judging/pack_results/base.html"
    description: str = ""
    # a page that can also read a human study (``study=<id>``; CustomPlans): its studies for
    # the chooser, and its reader (study id → instances and facts; SelectionError "study")
    studies: Callable[[], Sequence[Any]] | None = None
    study_instances: Callable[[int], tuple[list[Instance], dict[str, Any]]] | None = None

    def matches(self, pack: str) -> bool:
        return pack == self.prefix or pack.startswith(self.prefix + "-")

    @property
    def all_attrs(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*self.attrs, *ALWAYS_ATTRS)))
