"""Which documents a mining chunk takes (:class:`mining.services.budgets.Intake`):
the topic counts it keeps from what it stores stay equal to a recount of the rows, the
documents it takes are each topic's first pending ones in input order, and no budget is
overshot; end to end through the writer thread with ``desired_valid_per_topic``."""

from __future__ import annotations

import json
import random

import pytest
from django.core.files.base import ContentFile

from mining.models import MiningDocument
from mining.services import batches as services
from mining.services import execution
from mining.services.budgets import Intake, topic_counts
from mining.services.ingest import batch_ingest
from tests.mining.factories import doc

TOPICS = ("Health", "Food & Dining", "Travel & Tourism")


def _batch(records, options, backends=None, stages=None):
    body = "".join(json.dumps(r) + "\n" for r in records).encode()
    return services.batch_create(
        name="intake",
        upload=ContentFile(body, name="d.jsonl"),
        stages=stages,
        backends=backends or {},
        options=options,
        start=False,
    )


@pytest.mark.django_db
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kept_counts_equal_a_recount_and_takes_are_each_topics_first(media_root, seed):
    rng = random.Random(seed)
    records = [doc(i, topic=rng.choice(TOPICS)) for i in range(60)]
    batch = _batch(records, {"candidates_per_topic": 12, "desired_valid_per_topic": 5}, stages=[2])
    batch_ingest(batch=batch, beat=lambda: None)
    intake = Intake(batch)
    open_docs: list[MiningDocument] = []
    rounds = 0
    while True:
        before = intake.last_pk
        pending_after = list(
            MiningDocument.objects.filter(batch=batch, outcome="pending", pk__gt=before)
            .order_by("pk")
            .values_list("pk", "topic")
        )
        size = rng.randint(1, 6)
        taken = intake.take(size)
        if not taken and not open_docs:
            break
        keys = [d.pk for d in taken]
        assert len(keys) <= size and keys == sorted(keys) and all(k > before for k in keys)
        for topic in {d.topic for d in taken}:  # a topic's first pending documents, no gap
            mine = [d.pk for d in taken if d.topic == topic]
            firsts = [pk for pk, t in pending_after if t == topic][: len(mine)]
            assert mine == firsts
        open_docs += taken
        rng.shuffle(open_docs)
        cut = rng.randint(1, len(open_docs)) if open_docs else 0
        finishing, open_docs = open_docs[:cut], open_docs[cut:]
        stored = []
        for d in finishing:
            outcome = rng.choice(["kept", "kept", "dropped", "error"])
            MiningDocument.objects.filter(pk=d.pk).update(outcome=outcome, stage_reached="x")
            stored.append((d.pk, outcome, "x"))
        intake.stored(stored + [(d.pk, "pending", "x") for d in open_docs[:2]])
        assert intake.counts == topic_counts(batch=batch)
        rounds += 1
        assert rounds < 200
    counts = topic_counts(batch=batch)
    rows = MiningDocument.objects.filter(batch=batch)
    for topic, c in counts.items():  # no budget overshot; a topic closed only once spent
        assert c["candidates"] <= 12 and c["valid"] <= 5
        if rows.filter(topic=topic, stage_reached="budget").exists():
            assert c["candidates"] == 12 or c["valid"] == 5


@pytest.mark.django_db(transaction=True)
def test_desired_valid_through_the_writer_thread(media_root, mining_backends, script, monkeypatch):
    # per topic: 3 excluded by the LLM filter, then 6 that pass; 2 valid wanted
    records = []
    for t, topic in enumerate(TOPICS[:2]):
        records += [doc(100 * t + i, "FILTERME" if i < 3 else "", topic=topic) for i in range(9)]
    batch = _batch(records, {"desired_valid_per_topic": 2, "chunk_size": 2}, mining_backends)
    ends: list[tuple] = []  # per chunk: what its intake kept, and a recount of the rows then
    original = execution._work_streaming

    def work_streaming(run, lease, pipeline, first, refill, window, intake, *rest):
        state = original(run, lease, pipeline, first, refill, window, intake, *rest)
        ends.append((intake.counts, topic_counts(batch=run)))
        return state

    monkeypatch.setattr(execution, "_work_streaming", work_streaming)
    batch = services.batch_run(batch_id=batch.pk)
    assert batch.status == "done" and batch.n_done == batch.n_total == 18
    counts = topic_counts(batch=batch)
    assert {t: (c["valid"], c["pending"]) for t, c in counts.items()} == {
        "health": (2, 0),
        "food-dining": (2, 0),
    }
    rows = MiningDocument.objects.filter(batch=batch)
    assert rows.filter(stage_reached="budget").count() >= 2  # each topic closed before its end
    # what each chunk kept from its own writes equals the rows when it ended
    assert len(ends) >= 2 and all(kept == recount for kept, recount in ends)
    assert script.calls["procedures"] == 18 - rows.filter(stage_reached="budget").count()
