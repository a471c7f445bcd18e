"""Builders for the benchmarks tests: a benchmark (datasets, generators, procedures and
generations) and generation runs on the local test server. Plain functions, options
keyword-only, as in every tests/*/factories.py."""

from __future__ import annotations

from benchmarks.models import Dataset, Generation, GenerationRun, Generator, Procedure, Topic
from benchmarks.services.generation_runs import generation_run_create

# a generation run's backend options when the tests count requests: a short timeout, quick retries
FAST = {"timeout_s": 5, "max_retries": 2, "backoff_base_s": 0.01, "backoff_max_s": 0.05}


def make_benchmark(*, n_procedures: int = 6, n_generators: int = 3) -> dict:
    """Two datasets (``bench@v1`` with procedures and generations, ``bench@v2`` with one procedure)."""
    topics = list(Topic.objects.order_by("position")[:3])
    assert len(topics) == 3, "topics are seeded by a migration"
    ds = Dataset.objects.create(name="bench", version="v1", description="main")
    ds2 = Dataset.objects.create(name="bench", version="v2")
    gens = [
        Generator.objects.create(
            name=f"gen-{i}", model=f"org/model-{i}", backend="vllm" if i else "openai"
        )
        for i in range(n_generators)
    ]
    procs = Procedure.objects.bulk_create(
        Procedure(
            dataset=ds,
            source_example_id=f"ex-{i:04d}",
            topic=topics[i % 3],
            goal=("Bake sourdough bread" if i == 0 else f"Do task number {i}"),
            resources=["flour", "water"],
            steps=[f"step {j}" for j in range(1, 4 + i % 3)],
            source_text="long source document " * 20,
        )
        for i in range(n_procedures)
    )
    Generation.objects.bulk_create(
        Generation(
            procedure=p,
            generator=g,
            predicted_steps=[f"{g.name} says {j}" for j in range(3)],
            model_completion="raw output",
            token_count=10 + i,
            scores={"step_count_mismatch": i % 2 == 1, "duplicate_steps": 0},
        )
        for i, p in enumerate(procs)
        for g in gens
    )
    other = Procedure.objects.create(
        dataset=ds2, source_example_id="ex-0000", goal="Same id, other version", steps=["only step"]
    )
    Generation.objects.create(procedure=other, generator=gens[0], predicted_steps=["x"])
    return {
        "dataset": ds,
        "dataset2": ds2,
        "topics": topics,
        "generators": gens,
        "procedures": procs,
        "other": other,
    }


def make_generation_run(llm_server, dataset, generator, **kw) -> GenerationRun:
    """A queued generation run of ``generator`` over ``dataset`` on the local test server: chunks
    of two, four requests at a time, failing fast (``FAST``); ``kw`` override."""
    defaults = {
        "model": "test-model",
        "base_url": llm_server.base_url,
        "backend_options": FAST,
        "chunk_size": 2,
        "concurrency": 4,
    }
    defaults.update(kw)
    return generation_run_create(generator=generator, dataset=dataset, **defaults)
