"""Writes of a study's target: the check that stops the study once its interval is narrow
enough (run by the app after labels arrive) and the resume (admins).

The rule has one home, :func:`study_check_target`: a study that watches its target
(``Study.watching_target``: it has one and has not reached it; a study resumed after reaching
it is never stopped by it again) is stopped when the half-width of its corrected How2Score's
interval is at most the target, with at least ``MIN_LABELLED_TO_STOP`` items labelled
(:func:`validation.active.stats.target_reached`: the width and the count, never the
estimate)."""

from __future__ import annotations

import logging

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from annotation.models import Study
from annotation.prolific.client import ProlificError
from annotation.selectors.prolific_study import prolific_state
from annotation.services.prolific_study import (
    prolific_study_transition,
    prolific_study_transition_by_app,
)
from core.roles import is_admin
from validation.active.reads import study_interval
from validation.active.stats import MIN_LABELLED_TO_STOP, half_width, target_reached
from validation.stopping.reads import prolific_paused_by_target
from validation.stopping.words import points, reached_reason

log = logging.getLogger(__name__)


def _stop(study: Study, interval: dict) -> bool:
    """In one transaction: the target marked reached, with the interval that reached it, and
    an open study paused (no new items; whoever holds an item finishes it). False when another
    check got there first."""
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if not locked.watching_target:
            return False
        locked.target_reached_at = timezone.now()
        locked.target_reached_interval = {
            "how2score": interval.get("how2score"),
            "ci": list(interval["ci"]),
            "half_width": half_width(interval["ci"]),
            "target": locked.target_half_width,
            "n_labels": interval.get("n_labels"),
            "method": interval.get("method", ""),
        }
        fields = ["target_reached_at", "target_reached_interval"]
        if locked.status == Study.Status.OPEN:
            locked.status = Study.Status.PAUSED
            fields.append("status")
        locked.save(update_fields=fields)
    study.refresh_from_db()
    return True


def study_check_target(*, study: Study, client=None) -> str:
    """Check ``study``'s interval against its target; stop it when reached. Returns what
    happened, in words (the task's result in the worker's log).

    Stopping: the study paused and the target's moment and interval kept (:func:`_stop`), then,
    for a study live on Prolific (``ACTIVE``), recruitment paused through the Prolific
    operation, by the app (a logged call without a user, its summary saying why). A refused
    Prolific call is logged, and the study stays stopped here."""
    if not study.watching_target:
        return "no target to watch"
    interval = study_interval(study)
    if interval.get("undefined") or interval.get("ci") is None:
        return f"no interval yet: {interval.get('undefined') or 'nothing to estimate'}"
    target, n = study.target_half_width, interval.get("n_labels") or 0
    if not target_reached(interval["ci"], target, n_labelled=n):
        return (
            f"not reached: {points(half_width(interval['ci']))} with {n} labels (the target: "
            f"{points(target)} with at least {MIN_LABELLED_TO_STOP})"
        )
    if not _stop(study, interval):
        return "already reached"
    outcome = "reached: study paused"
    state = prolific_state(study)
    if state is not None and state.status == "ACTIVE":
        try:
            prolific_study_transition_by_app(
                study=study, action="PAUSE", why=reached_reason(study), client=client
            )
        except (ProlificError, ValidationError) as exc:  # logged as a failed call
            log.warning("Pausing study %s on Prolific failed: %s", study.pk, exc)
            return f"{outcome}; Prolific refused the pause: {exc}"
        outcome += ", recruitment paused on Prolific"
    return outcome


def study_target_resume(*, study: Study, user, client=None) -> Study:
    """Resume a study its target stopped (admins): recruitment on Prolific started again when
    the target paused it (first: a refusal there changes nothing here), then the study open
    again, with the moment it was resumed; its target never stops it again."""
    if not is_admin(user):
        raise PermissionDenied("Only admins resume a study (recruiting spends money).")
    if not study.stopped_by_target:
        raise ValidationError({"resume": "This study was not stopped by its target interval."})
    if prolific_paused_by_target(study):
        prolific_study_transition(
            study=study,
            user=user,
            action="START",
            note="resumed after the target interval was reached",
            client=client,
        )
    with transaction.atomic():
        locked = Study.objects.select_for_update().get(pk=study.pk)
        if not locked.stopped_by_target:
            raise ValidationError({"resume": "This study was resumed meanwhile."})
        locked.status = Study.Status.OPEN
        locked.target_resumed_at = timezone.now()
        locked.save(update_fields=["status", "target_resumed_at"])
    study.refresh_from_db()
    return study
