"""The six stages end to end through the real openai client and the local test server."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from mining.models import MiningBatch, MiningDocument, MiningStageUsage
from mining.selectors import batches as selectors
from mining.services import batches as services
from tests.mining.factories import doc, write_jsonl

pytestmark = pytest.mark.django_db(transaction=True)


def _upload(tmp_path, records, name="docs.jsonl") -> SimpleUploadedFile:
    path = tmp_path / name
    write_jsonl(path, records)
    return SimpleUploadedFile(name, path.read_bytes())


def _outcomes(batch):
    return {d.source_id: d for d in MiningDocument.objects.filter(batch=batch)}


def test_six_stages_record_every_path_and_usage(tmp_path, media_root, mining_backends, script):
    records = [
        doc(1),
        doc(2, "NOPROC"),
        doc(3, "BADJSON"),
        doc(4, "SHORT"),
        doc(5, "REPEAT"),
        doc(6, "FILTERME"),
        doc(7, "FINALNO"),
        doc(8, "BADFINAL"),
        doc(9, topic="Health"),
        doc(10, topic="Underwater Basket Weaving"),
        doc(11, text=""),
        '{"id": "broken", "text": ',
    ]
    batch = services.batch_create(
        name="t", upload=_upload(tmp_path, records), backends=mining_backends, start=False
    )
    batch = services.batch_run(batch_id=batch.pk)
    assert batch.status == MiningBatch.Status.DONE
    assert batch.n_total == 12 and batch.n_done == 12
    d = _outcomes(batch)
    assert d["d1"].outcome == "kept" and d["d9"].outcome == "kept"
    assert d["d1"].goal.startswith("Rewritten: Recipe 1")
    assert d["d1"].resources == ["oven", "flour", "tray"]  # de-duplicated case-insensitively
    assert len(d["d1"].steps) == 6
    assert (d["d2"].outcome, d["d2"].stage_reached) == ("dropped", "procedures")
    assert d["d3"].outcome == "error" and "not the expected JSON" in d["d3"].drop_reason
    assert d["d3"].trace["procedures"]["raw_reply"].startswith("Sure!")
    assert (d["d4"].stage_reached, d["d4"].drop_reason) == (
        "prefilter",
        "prefilter: too few steps: 3 < 5",
    )
    assert d["d5"].stage_reached == "prefilter" and "high repetition" in d["d5"].drop_reason
    assert (d["d6"].stage_reached, d["d6"].outcome) == ("filter", "dropped")
    assert "Named-entity" in d["d6"].drop_reason
    assert (
        d["d7"].stage_reached == "final_filter"
        and "correctness (The steps skip baking.)" in d["d7"].drop_reason
    )
    assert d["d8"].outcome == "error" and "missing field 'sequential'" in d["d8"].drop_reason
    assert (
        d["d10"].outcome == "invalid"
        and "unknown topic 'Underwater Basket Weaving'" in d["d10"].drop_reason
    )
    assert d["d11"].outcome == "invalid" and "empty document" in d["d11"].drop_reason
    assert (
        d["line-12"].outcome == "invalid" and "line 12: not valid JSON" in d["line-12"].drop_reason
    )
    # Invalid inputs never reach the LLM: 9 extraction requests for 9 valid documents.
    assert script.calls["procedures"] == 9
    # Trace follows the reference's processed_example keys.
    assert set(d["d1"].trace) == {
        "procedures",
        "prefilter",
        "filter",
        "postprocess",
        "resources",
        "final_filter",
    }

    usage = {u.stage: u for u in MiningStageUsage.objects.filter(batch=batch)}
    assert usage["procedures"].requests == 9
    assert usage["filter"].requests == 5  # d1, d6, d7, d8, d9
    assert usage["final_filter"].requests == 4  # d1, d7, d8, d9
    # cost = tokens x prices (2 USD / 8 USD per million)
    p = usage["procedures"]
    assert p.cost_usd == (
        Decimal(2) * p.prompt_tokens + Decimal(8) * p.completion_tokens
    ) / Decimal(1_000_000)

    y = selectors.batch_yields(batch=batch)
    total = y["total"]
    assert total["n"] == 12 and total["kept"] == 2 and total["invalid"] == 3
    after = {c["stage"]: c["count"] for c in total["stages"]}
    assert after == {
        "procedures": 7,
        "prefilter": 5,
        "filter": 4,
        "postprocess": 4,
        "resources": 4,
        "final_filter": 2,
    }
    food = next(r for r in y["topics"] if r["topic"] == "Food & Dining")
    assert food["n"] == 9 and food["kept"] == 1

    rec = next(selectors.export_records(batch=batch))
    assert set(rec) == {"schema_version", "source_example", "processed_example", "final_procedure"}
    assert rec["source_example"]["id"] == "d1" and rec["final_procedure"]["resources"] == [
        "oven",
        "flour",
        "tray",
    ]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_csv_and_parquet_uploads_with_truncation_and_failed_requests(
    fmt, tmp_path, media_root, settings, llm_server, mining_backends, script
):
    import csv

    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [doc(1), doc(2, topic="Health"), doc(3, "FAILME")]
    rows[1]["text"] = "Huge doc\n" + "word " * 30_000  # 150,009 characters
    path = tmp_path / f"docs.{fmt}"
    if fmt == "csv":
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, fieldnames=["id", "url", "topic", "text"])
            w.writeheader()
            w.writerows(rows)
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    # A request that fails for good (400 is not retried) becomes an 'error' outcome, not a crash.
    llm_server.add_fault("status", status=400, match=lambda r: "FAILME" in r.prompt_text)
    upload = SimpleUploadedFile(path.name, path.read_bytes())
    batch = services.batch_create(
        name=fmt, upload=upload, stages="1,2", backends=mining_backends, start=False
    )
    assert batch.source_format == fmt and batch.backends.keys() == {"procedures"}
    batch = services.batch_run(batch_id=batch.pk)
    d = _outcomes(batch)
    assert d["d1"].outcome == "kept" and d["d1"].goal.startswith(
        "Recipe 1"
    )  # no rewrite: stages 1-2 only
    assert (
        d["d2"].notes == ["document truncated from 150009 to 100000 characters"]
        and len(d["d2"].text) == 100_000
    )
    assert d["d2"].outcome == "kept"
    assert (
        d["d3"].outcome == "error"
        and "LLM request failed" in d["d3"].drop_reason
        and "HTTP 400" in d["d3"].drop_reason
    )
    usage = MiningStageUsage.objects.get(batch=batch, stage="procedures")
    assert (usage.requests, usage.failed_requests) == (3, 1)
    assert batch.status == MiningBatch.Status.DONE and batch.n_done == 3
