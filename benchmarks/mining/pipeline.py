"""Running documents through the selected How2Mine stages. Pure Python, no Django.

:class:`Pipeline` takes a chunk of :class:`DocState` and mutates each: the ``trace`` (stage key
-> what the stage said, the reference implementation's ``processed_example``), the current
goal/steps/resources, and the outcome with the reason a document was dropped. LLM stages send
one request per live document through the stage's backend (``complete_many``: concurrent, in
input order, a failure is an ``LLMError`` value, never a raise), so a bad reply or a failed
request is a per-document outcome.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from benchmarks.llm.base import LLMError, LLMRequest, LLMResponse
from benchmarks.mining import replies
from benchmarks.mining.heuristics import HeuristicsConfig, apply_heuristics
from benchmarks.mining.stages import STAGE_NUMBERS, STAGES, render_prompt

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


class Pipeline:
    def __init__(
        self,
        *,
        stages: list[int],
        backends: Mapping[str, Any],
        heuristics: HeuristicsConfig | None = None,
        max_tokens: int | None = None,
        should_stop: Callable[[], bool] | None = None,
    ) -> None:
        self.stages = sorted(stages)
        self.backends = backends
        self.heuristics = heuristics or HeuristicsConfig()
        self.max_tokens = max_tokens
        self.should_stop = should_stop

    # -- requests ------------------------------------------------------------------------
    def _request(self, stage: str, doc: DocState) -> LLMRequest:
        prompt = render_prompt(
            stage, document=doc.text, goal=doc.goal, steps=doc.steps, resources=doc.resources
        )
        return LLMRequest(
            messages=[{"role": "user", "content": prompt}],
            max_tokens=self.max_tokens,
            temperature=0.0,
            json_schema=replies.SCHEMAS[stage],
            json_schema_name=f"how2mine_{stage}",
        )

    def _ask(
        self, stage: str, docs: list[DocState], usage: StageUsage
    ) -> list[tuple[DocState, LLMResponse]]:
        """Send one request per doc; docs whose request failed are stopped with outcome ``error``."""
        if not docs:
            return []
        backend = self.backends.get(stage)
        if backend is None:
            for doc in docs:
                doc.stop(stage, ERROR, "no LLM backend configured for this stage")
            return []
        results = backend.complete_many([self._request(stage, d) for d in docs])
        answered: list[tuple[DocState, LLMResponse]] = []
        for doc, result in zip(docs, results, strict=True):
            usage.requests += 1
            if isinstance(result, LLMError) or not isinstance(result, LLMResponse):
                usage.failed_requests += 1
                doc.stop(stage, ERROR, f"LLM request failed: {result}")
                continue
            usage.prompt_tokens += result.prompt_tokens
            usage.completion_tokens += result.completion_tokens
            answered.append((doc, result))
        return answered

    def _ask_parsed(self, stage: str, docs: list[DocState], usage: StageUsage, parse):
        """``_ask``, then parse each reply; a reply that is not the expected JSON stops its doc
        with outcome ``error`` (raw reply kept). Yields ``(doc, parsed)``."""
        for doc, resp in self._ask(stage, docs, usage):
            try:
                parsed = parse(resp.text)
            except replies.ReplyError as exc:
                doc.stop(
                    stage,
                    ERROR,
                    f"reply is not the expected JSON: {exc}",
                    {"raw_reply": resp.text[:2000]},
                )
                continue
            yield doc, parsed

    # -- stages --------------------------------------------------------------------------
    def _procedures(self, docs: list[DocState], usage: StageUsage) -> None:
        need = []
        for doc in docs:
            if doc.goal and doc.steps:  # the record carried an extracted procedure: skip stage 1
                doc.passed(
                    "procedures",
                    {"skipped": True, "from_input": True, "goal": doc.goal, "steps": doc.steps},
                )
            else:
                need.append(doc)
        for doc, ex in self._ask_parsed("procedures", need, usage, replies.parse_extraction):
            record = {"has_valid_process": ex.has_valid_process, "goal": ex.goal, "steps": ex.steps}
            if not ex.has_valid_process:
                doc.stop(
                    "procedures", DROPPED, "no valid sequential process in the document", record
                )
                continue
            doc.goal, doc.steps = ex.goal, ex.steps
            doc.passed("procedures", record)

    def _prefilter(self, docs: list[DocState], usage: StageUsage) -> None:
        cfg = self.heuristics
        for doc in docs:
            result = apply_heuristics(doc.steps, cfg)
            record = {
                "min_steps": cfg.min_steps,
                "max_steps": cfg.max_steps,
                "repetition": {f"{n}gram": round(r, 4) for n, r in result.rates.items()},
            }
            if result.passed:
                doc.passed("prefilter", {"reason": "", **record})
            else:
                doc.stop("prefilter", DROPPED, result.reason, record)

    def _filter(self, docs: list[DocState], usage: StageUsage) -> None:
        for doc, verdict in self._ask_parsed("filter", docs, usage, replies.parse_filter):
            if verdict.judgment:
                doc.stop(
                    "filter",
                    DROPPED,
                    f"excluded category: {verdict.reason or '(no reason given)'}",
                    {"judgment": True},
                )
            else:
                doc.passed("filter", {"judgment": False, "reason": verdict.reason})

    def _postprocess(self, docs: list[DocState], usage: StageUsage) -> None:
        for doc, rw in self._ask_parsed("postprocess", docs, usage, replies.parse_rewrite):
            doc.goal, doc.steps = rw.goal, rw.steps
            doc.passed("postprocess", {"rewritten_goal": rw.goal, "rewritten_steps": rw.steps})

    def _resources(self, docs: list[DocState], usage: StageUsage) -> None:
        for doc, items in self._ask_parsed("resources", docs, usage, replies.parse_resources):
            doc.resources = items
            doc.passed("resources", {"resources": items})

    def _final_filter(self, docs: list[DocState], usage: StageUsage) -> None:
        for doc, verdict in self._ask_parsed("final_filter", docs, usage, replies.parse_final):
            if verdict.passed:
                doc.passed("final_filter", dict(verdict.answers))
            else:
                why = "; ".join(
                    f"{c}"
                    + (f" ({verdict.answers[c]['reason']})" if verdict.answers[c]["reason"] else "")
                    for c in verdict.failed
                )
                doc.stop("final_filter", DROPPED, f"failed criteria: {why}", dict(verdict.answers))

    # -- run -----------------------------------------------------------------------------
    def run(self, docs: list[DocState]) -> dict[str, StageUsage]:
        usage: dict[str, StageUsage] = {}
        if 1 not in self.stages:
            for doc in docs:
                if doc.alive and not (doc.goal and doc.steps):
                    doc.outcome, doc.stage_reached = INVALID, "input"
                    doc.reason = "input: stage 1 (extraction) is not selected and the record has no goal/steps"
        for number, key, _label, _prompt in STAGES:
            if number not in self.stages:
                continue
            live = [d for d in docs if d.alive]
            if not live:
                break
            usage[key] = StageUsage()
            getattr(self, f"_{key}")(live, usage[key])
        for doc in docs:
            if doc.alive:
                doc.outcome = KEPT
        return usage
