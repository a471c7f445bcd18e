"""A critical-failure study whose judge has 5 seeded samples per item, built through the real
models: 100 labelled items and 12 not yet labelled. By item index ``i``:

- ``i % 10`` in 0–6: the samples are unanimous (confidence 1.0) and the judge agrees with people;
- 7 or 8: four of five samples agree (0.8); the judge is wrong on every ``i % 10 == 8``;
- 9: three of five (0.6), and the judge is wrong;
- the last 2 items were never judged (no confidence: they go to people).
"""

from __future__ import annotations

from annotation.models import StudyItem
from judging.models import JudgmentSample
from tests.annotation.factories import A_FAILURE, make_annotation, make_study
from tests.judging.factories import judged_run, make_judge

N_LABELLED, N_UNLABELLED, N_NOT_JUDGED = 100, 12, 2
K = 5


def confidence_of(i: int) -> float:
    return {7: 0.8, 8: 0.8, 9: 0.6}.get(i % 10, 1.0)


def judge_right(i: int) -> bool:
    return i % 10 not in (8, 9)


def human_says(i: int) -> bool:
    return i % 3 == 0


def build(*, name: str = "sampled-judge", **study_settings) -> dict:
    n = N_LABELLED + N_UNLABELLED
    study = make_study(n_items=n, **study_settings)
    items = list(
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR).order_by(
            "position", "id"
        )
    )
    for i, item in enumerate(items[:N_LABELLED]):
        says = human_says(i)
        make_annotation(
            item=item, annotator="P0", has_failure=says, failures=A_FAILURE if says else []
        )
    judge = make_judge(name=name, model=f"{name}-model")
    judged = items[: n - N_NOT_JUDGED]
    answers = [human_says(i) == judge_right(i) for i in range(len(judged))]
    run = judged_run(judge, [item.generation for item in judged], answers)
    judgments = {ri.generation_id: ri.judgment_id for ri in run.items.all()}
    samples = []
    for i, item in enumerate(judged):
        agreeing = round(confidence_of(i) * K)
        for s in range(K):
            vote = answers[i] if s < agreeing else not answers[i]
            samples.append(
                JudgmentSample(judgment_id=judgments[item.generation_id], seed=s, has_failure=vote)
            )
    JudgmentSample.objects.bulk_create(samples)
    return {"study": study, "items": items, "judge": judge}


def expected_escalated(items: list[StudyItem]) -> set[int]:
    """The generations below a threshold of 1.0: not unanimous, or never judged."""
    n_judged = len(items) - N_NOT_JUDGED
    return {
        item.generation_id
        for i, item in enumerate(items)
        if i >= n_judged or confidence_of(i) < 1.0
    }
