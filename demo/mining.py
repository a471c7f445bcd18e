"""The demo's mining batch: a small bundled corpus (``demo/fixtures/mining/corpus.jsonl``, 12
short web documents written for the demo) mined with all six stages, its LLM stages answered by
the ``replay`` backend from ``demo/fixtures/mining/replies.jsonl``.

The recording was made with the ``record`` backend (:mod:`benchmarks.llm.replay`) around
:class:`ScriptedBackend`, which answers each stage from ``answers.json`` — replies written by
hand for the demo, not a model's. ``manage.py record_demo_mining`` makes the recording again
(needed only when a stage's prompt changes: a changed prompt has no recorded reply, and the
replay then reports the request as failed).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, ClassVar

from benchmarks.llm.base import (
    Capabilities,
    LLMBackend,
    LLMError,
    LLMRequest,
    LLMResponse,
    LLMResult,
)
from benchmarks.tokens import count_tokens

MINING_DIR = Path(__file__).resolve().parent / "fixtures" / "mining"
CORPUS = MINING_DIR / "corpus.jsonl"
ANSWERS = MINING_DIR / "answers.json"
RECORDING = MINING_DIR / "replies.jsonl"
RECORDING_SETTING = "demo/fixtures/mining/replies.jsonl"  # relative to the project directory
DEMO_MODEL = "gpt-4.1"
DEMO_BATCH = "Demo batch: bundled corpus, replayed replies"


def replay_backends() -> dict[str, Any]:
    """The demo batch's backend config: every LLM stage replays the recording."""
    return {"default": {"backend": "replay", "model": DEMO_MODEL, "recording": RECORDING_SETTING}}


class ScriptedBackend(LLMBackend):
    """Answers a mining stage's request from ``answers.json`` (document id → stage → reply),
    finding the document by its text or one of its goals in the prompt. Used only to make the
    demo recording; config: ``{"backend": "demo.mining.ScriptedBackend", "model": …}``."""

    name = "demo-scripted"
    capabilities: ClassVar[Capabilities] = Capabilities(structured_output=True)

    def __init__(self, config: dict[str, Any]) -> None:
        super().__init__(config)
        self.answers: dict[str, dict[str, Any]] = json.loads(ANSWERS.read_text(encoding="utf-8"))
        self.texts = {}
        for line in CORPUS.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            self.texts[row["id"]] = row.get("text", "")

    def _document(self, prompt: str, stage: str) -> str | None:
        for doc_id, answers in self.answers.items():
            if stage == "procedures":
                if self.texts.get(doc_id) and self.texts[doc_id] in prompt:
                    return doc_id
                continue
            goals = [
                (answers.get("procedures") or {}).get("goal"),
                (answers.get("postprocess") or {}).get("rewritten_goal"),
            ]
            if any(g and f"Goal:\n{g}\n" in prompt for g in goals):
                return doc_id
        return None

    def complete_iter(
        self,
        requests: Iterable[LLMRequest],
        *,
        should_stop: Callable[[], bool] | None = None,
    ) -> Iterator[tuple[int, LLMResult]]:
        for index, request in enumerate(requests):
            stage = request.json_schema_name.removeprefix("how2mine_")
            prompt = (request.messages or [{}])[-1].get("content", "")
            doc_id = self._document(prompt, stage)
            reply = (self.answers.get(doc_id) or {}).get(stage) if doc_id else None
            if reply is None:
                yield index, LLMError(f"no scripted {stage} reply for this prompt")
                continue
            text = json.dumps(reply, ensure_ascii=False)
            yield (
                index,
                LLMResponse(
                    text=text,
                    prompt_tokens=count_tokens(prompt),
                    completion_tokens=count_tokens(text),
                    finish_reason="stop",
                    model=self.model,
                ),
            )


def record_backends() -> dict[str, Any]:
    """The backend config that makes the recording: ``record`` around the scripted replies."""
    return {
        "default": {
            "backend": "record",
            "model": DEMO_MODEL,
            "recording": str(RECORDING),
            "inner": {"backend": "demo.mining.ScriptedBackend", "model": DEMO_MODEL},
        }
    }


def record_demo_replies() -> dict[str, int]:
    """Write ``replies.jsonl`` again: the corpus through every stage, the scripted replies
    recorded by the ``record`` backend. No database; returns the outcome counts."""
    from benchmarks.llm.registry import build_backend
    from mining.documents import DocState
    from mining.heuristics import HeuristicsConfig
    from mining.pipeline import Pipeline
    from mining.services.batches import clean_options, iter_documents
    from mining.stages import LLM_STAGES

    options = clean_options(None)
    states = [
        DocState(key=d.line, text=d.text, goal=d.goal, steps=d.steps, resources=d.resources)
        for d in iter_documents(CORPUS, fmt="jsonl", options=options)
        if not d.problem
    ]
    RECORDING.unlink(missing_ok=True)
    config = record_backends()["default"]
    backends = {key: build_backend(config) for key in LLM_STAGES}
    Pipeline(
        stages=[1, 2, 3, 4, 5, 6],
        backends=backends,
        heuristics=HeuristicsConfig(min_steps=options["min_steps"], max_steps=options["max_steps"]),
        max_tokens=options["max_tokens"],
    ).run(states)
    counts: dict[str, int] = {}
    for state in states:
        counts[state.outcome] = counts.get(state.outcome, 0) + 1
    return counts


def demo_batch_ensure(*, stdout=None):
    """The finished demo batch: created from the bundled corpus and run here, in this process,
    on the replay backend (seconds; no worker, no model). Kept if it exists."""
    from django.core.files import File

    from mining.models import MiningBatch
    from mining.services.batches import batch_create, batch_run

    batch = MiningBatch.objects.filter(name=DEMO_BATCH).first()
    if batch is not None:
        return batch
    with CORPUS.open("rb") as fh:
        batch = batch_create(
            name=DEMO_BATCH,
            upload=File(fh, name="demo-corpus.jsonl"),
            backends=replay_backends(),
            start=False,
        )
    return batch_run(batch_id=batch.pk)
