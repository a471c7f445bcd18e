"""A judge's scored generations to plan a study over: ``n`` generations of one dataset judged
by one app judge (a failure on every third), and the judge's k seeded samples on each where
asked (their share saying has_failure runs from sure to split)."""

from __future__ import annotations

from judging.models import JudgmentSample
from tests.judging.factories import judged_run, make_data, make_judge

K = 4


def scored(*, n: int = 40, judge: str = "my-judge", samples: bool = False,
           dataset: str = "bench", verdicts: list | None = None) -> dict:  # fmt: skip
    """``verdicts`` as :func:`tests.judging.factories.judged_run` takes them (True, False, None
    for a parse failure); by default a failure on every third generation."""
    data = make_data(n=n, dataset=dataset)
    app_judge = make_judge(name=judge)
    generations = data["generations"]
    run = judged_run(app_judge, generations, verdicts or [i % 3 == 0 for i in range(n)])
    if samples:
        add_samples(run)
    return {"judge": app_judge, "dataset": data["dataset"], "generations": generations,
            "run": run}  # fmt: skip


def votes_of(position: int) -> list[bool]:
    """The k votes of the judge on the item at ``position``: 0 to k saying has_failure."""
    yes = position % (K + 1)
    return [True] * yes + [False] * (K - yes)


def add_samples(run) -> None:
    items = run.items.select_related("judgment").order_by("generation_id")
    JudgmentSample.objects.bulk_create(
        JudgmentSample(judgment=item.judgment, run=run, seed=seed, has_failure=vote)
        for position, item in enumerate(items)
        for seed, vote in enumerate(votes_of(position))
    )
