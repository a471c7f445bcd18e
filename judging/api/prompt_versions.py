"""API of judge prompt versions: ``/api/prompt-versions/`` (researchers list and read, with
the diff against the version before; admins create the next version of a prompt). Their
comparison on a study (``/api/prompt-versions/compare/``) is :mod:`validation.prompt_versions.api`."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers

from core.versions import NOTE_MAX_CHARS
from core.versions_api import VERSION_FIELDS, VersionDetailMixin, VersionSerializer, VersionViewSet
from judging import prompting
from judging.models import PromptVersion
from judging.selectors import prompt_versions as sel
from judging.services.prompt_versions import prompt_version_create


class PromptVersionSerializer(VersionSerializer):
    class Meta:
        model = PromptVersion
        fields = ("name", "sha256", *VERSION_FIELDS)


class PromptVersionDetailSerializer(VersionDetailMixin, PromptVersionSerializer):
    judges = serializers.SlugRelatedField(slug_field="name", many=True, read_only=True)

    class Meta(PromptVersionSerializer.Meta):
        fields = (*PromptVersionSerializer.Meta.fields, "text", "judges", "changes", "diff")


class PromptVersionCreateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=64, default=prompting.DEFAULT_TEMPLATE)
    text = serializers.CharField(max_length=prompting.PROMPT_MAX_CHARS, trim_whitespace=False)
    note = serializers.CharField(max_length=NOTE_MAX_CHARS, required=False, allow_blank=True)


@extend_schema_view(
    list=extend_schema(summary="Judge prompt versions"),
    retrieve=extend_schema(summary="One prompt version: its text, judges and diff"),
    create=extend_schema(
        summary="The next version of a judge prompt (admins)",
        request=PromptVersionCreateSerializer,
        responses=PromptVersionDetailSerializer,
    ),
)
class PromptVersionViewSet(VersionViewSet):
    serializer_class = PromptVersionSerializer
    detail_serializer_class = PromptVersionDetailSerializer
    create_serializer_class = PromptVersionCreateSerializer
    filterset_fields = ("name", "is_demo")

    def get_queryset(self):
        return sel.prompt_version_list()

    def create_version(self, data: dict, author):
        return prompt_version_create(author=author, **data)
