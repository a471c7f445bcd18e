"""What the target panel of a study's page shows: the corrected How2Score's interval now, the
target, and once reached the note saying when and with what (one click to resume, for admins).
The panel asks again while labels may arrive (:func:`core.polling.next_poll`)."""

from __future__ import annotations

from typing import Any

from annotation.models import Study
from core.polling import next_poll
from core.roles import is_admin
from validation.active.reads import study_interval
from validation.active.stats import MIN_LABELLED_TO_STOP, half_width
from validation.stopping.reads import prolific_paused_by_target, target_pause_call
from validation.stopping.words import points, stopped_note


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _interval(study: Study) -> dict[str, Any]:
    result = study_interval(study)
    if result.get("undefined") or result.get("ci") is None:
        return {"undefined": result.get("undefined") or "nothing to estimate yet"}
    low, high = result["ci"]
    width = half_width(result["ci"])
    target = study.target_half_width
    return {
        "how2score": _pct(result.get("how2score")),
        "ci": f"{_pct(max(0.0, low))} – {_pct(min(1.0, high))}",
        "half_width": points(width),
        "n_labels": result.get("n_labels"),
        "method": result.get("method", ""),
        # how far along: the target's width over the width now (1 = reached)
        "percent": round(100 * min(1.0, target / width)) if target and width > 0 else 100,
    }


def target_context(*, study: Study, user, waited: str | None = None, seen: str | None = None):
    """The panel's context; ``waited`` and ``seen``: what the last poll passed back."""
    interval = _interval(study)
    pause = target_pause_call(study)
    mark = f"{study.status}:{interval.get('n_labels')}:{study.target_reached_at is not None}"
    return {
        "study": study,
        "target": points(study.target_half_width),
        "min_labels": MIN_LABELLED_TO_STOP,
        "interval": interval,
        "stopped": stopped_note(at=study.target_reached_at, interval=study.target_reached_interval)
        if study.target_reached_at
        else "",
        "pause_call": pause,
        "prolific_paused": prolific_paused_by_target(study),
        "can_resume": study.stopped_by_target and is_admin(user),
        "poll": next_poll(waited=waited, seen=seen, mark=mark)
        if study.status == Study.Status.OPEN
        else None,
    }
