"""The target rule (validation.stopping.services): checked label by label against the study's
interval, a study stops exactly when the rule first holds — the half-width at most the target
with enough labels, never the estimate — paused, the moment and the interval kept, recruitment
paused on Prolific by the app with a logged call; and never otherwise: no target, no design,
not reached, or resumed."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from annotation.models import ProlificCall, ProlificStudy, Study
from annotation.services.prolific_study import prolific_study_transition
from annotation.services.study import study_set_status
from tests.validation.stopping.conftest import (
    label_many,
    label_next,
    make_target_study,
    on_prolific,
)
from validation.active.reads import study_interval
from validation.active.stats import MIN_LABELLED_TO_STOP, half_width
from validation.stopping.services import study_check_target, study_target_resume

pytestmark = pytest.mark.django_db
FIRST = MIN_LABELLED_TO_STOP - 10  # labels written before the ones checked one by one


def label_until_stopped(study: Study, *, limit: int = 50) -> list[tuple[int, float, str]]:
    """After ``FIRST`` labels, label one item at a time and check after each: (labels, the
    half-width the check saw, its outcome), until it stops the study."""
    label_many(study, FIRST)
    seen = []
    for _ in range(limit):
        assert label_next(study, "P1")
        interval = study_interval(study)
        outcome = study_check_target(study=study)
        seen.append((interval["n_labels"], half_width(interval["ci"]), outcome))
        if outcome.startswith("reached"):
            break
    return seen


def test_stops_when_the_rule_first_holds():
    study = make_target_study(target=0.08)
    seen = label_until_stopped(study)
    *before, (n, width, outcome) = seen
    assert outcome == "reached: study paused"
    assert width <= 0.08 and n >= MIN_LABELLED_TO_STOP
    # never stopped while wider, nor left running once narrow enough with enough labels
    assert before and all(w > 0.08 or m < MIN_LABELLED_TO_STOP for m, w, _ in before)
    assert any(w > 0.08 and m >= MIN_LABELLED_TO_STOP for m, w, _ in before)  # it narrowed
    assert all(o.startswith("not reached: ±") for *_, o in before)
    study.refresh_from_db()
    assert study.status == Study.Status.PAUSED and study.target_reached_at is not None
    kept = study.target_reached_interval
    assert kept["half_width"] == pytest.approx(width) and kept["target"] == 0.08
    assert kept["n_labels"] == n
    assert not ProlificCall.objects.filter(study=study).exists()  # not on Prolific
    # whoever comes next gets no new item, and a later check changes nothing
    assert label_next(study, "P2") is False
    assert study_check_target(study=study) == "no target to watch"


def test_a_narrow_interval_from_too_few_labels_does_not_stop():
    study = make_target_study(target=0.09)
    seen = label_until_stopped(study)
    early = [(m, w) for m, w, o in seen if m < MIN_LABELLED_TO_STOP]
    assert early and all(w <= 0.09 for _, w in early)  # narrow enough, too few labels
    assert seen[-1][0] == MIN_LABELLED_TO_STOP and seen[-1][2].startswith("reached")


def test_not_reached_keeps_the_study_open():
    study = make_target_study(target=0.01)
    seen = label_until_stopped(study, limit=15)
    assert len(seen) == 15 and seen[-1][0] > MIN_LABELLED_TO_STOP
    assert all(o.startswith("not reached") for *_, o in seen)
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN and study.target_reached_at is None


def test_no_target_and_no_design_never_stop():
    no_target = make_target_study(target=None)
    no_design = make_target_study(target=0.5, design=False)
    for study in (no_target, no_design):
        label_many(study, MIN_LABELLED_TO_STOP + 5)
    assert study_check_target(study=no_target) == "no target to watch"
    assert study_check_target(study=no_design).startswith("no interval yet: ")
    for study in (no_target, no_design):
        study.refresh_from_db()
        assert study.status == Study.Status.OPEN and study.target_reached_at is None


def test_a_resumed_study_is_not_stopped_again(admin, researcher):
    study = make_target_study()
    label_until_stopped(study)
    with pytest.raises(PermissionDenied):
        study_target_resume(study=study, user=researcher)
    with pytest.raises(ValidationError, match="an admin resumes it"):
        study_set_status(study=study, status="open")  # the plain status switch refuses it
    study_target_resume(study=study, user=admin)
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN and study.target_resumed_at is not None
    assert label_next(study, "P2")  # items are handed out again
    assert study_check_target(study=study) == "no target to watch"
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN
    with pytest.raises(ValidationError, match="not stopped by its target"):
        study_target_resume(study=study, user=admin)


def test_pauses_and_resumes_recruitment_on_prolific(prolific_server, admin):
    study = make_target_study()
    on_prolific(prolific_server, study)
    label_until_stopped(study)
    assert prolific_server.studies["PS1"]["status"] == "PAUSED"
    call = ProlificCall.objects.get(study=study, action="study_pause")
    assert call.ok and call.user is None and call.target == "PS1"
    assert call.request_summary.startswith("PAUSE: the target interval was reached: ±")
    assert ProlificStudy.objects.get(study=study).status == "PAUSED"

    study_target_resume(study=study, user=admin)
    assert prolific_server.studies["PS1"]["status"] == "ACTIVE"
    start = ProlificCall.objects.get(study=study, action="study_start")
    assert start.ok and start.user == admin and "target interval" in start.request_summary


def test_a_refused_prolific_pause_is_logged_and_the_study_stays_stopped(prolific_server, admin):
    study = make_target_study()
    on_prolific(prolific_server, study)
    prolific_server.fail_next("/transition/", 503)
    *_, (_, _, outcome) = label_until_stopped(study)
    assert outcome.startswith("reached: study paused; Prolific refused the pause")
    call = ProlificCall.objects.get(study=study, action="study_pause")
    assert not call.ok and call.user is None
    study.refresh_from_db()
    assert study.status == Study.Status.PAUSED
    assert prolific_server.studies["PS1"]["status"] == "ACTIVE"
    # resuming does not start what the target never paused
    study_target_resume(study=study, user=admin)
    assert not ProlificCall.objects.filter(study=study, action="study_start").exists()


def test_a_pause_by_a_person_is_not_undone_by_the_resume(prolific_server, admin):
    study = make_target_study()
    on_prolific(prolific_server, study)
    label_until_stopped(study)
    prolific_study_transition(study=study, user=admin, action="START")
    prolific_study_transition(study=study, user=admin, action="PAUSE")  # an admin's own pause
    study_target_resume(study=study, user=admin)
    assert prolific_server.studies["PS1"]["status"] == "PAUSED"
