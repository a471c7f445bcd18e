"""Generation runs in batch mode (``backend_options: {"mode": "batch"}``) against the local
batch server through the real ``openai`` client, on PostgreSQL: replies stored and scored as
online ones, a batch that expires part-done sends the rest again, a request that failed inside
a batch fails the run until it is resumed (the online rule), the cost at the batch rate."""

from __future__ import annotations

from decimal import Decimal

import pytest

from benchmarks.models import Generation
from benchmarks.services import batch_runs
from core.runs import engine
from tests.benchmarks.generation.conftest import steps_responder
from tests.support.batch_server import BatchTestServer

pytestmark = pytest.mark.django_db(transaction=True)
LABEL = "benchmarks.GenerationRun"


@pytest.fixture
def server():
    with BatchTestServer(responder=steps_responder) as s:
        yield s


def step(run) -> str:
    outcome = engine.execute(LABEL, run.pk, chain=False).status
    run.refresh_from_db()
    return outcome


def test_a_generation_run_in_batch_mode(server, small_dataset, generator, monkeypatch):
    from benchmarks.services.generation_runs import generation_run_create

    monkeypatch.setattr("core.runs.engine.enqueue", lambda *a, **k: None)
    dataset, _, _ = small_dataset
    run = generation_run_create(
        generator=generator,
        dataset=dataset,
        model="m",
        base_url=server.base_url,
        backend_options={"mode": "batch", "batch_max_requests": 3},
        input_price_per_mtok=2,
        output_price_per_mtok=8,
        start=False,
    )
    engine.launch(run)
    assert step(run) == "waiting"
    first = batch_runs.batches_of(run)
    assert [b.n_requests for b in first] == [3, 2]  # 5 procedures, 3 a file
    failing = str(first[0].item_keys[0])
    server.fail(lambda custom_id: custom_id == failing, status=500)
    server.run(n=2)  # batch 1: the failure and one reply; batch 2: two replies
    server.expire()
    assert step(run) == "waiting"  # 3 stored, 1 failed (kept back), 1 not run: sent again
    assert Generation.objects.filter(generator=generator).count() == 3
    resent = batch_runs.batches_of(run)[2]
    assert resent.n_requests == 1 and int(failing) not in resent.item_keys
    server.finish()
    assert step(run) == "failed"  # the failed request, as online: resume to retry
    assert run.n_done == 4 and "have no generation" in run.error
    assert run.errors[0]["procedure_id"] == int(failing) and "HTTP 500" in run.errors[0]["error"]
    engine.resume(run, enqueue=False)
    assert step(run) == "waiting"
    assert batch_runs.batches_of(run)[-1].item_keys == [int(failing)]
    server.finish()
    assert step(run) == "done" and (run.n_done, run.n_total) == (5, 5)
    gen = Generation.objects.get(generator=generator, procedure_id=int(failing))
    assert gen.predicted_steps and gen.run_id == run.pk
    assert set(server.ran.values()) == {1}  # each procedure's request answered once
    online = (Decimal(run.prompt_tokens) * 2 + Decimal(run.completion_tokens) * 8) / 10**6
    assert run.prompt_tokens == 5000 and run.cost == online / 2
