"""The plan page of a label set (researchers read): the form, then the plan in one sentence,
what it rests on and the people-only comparison. Thin: the form checks, the read computes."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.label_set_file import LabelSetError
from core.access import researcher_required
from validation.models import LabelSet
from validation.ppi_plan.forms import PlanForm
from validation.ppi_plan.reads import label_set_judges, label_set_plan, study_human_cost
from validation.ppi_plan.stats import PlanError
from validation.ppi_plan.words import money, plan_sentences, points

FIELD_OF = {"cost_human": "cost_human", "cost_judge": "cost_judge", "labels": None}


def _rows(plan: dict, currency: str) -> list[tuple[str, str, str]]:
    people = plan["people_only"]
    return [
        ("Human labels", f"{plan['n']:,}", f"{people['n']:,}"),
        ("Judge verdicts", f"{plan['judge_verdicts']:,}", "0"),
        ("Cost", money(plan["cost"], currency), money(people["cost"], currency)),
        ("Expected interval at 95%", points(plan["half_width"]), points(plan["half_width"])),
        ("Effective sample size", f"{plan['effective_n']:,}", f"{people['n']:,}"),
    ]


@researcher_required
def label_set_plan_page(request: HttpRequest, pk: int) -> HttpResponse:
    label_set = get_object_or_404(LabelSet, pk=pk)
    judges = label_set_judges(label_set)
    submitted = "cost_human" in request.GET
    form = PlanForm(request.GET if submitted else None, judges=judges)
    plan, sentences, rows, problem = None, [], [], ""
    if not judges:
        problem = "This label set has no judge labels (kind judge): there is nothing to plan with."
    elif submitted and form.is_valid():
        data = form.cleaned_data
        cost_human, currency, said = data["cost_human"], data.get("currency", ""), ""
        try:
            if cost_human is None:
                cost_human, currency, said = study_human_cost(data["study"].pk)
            plan = label_set_plan(
                label_set, judge=data["judge"], cost_human=cost_human,
                cost_judge=data["cost_judge"], target=data["target"], value=form.target_value(),
            )  # fmt: skip
        except PlanError as exc:
            field = FIELD_OF.get(exc.field, "value")
            if field is None:
                problem = f"{label_set.name}: {exc}."
            else:
                form.add_error(field, str(exc))
        except LookupError as exc:
            form.add_error("study", str(exc).replace(": give --cost-human", ": type the cost"))
        except LabelSetError as exc:
            problem = f"{label_set.name}: {exc}."
        if plan is not None:
            sentences = plan_sentences(plan, currency=currency) + ([said] if said else [])
            rows = _rows(plan, currency)
    failed = submitted and (form.errors or problem)
    return render(
        request,
        "validation/ppi_plan/plan.html",
        {
            "label_set": label_set,
            "form": form,
            "plan": plan,
            "sentences": sentences,
            "rows": rows,
            "problem": problem,
        },
        status=400 if failed else 200,
    )
