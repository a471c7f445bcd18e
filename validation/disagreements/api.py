"""API of the disagreement list (researchers and admins, the project's default permission): the
rows the page shows, one page at a time, with the counts per kind and the step overlap."""

from __future__ import annotations

from urllib.parse import urlencode

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Study
from judging.api.params import int_param
from judging.selectors import verdicts as comparison_sel
from validation.disagreements import reads as sel
from validation.disagreements import stats as dis

KIND_HELP = "; ".join(f"{k}: {text}" for k, text in dis.KINDS.items())


class DisagreementsView(APIView):
    @extend_schema(
        summary="Items where a judge's verdict and a study's human majority differ: goal, "
        "both step lists, the judge's reasoning and failures, each annotator's label",
        parameters=[
            OpenApiParameter("study", OpenApiTypes.INT, required=True),
            OpenApiParameter("judge", OpenApiTypes.STR, required=True, description="judge name"),
            OpenApiParameter(
                "kind",
                OpenApiTypes.STR,
                description="comma-separated kinds, or all (default: the four disagreement "
                f"kinds). {KIND_HELP}",
            ),
            OpenApiParameter("topic", OpenApiTypes.STR, description="topic name"),
            OpenApiParameter("generator", OpenApiTypes.STR, description="generator name"),
            OpenApiParameter(
                "sort",
                OpenApiTypes.STR,
                description=f"one of {', '.join(sel.SORTS)}; a leading - sorts descending",
            ),
            OpenApiParameter("page", OpenApiTypes.INT, description="page number (1)"),
            OpenApiParameter(
                "page_size", OpenApiTypes.INT, description=f"1 to {sel.MAX_PAGE_SIZE} (20)"
            ),
            OpenApiParameter("bootstrap", OpenApiTypes.INT, description="resamples (1000)"),
            OpenApiParameter("seed", OpenApiTypes.INT, description="bootstrap seed (0)"),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request: Request) -> Response:
        errors = {}
        study_id = int_param(request, "study", None, low=1, high=2**63 - 1)
        if study_id is None:
            errors["study"] = "required: a study id"
        name = request.query_params.get("judge", "").strip()
        if not name:
            errors["judge"] = "required: a judge name"
        elif sel.judge_name_error(name):
            errors["judge"] = sel.judge_name_error(name)
        if errors:
            raise ValidationError(errors)
        n_resamples = int_param(request, "bootstrap", 1000, low=0, high=sel.MAX_RESAMPLES)
        seed = int_param(request, "seed", 0, low=0, high=2**32 - 1)
        filters = sel.filters_from_query(request.query_params)
        study = get_object_or_404(Study, pk=study_id)
        judge = comparison_sel.judges_by_names([name], field="judge")[0]
        data = sel.study_disagreements(study=study, judge=judge)
        page = sel.paginate(sel.select_rows(data, filters), filters)

        def link(number: int) -> str | None:
            if not 1 <= number <= page.n_pages or number == page.number:
                return None
            query = {"study": study.pk, "judge": judge.name, **filters.query(page=number)}
            return request.build_absolute_uri(f"{request.path}?{urlencode(query)}")

        return Response(
            {
                "study": {"id": study.pk, "name": study.name},
                "judge": {"name": judge.name, "judge_id": judge.judge_id},
                "filters": {
                    "kinds": list(filters.kinds),
                    "topic": filters.topic or None,
                    "generator": filters.generator or None,
                    "sort": filters.sort,
                },
                "counts": data.counts,
                "step_overlap": sel.overlap_report(data, n_resamples=n_resamples, seed=seed),
                "count": page.count,
                "page": page.number,
                "n_pages": page.n_pages,
                "next": link(page.number + 1),
                "previous": link(page.number - 1),
                "results": page.rows,
            }
        )
