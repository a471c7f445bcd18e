"""What the PPI section of the rankings page shows: :func:`validation.ppi.reads.
ppi_rankings` formatted once, with the study and judge pickers (defaults: the judge whose runs
scored the most generations, the critical-failure study that labelled the most of them)."""

from __future__ import annotations

from typing import Any

from django.db.models import Count

from annotation.models import Study, StudyItem
from core.charts import bar_chart_svg
from core.errors import FieldRefusal
from judging.models import Judge, JudgeRunItem
from validation.ppi.reads import ppi_rankings
from validation.ppi.words import ppi_sentences

PICK_LIMIT = 100


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}"


def _ci(ci: list[float] | None) -> str:
    """A How2Score interval in percent, clipped to 0–100 (the normal interval may leave it)."""
    if ci is None:
        return "—"
    low, high = max(0.0, ci[0]), min(1.0, ci[1])
    return f"{100 * low:.1f} – {100 * high:.1f}"


def forest_svg(r: dict[str, Any], *, name: str, prefix: str) -> str:
    """A small forest plot of one PPI result: the corrected How2Score, the judge-only and the
    people-only figures, each with its 95% interval (clipped to 0–100)."""

    def clip(ci):
        return None if ci is None else (100 * max(0.0, ci[0]), 100 * min(1.0, ci[1]))

    def value(v):
        return None if v is None else 100 * v

    return bar_chart_svg(
        title=f"How2Score of {name}: corrected, judge only, people only",
        labels=["PPI++ corrected", "judge only", "people only"],
        values=[
            value(r["how2score"]),
            value(r["judge_only_how2score"]),
            value(r["human_only_how2score"]),
        ],
        intervals=[clip(r["ci"]), clip(r["judge_only_ci"]), clip(r["human_only_ci"])],
        value_range=(0.0, 100.0),
        value_format="{:.1f}",
        axis_label="How2Score (%), 95% interval",
        id_prefix=prefix,
        width=480,
    )


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
        "lam": "—" if r.get("lambda") is None else f"{r['lambda']:.2f}",
        "why": r.get("undefined") or r.get("lambda_note") or "",
        "note": r.get("lambda_note", ""),
    }


def _busiest_judge(items=None) -> Judge | None:
    """The judge whose runs scored the most generations (of ``items``' generations if given)."""
    rows = JudgeRunItem.objects.filter(judgment__isnull=False)
    if items is not None:
        rows = rows.filter(generation_id__in=items.values("generation_id"))
    top = (
        rows.values("judgment__judge_key")
        .annotate(n=Count("id"))
        .order_by("-n", "judgment__judge_key")
        .first()
    )
    if top is None:
        return None
    return Judge.objects.filter(judge_id=top["judgment__judge_key"]).order_by("name").first()


def _study_for(judge: Judge) -> Study | None:
    """The critical-failure study with labels on the most generations this judge scored."""
    top = (
        StudyItem.objects.filter(
            study__form_type="critical_failure",
            kind=StudyItem.Kind.REGULAR,
            annotations__isnull=False,
            generation__judge_run_items__judgment__judge_key=judge.judge_id,
        )
        .values("study_id")
        .annotate(n=Count("id", distinct=True))
        .order_by("-n", "-study_id")
        .first()
    )
    return None if top is None else Study.objects.get(pk=top["study_id"])


def ppi_context(*, study: Study | None, judge: Judge | None, dataset=None) -> dict[str, Any]:
    studies = list(
        Study.objects.filter(form_type="critical_failure").order_by("-created_at")[:PICK_LIMIT]
    )
    judges = list(Judge.objects.order_by("name")[:PICK_LIMIT])
    if judge is None:  # the judge that scored most (of the chosen study, if one is)
        items = None if study is None else StudyItem.objects.filter(study=study)
        judge = _busiest_judge(items) or (judges[0] if judges else None)
    if study is None and judge is not None:
        study = _study_for(judge)
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
                "sentences": ppi_sentences(r, judge=judge.name, group=r["generator"]),
                "chart": forest_svg(r, name=r["generator"], prefix=f"ppi-forest-{i}"),
            }
            for i, r in enumerate(report["generators"])
        ],
    )
    return context


EXPORT_FIELDS = ("study_id", "judge", "generator", "topic", "how2score", "ci_low", "ci_high",
                 "failure_rate", "judge_only_how2score", "judge_only_ci_low",
                 "judge_only_ci_high", "human_only_how2score", "human_only_ci_low",
                 "human_only_ci_high", "n_labelled", "n_unlabelled", "note")  # fmt: skip


def _export_row(report: dict, generator: str, topic: str, r: dict) -> dict[str, Any]:
    def bound(ci, k):
        return None if ci is None else ci[k]

    return {
        "study_id": report["study"]["id"], "judge": report["judge"]["name"],
        "generator": generator, "topic": topic, "how2score": r["how2score"],
        "ci_low": bound(r["ci"], 0), "ci_high": bound(r["ci"], 1),
        "failure_rate": r["failure_rate"], "judge_only_how2score": r["judge_only_how2score"],
        "judge_only_ci_low": bound(r["judge_only_ci"], 0),
        "judge_only_ci_high": bound(r["judge_only_ci"], 1),
        "human_only_how2score": r["human_only_how2score"],
        "human_only_ci_low": bound(r["human_only_ci"], 0),
        "human_only_ci_high": bound(r["human_only_ci"], 1),
        "n_labelled": r["n_labelled"], "n_unlabelled": r["n_unlabelled"],
        "note": r.get("undefined") or r.get("lambda_note") or "",
    }  # fmt: skip


def export_rows(report: dict[str, Any]):
    """One row per generator (``topic`` empty), then one per generator and topic."""
    for r in report["generators"]:
        yield _export_row(report, r["generator"], "", r)
        for t in r["topics"]:
            yield _export_row(report, r["generator"], t["topic"], t)
