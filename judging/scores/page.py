"""The How2Score-with-uncertainty tables and plots of the generator rankings page: per judge,
generators ranked with 95% bootstrap CIs, average generated tokens, and whether each differs
significantly from the next one (:mod:`judging.scores.reads`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from benchmarks.models import Dataset
from core.charts import bar_chart_svg
from core.formatting import fmt_number, fmt_percent
from judging.models import Judge
from judging.scores.reads import how2score_uncertainty


def _ci_text(block: dict) -> str:
    ci = block.get("ci") or {}
    if ci.get("low") is None:
        return ""
    return f"{100 * ci['low']:.1f} – {100 * ci['high']:.1f}"


def uncertainty_block(*, judge: Judge, dataset: Dataset | None) -> dict[str, Any]:
    report = how2score_uncertainty(judge=judge, dataset=dataset)
    versus_next = {t["generator_a"]: t for t in report["neighbours"]}
    rows = []
    for g in report["generators"]:
        test = versus_next.get(g["generator"])
        rows.append(
            {
                "rank": g["rank"],
                "generator": g["generator"],
                "score": fmt_number(g["how2score_percent"], 1),
                "ci": _ci_text(g),
                "n": g["n_examples"],
                "n_parse_failed": g["n_parse_failed"],
                "tokens": fmt_number(g["avg_generated_tokens"], 1, undefined="—"),
                "next": None
                if test is None
                else {
                    "generator": test["generator_b"],
                    "n": test["n_common"],
                    # no test to show: say what is missing instead of "Δ — pts … n 0"
                    "why": "no candidates judged for both"
                    if not test["n_common"] or test["difference"] is None
                    else "",
                    "difference": fmt_number(
                        None if test["difference"] is None else 100 * test["difference"], 1
                    ),
                    "p_holm": fmt_number(test["p_holm"], 3),
                    "significant": test["significant"],
                },
                "topics": [
                    {
                        "topic": t["topic"] or "(no topic)",
                        "score": fmt_percent(t["how2score"]),
                        "ci": _ci_text(t),
                        "n": t["n_examples"],
                    }
                    for t in g["by_topic"]
                ],
            }
        )
    scored = [g for g in report["generators"] if g["n_examples"]]
    chart = bar_chart_svg(
        title=f"How2Score under {judge.name}, 95% bootstrap CIs",
        labels=[g["generator"] for g in scored],
        values=[g["how2score_percent"] for g in scored],
        intervals=[
            (100 * g["ci"]["low"], 100 * g["ci"]["high"])
            if g["ci"].get("low") is not None
            else None
            for g in scored
        ],
        value_range=(0.0, 100.0),
        value_format="{:.1f}",
        axis_label="How2Score (%)",
        id_prefix=f"how2score-ci-{judge.pk}",
    )
    return {
        "judge": judge.name,
        "rows": rows,
        "chart": chart if scored else "",
        "note": report["multiple_comparisons"],
    }


def uncertainty_blocks(*, judges: Sequence[Judge], dataset: Dataset | None) -> list[dict]:
    return [uncertainty_block(judge=j, dataset=dataset) for j in judges]
