"""The CustomPlans results page's human study in the demo (worked examples, marked as such):
a finished study with the CustomPlans form over every generation of ``customplans-results-demo``
(imported by :mod:`demo.pack_results` from ``demo/fixtures/pack_results/customplans-*.jsonl``:
Figure 13's nine example hints, each customized by two illustrative systems). Its three raters
are SIMULATED: their answers are the ``ratings`` written by hand in those files (annotator ids
``simulated-…``), so the page's numbers can be checked by hand
(docs/guides/packs/customplans.md). Idempotent: kept if it exists."""

from __future__ import annotations

from datetime import timedelta

from django.db import transaction
from django.utils import timezone

CUSTOMPLANS_DATASET = "customplans-results-demo"
CUSTOMPLANS_STUDY = "CustomPlans worked examples (SIMULATED raters)"
CUSTOMPLANS_DESCRIPTION = (
    "Worked examples for the CustomPlans results page: Figure 13's nine example hints, each "
    "customized by two illustrative systems. The three raters are SIMULATED: their answers were "
    "written by hand in demo/fixtures/pack_results. No person rated these items."
)
SECONDS_PER_ITEM = 60


def _label(rating: dict) -> dict:
    return {q: [rating[q]] if isinstance(rating[q], str) else list(rating[q]) for q in ("q1", "q2")}


@transaction.atomic
def customplans_study_ensure():
    """The study (``None`` while the dataset has no generation with ratings)."""
    from annotation.models import Annotation, Assignment, Study, StudyItem
    from annotation.services.study import study_create
    from benchmarks.models import Generation
    from demo.studies import simulated_participant

    study = Study.objects.filter(name=CUSTOMPLANS_STUDY).first()
    if study is not None:
        return study
    generations = [
        g
        for g in Generation.objects.filter(procedure__dataset__name=CUSTOMPLANS_DATASET)
        .select_related("procedure", "generator")
        .order_by("procedure__source_example_id", "generator__name")
        if g.payload.get("ratings")
    ]
    if not generations:
        return None
    n_raters = min(len(g.payload["ratings"]) for g in generations)
    study = study_create(
        name=CUSTOMPLANS_STUDY,
        generation_ids=[g.pk for g in generations],
        description=CUSTOMPLANS_DESCRIPTION,
        status=Study.Status.CLOSED,
        entry=Study.Entry.PROLIFIC,
        form_type="customplans",
        form_config={"show_original": True},
        overlap=n_raters,
        items_per_participant=len(generations),
        min_seconds_per_item=30,
        attention_rate=0.0,
    )
    items = {i.generation_id: i for i in StudyItem.objects.filter(study=study)}
    for g in generations:
        items[g.pk].context = {"hint": str(g.procedure.payload.get("hint", ""))}
        items[g.pk].save(update_fields=["context"])
    start = timezone.now() - timedelta(days=1)
    for a in range(n_raters):
        participant = simulated_participant(
            study, a, n_items=len(generations), start=start, seconds_per_item=SECONDS_PER_ITEM
        )
        for k, g in enumerate(generations):
            label = _label(g.payload["ratings"][a])
            label["comments"] = "Simulated rating (worked example)."
            served = start + timedelta(seconds=SECONDS_PER_ITEM * k + 5 * a)
            submitted = served + timedelta(seconds=SECONDS_PER_ITEM)
            assignment = Assignment.objects.create(
                participant=participant,
                item=items[g.pk],
                state=Assignment.State.SUBMITTED,
                served_at=served,
                last_seen_at=submitted,
                active_ms=SECONDS_PER_ITEM * 1000,
                submitted_at=submitted,
            )
            Annotation.objects.create(
                assignment=assignment,
                participant=participant,
                item=items[g.pk],
                has_failure=not (label["q1"] == ["yes"] and label["q2"] == ["yes"]),
                label=label,
                comments="Simulated rating (worked example).",
                wall_ms=SECONDS_PER_ITEM * 1000,
                active_ms=SECONDS_PER_ITEM * 1000,
                interface_checks={"simulated": True},
                submitted_at=submitted,
            )
    StudyItem.objects.filter(study=study).update(n_assigned=n_raters)
    return study
