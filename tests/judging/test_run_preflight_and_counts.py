"""Judge runs report what happened, against the local OpenAI-compatible server:
launch refused with the reason when the key variable is unset or the server does not answer;
re-running only the failures (service, API, console); cancelled items counted as cancelled,
not errors; duplicate chunk messages never double count."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import transaction
from django.urls import reverse

from core.runs import engine
from judging.models import JudgeRun, JudgeRunItem, Judgment
from judging.services import runs as services
from tests.core.factories import api_client
from tests.judging.factories import FAIL_FAST, make_data, make_judge
from tests.judging.support import work_chunk
from tests.support.worker import running_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

GOOD = json.dumps({"reasoning": "ok", "critical_failures": []})


def dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


# --- launch checks ------------------------------------------------------------------------


def test_launch_refused_when_the_key_variable_is_unset(llm_server, monkeypatch, enqueued):
    monkeypatch.delenv("TRUTH_TEST_API_KEY", raising=False)
    data = make_data(n=2)
    judge = make_judge(
        name="truth-judge",
        base_url=llm_server.base_url,
        preset=FAIL_FAST,
        api_key_env="TRUTH_TEST_API_KEY",
    )
    with pytest.raises(ValidationError) as info:
        services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
    assert "'TRUTH_TEST_API_KEY' (api_key_env) is not set" in str(info.value)
    assert not JudgeRun.objects.exists() and enqueued == []
    monkeypatch.setenv("TRUTH_TEST_API_KEY", "sk-test")
    run = services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
    assert run.n_total == 2 and enqueued == [run.pk]
    assert llm_server.requests == []  # the check is a GET /models, never a judged request


def test_launch_refused_when_the_server_does_not_answer(enqueued):
    data = make_data(n=2)
    judge = make_judge(name="truth-judge", base_url=dead_url(), preset=FAIL_FAST)
    with pytest.raises(ValidationError, match="does not answer"):
        services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
    assert not JudgeRun.objects.exists() and enqueued == []


def test_launch_refused_when_the_server_answers_404_to_everything(live_server, enqueued):
    """A base URL that is no model server (here the app itself): GET /models and the one-token
    request both answer 404, so the launch is refused naming the base URL and the model."""
    data = make_data(n=2)
    base = f"{live_server.url}/v1"
    judge = make_judge(name="self-judge", base_url=base, preset=FAIL_FAST, model="gpt-4.1")
    with pytest.raises(ValidationError) as info:
        services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
    message = str(info.value)
    assert base in message and "'gpt-4.1'" in message and "HTTP 404" in message
    assert not JudgeRun.objects.exists() and enqueued == []


def test_launch_refused_when_the_model_is_not_listed(llm_server, enqueued):
    data = make_data(n=2)
    judge = make_judge(name="typo", base_url=llm_server.base_url, preset=FAIL_FAST, model="gtp-4.1")
    with pytest.raises(ValidationError) as info:
        services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
    message = str(info.value)
    assert f"the server at {llm_server.base_url} does not serve the model 'gtp-4.1'" in message
    assert "'test-model'" in message  # what it does list, so the typo shows
    assert not JudgeRun.objects.exists() and enqueued == [] and llm_server.requests == []


def test_launch_without_a_model_list_sends_one_token(enqueued):
    """A server that offers no GET /models passes when one request of one token succeeds."""
    from tests.support.llm_server import LLMTestServer

    data = make_data(n=2)
    with LLMTestServer(models=None) as server:
        judge = make_judge(name="plain", base_url=server.base_url, preset=FAIL_FAST)
        run = services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
        assert enqueued == [run.pk]
        [probe] = server.requests
        assert probe.body["max_tokens"] == 1 and probe.body["model"] == "m"


def test_api_and_console_show_the_refusal(llm_server, make_user, roles, enqueued):
    data = make_data(n=2)
    make_judge(name="down", base_url=dead_url(), preset=FAIL_FAST)
    admin = make_user("ada", role="admin")
    res = api_client(admin).post(
        "/api/judge-runs/",
        {"judge": "down", "selection": {"dataset": data["dataset"].pk}},
        format="json",
    )
    assert res.status_code == 400, res.content
    assert "does not answer" in json.dumps(res.json())
    assert not JudgeRun.objects.exists()


# --- re-run only the failures -------------------------------------------------------------


class Flaky:
    """Garbage for goals in ``bad`` (always), good JSON for the others; counts calls."""

    def __init__(self, bad):
        self.bad = set(bad)
        self.calls = 0
        self.lock = threading.Lock()

    def __call__(self, req):
        with self.lock:
            self.calls += 1
        goal = req.prompt_text.split("\nGoal:\n", 1)[1].split("\n", 1)[0]
        return "garbage" if goal in self.bad else GOOD


def test_rerun_failures_asks_only_what_failed(llm_server, make_user, roles, enqueued):
    flaky = Flaky({"Goal number 1", "Goal number 3"})
    llm_server.responder = flaky
    data = make_data(n=5)
    judge = make_judge(name="truth-judge", base_url=llm_server.base_url, preset=FAIL_FAST)
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    assert work_chunk(run).status == "done"
    run.refresh_from_db()
    assert (run.n_done, run.n_parse_failed, flaky.calls) == (5, 2, 3 + 2 * 3)
    with pytest.raises(ValidationError, match="only a done or failed run"):
        services.judge_run_rerun_failures(
            run=JudgeRun(pk=run.pk, judge=judge, status="running"), enqueue=False
        )

    flaky.bad = set()  # the server works now
    services.judge_run_rerun_failures(run=run, enqueue=False)
    run.refresh_from_db()
    assert run.status == "queued"
    assert JudgeRunItem.objects.filter(run=run, judgment__isnull=True).count() == 2
    assert work_chunk(run).status == "done"
    run.refresh_from_db()
    assert (run.n_done, run.n_parse_failed, run.status) == (5, 0, "done")
    assert flaky.calls == 9 + 2  # only the two failures were asked again
    assert Judgment.objects.count() == 5  # the parse failures were replaced, not duplicated
    with pytest.raises(ValidationError, match="no failures to re-run"):
        services.judge_run_rerun_failures(run=run, enqueue=False)

    # the API endpoint and the console button (admins), with the refusal shown
    res = api_client(make_user("rex", role="researcher")).post(
        f"/api/judge-runs/{run.pk}/rerun-failures/"
    )
    assert res.status_code == 403
    admin = make_user("ada", role="admin")
    res = api_client(admin).post(f"/api/judge-runs/{run.pk}/rerun-failures/")
    assert res.status_code == 400 and "no failures to re-run" in json.dumps(res.json())
    JudgeRunItem.objects.filter(run=run, generation__procedure__goal="Goal number 0").update(
        judgment=None, attempts=3
    )
    JudgeRun.objects.filter(pk=run.pk).update(status="failed", n_failed=1)
    from django.test import Client

    browser = Client()
    browser.force_login(admin)
    page = browser.get(reverse("admin:judging_judgerun_progress", args=[run.pk])).content.decode()
    assert 'id="rerun-failures"' in page and "Re-run failures (1)" in page
    html = browser.post(
        reverse("admin:judging_judgerun_rerun_failures", args=[run.pk]), HTTP_HX_REQUEST="true"
    ).content.decode()
    run.refresh_from_db()
    assert run.status == "queued" and f"Run {run.pk}: queued." in html
    assert enqueued == [run.pk]


# --- cancel and duplicate messages with a real worker ---------------------------------------


@pytest.mark.worker
def test_cancel_counts_cancelled_items_not_errors(llm_server, tmp_path):
    llm_server.responder = lambda req: GOOD
    llm_server.latency_s = 0.05
    data = make_data(n=200)
    judge = make_judge(name="truth-judge", base_url=llm_server.base_url, preset=FAIL_FAST)
    with running_worker(tmp_path, concurrency=1) as worker:
        with transaction.atomic():
            run = services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
        wait_for(lambda: Judgment.objects.count() >= 40, timeout=60, message="first judgments")
        services.judge_run_cancel(run=run)
        wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).status == "cancelled",
            timeout=30,
            message=f"cancelled; log:\n{worker.log()[-2000:]}",
        )
    run.refresh_from_db()
    stored = Judgment.objects.count()
    assert run.n_done == stored and 40 <= stored < 200  # every finished reply kept
    assert run.n_failed == 0  # cancelled items are not errors
    progress = services.selectors.judge_run_progress(run)
    assert progress["n_cancelled"] == 200 - stored
    # requests sent = replies stored (what was in flight at cancel was stored, not dropped)
    assert len(llm_server.requests) == stored


@pytest.mark.worker
def test_duplicate_chunk_messages_never_double_count(llm_server, tmp_path):
    llm_server.responder = lambda req: GOOD
    llm_server.latency_s = 0.01
    n = 120
    data = make_data(n=n)
    judge = make_judge(name="truth-judge", base_url=llm_server.base_url, preset=FAIL_FAST)
    with running_worker(tmp_path, concurrency=3, extra_env={"H2R_JUDGE_CHUNK_ITEMS": "30"}):
        with transaction.atomic():
            run = services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
            for _ in range(3):  # the same chunk message delivered again, three more times
                transaction.on_commit(lambda: engine.enqueue(run))
        wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).status == "done", timeout=90, message="done"
        )
    run.refresh_from_db()
    assert (run.n_done, run.n_failed, run.n_total) == (n, 0, n)
    assert Judgment.objects.count() == n
    assert len(llm_server.requests) == n  # no item asked twice


def test_judge_run_page_polls_and_offers_take_over_only_when_stale(
    llm_server,
    make_user,
    roles,
):
    from datetime import timedelta

    from django.test import Client
    from django.utils import timezone

    data = make_data(n=2)
    run = services.judge_run_create(
        judge=make_judge(name="truth-judge", base_url=llm_server.base_url, preset=FAIL_FAST),
        selection={"dataset": data["dataset"].pk},
        enqueue=False,
    )
    browser = Client()
    browser.force_login(make_user("ada", role="admin"))
    url = reverse("admin:judging_judgerun_progress", args=[run.pk])
    JudgeRun.objects.filter(pk=run.pk).update(
        status="running", lease_owner="w", heartbeat_at=timezone.now()
    )
    html = browser.get(url).content.decode()
    assert 'hx-trigger="every 1s"' in html and '<span id="run-status">running</span>' in html
    assert "take-over-run" not in html  # the worker is alive
    JudgeRun.objects.filter(pk=run.pk).update(heartbeat_at=timezone.now() - timedelta(hours=1))
    assert 'id="take-over-run"' in browser.get(url).content.decode()
    JudgeRun.objects.filter(pk=run.pk).update(status="cancelled", lease_owner="", n_done=1)
    html = browser.get(url).content.decode()
    assert "hx-get" not in html and 'id="run-cancelled">1<' in html


def test_selection_takes_topics_by_the_names_reports_show(llm_server):
    from judging.selectors.judgments import selection_clean

    data = make_data(n=4, topics=("food-dining", "health"))
    by_name = selection_clean({"dataset": data["dataset"].pk, "topics": ["Food & Dining"]})
    by_slug = selection_clean({"dataset": data["dataset"].pk, "topics": ["food-dining"]})
    assert by_name == by_slug and len(by_name["topics"]) == 1
    with pytest.raises(ValidationError, match="unknown topics: Nope"):
        selection_clean({"dataset": data["dataset"].pk, "topics": ["Nope"]})
