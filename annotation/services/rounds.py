"""A study's next round: the same settings and items as a new study, the previous round's
qualified participants listed to carry over and its rejected or screened-out ones to exclude
(on Prolific, through participant groups: an allowlist screener and the exclusion group)."""

from __future__ import annotations

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction

from annotation.models import Study, StudyItem, StudyPay, StudyRound
from annotation.selectors.rounds import round_split
from annotation.services.study import STUDY_SETTINGS, study_create
from core.bulk_load import analyze_tables
from core.roles import is_researcher

# settings a new round does not copy: it gets its own Prolific study, codes and status
NOT_COPIED = {"prolific_study_id", "completion_code", "screened_out_code", "status"}
# every field that defines an item, whatever the form type (not its live assignment count)
ITEM_FIELDS = (
    "generation_id",
    "generation_b_id",
    "kind",
    "position",
    "expected_has_failure",
    "expected_label",
    "context",
    "explanation",
    "attempt",
    "sample_rank",
)


@transaction.atomic
def round_create(*, study: Study, user, name: str = "") -> Study:
    if not is_researcher(user):
        raise PermissionDenied("Only researchers and admins may create a round.")
    previous_info = StudyRound.objects.filter(study=study).first()
    number = (previous_info.number if previous_info else 0) + 1
    name = (name or "").strip() or f"{study.name} · round {number + 1}"
    if len(name) > 200:
        raise ValidationError({"name": "At most 200 characters."})
    settings = {key: getattr(study, key) for key in STUDY_SETTINGS if key not in NOT_COPIED}
    new = study_create(name=name, generation_ids=[], created_by=user, **settings)
    StudyItem.objects.bulk_create(
        StudyItem(study=new, **{f: getattr(item, f) for f in ITEM_FIELDS})
        for item in study.items.order_by("kind", "position", "id")
    )
    analyze_tables(StudyItem)  # bulk-filled: plan its queries on its real size
    terms = StudyPay.objects.filter(study=study).first()
    if terms:
        terms.pk, terms.study = None, new
        terms.save()
    carried, excluded = round_split(study=study)
    StudyRound.objects.create(
        study=new,
        previous=study,
        number=number,
        carried_over=carried,
        excluded=excluded,
        created_by=user,
    )
    return new
