"""API for How2Score with uncertainty (researchers and admins, the project's default
permission): generators ranked under one judge with bootstrap CIs, per-topic CIs, average
generated tokens and the tests between ranking neighbours."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.models import Dataset
from judging.api.params import MAX_RESAMPLES, int_param
from judging.scores.reads import how2score_uncertainty
from judging.selectors import verdicts as comparison_sel


class How2ScoreView(APIView):
    @extend_schema(
        summary="How2Score per generator under one judge, with bootstrap CIs (overall and per "
        "topic), average generated tokens and McNemar/Holm tests between ranking neighbours",
        parameters=[
            OpenApiParameter("judge", OpenApiTypes.STR, required=True, description="judge name"),
            OpenApiParameter("dataset", OpenApiTypes.INT),
            OpenApiParameter("bootstrap", OpenApiTypes.INT, description="resamples (1000)"),
            OpenApiParameter("seed", OpenApiTypes.INT, description="bootstrap seed (0)"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        name = request.query_params.get("judge", "").strip()
        if not name:
            raise ValidationError({"judge": "required: a judge name"})
        judge = comparison_sel.judges_by_names([name], field="judge")[0]
        dataset_id = int_param(request, "dataset", None, low=1, high=2**63 - 1)
        dataset = get_object_or_404(Dataset, pk=dataset_id) if dataset_id else None
        return Response(
            how2score_uncertainty(
                judge=judge,
                dataset=dataset,
                n_resamples=int_param(request, "bootstrap", 1000, low=0, high=MAX_RESAMPLES),
                seed=int_param(request, "seed", 0, low=0, high=2**32 - 1),
            )
        )
