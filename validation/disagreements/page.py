"""What the disagreement page and the validation page's disagreement summary show: the rows of
:mod:`validation.disagreements.reads` laid out for the templates (steps marked with who linked
them, numbers formatted once by :mod:`core.formatting`, links that keep the filters)."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.urls import reverse

from annotation.models import Study
from core.formatting import UNDEFINED_WITH_REASON, fmt_interval, fmt_stat
from judging import agreement as cmp
from judging.models import Judge
from validation.disagreements import reads as sel
from validation.disagreements import stats as dis

PICK_LIMIT = 100


def page_url(*, study: Study, judge: Judge, **query: Any) -> str:
    """The disagreement page of ``study`` + ``judge`` with ``query`` (e.g. ``kind=…``)."""
    params = {"study": study.pk, "judge": judge.name, **query}
    return reverse("validation:disagreements") + "?" + urlencode(params)


def _steps(texts: list[str], judge: list[int], people: list[int]) -> list[dict[str, Any]]:
    """Each step with whether the judge and whether an annotator linked it."""
    marked_judge, marked_people = set(judge), set(people)
    return [
        {"n": n, "text": text, "judge": n in marked_judge, "people": n in marked_people}
        for n, text in enumerate(texts, start=1)
    ]


def _overlap_text(row: dict[str, Any]) -> str:
    overlap = row["step_overlap"]
    if overlap is None:
        return ""
    return fmt_stat(overlap, digits=2, undefined=UNDEFINED_WITH_REASON)


def item_view(row: dict[str, Any]) -> dict[str, Any]:
    """One row as the item card shows it."""
    links = row["links"]
    return {
        **row,
        "kind_text": dis.KINDS[row["kind"]],
        "l1": _steps(row["reference_steps"], links["judge"]["l1"], links["people"]["l1"]),
        "l2": _steps(row["generated_steps"], links["judge"]["l2"], links["people"]["l2"]),
        "overlap_text": _overlap_text(row),
        "is_disagreement": row["kind"] in dis.DISAGREEMENTS,
    }


def overlap_view(summary: dict[str, Any]) -> dict[str, Any]:
    """The step-overlap summary as text: the mean, its CI and the counts behind it."""
    return {
        **summary,
        "value": fmt_stat(summary["mean"], digits=3),
        "ci": fmt_interval(summary["mean"]) or "",
        "why": summary["mean"].get("undefined") or "",
    }


def summary_context(*, study: Study, judge: Judge, n_resamples: int = 1000, seed: int = 0):
    """The validation page's disagreement section: the confusion table with each cell a link to
    its items, the tied / not-parsed items, and the step overlap with its CI."""
    data = sel.study_disagreements(study=study, judge=judge)
    counts = data.counts
    return {
        "study": study,
        "judge": judge,
        "confusion_rows": [
            {
                "label": label,
                "cells": [
                    {
                        "kind": kind,
                        "count": counts[kind],
                        "url": page_url(study=study, judge=judge, kind=kind),
                        "text": dis.KINDS[kind],
                    }
                    for kind in kinds
                ],
            }
            for label, kinds in zip(cmp.CLASSES, dis.CONFUSION_KINDS, strict=True)
        ],
        "columns": list(cmp.CLASSES),
        "others": [
            {
                "kind": kind,
                "count": counts[kind],
                "text": dis.KINDS[kind],
                "url": page_url(study=study, judge=judge, kind=kind),
            }
            for kind in (dis.PEOPLE_SPLIT, dis.PARSE_FAILED)
        ],
        "n_disagreements": sum(counts[k] for k in dis.DISAGREEMENTS),
        "all_url": page_url(study=study, judge=judge),
        "overlap": overlap_view(sel.overlap_report(data, n_resamples=n_resamples, seed=seed)),
        "overlap_url": page_url(study=study, judge=judge, kind=dis.BOTH_FAILURE, sort="overlap"),
    }


def disagreements_page_context(
    *,
    study: Study | None,
    judge: Judge | None,
    filters: sel.Filters | None,
    error: str = "",
) -> dict[str, Any]:
    """The page: pickers, then (study, judge and valid filters chosen) the filter form, the
    counts per kind, the step overlap and one page of items. A bad option (``error``, or a
    topic, generator or page the data refuses) leaves the items out and names it."""
    context: dict[str, Any] = {
        "studies": Study.objects.order_by("-created_at")[:PICK_LIMIT],
        "judges": Judge.objects.order_by("name"),
        "study": study,
        "judge": judge,
        "error": error,
        "data": None,
        "kinds": list(dis.KINDS.items()),
        "sorts": list(sel.SORTS.items()),
    }
    if study is None or judge is None:
        return context
    data = sel.study_disagreements(study=study, judge=judge)
    filters = filters or sel.Filters()
    context.update(
        data=data,
        filters=filters,
        counts=[
            {
                "kind": k,
                "text": text,
                "count": data.counts[k],
                "url": page_url(study=study, judge=judge, kind=k),
            }
            for k, text in dis.KINDS.items()
        ],
        overlap=overlap_view(sel.overlap_report(data)),
        validation_url=reverse("validation:validation")
        + "?"
        + urlencode({"study": study.pk, "judge": judge.name}),
    )
    if error:
        return context
    try:
        page = sel.paginate(sel.select_rows(data, filters), filters)
    except sel.ParamError as exc:
        context["error"] = str(exc)
        return context
    query = filters.query()
    context.update(
        page=page,
        items=[item_view(r) for r in page.rows],
        export_csv=page_url(study=study, judge=judge, **query, format="csv"),
        export_jsonl=page_url(study=study, judge=judge, **query, format="jsonl"),
        api_url=reverse("validation_api:disagreements")
        + "?"
        + urlencode({"study": study.pk, "judge": judge.name, **query}),
        previous_url=(
            page_url(study=study, judge=judge, **filters.query(page=page.number - 1))
            if page.number > 1
            else ""
        ),
        next_url=(
            page_url(study=study, judge=judge, **filters.query(page=page.number + 1))
            if page.number < page.n_pages
            else ""
        ),
    )
    return context
