"""API of the comparison of a judge family's prompt versions on a study
(``/api/prompt-versions/compare/``; researchers and admins): the same dict the page shows."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.params import MAX_RESAMPLES, int_param, study_and_judge
from validation.prompt_versions import reads as sel


class PromptVersionComparisonView(APIView):
    @extend_schema(
        summary="The prompt versions of a judge's family on a study: agreement, kappa, AC1 "
        "with bootstrap CIs and the alt-test's winning rate per version; McNemar's exact test "
        "of each version against the judge on the items both judged",
        parameters=[
            OpenApiParameter("study", OpenApiTypes.INT, required=True),
            OpenApiParameter("judge", OpenApiTypes.STR, required=True, description="judge name"),
            OpenApiParameter("bootstrap", OpenApiTypes.INT, description="resamples (1000)"),
            OpenApiParameter("seed", OpenApiTypes.INT, description="bootstrap seed (0)"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        study, judge = study_and_judge(request)
        return Response(
            sel.prompt_version_comparison(
                study=study,
                judge=judge,
                n_resamples=int_param(request, "bootstrap", 1000, low=0, high=MAX_RESAMPLES),
                seed=int_param(request, "seed", 0, low=0, high=2**32 - 1),
            )
        )
