"""Scenarios of the alt-test and PPI tests (PostgreSQL, pages, chromium): a critical-failure
study of 34 items labelled by 3 annotators (and a fourth on 5 items) with a judge's verdicts,
and a 2-generator benchmark judged in full with a 3-annotator study on 12 procedures."""

from __future__ import annotations

from annotation.services.study import study_create
from tests.annotation.factories import make_annotation, make_generations, regular_items
from tests.judging.factories import judged_run, make_data, make_judge

N = 34  # items 0..32 by P0-P2; item 33 by P0 only; items 0..4 also by P3


def _truth(i: int) -> bool:
    return i % 3 == 0


def _label(i: int, k: int) -> bool:
    """Annotator k flips the truth on a few items of their own."""
    return _truth(i) != ((i + 2 * k) % 7 == 0)


def alt_test_scenario() -> dict:
    gens = make_generations(N)
    study = study_create(
        name="alt", generation_ids=[g.pk for g in gens], min_seconds_per_item=0, overlap=4
    )
    items = regular_items(study)
    humans: dict[str, dict] = {"P0": {}, "P1": {}, "P2": {}, "P3": {}}
    for i, item in enumerate(items):
        for k in range(4):
            if (k == 3 and i >= 5) or (k in (1, 2) and i == N - 1):
                continue
            v = _label(i, k)
            make_annotation(item=item, annotator=f"P{k}", has_failure=v)
            humans[f"P{k}"][item.pk] = v
    verdicts = [_truth(i) != (i % 5 == 1) for i in range(N)]
    verdicts[5] = None  # parse failed: no judge label
    judge = make_judge(name="alt-judge")
    judged_run(judge, [it.generation for it in items], verdicts)
    expected_judge = {it.pk: v for it, v in zip(items, verdicts, strict=True) if v is not None}
    return {"study": study, "judge": judge, "items": items, "humans": humans,
            "judge_labels": expected_judge}  # fmt: skip


def ppi_scenario() -> dict:
    data = make_data(n=40, generators=("gen-a", "gen-b"))
    gens = data["generations"]
    judge = make_judge(name="ppi-judge")
    verdicts = [(g.pk * 7) % 5 < 2 for g in gens]
    judged_run(judge, gens, verdicts)
    verdict = {g.pk: v for g, v in zip(gens, verdicts, strict=True)}
    labelled = [g for g in gens if g.procedure.source_example_id < "ex-00012"]  # 12 per generator
    study = study_create(name="ppi study", generation_ids=[g.pk for g in labelled],
                         min_seconds_per_item=0, overlap=3)  # fmt: skip
    majority = {}
    for item in regular_items(study):
        g = item.generation_id
        votes = [verdict[g] if k < 2 or g % 4 else not verdict[g] for k in range(3)]
        if g % 6 == 0:
            votes = [not verdict[g]] * 3  # the judge is wrong here
        for k, v in enumerate(votes):
            make_annotation(item=item, annotator=f"P{k}", has_failure=v)
        majority[g] = sum(votes) >= 2
    return {"gens": gens, "judge": judge, "study": study, "verdict": verdict,
            "majority": majority}  # fmt: skip
