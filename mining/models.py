"""How2Mine batches: uploaded documents, their path through the six stages, usage per stage."""

from __future__ import annotations

from decimal import Decimal

from django.db import models
from django.urls import reverse

from core.runs.models import Run
from mining.stages import STAGES


class MiningBatch(Run):
    """An uploaded file of documents worked through the selected stages by the run engine
    (:mod:`core.runs`): each chunk task works pending documents, at most ``options["chunk_size"]``
    open at once, until none is left or its time is up.

    Status, counters, tokens, cost, lease and error text are the engine's
    (:class:`core.runs.models.Run`): ``n_total`` is the documents read from the file,
    ``n_done`` those with an outcome (kept, dropped, invalid or error; error documents are not
    counted again in ``n_failed``, which stays 0), tokens and cost the sums of the stage usage.
    """

    name = models.CharField(max_length=200)
    source_file = models.FileField(upload_to="mining/uploads/%Y/%m/", max_length=500, blank=True)
    # or, instead of an upload: a stored file, a shard directory or a glob (storage names)
    source_pattern = models.CharField(max_length=1000, blank=True)
    source_name = models.CharField(max_length=255, blank=True)
    source_format = models.CharField(max_length=16)  # jsonl | csv | parquet | arrow (1st file)
    stages = models.JSONField(default=list)  # e.g. [1, 2, 3, 4, 5, 6]
    # Per LLM stage key ("procedures", "filter", ...): a backend config for build_backend(), plus
    # "price_in_per_mtok" / "price_out_per_mtok" (USD per million tokens) for the cost column.
    backends = models.JSONField(default=dict)
    options = models.JSONField(default=dict)  # min_steps, max_steps, max_doc_chars, chunk_size
    ingested = models.BooleanField(default=False)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "mining batches"

    def __str__(self) -> str:
        return f"{self.name} ({self.get_status_display()})"

    def get_absolute_url(self) -> str:
        return reverse("mining:batch_detail", args=[self.pk])


class MiningDocument(models.Model):
    """One input record and its path through the stages (``trace``: stage key -> result)."""

    class Outcome(models.TextChoices):
        PENDING = "pending", "Pending"
        KEPT = "kept", "Kept"
        DROPPED = "dropped", "Dropped"
        INVALID = "invalid", "Invalid input"
        ERROR = "error", "LLM error"

    # indexed by the constraint and indexes that lead with it (fewer indexes to write per document)
    batch = models.ForeignKey(
        MiningBatch, on_delete=models.CASCADE, related_name="documents", db_index=False
    )
    position = models.PositiveIntegerField()  # 1-based line / row in the uploaded file
    source_id = models.CharField(max_length=255)
    topic = models.CharField(max_length=64, blank=True)  # slug, or "" when unknown
    topic_raw = models.CharField(max_length=255, blank=True)
    url = models.CharField(max_length=2000, blank=True)
    text = models.TextField(blank=True)
    input_goal = models.TextField(blank=True)
    input_steps = models.JSONField(default=list, blank=True)
    input_resources = models.JSONField(default=list, blank=True)
    notes = models.JSONField(
        default=list, blank=True
    )  # e.g. "document truncated from N to M characters"
    outcome = models.CharField(max_length=16, choices=Outcome.choices, default=Outcome.PENDING)
    stage_reached = models.CharField(
        max_length=32, blank=True
    )  # the last stage run ("input" for bad input)
    last_passed_stage = models.PositiveSmallIntegerField(
        default=0
    )  # 0: none; k: passed stage k (yields)
    drop_reason = models.TextField(blank=True)
    trace = models.JSONField(default=dict, blank=True)
    goal = models.TextField(blank=True)
    steps = models.JSONField(default=list, blank=True)
    resources = models.JSONField(default=list, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["batch_id", "position"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "position"], name="mining_doc_position_unique")
        ]
        indexes = [
            models.Index(fields=["batch", "outcome", "position"], name="mining_doc_outcome_idx"),
            models.Index(fields=["batch", "topic"], name="mining_doc_topic_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} ({self.outcome})"


class MiningStageUsage(models.Model):
    # indexed by mining_usage_stage_unique, which leads with it
    batch = models.ForeignKey(
        MiningBatch, on_delete=models.CASCADE, related_name="usage", db_index=False
    )
    stage = models.CharField(max_length=32, choices=[(s[1], s[2]) for s in STAGES])
    requests = models.PositiveIntegerField(default=0)
    failed_requests = models.PositiveIntegerField(default=0)
    prompt_tokens = models.PositiveBigIntegerField(default=0)
    completion_tokens = models.PositiveBigIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal(0))

    class Meta:
        ordering = ["batch_id", "id"]
        constraints = [
            models.UniqueConstraint(fields=["batch", "stage"], name="mining_usage_stage_unique")
        ]

    def __str__(self) -> str:
        return f"{self.batch_id}:{self.stage}"


class MiningPromotion(Run):
    """A batch's kept procedures promoted into a dataset (:mod:`mining.services.promotion`), a
    run of the engine like the batch itself: asked in the console or the API, worked by the
    engine's chunk task (embedding every candidate takes seconds to minutes), cancelled and
    resumed like every run. ``n_total`` is the candidates (kept documents with a topic),
    ``n_done`` the procedures in the promoted dataset: both counted from rows."""

    batch = models.ForeignKey(MiningBatch, on_delete=models.CASCADE, related_name="promotions")
    params = models.JSONField(
        default=dict,
        help_text="dataset_name, version, description, per_topic, seed, dedup_against (a "
        "dataset id), threshold",
    )
    dataset = models.ForeignKey(
        "benchmarks.Dataset",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="+",
        help_text="the dataset made (done)",
    )
    result = models.JSONField(
        null=True, blank=True, help_text="promoted, candidates, duplicates, per_topic (done)"
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"promotion {self.pk} of batch {self.batch_id} ({self.status})"

    @property
    def target(self) -> str:
        """The dataset asked for, ``name@version``."""
        return f"{self.params.get('dataset_name', '')}@{self.params.get('version', 'v1')}"
