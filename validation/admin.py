"""The validation console: label sets, to look at (researchers) and delete (admins). They are
made on the upload page (Comparisons → Your labels), which checks the file; the console adds
and changes none."""

from __future__ import annotations

from django.contrib import admin

from validation.models import LabelSet


@admin.register(LabelSet)
class LabelSetAdmin(admin.ModelAdmin):
    list_display = ("name", "filename", "uploaded_by", "uploaded_at", "annotator_kind")
    search_fields = ("name", "filename")
    readonly_fields = [f.name for f in LabelSet._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
