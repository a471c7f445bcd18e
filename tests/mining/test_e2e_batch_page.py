"""A real browser (Debian chromium) watches a batch run: the progress bar and the yields table
update by htmx polling without a reload, then the admin cancels/resumes from the page."""

from __future__ import annotations

import json
import re
import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from playwright.sync_api import expect

from mining.models import MiningBatch
from mining.services import batches as services
from tests.mining.factories import doc

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _login(page, live_server, user):
    c = Client()
    c.force_login(user)
    page.context.add_cookies(
        [{"name": "sessionid", "value": c.cookies["sessionid"].value, "url": live_server.url}]
    )


def test_batch_page_updates_live_until_done(
    page,
    shots,
    live_server,
    make_user,
    media_root,
    llm_server,
    mining_backends,
    script,
):
    llm_server.latency_s = 0.15
    admin = make_user("adm", role="admin")
    records = [doc(i) for i in range(24)] + [doc(99, "SHORT", topic="Health")]
    upload = SimpleUploadedFile("d.jsonl", "".join(json.dumps(r) + "\n" for r in records).encode())
    batch = services.batch_create(
        name="live batch",
        upload=upload,
        backends=mining_backends,
        options={"chunk_size": 5},
        start=False,
    )
    _login(page, live_server, admin)
    page.goto(f"{live_server.url}/mining/batches/{batch.pk}/")
    assert page.locator("#batch-status").inner_text() == "Queued"
    assert page.get_by_role("button", name="Cancel batch").is_visible()

    def run() -> None:
        from django.db import connection

        try:
            services.batch_run(batch_id=batch.pk)
        finally:
            connection.close()  # this thread's connection, so the test database can be dropped

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    # a locator wait, not wait_for_function: the page's CSP allows no eval
    expect(page.locator("#batch-done")).to_have_text(
        re.compile(r"^\s*[1-9]\d*\s*$"), timeout=30_000
    )
    mid = int(page.locator("#batch-done").inner_text())
    assert 0 < mid <= 25
    page.locator("#batch-status", has_text="Done").wait_for(timeout=60_000)
    runner.join(timeout=30)
    assert page.locator("#batch-progress").get_attribute("value") == "25"
    assert page.get_by_role("button", name="Cancel batch").count() == 0  # the live part re-rendered
    total = page.locator("#yields-table tfoot tr").first.inner_text()
    assert (
        "All topics" in total and "24 (96.0%)" in total
    )  # 24 of 25 pass extraction → final validation
    health = page.locator("#yields-table tbody tr", has_text="Health").inner_text()
    assert "0 (0.0%)" in health  # the SHORT one fails the heuristics
    assert (
        page.locator("#usage-table tbody tr")
        .first.inner_text()
        .startswith("1. Procedure extraction")
    )
    page.screenshot(path=str(shots / "mining_batch_detail.png"), full_page=True)
    assert MiningBatch.objects.get(pk=batch.pk).status == "done"
    # Export link downloads the how2mine records.
    with page.expect_download() as dl:
        page.get_by_role("link", name="Export JSONL").click()
    with open(dl.value.path(), encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    assert len(lines) == 24 and json.loads(lines[0])["final_procedure"]["goal"].startswith(
        "Rewritten:"
    )
