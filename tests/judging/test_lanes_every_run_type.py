"""Generation runs, scoring runs and mining batches are worked in lanes like judge runs: two
real Celery workers (one slot each) share one run of each type, each working part of it, and
every item is worked exactly once (one generation per procedure, one request per item, one
pack score per generation, every document through the stages once)."""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.db import transaction

from benchmarks.models import Dataset, Generation, GenerationRun, Generator, Procedure, ScoringRun
from benchmarks.services.scoring_runs import scoring_run_create
from core.runs.models import RunLane
from mining.models import MiningBatch, MiningDocument
from mining.services import batches as mining
from tests.benchmarks.factories import make_generation_run
from tests.benchmarks.generation.conftest import steps_responder
from tests.mining.factories import doc
from tests.mining.script import MiningScript
from tests.support.worker import running_worker, start_worker, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]

PACKS = Path(__file__).resolve().parents[2] / "demo" / "fixtures" / "packs"


def _chunks_by(worker) -> int:
    return worker.log().count("succeeded in")


def _two_workers(tmp_path, launch, finished, *, timeout=150, env=None):
    """Launch with two workers on one queue; wait until ``finished()``; both workers' chunk
    counts."""
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    with running_worker(tmp_path / "a", concurrency=1, extra_env=env) as first:
        second = start_worker(tmp_path / "b", concurrency=1, queue=first.queue, extra_env=env)
        try:
            with transaction.atomic():
                run = launch()
            wait_for(
                finished,
                timeout=timeout,
                message=f"the run done\n{first.log()[-2000:]}\n{second.log()[-2000:]}",
            )
            return run, _chunks_by(first), _chunks_by(second)
        finally:
            second.stop()


def _lanes_done(run) -> int:
    return RunLane.objects.filter(run_label=run._meta.label, run_id=run.pk, done=True).count()


def test_a_generation_run_is_shared_by_two_workers(llm_server, tmp_path, settings):
    settings.RUN_LANES = 4
    llm_server.responder = steps_responder
    llm_server.latency_s = 0.02
    n = 60
    dataset = Dataset.objects.create(name="lanes-gen", version="v1")
    Procedure.objects.bulk_create(
        Procedure(dataset=dataset, source_example_id=f"g-{i}", goal=f"Goal {i}", steps=["a.", "b."])
        for i in range(n)
    )
    generator = Generator.objects.create(name="lanes-gen")
    run, a, b = _two_workers(
        tmp_path,
        lambda: make_generation_run(llm_server, dataset, generator, chunk_size=3),
        lambda: not GenerationRun.objects.get(pk=run_pk(GenerationRun)).is_active,
    )
    run.refresh_from_db()
    assert run.status == "done", run.error
    assert (run.n_done, run.n_failed, run.n_total) == (n, 0, n)
    per = Counter(
        Generation.objects.filter(generator=generator).values_list("procedure", flat=True)
    )
    assert len(per) == n and set(per.values()) == {1}
    assert len(llm_server.requests) == n  # no procedure asked twice
    assert _lanes_done(run) == 4 and a >= 1 and b >= 1, (a, b)
    assert run.scores["n_examples"] == n  # the summary, by the run's last lane


def run_pk(model) -> int:
    return model.objects.order_by("-pk").values_list("pk", flat=True).first() or 0


def test_a_scoring_run_is_shared_by_two_workers(tmp_path, settings):
    settings.RUN_LANES = 4
    call_command(
        "import_pack", "longproc-countdown", str(PACKS / "longproc-countdown.jsonl"),
        "--dataset", "cd", "--generator", "m", stdout=io.StringIO(),
    )  # fmt: skip
    dataset, generator = Dataset.objects.get(name="cd"), Generator.objects.get(name="m")
    # copies of the pack's three records: 3 x 40 generations to score
    originals = list(Generation.objects.filter(generator=generator).select_related("procedure"))
    ids = [g.procedure.source_example_id for g in originals]
    for k in range(1, 40):
        for g, ident in zip(originals, ids, strict=True):
            p = g.procedure
            p.pk, p.source_example_id = None, f"{ident}-{k}"
            p.save()
            g.pk, g.procedure = None, p
            g.save()
    n = Generation.objects.filter(generator=generator).count()
    run, a, b = _two_workers(
        tmp_path,
        lambda: scoring_run_create(
            generator=generator, dataset=dataset, pack="longproc-countdown", chunk_size=5
        ),
        lambda: not ScoringRun.objects.get(pk=run_pk(ScoringRun)).is_active,
    )
    run.refresh_from_db()
    assert run.status == "done", run.error
    assert (run.n_total, run.n_done + run.n_failed) == (n, n)
    scored = Generation.objects.filter(
        generator=generator, pack_scores__has_key="longproc-countdown"
    )
    assert scored.count() == n
    assert _lanes_done(run) == 4 and a >= 1 and b >= 1, (a, b)
    assert run.summary["n"] == n


def test_a_mining_batch_is_shared_by_two_workers(llm_server, tmp_path, settings):
    settings.RUN_LANES = 4
    settings.MEDIA_ROOT = tmp_path / "media"
    script = MiningScript()
    llm_server.responder = script
    llm_server.latency_s = 0.01
    n = 40
    backends = {
        "default": {
            "backend": "openai",
            "base_url": llm_server.base_url,
            "model": "test-model",
            "concurrency": 4,
            "max_retries": 1,
            "backoff_base_s": 0.01,
        }
    }
    upload = SimpleUploadedFile(
        "d.jsonl", "".join(json.dumps(doc(i)) + "\n" for i in range(n)).encode()
    )
    run, a, b = _two_workers(
        tmp_path,
        lambda: mining.batch_create(
            name="lanes", upload=upload, backends=backends, options={"chunk_size": 4}
        ),
        lambda: not MiningBatch.objects.get(pk=run_pk(MiningBatch)).is_active,
        env={"HOW2REVIEW_VAR_DIR": str(tmp_path)},  # the workers' MEDIA_ROOT is the test's
    )
    run.refresh_from_db()
    assert run.status == "done", run.error
    docs = MiningDocument.objects.filter(batch=run)
    assert docs.count() == n and not docs.filter(outcome="pending").exists()
    # each document asked each stage at most once: no request twice
    prompts = Counter((r.body.get("response_format") or {}).get("json_schema", {}).get("name", "")
                      + r.prompt_text for r in llm_server.requests)  # fmt: skip
    assert max(prompts.values()) == 1
    assert _lanes_done(run) == 4 and a >= 1 and b >= 1, (a, b)
