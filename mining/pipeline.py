"""Running documents through the selected How2Mine stages. Pure Python, no Django.

:class:`Pipeline` holds what each stage does to one document: :meth:`Pipeline.advance` takes a
:class:`DocState` through the stages that need no model up to its next LLM stage,
:meth:`Pipeline.request` is that stage's request and :meth:`Pipeline.reply` applies its reply
(the ``trace``: stage key -> what the stage said, the reference implementation's
``processed_example``; the current goal/steps/resources; the outcome with the reason a document
was dropped). A bad reply or a failed request is a per-document outcome, never a raise.
:meth:`Pipeline.run` drives a chunk through them (:mod:`mining.flow`: each document
moves to its next stage as soon as its reply arrives, no stage waits for the chunk's slowest).
A document resumes after ``last_passed_stage``: one stored mid-way is not asked again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from benchmarks.llm.base import LLMError, LLMRequest, LLMResponse
from mining import replies
from mining.documents import DROPPED, ERROR, INVALID, KEPT, DocState, StageUsage
from mining.flow import Flow
from mining.heuristics import HeuristicsConfig, apply_heuristics
from mining.stages import STAGES, render_prompt

PARSERS: dict[str, Callable[[str], Any]] = {
    "procedures": replies.parse_extraction,
    "filter": replies.parse_filter,
    "postprocess": replies.parse_rewrite,
    "resources": replies.parse_resources,
    "final_filter": replies.parse_final,
}


class Pipeline:
    def __init__(
        self,
        *,
        stages: list[int],
        backends: Mapping[str, Any],
        heuristics: HeuristicsConfig | None = None,
        max_tokens: int | None = None,
    ) -> None:
        self.stages = sorted(stages)
        self.backends = backends
        self.heuristics = heuristics or HeuristicsConfig()
        self.max_tokens = max_tokens

    # -- one document --------------------------------------------------------------------
    def advance(self, doc: DocState) -> str | None:
        """Take ``doc`` through the selected stages after its last passed one that need no
        request; the key of the LLM stage it now waits for, or None once it is finished (kept
        when it is still alive)."""
        if not doc.alive:
            return None
        if 1 not in self.stages and not doc.last_passed_stage and not (doc.goal and doc.steps):
            doc.outcome, doc.stage_reached = INVALID, "input"
            doc.reason = (
                "input: stage 1 (extraction) is not selected and the record has no goal/steps"
            )
            return None
        for number, key, _label, _prompt in STAGES:
            if number <= doc.last_passed_stage or number not in self.stages:
                continue
            if key == "procedures" and doc.goal and doc.steps:
                # the record carried an extracted procedure: no extraction request
                doc.passed(
                    "procedures",
                    {"skipped": True, "from_input": True, "goal": doc.goal, "steps": doc.steps},
                )
            elif key == "prefilter":
                self._prefilter(doc)
                if not doc.alive:
                    return None
            elif self.backends.get(key) is None:
                doc.stop(key, ERROR, "no LLM backend configured for this stage")
                return None
            else:
                return key
        doc.outcome = KEPT
        return None

    def request(self, stage: str, doc: DocState) -> LLMRequest:
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

    def reply(self, stage: str, doc: DocState, result: Any) -> StageUsage:
        """Apply one reply (an :class:`LLMResponse` or an :class:`LLMError`) to ``doc``; what
        the request cost. A failed request or a reply that is not the expected JSON stops the
        document with outcome ``error`` (the raw reply kept)."""
        usage = StageUsage(requests=1)
        if isinstance(result, LLMError) or not isinstance(result, LLMResponse):
            usage.failed_requests = 1
            doc.stop(stage, ERROR, f"LLM request failed: {result}")
            return usage
        usage.prompt_tokens = result.prompt_tokens
        usage.completion_tokens = result.completion_tokens
        try:
            parsed = PARSERS[stage](result.text)
        except replies.ReplyError as exc:
            doc.stop(
                stage,
                ERROR,
                f"reply is not the expected JSON: {exc}",
                {"raw_reply": result.text[:2000]},
            )
            return usage
        getattr(self, f"_{stage}")(doc, parsed)
        return usage

    # -- stages --------------------------------------------------------------------------
    def _procedures(self, doc: DocState, ex) -> None:
        record = {"has_valid_process": ex.has_valid_process, "goal": ex.goal, "steps": ex.steps}
        if not ex.has_valid_process:
            doc.stop("procedures", DROPPED, "no valid sequential process in the document", record)
            return
        doc.goal, doc.steps = ex.goal, ex.steps
        doc.passed("procedures", record)

    def _prefilter(self, doc: DocState) -> None:
        cfg = self.heuristics
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

    def _filter(self, doc: DocState, verdict) -> None:
        if verdict.judgment:
            doc.stop(
                "filter",
                DROPPED,
                f"excluded category: {verdict.reason or '(no reason given)'}",
                {"judgment": True},
            )
        else:
            doc.passed("filter", {"judgment": False, "reason": verdict.reason})

    def _postprocess(self, doc: DocState, rw) -> None:
        doc.goal, doc.steps = rw.goal, rw.steps
        doc.passed("postprocess", {"rewritten_goal": rw.goal, "rewritten_steps": rw.steps})

    def _resources(self, doc: DocState, items) -> None:
        doc.resources = items
        doc.passed("resources", {"resources": items})

    def _final_filter(self, doc: DocState, verdict) -> None:
        if verdict.passed:
            doc.passed("final_filter", dict(verdict.answers))
            return
        why = "; ".join(
            f"{c}" + (f" ({verdict.answers[c]['reason']})" if verdict.answers[c]["reason"] else "")
            for c in verdict.failed
        )
        doc.stop("final_filter", DROPPED, f"failed criteria: {why}", dict(verdict.answers))

    # -- a chunk -------------------------------------------------------------------------
    def run(self, docs: list[DocState], **hooks: Any) -> dict[str, StageUsage]:
        """Every document of ``docs`` through the stages; the usage per LLM stage. ``hooks``:
        see :class:`mining.flow.Flow` (what the executor stores as it goes)."""
        return Flow(self, **hooks).run(docs)
