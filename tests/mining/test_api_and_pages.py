"""REST API and console pages: roles, upload, live progress, cancel/resume, export."""

from __future__ import annotations

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from mining.models import MiningBatch
from mining.services import batches as services
from tests.core.factories import api_client
from tests.mining.factories import doc

pytestmark = pytest.mark.django_db(transaction=True)


def _file(records, name="docs.jsonl"):
    return SimpleUploadedFile(name, "".join(json.dumps(r) + "\n" for r in records).encode())


def test_admin_creates_batch_over_api_and_it_runs(
    make_user, media_root, mining_backends, eager_celery
):
    admin = make_user("adm", role="admin")
    resp = api_client(admin).post(
        "/api/mining/batches/",
        {
            "name": "api batch",
            "file": _file([doc(1), doc(2, "FILTERME"), doc(3, "NOPROC")]),
            "stages": "1,2,3,4,5,6",
            "backends": json.dumps(mining_backends),
            "options": '{"min_steps": 5}',
        },
        format="multipart",
    )
    assert resp.status_code == 201, resp.content
    batch = MiningBatch.objects.get(pk=resp.json()["id"])
    assert batch.status == "done" and batch.created_by == admin  # eager: ran on commit
    detail = api_client(admin).get(f"/api/mining/batches/{batch.pk}/").json()
    assert detail["yields"]["total"]["kept"] == 1
    assert (
        detail["usage"]["stages"][0]["stage"] == "procedures"
        and detail["usage"]["stages"][0]["requests"] == 3
    )
    docs = (
        api_client(admin).get(f"/api/mining/batches/{batch.pk}/documents/?outcome=dropped").json()
    )
    assert sorted(d["stage_reached"] for d in docs["results"]) == ["filter", "procedures"]
    export = api_client(admin).get(f"/api/mining/batches/{batch.pk}/export/")
    lines = [json.loads(x) for x in b"".join(export.streaming_content).decode().splitlines()]
    assert [x["source_example"]["id"] for x in lines] == ["d1"]


def test_api_refuses_bad_input_with_field_messages(make_user, media_root, mining_backends):
    c = api_client(make_user("adm", role="admin"))
    r = c.post(
        "/api/mining/batches/",
        {"file": _file([doc(1)], "docs.xlsx"), "backends": json.dumps(mining_backends)},
        format="multipart",
    )
    assert r.status_code == 400 and "unknown file type" in r.json()["source_file"][0]
    r = c.post(
        "/api/mining/batches/",
        {"file": _file([doc(1)]), "backends": "{not json"},
        format="multipart",
    )
    assert r.status_code == 400 and "not valid JSON" in r.json()["backends"][0]
    r = c.post(
        "/api/mining/batches/",
        {"file": _file([doc(1)]), "backends": json.dumps({"filter": {"model": "m"}})},
        format="multipart",
    )
    assert (
        r.status_code == 400
        and "stage 1 (procedures) needs a backend config" in r.json()["backends"][0]
    )
    assert MiningBatch.objects.count() == 0


def test_roles(make_user, media_root, mining_backends):
    batch = services.batch_create(
        name="b", upload=_file([doc(1)]), backends=mining_backends, start=False
    )
    annotator, researcher = make_user("ann", role="annotator"), make_user("res", role="researcher")
    assert api_client(annotator).get("/api/mining/batches/").status_code == 403
    assert api_client(researcher).get(f"/api/mining/batches/{batch.pk}/").status_code == 200
    assert api_client(researcher).post(f"/api/mining/batches/{batch.pk}/cancel/").status_code == 403
    r = api_client(researcher).post(
        "/api/mining/batches/", {"file": _file([doc(1)]), "backends": "{}"}, format="multipart"
    )
    assert r.status_code == 403
    from django.test import Client

    web = Client()
    web.force_login(annotator)
    assert web.get("/mining/").status_code == 403
    web.force_login(researcher)
    assert web.get("/mining/new/").status_code == 403
    page = web.get(f"/mining/batches/{batch.pk}/")
    assert (
        page.status_code == 200
        and b"Take over" not in page.content
        and b"Promote" not in page.content
    )


def test_cancel_then_resume_pending_batch(make_user, media_root, mining_backends, eager_celery):
    admin = make_user("adm", role="admin")
    batch = services.batch_create(
        name="b", upload=_file([doc(1), doc(2)]), backends=mining_backends, start=False
    )
    c = api_client(admin)
    r = c.post(f"/api/mining/batches/{batch.pk}/cancel/")
    assert r.status_code == 200 and r.json()["status"] == "cancelled"
    assert (
        c.post(f"/api/mining/batches/{batch.pk}/cancel/").status_code == 400
    )  # not active any more
    r = c.post(f"/api/mining/batches/{batch.pk}/resume/")
    assert r.status_code == 202
    batch.refresh_from_db()
    assert batch.status == "done" and batch.n_done == 2
    again = c.post(f"/api/mining/batches/{batch.pk}/resume/")
    assert again.status_code == 400 and "nothing to resume" in again.json()["detail"][0]


def test_console_new_batch_form_and_live_partial(
    make_user, media_root, llm_server, script, eager_celery
):
    from django.test import Client

    admin = make_user("adm", role="admin")
    web = Client()
    web.force_login(admin)
    assert web.get("/mining/new/").status_code == 200
    resp = web.post(
        "/mining/new/",
        {
            "name": "console",
            "file": _file([doc(1), doc(2, "SHORT")]),
            "stages": ["1", "2", "3", "4", "5", "6"],
            "base_url": llm_server.base_url,
            "model": "gpt-4.1",
            "api_key_env": "",
            "min_steps": 5,
            "max_steps": 15,
        },
    )
    assert resp.status_code == 302, resp.content[:2000]
    batch = MiningBatch.objects.get()
    assert resp["Location"] == f"/mining/batches/{batch.pk}/"
    live = web.get(f"/mining/batches/{batch.pk}/live/")
    html = live.content.decode()
    assert 'max="2" value="2"' in html and ">Done</span>" in html
    assert "hx-trigger" not in html  # finished batches stop polling
    assert "Food &amp; Dining" in html and '1 <span class="muted">(50.0%)</span>' in html
    # gpt-4.1 list prices: 2 USD / 8 USD per million tokens
    assert "gpt-4.1" in html
    docs = web.get(f"/mining/batches/{batch.pk}/documents/?outcome=dropped").content.decode()
    assert "prefilter: too few steps: 3 &lt; 5" in docs
    bad = web.post(
        "/mining/new/",
        {
            "name": "x",
            "file": _file([doc(1)], "d.xlsx"),
            "stages": ["1"],
            "model": "m",
            "min_steps": 5,
            "max_steps": 15,
        },
    )
    assert bad.status_code == 200 and "unknown file type" in bad.content.decode()
