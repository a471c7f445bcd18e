"""A document's state as it goes through the How2Mine stages (:class:`DocState`, its outcome
words) and what an LLM stage used (:class:`StageUsage`): the data :mod:`mining.pipeline` and
:mod:`mining.flow` share. Pure Python, no Django."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mining.stages import STAGE_NUMBERS

KEPT, DROPPED, INVALID, ERROR, PENDING = "kept", "dropped", "invalid", "error", "pending"


@dataclass
class DocState:
    key: Any
    text: str = ""
    goal: str = ""
    steps: list[str] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    trace: dict[str, Any] = field(default_factory=dict)
    outcome: str = PENDING
    stage_reached: str = ""
    last_passed_stage: int = 0
    reason: str = ""

    @property
    def alive(self) -> bool:
        return self.outcome == PENDING

    def passed(self, stage: str, record: dict[str, Any]) -> None:
        self.trace[stage] = {"stage_passed": True, **record}
        self.stage_reached = stage
        self.last_passed_stage = STAGE_NUMBERS[stage]

    def stop(
        self, stage: str, outcome: str, reason: str, record: dict[str, Any] | None = None
    ) -> None:
        self.trace[stage] = {"stage_passed": False, **(record or {}), "reason": reason}
        self.stage_reached = stage
        self.outcome = outcome
        self.reason = f"{stage}: {reason}"


@dataclass
class StageUsage:
    requests: int = 0
    failed_requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def add(self, other: StageUsage) -> None:
        self.requests += other.requests
        self.failed_requests += other.failed_requests
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
