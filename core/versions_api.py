"""The API of a versioned record (:mod:`core.versions`), the same for judge prompts and
codebooks: list and read for researchers (a version's read adds its diff against the version
before, as unified text), create (the next version) for admins. Versions are never changed
or deleted."""

from __future__ import annotations

from rest_framework import mixins, serializers, status, viewsets
from rest_framework.response import Response

from core.permissions import IsAdminRole, IsResearcherOrAdmin

VERSION_FIELDS = ("id", "number", "note", "author", "created_at", "is_demo")


class VersionSerializer(serializers.ModelSerializer):
    """Subclass with the model and its content fields in ``Meta``."""

    author = serializers.SlugRelatedField(slug_field="username", read_only=True)


class VersionDetailMixin(serializers.Serializer):
    changes = serializers.SerializerMethodField(
        help_text="what changed since the version before (a summary)"
    )
    diff = serializers.SerializerMethodField(
        help_text="the unified diff against the version before (+ added, - removed lines)"
    )

    def get_changes(self, obj) -> str:
        return obj.diff().summary()

    def get_diff(self, obj) -> str:
        return obj.diff().unified()


class VersionViewSet(mixins.CreateModelMixin, viewsets.ReadOnlyModelViewSet):
    """Subclass with ``serializer_class`` (list), ``detail_serializer_class`` (read),
    ``create_serializer_class`` (the fields a new version takes) and ``create_version``."""

    detail_serializer_class: type[serializers.Serializer]
    create_serializer_class: type[serializers.Serializer]
    ordering_fields = ("number", "created_at")

    def get_permissions(self):
        return [IsAdminRole()] if self.action == "create" else [IsResearcherOrAdmin()]

    def get_serializer_class(self):
        if self.action == "retrieve":
            return self.detail_serializer_class
        if self.action == "create":
            return self.create_serializer_class
        return self.serializer_class

    def create(self, request, *args, **kwargs):
        data = self.create_serializer_class(data=request.data)
        data.is_valid(raise_exception=True)
        version = self.create_version(dict(data.validated_data), request.user)
        return Response(self.detail_serializer_class(version).data, status=status.HTTP_201_CREATED)

    def create_version(self, data: dict, author):  # pragma: no cover - every subclass says
        raise NotImplementedError
