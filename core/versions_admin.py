"""The console (Django admin) of a versioned record (:mod:`core.versions`), the same for judge
prompts and codebooks: a list of versions (number, author, time, note, what changed); a
version's page read-only, with its diff against the version before, rendered line by line;
*Add* (admins) makes the next version, prefilled from an existing one with ``?from=<id>``.
Versions are never changed or deleted in the console: researchers read, admins add."""

from __future__ import annotations

from django.contrib import admin
from django.core.exceptions import ValidationError
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from core.forms import GatedModelForm
from core.textdiff import Diff

_LINE_STYLES = {
    "hunk": ("span", "color:#555;font-weight:bold", ""),
    "same": ("span", "color:#333", "  "),
    "removed": ("del", "background:#fde2e1;color:#7a1712;text-decoration:none", "− "),
    "added": ("ins", "background:#dcf5dc;color:#135e13;text-decoration:none", "+ "),
}


def diff_html(diff: Diff) -> SafeString:
    """``diff`` as HTML: removed lines in ``<del>``, added ones in ``<ins>`` (with − / + so it
    reads without colour), hunk headers naming the lines, long lines wrapped."""
    if diff.unchanged:
        return format_html('<p class="diff-none">{}</p>', "No change from the version before.")
    rows = format_html_join(
        "",
        '<div><{} style="display:block;white-space:pre-wrap;{}">{}{}</{}></div>',
        (
            (tag, style, mark, line.text, tag)
            for line in diff.lines
            for tag, style, mark in [_LINE_STYLES[line.kind]]
        ),
    )
    return format_html(
        '<p class="diff-summary">{}</p><div class="diff" role="region" aria-label="{}" '
        'style="font-family:monospace;font-size:12px;max-height:40em;overflow:auto;'
        'border:1px solid #ccc;padding:4px">{}</div>',
        diff.summary(),
        "Changes from the version before",
        rows,
    )


class VersionAdmin(admin.ModelAdmin):
    """Subclass with ``content_fields`` (the fields typed when adding), ``check_version`` (the
    service's checks of the form's cleaned data, raising a ``ValidationError`` by field) and
    ``create_version`` (the service making the next version, with its author)."""

    content_fields: tuple[str, ...] = ()
    form = GatedModelForm  # a refused character is an error at its field (core.forms)
    change_form_template = "admin/versions/change_form.html"  # + "New version from this one"

    def get_list_display(self, request):
        return ("__str__", "author", "created_at", "note", "changes", "is_demo")

    def get_fields(self, request, obj=None):
        if obj is None:
            return (*self.content_fields, "note")
        return (
            "number",
            *self.content_fields,
            "note",
            "author",
            "created_at",
            "is_demo",
            "changes_from_previous",
            "used_by",
        )

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else self.get_fields(request, obj)

    def has_change_permission(self, request, obj=None) -> bool:
        return False  # a version is never edited: a change is a new version

    def has_delete_permission(self, request, obj=None) -> bool:
        return False  # what names a version (a judge, a study) keeps meaning it

    @admin.display(description="changes")
    def changes(self, obj) -> str:
        return "first version" if obj.number == 1 else obj.diff().summary()

    @admin.display(description="changes from the version before")
    def changes_from_previous(self, obj) -> SafeString:
        return diff_html(obj.diff())

    @admin.display(description="used by")
    def used_by(self, obj) -> str:  # pragma: no cover - every subclass says
        raise NotImplementedError

    def get_changeform_initial_data(self, request):
        """``?from=<id>``: the add form starts from that version's content."""
        initial = super().get_changeform_initial_data(request)
        source = request.GET.get("from", "")
        initial.pop("from", None)
        if source.isdigit():
            found = self.model._default_manager.filter(pk=int(source)).first()
            if found is not None:
                initial.update({f: getattr(found, f) for f in self.content_fields})
        return initial

    def get_form(self, request, obj=None, change=False, **kwargs):
        form = super().get_form(request, obj, change=change, **kwargs)
        admin_site = self

        class CheckedForm(form):
            def clean(self):
                data = super().clean()
                try:
                    admin_site.check_version(data)
                except ValidationError as exc:
                    self.add_error(None, exc)
                return data

        return CheckedForm

    def check_version(self, data: dict) -> None:  # pragma: no cover - every subclass says
        raise NotImplementedError

    def create_version(self, data: dict, author):  # pragma: no cover - every subclass says
        raise NotImplementedError

    def save_model(self, request, obj, form, change):
        made = self.create_version(form.cleaned_data, request.user)
        obj.pk, obj.number, obj.created_at, obj.author = (
            made.pk,
            made.number,
            made.created_at,
            made.author,
        )
