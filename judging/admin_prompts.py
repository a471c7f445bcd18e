"""The console's judge prompt versions (:class:`core.versions_admin.VersionAdmin`): the list, a
version's text with its diff against the version before and the judges that send it, and
*Add* (admins) for the next version, e.g. from an existing one (``?from=<id>``)."""

from __future__ import annotations

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html_join

from core.versions_admin import VersionAdmin
from judging.models import PromptVersion
from judging.services.prompt_versions import prompt_version_check, prompt_version_create


@admin.register(PromptVersion)
class PromptVersionAdmin(VersionAdmin):
    content_fields = ("name", "text")
    list_filter = ("name", "is_demo")
    list_select_related = ("author",)
    search_fields = ("name", "note", "text")

    def check_version(self, data: dict) -> None:
        prompt_version_check(
            name=data.get("name") or "", text=data.get("text") or "", note=data.get("note") or ""
        )

    def create_version(self, data: dict, author):
        return prompt_version_create(
            name=data["name"], text=data["text"], note=data.get("note") or "", author=author
        )

    @admin.display(description="judges sending it")
    def used_by(self, obj: PromptVersion) -> str:
        judges = list(obj.judges.order_by("name")[:50])
        if not judges:
            return "no judge yet"
        return format_html_join(
            ", ",
            '<a href="{}">{}</a>',
            ((reverse("admin:judging_judge_change", args=[j.pk]), j.name) for j in judges),
        )
