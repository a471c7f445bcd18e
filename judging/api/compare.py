"""API for the comparison numbers (researchers and admins only, the project's default
permission): the same dicts the pages and ``judge_compare`` show."""

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
from judging.models import Judge
from judging.selectors import comparison as sel
from judging.services.leaderboard import leaderboard_get

JUDGES_PARAM = OpenApiParameter(
    "judges", OpenApiTypes.STR, description="comma-separated judge names (default: all)"
)


def _judges(request: Request, *, required_two: bool = False):
    raw = request.query_params.get("judges", "")
    names = [n.strip() for n in raw.split(",") if n.strip()]
    if not names:
        return None
    judges = sel.judges_by_names(names)  # unknown names: a 400 (core.errors)
    if required_two and len(judges) < 2:
        raise ValidationError({"judges": "give at least two judge names"})
    return judges


def _optional_object(request: Request, name: str, model):
    """The ``model`` row whose id the query parameter ``name`` gives, or None when it is absent."""
    raw = request.query_params.get(name)
    if raw in (None, ""):
        return None
    if not raw.isdigit():
        raise ValidationError({name: f"expected an integer id, got {raw!r}"})
    return get_object_or_404(model, pk=int(raw))


class StudyComparisonView(APIView):
    @extend_schema(
        summary="Judges vs the human majority of a study (overall, per class, kappa) and judge-judge pairs",
        parameters=[JUDGES_PARAM],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request, pk: int) -> Response:
        study = get_object_or_404(Study, pk=pk)
        return Response(sel.study_comparison(study=study, judges=_judges(request)))


class JudgePairsView(APIView):
    @extend_schema(
        summary="Judge-judge agreement and Cohen's kappa for every pair of judges",
        parameters=[JUDGES_PARAM, OpenApiParameter("study", OpenApiTypes.INT)],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        study = _optional_object(request, "study", Study)
        judges = _judges(request) or Judge.objects.order_by("name")
        return Response(sel.judge_pair_comparison(judges=list(judges), study=study))


class RankingsView(APIView):
    @extend_schema(
        summary="Generator rankings by How2Score under each judge, with Kendall's tau-b between judges",
        parameters=[JUDGES_PARAM, OpenApiParameter("dataset", OpenApiTypes.INT)],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        dataset = _optional_object(request, "dataset", Dataset)
        judges = _judges(request) or Judge.objects.order_by("name")
        return Response(sel.generator_rankings(judges=list(judges), dataset=dataset))


class LeaderboardView(APIView):
    @extend_schema(
        summary="Judge leaderboard: agreement with humans, cost, time, parse-failure and failure rates, verbosity",
        description="The leaderboard as stored for these judges and study (200). A large one "
        "whose data changed since is recomputed by a worker: 202 with ``status``, the last "
        "``report`` (or null) and ``computed_at``; ask again until 200.",
        parameters=[JUDGES_PARAM, OpenApiParameter("study", OpenApiTypes.INT)],
        responses={200: OpenApiTypes.OBJECT, 202: OpenApiTypes.OBJECT},
    )
    def get(self, request: Request) -> Response:
        study = _optional_object(request, "study", Study)
        got = leaderboard_get(judges=_judges(request), study=study)
        if got["fresh"]:
            return Response(got["report"])
        return Response(
            {
                "status": got["status"],
                "report": got["report"],
                "computed_at": got["computed_at"],
                "error": got["error"],
            },
            status=202,
        )
