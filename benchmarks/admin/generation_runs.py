"""Admin console for generation runs: create a run (validated by the service), launch
(start, resume, or take over a run whose worker is gone) and cancel selected runs, watch
progress, tokens, cost, errors and scores.

Import this module from ``benchmarks/admin.py`` to register it.
"""

from __future__ import annotations

import json

from django import forms
from django.contrib import admin, messages
from django.utils.html import format_html

from benchmarks.models import GenerationRun
from benchmarks.packs.protocols import DEFAULT_PROTOCOL, PROTOCOL_CHOICES, ProtocolError
from benchmarks.services.generation_protocols import protocol_check
from benchmarks.services.generation_runs import (
    GenerationRunError,
    generation_run_cancel,
    generation_run_create,
    generation_run_rerun_failures,
    generation_run_start,
    generation_run_validate,
)
from core.forms import GatedFormMixin
from core.roles import is_admin
from core.runs.console import ended_fields
from core.runs.models import RUN_STATE_FIELDS

CONFIG_FIELDS = (
    "generator",
    "dataset",
    "topics",
    "protocol",
    "protocol_options",
    "variant",
    "backend",
    "base_url",
    "model",
    "api_key_env",
    "decoding",
    "parse_profile",
    "backend_options",
    "concurrency",
    "chunk_size",
    "scorers",
    "input_price_per_mtok",
    "output_price_per_mtok",
)
STATE_FIELDS = (
    "progress_bar",
    "worker",
    *RUN_STATE_FIELDS,
    "errors_pretty",
    "scores_pretty",
    "prompt_sha256",
)


class GenerationRunForm(GatedFormMixin, forms.ModelForm):
    model = forms.CharField(required=False, help_text="Default: the generator's model.")
    protocol = forms.ChoiceField(
        choices=PROTOCOL_CHOICES,
        initial=DEFAULT_PROTOCOL,
        required=False,  # blank: the default protocol
        help_text="The paper whose prompt, answer format and token budget the run uses: the H.2 "
        "prompts, or the protocol of the scorer pack the dataset was imported for.",
    )

    class Meta:
        model = GenerationRun
        fields = CONFIG_FIELDS

    def clean(self):
        data = super().clean()
        generator = data.get("generator")
        if generator is None:
            return data
        try:
            variant, model, _ = generation_run_validate(
                generator=generator,
                variant=data.get("variant"),
                model=data.get("model"),
                decoding=data.get("decoding") or {},
                scorers=data.get("scorers") or [],
                concurrency=data.get("concurrency") or 0,
                chunk_size=data.get("chunk_size") or 0,
                protocol=data.get("protocol") or DEFAULT_PROTOCOL,
            )
        except GenerationRunError as exc:
            raise forms.ValidationError(str(exc)) from exc
        dataset, topics = data.get("dataset"), list(data.get("topics") or [])
        items = dataset.procedures.all() if dataset is not None else None
        if items is not None and topics:
            items = items.filter(topic__in=topics)
        try:
            options, variant = protocol_check(
                protocol=data.get("protocol") or DEFAULT_PROTOCOL,
                options=data.get("protocol_options") or {},
                variant=variant,
                backend_config={
                    **dict(data.get("backend_options") or {}),
                    "backend": data.get("backend") or "openai",
                },
                procedures=items,
            )
        except ProtocolError as exc:
            field = exc.field if exc.field in ("protocol", "protocol_options", "variant") else None
            raise forms.ValidationError({field: str(exc)} if field else str(exc)) from exc
        data["variant"], data["model"] = variant, model
        data["protocol_options"] = options
        return data


@admin.register(GenerationRun)
class GenerationRunAdmin(admin.ModelAdmin):
    form = GenerationRunForm
    list_display = (
        "id",
        "generator",
        "dataset",
        "variant",
        "protocol",
        "model",
        "status",
        "progress_bar",
        "n_failed",
        "cost",
        "created_at",
    )
    list_filter = ("status", "variant", "protocol", "generator")
    list_select_related = ("generator", "dataset")
    change_form_template = "admin/benchmarks/generationrun/change_form.html"  # + live status
    search_fields = ("generator__name", "model", "dataset__name")
    actions = ["launch_runs", "rerun_failures_runs", "cancel_runs"]
    filter_horizontal = ("topics",)

    def get_urls(self):
        from django.urls import path

        own = [
            path(
                "<int:pk>/live/",
                self.admin_site.admin_view(self.live_view),
                name="benchmarks_generationrun_live",
            )
        ]
        return own + super().get_urls()

    def live_view(self, request, pk: int):
        """The run's status, counters and worker, polled by the run page while it is active."""
        from django.core.exceptions import PermissionDenied
        from django.shortcuts import get_object_or_404
        from django.template.response import TemplateResponse

        run = get_object_or_404(GenerationRun, pk=pk)
        if not self.has_view_permission(request, run):
            raise PermissionDenied
        return TemplateResponse(
            request,
            "admin/benchmarks/generationrun/_live.html",
            {"run": run, "ended": ended_fields(run)},
        )

    def get_fields(self, request, obj=None):
        return CONFIG_FIELDS if obj is None else CONFIG_FIELDS + STATE_FIELDS

    def get_readonly_fields(self, request, obj=None):
        # a run's configuration is fixed once created; its state is the workers'
        return () if obj is None else CONFIG_FIELDS + STATE_FIELDS

    def has_add_permission(self, request):
        return is_admin(request.user) and super().has_add_permission(request)

    def has_launch_permission(self, request):
        return is_admin(request.user)

    @admin.display(description="progress")
    def progress_bar(self, obj: GenerationRun):
        return format_html(
            '<progress max="{}" value="{}"></progress> {}/{}',
            obj.n_total or 1,
            obj.n_done,
            obj.n_done,
            obj.n_total,
        )

    @admin.display(description="worker")
    def worker(self, obj: GenerationRun):
        if obj.worker_gone:
            return "gone: “Launch” takes the run over"
        if obj.is_active and obj.lease_is_fresh():
            return f"alive (last heartbeat {obj.heartbeat_at:%H:%M:%S})"
        return "—"

    @admin.display(description="recent failures")
    def errors_pretty(self, obj: GenerationRun):
        return format_html("<pre>{}</pre>", json.dumps(obj.errors, indent=2, ensure_ascii=False))

    @admin.display(description="scores (D.3 / E.4)")
    def scores_pretty(self, obj: GenerationRun):
        return format_html(
            "<pre>{}</pre>", json.dumps(obj.scores, indent=2, sort_keys=True, ensure_ascii=False)
        )

    def save_model(self, request, obj, form, change):
        if change:  # everything is read-only after creation
            return
        data = form.cleaned_data
        try:
            run = generation_run_create(
                generator=data["generator"],
                dataset=data["dataset"],
                topics=data.get("topics") or [],
                variant=data["variant"],
                model=data["model"],
                base_url=data.get("base_url") or "",
                api_key_env=data.get("api_key_env") or "",
                backend=data.get("backend") or "openai",
                decoding=data.get("decoding") or {},
                backend_options=data.get("backend_options") or {},
                concurrency=data["concurrency"],
                chunk_size=data["chunk_size"],
                scorers=data.get("scorers") or [],
                input_price_per_mtok=data["input_price_per_mtok"],
                output_price_per_mtok=data["output_price_per_mtok"],
                created_by=request.user,
                start=False,
                parse_profile=data.get("parse_profile") or "reference",
                protocol=data.get("protocol") or DEFAULT_PROTOCOL,
                protocol_options=data.get("protocol_options") or {},
            )
        except GenerationRunError as exc:  # raced with another run since clean()
            messages.error(request, str(exc))
            raise
        obj.pk = run.pk
        obj._state.adding = False
        messages.info(
            request, f"Run {run.pk} created (queued): select it and use “Launch” to start it."
        )

    def save_related(self, request, form, formsets, change):
        if change:
            super().save_related(request, form, formsets, change)
        # on add, the service already set the topics

    @admin.action(description="Launch (start or resume) selected runs", permissions=["launch"])
    def launch_runs(self, request, queryset):
        for run in queryset:
            if run.status == GenerationRun.Status.DONE:
                messages.warning(request, f"run {run.pk} is already done")
                continue
            if run.is_active and run.lease_is_fresh():
                messages.warning(request, f"run {run.pk} is {run.status}: its worker is alive")
                continue
            taken_over = run.worker_gone
            try:
                run = generation_run_start(run=run)
            except GenerationRunError as exc:
                messages.error(request, f"run {run.pk}: {exc}")
                continue
            messages.success(
                request,
                f"run {run.pk} {'taken over' if taken_over else 'launched'} "
                f"({run.n_total - run.n_done} to go)",
            )

    @admin.action(
        description="Re-run only the failures of selected runs (done or failed)",
        permissions=["launch"],
    )
    def rerun_failures_runs(self, request, queryset):
        for run in queryset:
            try:
                run = generation_run_rerun_failures(run=run)
            except GenerationRunError as exc:
                messages.error(request, f"run {run.pk}: {exc}")
                continue
            messages.success(
                request, f"run {run.pk}: its failures are asked again ({run.n_total - run.n_done})"
            )

    @admin.action(description="Cancel selected runs", permissions=["launch"])
    def cancel_runs(self, request, queryset):
        for run in queryset:
            try:
                run = generation_run_cancel(run=run)
            except GenerationRunError as exc:
                messages.error(request, f"run {run.pk}: {exc}")
                continue
            messages.info(request, f"run {run.pk}: {run.status}")
