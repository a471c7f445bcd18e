"""The annotation console: studies, items, participants, assignments, annotations, adjudications;
a paid study's pay terms, rounds and the log of calls to Prolific (read-only)."""

from django import forms
from django.contrib import admin
from django.core.exceptions import ValidationError
from django.db import models

from annotation.admin_codebook import CodebookVersionAdmin  # noqa: F401 (registers it)
from annotation.forms_paid import StudyPayConsoleForm
from annotation.models import (
    Adjudication,
    Annotation,
    Assignment,
    AttentionCheckResult,
    EntryEvent,
    Participant,
    ProlificCall,
    Study,
    StudyItem,
    StudyPay,
    StudyRound,
)
from annotation.services.assignment import study_sample_ranks_refresh
from annotation.services.form_items import study_form_item_checked
from core.admin_a11y import EmptyWhenNullJSONField, label_row_fields
from core.forms import GatedModelForm


class StudyItemFormSet(forms.BaseInlineFormSet):
    """Item rows of a study of another form type than critical failure are checked by its
    form type (:func:`annotation.services.form_items.study_form_item_checked`): a pairwise
    item's second generation of the same procedure, the context, a known item's
    ``expected_label``; a critical-failure study's rows take no second generation."""

    def add_fields(self, form, index):
        super().add_fields(form, index)
        label_row_fields(form, index)  # each box named after its column, for screen readers

    def clean(self):
        super().clean()
        study = self.instance
        for n, form in enumerate(self.forms, start=1):
            data = getattr(form, "cleaned_data", None)
            if not data or data.get("DELETE") or not data.get("generation"):
                continue
            if study.form_type == "critical_failure":
                if data.get("generation_b"):
                    form.add_error("generation_b", "For pairwise studies only.")
                continue
            spec = {
                "generation_id": data["generation"].pk,
                "generation_b_id": data["generation_b"].pk if data.get("generation_b") else None,
                "kind": data.get("kind"),
                "context": data.get("context") or {},
                "expected_label": data.get("expected_label"),
                "explanation": data.get("explanation", ""),
            }
            try:
                checked = study_form_item_checked(study=study, spec=spec, where=f"item row {n}")
            except ValidationError as exc:
                form.add_error(None, exc)
            else:
                data["expected_label"] = checked.expected_label
                form.instance.expected_label = checked.expected_label


class StudyItemInline(admin.TabularInline):
    model = StudyItem
    formset = StudyItemFormSet
    extra = 0
    # compact boxes: the item table fits the window (it was 2,750 px wide)
    formfield_overrides = {
        models.JSONField: {
            "form_class": EmptyWhenNullJSONField,  # empty, not "null"
            "widget": forms.Textarea(attrs={"rows": 1, "cols": 14}),
        },
        models.TextField: {"widget": forms.Textarea(attrs={"rows": 1, "cols": 18})},
    }
    raw_id_fields = ["generation", "generation_b"]
    fields = [
        "generation",
        "generation_b",
        "kind",
        "position",
        "attempt",
        "expected_has_failure",
        "expected_label",
        "context",
        "explanation",
        "n_assigned",
        "sample_rank",
    ]
    readonly_fields = ["n_assigned", "sample_rank"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    form = GatedModelForm  # a refused character is an error at its field
    list_display = [
        "name",
        "status",
        "entry",
        "overlap",
        "items_per_participant",
        "min_seconds_per_item",
        "sampling",
        "gold_rate",
        "created_at",
    ]
    list_filter = ["status", "entry", "sampling"]
    search_fields = ["name", "slug", "prolific_study_id"]
    # the target's moments are written by the check and the resume (validation.stopping)
    readonly_fields = [
        "created_at",
        "created_by",
        "target_reached_at",
        "target_reached_interval",
        "target_resumed_at",
    ]
    inlines = [StudyItemInline]

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)

    def save_related(self, request, form, formsets, change):
        super().save_related(request, form, formsets, change)
        study_sample_ranks_refresh(study=form.instance)  # a new seed or new items


@admin.register(StudyPay)
class StudyPayAdmin(admin.ModelAdmin):
    form = StudyPayConsoleForm  # gated; amounts with two decimals, as on the Pay page
    list_display = (
        "study",
        "currency",
        "reward",
        "estimated_minutes",
        "bonus_per_item",
        "bonus_per_known_correct",
        "exclusion_group_id",
    )
    search_fields = ("study__name", "exclusion_group_id")
    raw_id_fields = ("study",)


@admin.register(StudyRound)
class StudyRoundAdmin(admin.ModelAdmin):
    form = GatedModelForm  # a refused character is an error at its field
    list_display = ("study", "previous", "number", "created_by", "created_at")
    search_fields = ("study__name", "previous__name")
    raw_id_fields = ("study", "previous")
    readonly_fields = ("created_by", "created_at")


@admin.register(ProlificCall)
class ProlificCallAdmin(admin.ModelAdmin):
    """The log of calls to Prolific: read-only for everyone (the log is evidence)."""

    list_display = ("created_at", "study", "user", "action", "target", "amount", "status", "ok")
    list_filter = ("action", "ok")
    search_fields = ("target", "request_summary", "message")
    list_select_related = ("study", "user")

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    form = GatedModelForm  # a refused character is an error at its field
    list_display = [
        "__str__",
        "study",
        "stage",
        "n_done",
        "attention_failures",
        "qualification_score",
        "qualification_attempt",
        "n_gold_served",
        "created_at",
    ]
    list_filter = ["study", "stage"]
    search_fields = ["prolific_pid", "user__username"]


@admin.register(Annotation)
class AnnotationAdmin(admin.ModelAdmin):
    list_display = ["participant", "item", "has_failure", "wall_ms", "active_ms", "submitted_at"]
    list_filter = ["item__study", "has_failure"]
    raw_id_fields = ["assignment", "participant", "item"]


@admin.register(Assignment)
class AssignmentAdmin(admin.ModelAdmin):
    list_display = ["participant", "item", "state", "served_at", "last_seen_at", "active_ms"]
    list_filter = ["state", "item__study"]
    raw_id_fields = ["participant", "item"]


@admin.register(AttentionCheckResult)
class AttentionCheckResultAdmin(admin.ModelAdmin):
    list_display = ["participant", "kind", "passed", "detail", "created_at"]
    list_filter = ["kind", "passed"]
    raw_id_fields = ["participant", "assignment"]


@admin.register(Adjudication)
class AdjudicationAdmin(admin.ModelAdmin):
    form = GatedModelForm  # a refused character is an error at its field
    list_display = ("item", "has_failure", "adjudicator", "updated_at")
    list_filter = ("has_failure", "item__study")
    search_fields = ("note", "item__generation__procedure__source_example_id")
    list_select_related = ("item", "adjudicator")
    raw_id_fields = ("item",)
    readonly_fields = ("adjudicator", "history", "created_at", "updated_at")


@admin.register(EntryEvent)
class EntryEventAdmin(admin.ModelAdmin):
    list_display = ("created_at", "study", "kind", "participant", "client_ip", "detail")
    list_filter = ("kind",)
    raw_id_fields = ("study", "participant")
