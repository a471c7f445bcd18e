"""A mining batch in batch mode (every LLM stage through the provider's Batch API) against the
local batch server through the real ``openai`` client, on PostgreSQL: one round of batch files
per stage, documents ending exactly as the same corpus mined online, a round that expires
part-done sends the rest again (each stage of each document answered once), usage priced at
the batch rate."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db.models import Sum

from benchmarks.services import batch_runs
from core.runs import engine
from mining.models import MiningBatch, MiningDocument, MiningStageUsage
from mining.services import batches as services
from mining.services.batch_mode import MiningBatches
from mining.services.ingest import batch_ingest
from tests.mining.factories import doc
from tests.mining.script import MiningScript
from tests.support.batch_server import BatchTestServer

pytestmark = pytest.mark.django_db(transaction=True)
LABEL = "mining.MiningBatch"
DOCS = [doc(0), doc(1, "FILTERME"), doc(2, "NOPROC"), doc(3), doc(4, "SHORT"), doc(5, "FINALNO")]


def create(name: str, backends: dict) -> MiningBatch:
    upload = SimpleUploadedFile("d.jsonl", "".join(json.dumps(d) + "\n" for d in DOCS).encode())
    return services.batch_create(
        name=name, upload=upload, backends=backends, options={"chunk_size": 8}, start=False
    )


def ends(batch: MiningBatch) -> dict:
    return {
        d.source_id: (d.outcome, d.stage_reached, d.goal, d.steps, d.resources)
        for d in MiningDocument.objects.filter(batch=batch)
    }


def test_a_mining_batch_in_batch_mode_ends_as_online_at_the_batch_rate(
    media_root, monkeypatch, mining_backends, script
):
    monkeypatch.setattr("core.runs.engine.enqueue", lambda *a, **k: None)
    # pages of 2: a batch file's replies are read and stored a page at a time, in one transaction
    monkeypatch.setattr("mining.services.batch_mode.PAGE", 2)
    online = engine.execute_inline(create("online", mining_backends))
    assert online.status == "done"
    provider = MiningScript()
    with BatchTestServer(responder=provider) as server:
        config = {
            "backend": "openai",
            "mode": "batch",
            "base_url": server.base_url,
            "model": "m",
            "price_in_per_mtok": 2.0,
            "price_out_per_mtok": 8.0,
        }
        batch = create("batched", {"default": config})
        rounds = 0
        while (outcome := engine.execute(LABEL, batch.pk, chain=False).status) == "waiting":
            rounds += 1
            if rounds == 2:  # the second stage's batch expires with 2 of its requests done
                server.run(n=2)
                server.expire()
            else:
                server.finish()
            assert rounds < 12
        assert outcome == "done", MiningBatch.objects.get(pk=batch.pk).error
    rows = batch_runs.batches_of(batch)
    assert rows[1].status == "expired" and rows[1].n_stored == 2 and rows[1].n_returned > 0
    assert ends(batch) == ends(online)  # same outcomes, goals, steps, resources
    assert {o for o, *_ in ends(batch).values()} >= {"kept", "dropped"}
    assert provider.requests == script.requests  # each stage of each document asked once
    usage = MiningStageUsage.objects.filter(batch=batch).aggregate(
        p=Sum("prompt_tokens"), c=Sum("completion_tokens"), cost=Sum("cost_usd")
    )
    assert usage["p"] == 1000 * sum(provider.requests.values())
    assert usage["cost"] == (Decimal(usage["p"]) * 2 + Decimal(usage["c"]) * 8) / 10**6 / 2


def test_a_batch_file_leaves_out_what_an_open_batch_holds_and_reads_text_for_extraction(
    media_root, monkeypatch
):
    """The documents an open batch holds are left out page by page (pages of 2 here: a whole
    page of them, then one of the next page); every other pending document is sent once, in
    file order, its extraction prompt holding its text."""
    monkeypatch.setattr("mining.services.batch_mode.PAGE", 2)
    config = {"backend": "openai", "mode": "batch", "base_url": "http://127.0.0.1:9", "model": "m"}
    batch = create("held", {"default": config})
    batch_ingest(batch=batch)
    docs = MiningDocument.objects.filter(batch=batch, outcome="pending").order_by("position")
    ids = list(docs.values_list("pk", flat=True))
    assert len(ids) == len(DOCS)
    held = {ids[0], ids[1], ids[3]}
    sent = list(MiningBatches().pending(batch, exclude=held))
    assert [key for key, _ in sent] == [pk for pk in ids if pk not in held]
    for key, request in sent:
        assert MiningDocument.objects.get(pk=key).text in request.messages[0]["content"]
