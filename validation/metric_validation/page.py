"""What the metric ↔ human validation page shows: the pickers (studies, the metrics stored on
the chosen study's generations) and the report of :mod:`validation.metric_validation.reads`
formatted once (:mod:`core.formatting`)."""

from __future__ import annotations

from typing import Any

from annotation.models import Study
from core.formatting import fmt_interval, fmt_number, fmt_stat
from validation.metric_validation import reads as sel

PICK_LIMIT = 100


def _cell(stat: dict | None, *, percent: bool = False) -> dict[str, str]:
    stat = stat or {}
    return {
        "value": fmt_stat(stat, percent=percent),
        "ci": fmt_interval(stat) or "",
        "why": stat.get("undefined") or "",
    }


def metric_validation_page_context(
    *, study: Study | None, params: dict[str, Any] | None, error: str = ""
) -> dict[str, Any]:
    studies = list(Study.objects.filter(form_type__in=sel.FORM_TYPES).order_by("-id")[:PICK_LIMIT])
    context: dict[str, Any] = {
        "studies": studies,
        "study": study,
        "metrics": sel.metrics_on_study(study=study) if study else [],
        "params": params or {},
        "error": error,
        "report": None,
    }
    if study is None or not params or error:
        return context
    options = params["options"]
    report = sel.metric_validation(
        study=study, pack=params["pack"], metric=params["metric"], **options
    )
    context["report"] = report
    if "detector" in report:
        d = report["detector"]
        context["detector_cells"] = [
            ("AUC", _cell(d["auc"])),
            ("Precision", _cell(d["precision"])),
            ("Recall", _cell(d["recall"])),
        ]
        context["threshold_text"] = (
            f"{fmt_number(d['threshold'], 3)} ({d['threshold_rule']})"
            if d["threshold"] is not None
            else d["threshold_rule"]
        )
    if "dimensions" in report:
        context["dimension_rows"] = [
            {
                "label": dim["label"],
                "n": dim["n"],
                "kappa": _cell(dim["kappa"]),
                "cuts": ", ".join(fmt_number(c, 3) for c in dim["cuts"]),
                "confusion": dim.get("confusion") or [],
                "scale": dim["scale"],
            }
            for dim in report["dimensions"]
        ]
    if "pairwise" in report:
        p = report["pairwise"]
        context["pairwise_cells"] = [
            ("% agreement", _cell(p["agreement"], percent=True)),
            ("Kendall's τ-b", _cell(p["kendall_tau"])),
        ]
    return context
