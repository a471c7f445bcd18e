"""The console's codebook versions (:class:`core.versions_admin.VersionAdmin`): the list, a
version's content (JSON, the shape of ``annotation/codebook.py``) with its diff against the
version before and the studies that show it, and *Add* (admins) for the next version."""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html_join

from annotation.models import CodebookVersion
from annotation.services.codebook_versions import codebook_version_check, codebook_version_create
from core.admin_a11y import EmptyWhenNullJSONField
from core.versions_admin import VersionAdmin


class PrettyJSONField(EmptyWhenNullJSONField):
    """The codebook as indented JSON, one entry a line, to edit in a tall box (empty, not
    ``null``, when there is no value)."""

    widget = forms.Textarea(attrs={"rows": 30, "cols": 110})

    def prepare_value(self, value):
        if isinstance(value, (dict, list)):
            return json.dumps(value, ensure_ascii=False, indent=2)
        return super().prepare_value(value)


@admin.register(CodebookVersion)
class CodebookVersionAdmin(VersionAdmin):
    content_fields = ("content",)
    list_filter = ("is_demo",)
    list_select_related = ("author",)
    search_fields = ("note",)

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name == "content":
            kwargs["form_class"] = PrettyJSONField
        return super().formfield_for_dbfield(db_field, request, **kwargs)

    def check_version(self, data: dict) -> None:
        if "content" in data:  # a content that is not JSON is the field's own error
            codebook_version_check(content=data["content"], note=data.get("note") or "")

    def create_version(self, data: dict, author):
        return codebook_version_create(
            content=data["content"], note=data.get("note") or "", author=author
        )

    @admin.display(description="studies showing it")
    def used_by(self, obj: CodebookVersion) -> str:
        studies = list(obj.studies.order_by("-created_at")[:50])
        if not studies:
            return "no study yet"
        return format_html_join(
            ", ",
            '<a href="{}">{}</a>',
            ((reverse("admin:annotation_study_change", args=[s.pk]), s.name) for s in studies),
        )
