"""Re-scoring solve answers that could not be scored at submission (``score_error``: the
pack was missing or refused the record), e.g. after the pack or its options were fixed. The
form type does the scoring (:meth:`annotation.form_types.solve.SolveForm.finalize`)."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Greatest

from annotation.form_types.base import FormConfigError
from annotation.models import Annotation, AttentionCheckResult, Participant, Study
from annotation.selectors.forms import item_view, known_answer_result, study_form

CheckKind = AttentionCheckResult.Kind


@transaction.atomic
def solve_answers_rescore(*, study: Study) -> dict:
    """Score again every answer of a solve study stored with ``score_error`` (its label and
    ``has_failure`` updated, all or none), and judge again the attention and qualification
    results those answers gave (an answer that could not be scored failed its known item):
    a planted check that now passes no longer counts towards the participant's attention
    failures. A participant already warned, screened out or past the qualification stays so
    (``recheck`` names them for the researcher to review). Returns ``{"rescored",
    "still_failing", "errors", "checks_changed", "recheck"}`` (``errors``: the first few
    reasons still given; ``recheck``: the ids of the participants whose results changed)."""
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
    rescored, errors, changed, recheck = 0, [], 0, set()
    for annotation in rows:
        view = item_view(item=annotation.item, participant_id=annotation.participant_id, form=form)
        label = form.type.finalize(annotation.label, config=form.config, item=view)
        annotation.label = label
        annotation.has_failure = form.type.has_failure(label, config=form.config)
        annotation.save(update_fields=["label", "has_failure"])
        for check in _checks_rejudged(study, annotation):
            changed += 1
            recheck.add(check.participant_id)
        if "score_error" in label:
            errors.append(f"annotation {annotation.pk}: {label['score_error']}")
        else:
            rescored += 1
    return {
        "rescored": rescored,
        "still_failing": len(errors),
        "errors": errors[:5],
        "checks_changed": changed,
        "recheck": sorted(recheck),
    }


def _checks_rejudged(study: Study, annotation: Annotation) -> list[AttentionCheckResult]:
    """The known-answer results of ``annotation``'s assignment judged again on its new label;
    those that changed (saved, the attention failure count moved with a planted one)."""
    changed = []
    checks = list(
        AttentionCheckResult.objects.select_for_update().filter(
            assignment_id=annotation.assignment_id,
            kind__in=[CheckKind.PLANTED, CheckKind.QUALIFICATION],
        )
    )
    if not checks:
        return changed
    passed, detail = known_answer_result(study=study, item=annotation.item, annotation=annotation)
    for check in checks:
        if (passed, detail) == (check.passed, check.detail):
            continue
        if check.kind == CheckKind.PLANTED and passed != check.passed:
            step = -1 if passed else 1
            Participant.objects.filter(pk=check.participant_id).update(
                attention_failures=Greatest(F("attention_failures") + step, 0)
            )
        check.passed, check.detail = passed, detail
        check.save(update_fields=["passed", "detail"])
        changed.append(check)
    return changed
