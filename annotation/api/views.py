"""Study API for researchers: list, create, progress, status and the annotation export."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import mixins, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from annotation.api.serializers import StudySerializer, StudyStatusSerializer
from annotation.models import Study
from annotation.selectors.flow import study_export_rows, study_progress
from annotation.services import study as study_services


class StudyViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    serializer_class = StudySerializer
    queryset = Study.objects.all()
    search_fields = ["name"]
    ordering_fields = ["created_at", "name"]

    def create(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        study = study_services.study_create(  # ValidationError → 400 (core.errors)
            name=data.pop("name"),
            generation_ids=data.pop("generation_ids", []),
            pairs=data.pop("pairs", []),
            known_items=data.pop("known_items", []),
            created_by=request.user,
            **data,
        )
        return Response(self.get_serializer(study).data, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Study progress: items per labels done, participants by stage, attention checks"
    )
    @action(detail=True, methods=["get"])
    def progress(self, request, pk=None):
        progress = study_progress(study=self.get_object())
        return Response(progress)

    @extend_schema(request=StudyStatusSerializer, summary="Open, pause or close a study")
    @action(detail=True, methods=["post"])
    def status(self, request, pk=None):
        serializer = StudyStatusSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        study = study_services.study_set_status(
            study=self.get_object(), status=serializer.validated_data["status"]
        )
        return Response(self.get_serializer(study).data)

    @extend_schema(
        summary="Every annotation with participant ids, timings, attention results and failures (paginated)"
    )
    @action(detail=True, methods=["get"])
    def annotations(self, request, pk=None):
        rows = list(study_export_rows(study=self.get_object()))
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(page)
