"""The home dashboard's Benchmark and Generate cards (:mod:`core.dashboard`), one query each."""

from __future__ import annotations

from django.urls import reverse

from benchmarks.models import Dataset, Generation, GenerationRun, Generator, Procedure, Topic
from core.dashboard import Card, counts
from core.roles import is_admin, is_researcher
from core.runs.models import ACTIVE_STATUSES, RunStatus


def benchmark_card(*, user) -> Card | None:
    if not is_researcher(user):
        return None
    n = counts(
        datasets=Dataset.objects.all(),
        procedures=Procedure.objects.all(),
        topics=Topic.objects.filter(pk__in=Procedure.objects.values("topic_id")),
    )
    card = Card(
        key="benchmark",
        title="Benchmark",
        blurb="Goals, resources and reference steps, by topic.",
        counts=[(str(n["datasets"]), "datasets"), (str(n["topics"]), "topics")],
        link=reverse("benchmarks:dataset_list"),
        link_label="Datasets",
    )
    if n["procedures"]:
        card.figure, card.figure_label = str(n["procedures"]), "reference procedures"
    else:
        card.empty_reason = "no dataset has been imported yet"
        card.action_label = "Import one: manage.py import_procedures FILE --dataset NAME"
    return card


def generate_card(*, user) -> Card | None:
    if not is_researcher(user):
        return None
    n = counts(
        generators=Generator.objects.all(),
        generations=Generation.objects.all(),
        running=GenerationRun.objects.filter(status__in=ACTIVE_STATUSES),
        finished=GenerationRun.objects.filter(status=RunStatus.DONE),
    )
    card = Card(
        key="generate",
        title="Generate",
        blurb="Candidate procedures from models (generation runs).",
        counts=[(str(n["generators"]), "generators"), (str(n["finished"]), "finished runs")],
        running=n["running"],
        running_label="runs under way",
        link=reverse("admin:benchmarks_generationrun_changelist") if user.is_staff else "",
        link_label="Generation runs (console)",
    )
    if n["generations"]:
        card.figure, card.figure_label = str(n["generations"]), "candidate procedures"
    else:
        card.empty_reason = "no model has generated procedures yet"
        if is_admin(user):  # launching is an admin's; researchers read
            card.action = reverse("admin:benchmarks_generationrun_add")
            card.action_label = "Start a generation run"
    return card
