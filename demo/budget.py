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

import json
import random

from django.db import transaction

from benchmarks.models import Generation
from benchmarks.services.imports import generations_import, procedures_import
from judging.models import Judge, Judgment, JudgmentSample
from judging.services.imports import judgments_import

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


def _lines(records) -> list[str]:
    return [json.dumps(r) for r in records]


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
            if unsure:  # the samples split: 2 or 3 of 5 agree with the verdict
                agreeing = rng.choice((2, 3))
            else:
                agreeing = N_SAMPLES
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
    procedures_import(
        dataset=DATASET,
        lines=_lines(
            {
                "source_example_id": _sid(i),
                "topic": "Home & Garden",
                "goal": f"Simulated procedure {i} (demo data: no real task).",
                "resources": [],
                "steps": [f"Simulated reference step {k} of procedure {i}." for k in (1, 2, 3)],
            }
            for i in range(N_PROCEDURES)
        ),
    )
    for generator in GENERATORS:
        generations_import(
            generator=generator,
            dataset=DATASET,
            lines=_lines(
                {
                    "source_example_id": _sid(i),
                    "predicted_steps": [
                        f"Simulated step {k} by {generator} for procedure {i}." for k in (1, 2, 3)
                    ],
                }
                for i in range(N_PROCEDURES)
            ),
        )
        records = []
        for i in range(N_PROCEDURES):
            verdict, _ = judged[generator, _sid(i)]
            failures = (
                [{"failure": "Simulated failure (demo data).", "L1_steps": [2], "L2_steps": [2]}]
                if verdict
                else []
            )
            records.append(
                {
                    "source_example_id": _sid(i),
                    "reasoning": "Simulated verdict (demo data): no model was called.",
                    "critical_failures": failures,
                    "has_failure": verdict,
                    "n_failures": len(failures),
                    "parse_failed": False,
                }
            )
        judgments_import(judge=JUDGE, generator=generator, dataset=DATASET, lines=_lines(records))
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
        Judgment.objects.filter(judge_key=judge.judge_id, content_hash__in=hashes.values())
        .values_list("content_hash", "id")
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
