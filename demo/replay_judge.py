"""The demo's judge that runs offline: ``demo-replay``, on the ``replay`` backend, answers each
demo generation from ``demo/fixtures/judge/replies.jsonl`` instead of calling a model, so an
admin can launch a judge run over the demo dataset from the console (``/admin/judging/judgerun/
launch/``) and watch a real worker work it to "done" without an API key.

The recorded replies are the paper's published verdicts (judge ``paper-published``, transcribed
in ``demo/fixtures/demo/judgments``), written as the H.3 JSON reply to the exact request the
judge sends for each generation; no model wrote them. ``manage.py record_demo_judge`` records
them again (needed only when the H.3 prompt or the demo data changes: a request with no
recorded reply fails, naming the recording).
"""

from __future__ import annotations

import json
from pathlib import Path

from django.db import transaction

from benchmarks.llm.base import LLMResponse
from benchmarks.llm.replay import recording_append
from benchmarks.models import Generation
from benchmarks.tokens import count_tokens
from judging.models import Judge, Judgment
from judging.services.items import item_content_hash, item_input, judge_request
from judging.services.judges import judge_create

REPLAY_JUDGE = "demo-replay"
RECORDING = Path(__file__).resolve().parent / "fixtures" / "judge" / "replies.jsonl"
RECORDING_SETTING = "demo/fixtures/judge/replies.jsonl"  # relative to the project directory
RECORDED_MODEL = "paper-published"
JUDGE_FIELDS = {
    "backend": Judge.Backend.REPLAY,
    "model": "paper-published verdicts (recorded replies, no model is called)",
    "recording": RECORDING_SETTING,
    "concurrency": 4,
    "decoding": {"temperature": 0.0},
}


def replay_judge_ensure() -> Judge:
    """The demo's replay judge; kept as it is when it exists."""
    return Judge.objects.filter(name=REPLAY_JUDGE).first() or judge_create(
        name=REPLAY_JUDGE, **JUDGE_FIELDS
    )


def recorded_reply(judgment: Judgment) -> str:
    """A published verdict as the judge's H.3 JSON reply."""
    return json.dumps(
        {"reasoning": judgment.reasoning, "critical_failures": judgment.critical_failures},
        ensure_ascii=False,
    )


@transaction.atomic
def record_demo_judge(*, dataset: str, published_judge: str, path: Path = RECORDING) -> int:
    """Write the recording again: one reply per generation of ``dataset`` that
    ``published_judge`` judged, keyed by the request the replay judge sends for it. Returns
    how many replies were written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("", encoding="utf-8")
    RECORDING.touch()  # the judge names this file: it must be there to be valid
    judge = replay_judge_ensure()
    published = {
        j.content_hash: j
        for j in Judgment.objects.filter(judge__name=published_judge, parse_failed=False)
    }
    template = judge.prompt_text()
    generations = (
        Generation.objects.filter(procedure__dataset__name=dataset)
        .select_related("procedure")
        .order_by("pk")
    )
    written = 0
    for generation in generations:
        content_hash = item_content_hash(generation)
        verdict = published.get(content_hash)
        if verdict is None:
            continue
        inp = item_input(
            item_id=0, content_hash=content_hash, generation=generation, template=template
        )
        text = recorded_reply(verdict)
        response = LLMResponse(
            text=text,
            prompt_tokens=count_tokens(inp.prompt),
            completion_tokens=count_tokens(text),
            finish_reason="stop",
            model=RECORDED_MODEL,
        )
        recording_append(path, judge_request(judge=judge, prompt=inp.prompt), response)
        written += 1
    return written
