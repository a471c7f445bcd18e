"""What the alt-test section of the judge validation page shows: the report of
:mod:`validation.alt_test.reads` and the planner of :mod:`validation.alt_test.planner`,
formatted once, and the parameters read from the query string (a bad value is a message on the
form, never an error page)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.charts import bar_chart_svg
from validation.alt_test import planner as alt_test_planner
from validation.alt_test.reads import label_categories, study_alt_test
from validation.alt_test.stats import DEFAULT_EPSILON, DEFAULT_Q, EPSILON_BY_ANNOTATORS
from validation.alt_test.words import power_sentence, verdict_sentence


def annotators_for(epsilon: float) -> str | None:
    """Who the annotators are when ``epsilon`` is the paper's value for them (else None)."""
    return next((k for k, e in EPSILON_BY_ANNOTATORS.items() if e == epsilon), None)


PICK_LIMIT = 100
# the page's planner: the reference's grid, half its datasets (about a second of CPU)
PAGE_PLAN = {"n_datasets": 10, "n_boots": 10, "sizes": tuple(range(30, 201, 10))}
PLAN_FIELDS = {  # query parameter: (planner argument, type, default)
    "categories": ("n_categories", int, 4),
    "annotator_noise": ("annotator_noise", float, 0.3),
    "judge_noise": ("judge_noise", float, 0.3),
    "annotators": ("n_annotators", int, 3),
}


def _number(raw: str | None, kind, default, *, name: str, errors: dict[str, str]):
    if raw in (None, ""):
        return default
    try:
        value = kind(raw)
    except ValueError:
        errors[name] = f"expected {'a whole number' if kind is int else 'a number'}, got {raw!r}"
        return default
    if kind is float and value != value:  # NaN
        errors[name] = "expected a number"
        return default
    return value


def epsilon_from(params: Mapping[str, str]) -> tuple[float, dict[str, str]]:
    errors: dict[str, str] = {}
    eps = _number(params.get("epsilon"), float, DEFAULT_EPSILON, name="epsilon", errors=errors)
    if not errors and not -1 <= eps <= 1:
        errors["epsilon"] = f"expected a number from -1 to 1, got {eps:g}"
        eps = DEFAULT_EPSILON
    return eps, errors


def _p(value: float | None) -> str:
    if value is None:
        return "— (every difference equals ε)"
    return "< 0.0001" if value < 1e-4 else f"{value:.4f}"


def _section(s: dict[str, Any], *, judge: str, n_categories: int) -> dict[str, Any]:
    tested = s["annotators"]
    n_annotators = len(tested) + len(s["skipped"]["annotators"])
    estimate = None
    if not s["passed"] and n_annotators >= 2:
        estimate = alt_test_planner.items_needed(
            n_categories=n_categories, n_annotators=n_annotators, epsilon=s["epsilon"]
        )
    n_rejected = sum(a["rejected"] for a in tested)
    omega, rho = s["winning_rate"], s["advantage_probability"]
    return {
        **s,
        "sentence": verdict_sentence(s, judge=judge, annotators=annotators_for(s["epsilon"])),
        "power": power_sentence(s, estimate),
        "omega_text": "—" if omega is None else f"{omega:.2f}",
        "omega_detail": f"{n_rejected} of {len(tested)} annotators",
        "rho_text": "—" if rho is None else f"{rho:.2f}",
        "rows": [
            {**a, "p_text": _p(a["p_value"]), "rho_text": f"{a['advantage_probability']:.2f}"}
            for a in tested
        ],
        "skipped_item_ids": ", ".join(i["item"] for i in s["skipped"]["items"][:50]),
    }


def alt_test_context(*, study, judge, params: Mapping[str, str]) -> dict[str, Any]:
    """The alt-test of ``judge`` on ``study`` at the ε of ``params`` (default 0.1)."""
    epsilon, errors = epsilon_from(params)
    report = study_alt_test(study=study, judge=judge, epsilon=epsilon, q=DEFAULT_Q)
    return {
        "alt": report,
        "alt_sections": [
            _section(s, judge=judge.name, n_categories=label_categories(study))
            for s in report["sections"]
        ],
        "alt_errors": errors,
        "epsilon": epsilon,
    }


def plan_context(params: Mapping[str, str]) -> dict[str, Any]:
    """The planner at the query's K, noises and annotators (the page's grid)."""
    errors: dict[str, str] = {}
    values = {
        name: _number(params.get(name), kind, default, name=name, errors=errors)
        for name, (_, kind, default) in PLAN_FIELDS.items()
    }
    context: dict[str, Any] = {"plan_values": values, "plan_errors": errors, "plan": None}
    if errors:
        return context
    arguments = {PLAN_FIELDS[k][0]: v for k, v in values.items()}
    try:
        plan = alt_test_planner.plan(**arguments, **PAGE_PLAN)
    except ValueError as exc:
        name, _, message = str(exc).partition(": ")
        field = next((k for k, (arg, _, _) in PLAN_FIELDS.items() if arg == name), "plan")
        context["plan_errors"] = {field: message or str(exc)}
        return context
    eps = list(plan["rows"][0]["winning_rate"])
    context.update(
        plan=plan,
        plan_eps=eps,
        plan_rows=[
            {
                "n": r["n_items"],
                "cells": [f"{r['winning_rate'][e]:.2f}" for e in eps],
                "rho": f"{r['advantage_probability']:.2f}",
            }
            for r in plan["rows"]
        ],
        plan_smallest=[{"epsilon": e, "n": n} for e, n in plan["smallest_n_items_passing"].items()],
        plan_chart=bar_chart_svg(
            title="Expected winning rate ω at ε = 0.1 by number of items",
            labels=[str(r["n_items"]) for r in plan["rows"]],
            values=[r["winning_rate"].get("0.1") for r in plan["rows"]],
            value_range=(0.0, 1.0),
            value_format="{:.2f}",
            axis_label="expected ω (passes at 0.5)",
            id_prefix="alt-test-plan",
        ),
        plan_kappa="—" if plan["annotator_kappa"] is None else f"{plan['annotator_kappa']:.2f}",
        plan_accuracy=f"{plan['judge_accuracy_vs_majority']:.2f}",
    )
    return context


def choices() -> dict[str, Any]:
    """The study and judge pickers of the stand-alone page."""
    from annotation.models import Study
    from judging.models import Judge

    return {
        "studies": Study.objects.order_by("-created_at")[:PICK_LIMIT],
        "judges": Judge.objects.order_by("name")[:PICK_LIMIT],
    }


EXPORT_FIELDS = ("study_id", "judge", "section", "scoring", "epsilon", "q", "annotator",
                 "n_items", "p_value", "rejected", "advantage_probability", "winning_rate",
                 "passed", "left_out")  # fmt: skip


def export_rows(report: dict[str, Any]):
    """One row per annotator and section (the tested ones, then those left out, with why)."""
    for s in report["sections"]:
        base = {"study_id": report["study"]["id"], "judge": report["judge"]["name"],
                "section": s["key"], "scoring": s["scoring"], "epsilon": s["epsilon"],
                "q": s["q"], "winning_rate": s["winning_rate"], "passed": s["passed"]}  # fmt: skip
        for a in s["annotators"]:
            yield {**base, "annotator": a["annotator"], "n_items": a["n_items"],
                   "p_value": a["p_value"], "rejected": a["rejected"],
                   "advantage_probability": a["advantage_probability"], "left_out": ""}  # fmt: skip
        for a in s["skipped"]["annotators"]:
            yield {**base, "annotator": a["annotator"], "n_items": a["n_items"],
                   "p_value": None, "rejected": None, "advantage_probability": None,
                   "left_out": a["reason"]}  # fmt: skip
