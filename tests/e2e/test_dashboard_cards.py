"""The home dashboard's headline figures name the study, run or batch they
are for and prefer finished ones: one test label in a running study, or a test batch under
way, does not move them. In chromium, as a researcher."""

from __future__ import annotations

import re

import pytest
from django.utils import timezone

from annotation.models import Study
from judging.models import JudgeRun
from mining.models import MiningBatch, MiningDocument
from tests.annotation.factories import make_annotation, make_labelled_study, make_study
from tests.judging.factories import make_judge
from tests.mining.factories import done_batch
from tests.support.browser_roles import log_in

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def later_activity(make_user):
    """A finished study and batch, then newer activity that is not finished: one label in a
    running study, a test batch under way that kept nothing."""
    make_user("res", role="researcher")
    finished = make_labelled_study()
    Study.objects.filter(pk=finished.pk).update(status=Study.Status.CLOSED, name="Finished one")
    batch = done_batch()
    MiningBatch.objects.filter(pk=batch.pk).update(name="Real batch")
    running = make_study(n_items=2)
    Study.objects.filter(pk=running.pk).update(name="Running one")
    item = running.items.filter(kind="regular").first()
    make_annotation(item=item, annotator="tester", at=timezone.now())
    test_batch = MiningBatch.objects.create(
        name="Test batch", source_format="jsonl", stages=[1], status="running"
    )
    MiningDocument.objects.bulk_create(
        MiningDocument(batch=test_batch, position=i, source_id=f"t{i}", outcome="dropped")
        for i in range(1, 21)
    )
    judge = make_judge(name="named-judge")
    JudgeRun.objects.create(judge=judge, status="done", n_total=0)
    return {"finished": Study.objects.get(pk=finished.pk), "batch": batch}


def test_cards_name_what_their_figure_is_for(later_activity, live_server, page):
    log_in(page, live_server.url, "res")
    agree = page.locator("#stage-agree .figure small").inner_text()
    finished = later_activity["finished"]
    assert f"“Finished one” (#{finished.pk}, finished)" in agree, agree
    mine = page.locator("#stage-mine .figure small").inner_text()
    batch = later_activity["batch"]
    assert f"batch “Real batch” (#{batch.pk}, finished)" in mine, mine
    # the finished batch's yield: all 8 kept; the test batch (0 of 20) does not pull it down
    assert page.locator("#stage-mine .figure b").inner_text() == "100.0%"
    judge = page.locator("#stage-judge").inner_text()
    assert "named-judge" in judge or "no judge run has finished yet" in judge.lower()
    assert not re.search(r"\b(undefined|None|null|NaN)\b", page.locator("main").inner_text())
