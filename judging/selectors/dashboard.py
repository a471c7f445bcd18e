"""The home dashboard's Judge card (:mod:`core.dashboard`): judges, judge runs (finished and
under way) and the How2Score of the judge whose run finished last, in one query."""

from __future__ import annotations

from django.db.models import Subquery
from django.urls import reverse

from core.dashboard import Card, counts
from core.formatting import fmt_number
from core.roles import is_admin, is_researcher
from core.runs.models import ACTIVE_STATUSES, RunStatus
from judging.models import Judge, JudgeRun, Judgment


def judge_card(*, user) -> Card | None:
    if not is_researcher(user):
        return None
    latest_judge = Subquery(
        JudgeRun.objects.filter(status=RunStatus.DONE)
        .order_by("-created_at", "-id")
        .values("judge_id")[:1]
    )
    scored = Judgment.objects.filter(judge_id=latest_judge, parse_failed=False)
    n = counts(
        judges=Judge.objects.all(),
        finished=JudgeRun.objects.filter(status=RunStatus.DONE),
        running=JudgeRun.objects.filter(status__in=ACTIVE_STATUSES),
        scored=scored,
        failing=scored.filter(has_failure=True),
    )
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
            f"How2Score of the judge that finished a run last ({n['scored'] - n['failing']} of "
            f"{n['scored']} judged candidates without a critical failure)"
        )
    else:
        card.empty_reason = "no judge run has finished yet"
        if is_admin(user):  # launching is an admin's; researchers read
            card.action = reverse("admin:judging_judgerun_changelist")
            card.action_label = "Launch a judge run"
    return card
