"""API mirror of the per-pack results pages (researchers and admins, the project's default
permission): the same report as the page's JSON export."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from judging.pack_results import PAGES, get_page
from judging.pack_results.page import results_report
from judging.pack_results.reads import SelectionError, parse_selection


class PackResultsView(APIView):
    @extend_schema(
        summary="A scorer pack's results: generators side by side, 95% bootstrap CIs over "
        "instances, paired tests between ranking neighbours (procbench, longproc, …)",
        parameters=[
            OpenApiParameter("run", OpenApiTypes.INT, many=True, description="scoring run ids"),
            OpenApiParameter("dataset", OpenApiTypes.INT),
            OpenApiParameter("bootstrap", OpenApiTypes.INT, description="resamples (1000)"),
            OpenApiParameter("seed", OpenApiTypes.INT, description="bootstrap seed (0)"),
            OpenApiParameter(
                "study",
                OpenApiTypes.INT,
                description="a human study instead of the scoring runs (pages that read one: "
                "customplans, a study with the CustomPlans form)",
            ),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request, pack: str) -> Response:
        page = get_page(pack)
        if page is None:
            raise Http404(f"no results page for pack {pack!r}; known: {', '.join(PAGES)}")
        try:
            selection = parse_selection(request.query_params)
            return Response(results_report(page=page, selection=selection))
        except SelectionError as exc:
            raise ValidationError({exc.field: exc.message}) from None
