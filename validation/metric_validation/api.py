"""API for metric ↔ human validation (researchers and admins, the project's default
permission): the same report the page shows (:mod:`validation.metric_validation.reads`)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Study
from validation.metric_validation import reads as sel
from validation.metric_validation.params import error_field, validation_params


class MetricValidationView(APIView):
    @extend_schema(
        summary="Metric ↔ human validation on a study: Cohen's kappa vs mean ratings, AUC / "
        "precision / recall vs critical-error flags, pairwise agreement and Kendall tau, "
        "with bootstrap CIs",
        parameters=[
            OpenApiParameter("study", OpenApiTypes.INT, required=True),
            OpenApiParameter("pack", OpenApiTypes.STR, required=True, description="e.g. scirecipe"),
            OpenApiParameter("metric", OpenApiTypes.STR, required=True, description="e.g. score"),
            OpenApiParameter("rule", OpenApiTypes.STR, description="quantiles | thresholds"),
            OpenApiParameter("cuts", OpenApiTypes.STR, description="cut points, e.g. 0.3,0.6"),
            OpenApiParameter("threshold", OpenApiTypes.NUMBER, description="default: midpoint"),
            OpenApiParameter("direction", OpenApiTypes.STR, description="low | high"),
            OpenApiParameter("dimension", OpenApiTypes.STR, description="one rating dimension"),
            OpenApiParameter("bootstrap", OpenApiTypes.INT, description="resamples (1000)"),
            OpenApiParameter("seed", OpenApiTypes.INT, description="bootstrap seed (0)"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        params = validation_params(request.query_params)  # ParamError: a 400 (core.errors)
        study = get_object_or_404(Study, pk=params["study"])
        try:
            report = sel.metric_validation(
                study=study, pack=params["pack"], metric=params["metric"], **params["options"]
            )
        except ValueError as exc:
            message = str(exc)
            raise ValidationError({error_field(message): message}) from exc
        return Response(report)
