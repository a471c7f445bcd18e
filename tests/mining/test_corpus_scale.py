"""Corpus-scale mining on PostgreSQL: shard directories and globs in storage, every format,
the column map (API, console), per-topic budgets applied from the rows."""

from __future__ import annotations

import gzip
import io
import json

import pyarrow as pa
import pyarrow.ipc as ipc
import pyarrow.parquet as pq
import pytest
from django.core.exceptions import ValidationError
from django.core.files.base import ContentFile
from django.core.files.storage import default_storage
from django.test import Client
from rest_framework.test import APIClient

from mining.forms import BatchForm
from mining.models import MiningBatch, MiningDocument
from mining.services import batches as services
from tests.mining.factories import doc

pytestmark = pytest.mark.django_db(transaction=True)


COLUMNS = {"text": "body", "url": "link", "topic": "category", "id": "doc_id"}
STEPS = ["Preheat the oven.", "Mix the flour.", "Knead the dough.", "Shape it.", "Bake it."]


def _mapped(i: int) -> dict:
    d = doc(i)
    return {"doc_id": d["id"], "link": d["url"], "category": d["topic"], "body": d["text"]}


def _zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return sink.getvalue().to_pybytes()


def _table_bytes(rows, kind: str) -> bytes:
    table, sink = pa.Table.from_pylist(rows), io.BytesIO()
    if kind == "parquet":
        pq.write_table(table, sink)
    else:
        with ipc.new_file(sink, table.schema) as writer:
            writer.write_table(table)
    return sink.getvalue()


def _store_shards(folder: str) -> None:
    """Four shards, four formats, the mapped columns; shard 1 has a bad line 2."""
    lines = [json.dumps(_mapped(0)), "{broken", json.dumps(_mapped(1))]
    default_storage.save(
        f"{folder}/part-1.jsonl.gz", ContentFile(gzip.compress(("\n".join(lines) + "\n").encode()))
    )
    csv_text = "doc_id,link,category,body\n" + "".join(
        f'{r["doc_id"]},{r["link"]},{r["category"]},"{r["body"]}"\n'
        for r in (_mapped(2), _mapped(3))
    )
    default_storage.save(f"{folder}/part-2.csv.zst", ContentFile(_zstd(csv_text.encode())))
    default_storage.save(
        f"{folder}/part-3.parquet", ContentFile(_table_bytes([_mapped(4)], "parquet"))
    )
    default_storage.save(f"{folder}/part-4.arrow", ContentFile(_table_bytes([_mapped(5)], "arrow")))
    default_storage.save(f"{folder}/README.txt", ContentFile(b"not a shard"))


@pytest.mark.parametrize("source", ["corpus", "corpus/part-*", "corpus/part-[1-4].*"])
def test_a_shard_directory_or_glob_in_storage_is_ingested_in_order(
    media_root, mining_backends, source
):
    _store_shards("corpus")
    batch = services.batch_create(
        name="shards",
        source=source,
        backends=mining_backends,
        options={"columns": COLUMNS},
        start=False,
    )
    assert batch.source_pattern == source and batch.source_format == "jsonl"
    assert services.batch_ingest(batch=batch) == 7
    rows = list(MiningDocument.objects.filter(batch=batch).order_by("position"))
    # position: the shard's line (or row) after the lines of the shards before it
    positions = [r.position for r in rows]
    assert positions[:3] == [1, 2, 3] and len(set(positions)) == 7
    assert [r.source_id for r in rows] == [
        "d0",
        "corpus/part-1.jsonl.gz:line-2",
        "d1",
        "d2",
        "d3",
        "d4",
        "d5",
    ]
    bad = rows[1]
    assert bad.outcome == "invalid" and bad.drop_reason.startswith(
        "input: corpus/part-1.jsonl.gz: line 2: not valid JSON"
    )
    assert {r.topic for r in rows if r.outcome == "pending"} == {"food-dining"}
    assert rows[6].text == doc(5)["text"] and rows[3].url == doc(2)["url"]
    batch.refresh_from_db()
    assert (batch.n_total, batch.n_done) == (7, 1)


def test_sources_that_match_nothing_or_clash_are_refused(media_root, mining_backends):
    _store_shards("corpus")
    cases = [
        ({"source": "nowhere"}, "source: nowhere: no such stored file, directory or glob"),
        ({"source": "corpus/*.tsv"}, "the glob matched no corpus file"),
        ({"source": "corpus/README.txt"}, "README.txt: unknown file type"),
        ({}, "give a file to upload or a stored source"),
        (
            {"source": "corpus", "upload": ContentFile(b"{}", name="a.jsonl")},
            "give a file to upload or a stored source",
        ),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValidationError) as exc:
            services.batch_create(name="x", backends=mining_backends, start=False, **kwargs)
        assert message in str(exc.value)
    assert MiningBatch.objects.count() == 0


def test_api_creates_a_batch_over_a_stored_glob_with_columns_and_budgets(
    media_root, make_user, mining_backends, eager_celery
):
    _store_shards("corpus")
    client = APIClient()
    client.force_authenticate(make_user("adm", role="admin"))
    options = {"columns": COLUMNS, "candidates_per_topic": 3, "desired_valid_per_topic": 2}
    resp = client.post(
        "/api/mining/batches/",
        {"source": "corpus/part-*", "backends": mining_backends, "options": options},
        format="json",
    )
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert body["source_pattern"] == "corpus/part-*"
    assert body["options"]["columns"] == COLUMNS and body["options"]["candidates_per_topic"] == 3
    batch = MiningBatch.objects.get(pk=body["id"])  # eager: mined on commit, through the LLM
    assert batch.status == "done" and batch.n_total == 7
    assert _by_topic(batch)["food-dining"] == {"kept": 2, "budget": 4}
    bad = client.post(
        "/api/mining/batches/",
        {"source": "corpus/none-*", "backends": mining_backends},
        format="json",
    )
    assert bad.status_code == 400 and "matched no corpus file" in bad.json()["source"][0]
    bad = client.post(
        "/api/mining/batches/",
        {
            "source": "corpus",
            "backends": mining_backends,
            "options": {"desired_valid_per_topic": 0},
        },
        format="json",
    )
    assert bad.status_code == 400
    assert "desired_valid_per_topic must be an integer >= 1" in json.dumps(bad.json())
    assert MiningBatch.objects.count() == 1


def test_console_form_sends_the_column_map_and_budgets(
    media_root, make_user, llm_server, script, eager_celery
):
    web = Client()
    web.force_login(make_user("adm", role="admin"))
    page = web.get("/mining/new/").content.decode()
    assert 'name="column_text"' in page and 'name="candidates_per_topic"' in page
    body = "".join(json.dumps(_mapped(i)) + "\n" for i in range(2)).encode()
    resp = web.post(
        "/mining/new/",
        {
            "name": "console",
            "file": ContentFile(body, name="d.jsonl"),
            "stages": ["2"],
            "base_url": llm_server.base_url,
            "model": "m",
            "api_key_env": "",
            "min_steps": 5,
            "max_steps": 15,
            "column_text": "body",
            "column_topic": "category",
            "column_id": "doc_id",
            "candidates_per_topic": "4",
        },
    )
    assert resp.status_code == 302, resp.content[:2000]
    batch = MiningBatch.objects.get()
    assert batch.options["columns"] == {"text": "body", "topic": "category", "id": "doc_id"}
    assert batch.options["candidates_per_topic"] == 4
    assert batch.options["desired_valid_per_topic"] is None
    form = BatchForm(
        data={
            "model": "m",
            "stages": ["1"],
            "min_steps": 5,
            "max_steps": 15,
            "desired_valid_per_topic": "0",
        }
    )
    assert not form.is_valid() and "desired_valid_per_topic" in form.errors


def _procedure_docs(topic: str, n: int, short: set[int]) -> list[dict]:
    """Records that carry goal and steps (stage 2 only, no LLM); ``short`` ones fail it."""
    return [
        {
            "id": f"{topic[:4]}-{i}",
            "topic": topic,
            "text": "t",
            "goal": f"Goal {i}",
            "steps": STEPS[:3] if i in short else STEPS,
        }
        for i in range(n)
    ]


def _batch(records, options) -> MiningBatch:
    body = "".join(json.dumps(r) + "\n" for r in records).encode()
    batch = services.batch_create(
        name="budget",
        upload=ContentFile(body, name="d.jsonl"),
        stages=[2],
        backends={},
        options={"chunk_size": 2, **options},
        start=False,
    )
    return services.batch_run(batch_id=batch.pk)


def _by_topic(batch):
    out: dict[str, dict[str, int]] = {}
    for d in MiningDocument.objects.filter(batch=batch):
        key = d.outcome if d.stage_reached != "budget" else "budget"
        out.setdefault(d.topic, {}).setdefault(key, 0)
        out[d.topic][key] += 1
    return out


def test_candidates_per_topic_stops_each_topic_after_its_budget(media_root):
    records = []
    for i in range(10):  # interleaved topics
        records += _procedure_docs("Health", 10, {1})[i : i + 1]
        records += _procedure_docs("Food & Dining", 10, set())[i : i + 1]
    batch = _batch(records, {"candidates_per_topic": 3})
    assert batch.status == "done" and batch.n_done == batch.n_total == 20
    assert _by_topic(batch) == {
        "health": {"kept": 2, "dropped": 1, "budget": 7},
        "food-dining": {"kept": 3, "budget": 7},
    }
    left = MiningDocument.objects.filter(batch=batch, stage_reached="budget").first()
    assert left.outcome == "dropped" and "candidates_per_topic spent (3 of 3)" in left.drop_reason
    # the first three of each topic in input order went through the stages
    mined = MiningDocument.objects.filter(batch=batch, topic="health").exclude(
        stage_reached="budget"
    )
    assert sorted(mined.values_list("source_id", flat=True)) == ["Heal-0", "Heal-1", "Heal-2"]


def test_desired_valid_per_topic_stops_a_topic_once_enough_pass(media_root):
    records = _procedure_docs("Health", 12, {0, 1, 2, 3}) + _procedure_docs(
        "Food & Dining", 4, {0, 1, 2}
    )
    batch = _batch(records, {"desired_valid_per_topic": 2, "candidates_per_topic": 10})
    counts = _by_topic(batch)
    assert counts["health"] == {"dropped": 4, "kept": 2, "budget": 6}
    assert counts["food-dining"] == {"dropped": 3, "kept": 1}  # ran out of documents
    reason = MiningDocument.objects.filter(batch=batch, stage_reached="budget").first().drop_reason
    assert reason == "budget: topic health: desired_valid_per_topic reached (2 valid of 2)"
    assert batch.n_done == batch.n_total == 16


def test_ingest_writes_bounded_chunks_beats_between_and_is_all_or_nothing(
    media_root, mining_backends, monkeypatch
):
    from mining.services import ingest

    body = "".join(json.dumps(doc(i)) + "\n" for i in range(7)).encode()
    batch = services.batch_create(
        name="i",
        upload=ContentFile(body, name="d.jsonl"),
        backends=mining_backends,
        start=False,
    )
    beats: list[int] = []

    def beat():
        beats.append(MiningDocument.objects.filter(batch=batch).count())

    total, invalid = ingest.ingest_documents(
        batch=batch,
        docs=ingest.iter_stored_documents(batch),
        beat=beat,
        chunk=3,
    )
    assert (total, invalid) == (7, 0) and beats == [3, 6]  # a COPY of 3, a beat, …
    MiningDocument.objects.filter(batch=batch).delete()

    read = ingest.iter_stored_documents

    def broken():
        yield from read(batch)
        raise OSError("connection to the object store lost")

    with monkeypatch.context() as patch:
        patch.setattr(ingest, "iter_stored_documents", lambda b: broken())
        with pytest.raises(OSError, match="object store lost"):
            ingest.batch_ingest(batch=batch)
    assert MiningDocument.objects.filter(batch=batch).count() == 0  # nothing half-written
    batch.refresh_from_db()
    assert not batch.ingested and services.batch_ingest(batch=batch) == 7
