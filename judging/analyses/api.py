"""API for the analyses (researchers and admins, token or session): the same JSON the pages
export with ``?format=json``. ``GET /api/analyses/<kind>/?judge=NAME[&dataset=ID]`` with kind
``difficulty``, ``breakdowns`` (``by=topic|steps|domain``), ``checkpoints`` (``axis=step|flops``) or
``orderings`` (``column=`` CSV ``generator,value``, ``higher=1``)."""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from benchmarks.checkpoints import CheckpointError
from benchmarks.models import Dataset
from judging.analyses import reads as sel
from judging.analyses.breakdowns import GROUPINGS
from judging.analyses.checkpoints import AXES, parse_value_column
from judging.api.params import int_param
from judging.selectors import verdicts as comparison_sel

KINDS = ("difficulty", "breakdowns", "checkpoints", "orderings")


class AnalysisView(APIView):
    @extend_schema(
        summary="The paper's analyses on a judge's verdicts: D.5 regression, breakdowns, "
        "checkpoint scaling with formatting proxies, Spearman between two orderings",
        parameters=[
            OpenApiParameter("judge", OpenApiTypes.STR, required=True),
            OpenApiParameter("dataset", OpenApiTypes.INT),
            OpenApiParameter(
                "by", OpenApiTypes.STR, description="breakdowns: topic, steps or domain"
            ),
            OpenApiParameter("axis", OpenApiTypes.STR, description="checkpoints: step or flops"),
            OpenApiParameter("column", OpenApiTypes.STR, description="orderings: CSV lines"),
            OpenApiParameter(
                "higher", OpenApiTypes.INT, description="orderings: 1 = higher better"
            ),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request, kind: str) -> Response:
        if kind not in KINDS:
            raise NotFound(f"no analysis {kind!r}; known: {', '.join(KINDS)}")
        params = request.query_params
        name = params.get("judge", "").strip()
        if not name:
            raise ValidationError({"judge": "required: a judge name"})
        judge = comparison_sel.judges_by_names([name], field="judge")[0]
        dataset_id = int_param(request, "dataset", None, low=1, high=2**63 - 1)
        dataset = get_object_or_404(Dataset, pk=dataset_id) if dataset_id else None
        if kind == "difficulty":
            return Response(sel.difficulty(judge=judge, dataset=dataset))
        if kind == "breakdowns":
            by = params.get("by", "topic")
            if by not in GROUPINGS:
                raise ValidationError({"by": f"expected one of {', '.join(GROUPINGS)}"})
            return Response(sel.breakdown(judge=judge, by=by, dataset=dataset))
        if kind == "checkpoints":
            axis = params.get("axis", "step")
            if axis not in AXES:
                raise ValidationError({"axis": f"expected one of {', '.join(AXES)}"})
            return Response(sel.checkpoint_scaling(judge=judge, axis=axis, dataset=dataset))
        try:
            column = parse_value_column(params.get("column", ""))
        except CheckpointError as exc:
            raise ValidationError({"column": str(exc)}) from exc
        return Response(
            sel.orderings(
                judge=judge,
                column=column,
                lower_is_better=params.get("higher") != "1",
                dataset=dataset,
            )
        )
