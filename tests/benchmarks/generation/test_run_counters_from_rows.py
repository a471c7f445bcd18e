"""A generation run's counters — tokens and cost too — are counted from its rows (the
generations it asked for, ``Generation.run``), never added to the run row: a count repeated
gives the same numbers, and a generation made before (imported) is not the run's."""

from __future__ import annotations

from decimal import Decimal

import pytest

from benchmarks.models import Generation
from core.runs import engine
from tests.benchmarks.factories import make_generation_run
from tests.benchmarks.generation.conftest import drive, steps_responder

pytestmark = pytest.mark.django_db(transaction=True)


def test_tokens_and_cost_are_counted_from_the_runs_generations(
    llm_server, small_dataset, generator
):
    dataset, _, procedures = small_dataset
    llm_server.responder = steps_responder
    imported = Generation.objects.create(
        procedure=procedures[0], generator=generator, predicted_steps=["x"], prompt_tokens=999
    )
    run = make_generation_run(
        llm_server, dataset, generator, input_price_per_mtok=2, output_price_per_mtok=8
    )
    run = drive(run)
    assert run.status == "done", run.error
    mine = Generation.objects.filter(run=run)
    assert mine.count() == 4 and imported.pk not in set(mine.values_list("pk", flat=True))
    assert run.prompt_tokens == 400  # 100 per request, not the imported generation's 999
    counted = engine.executor_for(type(run)).counters(run)
    assert (counted["prompt_tokens"], counted["completion_tokens"]) == (
        run.prompt_tokens,
        run.completion_tokens,
    )
    assert counted["cost"] == (
        Decimal(run.prompt_tokens) * 2 + Decimal(run.completion_tokens) * 8
    ) / Decimal(1_000_000)
    mine.filter(pk=mine.first().pk).update(prompt_tokens=0)  # the rows say so, the count follows
    assert engine.executor_for(type(run)).counters(run)["prompt_tokens"] == 300
