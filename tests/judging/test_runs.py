"""Judge runs through the service layer against the local OpenAI-compatible test server."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from core.runs import engine
from judging.models import Judge, JudgeRun, JudgeRunItem, Judgment
from judging.selectors import judgments as selectors
from judging.services import runs as services
from tests.judging.factories import make_data, make_judge
from tests.judging.support import judge_responder, work_chunk

# transactional: results are written by the run's writer thread on its own connection
pytestmark = pytest.mark.django_db(transaction=True)

RUN_JUDGE = {
    "model": "judge-model",
    "concurrency": 8,
    "max_retries": 3,
    "timeout_s": 5,
    "price_input_per_mtok": Decimal("2"),
    "price_output_per_mtok": Decimal("8"),
    "decoding": {"temperature": 0, "max_tokens": 512},
}


def test_run_judges_every_generation_stores_verdicts_tokens_cost(llm_server, monkeypatch):
    monkeypatch.setattr("benchmarks.llm.retry.RetryPolicy.delay", lambda self, attempt, **kw: 0.01)
    llm_server.responder = judge_responder
    data = make_data(n=12, bad_every=3, garble_every=5)
    judge = make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE)
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    assert run.n_total == 12 and run.estimated_cost > 0
    llm_server.add_fault("status", status=429, retry_after=0)
    llm_server.add_fault("status", status=500)
    outcome = work_chunk(run)
    assert outcome.status == "done"
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.DONE
    assert (run.n_done, run.n_failed, run.n_reused) == (12, 0, 0)
    garbled = sum(1 for i in range(12) if i % 5 == 1)
    assert run.n_parse_failed == garbled
    assert Judgment.objects.count() == 12
    bad = Judgment.objects.filter(parse_failed=False, has_failure=True)
    assert bad.count() == sum(1 for i in range(12) if i % 3 == 0 and i % 5 != 1)
    j = bad.first()
    assert j.critical_failures == [{"failure": "step 2 is bad", "L1_steps": [1], "L2_steps": [2]}]
    pf = Judgment.objects.filter(parse_failed=True).first()
    assert pf.raw_output == "I cannot decide {not json" and pf.parse_error
    assert run.prompt_tokens == sum(Judgment.objects.values_list("prompt_tokens", flat=True))
    assert run.cost == (
        Decimal(run.prompt_tokens) * 2 + Decimal(run.completion_tokens) * 8
    ) / Decimal(1_000_000)
    # the request: H.3 prompt as chat, structured output with the schema, decoding
    body = llm_server.requests[-1].body
    assert body["response_format"]["json_schema"]["schema"]["required"] == [
        "reasoning",
        "critical_failures",
    ]
    assert body["max_tokens"] == 512 and body["model"] == "judge-model"
    assert (
        "You are given a goal and two lists of steps, L1 and L2." in body["messages"][0]["content"]
    )
    # 12 + the 429 + the 500 + 2 more calls for each garbled reply (reference profile)
    assert len(llm_server.requests) == 14 + 2 * garbled
    assert set(Judgment.objects.filter(parse_failed=True).values_list("n_calls", flat=True)) == {3}
    assert set(Judgment.objects.filter(parse_failed=False).values_list("n_calls", flat=True)) == {1}
    retries = [r for r in llm_server.requests if "GARBLE" in r.body["messages"][0]["content"]]
    suffix = "Return only valid json.\n\nReturn ONLY valid json. Do not include any other text."
    assert [r.body["messages"][0]["content"].endswith(suffix) for r in retries].count(True) == (
        2 * garbled
    )


def test_same_content_is_never_judged_twice(llm_server):
    llm_server.responder = judge_responder
    data = make_data(n=6)
    judge = make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE)
    run1 = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    work_chunk(run1)
    assert len(llm_server.requests) == 6
    run2 = services.judge_run_create(
        judge=judge, selection={"generators": ["gen-a"]}, enqueue=False
    )
    work_chunk(run2)
    run2.refresh_from_db()
    assert len(llm_server.requests) == 6  # nothing asked again
    assert (run2.n_done, run2.n_reused, run2.status) == (6, 6, "done")
    assert (run2.prompt_tokens, run2.cost) == (0, 0)  # reused verdicts are free
    assert Judgment.objects.count() == 6
    # a judge with another config (prompt/decoding) is another judge_id: judged anew
    other = make_judge(
        name="j2", base_url=llm_server.base_url, preset=RUN_JUDGE, decoding={"temperature": 0.7}
    )
    assert other.judge_id != judge.judge_id
    run3 = services.judge_run_create(
        judge=other, selection={"generators": ["gen-a"]}, enqueue=False
    )
    work_chunk(run3)
    assert len(llm_server.requests) == 12


def test_identical_content_within_a_run_is_asked_once(llm_server):
    llm_server.responder = judge_responder
    data = make_data(n=3, generators=("gen-a", "gen-b"))
    from benchmarks.models import Generation

    # make gen-b's candidates identical to gen-a's
    a = {
        g.procedure_id: g.predicted_steps
        for g in Generation.objects.filter(generator__name="gen-a")
    }
    for g in Generation.objects.filter(generator__name="gen-b"):
        g.predicted_steps = a[g.procedure_id]
        g.save()
    judge = make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE)
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    work_chunk(run)
    run.refresh_from_db()
    assert len(llm_server.requests) == 3
    assert run.n_done == 6 and run.status == "done"
    assert run.n_reused == 3  # the duplicates were linked, not asked
    assert JudgeRunItem.objects.filter(run=run, judgment__isnull=True).count() == 0


def test_chunks_and_failures_after_retries(llm_server, monkeypatch):
    monkeypatch.setattr("benchmarks.llm.retry.RetryPolicy.delay", lambda self, attempt, **kw: 0.0)
    llm_server.responder = judge_responder
    data = make_data(n=5)
    judge = make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE, max_retries=0)
    target = data["procedures"][2].goal
    llm_server.add_fault(
        "status", status=503, count=100, match=lambda r: target + "\n" in r.prompt_text
    )
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    monkeypatch.setattr("judging.services.execution.CHUNK_ITEMS", 2)
    first = work_chunk(run)
    assert first.status == "more" and len(llm_server.requests) == 2
    run.refresh_from_db()
    assert (run.status, run.n_done, run.lease_owner) == ("running", 2, "")  # released
    statuses = [work_chunk(run).status for _ in range(4)]
    assert statuses[-1] == "inactive" and "failed" in statuses
    run.refresh_from_db()
    assert run.status == "failed" and run.n_done == 4 and run.n_failed == 1
    assert "503" in run.error
    assert JudgeRunItem.objects.get(run=run, judgment__isnull=True).attempts == 3


def test_cancel_stops_new_requests(llm_server):
    llm_server.responder = judge_responder
    data = make_data(n=4)
    judge = make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE)
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    services.judge_run_cancel(run=run)
    assert run.status == "cancelled" and run.finished_at is not None
    assert work_chunk(run).status == "inactive"
    assert llm_server.requests == []


def test_busy_lease_is_respected(llm_server):
    llm_server.responder = judge_responder
    data = make_data(n=2)
    judge = make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE)
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    assert engine._acquire(JudgeRun, run.pk, "worker-a")
    outcome = work_chunk(run, token="worker-b")
    assert outcome.status == "busy" and outcome.retry_in_s > 1
    assert llm_server.requests == []


def test_selection_errors_name_the_field(llm_server):
    make_data(n=1)
    judge = make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE)
    with pytest.raises(ValidationError) as info:
        services.judge_run_create(
            judge=judge, selection={"generators": ["nope"], "colour": 1}, enqueue=False
        )
    assert "colour" in info.value.message_dict
    with pytest.raises(ValidationError) as info:
        services.judge_run_create(judge=judge, selection={"generators": ["nope"]}, enqueue=False)
    assert info.value.message_dict["generators"] == ["unknown generators: nope"]
    with pytest.raises(ValidationError):
        services.judge_run_create(judge=judge, selection={}, enqueue=False)


def test_how2score_report_by_generator_and_topic(llm_server):
    llm_server.responder = judge_responder
    data = make_data(n=8, generators=("gen-a", "gen-b"), bad_every=2, garble_every=4)
    judge = make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE)
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    work_chunk(run)
    report = selectors.how2score_report(judge=judge)
    assert [g["generator"] for g in report["generators"]] == ["gen-a", "gen-b"]
    a = report["generators"][0]
    # items 0..7: bad at 0,2,4,6; garbled at 1,5 -> scored 6, with failures 4
    assert a["n_parse_failed"] == 2 and a["n_examples"] == 6 and a["n_with_failures"] == 4
    assert a["how2score"] == pytest.approx(2 / 6)
    assert a["avg_generated_tokens"] == pytest.approx(sum(10 + i for i in range(8)) / 8)
    # topics by the names the data gives, not their slugs
    assert {r["topic"] for r in a["by_topic"]} == {"Food & Dining", "Health"}
    assert sum(r["n_judged"] for r in a["by_topic"]) == 6


def test_selection_by_study_items(llm_server):
    from annotation.models import Study, StudyItem

    llm_server.responder = judge_responder
    data = make_data(n=5, generators=("gen-a", "gen-b"))
    study = Study.objects.create(name="pilot")
    picked = data["generations"][1:4]
    for i, g in enumerate(picked):
        StudyItem.objects.create(study=study, generation=g, position=i)
    StudyItem.objects.create(
        study=study, generation=picked[0], kind="training", position=9, expected_has_failure=False
    )  # same generation
    judge = make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE)
    run = services.judge_run_create(judge=judge, selection={"study": study.pk}, enqueue=False)
    assert run.n_total == 3
    assert set(run.items.values_list("generation_id", flat=True)) == {g.pk for g in picked}
    with pytest.raises(ValidationError) as info:
        services.judge_run_create(judge=judge, selection={"study": 999999}, enqueue=False)
    assert "study" in info.value.message_dict


def test_cancel_mid_run_stops_sending_and_keeps_what_was_judged(llm_server):
    import threading

    from django.db import connection

    from tests.support.worker import wait_for

    llm_server.responder = judge_responder
    llm_server.latency_s = 0.1
    data = make_data(n=40)
    judge = make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE, concurrency=2)
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    outcome = {}

    def work():
        try:
            outcome["value"] = work_chunk(run)
        finally:
            connection.close()

    worker = threading.Thread(target=work)
    worker.start()
    wait_for(lambda: Judgment.objects.count() >= 6, timeout=20, message="some judgments")
    # the counters move while the chunk runs (written with each stored batch)
    wait_for(lambda: JudgeRun.objects.get(pk=run.pk).n_done >= 1, timeout=5, message="live n_done")
    assert services.judge_run_cancel(run=run).status == "cancelling"  # its worker stops it
    worker.join(timeout=20)
    run.refresh_from_db()
    assert outcome["value"].status == "cancelled" and run.status == "cancelled"
    assert 6 <= run.n_done < 40 and run.finished_at is not None
    assert len(llm_server.requests) < 40
    assert (
        run.n_done
        == JudgeRunItem.objects.filter(run=run, judgment__isnull=False).count()
        == Judgment.objects.count()
    )


def test_resume_a_failed_run_asks_only_what_failed(llm_server, monkeypatch, enqueued):
    monkeypatch.setattr("benchmarks.llm.retry.RetryPolicy.delay", lambda self, attempt, **kw: 0.0)
    llm_server.responder = judge_responder
    data = make_data(n=4)
    judge = make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE, max_retries=0)
    target = data["procedures"][1].goal
    llm_server.add_fault(
        "status", status=503, count=3, match=lambda r: target + "\n" in r.prompt_text
    )
    run = services.judge_run_create(
        judge=judge, selection={"dataset": data["dataset"].pk}, enqueue=False
    )
    run = engine.execute_inline(run)
    assert (run.status, run.n_done, run.n_failed) == ("failed", 3, 1)
    assert "503" in run.error and len(llm_server.requests) == 3 + 3
    tokens = run.prompt_tokens
    run = services.judge_run_resume(run=run)
    assert (run.status, run.error, run.finished_at) == ("queued", "", None)
    assert enqueued == [run.pk]  # its first chunk, once the transaction committed
    run = engine.execute_inline(run)
    assert (run.status, run.n_done, run.n_failed, run.n_reused) == ("done", 4, 0, 0)
    assert len(llm_server.requests) == 3 + 3 + 1  # only the failed item was asked again
    assert run.prompt_tokens > tokens  # the new judgment's tokens are counted
    with pytest.raises(ValidationError, match="nothing to resume"):
        services.judge_run_resume(run=run)
    with pytest.raises(ValidationError, match="only queued or running runs can be cancelled"):
        services.judge_run_cancel(run=run)


def test_a_run_is_routed_by_its_judges_backend(llm_server, settings):
    from judging.services.execution import JudgeRunExecutor

    executor = JudgeRunExecutor()
    data = make_data(n=1)
    run = services.judge_run_create(
        judge=make_judge(name="j1", base_url=llm_server.base_url, preset=RUN_JUDGE),
        selection={"dataset": data["dataset"].pk},
        enqueue=False,
    )
    assert executor.queue(run) is None  # the default queue
    vllm = Judge.objects.create(name="tiny-vllm", backend="vllm", model="/models/tiny")
    assert executor.queue(JudgeRun(judge=vllm)) == settings.CELERY_GPU_QUEUE


def test_eta_from_the_rate_so_far():
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    run = JudgeRun(
        status="running",
        started_at=now - timedelta(seconds=10),
        n_total=1000,
        n_done=250,
        n_reused=50,
    )
    # 200 judged in 10 s -> 20/s; 750 left -> 37.5 s
    assert selectors.judge_run_eta_s(run, now=now) == pytest.approx(37.5)
    assert selectors.judge_run_eta_s(JudgeRun(status="done", n_total=5, n_done=5)) is None


def test_judge_validation_names_the_field(llm_server):
    with pytest.raises(ValidationError) as info:
        make_judge(
            name="bad",
            base_url=llm_server.base_url,
            preset=RUN_JUDGE,
            prompt_template="nope",
            api_key_env="sk-live-123",
            model="",
        )
    errors = info.value.message_dict
    assert "unknown template 'nope'" in errors["prompt_template"][0]
    assert "never the key itself" in errors["api_key_env"][0]
    assert errors["model"] == ["required for this backend"]
    assert not Judge.objects.filter(name="bad").exists()
