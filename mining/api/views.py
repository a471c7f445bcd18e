"""REST API for mining batches: researchers read, admins create, cancel, resume and promote.

A service's ``ValidationError`` is a 400 naming the fields (:func:`core.errors.exception_handler`).
"""

from __future__ import annotations

import json

from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, parsers, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from benchmarks.models import Dataset
from core.permissions import IsAdminRole, IsResearcherOrAdmin
from core.streaming import jsonl_lines, streaming_download
from mining.models import MiningBatch, MiningDocument
from mining.selectors import batches as selectors
from mining.services import batches as services
from mining.services import promotion
from mining.services.promotion import promotion_as_dict


class JSONField(serializers.JSONField):
    """Accepts a JSON value, or (multipart forms) a string holding JSON."""

    def to_internal_value(self, data):
        if isinstance(data, str):
            try:
                data = json.loads(data) if data.strip() else {}
            except ValueError as exc:
                raise serializers.ValidationError(f"not valid JSON: {exc}") from None
        return super().to_internal_value(data)


class BatchCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    file = serializers.FileField(required=False, help_text="the documents (or give source)")
    source = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=1000,
        help_text="instead of a file: a stored file, shard directory or glob in storage, "
        "e.g. 'corpus/part-*.jsonl.gz'",
    )
    stages = serializers.CharField(
        required=False, allow_blank=True, help_text="e.g. '1,2,3,4,5,6' (default all)"
    )
    backends = JSONField(
        help_text='{"default": {"backend": "openai", "model": "gpt-4.1", "base_url": ...}, "filter": {...}}'
    )
    options = JSONField(
        required=False,
        help_text='{"min_steps": 5, "max_steps": 15, "max_doc_chars": 100000, '
        '"columns": {"text": "body", "url": "link", "topic": "category", "id": "doc_id"}, '
        '"candidates_per_topic": 1000, "desired_valid_per_topic": 30}',
    )


class BatchSerializer(serializers.ModelSerializer):
    progress_percent = serializers.IntegerField(read_only=True)
    worker_gone = serializers.BooleanField(
        read_only=True, help_text="active but nobody works it: resume with force to take over"
    )
    yields = serializers.SerializerMethodField()
    usage = serializers.SerializerMethodField()

    class Meta:
        model = MiningBatch
        fields = [
            "id",
            "name",
            "source_name",
            "source_pattern",
            "source_format",
            "stages",
            "backends",
            "options",
            "status",
            "n_total",
            "n_done",
            "n_failed",
            "progress_percent",
            "prompt_tokens",
            "completion_tokens",
            "cost",
            "heartbeat_at",
            "worker_gone",
            "error",
            "created_at",
            "started_at",
            "finished_at",
            "yields",
            "usage",
        ]

    def to_representation(self, instance):
        """``options.promotion``: the batch's last promotion run (:class:`MiningPromotion`),
        shown where the batch's options kept it before it was a run."""
        data = super().to_representation(instance)
        runs = sorted(instance.promotions.all(), key=lambda p: (p.created_at, p.pk))
        if runs:
            data["options"] = {
                **(data.get("options") or {}),
                "promotion": promotion_as_dict(runs[-1]),
            }
        return data

    @extend_schema_field(serializers.JSONField(allow_null=True))
    def get_yields(self, obj):
        return selectors.batch_yields(batch=obj) if self.context.get("detail") else None

    @extend_schema_field(serializers.JSONField(allow_null=True))
    def get_usage(self, obj):
        if not self.context.get("detail"):
            return None
        u = selectors.batch_usage(batch=obj)
        for row in u["stages"]:
            row["cost_usd"] = str(row["cost_usd"])
        u["total"]["cost_usd"] = str(u["total"]["cost_usd"])
        return u


class DocumentSerializer(serializers.ModelSerializer):
    class Meta:
        model = MiningDocument
        fields = [
            "id",
            "position",
            "source_id",
            "topic",
            "topic_raw",
            "url",
            "outcome",
            "stage_reached",
            "drop_reason",
            "notes",
            "goal",
            "steps",
            "resources",
            "trace",
        ]


class PromoteSerializer(serializers.Serializer):
    dataset_name = serializers.CharField(max_length=128)
    version = serializers.CharField(max_length=32, default="v1")
    per_topic = serializers.IntegerField(min_value=1, default=500)
    seed = serializers.IntegerField(default=0)
    dedup_against = serializers.PrimaryKeyRelatedField(
        queryset=Dataset.objects.all(), required=False, allow_null=True
    )
    threshold = serializers.FloatField(min_value=0.0, max_value=1.0, default=0.65)


class PromotionAcceptedSerializer(serializers.Serializer):
    promotion = serializers.JSONField(help_text="status queued, the dataset name@version asked")
    url = serializers.CharField(help_text="the batch: its options.promotion tells how it went")


class MiningBatchViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    queryset = MiningBatch.objects.prefetch_related("promotions").order_by("-created_at", "-id")
    serializer_class = BatchSerializer
    parser_classes = [parsers.MultiPartParser, parsers.FormParser, parsers.JSONParser]
    filterset_fields = ["status"]
    ordering_fields = ["created_at", "id"]

    def get_permissions(self):
        if self.action in ("create", "cancel", "resume", "promote"):
            return [IsAdminRole()]
        return [IsResearcherOrAdmin()]

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "detail": self.action == "retrieve"}

    def create(self, request):
        ser = BatchCreateSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        data = ser.validated_data
        batch = services.batch_create(  # ValidationError → 400 (core.errors)
            name=data.get("name") or "",
            upload=data.get("file"),
            source=data.get("source") or "",
            stages=data.get("stages") or None,
            backends=data["backends"],
            options=data.get("options") or {},
            created_by=request.user,
        )
        return Response(
            BatchSerializer(batch, context={"detail": False}).data, status=status.HTTP_201_CREATED
        )

    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        batch = services.batch_cancel(batch=self.get_object())
        return Response(BatchSerializer(batch).data)

    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        force = str(request.data.get("force", "")).lower() in ("1", "true", "yes")
        batch = services.batch_resume(batch=self.get_object(), force=force)
        return Response(BatchSerializer(batch).data, status=status.HTTP_202_ACCEPTED)

    @action(detail=True, methods=["get"])
    def documents(self, request, pk=None):
        qs = selectors.document_list(
            batch=self.get_object(),
            outcome=request.query_params.get("outcome") or None,
            topic=request.query_params.get("topic") or None,
            stage=request.query_params.get("stage") or None,
        )
        page = self.paginate_queryset(qs)
        return self.get_paginated_response(DocumentSerializer(page, many=True).data)

    @action(detail=True, methods=["get"], url_path="export")
    def export(self, request, pk=None):
        batch = self.get_object()
        lines = jsonl_lines(selectors.export_records(batch=batch))
        return streaming_download(lines, filename=f"how2mine-batch-{batch.pk}.jsonl")

    @extend_schema(request=PromoteSerializer, responses={202: PromotionAcceptedSerializer})
    @action(detail=True, methods=["post"])
    def promote(self, request, pk=None):
        """Ask a worker to promote the batch into a dataset (202), a run of the engine: its
        state (queued, running, cancelling, cancelled, done with ``dataset_id``, or failed
        with ``error``) is the batch's ``options.promotion``, read at ``url``."""
        ser = PromoteSerializer(data=request.data)
        ser.is_valid(raise_exception=True)
        batch = self.get_object()
        state = promotion.batch_promote_request(
            batch=batch, user=request.user, **ser.validated_data
        )
        url = f"/api/mining/batches/{batch.pk}/"
        return Response(
            {"promotion": state, "url": url},
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": url},
        )
