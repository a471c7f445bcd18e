"""The annotation console: studies, items, participants, assignments, annotations, adjudications."""

from django.contrib import admin

from annotation.models import (
    Adjudication,
    Annotation,
    Assignment,
    AttentionCheckResult,
    EntryEvent,
    Participant,
    Study,
    StudyItem,
)


class StudyItemInline(admin.TabularInline):
    model = StudyItem
    extra = 0
    raw_id_fields = ["generation"]
    fields = ["generation", "kind", "position", "expected_has_failure", "explanation", "n_assigned"]
    readonly_fields = ["n_assigned"]


@admin.register(Study)
class StudyAdmin(admin.ModelAdmin):
    list_display = [
        "name",
        "status",
        "entry",
        "overlap",
        "items_per_participant",
        "min_seconds_per_item",
        "created_at",
    ]
    list_filter = ["status", "entry"]
    search_fields = ["name", "slug", "prolific_study_id"]
    readonly_fields = ["created_at", "created_by"]
    inlines = [StudyItemInline]

    def save_model(self, request, obj, form, change):
        if not change:
            obj.created_by = request.user
        super().save_model(request, obj, form, change)


@admin.register(Participant)
class ParticipantAdmin(admin.ModelAdmin):
    list_display = [
        "__str__",
        "study",
        "stage",
        "n_done",
        "attention_failures",
        "qualification_score",
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
