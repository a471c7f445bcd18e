"""Writes of escalation: put the items a judge cannot decide first in a study's human queue.

The threshold is calibrated as the page shows it (:func:`validation.escalation.reads.
escalation_report`); the study switches to the fixed seeded order and its items below the
threshold (or with no judge confidence) come first, each group in its seeded order
(:func:`annotation.services.assignment.study_sample_ranks_refresh`, which keeps them first
when the seed changes or items are added). ``Study.design["escalation"]`` records the
threshold, its guarantee and the items put first."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from annotation.models import Study
from annotation.services.assignment import study_sample_ranks_refresh
from core.roles import is_admin
from judging.models import Judge
from validation.escalation.reads import DEFAULT_SEED, escalation_report
from validation.escalation.stats import DEFAULT_ALPHA, DEFAULT_DELTA, EscalationError

NOTHING_DECIDED = (
    "no threshold passed: the judge decides no item alone at these α and δ, so every item "
    "already goes to people and there is nothing to put first"
)


@transaction.atomic
def study_escalation_apply(
    *,
    study: Study,
    judge: Judge,
    user,
    alpha: float = DEFAULT_ALPHA,
    delta: float = DEFAULT_DELTA,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """Calibrate ``judge``'s threshold on ``study`` and put the items below it first in the
    study's order; returns what ``design["escalation"]`` now holds. Admins only; raises
    :class:`EscalationError` when nothing can be calibrated or the judge decides nothing."""
    if not is_admin(user):
        raise PermissionDenied("Only admins may change a study's order.")
    study = Study.objects.select_for_update().get(pk=study.pk)
    report = escalation_report(study=study, judge=judge, alpha=alpha, delta=delta, seed=seed)
    calibration = report["calibration"]
    if calibration["decides_nothing"]:
        raise EscalationError("items", NOTHING_DECIDED)
    first = sorted(item["generation_id"] for item in report["escalated"])
    escalation = {
        "judge": judge.name,
        "judge_id": judge.judge_id,
        "alpha": report["alpha"],
        "delta": report["delta"],
        "seed": report["seed"],
        "threshold": calibration["threshold"],
        "guaranteed_agreement": calibration["guaranteed_agreement"],
        "n_calibration": calibration["n_calibration"],
        "share_decided": calibration["share_decided"],
        "held_out_agreement": report["held_out"]["agreement_decided"],
        "n_first": len(first),
        "first_generation_ids": first,
        "applied_at": timezone.now().isoformat(),
        "applied_by": user.get_username(),
    }
    study.design = {**(study.design or {}), "escalation": escalation}
    study.sampling = Study.Sampling.SEEDED
    study.save(update_fields=["design", "sampling"])
    study_sample_ranks_refresh(study=study)
    return escalation
