"""The LongProc segment analysis (seed 001 §5, Figure 4) against one backend that can prefill:
four requests per record (segment i: the task's prompt, the answer prefilled with the gold
segments 1…i−1), each continuation scored on segment i alone, correctness per segment with
95% bootstrap CIs, and what the result page and exports show (table, SVG plot, CSV, JSON).

The cutting, prefixes and scoring are pure (:mod:`benchmarks.packs.longproc_segments`); the
prompts are the generation protocol's (:func:`benchmarks.packs.protocols.longproc.longproc_prompt`,
the same budget: the item's level + buffer). A backend that cannot prefill is refused before
anything is sent, naming the backend (:meth:`benchmarks.llm.base.LLMBackend.prefill_refusal`).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError

from benchmarks.llm.base import LLMBackend, LLMError, LLMRequest
from benchmarks.llm.registry import build_backend
from benchmarks.packs import longproc_segments as seg
from benchmarks.packs.protocols.base import ProtocolError
from benchmarks.packs.protocols.longproc import DEFAULT_BUFFER, longproc_budget, longproc_prompt
from core.charts import bar_chart_svg

TASK_LABELS = {
    "path-traversal": "Path Traversal",
    "tom-tracking": "ToM Tracking",
    "html-to-tsv": "HTML to TSV",
}


@dataclass
class SegmentAnalysis:
    """The result: ``rows`` (one per record and segment: id, segment, prefix, output,
    finish_reason, prompt and completion tokens, score, metric, n_gold, n_written,
    first_divergence, error), ``table``
    (:func:`benchmarks.packs.longproc_segments.per_segment`), ``refused`` (records that could
    not be cut or prompted: id and reason)."""

    task: str
    model: str
    rows: list[dict[str, Any]] = field(default_factory=list)
    table: list[dict[str, Any]] = field(default_factory=list)
    refused: list[dict[str, Any]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "model": self.model,
            "metric": seg.METRIC[self.task],
            "per_segment": self.table,
            "rows": self.rows,
            "refused": self.refused,
        }

    def table_csv(self) -> str:
        out = io.StringIO()
        writer = csv.writer(out, lineterminator="\n")
        writer.writerow(["segment", "n", "mean", "ci_low", "ci_high", "n_failed"])
        for r in self.table:
            writer.writerow(
                [
                    r["segment"],
                    r["n"],
                    *(_num(r[k]) for k in ("mean", "ci_low", "ci_high")),
                    r["n_failed"],
                ]
            )
        return out.getvalue()

    def svg(self) -> str:
        label = TASK_LABELS[self.task]
        metric = seg.METRIC[self.task]
        return bar_chart_svg(
            title=f"{label}: {metric} per segment ({self.model})",
            labels=[f"Segment {r['segment']} (n={r['n']})" for r in self.table],
            values=[r["mean"] for r in self.table],
            intervals=[
                (r["ci_low"], r["ci_high"]) if r["ci_low"] is not None else None for r in self.table
            ],
            value_range=(0.0, 1.0),
            axis_label=f"mean {metric} with 95% bootstrap CI (gold segments 1…i−1 prefilled)",
            id_prefix=f"segments-{self.task}",
        )


def _num(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def _backend(config: Mapping[str, Any] | LLMBackend) -> LLMBackend:
    if isinstance(config, LLMBackend):
        return config
    try:
        return build_backend(dict(config))
    except ValueError as exc:
        raise ValidationError({"backend": str(exc)}) from None


def dataset_records(*, dataset) -> list[dict[str, Any]]:
    """The records of a dataset imported with ``import_pack``: each procedure's gold payload
    with its id and goal (what the generation protocols read)."""
    return [
        {"id": p.source_example_id, "goal": p.goal, **(p.payload or {})}
        for p in dataset.procedures.order_by("id")
    ]


def segment_requests(
    *,
    backend: LLMBackend,
    task: str,
    record: Mapping[str, Any],
    level: Any = None,
    buffer: int = DEFAULT_BUFFER,
    few_shot: str | None = None,
) -> tuple[seg.GoldAnswer, list[tuple[str, LLMRequest]]]:
    """The gold answer of ``record`` and its four requests, each with its prefix; raises
    :class:`~benchmarks.packs.longproc_segments.SegmentError` or ``ProtocolError`` naming the
    field a record lacks."""
    answer = seg.gold_answer(task, record.get("gold"))
    if record.get("level") is not None:  # the record's own level, else the run's
        level = record["level"]
    if level is None:
        raise ProtocolError("is required (0.5k, 2k or 8k) on the record or as --level", "level")
    prompt = longproc_prompt(record, task, level, few_shot=few_shot)
    base = LLMRequest(
        messages=seg.prefilled_messages(prompt, ""),
        max_tokens=longproc_budget(level, buffer=buffer),
        temperature=0.0,
    )
    requests = []
    for segment in range(1, seg.N_SEGMENTS + 1):
        prefix = seg.prefix_for(answer, segment)
        requests.append((prefix, backend.prefilled(base, prefix) if prefix else base))
    return answer, requests


def segment_analysis(
    *,
    backend: Mapping[str, Any] | LLMBackend,
    task: str,
    records: Sequence[Mapping[str, Any]],
    level: Any = None,
    buffer: int = DEFAULT_BUFFER,
    few_shot: str | None = None,
    seed: int = 0,
    should_stop: Callable[[], bool] | None = None,
) -> SegmentAnalysis:
    """Run the analysis (module docstring). Refusals before anything is sent: an unknown or
    segment-less task (field ``task``), a backend that cannot prefill (field ``backend``, the
    backend named). A record that cannot be cut or prompted is listed in ``refused``; a failed
    request is a row with ``error`` and no score."""
    try:
        seg.check_task(task)
    except seg.SegmentError as exc:
        raise ValidationError({"task": exc.message}) from None
    llm = _backend(backend)
    refusal = llm.prefill_refusal()
    if refusal:
        raise ValidationError({"backend": refusal})
    result = SegmentAnalysis(task=task, model=llm.model)
    plan: list[tuple[str, int, seg.GoldAnswer, str]] = []
    requests: list[LLMRequest] = []
    for position, record in enumerate(records, 1):
        rid = str(record.get("id") or f"record {position}")
        try:
            answer, reqs = segment_requests(
                backend=llm, task=task, record=record, level=level, buffer=buffer, few_shot=few_shot
            )
        except (seg.SegmentError, ProtocolError) as exc:
            result.refused.append({"id": rid, "reason": str(exc)})
            continue
        for segment, (prefix, request) in enumerate(reqs, 1):
            plan.append((rid, segment, answer, prefix))
            requests.append(request)
    rows: list[dict[str, Any] | None] = [None] * len(requests)
    for index, reply in llm.complete_iter(requests, should_stop=should_stop):
        rid, segment, answer, prefix = plan[index]
        row: dict[str, Any] = {"id": rid, "segment": segment, "prefix": prefix}
        if isinstance(reply, LLMError):
            row.update(output=None, finish_reason=None, score=None, error=str(reply))
        else:
            scored = seg.score_segment(task, answer, segment, reply.text)
            row.update(
                output=reply.text,
                finish_reason=reply.finish_reason,
                prompt_tokens=reply.prompt_tokens,
                completion_tokens=reply.completion_tokens,
                error=None,
                **scored,
            )
        rows[index] = row
    result.rows = [r for r in rows if r is not None]
    result.table = seg.per_segment(result.rows, seed=seed)
    return result
