"""The plan page of a pilot — an uploaded label set, or a running study with an app judge's
verdicts — (researchers read): the form, then the plan in one sentence, what it rests on and
the people-only comparison; and, for admins, the study the plan asks for (posted to the same
address, the plan's inputs in its query). Thin: the forms check, the read computes, the service
writes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.contrib import messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse

from annotation.label_set_file import LabelSetError
from annotation.models import Study
from core.access import researcher_required
from core.roles import is_admin
from validation.models import LabelSet
from validation.ppi_plan.forms import PlanForm, StudyFromPlanForm
from validation.ppi_plan.reads import (
    label_set_judges,
    label_set_plan,
    study_human_cost,
    study_initial,
    study_pilot,
    study_pilot_judges,
)
from validation.ppi_plan.services import study_from_plan
from validation.ppi_plan.stats import PlanError, plan_from_pilot
from validation.ppi_plan.words import money, plan_sentences, points

FIELD_OF = {"cost_human": "cost_human", "cost_judge": "cost_judge", "labels": None}


class PilotProblem(Exception):
    """The pilot's own data cannot be planned with (said for the whole page)."""


@dataclass
class Pilot:
    """What a plan page plans from: its name and breadcrumbs, its judges, and ``plan`` (the judge,
    the costs and the target → the plan, or :class:`PilotProblem`)."""

    name: str
    crumbs: list[tuple[str, str]]
    judges: list[str]
    plan: Callable[..., dict]
    no_judges: str
    command: str
    label_set: LabelSet | None = None


def _label_set_pilot(label_set: LabelSet) -> Pilot:
    def plan(**kwargs) -> dict:
        try:
            return label_set_plan(label_set, **kwargs)
        except LabelSetError as exc:
            raise PilotProblem(f"{label_set.name}: {exc}.") from exc

    return Pilot(
        name=label_set.name,
        crumbs=[(reverse("validation:label_sets"), "Your labels"),
                (reverse("validation:label_set", args=[label_set.pk]), label_set.name)],
        judges=label_set_judges(label_set),
        plan=plan,
        no_judges="This label set has no judge labels (kind judge): there is nothing to plan with.",
        command="manage.py ppi_plan --labelled",
        label_set=label_set,
    )  # fmt: skip


def _study_pilot(study: Study) -> Pilot:
    def plan(*, judge: str, **kwargs) -> dict:
        try:
            pilot = study_pilot(study_id=study.pk, judge_name=judge)
        except LookupError as exc:
            raise PilotProblem(f"{study.name}: {exc}.") from exc
        return plan_from_pilot(**pilot, **kwargs)

    return Pilot(
        name=study.name,
        crumbs=[(reverse("validation:index"), "Comparisons"),
                (reverse("validation:study", args=[study.pk]), study.name)],
        judges=study_pilot_judges(study),
        plan=plan,
        no_judges="No judge has scored this study's items yet: there is nothing to plan with.",
        command="manage.py ppi_plan --pilot-study",
    )  # fmt: skip


@dataclass
class Planned:
    form: PlanForm
    plan: dict | None = None
    currency: str = ""
    said: str = ""
    problem: str = ""
    sentences: list[str] = field(default_factory=list)


def _rows(plan: dict, currency: str) -> list[tuple[str, str, str]]:
    people = plan["people_only"]
    return [
        ("Human labels", f"{plan['n']:,}", f"{people['n']:,}"),
        ("Judge verdicts", f"{plan['judge_verdicts']:,}", "0"),
        ("Cost", money(plan["cost"], currency), money(people["cost"], currency)),
        ("Expected interval at 95%", points(plan["half_width"]), points(plan["half_width"])),
        ("Effective sample size", f"{plan['effective_n']:,}", f"{people['n']:,}"),
    ]


def _planned(request: HttpRequest, pilot: Pilot) -> Planned:
    """The plan the query asks for, or why there is none (at a field, or for the page)."""
    submitted = "cost_human" in request.GET
    out = Planned(form=PlanForm(request.GET if submitted else None, judges=pilot.judges))
    form = out.form
    if not pilot.judges:
        out.problem = pilot.no_judges
        return out
    if not (submitted and form.is_valid()):
        return out
    data = form.cleaned_data
    cost_human, out.currency = data["cost_human"], data.get("currency", "")
    try:
        if cost_human is None:
            cost_human, out.currency, out.said = study_human_cost(data["study"].pk)
        out.plan = pilot.plan(
            judge=data["judge"], cost_human=cost_human, cost_judge=data["cost_judge"],
            target=data["target"], value=form.target_value(),
        )  # fmt: skip
    except PlanError as exc:
        where = FIELD_OF.get(exc.field, "value")
        if where is None:
            out.problem = f"{pilot.name}: {exc}."
        else:
            form.add_error(where, str(exc))
    except LookupError as exc:
        form.add_error("study", str(exc).replace(": give --cost-human", ": type the cost"))
    except PilotProblem as exc:
        out.problem = str(exc)
    if out.plan is not None:
        out.sentences = plan_sentences(out.plan, currency=out.currency) + (
            [out.said] if out.said else []
        )
    return out


def _create(request, pilot: Pilot, planned: Planned, study_form: StudyFromPlanForm):
    """The study the plan asks for, or ``None`` with the refusals at their fields."""
    if not study_form.is_valid():
        return None
    data = study_form.cleaned_data
    try:
        return study_from_plan(
            user=request.user, name=data["name"], judge=data["judge"], dataset=data["dataset"],
            n=data["n"], overlap=data["overlap"],
            items_per_participant=data["items_per_participant"], reward=data["reward"],
            currency=data["currency"], sampling=data["sampling"], seed=data["seed"],
            target_half_width=study_form.target_half_width(), plan=planned.plan,
            label_set=pilot.label_set,
        )  # fmt: skip
    except ValidationError as exc:
        errors = exc.message_dict if hasattr(exc, "error_dict") else {None: exc.messages}
        for name, problems in errors.items():
            study_form.add_error(name if name in study_form.fields else None, problems)
    return None


@researcher_required
def label_set_plan_page(request: HttpRequest, pk: int) -> HttpResponse:
    return _plan_page(request, _label_set_pilot(get_object_or_404(LabelSet, pk=pk)))


@researcher_required
def study_plan_page(request: HttpRequest, pk: int) -> HttpResponse:
    return _plan_page(request, _study_pilot(get_object_or_404(Study, pk=pk)))


def _plan_page(request: HttpRequest, pilot: Pilot) -> HttpResponse:
    posted = request.method == "POST"
    if posted and not is_admin(request.user):
        raise PermissionDenied("Creating a study is for admins: it sets what people are paid.")
    planned = _planned(request, pilot)
    study_form = None
    if posted and planned.plan is None and not planned.problem:
        planned.problem = (
            "A study is made from a plan: plan first, then create the study below the plan."
        )
    if planned.plan is not None and is_admin(request.user):
        data = planned.form.cleaned_data
        initial = study_initial(pilot.name, planned.plan, judge=data["judge"],
                                currency=planned.currency, study=data.get("study"))  # fmt: skip
        study_form = StudyFromPlanForm(request.POST if posted else None, initial=initial)
        if posted:
            study = _create(request, pilot, planned, study_form)
            if study is not None:
                n_items = study.items.count()
                messages.success(request, f"Study “{study.name}” created from the plan with "
                                 f"{n_items:,} items and {study.design['places']:,} places.")  # fmt: skip
                return redirect(study.get_absolute_url())
    failed = (planned.form.is_bound and (planned.form.errors or planned.problem)) or (
        posted and (study_form is None or study_form.errors)
    )
    return render(
        request,
        "validation/ppi_plan/plan.html",
        {
            "pilot": pilot,
            "form": planned.form,
            "plan": planned.plan,
            "sentences": planned.sentences,
            "rows": _rows(planned.plan, planned.currency) if planned.plan else [],
            "problem": planned.problem,
            "study_form": study_form,
        },
        status=400 if failed else 200,
    )
