"""The console for benchmark data: topics, datasets, procedures, generators and generations.

Researchers (view permissions only) can browse; admins can change. Changelists join their
foreign keys and annotate counts so a page costs a fixed number of queries; the procedure's
source document is left out of list queries.
"""

from __future__ import annotations

from django.contrib import admin
from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.text import Truncator

from benchmarks.models import Dataset, Generation, Generator, Procedure, Topic
from core.forms import GatedModelForm


def _steps_html(steps) -> str:
    if not steps:
        return "—"
    items = format_html_join("", "<li>{}</li>", ((str(s),) for s in steps))
    return format_html('<ol style="margin:0;padding-left:1.5em;max-width:60em">{}</ol>', items)


class _CreatedAtReadonly:
    readonly_fields: tuple[str, ...] = ("created_at",)
    form = GatedModelForm  # a control character is an error at its field (core.forms)


@admin.register(Topic)
class TopicAdmin(admin.ModelAdmin):
    form = GatedModelForm
    list_display = ("name", "slug", "position", "n_procedures")
    search_fields = ("name", "slug")
    ordering = ("position", "name")
    prepopulated_fields = {"slug": ("name",)}

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_n_procedures=Count("procedures"))

    @admin.display(description="procedures", ordering="_n_procedures")
    def n_procedures(self, obj: Topic) -> int:
        return obj._n_procedures


@admin.register(Dataset)
class DatasetAdmin(_CreatedAtReadonly, admin.ModelAdmin):
    list_display = ("name", "version", "n_procedures", "n_generations", "created_at", "browse")
    list_filter = ("version",)
    search_fields = ("name", "version", "description")
    date_hierarchy = "created_at"

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .annotate(
                _n_procedures=Count("procedures", distinct=True),
                _n_generations=Count("procedures__generations", distinct=True),
            )
        )

    @admin.display(description="procedures", ordering="_n_procedures")
    def n_procedures(self, obj: Dataset) -> int:
        return obj._n_procedures

    @admin.display(description="generations", ordering="_n_generations")
    def n_generations(self, obj: Dataset) -> int:
        return obj._n_generations

    @admin.display(description="")
    def browse(self, obj: Dataset) -> str:
        return format_html('<a href="{}">Browse</a>', obj.get_absolute_url())


class GenerationInline(admin.TabularInline):
    """The procedure's generations, read-only, each linking to its own page."""

    model = Generation
    extra = 0
    can_delete = False
    show_change_link = True
    fields = ("generator", "n_steps", "token_count", "created_at")
    readonly_fields = fields

    def get_queryset(self, request):
        return super().get_queryset(request).select_related("generator", "procedure")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    @admin.display(description="steps")
    def n_steps(self, obj: Generation) -> int:
        return len(obj.predicted_steps or [])


@admin.register(Procedure)
class ProcedureAdmin(_CreatedAtReadonly, admin.ModelAdmin):
    list_display = (
        "source_example_id",
        "short_goal",
        "topic",
        "dataset",
        "n_steps",
        "n_generations",
    )
    list_display_links = ("source_example_id", "short_goal")
    list_filter = ("dataset", "topic")
    list_select_related = ("dataset", "topic")
    search_fields = ("goal", "source_example_id")
    autocomplete_fields = ("dataset", "topic")
    readonly_fields = ("created_at", "steps_list", "resources_list", "browse")
    list_per_page = 50
    fieldsets = (
        (
            None,
            {
                "fields": (
                    "dataset",
                    "source_example_id",
                    "topic",
                    "goal",
                    "url",
                    "browse",
                    "created_at",
                )
            },
        ),
        ("Reference steps", {"fields": ("steps_list", "steps")}),
        ("Resources", {"fields": ("resources_list", "resources")}),
        ("Source document", {"fields": ("source_text",), "classes": ("collapse",)}),
        ("Scorer-pack gold", {"fields": ("payload",), "classes": ("collapse",)}),
    )
    inlines = (GenerationInline,)

    def get_queryset(self, request):
        # The source document can be megabytes: loaded only when a change page shows it.
        return (
            super()
            .get_queryset(request)
            .defer("source_text")
            .annotate(_n_generations=Count("generations"))
        )

    @admin.display(description="goal", ordering="goal")
    def short_goal(self, obj: Procedure) -> str:
        return Truncator(obj.goal).chars(90)

    @admin.display(description="steps")
    def n_steps(self, obj: Procedure) -> int:
        return obj.n_steps

    @admin.display(description="generations", ordering="_n_generations")
    def n_generations(self, obj: Procedure) -> int:
        return obj._n_generations

    @admin.display(description="reference steps (as shown)")
    def steps_list(self, obj: Procedure) -> str:
        return _steps_html(obj.steps)

    @admin.display(description="resources (as shown)")
    def resources_list(self, obj: Procedure) -> str:
        return _steps_html(obj.resources)

    @admin.display(description="in the browser")
    def browse(self, obj: Procedure) -> str:
        if not obj.pk:
            return "—"
        return format_html(
            '<a href="{}">Compare every generation side by side</a>', obj.get_absolute_url()
        )


@admin.register(Generator)
class GeneratorAdmin(_CreatedAtReadonly, admin.ModelAdmin):
    list_display = ("name", "model", "backend", "prompt_variant", "n_generations", "created_at")
    list_filter = ("backend", "prompt_variant")
    search_fields = ("name", "model", "description")

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_n_generations=Count("generations"))

    @admin.display(description="generations", ordering="_n_generations")
    def n_generations(self, obj: Generator) -> int:
        return obj._n_generations


@admin.register(Generation)
class GenerationAdmin(_CreatedAtReadonly, admin.ModelAdmin):
    list_display = (
        "id",
        "source_example_id",
        "short_goal",
        "generator",
        "dataset",
        "n_steps",
        "token_count",
        "created_at",
    )
    list_display_links = ("id", "source_example_id")
    list_filter = ("generator", "generator__backend", "procedure__dataset", "procedure__topic")
    list_select_related = ("procedure__dataset", "generator")
    search_fields = (
        "procedure__source_example_id",
        "procedure__goal",
        "generator__name",
        "generator__model",
    )
    autocomplete_fields = ("generator",)
    raw_id_fields = ("procedure",)
    readonly_fields = ("created_at", "predicted_steps_list", "procedure_link")
    list_per_page = 50
    fieldsets = (
        (
            None,
            {"fields": ("procedure", "procedure_link", "generator", "token_count", "created_at")},
        ),
        (
            "How it stopped",
            {"fields": ("finish_reason", "prompt_tokens", "completion_tokens")},
        ),
        ("Predicted steps", {"fields": ("predicted_steps_list", "predicted_steps")}),
        ("Scores", {"fields": ("scores", "pack_scores"), "classes": ("collapse",)}),
        ("Structured output (scorer packs)", {"fields": ("payload",), "classes": ("collapse",)}),
        ("Raw model output", {"fields": ("model_completion",), "classes": ("collapse",)}),
    )

    def get_queryset(self, request):
        # Lists show the goal and ids, never the procedure's document, steps or the raw output.
        heavy = (
            "procedure__source_text",
            "procedure__steps",
            "procedure__resources",
            "model_completion",
            "payload",
            "pack_scores",
        )
        return super().get_queryset(request).select_related(*self.list_select_related).defer(*heavy)

    @admin.display(description="source id", ordering="procedure__source_example_id")
    def source_example_id(self, obj: Generation) -> str:
        return obj.procedure.source_example_id

    @admin.display(description="goal")
    def short_goal(self, obj: Generation) -> str:
        return Truncator(obj.procedure.goal).chars(70)

    @admin.display(description="dataset", ordering="procedure__dataset__name")
    def dataset(self, obj: Generation) -> str:
        return str(obj.procedure.dataset)

    @admin.display(description="steps")
    def n_steps(self, obj: Generation) -> int:
        return len(obj.predicted_steps or [])

    @admin.display(description="predicted steps (as shown)")
    def predicted_steps_list(self, obj: Generation) -> str:
        return _steps_html(obj.predicted_steps)

    @admin.display(description="procedure")
    def procedure_link(self, obj: Generation) -> str:
        if not obj.pk:
            return "—"
        url = reverse("admin:benchmarks_procedure_change", args=[obj.procedure_id])
        return format_html('<a href="{}">{}</a>', url, Truncator(str(obj.procedure)).chars(100))
