"""What the comparison pages show: the template contexts of :mod:`validation.comparisons.views`,
built from the numbers of :mod:`validation.comparisons.reads` and the plots of
:mod:`core.charts` (statistics formatted once, by :mod:`core.formatting`)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from annotation.models import Study
from benchmarks.models import Dataset
from core.charts import bar_chart_svg, confusion_matrix_svg
from core.formatting import DASH, fmt_interval
from core.formatting import fmt_stat as _fmt_stat
from judging import agreement as cmp
from judging.models import Judge
from judging.scores import page as scores_pages
from judging.selectors.verdicts import judges_named
from validation.comparisons import reads as sel

PICK_LIMIT = 100  # studies and datasets offered in the pickers
# An undefined statistic shows as "—" in these tables (its reason is the cell's title, "why").
fmt_stat = partial(_fmt_stat, undefined=DASH)


def _why(stat: dict | None) -> str:
    return (stat or {}).get("undefined") or ""


def _all_judges():
    return Judge.objects.order_by("name")


def pair_matrix(judge_names: list[str], pairs: list[dict]) -> list[dict]:
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
                    "agreement": fmt_stat(p["agreement"], percent=True),
                    "kappa": fmt_stat(p["kappa"]),
                    "n": p["n_shared"],
                    "why": _why(p["agreement"]),
                }
            )
        rows.append({"judge": a, "cells": cells})
    return rows


def index_context() -> dict:
    return {
        "studies": Study.objects.order_by("-created_at")[:PICK_LIMIT],
        "judges": _all_judges(),
        "datasets": Dataset.objects.order_by("name", "version")[:PICK_LIMIT],
    }


# --- judges vs the human majority of a study ----------------------------------------------------


def _agreement_chart(judges: list[dict]) -> str:
    """Bars of each judge's agreement with the majority: overall and per majority class."""
    if not judges:
        return ""
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
    return bar_chart_svg(
        title="Agreement with the human majority",
        labels=labels,
        values=values,
        value_range=(0.0, 1.0),
        value_format="{:.1%}",
        axis_label="share of items (tied majorities excluded)",
        id_prefix="agreement-bars",
    )


def _judge_row(j: dict) -> dict:
    """One judge's row of the study comparison, with its confusion matrix."""
    return {
        "judge": j["judge"],
        "model": j["model"],
        "n_compared": j["n_compared"],
        "n_agree": j["n_agree"],
        "agreement": fmt_stat(j["agreement"], percent=True),
        "why": _why(j["agreement"]),
        "has_failure": fmt_stat(j["per_class"][cmp.HAS_FAILURE]["agreement"], percent=True),
        "n_has_failure": j["per_class"][cmp.HAS_FAILURE]["n_items"],
        "no_failure": fmt_stat(j["per_class"][cmp.NO_FAILURE]["agreement"], percent=True),
        "n_no_failure": j["per_class"][cmp.NO_FAILURE]["n_items"],
        "kappa": fmt_stat(j["kappa"]),
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


def study_page_context(*, study: Study, chosen: Sequence[str]) -> dict:
    """Judges (the ``chosen`` names, else every judge with verdicts) against the study's
    human majority."""
    report = sel.study_comparison(study=study, judges=judges_named(chosen))
    judges = report["judges"]
    names = [j["judge"] for j in judges]
    return {
        "study": study,
        "report": report,
        "rows": [_judge_row(j) for j in judges],
        "chart": _agreement_chart(judges),
        "matrix": pair_matrix(names, report["pairs"]),
        "judge_names": names,
        "all_judges": _all_judges(),
        "chosen": list(chosen),
    }


# --- judge ↔ judge, rankings ----------------------------------------------------------------


def judges_page_context(*, study: Study | None, chosen: Sequence[str]) -> dict:
    """Agreement between judges (the ``chosen`` names, else all), on a study's items or on
    everything they judged."""
    judges = judges_named(chosen)
    report = sel.judge_pair_comparison(
        judges=judges if judges is not None else list(_all_judges()), study=study
    )
    return {
        "report": report,
        "matrix": pair_matrix(report["judges"], report["pairs"]),
        "judge_names": report["judges"],
        "study": study,
        "all_judges": _all_judges(),
        "chosen": list(chosen),
    }


def _ranking_table(report: dict) -> list[dict]:
    """Generators × judges (rank cells), ordered by the first judge's ranking."""
    by_judge = {j["judge"]: {r["generator"]: r for r in j["ranking"]} for j in report["judges"]}
    table = [
        {"generator": g, "cells": [by_judge[j["judge"]].get(g) for j in report["judges"]]}
        for g in report["generators"]
    ]
    if report["judges"] and report["judges"][0]["judge"]:
        table.sort(
            key=lambda row: (
                row["cells"][0] is None,
                row["cells"][0]["rank"] if row["cells"][0] else 0,
                row["generator"],
            )
        )
    return table


def rankings_page_context(*, dataset: Dataset | None, chosen: Sequence[str]) -> dict:
    """Generator rankings by How2Score under each judge, and Kendall's τ between them."""
    judges = judges_named(chosen)
    judges = judges if judges is not None else list(_all_judges())
    report = sel.generator_rankings(judges=judges, dataset=dataset)
    taus = [
        {
            **t,
            "tau_text": fmt_stat(t["tau"]),
            "tau_ci": fmt_interval(t["tau"]) or "",
            "why": _why(t["tau"]),
        }
        for t in report["kendall_tau"]
    ]
    # one plot per judge: How2Score with its 95% bootstrap CI per generator
    uncertainty = scores_pages.uncertainty_blocks(judges=judges, dataset=dataset)
    charts = [block["chart"] for block in uncertainty if block["chart"]]
    return {
        "report": report,
        "table": _ranking_table(report),
        "taus": taus,
        "dataset": dataset,
        "charts": charts,
        "uncertainty": uncertainty,
        "datasets": Dataset.objects.order_by("name", "version")[:PICK_LIMIT],
        "all_judges": _all_judges(),
        "chosen": list(chosen),
    }
