"""API for How2Score corrected with a study's labels (PPI++), researchers and admins (the
project's default permission): the same dict the page shows."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Dataset
from judging.api.params import int_param, study_and_judge
from validation.ppi.reads import ppi_rankings


class How2ScorePPIView(APIView):
    @extend_schema(
        summary="How2Score per generator (and topic) corrected with a study's labels: PPI++ "
        "(ppi-python, power-tuned λ) with 95% CIs, beside judge-only and human-only estimates",
        parameters=[
            OpenApiParameter("study", OpenApiTypes.INT, required=True),
            OpenApiParameter("judge", OpenApiTypes.STR, required=True, description="judge name"),
            OpenApiParameter("dataset", OpenApiTypes.INT, description="only this dataset"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        study, judge = study_and_judge(request)
        dataset_id = int_param(request, "dataset", None, low=1, high=2**63 - 1)
        dataset = get_object_or_404(Dataset, pk=dataset_id) if dataset_id else None
        return Response(ppi_rankings(study=study, judge=judge, dataset=dataset))
