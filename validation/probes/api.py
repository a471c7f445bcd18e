"""API for a judge's bias probes on a study (researchers and admins, the project's default
permission): calibration of its seeded samples (ECE, Brier, reliability bins) and its length
bias (odds ratio per 100 tokens), the dict the validation page's partial shows."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.params import MAX_RESAMPLES, int_param, study_and_judge
from validation.probes.calibration import DEFAULT_BINS
from validation.probes.reads import judge_probes

MAX_BINS = 50


class JudgeProbesView(APIView):
    @extend_schema(
        summary="Judge calibration (seeded samples: ECE, Brier score, reliability bins) and "
        "length bias (logistic regression odds ratio per 100 tokens) against a study's human "
        "majority",
        parameters=[
            OpenApiParameter("study", OpenApiTypes.INT, required=True),
            OpenApiParameter("judge", OpenApiTypes.STR, required=True, description="judge name"),
            OpenApiParameter("bins", OpenApiTypes.INT, description="equal-width bins (10)"),
            OpenApiParameter("bootstrap", OpenApiTypes.INT, description="resamples (1000)"),
            OpenApiParameter("seed", OpenApiTypes.INT, description="bootstrap seed (0)"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        study, judge = study_and_judge(request)
        return Response(
            judge_probes(
                study=study,
                judge=judge,
                n_bins=int_param(request, "bins", DEFAULT_BINS, low=1, high=MAX_BINS),
                n_resamples=int_param(request, "bootstrap", 1000, low=0, high=MAX_RESAMPLES),
                seed=int_param(request, "seed", 0, low=0, high=2**32 - 1),
            )
        )
