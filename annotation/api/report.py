"""Report, adjudication and label-export API for researchers (JSON; session or token auth).

- ``GET  studies/<pk>/report/`` — the agreement report (as on the page) with the annotator table.
- ``GET  studies/<pk>/adjudication-queue/?location=1`` — items where annotators disagree (paginated).
- ``GET|PUT study-items/<item_id>/adjudication/`` — read or record the adjudicated label.
- ``GET  studies/<pk>/labels/`` — per-item labels, majority (ties explicit), adjudicated label (paginated).
- ``GET  studies/<pk>/gold/?kind=qualification|attention|training&key=generation_id|source_example_id``
  — adjudicated labels as known-answer items for ``create_study --known-items`` (paginated).
"""

from __future__ import annotations

from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Adjudication, Study, StudyItem
from annotation.selectors import adjudication as adjudication_reads
from annotation.selectors import exports
from annotation.selectors import report as rs
from annotation.selectors.report_forms import study_form_report
from annotation.services import adjudication as adjudication_services
from annotation.tasks import enqueue_study_report


class FailureSerializer(serializers.Serializer):
    description = serializers.CharField()
    l1_steps = serializers.ListField(child=serializers.IntegerField(), required=False, default=list)
    l2_steps = serializers.ListField(child=serializers.IntegerField(), required=False, default=list)


class AdjudicationInSerializer(serializers.Serializer):
    has_failure = serializers.BooleanField()
    failures = FailureSerializer(many=True, required=False, default=list)
    note = serializers.CharField(required=False, allow_blank=True, default="")


class AdjudicationSerializer(serializers.ModelSerializer):
    adjudicator = serializers.SlugRelatedField(slug_field="username", read_only=True)

    class Meta:
        model = Adjudication
        fields = [
            "item",
            "has_failure",
            "failures",
            "note",
            "adjudicator",
            "history",
            "created_at",
            "updated_at",
        ]


def _paginated(view: APIView, request, rows: list) -> Response:
    paginator = PageNumberPagination()
    page = paginator.paginate_queryset(rows, request, view=view)
    return paginator.get_paginated_response(page)


class StudyReportView(APIView):
    @extend_schema(
        summary="Agreement report of a study's regular items (α with CI, κ, leave-one-out, groups, annotators; form_report: the form type's own agreement level)",
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request, pk: int):
        study = get_object_or_404(Study, pk=pk)
        ready = rs.ready_study_report(study=study, enqueue=enqueue_study_report)
        if ready.report is None:  # a large study's report, being computed by a worker
            return Response(
                {
                    "status": "computing",
                    "n_labels": ready.n_labels,
                    "detail": "The agreement report is being computed; ask again in a minute.",
                },
                status=202,
            )
        report = {**ready.report, "form_type": study.form_type, "computing": ready.computing}
        if study.form_type != "critical_failure":  # the form type's own agreement level
            report["form_report"] = study_form_report(study=study)
        return Response(report)


class AdjudicationQueueView(APIView):
    @extend_schema(
        summary="Items where annotators disagree, not yet adjudicated first",
        parameters=[
            OpenApiParameter(
                "location",
                OpenApiTypes.BOOL,
                description="also first-failure location disagreements",
            )
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request, pk: int):
        study = get_object_or_404(Study, pk=pk)
        include_location = request.query_params.get("location") in ("1", "true")
        return _paginated(
            self,
            request,
            adjudication_reads.adjudication_queue(study=study, include_location=include_location),
        )


class ItemAdjudicationView(APIView):
    def _item(self, item_id: int) -> StudyItem:
        item = (
            StudyItem.objects.select_related("generation__procedure")
            .filter(pk=item_id, kind=StudyItem.Kind.REGULAR)
            .first()
        )
        if item is None:
            raise NotFound("No regular study item with this id.")
        return item

    @extend_schema(summary="The item's adjudicated label", responses=AdjudicationSerializer)
    def get(self, request, item_id: int):
        adjudication = adjudication_reads.item_adjudication(item=self._item(item_id))
        if adjudication is None:
            raise NotFound("This item has not been adjudicated.")
        return Response(AdjudicationSerializer(adjudication).data)

    @extend_schema(
        summary="Record the item's adjudicated label (replaces the current one; the old one goes to history)",
        request=AdjudicationInSerializer,
        responses=AdjudicationSerializer,
    )
    def put(self, request, item_id: int):
        item = self._item(item_id)
        data = AdjudicationInSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        # A ValidationError from the service is a 400 (core.errors.exception_handler).
        adjudication = adjudication_services.adjudication_record(
            item=item, adjudicator=request.user, **data.validated_data
        )
        return Response(AdjudicationSerializer(adjudication).data)


class StudyLabelsView(APIView):
    @extend_schema(
        summary="Per-item labels: each annotator's label, majority (ties explicit), adjudicated label",
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request, pk: int):
        study = get_object_or_404(Study, pk=pk)
        return _paginated(self, request, list(exports.study_item_label_rows(study=study)))


class StudyGoldView(APIView):
    @extend_schema(
        summary="Adjudicated labels as known-answer items (create_study --known-items shape)",
        parameters=[
            OpenApiParameter("kind", OpenApiTypes.STR, enum=list(exports.GOLD_KINDS)),
            OpenApiParameter("key", OpenApiTypes.STR, enum=list(exports.GOLD_KEYS)),
        ],
        responses=OpenApiTypes.OBJECT,
    )
    def get(self, request, pk: int):
        study = get_object_or_404(Study, pk=pk)
        rows = list(  # an unknown kind or key: a 400 (core.errors)
            exports.study_gold_rows(
                study=study,
                kind=request.query_params.get("kind", "qualification"),
                key=request.query_params.get("key", "generation_id"),
            )
        )
        return _paginated(self, request, rows)
