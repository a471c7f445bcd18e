"""API of codebook versions: ``/api/codebook-versions/`` (researchers list and read, with the
diff against the version before; admins create the next version)."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers

from annotation.models import CodebookVersion
from annotation.selectors.codebook import codebook_version_list
from annotation.services.codebook_versions import codebook_version_create
from core.versions import NOTE_MAX_CHARS
from core.versions_api import VERSION_FIELDS, VersionDetailMixin, VersionSerializer, VersionViewSet


class CodebookVersionSerializer(VersionSerializer):
    class Meta:
        model = CodebookVersion
        fields = ("sha256", *VERSION_FIELDS)


class CodebookVersionDetailSerializer(VersionDetailMixin, CodebookVersionSerializer):
    studies = serializers.PrimaryKeyRelatedField(many=True, read_only=True)

    class Meta(CodebookVersionSerializer.Meta):
        fields = (*CodebookVersionSerializer.Meta.fields, "content", "studies", "changes", "diff")


class CodebookVersionCreateSerializer(serializers.Serializer):
    content = serializers.JSONField(
        help_text="definition, question, l1_note, kinds, acceptable, critical_examples, "
        "acceptable_examples"
    )
    note = serializers.CharField(max_length=NOTE_MAX_CHARS, required=False, allow_blank=True)


@extend_schema_view(
    list=extend_schema(summary="Codebook versions"),
    retrieve=extend_schema(summary="One codebook version: its content, studies and diff"),
    create=extend_schema(
        summary="The next codebook version (admins)",
        request=CodebookVersionCreateSerializer,
        responses=CodebookVersionDetailSerializer,
    ),
)
class CodebookVersionViewSet(VersionViewSet):
    serializer_class = CodebookVersionSerializer
    detail_serializer_class = CodebookVersionDetailSerializer
    create_serializer_class = CodebookVersionCreateSerializer
    filterset_fields = ("is_demo",)

    def get_queryset(self):
        return codebook_version_list()

    def create_version(self, data: dict, author):
        return codebook_version_create(author=author, **data)
