"""Writes of the participant's stages: consent → codebook and training → qualification →
working → done (or declined, screened out). Claiming items lives in
:mod:`annotation.services.assignment`, drafts, heartbeats and submissions in
:mod:`annotation.services.submission`, studies and entry in :mod:`annotation.services.study`.
Every rule of the study is enforced by the server; the rules themselves are in
:mod:`annotation.rules`."""

from __future__ import annotations

from django.utils import timezone

from annotation import rules
from annotation.models import Participant
from annotation.selectors.flow import qualification_answers, study_has_qualification
from annotation.selectors.rounds import carried_over

Stage = Participant.Stage


def participant_consent(*, participant: Participant, agree: bool) -> Participant:
    if participant.stage != Stage.CONSENT:
        return participant
    participant.stage = Stage.TRAINING if agree else Stage.DECLINED
    participant.consented_at = timezone.now() if agree else None
    participant.finished_at = None if agree else timezone.now()
    participant.save(update_fields=["stage", "consented_at", "finished_at"])
    return participant


def participant_finish_training(*, participant: Participant) -> Participant:
    if participant.stage != Stage.TRAINING:
        return participant
    takes = rules.takes_qualification(
        has_qualification_items=study_has_qualification(
            study=participant.study, attempt=participant.qualification_attempt
        ),
        carried_over=carried_over(
            study=participant.study, prolific_pid=participant.prolific_pid or ""
        ),
    )
    participant.stage = Stage.QUALIFICATION if takes else Stage.WORKING
    participant.save(update_fields=["stage"])
    return participant


def participant_finish(*, participant: Participant, stage: str) -> None:
    """End the participant's session in ``stage`` (done, screened out)."""
    participant.stage = stage
    participant.finished_at = timezone.now()
    participant.save(update_fields=["stage", "finished_at"])


def participant_finish_qualification(*, participant: Participant) -> None:
    """Score the answered qualification items of the current attempt: on to the items, back
    to the training for a second attempt (:func:`annotation.rules.comprehension_outcome`),
    or screened out (the screen-out code)."""
    n_correct, n_answered = qualification_answers(participant=participant)
    score = rules.qualification_score(n_correct=n_correct, n_answered=n_answered)
    participant.qualification_score = score
    participant.save(update_fields=["qualification_score"])
    threshold = participant.study.qualification_pass_threshold
    outcome = rules.comprehension_outcome(
        passed=rules.qualification_state(score=score, threshold=threshold)
        == rules.QUALIFICATION_PASSED,
        attempt=participant.qualification_attempt,
        has_second_set=study_has_qualification(
            study=participant.study, attempt=participant.qualification_attempt + 1
        ),
    )
    if outcome == rules.COMPREHENSION_WORK:
        participant.stage = Stage.WORKING
        participant.save(update_fields=["stage"])
    elif outcome == rules.COMPREHENSION_RETRAIN:
        participant.qualification_attempt += 1
        participant.stage = Stage.TRAINING
        participant.save(update_fields=["qualification_attempt", "stage"])
    else:
        participant_finish(participant=participant, stage=Stage.SCREENED_OUT)
