import pytest

from annotation.models import StudyItem
from benchmarks.models import Generator
from tests.annotation.factories import make_generations, make_study
from tests.judging.compare.support import judged_run, label, make_judge


@pytest.fixture
def scenario(db):
    """A study of 6 items labelled by 3 annotators, and judges A, B (and C, judging nothing).

    Human majority per item: T T T F F (tie); judge A: T T F F F F; judge B: T F F F T parse-failed.
    """
    study = make_study(n_items=6)
    items = list(
        StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR).order_by(
            "position", "id"
        )
    )
    human = [(1, 1, 0), (1, 1, 1), (1, 0, 1), (0, 0, 0), (0, 0, 1), (1, 0)]
    for item, labels in zip(items, human, strict=True):
        for k, v in enumerate(labels):
            label(item, f"P{k}", bool(v))
    gens = [i.generation for i in items]
    judge_a = make_judge("judge-a", model="gpt-5")
    judge_b = make_judge("judge-b", model="how2judge-8b", price_input_per_mtok="1")
    judge_c = make_judge("judge-c", model="unused")
    run_a = judged_run(
        judge_a, gens, [True, True, False, False, False, False], cost="0.25", seconds=30
    )
    run_b = judged_run(
        judge_b, gens, [True, False, False, False, True, None], cost="0.05", seconds=10
    )
    return {
        "study": study,
        "items": items,
        "gens": gens,
        "judges": (judge_a, judge_b, judge_c),
        "runs": (run_a, run_b),
    }


@pytest.fixture
def generators_scenario(db):
    """Three generators over the same 4 procedures, judged by two judges that rank them
    g1 > g2 > g3 (judge X) and g1 > g3 > g2 (judge Y)."""
    base = make_generations(4, prefix="rank")
    from benchmarks.models import Generation

    gens = {"g1": [], "g2": [], "g3": []}
    for name, out in gens.items():
        gen = Generator.objects.create(name=f"rank-{name}")
        for g in base:
            out.append(
                Generation.objects.create(
                    procedure=g.procedure,
                    generator=gen,
                    predicted_steps=[
                        f"{name} step {s} for {g.procedure.source_example_id}" for s in range(1, 5)
                    ],
                )
            )
    x = make_judge("judge-x", model="model-x")
    y = make_judge("judge-y", model="model-y")
    verdicts_x = {
        "g1": [False, False, False, True],
        "g2": [False, False, True, True],
        "g3": [True, True, True, False],
    }
    verdicts_y = {
        "g1": [False, False, False, False],
        "g2": [True, True, True, True],
        "g3": [False, True, True, True],
    }
    for name, generations in gens.items():
        judged_run(x, generations, verdicts_x[name])
        judged_run(y, generations, verdicts_y[name])
    return {"judges": (x, y), "gens": gens}
