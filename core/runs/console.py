"""The console (Django admin) list of a run type, the same for every small run type (cost
estimates, stored leaderboards, promotions): status, a progress bar counted from the rows,
the run's state read-only, and cancel / resume actions through the engine."""

from __future__ import annotations

from django.contrib import admin, messages
from django.utils.html import format_html

from core.roles import is_admin
from core.runs import engine
from core.runs.models import RUN_STATE_FIELDS, Run


class RunAdmin(admin.ModelAdmin):
    """Subclass it with the run type's own columns in ``run_columns``."""

    run_columns: tuple[str, ...] = ()
    list_filter = ("status",)
    actions = ["cancel_runs", "resume_runs"]

    def get_list_display(self, request):
        return (
            "id",
            *self.run_columns,
            "status",
            "progress_bar",
            "n_total",
            "n_done",
            "created_at",
        )

    def get_readonly_fields(self, request, obj=None):
        own = [f.name for f in self.model._meta.fields if f.name not in RUN_STATE_FIELDS]
        return ["progress_bar", *RUN_STATE_FIELDS, *own]

    def has_add_permission(self, request) -> bool:
        return False  # asked from their pages or the API

    @admin.display(description="progress")
    def progress_bar(self, obj: Run) -> str:
        return format_html(
            '<progress max="1" value="{}"></progress> {}%',
            f"{obj.progress:.3f}",
            obj.progress_percent,
        )

    def has_launch_permission(self, request) -> bool:
        """Cancel and resume are an admin's (researchers read): the actions are offered only
        to admins, and Django refuses them to anyone else."""
        return is_admin(request.user)

    @admin.action(description="Cancel selected runs", permissions=["launch"])
    def cancel_runs(self, request, queryset):
        self._each(request, queryset, engine.cancel)

    @admin.action(description="Resume selected runs", permissions=["launch"])
    def resume_runs(self, request, queryset):
        self._each(request, queryset, engine.resume)

    def _each(self, request, queryset, change) -> None:
        """``change(run)`` for every selected run; a refusal is a warning, not a stop."""
        for run in queryset:
            try:
                change(run)
            except engine.RunStateError as exc:
                self.message_user(request, str(exc), messages.WARNING)


def ended_fields(run: Run, *, extra: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """Once a run is no longer active: (field, the console's text) of its state fields, which
    its progress partial swaps into the run page's fixed part (``hx-swap-oob``), so the page
    shows how the run ended (status, counts, finish time, error) without a reload. Empty while
    the run is active (the fixed part is then swapped when it ends)."""
    from django.contrib.admin.utils import display_for_field

    if run.is_active:
        return []
    out = []
    for name in (*RUN_STATE_FIELDS, *extra):
        field = run._meta.get_field(name)
        if field.is_relation:
            continue
        out.append((name, str(display_for_field(getattr(run, name), field, "-"))))
    return out
