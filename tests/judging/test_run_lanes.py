"""Judge runs worked in lanes against the local OpenAI-compatible server: each lane judges its
own items (split by the first hex digit of the content hash, so duplicates of one content stay
in one lane and are asked once), the last lane ends the run, the lane count from the setting;
and two real worker processes on one run judge every item exactly once, redelivered lane
messages included. The engine's lane mechanics (held and stale lanes, failure, cancel, orphans,
resume) are tested on the test-only run type in tests/core/test_run_lanes.py."""

from __future__ import annotations

import json

import pytest
from django.db import transaction

from core.runs import engine
from core.runs.models import RunLane
from judging.models import JudgeRun, JudgeRunItem, Judgment
from judging.services import runs as services
from judging.services.run_items import lane_items
from tests.judging.factories import FAIL_FAST, make_data, make_judge
from tests.judging.support import judge_responder
from tests.support.worker import running_worker, start_worker, wait_for

pytestmark = pytest.mark.django_db(transaction=True)

GOOD = json.dumps({"reasoning": "ok", "critical_failures": []})
LABEL = JudgeRun._meta.label


@pytest.fixture
def four_lanes(settings, monkeypatch):
    settings.JUDGE_RUN_LANES = 4
    sent: list[tuple[int, int | None]] = []
    monkeypatch.setattr(
        "core.runs.engine.enqueue",
        lambda run, countdown=None, lane=None: sent.append((run.pk, lane)),
    )
    return sent


def lane_of(content_hash: str, n: int = 4) -> int:
    return int(content_hash[0], 16) % n


def _duplicated_run(llm_server):
    llm_server.responder = judge_responder
    data = make_data(n=40, generators=("gen-a", "gen-b"))
    # gen-b's steps copy gen-a's: 40 duplicate contents, asked once each (same lane)
    for a, b in zip(data["generations"][:40], data["generations"][40:], strict=True):
        b.predicted_steps = a.predicted_steps
        b.save(update_fields=["predicted_steps"])
    return services.judge_run_create(
        judge=make_judge(name="lanes-judge", base_url=llm_server.base_url, preset=FAIL_FAST),
        selection={"dataset": data["dataset"].pk},
    )


def _hold(run, lane: int, owner: str = "another-worker") -> None:
    """Lane ``lane`` held by a live execution elsewhere (a fresh heartbeat)."""
    from django.utils import timezone

    RunLane.objects.filter(run_label=LABEL, run_id=run.pk, lane=lane).update(
        lease_owner=owner, heartbeat_at=timezone.now()
    )


def test_each_lane_judges_its_own_items_and_the_last_lane_ends_the_run(llm_server, four_lanes):
    """With the other lanes held elsewhere, each execution judges its own lane's items only."""
    run = _duplicated_run(llm_server)
    assert four_lanes == [(run.pk, k) for k in range(4)]  # one chunk task per lane
    rows = RunLane.objects.filter(run_label=LABEL, run_id=run.pk).order_by("lane")
    assert [(r.lane, r.n_lanes, r.done) for r in rows] == [(k, 4, False) for k in range(4)]
    outcomes = []
    for k in range(4):
        _hold(run, k, owner="")  # this lane is free; those after it are busy elsewhere
        for other in range(k + 1, 4):
            _hold(run, other)
        before = len(llm_server.requests)
        outcomes.append(engine.execute(LABEL, run.pk, lane=k, chain=False).status)
        # the first lane's execution inserted the run's items (judge_run_prepare)
        hashes = set(JudgeRunItem.objects.filter(run=run).values_list("content_hash", flat=True))
        assert len(hashes) == 40
        # lane k asked each of its contents once, and nothing of the lanes after it
        assert len(llm_server.requests) - before == sum(1 for h in hashes if lane_of(h) == k)
        judged = JudgeRunItem.objects.filter(run=run, judgment__isnull=False)
        assert {lane_of(h) for h in judged.values_list("content_hash", flat=True)} <= set(
            range(k + 1)
        )
    assert outcomes == ["lane-done", "lane-done", "lane-done", "done"]
    run.refresh_from_db()
    assert (run.status, run.n_total, run.n_done, run.n_failed) == ("done", 80, 80, 0)
    assert len(llm_server.requests) == 40 == Judgment.objects.count()  # each content once
    assert not RunLane.objects.filter(run_label=LABEL, run_id=run.pk, done=False).exists()
    # an execution of a done lane, or of a lane of a finished run, has nothing to do
    assert engine.execute(LABEL, run.pk, lane=2, chain=False).status == "inactive"


def test_a_lane_done_sending_adopts_the_free_lanes_and_skips_held_ones(llm_server, four_lanes):
    """One execution that has sent its own lane's work goes on with the other free lanes
    (no drain and no chunk task between lanes for one worker), never with a lane another
    execution holds; every content is still asked once."""
    run = _duplicated_run(llm_server)
    for k in (0, 1, 2):
        _hold(run, k)
    # items inserted; lane 3 done alone (the others are busy elsewhere)
    assert engine.execute(LABEL, run.pk, lane=3, chain=False).status == "lane-done"
    for k in (0, 1):
        _hold(run, k, owner="")  # free again; lane 2 stays held
    before = len(llm_server.requests)
    assert engine.execute(LABEL, run.pk, lane=0, chain=False).status == "lane-done"
    hashes = set(JudgeRunItem.objects.filter(run=run).values_list("content_hash", flat=True))
    # lanes 0 and 1 judged in one execution, lane 2 (held elsewhere) untouched
    assert len(llm_server.requests) - before == sum(1 for h in hashes if lane_of(h) in (0, 1))
    done = dict(RunLane.objects.filter(run_label=LABEL, run_id=run.pk).values_list("lane", "done"))
    assert done == {0: True, 1: True, 2: False, 3: True}
    # lane 1's own chunk task, still queued, finds nothing to do
    assert engine.execute(LABEL, run.pk, lane=1, chain=False).status == "inactive"
    _hold(run, 2, owner="")  # its holder died: the lease is free again
    assert engine.execute(LABEL, run.pk, lane=2, chain=False).status == "done"
    run.refresh_from_db()
    assert (run.status, run.n_done) == ("done", 80)
    assert len(llm_server.requests) == 40 == Judgment.objects.count()


def test_an_adopted_lane_is_handed_over_with_its_own_chunk_when_time_is_up(
    llm_server, four_lanes, monkeypatch
):
    """A chunk whose time runs out after adopting a lane gives back both lanes and enqueues
    a chunk for each."""
    run = _duplicated_run(llm_server)
    for k in (2, 3):
        _hold(run, k)
    real_adopt = engine.Lease.adopt

    def adopt_then_due(self):
        lane = real_adopt(self)
        if lane is not None:
            object.__setattr__(self, "due", 1.0)  # monotonic 1.0: long past
        return lane

    monkeypatch.setattr(engine.Lease, "adopt", adopt_then_due)
    four_lanes.clear()
    assert engine.execute(LABEL, run.pk, lane=0, chain=True).status == "more"
    assert sorted(four_lanes) == [(run.pk, 0), (run.pk, 1)]
    rows = RunLane.objects.filter(run_label=LABEL, run_id=run.pk, lane__in=(0, 1))
    assert set(rows.values_list("lease_owner", flat=True)) == {""}


def test_lane_filter_splits_by_the_first_hex_digit():
    lease = engine.Lease(JudgeRun, 1, "t", lane=1, n_lanes=3)
    q = str(lane_items(lease))
    for digit in "147ad":  # 1, 4, 7, 10, 13 mod 3 == 1
        assert f"'{digit}'" in q
    assert "'0'" not in q and "'2'" not in q
    assert str(lane_items(engine.Lease(JudgeRun, 1, "t"))) == "(AND: )"


@pytest.mark.worker
def test_two_real_workers_judge_one_run_exactly_once(llm_server, tmp_path, settings):
    settings.JUDGE_RUN_LANES = 4
    llm_server.responder = lambda req: GOOD
    llm_server.latency_s = 0.02
    n = 160
    data = make_data(n=n)
    judge = make_judge(name="lanes-judge", base_url=llm_server.base_url, preset=FAIL_FAST)
    env = {"H2R_JUDGE_CHUNK_ITEMS": "15"}  # many chunks per lane, handed over between workers
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with running_worker(tmp_path / "a", concurrency=1, extra_env=env) as first:
        second = start_worker(tmp_path / "b", concurrency=1, extra_env=env, queue=first.queue)
        try:
            with transaction.atomic():
                run = services.judge_run_create(
                    judge=judge, selection={"dataset": data["dataset"].pk}
                )
                for _ in range(2):  # every lane's message delivered twice more
                    for k in range(4):
                        transaction.on_commit(lambda k=k: engine.enqueue(run, lane=k))
            wait_for(
                lambda: JudgeRun.objects.get(pk=run.pk).status == "done",
                timeout=120,
                message="the run done",
            )
        finally:
            second.stop()
    run.refresh_from_db()
    assert (run.n_done, run.n_failed, run.n_total) == (n, 0, n)
    assert Judgment.objects.filter(judge=judge).count() == n
    assert len(llm_server.requests) == n  # no item asked twice, whatever the redeliveries
    assert RunLane.objects.filter(run_label=LABEL, run_id=run.pk, done=True).count() == 4


def test_lanes_from_the_setting_and_one_on_sqlite(settings, monkeypatch):
    from django.db import connection

    from judging.models import Judge
    from judging.services.execution import JudgeRunExecutor

    run = JudgeRun(pk=1, judge=Judge(backend="openai", model="m", base_url="http://x/v1"))
    settings.JUDGE_RUN_LANES = 40
    assert JudgeRunExecutor().lanes(run) == 16  # one hex digit splits at most 16 ways
    settings.JUDGE_RUN_LANES = 3
    assert JudgeRunExecutor().lanes(run) == 3
    monkeypatch.setattr(connection, "vendor", "sqlite")
    assert JudgeRunExecutor().lanes(run) == 1  # the embedded default: one machine
    monkeypatch.setattr(connection, "vendor", "postgresql")
    run.judge.batch_mode = True
    assert JudgeRunExecutor().lanes(run) == 1  # a provider's batch: one execution submits
