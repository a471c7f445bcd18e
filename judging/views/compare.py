"""Researcher pages for the comparisons: judges vs the human majority of a study, judge↔judge
agreement, generator rankings with Kendall's τ, and the judge leaderboard. Thin: the numbers
come from :mod:`judging.comparison_selectors`, the plots from :mod:`annotation.plots`."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from annotation.models import Study
from annotation.plots import bar_chart_svg, confusion_matrix_svg
from benchmarks.models import Dataset
from core.roles import is_researcher
from judging import comparison as cmp
from judging.models import Judge
from judging.selectors import comparison as sel


def researcher_required(view):
    @login_required
    def wrapped(request, *args, **kwargs):
        if not is_researcher(request.user):
            raise PermissionDenied("Judge comparisons are for researchers.")
        return view(request, *args, **kwargs)

    wrapped.__name__ = view.__name__
    wrapped.__doc__ = view.__doc__
    return wrapped


def pct(stat: dict | None) -> str:
    if not stat or stat.get("value") is None:
        return "undefined"
    return f"{100 * stat['value']:.1f}%"


def num(stat: dict | None, digits: int = 3) -> str:
    if not stat or stat.get("value") is None:
        return "undefined"
    return f"{stat['value']:.{digits}f}"


def _why(stat: dict | None) -> str:
    return (stat or {}).get("undefined") or ""


def _chosen_judges(request: HttpRequest) -> list[Judge] | None:
    names = [n for n in request.GET.getlist("judge") if n]
    if not names:
        return None
    return list(Judge.objects.filter(name__in=names).order_by("name"))


def _pair_matrix(judge_names: list[str], pairs: list[dict]) -> list[dict]:
    """Rows of a symmetric judge × judge table of agreement (κ, n)."""
    by_pair = {}
    for p in pairs:
        by_pair[(p["judge_a"], p["judge_b"])] = p
        by_pair[(p["judge_b"], p["judge_a"])] = p
    rows = []
    for a in judge_names:
        cells = []
        for b in judge_names:
            p = by_pair.get((a, b))
            cells.append(
                None
                if a == b or p is None
                else {
                    "agreement": pct(p["agreement"]),
                    "kappa": num(p["kappa"]),
                    "n": p["n_shared"],
                    "why": _why(p["agreement"]),
                }
            )
        rows.append({"judge": a, "cells": cells})
    return rows


@researcher_required
def index(request: HttpRequest) -> HttpResponse:
    context = {
        "studies": Study.objects.order_by("-created_at")[:100],
        "judges": Judge.objects.order_by("name"),
        "datasets": Dataset.objects.order_by("name", "version")[:100],
    }
    return render(request, "judging/compare/index.html", context)


@researcher_required
def study(request: HttpRequest, pk: int) -> HttpResponse:
    study_obj = get_object_or_404(Study, pk=pk)
    report = sel.study_comparison(study=study_obj, judges=_chosen_judges(request))
    judges = report["judges"]
    labels, values = [], []
    for j in judges:
        for key, title in (
            ("overall", "overall"),
            (cmp.HAS_FAILURE, "has_failure"),
            (cmp.NO_FAILURE, "no_failure"),
        ):
            stat = j["agreement"] if key == "overall" else j["per_class"][key]["agreement"]
            labels.append(f"{j['judge']} · {title}")
            values.append(stat["value"])
    chart = (
        bar_chart_svg(
            title="Agreement with the human majority",
            labels=labels,
            values=values,
            value_range=(0.0, 1.0),
            value_format="{:.1%}",
            axis_label="share of items (tied majorities excluded)",
            id_prefix="agreement-bars",
        )
        if judges
        else ""
    )
    rows = []
    for j in judges:
        rows.append(
            {
                "judge": j["judge"],
                "model": j["model"],
                "n_compared": j["n_compared"],
                "n_agree": j["n_agree"],
                "agreement": pct(j["agreement"]),
                "why": _why(j["agreement"]),
                "has_failure": pct(j["per_class"][cmp.HAS_FAILURE]["agreement"]),
                "n_has_failure": j["per_class"][cmp.HAS_FAILURE]["n_items"],
                "no_failure": pct(j["per_class"][cmp.NO_FAILURE]["agreement"]),
                "n_no_failure": j["per_class"][cmp.NO_FAILURE]["n_items"],
                "kappa": num(j["kappa"]),
                "kappa_why": _why(j["kappa"]),
                "n_tied": j["n_tied"],
                "n_not_judged": j["n_not_judged"],
                "n_parse_failed": j["n_parse_failed"],
                "confusion": confusion_matrix_svg(
                    title=f"{j['judge']} vs human majority",
                    row_labels=list(cmp.CLASSES),
                    col_labels=list(cmp.CLASSES),
                    counts=j["confusion"]["counts"],
                    row_title="human majority",
                    col_title="judge",
                    id_prefix=f"confusion-{j['judge']}",
                ),
            }
        )
    names = [j["judge"] for j in judges]
    context = {
        "study": study_obj,
        "report": report,
        "rows": rows,
        "chart": chart,
        "matrix": _pair_matrix(names, report["pairs"]),
        "judge_names": names,
        "all_judges": Judge.objects.order_by("name"),
        "chosen": request.GET.getlist("judge"),
    }
    return render(request, "judging/compare/study.html", context)


@researcher_required
def judges(request: HttpRequest) -> HttpResponse:
    chosen = _chosen_judges(request)
    judge_list = chosen if chosen is not None else list(Judge.objects.order_by("name"))
    study_obj = None
    if request.GET.get("study", "").isdigit():
        study_obj = get_object_or_404(Study, pk=int(request.GET["study"]))
    report = sel.judge_pair_comparison(judges=judge_list, study=study_obj)
    context = {
        "report": report,
        "matrix": _pair_matrix(report["judges"], report["pairs"]),
        "judge_names": report["judges"],
        "study": study_obj,
        "all_judges": Judge.objects.order_by("name"),
        "chosen": request.GET.getlist("judge"),
    }
    return render(request, "judging/compare/judges.html", context)


@researcher_required
def rankings(request: HttpRequest) -> HttpResponse:
    chosen = _chosen_judges(request)
    judge_list = chosen if chosen is not None else list(Judge.objects.order_by("name"))
    dataset = None
    if request.GET.get("dataset", "").isdigit():
        dataset = get_object_or_404(Dataset, pk=int(request.GET["dataset"]))
    report = sel.generator_rankings(judges=judge_list, dataset=dataset)
    by_judge = {j["judge"]: {r["generator"]: r for r in j["ranking"]} for j in report["judges"]}
    table = [
        {"generator": g, "cells": [by_judge[j["judge"]].get(g) for j in report["judges"]]}
        for g in report["generators"]
    ]
    first = report["judges"][0]["judge"] if report["judges"] else None
    if first:
        table.sort(
            key=lambda row: (
                row["cells"][0] is None,
                row["cells"][0]["rank"] if row["cells"][0] else 0,
                row["generator"],
            )
        )
    taus = [{**t, "tau_text": num(t["tau"]), "why": _why(t["tau"])} for t in report["kendall_tau"]]
    charts = [
        bar_chart_svg(
            title=f"How2Score under {j['judge']}",
            labels=[r["generator"] for r in j["ranking"]],
            values=[r["how2score_percent"] for r in j["ranking"]],
            value_range=(0.0, 100.0),
            value_format="{:.1f}",
            axis_label="How2Score (%)",
            id_prefix=f"how2score-{j['judge']}",
        )
        for j in report["judges"]
        if j["ranking"]
    ]
    context = {
        "report": report,
        "table": table,
        "taus": taus,
        "dataset": dataset,
        "charts": charts,
        "datasets": Dataset.objects.order_by("name", "version")[:100],
        "all_judges": Judge.objects.order_by("name"),
        "chosen": request.GET.getlist("judge"),
    }
    return render(request, "judging/compare/rankings.html", context)


@researcher_required
def leaderboard(request: HttpRequest) -> HttpResponse:
    study_obj = None
    if request.GET.get("study", "").isdigit():
        study_obj = get_object_or_404(Study, pk=int(request.GET["study"]))
    report = sel.judge_leaderboard(judges=_chosen_judges(request), study=study_obj)
    rows = [
        {
            **r,
            "agreement_text": pct(r["agreement"]),
            "has_failure_text": pct(r["agreement_has_failure"]),
            "no_failure_text": pct(r["agreement_no_failure"]),
            "kappa_text": num(r["kappa"]),
            "parse_failure_text": pct(r["parse_failure_rate"]),
            "failure_text": pct(r["failure_rate"]),
            "verbosity_text": num(r["verbosity"], 2),
            "verbosity_no_failure_text": num(r["verbosity_no_failure"], 2),
            "verbosity_has_failure_text": num(r["verbosity_has_failure"], 2),
        }
        for r in report["rows"]
    ]
    chart = (
        bar_chart_svg(
            title="Agreement with the human majority",
            labels=[r["judge"] for r in rows],
            values=[r["agreement"]["value"] for r in rows],
            value_range=(0.0, 1.0),
            value_format="{:.1%}",
            axis_label=f"share of items of {study_obj.name}",
            id_prefix="leaderboard-agreement",
        )
        if study_obj is not None and rows
        else ""
    )
    context = {
        "rows": rows,
        "study": study_obj,
        "chart": chart,
        "studies": Study.objects.order_by("-created_at")[:100],
    }
    return render(request, "judging/compare/leaderboard.html", context)
