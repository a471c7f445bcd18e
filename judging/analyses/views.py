"""The analyses pages (researchers and admins): difficulty regression (D.5), breakdowns by
topic and step count, checkpoint scaling with formatting proxies (Figure 1b, D.3) and the
Spearman ordering check (D.4). Each takes ``?judge=NAME`` (and ``dataset=ID``) and exports
``?format=csv`` or ``?format=json``. Thin: numbers from :mod:`judging.analyses.reads`,
page contexts and plots from :mod:`judging.analyses.page`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest, JsonResponse
from django.shortcuts import get_object_or_404, render

from benchmarks.checkpoints import CheckpointError
from benchmarks.models import Dataset
from core.access import researcher_required
from judging.analyses import page as pages
from judging.analyses import reads as sel
from judging.analyses.breakdowns import GROUPINGS
from judging.analyses.checkpoints import AXES, parse_value_column
from judging.analyses.export import csv_text
from judging.models import Judge

FORMATS = ("html", "csv", "json")
PICK_LIMIT = 100


def _base(request: HttpRequest) -> dict[str, Any]:
    judge_name = request.GET.get("judge", "")
    dataset_id = request.GET.get("dataset", "")
    return {
        "judge": get_object_or_404(Judge, name=judge_name) if judge_name else None,
        "dataset": get_object_or_404(Dataset, pk=int(dataset_id)) if dataset_id.isdigit() else None,
        "judges": Judge.objects.order_by("name"),
        "datasets": Dataset.objects.order_by("name", "version")[:PICK_LIMIT],
    }


def _export(
    request: HttpRequest,
    name: str,
    report: dict,
    rows: Callable[[dict], list[dict]],
    columns: Sequence[str],
) -> HttpResponse | None:
    fmt = request.GET.get("format", "html")
    if fmt not in FORMATS:
        return HttpResponseBadRequest(f"format: expected one of {', '.join(FORMATS)}, got {fmt!r}")
    if fmt == "json":
        return JsonResponse(report, json_dumps_params={"ensure_ascii": False})
    if fmt == "csv":
        response = HttpResponse(csv_text(rows(report), columns), content_type="text/csv")
        response["Content-Disposition"] = f'attachment; filename="{name}.csv"'
        return response
    return None


def _render(request, template: str, context: dict) -> HttpResponse:
    query = request.GET.copy()
    query.pop("format", None)
    context["query"] = query.urlencode()
    return render(request, f"judging/analyses/{template}.html", context)


@researcher_required
def index(request: HttpRequest) -> HttpResponse:
    return _render(request, "index", {**_base(request), "tab": "index"})


@researcher_required
def difficulty(request: HttpRequest) -> HttpResponse:
    context = {**_base(request), "tab": "difficulty"}
    if context["judge"] is not None:
        report = sel.difficulty(judge=context["judge"], dataset=context["dataset"])
        exported = _export(
            request, "difficulty", report, pages.difficulty_csv_rows, pages.DIFFICULTY_COLUMNS
        )
        if exported:
            return exported
        context.update(report=report, **pages.difficulty_context(report))
    return _render(request, "difficulty", context)


@researcher_required
def breakdowns(request: HttpRequest) -> HttpResponse:
    by = request.GET.get("by", "topic")
    if by not in GROUPINGS:
        return HttpResponseBadRequest(f"by: expected one of {', '.join(GROUPINGS)}, got {by!r}")
    context = {**_base(request), "tab": "breakdowns", "by": by, "groupings": list(GROUPINGS)}
    if context["judge"] is not None:
        report = sel.breakdown(judge=context["judge"], by=by, dataset=context["dataset"])
        exported = _export(
            request, f"breakdown-{by}", report, pages.breakdown_csv_rows, pages.BREAKDOWN_COLUMNS
        )
        if exported:
            return exported
        context.update(report=report, **pages.breakdown_context(report))
    return _render(request, "breakdowns", context)


@researcher_required
def checkpoints(request: HttpRequest) -> HttpResponse:
    axis = request.GET.get("axis", "step")
    if axis not in AXES:
        return HttpResponseBadRequest(f"axis: expected one of {', '.join(AXES)}, got {axis!r}")
    context = {**_base(request), "tab": "checkpoints", "axis": axis, "axes": AXES}
    if context["judge"] is not None:
        report = sel.checkpoint_scaling(
            judge=context["judge"], axis=axis, dataset=context["dataset"]
        )
        exported = _export(
            request, "checkpoints", report, pages.checkpoint_csv_rows, pages.CHECKPOINT_COLUMNS
        )
        if exported:
            return exported
        context.update(report=report, **pages.checkpoint_context(report))
    return _render(request, "checkpoints", context)


@researcher_required
def orderings(request: HttpRequest) -> HttpResponse:
    text = request.GET.get("column", "")
    higher = request.GET.get("higher") == "1"
    context = {**_base(request), "tab": "orderings", "column": text, "higher": higher}
    if context["judge"] is not None and text.strip():
        try:
            column = parse_value_column(text)
        except CheckpointError as exc:
            context["error"] = f"column: {exc}"
            if request.GET.get("format", "html") != "html":
                return HttpResponseBadRequest(context["error"])
            response = _render(request, "orderings", context)
            response.status_code = 400
            return response
        report = sel.orderings(
            judge=context["judge"],
            column=column,
            lower_is_better=not higher,
            dataset=context["dataset"],
        )
        exported = _export(
            request, "orderings", report, lambda r: r["rows"], pages.ORDERING_COLUMNS
        )
        if exported:
            return exported
        context.update(report=report, **pages.orderings_context(report))
    return _render(request, "orderings", context)
