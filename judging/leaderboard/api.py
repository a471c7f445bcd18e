"""API of the judge leaderboard (researchers and admins, the project's default permission):
the leaderboard as stored, or 202 while a worker recomputes it."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Study
from judging.api.params import JUDGES_PARAM, judges_param, optional_object
from judging.services.leaderboard import leaderboard_get


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
        study = optional_object(request, "study", Study)
        got = leaderboard_get(judges=judges_param(request), study=study)
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
