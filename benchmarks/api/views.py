"""Read-only API views for researchers and admins (permission from settings.REST_FRAMEWORK).

Views are thin: querysets come from :mod:`benchmarks.selectors`, filtering from
:mod:`benchmarks.api.filters`.
"""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import viewsets
from rest_framework.authtoken.models import Token
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import PermissionDenied
from rest_framework.response import Response

from benchmarks.api import filters, serializers
from benchmarks.selectors import catalog as selectors
from core.roles import is_researcher


@extend_schema_view(list=extend_schema(summary="List datasets with counts"))
class DatasetViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = serializers.DatasetSerializer
    filterset_fields = ("name", "version")
    search_fields = ("name", "description")
    ordering_fields = ("name", "version", "created_at", "n_procedures")

    def get_queryset(self):
        return selectors.dataset_list()


class TopicViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = serializers.TopicSerializer
    lookup_field = "slug"
    filterset_fields = ("slug",)
    search_fields = ("name", "slug")
    ordering_fields = ("position", "name", "n_procedures")

    def get_queryset(self):
        return selectors.topic_list()


@extend_schema_view(
    list=extend_schema(
        summary="List procedures (filter by dataset, topic, source_example_id; search the goal)"
    ),
    retrieve=extend_schema(summary="A procedure with its source text and every generation"),
)
class ProcedureViewSet(viewsets.ReadOnlyModelViewSet):
    filterset_class = filters.ProcedureFilter
    search_fields = ("goal",)
    ordering_fields = ("id", "source_example_id", "created_at", "n_generations")

    def get_queryset(self):
        if self.action == "retrieve":
            return selectors.procedure_detail_list()
        return selectors.procedure_list()

    def get_serializer_class(self):
        if self.action == "retrieve":
            return serializers.ProcedureDetailSerializer
        return serializers.ProcedureSerializer


class GeneratorViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = serializers.GeneratorSerializer
    filterset_fields = ("name", "backend", "prompt_variant", "model")
    search_fields = ("name", "model", "description")
    ordering_fields = ("name", "created_at", "n_generations")

    def get_queryset(self):
        return selectors.generator_list()


@extend_schema_view(
    list=extend_schema(
        summary="List generations (filter by generator, dataset, topic, procedure, source_example_id)"
    ),
)
class GenerationViewSet(viewsets.ReadOnlyModelViewSet):
    filterset_class = filters.GenerationFilter
    search_fields = (
        "procedure__goal",
        "procedure__source_example_id",
        "generator__name",
        "generator__model",
    )
    ordering_fields = ("id", "procedure", "generator", "token_count", "created_at")

    def get_queryset(self):
        return selectors.generation_list()

    def get_serializer_class(self):
        if self.action == "retrieve":
            return serializers.GenerationDetailSerializer
        return serializers.GenerationSerializer


class ResearcherAuthToken(ObtainAuthToken):
    """POST ``username`` and ``password`` to get (or reuse) an API token.

    Only researchers and admins get one: the API is theirs alone.
    """

    def post(self, request, *args, **kwargs):
        serializer = self.get_serializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        user = serializer.validated_data["user"]
        if not is_researcher(user):
            raise PermissionDenied("API tokens are for researchers and admins.")
        token, _ = Token.objects.get_or_create(user=user)
        return Response({"token": token.key})
