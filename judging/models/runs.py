"""Judge runs and their items: one run of the engine (:mod:`core.runs`) per judged selection,
one item per selected generation. Status, counters, tokens, cost, lease and error text are the
engine's (:class:`core.runs.models.Run`); what is a judge run's own is here."""

from __future__ import annotations

from django.db import models

from core.runs.models import Run
from judging.models.judges import Judge


class JudgeRun(Run):
    """``n_done``: items with a judgment (new or reused); ``n_failed``: items whose request
    failed for good (:data:`judging.services.run_items.MAX_ITEM_ATTEMPTS` tries); tokens and
    cost: of the judgments this run asked for (reused ones are free)."""

    judge = models.ForeignKey(Judge, on_delete=models.PROTECT, related_name="runs")
    selection = models.JSONField(
        default=dict, blank=True, help_text="dataset/topics/generators/generation ids"
    )
    n_reused = models.PositiveIntegerField(
        default=0, help_text="items linked to a judgment made before (free)"
    )
    n_parse_failed = models.PositiveIntegerField(default=0)
    estimated_cost = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)
    prepared_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="when its items were selected and hashed (by the worker, before the first chunk)",
    )
    n_samples = models.PositiveSmallIntegerField(
        default=1,
        help_text="1: one verdict per item; k > 1: k more seeded samples per judged content "
        "(seeds sample_seed … sample_seed + k − 1) for calibration (judging.models.samples)",
    )
    sample_seed = models.PositiveIntegerField(default=0, help_text="the first sample's seed")

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"run {self.pk} of {self.judge.name} ({self.status})"

    @property
    def sample_seeds(self) -> list[int]:
        """The decoding seeds of the run's samples (none when ``n_samples`` is 1)."""
        if self.n_samples <= 1:
            return []
        return [self.sample_seed + i for i in range(self.n_samples)]


class JudgeRunItem(models.Model):
    """One generation in a run; ``judgment`` is set once judged (or reused: ``reused``)."""

    # indexed by the constraint and index that lead with it (fewer indexes to write per reply)
    run = models.ForeignKey(
        JudgeRun, on_delete=models.CASCADE, related_name="items", db_index=False
    )
    generation = models.ForeignKey(
        "benchmarks.Generation", on_delete=models.CASCADE, related_name="judge_run_items"
    )
    content_hash = models.CharField(max_length=64)
    judgment = models.ForeignKey(
        "Judgment", null=True, blank=True, on_delete=models.SET_NULL, related_name="items"
    )
    reused = models.BooleanField(
        default=False,
        help_text="linked to a judgment this run did not ask for (made before, or a duplicate)",
    )
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    parse_tries = models.PositiveSmallIntegerField(
        default=0, help_text="replies so far that failed to parse and are asked again"
    )
    retry_prompt_tokens = models.PositiveIntegerField(
        default=0, help_text="tokens of the replies that failed to parse and were asked again"
    )
    retry_completion_tokens = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["run", "generation"], name="judgerunitem_one_per_generation"
            )
        ]
        indexes = [
            models.Index(fields=["run", "judgment"], name="judgerunitem_pending_idx"),
        ]

    def __str__(self) -> str:
        return f"item {self.pk} of run {self.run_id} (generation {self.generation_id})"


class JudgeRunEstimate(Run):
    """A cost estimate asked for in the console or the API, a run of the engine (:mod:`core.runs`)
    worked by its chunk task (it hashes every selected item and samples prompts for their
    tokens): the page polls it until ``result`` is there. One item, the estimate itself:
    ``n_done`` is 1 once its result is stored."""

    judge = models.ForeignKey(Judge, on_delete=models.CASCADE, related_name="estimates")
    selection = models.JSONField(default=dict, blank=True)
    result = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"estimate {self.pk} for {self.judge_id} ({self.status})"
