"""The home dashboard's Judge card (:mod:`core.dashboard`): judges, judge runs (finished and
under way) and the How2Score of the judge whose run finished last, named."""

from __future__ import annotations

from django.db.models import OuterRef
from django.urls import reverse

from core.dashboard import Card, count_of, counts
from core.formatting import fmt_number
from core.roles import is_admin, is_researcher
from core.runs.models import ACTIVE_STATUSES, RunStatus
from judging.models import Judge, JudgeRun, Judgment


def judge_card(*, user) -> Card | None:
    if not is_researcher(user):
        return None
    # the latest finished run with its judge and every count of the card (one query)
    scored = Judgment.objects.filter(judge_id=OuterRef("judge_id"), parse_failed=False)
    run = (
        JudgeRun.objects.filter(status=RunStatus.DONE)
        .select_related("judge")
        .annotate(
            n_scored=count_of(scored),
            n_failing=count_of(scored.filter(has_failure=True)),
            n_judges=count_of(Judge.objects.all()),
            n_finished=count_of(JudgeRun.objects.filter(status=RunStatus.DONE)),
            n_running=count_of(JudgeRun.objects.filter(status__in=ACTIVE_STATUSES)),
        )
        .order_by("-created_at", "-id")
        .first()
    )
    if run is not None:
        n = {"judges": run.n_judges, "finished": run.n_finished, "running": run.n_running}
        n |= {"scored": run.n_scored, "failing": run.n_failing}
    else:
        n = counts(
            judges=Judge.objects.all(),
            running=JudgeRun.objects.filter(status__in=ACTIVE_STATUSES),
        )
        n |= {"finished": 0, "scored": 0, "failing": 0}
    card = Card(
        key="judge",
        title="Judge",
        blurb="Critical failures found by LLM judges; How2Score per generator.",
        counts=[(str(n["judges"]), "judges"), (str(n["finished"]), "finished runs")],
        running=n["running"],
        running_label="runs under way",
        link=reverse("judging:leaderboard"),
        link_label="Leaderboard",
    )
    if n["scored"]:
        card.figure = fmt_number(1 - n["failing"] / n["scored"], 3)
        card.figure_label = (
            f"How2Score under judge “{run.judge.name}” (its run #{run.pk} finished last): "
            f"{n['scored'] - n['failing']} of {n['scored']} judged candidates without a "
            "critical failure"
        )
    else:
        card.empty_reason = "no judge run has finished yet"
        if is_admin(user):  # launching is an admin's; researchers read
            card.action = reverse("admin:judging_judgerun_changelist")
            card.action_label = "Launch a judge run"
    return card
