"""Test data and a deterministic H.3 judge responder for the local LLM test server."""

from __future__ import annotations

import json
import re

from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic
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


def make_data(
    *,
    n: int = 10,
    generators=("gen-a",),
    dataset: str = "bench",
    bad_every: int = 0,
    garble_every: int = 0,
    topics=("food-dining", "health"),
) -> dict:
    ds = Dataset.objects.create(name=dataset)
    from benchmarks.topics import topic_name

    # transactional tests truncate the topics the migration seeded: bring back those we use
    topic_objs = [
        Topic.objects.get_or_create(slug=s, defaults={"name": topic_name(s)})[0] for s in topics
    ]
    procs = Procedure.objects.bulk_create(
        [
            Procedure(
                dataset=ds,
                source_example_id=f"ex-{i:05d}",
                topic=topic_objs[i % len(topic_objs)],
                goal=f"Goal number {i}",
                resources=["r"],
                steps=[f"Ref step {k} of {i}" for k in range(1, 5)],
            )
            for i in range(n)
        ]
    )
    gens = []
    out = {"dataset": ds, "procedures": procs, "generators": []}
    for gname in generators:
        g = Generator.objects.create(name=gname, model=gname)
        out["generators"].append(g)
        for i, p in enumerate(procs):
            steps = [f"{gname} step {k} for {i}" for k in range(1, 5)]
            if bad_every and i % bad_every == 0:
                steps[1] += " BAD"
            if garble_every and i % garble_every == 1:
                steps[2] += " GARBLE"
            gens.append(
                Generation(procedure=p, generator=g, predicted_steps=steps, token_count=10 + i)
            )
    Generation.objects.bulk_create(gens)
    out["generations"] = list(Generation.objects.filter(procedure__dataset=ds).order_by("id"))
    return out


def work_chunk(run, *, token: str | None = None) -> engine.ChunkOutcome:
    """What a worker's chunk task does for ``run``, here and without enqueueing the next chunk."""
    return engine.execute(run._meta.label, run.pk, token=token, chain=False)
