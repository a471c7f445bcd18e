"""Reads of a study's target: whether recruitment on Prolific was paused because the target
was reached, and the logged call that paused it (or tried to)."""

from __future__ import annotations

from annotation.models import ProlificCall, Study
from annotation.selectors.prolific_study import prolific_state

A = ProlificCall.Action


def target_pause_call(study: Study) -> ProlificCall | None:
    """The call by which the app itself paused (or tried to pause) the study on Prolific when
    its interval reached the target: no user, made since it was reached; None without one."""
    if study.target_reached_at is None:
        return None
    return (
        ProlificCall.objects.filter(
            study=study,
            action=A.STUDY_PAUSE,
            user__isnull=True,
            created_at__gte=study.target_reached_at,
        )
        .order_by("-created_at", "-id")
        .first()
    )


def prolific_paused_by_target(study: Study) -> bool:
    """Recruitment on Prolific is paused, and it was the target that paused it: the last
    pause or resume that worked is the app's own pause since the target was reached."""
    state = prolific_state(study)
    if state is None or state.status != "PAUSED" or study.target_reached_at is None:
        return False
    last = (
        ProlificCall.objects.filter(study=study, action__in=(A.STUDY_PAUSE, A.STUDY_START), ok=True)
        .order_by("-created_at", "-id")
        .first()
    )
    pause = target_pause_call(study)
    return last is not None and pause is not None and last.pk == pause.pk
