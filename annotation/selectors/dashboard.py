"""The home dashboard's Annotate and Agree cards (:mod:`core.dashboard`)."""

from __future__ import annotations

from django.db.models import Case, Max, When
from django.urls import reverse

from annotation.models import Annotation, Participant, Study, StudyItem
from annotation.selectors.report import ready_study_report
from core.dashboard import Card, counts
from core.formatting import fmt_number
from core.roles import is_researcher

Stage = Participant.Stage


def annotate_card(*, user) -> Card | None:
    """Studies, those open, people at work now and labels so far (one query)."""
    if not is_researcher(user):
        return None
    n = counts(
        studies=Study.objects.all(),
        open=Study.objects.filter(status=Study.Status.OPEN),
        working=Participant.objects.filter(
            stage__in=(Stage.TRAINING, Stage.QUALIFICATION, Stage.WORKING)
        ),
        labels=Annotation.objects.filter(item__kind=StudyItem.Kind.REGULAR),
    )
    card = Card(
        key="annotate",
        title="Annotate",
        blurb="People label the same candidates in a Prolific-style study.",
        counts=[(str(n["studies"]), "studies"), (str(n["working"]), "participants at work")],
        running=n["open"],
        running_label="open",
        link=reverse("annotation:study_list"),
        link_label="Studies",
    )
    if n["labels"]:
        card.figure, card.figure_label = str(n["labels"]), "labels submitted"
    else:
        card.empty_reason = "nobody has labelled an item yet"
        card.action, card.action_label = reverse("annotation:study_create"), "Create a study"
    return card


def latest_labelled_study() -> Study | None:
    """The study whose figures the home page and the leaderboard open on: a critical-failure
    study (the judges' question; a rating or CustomPlans study has no verdict to agree on), a
    finished (closed) one before one still running, then the one labelled most recently (None
    when no such study has labels). One test label in a running study does not move the
    headline figure."""
    return (
        Study.objects.filter(
            form_type="critical_failure",
            items__kind=StudyItem.Kind.REGULAR,
            items__annotations__isnull=False,
        )
        .annotate(last=Max("items__annotations__submitted_at"))
        .order_by(Case(When(status=Study.Status.CLOSED, then=0), default=1), "-last", "-id")
        .first()
    )


def agree_card(*, user) -> Card | None:
    """Krippendorff's α of :func:`latest_labelled_study` (its cached report), named."""
    if not is_researcher(user):
        return None
    study = latest_labelled_study()
    card = Card(
        key="agree",
        title="Agree",
        blurb="Agreement among people, and between judges and people.",
        link=reverse("validation:index"),
        link_label="Comparisons",
    )
    if study is None:
        card.empty_reason = "no study has labels yet"
        card.action, card.action_label = reverse("annotation:study_list"), "Open the studies"
        return card
    from annotation.tasks import enqueue_study_report

    report = ready_study_report(study=study, enqueue=enqueue_study_report).report
    card.link, card.link_label = reverse("annotation:report", args=[study.pk]), "Agreement report"
    if report is None:  # a large study's report, being computed by a worker
        card.empty_reason = "the agreement report is being computed"
        return card
    alpha = (report.get("alpha") or {}).get("value")
    card.counts = [(str(report["n_items"]), "items"), (str(report["n_annotators"]), "annotators")]
    if alpha is None:
        card.empty_reason = (report.get("alpha") or {}).get("undefined") or "no value yet"
    else:
        card.figure = fmt_number(alpha, 3)
    state = "finished" if study.status == Study.Status.CLOSED else "still running"
    card.figure_label = f"Krippendorff's α of study “{study.name}” (#{study.pk}, {state})"
    return card
