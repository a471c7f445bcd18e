"""After a label arrives: the check of the study's target, enqueued at most once per study
every ``STUDY_TARGET_CHECK_SECONDS`` (5).

The first label of a quiet study claims the study's slot in the cache for that long and
enqueues the check to run just after the slot ends (the slot plus a second); labels arriving
meanwhile find the slot taken and enqueue nothing — the check, running later, reads them all.
So 500 people saving within the window cost one computation, and the last label before the
target is reached is never left unchecked. The web process imports no statistics for this:
the task does, in the worker. Connected in :meth:`validation.apps.ValidationConfig.ready`."""

from __future__ import annotations

from django.conf import settings
from django.core.cache import cache

from annotation.signals import labels_arrived
from validation.stopping.tasks import study_check_target

LATE_S = 1  # the check runs this long after its slot ends: every label of the slot committed


def check_seconds() -> float:
    return float(getattr(settings, "STUDY_TARGET_CHECK_SECONDS", 5))


def _slot_key(study_id: int) -> str:
    return f"validation:stopping:check:{study_id}"


def study_check_soon(*, study_id: int) -> bool:
    """Enqueue the check of ``study_id``'s target unless one is already due; True when this
    call enqueued it. A check that cannot be sent frees the slot (the next label tries again)."""
    wait = check_seconds()
    if wait > 0 and not cache.add(_slot_key(study_id), 1, timeout=wait):
        return False
    try:
        study_check_target.apply_async(args=[study_id], countdown=wait + LATE_S if wait else 0)
    except Exception:
        cache.delete(_slot_key(study_id))
        raise
    return True


def _on_labels(sender, *, study_id: int, **_kwargs) -> None:
    study_check_soon(study_id=study_id)


def connect() -> None:
    labels_arrived.connect(_on_labels, dispatch_uid="validation.stopping.check_soon")
