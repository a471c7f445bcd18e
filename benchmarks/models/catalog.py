"""The benchmark data model: topics, datasets, procedures, generators and generations."""

from __future__ import annotations

from django.core.validators import MinValueValidator
from django.db import models
from django.urls import reverse

from benchmarks.checkpoints import checkpoint_validator

# the longest description typed for a dataset or generator (docs/reference/limits.md)
DESCRIPTION_MAX = 10_000


class Topic(models.Model):
    """One of the 14 WebOrganizer topics (seed 000 §3.1). Seeded by a migration."""

    slug = models.SlugField(max_length=64, unique=True)
    name = models.CharField(max_length=128, unique=True)
    position = models.PositiveSmallIntegerField(default=0)

    class Meta:
        ordering = ["position", "name"]

    def __str__(self) -> str:
        return self.name


class Dataset(models.Model):
    """A named, versioned set of procedures, e.g. ``how2bench`` v1."""

    name = models.CharField(max_length=128)
    version = models.CharField(max_length=32, default="v1")
    description = models.TextField(blank=True, max_length=DESCRIPTION_MAX)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name", "version"]
        constraints = [
            models.UniqueConstraint(fields=["name", "version"], name="dataset_name_version_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name}@{self.version}"

    def get_absolute_url(self) -> str:
        return reverse("benchmarks:dataset_detail", args=[self.pk])


class Procedure(models.Model):
    """A goal with its resources and reference steps (the L1 of the annotation interface)."""

    # indexed by the constraint and index that lead with it
    dataset = models.ForeignKey(
        Dataset, on_delete=models.CASCADE, related_name="procedures", db_index=False
    )
    source_example_id = models.CharField(max_length=255)
    topic = models.ForeignKey(
        Topic, on_delete=models.PROTECT, related_name="procedures", null=True, blank=True
    )
    goal = models.TextField()
    resources = models.JSONField(default=list, blank=True)
    steps = models.JSONField(default=list)
    url = models.URLField(max_length=2000, blank=True)
    source_text = models.TextField(blank=True)
    # A scorer pack's gold for this item in the benchmark's own shape (benchmarks.formats.packs):
    # ProcBench {"gold": [states]}, SciRecipe {"gold": [steps]}, CustomPlans {"hint", "steps"}…
    payload = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["dataset_id", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["dataset", "source_example_id"],
                name="procedure_source_id_unique_in_dataset",
            ),
        ]
        indexes = [
            models.Index(fields=["dataset", "topic"], name="procedure_dataset_topic_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source_example_id}: {self.goal[:60]}"

    def get_absolute_url(self) -> str:
        return reverse("benchmarks:procedure_detail", args=[self.pk])

    @property
    def n_steps(self) -> int:
        return len(self.steps)


class Generator(models.Model):
    """A model + backend + prompt variant that produces candidate procedures."""

    class Backend(models.TextChoices):
        OPENAI = "openai", "OpenAI-compatible HTTP"
        VLLM = "vllm", "vLLM offline"
        IMPORTED = "imported", "Imported"

    class PromptVariant(models.TextChoices):
        INSTRUCT = "instruct", "Instruct (H.2)"
        BASE = "base", "Base (H.2)"
        NONE = "none", "Not recorded"

    name = models.CharField(max_length=128, unique=True)
    model = models.CharField(max_length=255, blank=True)
    backend = models.CharField(max_length=16, choices=Backend.choices, default=Backend.IMPORTED)
    prompt_variant = models.CharField(
        max_length=16, choices=PromptVariant.choices, default=PromptVariant.NONE
    )
    description = models.TextField(blank=True, max_length=DESCRIPTION_MAX)
    # Training checkpoint this generator is (Figure 1b, D.3, D.4): {"family", "size", "stage",
    # "step", "flops"}; empty for models that are not part of a checkpoint series.
    checkpoint = models.JSONField(default=dict, blank=True, validators=[checkpoint_validator])
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Generation(models.Model):
    """One generator's candidate steps for one procedure (the L2 of the annotation interface)."""

    # both indexed by the constraint and index that lead with them
    procedure = models.ForeignKey(
        Procedure, on_delete=models.CASCADE, related_name="generations", db_index=False
    )
    generator = models.ForeignKey(
        Generator, on_delete=models.CASCADE, related_name="generations", db_index=False
    )
    model_completion = models.TextField(blank=True)
    predicted_steps = models.JSONField(default=list)
    token_count = models.PositiveIntegerField(
        null=True, blank=True, validators=[MinValueValidator(0)]
    )
    # How the model stopped and what it cost (filled by generation runs and by imports): LongProc
    # scores termination from finish_reason ("stop", "length", …; blank when unknown).
    finish_reason = models.CharField(max_length=32, blank=True)
    prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    # A structured prediction in a pack's shape (e.g. SciRecipe steps, CustomPlans edits); the
    # raw text stays in model_completion.
    payload = models.JSONField(default=dict, blank=True)
    # Scorer-pack results by pack name: {"metrics", "breakdown", "run"} or {"error", "run"}.
    pack_scores = models.JSONField(default=dict, blank=True)
    # The generation run that asked for it (null: imported): the run's tokens and cost are
    # counted from its generations (core.runs: counters from rows, never incremented).
    run = models.ForeignKey(
        "benchmarks.GenerationRun",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="generations",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["procedure_id", "generator_id"]
        constraints = [
            models.UniqueConstraint(
                fields=["procedure", "generator"], name="generation_one_per_procedure_generator"
            ),
        ]
        indexes = [
            models.Index(fields=["generator", "procedure"], name="generation_generator_proc_idx")
        ]

    def __str__(self) -> str:
        return f"{self.generator.name} on {self.procedure.source_example_id}"


# Per-generation scorer results (benchmarks.scorers), filled by generation runs.
Generation.add_to_class("scores", models.JSONField(default=dict, blank=True))
