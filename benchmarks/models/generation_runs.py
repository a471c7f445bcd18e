"""GenerationRun: one generator run over a dataset (or some of its topics) with the H.2
prompts. Imported at the end of ``benchmarks/models.py``.

The run holds the backend configuration (base URL, model, the NAME of the environment
variable with the API key — never the key —, decoding parameters, concurrency), progress
counters, token use and cost, recent errors, a cancel flag and the scorer summary. Work goes
in chunks along the procedures of the selection ordered by id (``cursor``); ``epoch`` changes
on every (re)dispatch so that a stale chain of chunk tasks stops by itself.
"""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models


class GenerationRun(models.Model):
    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    class Variant(models.TextChoices):
        BASE = "base", "Base (H.2, Figure 20)"
        INSTRUCT = "instruct", "Instruct (H.2, Figure 21)"

    ACTIVE_STATUSES = (Status.PENDING, Status.RUNNING)
    MAX_ERRORS_KEPT = 50

    generator = models.ForeignKey(
        "benchmarks.Generator", on_delete=models.CASCADE, related_name="generation_runs"
    )
    dataset = models.ForeignKey(
        "benchmarks.Dataset", on_delete=models.CASCADE, related_name="generation_runs"
    )
    topics = models.ManyToManyField(
        "benchmarks.Topic",
        blank=True,
        related_name="generation_runs",
        help_text="Selection; empty means the whole dataset.",
    )
    variant = models.CharField(max_length=16, choices=Variant.choices, default=Variant.INSTRUCT)
    prompt_sha256 = models.CharField(max_length=64, blank=True)

    # backend configuration (benchmarks.llm.registry.build_backend); no secrets stored
    backend = models.CharField(
        max_length=255, default="openai", help_text="Registered LLM backend name or dotted path."
    )
    base_url = models.CharField(max_length=500, blank=True)
    model = models.CharField(max_length=255)
    api_key_env = models.CharField(
        max_length=128,
        blank=True,
        help_text="Name of the environment variable holding the API key.",
    )
    decoding = models.JSONField(
        default=dict,
        blank=True,
        help_text="temperature, max_tokens, stop, top_p (H.2 / D.1 defaults).",
    )
    backend_options = models.JSONField(
        default=dict,
        blank=True,
        help_text="Other backend config: timeout_s, max_retries, requests_per_minute…",
    )
    concurrency = models.PositiveIntegerField(
        default=16, validators=[MinValueValidator(1), MaxValueValidator(1024)]
    )
    chunk_size = models.PositiveIntegerField(
        default=64, validators=[MinValueValidator(1), MaxValueValidator(10_000)]
    )
    scorers = models.JSONField(
        default=list, blank=True, help_text="Scorer names or dotted paths; empty: all built-in."
    )
    input_price_per_mtok = models.DecimalField(max_digits=12, decimal_places=4, default=Decimal(0))
    output_price_per_mtok = models.DecimalField(max_digits=12, decimal_places=4, default=Decimal(0))

    # state
    status = models.CharField(
        max_length=16, choices=Status.choices, default=Status.PENDING, db_index=True
    )
    cancel_requested = models.BooleanField(default=False)
    epoch = models.PositiveIntegerField(default=0)
    cursor = models.BigIntegerField(default=0, help_text="Last procedure id handled in this epoch.")
    n_total = models.PositiveIntegerField(default=0)
    n_done = models.PositiveIntegerField(
        default=0, help_text="Procedures of the selection with a generation."
    )
    n_failed = models.PositiveIntegerField(
        default=0, help_text="Requests that failed for good in this epoch."
    )
    prompt_tokens = models.BigIntegerField(default=0)
    completion_tokens = models.BigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal(0))
    errors = models.JSONField(
        default=list, blank=True, help_text="Most recent failures (source_example_id, error)."
    )
    scores = models.JSONField(
        default=dict, blank=True, help_text="Scorer summary over the selection's generations."
    )
    message = models.TextField(blank=True)

    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="generation_runs",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["generator", "status"], name="genrun_generator_status_idx")]

    def __str__(self) -> str:
        return f"run {self.pk}: {self.generator} on {self.dataset} ({self.status})"

    @property
    def is_active(self) -> bool:
        return self.status in self.ACTIVE_STATUSES

    @property
    def progress(self) -> float:
        return (self.n_done / self.n_total) if self.n_total else 0.0
