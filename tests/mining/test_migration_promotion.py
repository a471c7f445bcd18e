"""Migrating a batch's promotion kept in ``options["promotion"]`` to its own run
(MiningPromotion, mining 0004) keeps its state, dataset, counts, error and dates; a promotion
left queued or running becomes an orphaned run the engine's scan resumes; the way down puts it
back in the options."""

from __future__ import annotations

import pytest

from tests.support.migrations import back_to_the_leaf, leaf_nodes, migrate_to  # noqa: F401

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.usefixtures("back_to_the_leaf")]

BEFORE = [("mining", "0003_corpus_scale")]
AFTER = [("mining", "0004_promotion_is_a_run")]
PARAMS = {
    "dataset_name": "mined",
    "version": "v2",
    "description": "",
    "per_topic": 4,
    "seed": 1,
    "dedup_against": None,
    "threshold": 0.65,
}


def _migrate(targets):
    # the state read with the datasets (benchmarks) as they are now
    return migrate_to(targets, state_with=leaf_nodes("benchmarks"))


def test_options_promotion_becomes_a_run_and_comes_back():
    old = _migrate(BEFORE)
    Batch = old.get_model("mining", "MiningBatch")
    Dataset = old.get_model("benchmarks", "Dataset")
    made = Dataset.objects.create(name="mined", version="v2")
    asked, ended = "2026-01-02T03:04:05+00:00", "2026-01-02T03:09:00+00:00"
    states = {
        "done": {
            "status": "done",
            "dataset": "mined@v2",
            "asked_at": asked,
            "params": PARAMS,
            "dataset_id": made.pk,
            "promoted": 5,
            "candidates": 8,
            "duplicates": 1,
            "per_topic": {"health": 4, "transportation": 1},
            "finished_at": ended,
        },
        "failed": {
            "status": "failed",
            "dataset": "x@v1",
            "asked_at": asked,
            "params": {**PARAMS, "dataset_name": "x", "version": "v1"},
            "error": "dataset x@v1 already exists",
            "finished_at": ended,
        },
        "queued": {"status": "queued", "dataset": "q@v1", "asked_at": asked, "params": PARAMS},
        "running": {"status": "running", "dataset": "r@v1", "asked_at": asked, "params": PARAMS},
    }
    batches = {}
    for name, state in states.items():
        batches[name] = Batch.objects.create(
            name=name,
            source_format="jsonl",
            stages=[1],
            status="done",
            options={"chunk_size": 8, "promotion": state},
        ).pk
    plain = Batch.objects.create(name="plain", source_format="jsonl", options={"min_steps": 3}).pk

    new = _migrate(AFTER)
    Batch = new.get_model("mining", "MiningBatch")
    Promotion = new.get_model("mining", "MiningPromotion")
    assert Promotion.objects.count() == 4 and not Promotion.objects.filter(batch_id=plain)
    for pk in batches.values():
        assert Batch.objects.get(pk=pk).options == {"chunk_size": 8}
    assert Batch.objects.get(pk=plain).options == {"min_steps": 3}
    done = Promotion.objects.get(batch_id=batches["done"])
    assert (done.status, done.dataset_id, done.n_total, done.n_done) == ("done", made.pk, 8, 5)
    assert done.result == {
        "promoted": 5,
        "candidates": 8,
        "duplicates": 1,
        "per_topic": {"health": 4, "transportation": 1},
    }
    assert done.params == PARAMS and done.created_at.isoformat() == asked
    assert done.finished_at.isoformat() == ended
    failed = Promotion.objects.get(batch_id=batches["failed"])
    assert (failed.status, failed.error, failed.result) == (
        "failed",
        "dataset x@v1 already exists",
        None,
    )
    for name in ("queued", "running"):  # orphans: running without a heartbeat
        p = Promotion.objects.get(batch_id=batches[name])
        assert (p.status, p.heartbeat_at, p.lease_owner, p.finished_at) == (
            "running",
            None,
            "",
            None,
        )

    old = _migrate(BEFORE)
    Batch = old.get_model("mining", "MiningBatch")
    back = Batch.objects.get(pk=batches["done"]).options["promotion"]
    assert back["status"] == "done" and back["dataset_id"] == made.pk and back["promoted"] == 5
    assert back["dataset"] == "mined@v2" and back["params"] == PARAMS
    assert (
        Batch.objects.get(pk=batches["failed"])
        .options["promotion"]["error"]
        .startswith("dataset x@v1")
    )
    assert Batch.objects.get(pk=batches["queued"]).options["promotion"]["status"] == "running"
    assert "promotion" not in Batch.objects.get(pk=plain).options

    new = _migrate(AFTER)  # and forward again
    assert new.get_model("mining", "MiningPromotion").objects.count() == 4
