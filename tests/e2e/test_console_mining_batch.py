"""The console's mining batch page names its uploaded file instead of
linking to it (the link led to a 404: uploads are read by workers, not served)."""

from __future__ import annotations

import pytest

from mining.models import MiningBatch
from tests.mining.factories import done_batch
from tests.support.browser_roles import log_in

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_upload_is_named_not_linked(live_server, page, make_user):
    make_user("adm", role="admin")
    batch = done_batch()
    MiningBatch.objects.filter(pk=batch.pk).update(source_file="mining/uploads/2026/11/docs.jsonl")
    log_in(page, live_server.url, "adm")
    page.goto(f"{live_server.url}/admin/mining/miningbatch/{batch.pk}/change/")
    assert page.get_by_text("mining/uploads/2026/11/docs.jsonl").count() == 1
    for href in page.locator("#content a[href]").evaluate_all(
        "els => els.map(e => e.getAttribute('href'))"
    ):
        if href.startswith("/") and not href.startswith("/admin/"):
            assert page.request.get(live_server.url + href).status < 400, href
    assert page.locator("a[href*='/media/'], a[href*='mining/uploads']").count() == 0
