"""``manage.py mine --dry-run``: validate an input file and estimate what a batch would send,
with no database write and no LLM call."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchmarks.tokens import count_tokens
from mining import readers
from mining.documents import DocState
from mining.heuristics import HeuristicsConfig
from mining.pipeline import Pipeline
from mining.services.batches import clean_options, iter_documents
from mining.stages import STAGES, parse_stages, render_prompt


def dry_run_file(
    *, path: Path, stages: str | list[int] | None = None, options: dict[str, Any] | None = None
) -> Iterable[dict[str, Any]]:
    """Validate every record and run what needs no LLM (the heuristics filter on records that
    already carry goal/steps); say for the rest which stage would be sent next and roughly how
    many prompt tokens it would take (o200k)."""
    stage_list = parse_stages(stages)
    opts = clean_options(options)
    fmt = readers.detect_format(path.name)
    heur = HeuristicsConfig(min_steps=opts["min_steps"], max_steps=opts["max_steps"])
    for doc in iter_documents(path, fmt=fmt, options=opts):
        out: dict[str, Any] = {
            "position": doc.line,
            "id": doc.source_id,
            "topic": doc.topic or doc.topic_raw,
            "notes": doc.notes,
        }
        if doc.problem:
            yield {**out, "outcome": "invalid", "stage": "input", "reason": f"input: {doc.problem}"}
            continue
        state = DocState(
            key=doc.line, text=doc.text, goal=doc.goal, steps=doc.steps, resources=doc.resources
        )
        leading: list[int] = []
        for number, _key, _label, prompt in STAGES:
            if number not in stage_list or (number == 1 and doc.has_procedure):
                continue
            if prompt:
                break
            leading.append(number)
        if 1 not in stage_list and not doc.has_procedure:
            leading = [s for s in leading if s != 2]
        Pipeline(stages=leading, backends={}, heuristics=heur).run([state]) if leading else None
        if leading and state.outcome != "kept":
            yield {
                **out,
                "outcome": state.outcome,
                "stage": state.stage_reached,
                "reason": state.reason,
            }
            continue
        if 1 not in stage_list and not doc.has_procedure:
            yield {
                **out,
                "outcome": "invalid",
                "stage": "input",
                "reason": "input: stage 1 (extraction) is not selected and the record has no goal/steps",
            }
            continue
        nxt = next(
            (
                key
                for number, key, _l, prompt in STAGES
                if number in stage_list and prompt and not (number == 1 and doc.has_procedure)
            ),
            None,
        )
        if nxt is None:
            yield {**out, "outcome": "kept", "stage": state.stage_reached, "reason": ""}
            continue
        prompt_tokens = count_tokens(
            render_prompt(
                nxt, document=doc.text, goal=doc.goal, steps=doc.steps, resources=doc.resources
            )
        )
        yield {
            **out,
            "outcome": "would_send",
            "stage": nxt,
            "reason": "",
            "prompt_tokens": prompt_tokens,
        }
