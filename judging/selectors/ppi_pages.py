"""What the PPI section of the rankings page shows: :func:`judging.selectors.ppi_rankings.
ppi_rankings` formatted once, with the study and judge pickers (defaults: the newest
critical-failure study with labels, the first judge)."""

from __future__ import annotations

from typing import Any

from annotation.models import Annotation, Study
from core.errors import FieldRefusal
from judging.models import Judge
from judging.selectors.ppi_rankings import ppi_rankings

PICK_LIMIT = 100


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _ci(ci: list[float] | None) -> str:
    """A How2Score interval in percent, clipped to 0–100 (the normal interval may leave it)."""
    if ci is None:
        return "—"
    low, high = max(0.0, ci[0]), min(1.0, ci[1])
    return f"{100 * low:.1f} – {100 * high:.1f}"


def _cells(r: dict[str, Any]) -> dict[str, Any]:
    return {
        "ppi": _pct(r["how2score"]),
        "ppi_ci": _ci(r["ci"]),
        "judge": _pct(r["judge_only_how2score"]),
        "judge_ci": _ci(r["judge_only_ci"]),
        "human": _pct(r["human_only_how2score"]),
        "human_ci": _ci(r["human_only_ci"]),
        "n_labelled": r["n_labelled"],
        "n_unlabelled": r["n_unlabelled"],
        "why": r.get("undefined") or r.get("lambda_note") or "",
    }


def ppi_context(*, study: Study | None, judge: Judge | None, dataset=None) -> dict[str, Any]:
    studies = list(
        Study.objects.filter(form_type="critical_failure").order_by("-created_at")[:PICK_LIMIT]
    )
    judges = list(Judge.objects.order_by("name")[:PICK_LIMIT])
    if study is None:
        labelled = set(Annotation.objects.values_list("item__study_id", flat=True).distinct())
        study = next((s for s in studies if s.pk in labelled), None)
    if judge is None and judges:
        judge = judges[0]
    context: dict[str, Any] = {
        "ppi_studies": studies,
        "ppi_judges": judges,
        "ppi_study": study,
        "ppi_judge": judge,
        "ppi_dataset": dataset,
        "ppi": None,
        "ppi_error": "",
    }
    if study is None or judge is None:
        return context
    try:
        report = ppi_rankings(study=study, judge=judge, dataset=dataset)
    except FieldRefusal as exc:
        context["ppi_error"] = str(exc)
        return context
    context.update(
        ppi=report,
        ppi_rows=[
            {
                "rank": r["rank"],
                "generator": r["generator"],
                **_cells(r),
                "topics": [{"topic": t["topic"], **_cells(t)} for t in r["topics"]],
            }
            for r in report["generators"]
        ],
    )
    return context
