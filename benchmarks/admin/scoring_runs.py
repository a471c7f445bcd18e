"""Admin console for scoring runs: apply a scorer pack to a generator's generations on a
dataset (created by the service, the pack and its options checked), launch (start, resume or
take over), cancel, and read the summary and the recent failures. Admins create and launch;
researchers read.
"""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html

from benchmarks.models import ScoringRun
from benchmarks.packs.registry import pack_names
from benchmarks.services.scoring_runs import (
    ScoringRunError,
    scoring_run_cancel,
    scoring_run_create,
    scoring_run_start,
    scoring_run_validate,
)
from core.forms import GatedFormMixin
from core.roles import is_admin
from core.runs.models import RUN_STATE_FIELDS

CONFIG_FIELDS = ("generator", "dataset", "pack", "options", "chunk_size")
STATE_FIELDS = ("progress", *RUN_STATE_FIELDS, "summary_pretty", "errors_pretty")


class ScoringRunForm(GatedFormMixin, forms.ModelForm):
    pack = forms.ChoiceField(choices=())

    class Meta:
        model = ScoringRun
        fields = CONFIG_FIELDS

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "pack" in self.fields:  # the add form (a run is read-only after creation)
            self.fields["pack"].choices = [(name, name) for name in pack_names()]

    def clean(self):
        data = super().clean()
        if data.get("pack"):
            try:
                data["options"] = scoring_run_validate(
                    pack=data["pack"],
                    options=data.get("options") or {},
                    chunk_size=data.get("chunk_size") or 0,
                )
            except ScoringRunError as exc:
                raise forms.ValidationError(str(exc)) from exc
        return data


@admin.register(ScoringRun)
class ScoringRunAdmin(admin.ModelAdmin):
    form = ScoringRunForm
    list_display = ("id", "pack", "generator", "dataset", "status", "progress", "n_failed")
    list_filter = ("status", "pack")
    list_select_related = ("generator", "dataset")
    search_fields = ("pack", "generator__name", "dataset__name")
    actions = ["launch_runs", "cancel_runs"]

    def get_fields(self, request, obj=None):
        return CONFIG_FIELDS if obj is None else CONFIG_FIELDS + STATE_FIELDS

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else CONFIG_FIELDS + STATE_FIELDS

    def has_add_permission(self, request):
        return is_admin(request.user) and super().has_add_permission(request)

    def has_change_permission(self, request, obj=None):
        return is_admin(request.user) and super().has_change_permission(request, obj)

    def has_delete_permission(self, request, obj=None):
        return is_admin(request.user) and super().has_delete_permission(request, obj)

    def has_launch_permission(self, request):
        return is_admin(request.user)

    @admin.display(description="progress")
    def progress(self, obj: ScoringRun):
        return format_html(
            '<progress max="{}" value="{}"></progress> {}/{}',
            obj.n_total or 1,
            obj.n_done + obj.n_failed,
            obj.n_done,
            obj.n_total,
        )

    @admin.display(description="summary (the pack's)")
    def summary_pretty(self, obj: ScoringRun):
        return format_html(
            "<pre>{}</pre>", json.dumps(obj.summary, indent=2, sort_keys=True, ensure_ascii=False)
        )

    @admin.display(description="recent failures")
    def errors_pretty(self, obj: ScoringRun):
        return format_html("<pre>{}</pre>", json.dumps(obj.errors, indent=2, ensure_ascii=False))

    def save_model(self, request, obj, form, change):
        if change:  # read-only after creation
            return
        data = form.cleaned_data
        run = scoring_run_create(
            generator=data["generator"],
            dataset=data["dataset"],
            pack=data["pack"],
            options=data.get("options") or {},
            chunk_size=data["chunk_size"],
            created_by=request.user,
            start=False,
        )
        obj.pk = run.pk
        obj._state.adding = False
        messages.info(request, f"Scoring run {run.pk} created: select it and use “Launch”.")

    @admin.action(description="Launch (start or resume) selected runs", permissions=["launch"])
    def launch_runs(self, request, queryset):
        for run in queryset:
            taken_over = run.worker_gone
            try:
                run = scoring_run_start(run=run, force=taken_over)
            except ScoringRunError as exc:
                messages.error(request, f"run {run.pk}: {exc}")
                continue
            verb = "taken over" if taken_over else "launched"
            messages.success(request, f"scoring run {run.pk} {verb}")

    @admin.action(description="Cancel selected runs", permissions=["launch"])
    def cancel_runs(self, request, queryset):
        for run in queryset:
            try:
                run = scoring_run_cancel(run=run)
            except ScoringRunError as exc:
                messages.error(request, f"run {run.pk}: {exc}")
                continue
            messages.info(request, f"run {run.pk}: {run.status}")
