"""The demo's "can the judge replace the annotators?" data: an alt-test result on the
judge validation page and a PPI-corrected ranking on the rankings page need a study whose
annotators labelled 30 items or more and a judge run much larger than the study. The paper's
demo examples are 11 generations, so this is a SIMULATED benchmark, marked as demo data
everywhere it shows: dataset ``how2bench-demo-simulated`` (goals and steps say "simulated"),
three generators ``sim-gen-*`` with different true failure rates, an imported judge
``demo-simulated-judge`` that misses some failures (so the study's labels move its How2Scores:
the PPI++ correction), and a finished study of three SIMULATED annotators
(:func:`demo.studies.simulated_study_ensure`) labelling 12 procedures × 3 generators.
Seeded: the same numbers on every load.
"""

from __future__ import annotations

import random
from datetime import timedelta

from django.db import transaction
from django.db.models import F

from annotation.models import Annotation, Assignment, Participant, Study
from benchmarks.models import Generation
from demo.simulated_benchmark import benchmark_import, verdicts_import
from demo.studies import simulated_study_ensure

DATASET = "how2bench-demo-simulated"
JUDGE = "demo-simulated-judge"
STUDY = "Demo study (simulated): can the judge replace the annotators?"
DESCRIPTION = (
    "SIMULATED demo data for the alt-test and the PPI-corrected ranking: three simulated "
    "annotators labelled 36 simulated generations (seed {seed}, Krippendorff's α {alpha:.3f}). "
    "No person labelled these items and no model wrote them."
)
FAILURE_RATES = {"sim-gen-a": 0.15, "sim-gen-b": 0.3, "sim-gen-c": 0.5}
N_PROCEDURES = 40
N_LABELLED = 12  # procedures whose generations the study labels
TOPICS = ("Art & Design", "Crime & Law")
JUDGE_MISSES = 0.3  # share of true failures the simulated judge does not flag
JUDGE_FALSE_ALARMS = 0.05
SEED = 27


def _sid(i: int) -> str:
    return f"simulated-{i:03d}"


@transaction.atomic
def replaceability_demo_ensure() -> Study:
    """Load the simulated benchmark, judge and study (kept if the study exists)."""
    study = Study.objects.filter(name=STUDY).first()
    if study is not None:
        return study
    rng = random.Random(SEED)
    sids = [_sid(i) for i in range(N_PROCEDURES)]
    benchmark_import(dataset=DATASET, sids=sids, topic_of=lambda i: TOPICS[i % len(TOPICS)],
                     generators=FAILURE_RATES)  # fmt: skip
    truth: dict[tuple[str, int], bool] = {}
    for generator, rate in FAILURE_RATES.items():
        verdicts = []
        for i in range(N_PROCEDURES):
            truth[generator, i] = fails = rng.random() < rate
            says = (rng.random() >= JUDGE_MISSES) if fails else (rng.random() < JUDGE_FALSE_ALARMS)
            verdicts.append((sids[i], says))
        verdicts_import(judge=JUDGE, dataset=DATASET, generator=generator, verdicts=verdicts)
    labelled = {}
    rows = Generation.objects.filter(procedure__dataset__name=DATASET).values_list(
        "pk", "generator__name", "procedure__source_example_id"
    )
    for pk, generator, sid in rows:
        i = int(sid.rsplit("-", 1)[1])
        if i < N_LABELLED:
            labelled[pk] = truth[generator, i]
    study = simulated_study_ensure(
        dataset=DATASET, judge=JUDGE, name=STUDY, description=DESCRIPTION, truth=labelled
    )
    _older(study)
    return study


def _older(study: Study, days: int = 2) -> None:
    """Move the simulated study's labels ``days`` back, so the paper's simulated study stays
    the one labelled most recently (the home page's Agree figure and the leaderboard open on
    it, :func:`annotation.selectors.dashboard.latest_labelled_study`)."""
    shift = timedelta(days=days)
    Annotation.objects.filter(item__study=study).update(submitted_at=F("submitted_at") - shift)
    Assignment.objects.filter(item__study=study).update(
        served_at=F("served_at") - shift,
        last_seen_at=F("last_seen_at") - shift,
        submitted_at=F("submitted_at") - shift,
    )
    Participant.objects.filter(study=study).update(
        consented_at=F("consented_at") - shift, finished_at=F("finished_at") - shift
    )
