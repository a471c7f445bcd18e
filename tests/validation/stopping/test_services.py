"""The target rule (validation.stopping.services): checked label by label against the study's
interval, a study stops exactly when the half-width first reaches the target — paused, the
moment and the interval kept, recruitment paused on Prolific by the app with a logged call —
and never otherwise: no target, no design, not reached, or resumed."""

from __future__ import annotations

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from annotation.models import ProlificCall, ProlificStudy, Study
from annotation.services.study import study_set_status
from tests.validation.stopping.conftest import label_next, make_target_study, on_prolific
from validation.active.reads import study_interval
from validation.active.stats import half_width
from validation.stopping.services import study_check_target, study_target_resume

pytestmark = pytest.mark.django_db


def label_until_stopped(study: Study, *, limit: int = 40) -> list[tuple[float | None, str]]:
    """Label one item at a time and check after each: (half-width before the check, outcome)."""
    seen = []
    for _ in range(limit):
        if not label_next(study, "P1"):
            break
        interval = study_interval(study)
        width = None if interval.get("undefined") else half_width(interval["ci"])
        outcome = study_check_target(study=study)
        seen.append((width, outcome))
        if outcome.startswith("reached"):
            break
    return seen


def test_stops_when_the_half_width_first_reaches_the_target():
    study = make_target_study(target=0.16)
    seen = label_until_stopped(study)
    *before, (width, outcome) = seen
    assert outcome == "reached: study paused"
    assert width is not None and width <= 0.16
    # never stopped while wider, nor left running once narrow enough
    assert before and all(w is None or w > 0.16 for w, _ in before)
    assert all(o.startswith(("not reached", "no interval yet")) for _, o in before)
    study.refresh_from_db()
    assert study.status == Study.Status.PAUSED and study.target_reached_at is not None
    kept = study.target_reached_interval
    assert kept["half_width"] == pytest.approx(width) and kept["target"] == 0.16
    assert kept["n_labels"] == len(seen)
    assert not ProlificCall.objects.filter(study=study).exists()  # not on Prolific
    # whoever comes next gets no new item, and a later check changes nothing
    assert label_next(study, "P2") is False
    assert study_check_target(study=study) == "no target to watch"


def test_not_reached_keeps_the_study_open():
    study = make_target_study(target=0.01)
    seen = label_until_stopped(study, limit=12)
    assert len(seen) == 12 and all(not o.startswith("reached") for _, o in seen)
    assert any(o.startswith("not reached") for _, o in seen)
    study.refresh_from_db()
    assert study.status == Study.Status.OPEN and study.target_reached_at is None


def test_no_target_and_no_design_never_stop():
    no_target = make_target_study(target=None)
    no_design = make_target_study(target=0.49, design=False)
    for study in (no_target, no_design):
        for _ in range(6):
            assert label_next(study, "P1")
    assert study_check_target(study=no_target) == "no target to watch"
    assert study_check_target(study=no_design).startswith("no interval yet: ")
    for study in (no_target, no_design):
        study.refresh_from_db()
        assert study.status == Study.Status.OPEN and study.target_reached_at is None


def test_a_resumed_study_is_not_stopped_again(admin, researcher):
    study = make_target_study(target=0.2)
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
    study = make_target_study(target=0.2)
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
    study = make_target_study(target=0.2)
    on_prolific(prolific_server, study)
    prolific_server.fail_next("/transition/", 503)
    *_, (_, outcome) = label_until_stopped(study)
    assert outcome.startswith("reached: study paused; Prolific refused the pause")
    call = ProlificCall.objects.get(study=study, action="study_pause")
    assert not call.ok and call.user is None
    study.refresh_from_db()
    assert (
        study.status == Study.Status.PAUSED and prolific_server.studies["PS1"]["status"] == "ACTIVE"
    )
    # resuming does not start what the target never paused
    study_target_resume(study=study, user=admin)
    assert not ProlificCall.objects.filter(study=study, action="study_start").exists()


def test_a_study_paused_on_prolific_by_a_person_is_not_restarted_by_the_resume(
    prolific_server, admin
):
    from annotation.services.prolific_study import prolific_study_transition

    study = make_target_study(target=0.2)
    on_prolific(prolific_server, study)
    label_until_stopped(study)
    prolific_study_transition(study=study, user=admin, action="START")
    prolific_study_transition(study=study, user=admin, action="PAUSE")  # an admin's own pause
    study_target_resume(study=study, user=admin)
    assert prolific_server.studies["PS1"]["status"] == "PAUSED"
