"""A pack results page, once: the report (JSON: the API, the JSON export), what the page shows
(numbers formatted by :mod:`core.formatting`, missing values as a dash with the reason), the
SVG plots (:mod:`core.charts`, the validation and rankings pages' helper) and the flat rows of
the CSV export."""

from __future__ import annotations

from typing import Any

from django.core.cache import cache

from core.charts import bar_chart_svg, line_chart_svg
from core.formatting import Missing, fmt_number
from judging.pack_results.common import NEIGHBOUR_NOTE
from judging.pack_results.reads import (
    CACHE_SECONDS,
    Selection,
    SelectionError,
    chosen_runs,
    family_runs,
    report_cache_key,
    run_instances,
)
from judging.pack_results.registry import PackPage

EXPORT_FIELDS = [
    "section",
    "title",
    "generator",
    "rank",
    "column",
    "value",
    "ci_low",
    "ci_high",
    "n",
    "vs_next",
    "difference",
    "difference_ci_low",
    "difference_ci_high",
    "p_holm",
    "significant",
]


def _run_json(run) -> dict[str, Any]:
    return {
        "id": run.pk,
        "pack": run.pack,
        "generator": run.generator.name,
        "dataset": {"id": run.dataset_id, "name": str(run.dataset)},
        "status": run.status,
        "n_done": run.n_done,
        "n_failed": run.n_failed,
    }


def results_report(*, page: PackPage, selection: Selection) -> dict[str, Any]:
    """The page's numbers as JSON (``SelectionError`` for a bad choice of runs or dataset)."""
    study = key = None
    if selection.study_id is not None:
        if page.study_instances is None:
            raise SelectionError("study", f"the {page.title} page reads no study")
        runs = []
        instances, study = page.study_instances(selection.study_id)
    else:
        runs = chosen_runs(page, selection)
        key = report_cache_key(page, selection, runs)
        cached = cache.get(key)
        if cached is not None:
            return cached
        instances = run_instances(page, runs)
    built = page.build(instances, selection.boot)
    in_no_table = built.pop("runs_in_no_table", {})  # named in the notes, not listed as shown
    worked = sorted(
        {str(i.attrs["worked_example"]) for i in instances if "worked_example" in i.attrs}
    )
    n_worked = sum(1 for i in instances if "worked_example" in i.attrs)
    report = {
        "pack": page.name,
        "title": page.title,
        "runs": [_run_json(r) for r in runs if r.pk not in in_no_table],
        "study": study,
        "generators": sorted({i.generator for i in instances}),
        "n_instances": len(instances),
        "worked_examples": {"n": n_worked, "sources": worked},
        "bootstrap": selection.boot.to_json(),
        "neighbour_tests": NEIGHBOUR_NOTE,
        **built,
    }
    if key is not None:  # not a study's labels: they change under it; runs say when they do
        cache.set(key, report, CACHE_SECONDS)
    return report


def _fmt(value, digits: int, why: str = "") -> str:
    return fmt_number(value, digits, undefined=Missing(why or "no value"))


def _ci(c: dict, digits: int) -> str:
    if c.get("low") is None:
        return ""
    return f"{fmt_number(c['low'], digits)} – {fmt_number(c['high'], digits)}"


def _next(test: dict | None, digits: int) -> dict[str, Any] | None:
    if test is None:
        return None
    if test.get("difference") is None:
        return {"generator": test["generator_b"], "why": test.get("why") or "no items in common"}
    return {
        "generator": test["generator_b"],
        "why": "",
        "difference": fmt_number(test["difference"], digits),
        "ci": _ci(test, digits),
        "p_holm": fmt_number(test["p_holm"], 3),
        "test": test["test"],
        "significant": test["significant"],
        "n": test["n_common"],
    }


def table_context(table: dict) -> dict[str, Any]:
    digits = table["digits"]
    versus = {t["generator_a"]: t for t in table["neighbours"]}
    rows = []
    for row in table["rows"]:
        rows.append(
            {
                "rank": row["rank"],
                "generator": row["generator"],
                "cells": [
                    {
                        "value": _fmt(c["value"], digits, c.get("why", "")),
                        "ci": _ci(c, digits),
                        "n": c["n"],
                        "ranked": col["key"] == table["rank_by"],
                    }
                    for col, c in ((col, row["cells"][col["key"]]) for col in table["columns"])
                ],
                "next": _next(versus.get(row["generator"]), digits),
            }
        )
    return {
        "id": table["id"],
        "title": table["title"],
        "caption": table["caption"],
        "columns": [{**col, "ranked": col["key"] == table["rank_by"]} for col in table["columns"]],
        "rows": rows,
    }


def _bar(table: dict) -> str:
    key = table["rank_by"]
    label = next(c["label"] for c in table["columns"] if c["key"] == key)
    scored = [r for r in table["rows"] if r["cells"][key]["value"] is not None]
    if not scored:
        return ""
    digits = table["digits"]
    return bar_chart_svg(
        title=f"{table['title'].split(' (')[0]}, {label}: 95% CIs",
        labels=[r["generator"] for r in scored],
        values=[r["cells"][key]["value"] for r in scored],
        intervals=[
            (r["cells"][key]["low"], r["cells"][key]["high"])
            if r["cells"][key].get("low") is not None
            else None
            for r in scored
        ],
        value_format=f"{{:.{digits}f}}",
        axis_label=label,
        id_prefix=f"pack-bar-{table['id']}",
    )


def _grouped_bar(table: dict) -> str:
    """Every column but "all" of a table as bars, one per (column, generator) — e.g. a share
    by the hint's type (CustomPlans Figs. 10–12); a builder names such tables in
    ``grouped_plots``."""
    bars = [
        (f"{col['label']} · {row['generator']}", row["cells"][col["key"]])
        for col in table["columns"]
        if col["key"] != "all"
        for row in table["rows"]
        if row["cells"][col["key"]]["value"] is not None
    ]
    if not bars:
        return ""
    return bar_chart_svg(
        title=f"{table['title']}: 95% CIs",
        labels=[label for label, _ in bars],
        values=[c["value"] for _, c in bars],
        intervals=[(c["low"], c["high"]) if c.get("low") is not None else None for _, c in bars],
        value_range=(0.0, 100.0) if table["scale"] == 100.0 else None,
        value_format=f"{{:.{table['digits']}f}}",
        id_prefix=f"pack-grouped-{table['id']}",
        width=720,
    )


def _line(curve: dict) -> str:
    series = [
        (s["generator"], [(p["x"], p["value"], p["label"]) for p in s["points"]])
        for s in curve["series"]
        if s["points"]
    ]
    if not series:
        return ""
    return line_chart_svg(
        title=curve["title"],
        series=series,
        x_label=curve["x_label"],
        y_label=curve["y_label"],
        log_x=curve["log_x"],
        y_integer=curve.get("y_integer", False),
        value_format=f"{{:.{curve['digits']}f}}",
        id_prefix=f"pack-curve-{curve['id']}",
    )


def page_context(*, page: PackPage, report: dict, selection: Selection) -> dict[str, Any]:
    tables = [table_context(t) for t in report["tables"]]
    headline = next((t for t in report["tables"] if t["id"] == report.get("headline")), None)
    grouped = [t for t in report["tables"] if t["id"] in report.get("grouped_plots", ())]
    charts = [
        c
        for c in [
            _bar(headline) if headline else "",
            *map(_grouped_bar, grouped),
            *map(_line, report["curves"]),
        ]
        if c
    ]
    curve_tables = [
        {
            "id": c["id"],
            "title": c["title"],
            "x_label": c["x_label"],
            "rows": [
                {
                    "generator": s["generator"],
                    "x": p["label"],
                    "value": _fmt(p["value"], c["digits"]),
                    "ci": _ci(p, c["digits"]),
                    "n": p["n"],
                }
                for s in c["series"]
                for p in s["points"]
            ],
        }
        for c in report["curves"]
    ]
    chosen = {r["id"] for r in report["runs"]}
    return {
        "page": page,
        "report": report,
        "tables": tables,
        "charts": charts,
        "curve_tables": curve_tables,
        "notes": report["notes"],
        "runs": family_runs(page),
        "studies": list(page.studies()) if page.studies else [],
        "chosen": chosen,
        "selection": selection,
    }


def export_rows(report: dict) -> list[dict[str, Any]]:
    """One row per table cell (the ranked column carries the test against the next one down)
    and per curve point."""
    rows = []
    for table in report["tables"]:
        versus = {t["generator_a"]: t for t in table["neighbours"]}
        for row in table["rows"]:
            test = versus.get(row["generator"]) or {}
            for col in table["columns"]:
                c = row["cells"][col["key"]]
                ranked = col["key"] == table["rank_by"] and bool(test)
                rows.append(
                    {
                        "section": table["id"],
                        "title": table["title"],
                        "generator": row["generator"],
                        "rank": row["rank"],
                        "column": col["label"],
                        "value": c["value"],
                        "ci_low": c.get("low"),
                        "ci_high": c.get("high"),
                        "n": c["n"],
                        "vs_next": test.get("generator_b") if ranked else None,
                        "difference": test.get("difference") if ranked else None,
                        "difference_ci_low": test.get("low") if ranked else None,
                        "difference_ci_high": test.get("high") if ranked else None,
                        "p_holm": test.get("p_holm") if ranked else None,
                        "significant": test.get("significant") if ranked else None,
                    }
                )
    for curve in report["curves"]:
        for s in curve["series"]:
            for p in s["points"]:
                rows.append(
                    {
                        **dict.fromkeys(EXPORT_FIELDS),
                        "section": curve["id"],
                        "title": curve["title"],
                        "generator": s["generator"],
                        "column": p["label"],
                        "value": p["value"],
                        "ci_low": p.get("low"),
                        "ci_high": p.get("high"),
                        "n": p["n"],
                    }
                )
    return rows
