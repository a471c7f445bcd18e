"""API for the judge validation report (researchers and admins, the project's default
permission): the same dict the page and ``manage.py judge_validation`` show."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Study
from benchmarks.models import Dataset
from judging.selectors import comparison as comparison_sel
from judging.selectors import validation as sel

MAX_RESAMPLES = 10000


def int_param(request: Request, name: str, default: int | None, *, low: int, high: int):
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    if not (raw.isascii() and raw.isdigit()) or not low <= int(raw) <= high:
        raise ValidationError({name: f"expected a whole number from {low} to {high}, got {raw!r}"})
    return int(raw)


def study_and_judge(request: Request):
    """The ``study`` (id) and ``judge`` (name) query parameters every validation endpoint takes:
    both named when missing (400), 404 for an unknown study, the judge found by name."""
    errors = {}
    study_id = int_param(request, "study", None, low=1, high=2**63 - 1)
    if study_id is None:
        errors["study"] = "required: a study id"
    name = request.query_params.get("judge", "").strip()
    if not name:
        errors["judge"] = "required: a judge name"
    if errors:
        raise ValidationError(errors)
    study = get_object_or_404(Study, pk=study_id)
    return study, comparison_sel.judges_by_names([name], field="judge")[0]


class JudgeValidationView(APIView):
    @extend_schema(
        summary="Judge validation: agreement with a study's human majority with bootstrap CIs, "
        "kappa and Gwet's AC1, constant baselines, leave-one-out humans, other judges",
        parameters=[
            OpenApiParameter("study", OpenApiTypes.INT, required=True),
            OpenApiParameter("judge", OpenApiTypes.STR, required=True, description="judge name"),
            OpenApiParameter("others", OpenApiTypes.STR, description="comma-separated judge names"),
            OpenApiParameter("dataset", OpenApiTypes.INT, description="rank generators on it"),
            OpenApiParameter("bootstrap", OpenApiTypes.INT, description="resamples (1000)"),
            OpenApiParameter("seed", OpenApiTypes.INT, description="bootstrap seed (0)"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        study, judge = study_and_judge(request)
        names = [n.strip() for n in request.query_params.get("others", "").split(",")]
        others = comparison_sel.judges_by_names([n for n in names if n], field="others") or None
        dataset_id = int_param(request, "dataset", None, low=1, high=2**63 - 1)
        dataset = get_object_or_404(Dataset, pk=dataset_id) if dataset_id else None
        report = sel.judge_validation(
            study=study,
            judge=judge,
            others=others,
            dataset=dataset,
            n_resamples=int_param(request, "bootstrap", 1000, low=0, high=MAX_RESAMPLES),
            seed=int_param(request, "seed", 0, low=0, high=2**32 - 1),
        )
        return Response(report)
