"""What the annotation app tells the apps above it, without knowing them (they connect in their
``ready()``): :data:`labels_arrived`, sent once a participant's label of a regular item is
committed, for a study that watches a target interval (:attr:`Study.watching_target`), so the
check of its interval (validation.stopping) runs after the label, never inside its transaction.

A receiver that fails is logged and the participant's save stands: the label is stored."""

from __future__ import annotations

import logging

from django.db import transaction
from django.dispatch import Signal

from annotation.models import Study

log = logging.getLogger(__name__)

# sender: Study; keyword: study_id
labels_arrived = Signal()


def _send(study_id: int) -> None:
    for receiver, outcome in labels_arrived.send_robust(sender=Study, study_id=study_id):
        if isinstance(outcome, Exception):
            log.error(
                "After a label of study %s: %s failed: %r",
                study_id,
                receiver,
                outcome,
                exc_info=outcome,
            )


def labels_arrived_on_commit(*, study: Study) -> None:
    """Send :data:`labels_arrived` for ``study`` once the current transaction commits, when
    the study watches a target interval; nothing otherwise (most studies: no cost)."""
    if study.watching_target:
        study_id = study.pk
        transaction.on_commit(lambda: _send(study_id))
