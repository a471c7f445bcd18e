"""Several machines: a batch uploaded through the web (REST API, multipart POST) lands in an
S3-compatible object store (moto over HTTP), and a real Celery worker whose own media
directory is empty, and differs from the web's, streams it from the store and mines it."""

from __future__ import annotations

import csv
import io
import json

import pyarrow as pa
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from mining.models import MiningBatch, MiningDocument
from mining.services import batches as services
from tests.mining.factories import doc
from tests.support.s3_server import s3_server, s3_storage  # noqa: F401
from tests.support.worker import running_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

N = 12


def _files(root):
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def test_web_upload_is_mined_by_a_worker_reading_the_object_store(
    tmp_path,
    settings,
    s3_server,  # noqa: F811
    s3_storage,  # noqa: F811
    make_user,
    llm_server,
    mining_backends,
    script,
):
    web_var = tmp_path / "web"
    worker_var = tmp_path / "worker"  # another machine's var/: its media directory is empty
    settings.MEDIA_ROOT = web_var / "media"
    env = {**s3_server.worker_env(), "HOW2REVIEW_VAR_DIR": str(worker_var)}
    with running_worker(tmp_path, concurrency=1, extra_env=env):
        client = APIClient()
        client.force_authenticate(make_user("adm", role="admin"))
        body = "".join(json.dumps(doc(i)) + "\n" for i in range(N)).encode()
        resp = client.post(
            "/api/mining/batches/",
            {
                "name": "s3 batch",
                "file": SimpleUploadedFile("docs.jsonl", body),
                "stages": "1,2,3,4,5,6",
                "backends": json.dumps(mining_backends),
                "options": json.dumps({"chunk_size": 5}),
            },
            format="multipart",
        )
        assert resp.status_code == 201, resp.content
        batch_id = resp.json()["id"]
        wait_for(
            lambda: MiningBatch.objects.get(pk=batch_id).status in ("done", "failed"),
            timeout=120,
            message="batch finished by the worker",
        )
    batch = MiningBatch.objects.get(pk=batch_id)
    assert batch.status == "done", batch.error
    assert batch.n_total == N == batch.n_done
    assert MiningDocument.objects.filter(batch=batch, outcome="kept").count() == N
    assert sum(script.by_goal.values()) >= N  # the worker called the model for every document
    # the upload lives in the bucket only: neither the web's nor the worker's disk holds it
    assert s3_server.keys() == [batch.source_file.name]
    assert batch.source_file.name.startswith("mining/uploads/")
    assert _files(web_var / "media") == []
    assert _files(worker_var / "media") == []


def _zstd(data: bytes) -> bytes:
    sink = pa.BufferOutputStream()
    with pa.CompressedOutputStream(sink, "zstd") as out:
        out.write(data)
    return sink.getvalue().to_pybytes()


def test_compressed_csv_with_a_column_map_is_ingested_from_the_store(
    s3_server,  # noqa: F811
    s3_storage,  # noqa: F811
    mining_backends,
):
    text = io.StringIO()
    writer = csv.DictWriter(text, fieldnames=["doc_id", "link", "category", "body", "topic"])
    writer.writeheader()
    for i in range(5):
        d = doc(i)
        writer.writerow(
            {"doc_id": d["id"], "link": d["url"], "category": d["topic"], "body": d["text"]}
            | {"topic": "not a topic"}  # a column named like a field, overridden by the map
        )
    upload = SimpleUploadedFile("docs.csv.zst", _zstd(text.getvalue().encode()))
    columns = {"text": "body", "url": "link", "topic": "category", "id": "doc_id"}
    batch = services.batch_create(
        name="cols",
        upload=upload,
        backends=mining_backends,
        options={"columns": columns},
        start=False,
    )
    assert batch.source_format == "csv" and batch.options["columns"] == columns
    assert s3_server.keys() == [batch.source_file.name]
    assert services.batch_ingest(batch=batch) == 5
    rows = list(MiningDocument.objects.filter(batch=batch).order_by("position"))
    assert [r.source_id for r in rows] == [f"d{i}" for i in range(5)]
    assert [r.url for r in rows] == [f"https://example.org/{i}" for i in range(5)]
    assert {r.outcome for r in rows} == {"pending"} and {r.topic_raw for r in rows} == {
        "Food & Dining"
    }
    assert rows[3].text == doc(3)["text"]


def test_a_bad_column_map_is_refused_naming_it(make_user, mining_backends):
    client = APIClient()
    client.force_authenticate(make_user("adm", role="admin"))
    resp = client.post(
        "/api/mining/batches/",
        {
            "file": SimpleUploadedFile("d.jsonl", b"{}\n"),
            "backends": json.dumps(mining_backends),
            "options": json.dumps({"columns": {"body": "text"}}),
        },
        format="multipart",
    )
    assert resp.status_code == 400
    assert "columns: unknown field(s) 'body'" in json.dumps(resp.json())
    assert MiningBatch.objects.count() == 0
