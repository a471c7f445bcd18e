"""Scoring runs on the run engine (PostgreSQL): a pack applied to every generation of a
generator on a dataset; per-generation metrics and breakdown stored, counters counted from the
rows, the pack's summary on the run; bad records listed, bad options refused or failing the
run; and a real Celery worker working one."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import transaction

from benchmarks.models import Dataset, Generation, Generator, ScoringRun
from benchmarks.services.scoring_runs import (
    ScoringRunError,
    scoring_run_create,
    scoring_run_start,
)
from core.runs import engine
from tests.support.worker import running_worker, wait_for

FIXTURES = Path(__file__).resolve().parents[3] / "demo" / "fixtures" / "packs"


def load(pack, dataset, generator="m"):
    call_command(
        "import_pack", pack, str(FIXTURES / f"{pack}.jsonl"), "--dataset", dataset,
        "--generator", generator, stdout=io.StringIO(),
    )  # fmt: skip
    return Dataset.objects.get(name=dataset), Generator.objects.get(name=generator)


@pytest.mark.django_db
def test_countdown_run_scores_every_generation_and_summarises():
    ds, gen = load("longproc-countdown", "cd")
    run = scoring_run_create(generator=gen, dataset=ds, pack="longproc-countdown", start=False)
    assert (run.n_total, run.n_done) == (3, 0)
    run = engine.execute_inline(run)
    assert run.status == "done", run.error
    assert (run.n_total, run.n_done, run.n_failed) == (3, 3, 0)
    scores = {
        g.procedure.source_example_id: g.pack_scores["longproc-countdown"]
        for g in Generation.objects.select_related("procedure")
    }
    assert scores["countdown-f5"]["metrics"] == {"correct": 1, "terminated": 1}
    assert scores["countdown-f5"]["run"] == run.pk
    assert scores["countdown-f5"]["breakdown"]  # the validator's per-equation breakdown
    assert scores["countdown-cut"]["metrics"] == {"correct": 0, "terminated": 0}
    # summary: accuracy 1/3, termination 2/3, accuracy among terminated 1/2
    assert run.summary["correct"] == pytest.approx(1 / 3)
    assert run.summary["term"] == pytest.approx(2 / 3)
    assert run.summary["acc_term"] == pytest.approx(1 / 2)
    assert run.summary["n"] == 3


@pytest.mark.django_db
def test_two_packs_keep_their_own_results_and_structured_outputs_score():
    ds, gen = load("scirecipe", "sr")
    run = engine.execute_inline(
        scoring_run_create(generator=gen, dataset=ds, pack="scirecipe", start=False)
    )
    assert (run.status, run.n_done) == ("done", 3)
    g = Generation.objects.get(procedure__source_example_id="order-swap")
    assert g.pack_scores["scirecipe"]["metrics"]["order_lcs"] == pytest.approx(0.75)
    assert g.pack_scores["scirecipe"]["metrics"]["order_strict"] == 0
    # the countdown pack on scirecipe items: every record fails, named; the run fails
    bad = engine.execute_inline(
        scoring_run_create(generator=gen, dataset=ds, pack="longproc-countdown", start=False)
    )
    assert (bad.status, bad.n_done, bad.n_failed) == ("failed", 0, 3)
    assert bad.error == "no generation could be scored (see the recent failures)"
    assert bad.errors[0]["error"].startswith("field 'numbers': is required")
    g.refresh_from_db()
    assert set(g.pack_scores) == {"scirecipe", "longproc-countdown"}  # the first result is kept


@pytest.mark.django_db
def test_options_are_checked_at_create_and_bad_values_fail_the_run():
    ds, gen = load("procbench", "pb")
    with pytest.raises(ScoringRunError, match="options: unknown nope for procbench"):
        scoring_run_create(generator=gen, dataset=ds, pack="procbench", options={"nope": 1})
    with pytest.raises(ScoringRunError, match="pack: unknown scorer 'x'"):
        scoring_run_create(generator=gen, dataset=ds, pack="x")
    run = scoring_run_create(
        generator=gen, dataset=ds, pack="procbench", options={"missing_final": "??"}, start=False
    )
    run = engine.execute_inline(run)
    assert run.status == "failed"
    assert run.error.startswith("the pack rejected the run's options: missing_final must be")
    assert not Generation.objects.filter(pack_scores__has_key="procbench").exists()


@pytest.mark.django_db
def test_resume_keeps_what_was_scored_and_a_done_run_is_not_resumed():
    ds, gen = load("procbench", "pb")
    run = engine.execute_inline(
        scoring_run_create(generator=gen, dataset=ds, pack="procbench", start=False, chunk_size=1)
    )
    assert (run.status, run.n_done) == ("done", 3)
    assert run.summary["pml"] == pytest.approx((8 + 2 + 6) / 3)
    with pytest.raises(ScoringRunError, match="is done; nothing to resume"):
        scoring_run_start(run=run)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_works_a_scoring_run(tmp_path):
    ds, gen = load("procbench", "pb")
    with running_worker(tmp_path, concurrency=1) as worker:
        with transaction.atomic():
            run = scoring_run_create(generator=gen, dataset=ds, pack="procbench", chunk_size=2)
        wait_for(
            lambda: ScoringRun.objects.get(pk=run.pk).status == "done",
            timeout=60,
            message=f"run done; log:\n{worker.log()[-2000:]}",
        )
    run.refresh_from_db()
    assert (run.n_total, run.n_done, run.n_failed) == (3, 3, 0)
    assert run.summary["sm"] == pytest.approx(1 / 3)


@pytest.mark.django_db
def test_run_scoring_command_inline_and_errors():
    load("longproc-countdown", "cd")
    out = io.StringIO()
    call_command(
        "run_scoring", "--pack", "longproc-countdown", "--generator", "m", "--dataset", "cd",
        "--option", "fallback=whole", "--inline", stdout=out,
    )  # fmt: skip
    first, summary = out.getvalue().splitlines()
    assert first.endswith("done — 3/3 scored, 0 not scorable")
    assert json.loads(summary)["summary"]["n"] == 3
    assert ScoringRun.objects.get().options == {"fallback": "whole"}
    with pytest.raises(CommandError, match="--option nope: unknown option"):
        call_command("run_scoring", "--pack", "procbench", "--generator", "m", "--dataset", "cd",
                     "--option", "nope=1")  # fmt: skip
    with pytest.raises(CommandError, match="--generator: no generator named 'x'"):
        call_command("run_scoring", "--pack", "procbench", "--generator", "x", "--dataset", "cd")
    with pytest.raises(CommandError, match="--pack: unknown scorer 'x'"):
        call_command("run_scoring", "--pack", "x", "--generator", "m", "--dataset", "cd")
