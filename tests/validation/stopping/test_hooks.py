"""After labels arrive: a study with a target has its check enqueued once its label is
committed, at most once per study in each window however many people save, never for a study
without a target; a failing receiver leaves the participant's label saved."""

from __future__ import annotations

import logging

import pytest

from annotation.models import Annotation, Study
from annotation.signals import labels_arrived
from config.celery import app
from tests.validation.stopping.conftest import label_many, label_next, make_target_study
from validation.active.stats import MIN_LABELLED_TO_STOP
from validation.stopping import hooks, tasks

pytestmark = pytest.mark.django_db


@pytest.fixture
def sent(monkeypatch):
    """The checks enqueued (study id, countdown), each still sent for real."""
    out = []
    send = tasks.study_check_target.apply_async

    def recorded(*args, **kwargs):
        out.append((kwargs["args"][0], kwargs.get("countdown")))
        return send(*args, **kwargs)

    monkeypatch.setattr(tasks.study_check_target, "apply_async", recorded)
    monkeypatch.setattr(app.conf, "task_always_eager", True)
    return out


def test_one_check_per_window_however_many_save(settings, sent, django_capture_on_commit_callbacks):
    settings.STUDY_TARGET_CHECK_SECONDS = 30
    study = make_target_study(n_items=10, n_more=10, target=0.01)
    other = make_target_study(n_items=10, n_more=10, target=0.01)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        for pid in ("A", "B", "C", "D", "E"):
            assert label_next(study, pid)
        assert label_next(other, "A")
    assert len(callbacks) == 6  # one per label, each after its commit
    # one check per study, after the window: it reads every label of the window
    assert sent == [(study.pk, 31), (other.pk, 31)]
    hooks.cache.delete(f"validation:stopping:check:{study.pk}")  # the window ends
    with django_capture_on_commit_callbacks(execute=True):
        assert label_next(study, "F")
    assert sent[-1] == (study.pk, 31)


def test_labels_stop_the_study_by_themselves(settings, sent, django_capture_on_commit_callbacks):
    settings.STUDY_TARGET_CHECK_SECONDS = 0  # a check after every label (eager here)
    study = make_target_study(target=0.08)
    label_many(study, MIN_LABELLED_TO_STOP - 10)
    n = 0
    for _ in range(50):
        with django_capture_on_commit_callbacks(execute=True):
            assert label_next(study, "P1")
        n += 1
        study.refresh_from_db()
        if study.status != Study.Status.OPEN:
            break
    assert study.status == Study.Status.PAUSED and study.target_reached_at is not None
    assert study.target_reached_interval["n_labels"] == MIN_LABELLED_TO_STOP - 10 + n
    assert len(sent) == n < 50


def test_no_target_no_check(sent, django_capture_on_commit_callbacks):
    study = make_target_study(n_items=10, n_more=10, target=None)
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        for pid in ("A", "B", "C"):
            assert label_next(study, pid)
    assert callbacks == [] and sent == []


def test_a_failing_receiver_leaves_the_label_saved(caplog, django_capture_on_commit_callbacks):
    study = make_target_study(n_items=10, n_more=10)

    def broken(sender, **kwargs):
        raise ConnectionError("broker down")

    labels_arrived.connect(broken, dispatch_uid="test-broken")
    try:
        with (
            caplog.at_level(logging.ERROR, logger="annotation.signals"),
            django_capture_on_commit_callbacks(execute=True),
        ):
            assert label_next(study, "A")
    finally:
        labels_arrived.disconnect(dispatch_uid="test-broken")
    assert Annotation.objects.filter(item__study=study).count() == 1
    assert "broker down" in caplog.text
