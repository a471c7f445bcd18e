"""What the prompt-version comparison page shows: :func:`validation.prompt_versions.reads.
prompt_version_comparison` formatted once (:mod:`core.formatting`)."""

from __future__ import annotations

from typing import Any

from annotation.models import Study
from core.formatting import Missing, fmt_interval, fmt_number, fmt_percent, fmt_stat
from judging.models import Judge
from validation.prompt_versions.reads import prompt_version_comparison

PICK_LIMIT = 100


def _cell(stat: dict, *, percent: bool = False) -> dict[str, str]:
    ci = stat.get("ci") or {}
    interval = fmt_interval(stat) or ""
    if percent and ci.get("low") is not None:
        interval = f"95% CI {fmt_percent(ci['low'])} – {fmt_percent(ci['high'])}"
    return {"value": fmt_stat(stat, percent=percent), "ci": interval}


def _omega(stat: dict) -> dict[str, str]:
    if stat.get("value") is None:
        return {"value": Missing(stat.get("undefined") or "no alt-test"), "ci": ""}
    verdict = "passes" if stat["passed"] else "does not pass"
    return {
        "value": fmt_number(stat["value"], 2),
        "ci": f"{verdict} (ε = {stat['epsilon']:g}, {stat['n_annotators']} annotators)",
    }


def _mcnemar(test: dict | None) -> dict[str, str]:
    if test is None:
        return {"value": "the judge chosen", "ci": ""}
    if not test["n"]:
        return {"value": Missing("no item both judged"), "ci": ""}
    return {
        "value": f"p = {fmt_number(test['p_value'])}",
        "ci": f"{test['n']} items; right only with the chosen judge {test['n_a_only']}, "
        f"only with this version {test['n_b_only']}",
    }


def prompt_versions_page_context(
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
    report = prompt_version_comparison(study=study, judge=judge, n_resamples=n_resamples, seed=seed)
    context["report"] = report
    context["rows"] = [
        {
            "label": v["label"],
            "version_id": v["prompt_version_id"],
            "note": v["note"],
            "judge": v["judge"],
            "chosen": v["judge"] == judge.name,
            "n": v["n_compared"],
            "cells": [
                _cell(v["agreement"], percent=True),
                _cell(v["kappa"]),
                _cell(v["gwet_ac1"]),
                _omega(v["alt_test_winning_rate"]),
                _mcnemar(v.get("mcnemar")),
            ],
        }
        for v in report["versions"]
    ]
    return context
