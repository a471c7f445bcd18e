"""The judging console: judges, runs (launch with a cost estimate first, both worked out of
the request by workers, then a live htmx progress bar polling with back-off; cancel, resume,
take over a run whose worker is gone) and judgments. Launch,
cancel and resume are for the admin role only."""

from __future__ import annotations

from decimal import Decimal

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.template.response import TemplateResponse
from django.urls import path, reverse
from django.utils.html import format_html

from benchmarks.models import Dataset, Generator, Topic
from core.errors import validation_text
from core.forms import GatedFormMixin, GatedModelForm
from core.middleware import text_gate_exempt
from core.polling import Poll, next_poll
from core.roles import is_admin
from core.runs.console import RunAdmin, ended_fields
from judging.admin_prompts import PromptVersionAdmin  # noqa: F401 (registers it)
from judging.models import Judge, JudgeRun, JudgeRunEstimate, Judgment, LeaderboardReport
from judging.selectors import judgments as selectors
from judging.services import estimates
from judging.services import runs as services
from judging.services.sampling import MAX_SAMPLES


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    form = GatedModelForm  # a control character is an error at its field (core.forms)
    list_display = (
        "name",
        "backend",
        "model",
        "prompt_version",
        "concurrency",
        "price_input_per_mtok",
        "price_output_per_mtok",
        "short_judge_id",
    )
    list_filter = ("backend",)
    list_select_related = ("prompt_version",)
    search_fields = ("name", "model")
    readonly_fields = ("judge_id", "created_at")
    actions = ("launch_run",)

    change_list_template = "admin/judging/judge/change_list.html"  # + the preset buttons

    @admin.display(description="judge id")
    def short_judge_id(self, obj: Judge) -> str:
        return obj.judge_id[:12]

    def changelist_view(self, request, extra_context=None):
        from judging.presets import presets

        extra_context = {**(extra_context or {}), "judge_presets": presets().values()}
        return super().changelist_view(request, extra_context=extra_context)

    def get_changeform_initial_data(self, request):
        """``?preset=how2judge`` fills the add form with that preset (judging.presets)."""
        initial = super().get_changeform_initial_data(request)
        key = request.GET.get("preset")
        if key:
            from judging.presets import preset_fields

            try:
                initial.update(preset_fields(key))
            except ValueError as exc:
                messages.error(request, str(exc))
            initial.pop("preset", None)
        return initial

    def has_launch_permission(self, request) -> bool:
        return is_admin(request.user)

    @admin.action(description="Launch a judge run with this judge", permissions=["launch"])
    def launch_run(self, request, queryset):
        judge = queryset.first()
        return redirect(
            reverse("admin:judging_judgerun_launch") + (f"?judge={judge.pk}" if judge else "")
        )


class LaunchForm(GatedFormMixin, forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.exclude(backend=Judge.Backend.IMPORTED))
    dataset = forms.ModelChoiceField(queryset=Dataset.objects.all(), required=False)
    generators = forms.ModelMultipleChoiceField(queryset=Generator.objects.all(), required=False)
    topics = forms.ModelMultipleChoiceField(queryset=Topic.objects.all(), required=False)
    generation_ids = forms.CharField(
        required=False, max_length=100_000, help_text="comma-separated generation ids"
    )
    study = forms.IntegerField(
        required=False, min_value=1, help_text="judge the items of this study (id)"
    )
    samples = forms.IntegerField(
        required=False,
        initial=1,
        min_value=1,
        max_value=MAX_SAMPLES,
        help_text="k > 1: also ask k seeded samples per item, for calibration (k more requests)",
    )
    sample_seed = forms.IntegerField(
        required=False,
        initial=0,
        min_value=0,
        max_value=2**31 - 1 - MAX_SAMPLES,
        help_text="the first seed",
    )

    def clean_generation_ids(self) -> list[int]:
        raw = [
            p.strip()
            for p in (self.cleaned_data.get("generation_ids") or "").split(",")
            if p.strip()
        ]
        bad = [p for p in raw if not p.isdigit()]
        if bad:
            raise ValidationError(f"not an id: {', '.join(bad[:5])}")
        return [int(p) for p in raw]

    def selection(self) -> dict:
        d = self.cleaned_data
        out: dict = {}
        if d.get("dataset"):
            out["dataset"] = d["dataset"].pk
        if d.get("generators"):
            out["generators"] = [g.pk for g in d["generators"]]
        if d.get("topics"):
            out["topics"] = [t.pk for t in d["topics"]]
        if d.get("generation_ids"):
            out["generation_ids"] = d["generation_ids"]
        if d.get("study"):
            out["study"] = d["study"]
        return out


JUDGE_RUN_COUNTS = ("n_parse_failed", "n_reused")  # a judge run's counts beside the engine's


def _poll(request: HttpRequest, mark: str) -> Poll:
    return next_poll(waited=request.GET.get("wait"), seen=request.GET.get("seen"), mark=mark)


def _run_mark(run: JudgeRun) -> str:
    return f"{run.status}:{run.n_done}:{run.n_failed}:{int(run.prepared_at is not None)}"


def _estimated_cost(estimate_id: str | None, judge: Judge):
    """The cost of the estimate shown before launch (the same judge's, when done)."""
    if not (estimate_id or "").isdigit():
        return None
    est = JudgeRunEstimate.objects.filter(
        pk=estimate_id, judge=judge, status=JudgeRunEstimate.Status.DONE
    ).first()
    return Decimal(est.result["est_cost"]) if est is not None and est.result else None


@admin.register(JudgeRun)
class JudgeRunAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "judge",
        "status",
        "progress_bar",
        "n_total",
        "n_done",
        "n_failed",
        "n_parse_failed",
        "cost",
        "estimated_cost",
        "created_at",
    )
    list_filter = ("status", "judge")
    list_select_related = ("judge",)
    readonly_fields = [f.name for f in JudgeRun._meta.fields]
    change_form_template = "admin/judging/judgerun/change_form.html"
    change_list_template = "admin/judging/judgerun/change_list.html"

    def has_add_permission(self, request) -> bool:
        return False  # runs are launched through the launch page (estimate first)

    def changelist_view(self, request, extra_context=None):
        extra = {**(extra_context or {}), "can_launch": is_admin(request.user)}
        return super().changelist_view(request, extra_context=extra)

    @admin.display(description="progress")
    def progress_bar(self, obj: JudgeRun) -> str:
        return format_html(
            '<progress max="1" value="{}"></progress> {}%',
            f"{obj.progress:.3f}",
            obj.progress_percent,
        )

    def change_view(self, request, object_id, form_url="", extra_context=None):
        run = JudgeRun.objects.select_related("judge").filter(pk=object_id).first()
        extra = dict(extra_context or {})
        if run is not None:
            extra.update(
                progress=selectors.judge_run_progress(run),
                poll=_poll(request, _run_mark(run)),
                can_act=is_admin(request.user),
            )
        return super().change_view(request, object_id, form_url, extra_context=extra)

    def get_urls(self):
        own = [
            path(
                "launch/",
                # LaunchForm gates every posted value at its field (core.forms)
                text_gate_exempt(self.admin_site.admin_view(self.launch_view)),
                name="judging_judgerun_launch",
            ),
            path(
                "estimate/<int:pk>/",
                self.admin_site.admin_view(self.estimate_view),
                name="judging_judgerun_estimate",
            ),
            path(
                "<int:pk>/progress/",
                self.admin_site.admin_view(self.progress_view),
                name="judging_judgerun_progress",
            ),
            path(
                "<int:pk>/cancel/",
                self.admin_site.admin_view(self.cancel_view),
                name="judging_judgerun_cancel",
            ),
            path(
                "<int:pk>/resume/",
                self.admin_site.admin_view(self.resume_view),
                name="judging_judgerun_resume",
            ),
            path(
                "<int:pk>/rerun-failures/",
                self.admin_site.admin_view(self.rerun_failures_view),
                name="judging_judgerun_rerun_failures",
            ),
        ]
        return own + super().get_urls()

    def _require_admin(self, request: HttpRequest) -> None:
        if not is_admin(request.user):
            raise PermissionDenied("launching, cancelling and resuming judge runs is for admins")

    def launch_view(self, request: HttpRequest) -> HttpResponse:
        """Estimate first (a worker computes it; the page polls it), then launch: the run is
        created at once and the worker selects and hashes its items."""
        self._require_admin(request)
        estimate = None
        if request.method == "POST":
            form = LaunchForm(request.POST)
            if form.is_valid():
                judge = form.cleaned_data["judge"]
                try:
                    if request.POST.get("confirm") == "1":
                        run = services.judge_run_create(
                            judge=judge,
                            selection=form.selection(),
                            user=request.user,
                            estimated_cost=_estimated_cost(request.POST.get("estimate"), judge),
                            n_samples=form.cleaned_data["samples"] or 1,
                            sample_seed=form.cleaned_data["sample_seed"] or 0,
                        )
                        messages.success(request, f"Run {run.pk} launched: {run.n_total} item(s).")
                        return redirect(reverse("admin:judging_judgerun_change", args=[run.pk]))
                    estimate = estimates.judge_run_estimate_request(
                        judge=judge, selection=form.selection(), user=request.user
                    )
                except ValidationError as exc:
                    for field, errs in getattr(
                        exc, "message_dict", {"__all__": exc.messages}
                    ).items():
                        form.add_error(field if field in form.fields else None, errs)
        else:
            form = LaunchForm(initial={"judge": request.GET.get("judge")})
        context = {
            **self.admin_site.each_context(request),
            "title": "Launch a judge run",
            "form": form,
            "est": estimate,
            "poll": None if estimate is None else _poll(request, estimate.status),
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/judging/judgerun/launch.html", context)

    def estimate_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        """The estimate's partial (htmx polls it with back-off until a worker is done)."""
        self._require_admin(request)
        est = get_object_or_404(JudgeRunEstimate, pk=pk)
        return TemplateResponse(
            request,
            "admin/judging/judgerun/_estimate.html",
            {"est": est, "poll": _poll(request, est.status)},
        )

    def progress_view(self, request: HttpRequest, pk: int, notice: str = "") -> HttpResponse:
        """The live progress partial: the run's row only (its counters), one query."""
        run = get_object_or_404(JudgeRun.objects.select_related("judge"), pk=pk)
        if not self.has_view_permission(request, run):
            raise PermissionDenied
        response = TemplateResponse(
            request,
            "admin/judging/judgerun/_progress.html",
            {
                "run": run,
                "p": selectors.judge_run_progress(run),
                "poll": _poll(request, _run_mark(run)),
                "can_act": is_admin(request.user),
                "notice": notice,
                "ended": ended_fields(run, extra=JUDGE_RUN_COUNTS),
            },
        )
        return response

    def cancel_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        return self._act(request, pk, lambda run: services.judge_run_cancel(run=run))

    def resume_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        force = request.POST.get("force") == "1"
        return self._act(request, pk, lambda run: services.judge_run_resume(run=run, force=force))

    def rerun_failures_view(self, request: HttpRequest, pk: int) -> HttpResponse:
        return self._act(request, pk, lambda run: services.judge_run_rerun_failures(run=run))

    def _act(self, request: HttpRequest, pk: int, action) -> HttpResponse:
        """Cancel or resume (admins, POST): the progress partial for htmx (with the refusal, if
        any), else the run page with a message."""
        self._require_admin(request)
        if request.method != "POST":
            return redirect(reverse("admin:judging_judgerun_change", args=[pk]))
        run = get_object_or_404(JudgeRun, pk=pk)
        try:
            run = action(run)
            notice, level = f"Run {run.pk}: {run.status}.", messages.INFO
        except ValidationError as exc:
            notice, level = f"Run {run.pk}: {validation_text(exc)}", messages.ERROR
        if request.headers.get("HX-Request"):
            return self.progress_view(request, run.pk, notice=notice)
        messages.add_message(request, level, notice)
        return redirect(reverse("admin:judging_judgerun_change", args=[run.pk]))


@admin.register(Judgment)
class JudgmentAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "judge",
        "source_example_id",
        "has_failure",
        "n_failures",
        "parse_failed",
        "prompt_tokens",
        "completion_tokens",
        "created_at",
    )
    list_filter = ("judge", "has_failure", "parse_failed")
    list_select_related = ("judge",)
    search_fields = ("source_example_id", "content_hash")
    readonly_fields = [f.name for f in Judgment._meta.fields]

    def has_add_permission(self, request) -> bool:
        return False


@admin.register(JudgeRunEstimate)
class JudgeRunEstimateAdmin(RunAdmin):
    """Cost estimates, runs of the engine (asked on the launch page or the API)."""

    run_columns = ("judge",)
    list_select_related = ("judge",)


@admin.register(LeaderboardReport)
class LeaderboardReportAdmin(RunAdmin):
    """Stored judge leaderboards, runs of the engine recomputed when their data changed."""

    run_columns = ("key", "study", "computed_at")
