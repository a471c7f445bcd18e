"""Generation runs in the API: researchers list and read them; admins launch one (with a
paper's protocol and its options), cancel and resume. A refusal of the service is a 400 naming
the field (``protocol``, ``protocol_options``, an item's field …)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.generics import get_object_or_404
from rest_framework.response import Response

from benchmarks.models import Dataset, GenerationRun, Generator
from benchmarks.packs.protocols import DEFAULT_PROTOCOL, PROTOCOL_NAMES
from benchmarks.services.generation_runs import (
    GenerationRunError,
    generation_run_cancel,
    generation_run_create,
    generation_run_start,
)
from core.permissions import IsAdminRole, IsResearcherOrAdmin


class GenerationRunSerializer(serializers.ModelSerializer):
    generator = serializers.SlugRelatedField(slug_field="name", read_only=True)
    dataset = serializers.StringRelatedField()
    worker_gone = serializers.BooleanField(read_only=True)

    class Meta:
        model = GenerationRun
        fields = (
            "id",
            "generator",
            "dataset",
            "protocol",
            "protocol_options",
            "variant",
            "model",
            "decoding",
            "prompt_sha256",
            "status",
            "n_total",
            "n_done",
            "n_failed",
            "prompt_tokens",
            "completion_tokens",
            "cost",
            "error",
            "errors",
            "scores",
            "created_at",
            "started_at",
            "finished_at",
            "worker_gone",
        )


class GenerationRunLaunchSerializer(serializers.Serializer):
    generator = serializers.CharField(help_text="generator name (created if absent)")
    dataset = serializers.PrimaryKeyRelatedField(queryset=Dataset.objects.all())
    protocol = serializers.ChoiceField(choices=PROTOCOL_NAMES, default=DEFAULT_PROTOCOL)
    protocol_options = serializers.JSONField(required=False, default=dict)
    model = serializers.CharField(required=False, allow_blank=True, default="")
    base_url = serializers.CharField(required=False, allow_blank=True, default="")
    api_key_env = serializers.CharField(required=False, allow_blank=True, default="")
    backend = serializers.CharField(required=False, default="openai")
    decoding = serializers.JSONField(required=False, default=dict)
    backend_options = serializers.JSONField(required=False, default=dict)
    concurrency = serializers.IntegerField(required=False, default=16, min_value=1, max_value=1024)
    chunk_size = serializers.IntegerField(required=False, default=64, min_value=1, max_value=10_000)


class GenerationRunResumeSerializer(serializers.Serializer):
    force = serializers.BooleanField(required=False, default=False)


def _refused(exc: GenerationRunError) -> ValidationError:
    text = str(exc)
    for name in ("protocol_options", "protocol", "decoding", "variant"):
        if text.startswith((f"field '{name}'", name)):
            return ValidationError({name: [text]})
    return ValidationError({"detail": [text]})


class GenerationRunViewSet(viewsets.ReadOnlyModelViewSet):
    serializer_class = GenerationRunSerializer
    filterset_fields = ("status", "protocol")
    ordering_fields = ("created_at", "status")

    def get_queryset(self):
        return GenerationRun.objects.select_related("generator", "dataset").order_by("-pk")

    def get_permissions(self):
        if self.action in ("create", "cancel", "resume"):
            return [IsAdminRole()]
        return [IsResearcherOrAdmin()]

    @extend_schema(request=GenerationRunLaunchSerializer, responses=GenerationRunSerializer)
    def create(self, request):
        data = GenerationRunLaunchSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        v = data.validated_data
        generator, _ = Generator.objects.get_or_create(name=v["generator"])
        try:
            run = generation_run_create(
                generator=generator,
                dataset=v["dataset"],
                protocol=v["protocol"],
                protocol_options=v["protocol_options"],
                model=v["model"] or None,
                base_url=v["base_url"],
                api_key_env=v["api_key_env"],
                backend=v["backend"],
                decoding=v["decoding"],
                backend_options=v["backend_options"],
                concurrency=v["concurrency"],
                chunk_size=v["chunk_size"],
                created_by=request.user,
            )
        except GenerationRunError as exc:
            raise _refused(exc) from exc
        return Response(GenerationRunSerializer(run).data, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses=GenerationRunSerializer)
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        try:
            run = generation_run_cancel(run=get_object_or_404(GenerationRun, pk=pk))
        except GenerationRunError as exc:
            raise _refused(exc) from exc
        return Response(GenerationRunSerializer(run).data)

    @extend_schema(request=GenerationRunResumeSerializer, responses=GenerationRunSerializer)
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        data = GenerationRunResumeSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            run = generation_run_start(
                run=get_object_or_404(GenerationRun, pk=pk), force=data.validated_data["force"]
            )
        except GenerationRunError as exc:
            raise _refused(exc) from exc
        return Response(GenerationRunSerializer(run).data)
