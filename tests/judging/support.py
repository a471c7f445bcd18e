"""A deterministic H.3 judge responder for the local LLM test server, and one chunk of a run
worked here (the data they judge: tests/judging/factories.py)."""

from __future__ import annotations

import json
import re

from core.runs import engine

_L2 = re.compile(r"\nL2:\n(.*?)\n\n# Output format", re.DOTALL)


def judge_responder(req) -> str:
    """Verdict from the candidate steps in the prompt: a step with BAD -> one failure at that
    step; GARBLE -> unparseable text; THINK -> a <think> block + fenced JSON; else no failure."""
    match = _L2.search(req.prompt_text)
    l2 = match.group(1) if match else ""
    if "GARBLE" in l2:
        return "I cannot decide {not json"
    failures = []
    for line in l2.splitlines():
        num, _, text = line.partition(". ")
        if "BAD" in text:
            failures.append(
                {"failure": f"step {num} is bad", "L1_steps": [1], "L2_steps": [int(num)]}
            )
    body = json.dumps({"reasoning": "checked every step", "critical_failures": failures})
    if "THINK" in l2:
        return f"<think>hmm</think>\n```json\n{body}\n```"
    return body


def work_chunk(run, *, token: str | None = None) -> engine.ChunkOutcome:
    """What a worker's chunk task does for ``run``, here and without enqueueing the next chunk."""
    return engine.execute(run._meta.label, run.pk, token=token, chain=False)
