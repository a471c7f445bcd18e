"""A real Celery worker is killed (SIGKILL) mid-run; another worker resumes the run with no
duplicated and no missing judgment."""

from __future__ import annotations

import pytest
from django.db import transaction

from core.runs.reply_writer import unstored_width
from judging.models import JudgeRun, JudgeRunItem, Judgment
from judging.services import runs as services
from tests.judging.factories import FAIL_FAST, make_data, make_judge
from tests.judging.support import judge_responder
from tests.support.worker import running_worker, start_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

N = 240
# replies are stored as they arrive: with 150 items a chunk, the kill after the first 60 lands
# inside a chunk, not at its boundary (where no execution holds the lease)
ENV = {"RUN_LEASE_SECONDS": "2", "H2R_JUDGE_CHUNK_ITEMS": "150"}


def _held(run) -> bool:
    """Whether an execution holds the run (or one of its lanes) right now."""
    from core.runs.models import RunLane

    lanes = RunLane.objects.filter(run_label=run._meta.label, run_id=run.pk)
    return (
        lanes.exclude(lease_owner="").exists()
        or JudgeRun.objects.filter(pk=run.pk).exclude(lease_owner="").exists()
    )


@pytest.mark.parametrize(
    ("gather_s", "bound", "lanes"),
    [
        # the default gather (50 ms): a request is sent only once a slot is free, and a slot
        # frees when its reply is committed (backpressure), so a kill loses at most
        # unstored_width(4) = 6 requests: those in flight (at most the concurrency, 4) plus the
        # replies not yet written (half the concurrency)
        ("0.05", unstored_width(4), 1),
        # the same run worked in 4 lanes (the default outside tests): the killed worker held
        # one lane; the orphan scan of the next worker requeues it and the lanes never started
        ("0.05", unstored_width(4), 4),
    ],
)
def test_worker_killed_mid_run_resumes_exactly(
    llm_server, tmp_path, settings, gather_s, bound, lanes
):
    settings.JUDGE_RUN_LANES = lanes
    llm_server.responder = judge_responder
    llm_server.latency_s = 0.04
    data = make_data(n=N, bad_every=7)
    judge = make_judge(
        name="resume-judge", base_url=llm_server.base_url, preset=FAIL_FAST, max_retries=2
    )
    env = {**ENV, "H2R_JUDGE_GATHER_S": gather_s}
    first = start_worker(tmp_path, concurrency=1, extra_env=env)
    try:
        with transaction.atomic():
            run = services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})
        wait_for(
            lambda: Judgment.objects.count() >= 60 and _held(run),
            timeout=60,
            message="first judgments, inside a chunk",
        )
    finally:
        first.kill()  # SIGKILL mid-run: requests in flight are lost, the lease stays behind
    stored_at_kill = Judgment.objects.count()
    run.refresh_from_db()
    assert run.status == "running" and 60 <= stored_at_kill < N, (run.status, stored_at_kill)
    assert _held(run)  # the dead worker still "holds" it (the run, or its lane)

    with running_worker(tmp_path, concurrency=1, extra_env=env, queue=first.queue) as second:
        wait_for(
            lambda: JudgeRun.objects.get(pk=run.pk).status == "done",
            timeout=90,
            message=f"run to finish; worker log:\n{second.log()[-3000:]}",
        )
    run.refresh_from_db()
    assert Judgment.objects.count() == N  # none missing, none twice (unique per judge + content)
    assert JudgeRunItem.objects.filter(run=run, judgment__isnull=True).count() == 0
    assert JudgeRunItem.objects.filter(run=run).values("judgment").distinct().count() == N
    assert (run.n_done, run.n_failed, run.n_total) == (N, 0, N)
    assert Judgment.objects.filter(has_failure=True).count() == len(range(0, N, 7))
    # each content was asked; asked again only what was lost at the kill: the requests in flight
    # (concurrency 4) and the replies gathered for the write under way (two more at most)
    asked = [r.last_message for r in llm_server.requests]
    assert len(set(asked)) == N
    rebought = len(asked) - N
    print(f"re-bought after kill -9 (gather {gather_s} s, {lanes} lane(s)): {rebought}")
    assert rebought <= bound, rebought
