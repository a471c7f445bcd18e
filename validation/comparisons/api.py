"""API for the comparison numbers (researchers and admins only, the project's default
permission): the same dicts the pages and ``judge_compare`` show (parameters read by
:mod:`judging.api.params`)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Study
from benchmarks.models import Dataset
from judging.api.params import JUDGES_PARAM, judges_param, optional_object
from judging.models import Judge
from validation.comparisons import reads as sel


class StudyComparisonView(APIView):
    @extend_schema(
        summary="Judges vs the human majority of a study (overall, per class, kappa) and judge-judge pairs",
        parameters=[JUDGES_PARAM],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request, pk: int) -> Response:
        study = get_object_or_404(Study, pk=pk)
        return Response(sel.study_comparison(study=study, judges=judges_param(request)))


class JudgePairsView(APIView):
    @extend_schema(
        summary="Judge-judge agreement and Cohen's kappa for every pair of judges",
        parameters=[JUDGES_PARAM, OpenApiParameter("study", OpenApiTypes.INT)],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        study = optional_object(request, "study", Study)
        judges = judges_param(request) or Judge.objects.order_by("name")
        return Response(sel.judge_pair_comparison(judges=list(judges), study=study))


class RankingsView(APIView):
    @extend_schema(
        summary="Generator rankings by How2Score under each judge, with Kendall's tau-b between judges",
        parameters=[JUDGES_PARAM, OpenApiParameter("dataset", OpenApiTypes.INT)],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        dataset = optional_object(request, "dataset", Dataset)
        judges = judges_param(request) or Judge.objects.order_by("name")
        return Response(sel.generator_rankings(judges=list(judges), dataset=dataset))
