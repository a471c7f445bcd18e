"""A judge run's launch preparation (select, hash, insert its items) keeps an id and a content
hash an item, never the items' texts: the memory it holds at its peak grows by well under a
kilobyte an item from a run to a run four times longer (the texts are ~4 KB an item)."""

from __future__ import annotations

import tracemalloc

import pytest

from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic
from judging.models import JudgeRun, JudgeRunItem
from judging.services import runs as services
from tests.judging.factories import make_judge

pytestmark = pytest.mark.django_db

STEP = "Loosen the four bolts of the cover a quarter turn each, in a cross pattern, " * 2
PER_ITEM_BOUND = 1024  # bytes an item more at the peak; the texts alone are ~4 KB an item


def _generations(name: str, n: int) -> int:
    """``n`` generations of one generator, ten reference and ten candidate steps each (~4 KB)."""
    topic = Topic.objects.first() or Topic.objects.create(slug="t", name="T")
    ds = Dataset.objects.create(name=name)
    procs = Procedure.objects.bulk_create(
        Procedure(
            dataset=ds,
            source_example_id=f"{name}-{i}",
            topic=topic,
            goal=f"Goal {i}",
            resources=[],
            steps=[f"{i}.{k} {STEP}" for k in range(10)],
        )
        for i in range(n)
    )
    gen = Generator.objects.create(name=name, model="m")
    Generation.objects.bulk_create(
        Generation(
            procedure=p,
            generator=gen,
            token_count=1,
            predicted_steps=[f"{k} {STEP}" for k in range(10)],
        )
        for p in procs
    )
    return gen.pk


def _prepare_peak(judge, generator_id: int) -> tuple[int, JudgeRun]:
    """The traced memory's peak above its start while the run's items are prepared."""
    run = JudgeRun.objects.create(judge=judge, selection={"generators": [generator_id]})
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        services.judge_run_prepare(run=run)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return peak - start, run


def test_launch_preparation_holds_no_texts_of_its_items(monkeypatch):
    monkeypatch.setattr(services, "SELECTION_PAGE", 100)
    judge = make_judge(name="mem-judge")
    small, large = _generations("small", 200), _generations("large", 800)
    _prepare_peak(judge, _generations("warm", 100))  # queries compiled, caches filled
    peak_small, run_small = _prepare_peak(judge, small)
    peak_large, run_large = _prepare_peak(judge, large)
    assert JudgeRunItem.objects.filter(run=run_small).count() == run_small.n_total == 200
    assert JudgeRunItem.objects.filter(run=run_large).count() == run_large.n_total == 800
    assert run_large.estimated_cost is not None
    per_item = (peak_large - peak_small) / 600
    assert per_item < PER_ITEM_BOUND, f"{per_item:.0f} B an item more at the peak"
