"""One run of each type (judge, generation, scoring runs, mining batches) for the lanes benchmark
(bench_lanes_every_run_type.py), made against the local OpenAI-compatible server: each case
makes its data and returns ``(launch, model, duplicates, asked, endpoint)``:

- ``launch()`` creates and sends the run;
- ``model``: the run's model, whose row says when it is finished;
- ``duplicates(run)``: the items stored twice or not at all (0 when each is stored once);
- ``asked``: the requests the run should make (None: not known in advance, 0: none);
- ``endpoint(run)``: the run's backend configuration (None for a run that calls no model).

Django must be set up before a case is called.
"""

from __future__ import annotations

import io
import json
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKS = ROOT / "demo" / "fixtures" / "packs"


def judge_case(server, n, concurrency, tag):
    from judging.models import JudgeRun, JudgeRunItem, Judgment
    from judging.services import judges as judge_services
    from judging.services import runs as services
    from tests.judging.factories import make_data

    data = make_data(n=n, dataset=tag, generators=(f"{tag}-gen",))
    judge = judge_services.judge_create(
        name=f"lanes-{tag}",
        backend="openai",
        base_url=server.base_url,
        model="m",
        concurrency=concurrency,
        timeout_s=30,
    )

    def launch():
        return services.judge_run_create(judge=judge, selection={"dataset": data["dataset"].pk})

    def duplicates(run):
        items = JudgeRunItem.objects.filter(run=run, judgment__isnull=False)
        return (
            items.count()
            - items.values("judgment").distinct().count()
            + (Judgment.objects.filter(judge=judge).count() - n)
        )

    def endpoint(run):
        return judge.backend_config()

    return launch, JudgeRun, duplicates, n, endpoint


def generation_case(server, n, concurrency, tag):
    from benchmarks.models import Dataset, Generation, GenerationRun, Generator, Procedure
    from benchmarks.services.generation_runs import generation_run_create

    dataset = Dataset.objects.create(name=tag, version="v1")
    Procedure.objects.bulk_create(
        Procedure(
            dataset=dataset, source_example_id=f"{tag}-{i}", goal=f"Goal {i}", steps=["a.", "b."]
        )
        for i in range(n)
    )
    generator = Generator.objects.create(name=tag)

    def launch():
        return generation_run_create(
            generator=generator,
            dataset=dataset,
            model="m",
            base_url=server.base_url,
            chunk_size=50,
            concurrency=concurrency,
            backend_options={"timeout_s": 30},
        )

    def duplicates(run):
        per = Counter(
            Generation.objects.filter(generator=generator).values_list("procedure", flat=True)
        )
        return sum(c - 1 for c in per.values()) + (n - len(per))

    def endpoint(run):
        from benchmarks.services.generation_requests import generation_run_backend_config

        return generation_run_backend_config(run=run)

    return launch, GenerationRun, duplicates, n, endpoint


def scoring_case(server, n, concurrency, tag):
    from django.core.management import call_command

    from benchmarks.models import Dataset, Generation, Generator, ScoringRun
    from benchmarks.services.scoring_runs import scoring_run_create

    call_command(
        "import_pack",
        "longproc-countdown",
        str(PACKS / "longproc-countdown.jsonl"),
        "--dataset",
        tag,
        "--generator",
        tag,
        stdout=io.StringIO(),
    )
    dataset, generator = Dataset.objects.get(name=tag), Generator.objects.get(name=tag)
    originals = list(Generation.objects.filter(generator=generator).select_related("procedure"))
    ids = [g.procedure.source_example_id for g in originals]
    for k in range(1, max(1, n // len(originals))):
        for g, ident in zip(originals, ids, strict=True):
            p = g.procedure
            p.pk, p.source_example_id = None, f"{ident}-{k}"
            p.save()
            g.pk, g.procedure = None, p
            g.save()
    total = Generation.objects.filter(generator=generator).count()

    def launch():
        return scoring_run_create(
            generator=generator, dataset=dataset, pack="longproc-countdown", chunk_size=50
        )

    def duplicates(run):
        scored = Generation.objects.filter(
            generator=generator, pack_scores__has_key="longproc-countdown"
        ).count()
        return total - scored

    return launch, ScoringRun, duplicates, 0, None  # a scoring run calls no model


def mining_case(server, n, concurrency, tag):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from mining.models import MiningBatch, MiningDocument
    from mining.services import batches as mining
    from tests.mining.factories import doc

    backends = {
        "default": {
            "backend": "openai",
            "base_url": server.base_url,
            "model": "m",
            "concurrency": concurrency,
            "timeout_s": 30,
        }
    }
    docs = n // 5  # five LLM stages a document

    def launch():
        upload = SimpleUploadedFile(
            f"{tag}.jsonl", "".join(json.dumps(doc(i)) + "\n" for i in range(docs)).encode()
        )
        return mining.batch_create(
            name=tag, upload=upload, backends=backends, options={"chunk_size": 32}
        )

    def duplicates(run):
        return MiningDocument.objects.filter(batch=run, outcome="pending").count()

    def endpoint(run):
        return backends["default"]

    # requests: counted per stage, not per doc
    return launch, MiningBatch, duplicates, None, endpoint


CASES = {
    "judge": judge_case,
    "generation": generation_case,
    "scoring": scoring_case,
    "mining": mining_case,
}
