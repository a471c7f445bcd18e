"""API for escalation on a study (researchers and admins, the project's default permission):
the threshold above which the judge decides alone, its guarantee, the held-out check and the
items below it — the dict the page and ``manage.py escalation --format json`` show."""

from __future__ import annotations

import math

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.params import int_param, study_and_judge
from validation.escalation.reads import DEFAULT_SEED, escalation_report
from validation.escalation.stats import DEFAULT_ALPHA, DEFAULT_DELTA, EscalationError

# a refusal of the data (too few labelled items, a study of another form type) is the study's
FIELD_OF = {"items": "study"}


def _number(request: Request, name: str, default: float) -> float:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValidationError({name: f"expected a number between 0 and 1, got {raw!r}"}) from None
    if not math.isfinite(value):
        raise ValidationError({name: f"expected a number between 0 and 1, got {raw!r}"})
    return value


class EscalationView(APIView):
    @extend_schema(
        summary="The confidence threshold above which a sampled judge decides a study's items "
        "alone (agreement with the human majority ≥ 1 − alpha with probability ≥ 1 − delta; "
        "the fixed-sequence test of Trust or Escalate), checked on held-out labels, and the "
        "items below it",
        parameters=[
            OpenApiParameter("study", OpenApiTypes.INT, required=True),
            OpenApiParameter("judge", OpenApiTypes.STR, required=True, description="judge name"),
            OpenApiParameter("alpha", OpenApiTypes.NUMBER, description="disagreement allowed"),
            OpenApiParameter("delta", OpenApiTypes.NUMBER, description="risk of no guarantee"),
            OpenApiParameter("seed", OpenApiTypes.INT, description="seed of the split (0)"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        study, judge = study_and_judge(request)
        try:
            report = escalation_report(
                study=study,
                judge=judge,
                alpha=_number(request, "alpha", DEFAULT_ALPHA),
                delta=_number(request, "delta", DEFAULT_DELTA),
                seed=int_param(request, "seed", DEFAULT_SEED, low=0, high=2**32 - 1),
            )
        except EscalationError as exc:
            raise ValidationError({FIELD_OF.get(exc.field, exc.field): str(exc)}) from exc
        return Response(report)
