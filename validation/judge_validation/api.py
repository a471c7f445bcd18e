"""API for the judge validation report (researchers and admins, the project's default
permission): the same dict the page and ``manage.py judge_validation`` show."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Dataset
from judging.api.params import MAX_RESAMPLES, int_param, study_and_judge
from judging.selectors.verdicts import judges_by_names
from validation.judge_validation import reads as sel


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
        others = judges_by_names([n for n in names if n], field="others") or None
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
