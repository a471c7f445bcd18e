"""The mining console: batches (cancel, resume), their documents and usage per stage, and
promotions into datasets (runs of the engine, cancel and resume like every run)."""

from django.contrib import admin, messages
from django.core.exceptions import ValidationError

from benchmarks.llm.replay import is_replay
from core.errors import validation_text
from core.forms import GatedModelForm
from core.roles import is_admin
from core.runs.console import RunAdmin
from core.runs.models import RUN_STATE_FIELDS
from mining.models import MiningBatch, MiningDocument, MiningPromotion, MiningStageUsage
from mining.services import batches as services


class UsageInline(admin.TabularInline):
    model = MiningStageUsage
    extra = 0
    can_delete = False
    readonly_fields = [
        "stage",
        "requests",
        "failed_requests",
        "prompt_tokens",
        "completion_tokens",
        "cost_usd",
    ]


@admin.register(MiningBatch)
class MiningBatchAdmin(admin.ModelAdmin):
    form = GatedModelForm  # a refused character is an error at its field (core.forms)
    list_display = ["id", "name", "status", "n_total", "n_done", "created_at"]
    list_filter = ["status"]
    search_fields = ["name", "source_name"]
    readonly_fields = ["uploaded_file", "ingested", "llm_replies", *RUN_STATE_FIELDS]
    # the upload is named, not linked: stored files are read by workers through STORAGES and
    # are not served at MEDIA_URL (the link was a 404)
    exclude = ["source_file"]
    inlines = [UsageInline]

    @admin.display(description="uploaded file")
    def uploaded_file(self, batch) -> str:
        return batch.source_file.name or "(no upload: a stored file, shard directory or glob)"

    @admin.display(description="LLM replies")
    def llm_replies(self, batch) -> str:
        """Whether the LLM stages called a model or replayed a recording (the replay backend)."""
        replayed = sorted(
            {str(c.get("recording")) for c in (batch.backends or {}).values() if is_replay(c)}
        )
        if replayed:
            return "REPLAYED from recorded replies (no model called): " + ", ".join(replayed)
        return "from the configured models"

    actions = ["cancel_batches", "resume_batches"]

    def has_add_permission(self, request):
        return (
            False  # batches start from the console page /mining/new/, the API or `manage.py mine`
        )

    def has_launch_permission(self, request) -> bool:
        return is_admin(request.user)  # cancel and resume are an admin's; researchers read

    @admin.action(description="Cancel selected batches", permissions=["launch"])
    def cancel_batches(self, request, queryset):
        self._each(request, queryset, services.batch_cancel)

    @admin.action(description="Resume selected batches", permissions=["launch"])
    def resume_batches(self, request, queryset):
        self._each(request, queryset, services.batch_resume)

    def _each(self, request, queryset, change) -> None:
        """``change(batch=…)`` for every selected batch; a refusal is a warning, not a stop."""
        for batch in queryset:
            try:
                change(batch=batch)
            except ValidationError as exc:
                self.message_user(request, validation_text(exc), messages.WARNING)


@admin.register(MiningDocument)
class MiningDocumentAdmin(admin.ModelAdmin):
    form = GatedModelForm  # a refused character is an error at its field (core.forms)
    list_display = ["id", "batch", "position", "source_id", "topic", "outcome", "stage_reached"]
    list_filter = ["outcome", "stage_reached", "topic"]
    search_fields = ["source_id", "goal"]
    raw_id_fields = ["batch"]


@admin.register(MiningPromotion)
class MiningPromotionAdmin(RunAdmin):
    run_columns = ("batch", "target")
    list_select_related = ("batch",)
    raw_id_fields = ["batch"]
