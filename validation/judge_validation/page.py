"""What the judge validation page shows: the report of :mod:`validation.judge_validation.reads`
formatted once (:mod:`core.formatting`) and its plot (:mod:`core.charts`)."""

from __future__ import annotations

from typing import Any

from annotation.models import Study
from core.charts import bar_chart_svg, confusion_matrix_svg
from core.formatting import Missing, fmt_interval, fmt_stat
from judging import agreement as cmp
from judging.models import Judge
from validation.alt_test.reads import label_categories
from validation.judge_validation import reads as sel
from validation.probes import page as probes_page

PICK_LIMIT = 100


def _cell(stat: dict | None, *, percent: bool = False) -> dict[str, str]:
    """A statistic as text with its interval (or the reason it is undefined)."""
    stat = stat or {}
    ci = stat.get("ci") or {}
    interval = fmt_interval(stat) or ""
    if percent and ci.get("low") is not None:
        interval = f"95% CI {100 * ci['low']:.1f} – {100 * ci['high']:.1f}%"
    return {
        "value": fmt_stat(stat, percent=percent),
        "ci": interval,
        "why": stat.get("undefined") or "",
    }


def _interval(stat: dict) -> tuple[float, float] | None:
    ci = stat.get("ci") or {}
    return (ci["low"], ci["high"]) if ci.get("low") is not None else None


def _row(name: str, block: dict) -> dict[str, Any]:
    """Agreement, per class, κ and AC1 of one predictor, as cells in the table's order."""
    return {
        "name": name,
        "n": block["n_compared"],
        "cells": [
            _cell(block["agreement"], percent=True),
            _cell(block["per_class"][cmp.HAS_FAILURE], percent=True),
            _cell(block["per_class"][cmp.NO_FAILURE], percent=True),
            _cell(block["kappa"]),
            _cell(block["gwet_ac1"]),
        ],
    }


def _chart(report: dict) -> str:
    """Agreement with the human majority, with 95% CIs: the judge, the constant baselines and
    each annotator's leave-one-out agreement."""
    labels, values, intervals = [], [], []
    for name, stat in (
        (f"{report['judge']['name']} · overall", report["agreement"]),
        (f"{report['judge']['name']} · has_failure", report["per_class"][cmp.HAS_FAILURE]),
        (f"{report['judge']['name']} · no_failure", report["per_class"][cmp.NO_FAILURE]),
        *((b["predictor"], b["agreement"]) for b in report["baselines"]),
        *(
            (f"annotator {a['annotator_id']} (LOO)", a["agreement"])
            for a in report["leave_one_out"]["annotators"]
        ),
    ):
        labels.append(name)
        values.append(stat.get("value"))
        intervals.append(_interval(stat))
    return bar_chart_svg(
        title="Agreement with the human majority, 95% bootstrap CIs",
        labels=labels,
        values=values,
        intervals=intervals,
        value_range=(0.0, 1.0),
        value_format="{:.1%}",
        axis_label="share of compared items",
        id_prefix="validation-bars",
    )


def validation_page_context(
    *, study: Study | None, judge: Judge | None, n_resamples: int = 1000, seed: int = 0
) -> dict[str, Any]:
    context: dict[str, Any] = {
        "studies": Study.objects.order_by("-created_at")[:PICK_LIMIT],
        "judges": Judge.objects.order_by("name"),
        "study": study,
        "judge": judge,
        "report": None,
    }
    if study is None or judge is None:
        return context
    context["plan_default_k"] = label_categories(study)  # the planner's K, from the data
    report = sel.judge_validation(study=study, judge=judge, n_resamples=n_resamples, seed=seed)
    context["probes"] = probes_page.probes_context(  # calibration and length bias (§5)
        study=study, judge=judge, n_resamples=n_resamples, seed=seed
    )
    loo = report["leave_one_out"]
    if report["versus_humans"]["position"] == "undefined":  # the API's word; the page says why
        why = "not placed: the judge or the annotators have no agreement on these items"
        report = {**report, "versus_humans": {**report["versus_humans"], "position": Missing(why)}}
    context.update(
        report=report,
        rows=[
            _row(report["judge"]["name"], report),
            *(_row(b["predictor"], b) for b in report["baselines"]),
        ],
        loo_rows=[
            {
                "annotator": a["annotator_id"],
                "n": a["n_compared"],
                "agreement": _cell(a["agreement"], percent=True),
            }
            for a in loo["annotators"]
        ],
        loo_range=(fmt_stat(loo["min"], percent=True), fmt_stat(loo["max"], percent=True)),
        human_alpha=_cell(report["human"]["alpha"]),
        human_ac1=_cell(report["human"]["gwet_ac1"]),
        pairs=[
            {
                "other": p["judge_b"],
                "n": p["n_shared"],
                "cells": [
                    _cell(p["agreement"], percent=True),
                    _cell(p["kappa"]),
                    _cell(p["gwet_ac1"]),
                ],
            }
            for p in report["judge_pairs"]
        ],
        taus=[
            {
                "other": t["judge_b"] if t["judge_a"] == judge.name else t["judge_a"],
                "n": t["n_common"],
                "n_items": t.get("n_items"),
                "tau": _cell(t["tau"]),
            }
            for t in report["ranking_tau"]
        ],
        chart=_chart(report),
        confusion=confusion_matrix_svg(
            title=f"{judge.name} vs human majority",
            row_labels=list(cmp.CLASSES),
            col_labels=list(cmp.CLASSES),
            counts=report["confusion"]["counts"],
            row_title="human majority",
            col_title="judge",
            id_prefix="validation-confusion",
        ),
    )
    return context
