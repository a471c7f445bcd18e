"""API for the alt-test of a judge on a study and its sample-size planner, researchers and
admins (the project's default permission): the same dicts the pages show. Bad values are 400s
naming the parameter."""

from __future__ import annotations

import math

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.api.params import int_param, study_and_judge
from validation.alt_test import planner as alt_test_planner
from validation.alt_test.reads import study_alt_test
from validation.alt_test.stats import DEFAULT_EPSILON, DEFAULT_Q

BIG = 2**63 - 1


def float_param(request: Request, name: str, default: float, *, low: float, high: float) -> float:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if math.isnan(value) or not low <= value <= high:
        raise ValidationError({name: f"expected a number from {low:g} to {high:g}, got {raw!r}"})
    return value


def _numbers(request: Request, name: str, default, *, kind) -> list:
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return list(default)
    try:
        return [kind(x) for x in raw.split(",") if x.strip()]
    except ValueError as exc:
        raise ValidationError({name: f"expected comma-separated numbers, got {raw!r}"}) from exc


class ValidationAltTestView(APIView):
    @extend_schema(
        summary="The alternative annotator test (Calderon et al. 2025) of a judge on a study, per "
        "form type: winning rate, advantage probability, per-annotator p-values, left-out items",
        parameters=[
            OpenApiParameter("study", OpenApiTypes.INT, required=True),
            OpenApiParameter("judge", OpenApiTypes.STR, required=True, description="judge name"),
            OpenApiParameter("epsilon", OpenApiTypes.FLOAT, description="ε (0.1: crowd workers)"),
            OpenApiParameter("q", OpenApiTypes.FLOAT, description="BY FDR level (0.05)"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        study, judge = study_and_judge(request)
        epsilon = float_param(request, "epsilon", DEFAULT_EPSILON, low=-1, high=1)
        q = float_param(request, "q", DEFAULT_Q, low=1e-9, high=0.999999)
        return Response(study_alt_test(study=study, judge=judge, epsilon=epsilon, q=q))


class AltTestPlanView(APIView):
    @extend_schema(
        summary="Alt-test sample-size planner: the reference's simulation, expected winning rate "
        "per number of items and ε",
        parameters=[
            OpenApiParameter("categories", OpenApiTypes.INT, description="K (4)"),
            OpenApiParameter("annotator_noise", OpenApiTypes.FLOAT, description="(0.3)"),
            OpenApiParameter("judge_noise", OpenApiTypes.FLOAT, description="(0.3)"),
            OpenApiParameter("annotators", OpenApiTypes.INT, description="per item (3)"),
            OpenApiParameter("sizes", OpenApiTypes.STR, description="e.g. 30,50,100"),
            OpenApiParameter("epsilons", OpenApiTypes.STR, description="e.g. 0,0.1,0.2"),
            OpenApiParameter("datasets", OpenApiTypes.INT, description="simulated datasets (10)"),
            OpenApiParameter("boots", OpenApiTypes.INT, description="samples per dataset (10)"),
            OpenApiParameter("seed", OpenApiTypes.INT, description="(0)"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        lim = alt_test_planner.LIMITS
        args = {
            "n_categories": int_param(request, "categories", 4, low=lim["n_categories"][0],
                                      high=lim["n_categories"][1]),
            "annotator_noise": float_param(request, "annotator_noise", 0.3, low=0, high=1),
            "judge_noise": float_param(request, "judge_noise", 0.3, low=0, high=1),
            "n_annotators": int_param(request, "annotators", 3, low=2, high=lim["n_annotators"][1]),
            "n_datasets": int_param(request, "datasets", 10, low=1, high=lim["n_datasets"][1]),
            "n_boots": int_param(request, "boots", 10, low=1, high=lim["n_boots"][1]),
            "seed": int_param(request, "seed", 0, low=0, high=2**32 - 1),
            "sizes": _numbers(request, "sizes", alt_test_planner.DEFAULT_SIZES, kind=int),
            "epsilons": _numbers(request, "epsilons", alt_test_planner.DEFAULT_EPSILONS, kind=float),
        }  # fmt: skip
        try:
            return Response(alt_test_planner.plan(**args))
        except ValueError as exc:
            name, _, message = str(exc).partition(": ")
            raise ValidationError({name: message or str(exc)}) from exc
