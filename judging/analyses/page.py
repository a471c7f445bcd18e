"""What the analyses pages show: the reports of :mod:`judging.analyses.reads` formatted
once, their plots (:mod:`core.charts`) and the flat tables
their CSV exports write."""

from __future__ import annotations

from typing import Any

from core.charts import bar_chart_svg, line_chart_svg
from core.formatting import fmt_number, fmt_percent
from judging.analyses.checkpoints import PROXIES


def _ci(block: dict, scale: float = 100.0) -> str:
    ci = block.get("ci") or {}
    if ci.get("low") is None:
        return ""
    return f"{scale * ci['low']:.1f} – {scale * ci['high']:.1f}"


def _or_text(term: dict) -> str:
    return f"{term['odds_ratio']:.3f} [{term['ci_low']:.3f}, {term['ci_high']:.3f}]"


# --- difficulty regression (D.5) -------------------------------------------------------------


def difficulty_context(report: dict) -> dict[str, Any]:
    rows = []
    for model in [*report["models"], report["overall"]]:
        if model.get("undefined"):
            rows.append(
                {"generator": model["generator"], "n": model["n"], "why": model["undefined"]}
            )
            continue
        rows.append(
            {
                "generator": model["generator"],
                "n": model["n"],
                "n_dropped": model["n_dropped"],
                "score": fmt_percent(model["how2score"]),
                "terms": [
                    {
                        "text": _or_text(t),
                        "significant": t["significant"],
                        "p": f"{t['p_value']:.3g}",
                    }
                    for t in model["covariates"]
                ],
                "topics": model["topics"],
                "baseline": model["baseline_topic"],
            }
        )
    fitted = [m for m in [*report["models"], report["overall"]] if not m.get("undefined")]
    chart = ""
    if fitted:
        chart = bar_chart_svg(
            title="Odds ratio of no_failure per +1 reference step, 95% Wald CIs",
            labels=[m["generator"] for m in fitted],
            values=[m["covariates"][0]["odds_ratio"] for m in fitted],
            intervals=[
                (m["covariates"][0]["ci_low"], m["covariates"][0]["ci_high"]) for m in fitted
            ],
            value_format="{:.3f}",
            axis_label="odds ratio (1 = no effect; below 1: more steps, fewer no_failure)",
            id_prefix="difficulty-or",
        )
    return {"rows": rows, "chart": chart}


def difficulty_csv_rows(report: dict) -> list[dict[str, Any]]:
    out = []
    for model in [*report["models"], report["overall"]]:
        if model.get("undefined"):
            out.append(
                {"generator": model["generator"], "n": model["n"], "undefined": model["undefined"]}
            )
            continue
        for t in [*model["covariates"], *model["topics"]]:
            out.append(
                {
                    "generator": model["generator"],
                    "n": model["n"],
                    "term": t.get("name") or f"topic={t['topic']} (vs {model['baseline_topic']})",
                    **{k: t[k] for k in ("coef", "odds_ratio", "ci_low", "ci_high", "p_value")},
                }
            )
    return out


DIFFICULTY_COLUMNS = (
    "generator",
    "n",
    "term",
    "coef",
    "odds_ratio",
    "ci_low",
    "ci_high",
    "p_value",
    "undefined",
)


# --- breakdowns ------------------------------------------------------------------------------


def breakdown_context(report: dict) -> dict[str, Any]:
    generators = sorted({c["generator"] for c in report["cells"]})
    by_cell = {(c["generator"], c["group"]): c for c in report["cells"]}
    table = [
        {
            "group": group,
            "cells": [
                None
                if (g, group) not in by_cell
                else {
                    "score": fmt_percent(by_cell[(g, group)]["how2score"]),
                    "ci": _ci(by_cell[(g, group)]),
                    "n": by_cell[(g, group)]["n"],
                    "tokens": fmt_number(
                        by_cell[(g, group)]["avg_generated_tokens"], 1, undefined="—"
                    ),
                }
                for g in generators
            ],
        }
        for group in report["groups"]
    ]
    charts = []
    for g in generators:
        cells = [by_cell[(g, group)] for group in report["groups"] if (g, group) in by_cell]
        charts.append(
            bar_chart_svg(
                title=f"How2Score of {g} by {report['label'].lower()}, 95% bootstrap CIs",
                labels=[c["group"] for c in cells],
                values=[100 * c["how2score"] for c in cells],
                intervals=[
                    (100 * c["ci"]["low"], 100 * c["ci"]["high"])
                    if c["ci"].get("low") is not None
                    else None
                    for c in cells
                ],
                value_range=(0.0, 100.0),
                value_format="{:.1f}",
                axis_label="How2Score (%)",
                id_prefix=f"breakdown-{report['by']}-{g}",
            )
        )
    return {"generators": generators, "table": table, "charts": charts}


BREAKDOWN_COLUMNS = (
    "generator",
    "group",
    "n",
    "n_no_failure",
    "how2score",
    "ci_low",
    "ci_high",
    "avg_generated_tokens",
)


def breakdown_csv_rows(report: dict) -> list[dict[str, Any]]:
    return [
        {**c, "ci_low": (c.get("ci") or {}).get("low"), "ci_high": (c.get("ci") or {}).get("high")}
        for c in report["cells"]
    ]


# --- checkpoints (Figure 1b, D.3) ------------------------------------------------------------


def checkpoint_context(report: dict) -> dict[str, Any]:
    log_x = report["axis"] == "flops"
    families = report["families"]
    points = [p for f in families for p in f["checkpoints"]]
    if not points:
        return {"scaling_chart": "", "proxy_chart": "", "table": []}
    scaling = line_chart_svg(
        title="How2Score over training, one line per family",
        series=[
            (
                f["family"],
                [(p["x"], 100 * p["how2score"], p["generator"]) for p in f["checkpoints"]],
            )
            for f in families
        ],
        x_label="training step" if report["axis"] == "step" else "training FLOPs",
        y_label="How2Score (%)",
        y_range=(0.0, 100.0),
        log_x=log_x,
        id_prefix="checkpoint-scaling",
    )
    proxies = line_chart_svg(
        title="Formatting proxies over training (D.3)",
        series=[
            (
                f"{f['family']} · {label}",
                [(p["x"], 100 * (p[key] or 0.0), p["generator"]) for p in f["checkpoints"]],
            )
            for f in families
            for key, label in PROXIES
        ],
        x_label="training step" if report["axis"] == "step" else "training FLOPs",
        y_label="rate (%)",
        y_range=(0.0, max([100 * (p[k] or 0.0) for p in points for k, _ in PROXIES] + [1.0])),
        log_x=log_x,
        id_prefix="checkpoint-proxies",
    )
    table = [
        {
            "family": f["family"],
            "generator": p["generator"],
            "size": p.get("size") or "",
            "stage": p.get("stage") or "",
            "x": p["x"],
            "score": fmt_percent(p["how2score"]),
            "ci": _ci(p),
            "n": p["n"],
            "tokens": fmt_number(p["avg_generated_tokens"], 1, undefined="—"),
            "proxies": [fmt_percent(p[key]) for key, _ in PROXIES],
        }
        for f in families
        for p in f["checkpoints"]
    ]
    return {"scaling_chart": scaling, "proxy_chart": proxies, "table": table}


CHECKPOINT_COLUMNS = (
    "family", "generator", "size", "stage", "step", "flops", "n", "how2score", "ci_low",
    "ci_high", "avg_generated_tokens", "step_count_mismatch", "duplicate_steps", "dup_ngram_rate",
)  # fmt: skip


def checkpoint_csv_rows(report: dict) -> list[dict[str, Any]]:
    return [
        {
            **p,
            "family": f["family"],
            "ci_low": (p.get("ci") or {}).get("low"),
            "ci_high": (p.get("ci") or {}).get("high"),
        }
        for f in report["families"]
        for p in f["checkpoints"]
    ]


# --- orderings (D.4) -------------------------------------------------------------------------


def orderings_context(report: dict) -> dict[str, Any]:
    rows = report["rows"]
    chart = ""
    if rows:
        chart = line_chart_svg(
            title="Checkpoint ranks: How2Score against the supplied column",
            series=[
                (
                    "checkpoints",
                    sorted((r["rank_value"], r["rank_how2score"], r["generator"]) for r in rows),
                )
            ],
            x_label="rank by the supplied column (1 = best)",
            y_label="rank by How2Score (1 = best)",
            value_format="{:.1f}",
            id_prefix="orderings-ranks",
        )
    return {"chart": chart}


ORDERING_COLUMNS = ("generator", "how2score", "value", "rank_how2score", "rank_value")
