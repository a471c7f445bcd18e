"""The demo's finished study: every demo generation labelled by three simulated annotators
(:mod:`demo.simulated`), so the agreement report, its plots, the adjudication queue, the exports
and the judge-versus-human comparisons show real numbers from the first minute.

The labels are written as a finished study would leave them (participants done, assignments
submitted, one annotation each), drawn, seeded, around the paper's published verdicts.
The study's name, description, annotator ids (``simulated-1`` …) and every label's comment say
that they are simulated.
"""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from annotation.models import Annotation, Assignment, Participant, Study, StudyItem
from annotation.services.study import study_create
from benchmarks.models import Generation
from demo.simulated import SIMULATED_PREFIX, draw_labels
from judging.models import Judge
from judging.selectors.verdicts import verdicts_for_generations

SIMULATED_STUDY = "Demo study (finished): simulated annotators"
SIMULATED_DESCRIPTION = (
    "A finished study for the demo. Its three annotators are SIMULATED: their labels were "
    "drawn at random (seed {seed}) around the paper's published verdicts, to give an "
    "agreement near the paper's α = 0.593 (drawn: {alpha:.3f}). No person labelled these items."
)
N_ANNOTATORS = 3
SECONDS_PER_ITEM = 95


def _truth(generations: list[Generation], judge_name: str) -> list[bool]:
    """The published verdict of each generation (no failure where none was published)."""
    judge = Judge.objects.filter(name=judge_name).first()
    verdicts = {}
    if judge is not None:
        verdicts = verdicts_for_generations(
            judges=[judge], generation_ids=[g.pk for g in generations]
        )
        verdicts = verdicts.get(judge.pk, {})
    return [bool(verdicts.get(g.pk)) for g in generations]


@transaction.atomic
def simulated_participant(
    study: Study, index: int, *, n_items: int, start, seconds_per_item: int
) -> Participant:
    """Simulated annotator ``index`` (from 0) of a demo study, done with its ``n_items`` items
    that began at ``start``, ``seconds_per_item`` apart."""
    return Participant.objects.create(
        study=study,
        prolific_pid=f"{SIMULATED_PREFIX}{index + 1}",
        prolific_session_id=f"{SIMULATED_PREFIX}session-{index + 1}",
        stage=Participant.Stage.DONE,
        consented_at=start,
        n_done=n_items,
        finished_at=start + timedelta(seconds=seconds_per_item * (n_items + 1)),
    )


def simulated_study_ensure(
    *,
    dataset: str,
    judge: str,
    name: str = SIMULATED_STUDY,
    description: str = SIMULATED_DESCRIPTION,
    truth: dict[int, bool] | None = None,
) -> Study:
    """Create the finished, simulated study over every generation of ``dataset`` (kept if it
    exists). ``truth`` (``{generation id: has_failure}``): the verdicts to draw the labels
    around, and the only generations the study takes, instead of the judge's."""
    study = Study.objects.filter(name=name).first()
    if study is not None:
        return study
    generations = list(
        Generation.objects.filter(procedure__dataset__name=dataset)
        .select_related("procedure", "generator")
        .order_by("procedure__source_example_id", "generator__name")
    )
    if truth is not None:
        generations = [g for g in generations if g.pk in truth]
    drawn = draw_labels(
        _truth(generations, judge) if truth is None else [truth[g.pk] for g in generations],
        [(len(g.procedure.steps), len(g.predicted_steps)) for g in generations],
        n_annotators=N_ANNOTATORS,
    )
    study = study_create(
        name=name,
        generation_ids=[g.pk for g in generations],
        description=description.format(seed=drawn.seed, alpha=drawn.alpha),
        status=Study.Status.CLOSED,
        entry=Study.Entry.PROLIFIC,
        overlap=N_ANNOTATORS,
        items_per_participant=len(generations),
        min_seconds_per_item=90,
        attention_rate=0.0,
    )
    simulated_labels_write(study, generations, drawn)
    return study


def simulated_labels_write(
    study: Study, generations: list[Generation], drawn, *, per_participant: int | None = None
) -> None:
    """Write ``drawn`` (:func:`demo.simulated.draw_labels` over ``generations``, in order) as a
    finished study's rows: each simulated annotator's labels split among done participants of
    ``per_participant`` items (all of them by default), each item submitted
    ``SECONDS_PER_ITEM`` apart a day ago."""
    items = {i.generation_id: i for i in StudyItem.objects.filter(study=study)}
    start = timezone.now() - timedelta(days=1)
    size = per_participant or len(generations)
    chunks = [
        list(range(i, min(i + size, len(generations)))) for i in range(0, len(generations), size)
    ]
    for a in range(N_ANNOTATORS):
        for c, chunk in enumerate(chunks):
            begun = start + timedelta(seconds=SECONDS_PER_ITEM * chunk[0])
            participant = simulated_participant(
                study,
                a * len(chunks) + c,
                n_items=len(chunk),
                start=begun,
                seconds_per_item=SECONDS_PER_ITEM,
            )
            for k in chunk:
                generation = generations[k]
                served = begun + timedelta(seconds=SECONDS_PER_ITEM * (k - chunk[0]) + 7 * a)
                submitted = served + timedelta(seconds=SECONDS_PER_ITEM)
                assignment = Assignment.objects.create(
                    participant=participant,
                    item=items[generation.pk],
                    state=Assignment.State.SUBMITTED,
                    served_at=served,
                    last_seen_at=submitted,
                    active_ms=SECONDS_PER_ITEM * 1000,
                    submitted_at=submitted,
                )
                has_failure = drawn.labels[k][a]
                l1, l2 = drawn.steps[k][a]
                Annotation.objects.create(
                    assignment=assignment,
                    participant=participant,
                    item=items[generation.pk],
                    has_failure=has_failure,
                    failures=(
                        [
                            {
                                "description": "Simulated failure label.",
                                "l1_steps": [l1],
                                "l2_steps": [l2],
                            }
                        ]
                        if has_failure
                        else []
                    ),
                    comments="Simulated label (demo).",
                    wall_ms=SECONDS_PER_ITEM * 1000,
                    active_ms=SECONDS_PER_ITEM * 1000,
                    interface_checks={
                        "goal_ack": True,
                        "steps_read": len(generation.predicted_steps),
                        "n_steps": len(generation.predicted_steps),
                        "simulated": True,
                    },
                    submitted_at=submitted,
                )
    StudyItem.objects.filter(study=study).update(n_assigned=N_ANNOTATORS)
