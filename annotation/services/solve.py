"""Re-scoring solve answers that could not be scored at submission (``score_error``: the
pack was missing or refused the record), e.g. after the pack or its options were fixed. The
form type does the scoring (:meth:`annotation.form_types.solve.SolveForm.finalize`)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.form_types.base import FormConfigError
from annotation.models import Annotation, Study
from annotation.selectors.forms import item_view, study_form


@transaction.atomic
def solve_answers_rescore(*, study: Study) -> dict:
    """Score again every answer of a solve study stored with ``score_error`` (its label and
    ``has_failure`` updated, all or none). Returns ``{"rescored", "still_failing",
    "errors"}`` (``errors``: the first few reasons still given)."""
    if study.form_type != "solve":
        raise ValidationError({"form_type": "Only a solve study's answers are scored."})
    form = study_form(study=study)
    try:
        form.type.check_available(form.config)
    except FormConfigError as exc:
        raise ValidationError({"form_config": f"{exc.field}: {exc.message}"}) from exc
    rows = (
        Annotation.objects.select_for_update(of=("self",))
        .filter(item__study=study, label__has_key="score_error")
        .select_related("item__generation__procedure")
        .order_by("id")
    )
    rescored, errors = 0, []
    for annotation in rows:
        view = item_view(item=annotation.item, participant_id=annotation.participant_id, form=form)
        label = form.type.finalize(annotation.label, config=form.config, item=view)
        annotation.label = label
        annotation.has_failure = form.type.has_failure(label, config=form.config)
        annotation.save(update_fields=["label", "has_failure"])
        if "score_error" in label:
            errors.append(f"annotation {annotation.pk}: {label['score_error']}")
        else:
            rescored += 1
    return {"rescored": rescored, "still_failing": len(errors), "errors": errors[:5]}
