"""The demo's "spend the human budget where it counts" data, SIMULATED: a judged population whose
judge was sampled five times per item, so the planner, a study drawn where the judge is unsure,
its width-based stop and an escalation threshold all show real numbers.

Dataset ``how2bench-demo-budget`` (goals and steps say "simulated"), two generators
``sim-budget-a`` and ``sim-budget-b``, 250 procedures each; an imported judge
``demo-budget-judge`` whose five seeded samples per item split where it is unsure (a fifth of
the items) and agree elsewhere; its verdict is wrong on ~35% of the unsure items and ~2% of the
others. The true labels are kept in this module's seed: the simulated annotators label around
them. Seeded: the same numbers on every load.
"""

from __future__ import annotations

import random
from decimal import Decimal

from django.db import transaction

from benchmarks.models import Generation
from demo.simulated_benchmark import benchmark_import, verdicts_import
from judging.models import Judge, Judgment, JudgmentSample

DATASET = "how2bench-demo-budget"
JUDGE = "demo-budget-judge"
GENERATORS = {"sim-budget-a": 0.2, "sim-budget-b": 0.35}  # true failure rates
N_PROCEDURES = 250
N_SAMPLES = 5
UNSURE_SHARE = 0.2
WRONG_WHEN_UNSURE, WRONG_WHEN_SURE = 0.35, 0.02
SEED = 41


def _sid(i: int) -> str:
    return f"budget-{i:03d}"


def population_truth() -> dict[int, bool]:
    """``{generation id: the simulated true has_failure}`` of the budget population."""
    truth, _ = _simulate()
    rows = Generation.objects.filter(procedure__dataset__name=DATASET).values_list(
        "pk", "generator__name", "procedure__source_example_id"
    )
    return {pk: truth[generator, sid] for pk, generator, sid in rows}


def _simulate():
    """The seeded truth, the judge's verdicts and its sample votes, by (generator, sid)."""
    rng = random.Random(SEED)
    truth, judged = {}, {}
    for generator, rate in GENERATORS.items():
        for i in range(N_PROCEDURES):
            sid = _sid(i)
            fails = rng.random() < rate
            unsure = rng.random() < UNSURE_SHARE
            wrong = rng.random() < (WRONG_WHEN_UNSURE if unsure else WRONG_WHEN_SURE)
            verdict = fails != wrong
            # unsure: the samples split, 2 or 3 of 5 agree with the verdict; sure: all 5 agree
            agreeing = rng.choice((2, 3)) if unsure else N_SAMPLES
            votes = [verdict] * agreeing + [not verdict] * (N_SAMPLES - agreeing)
            rng.shuffle(votes)
            truth[generator, sid] = fails
            judged[generator, sid] = (verdict, votes)
    return truth, judged


@transaction.atomic
def budget_population_ensure() -> Judge:
    """Load the simulated population, its judge's verdicts and five samples per judgment (kept
    if the judge exists)."""
    existing = Judge.objects.filter(name=JUDGE).first()
    if existing is not None:
        return existing
    _, judged = _simulate()
    sids = [_sid(i) for i in range(N_PROCEDURES)]
    benchmark_import(dataset=DATASET, sids=sids, topic_of=lambda i: "Food & Dining",
                     generators=GENERATORS)  # fmt: skip
    for generator in GENERATORS:
        verdicts = [(sid, judged[generator, sid][0]) for sid in sids]
        verdicts_import(judge=JUDGE, dataset=DATASET, generator=generator, verdicts=verdicts)
    judge = Judge.objects.get(name=JUDGE)
    _samples_add(judge, judged)
    return judge


def _samples_add(judge: Judge, judged) -> None:
    """Five seeded samples per judgment, as a run with k = 5 would store them."""
    from judging.selectors.verdicts import generation_content_hashes

    rows = list(
        Generation.objects.filter(procedure__dataset__name=DATASET).values_list(
            "pk", "generator__name", "procedure__source_example_id"
        )
    )
    hashes = generation_content_hashes([pk for pk, _, _ in rows])
    judgment_of = dict(
        Judgment.objects.filter(
            judge_key=judge.judge_id, content_hash__in=hashes.values()
        ).values_list("content_hash", "id")
    )
    samples = []
    for pk, generator, sid in rows:
        _, votes = judged[generator, sid]
        for seed, vote in enumerate(votes):
            samples.append(
                JudgmentSample(
                    judgment_id=judgment_of[hashes[pk]],
                    seed=seed,
                    has_failure=vote,
                    n_failures=int(vote),
                    reasoning="Simulated sample (demo data): no model was called.",
                )
            )
    JudgmentSample.objects.bulk_create(samples, batch_size=1000)


PLANNED_STUDY = "Demo study (simulated): labels where the judge is unsure"
PLANNED_DESCRIPTION = (
    "SIMULATED demo data: a study made from a plan, its items drawn where {judge}'s five samples "
    "disagree (active inference), labelled by three simulated annotators around the simulated "
    "truth; it stopped once its interval reached the target. No person labelled these items."
)
PLAN_TARGET = 0.05  # ± 5 points at 95%: what the demo plan asks for
COST_HUMAN, COST_JUDGE = 0.90, 0.01
PER_PARTICIPANT = 20


def plan_path(label_set) -> str:
    """The plan page of ``label_set`` with the demo plan's inputs filled in."""
    from urllib.parse import urlencode

    from django.urls import reverse

    from validation.label_sets.adapters import judge_names
    from validation.label_sets.reads import parsed

    query = {
        "judge": judge_names(parsed(label_set))[0],
        "cost_human": f"{COST_HUMAN:.2f}",
        "cost_judge": f"{COST_JUDGE:.2f}",
        "target": "half_width",
        "value": f"{100 * PLAN_TARGET:g}",
        "currency": "GBP",
    }
    return f"{reverse('validation:label_set_plan', args=[label_set.pk])}?{urlencode(query)}"


def _plan(label_set) -> dict:
    """The demo plan: the demo label set as the pilot, ± 5 points asked."""
    from validation.label_sets.adapters import judge_names
    from validation.label_sets.reads import parsed
    from validation.ppi_plan.reads import label_set_plan
    from validation.ppi_plan.stats import HALF_WIDTH

    judge = judge_names(parsed(label_set))[0]
    plan = label_set_plan(label_set, judge=judge, cost_human=COST_HUMAN, cost_judge=COST_JUDGE,
                          target=HALF_WIDTH, value=PLAN_TARGET)  # fmt: skip
    return plan


def planned_study_ensure(*, label_set, admin):
    """The study the demo plan asks for, drawn where the budget judge is unsure, labelled by
    simulated annotators and checked against its target (stopped when reached); kept if it
    exists. Its escalation page calibrates the judge's threshold on its labels."""
    from annotation.models import Study, StudyItem
    from demo.simulated import draw_labels
    from demo.studies import simulated_labels_write
    from validation.ppi_plan.services import UNCERTAINTY, study_from_plan
    from validation.stopping.services import study_check_target

    existing = Study.objects.filter(name=PLANNED_STUDY).first()
    if existing is not None:
        return existing
    judge = budget_population_ensure()
    plan = _plan(label_set)
    study = study_from_plan(
        user=admin, name=PLANNED_STUDY, judge=judge, dataset=None,
        n=min(plan["n"], 2 * N_PROCEDURES * 2 // 5), overlap=3,
        items_per_participant=PER_PARTICIPANT, reward=Decimal("3.00"), currency="GBP",
        sampling=UNCERTAINTY, seed=SEED, target_half_width=PLAN_TARGET, plan=plan,
        label_set=label_set,
    )  # fmt: skip
    truth = population_truth()
    items = StudyItem.objects.filter(study=study, kind=StudyItem.Kind.REGULAR)
    generations = [
        i.generation for i in items.select_related("generation__procedure").order_by("id")
    ]
    drawn = draw_labels(
        [truth[g.pk] for g in generations],
        [(len(g.procedure.steps), len(g.predicted_steps)) for g in generations],
    )
    Study.objects.filter(pk=study.pk).update(description=PLANNED_DESCRIPTION.format(judge=JUDGE))
    simulated_labels_write(study, generations, drawn, per_participant=PER_PARTICIPANT)
    study.refresh_from_db()
    study_check_target(study=study)
    return study
