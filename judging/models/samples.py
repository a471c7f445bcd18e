"""Seeded samples of a judgment, for calibration: a run launched with k > 1
samples asks the judge k more times per judged content, each with its own decoding seed, and
stores every reply here. The judgment itself (the run's verdict) is unchanged; the samples
give the judge's confidence, the share of its parsed samples saying ``has_failure``."""

from __future__ import annotations

from django.db import models

from judging.models.judges import Judgment
from judging.models.runs import JudgeRun


class JudgmentSample(models.Model):
    """One seeded sample of a judgment's content by the same judge. ``error``: the request failed
    for good (no reply, no vote); ``parse_failed``: the reply did not parse (no vote)."""

    # indexed by judgmentsample_one_per_seed, which leads with it
    judgment = models.ForeignKey(
        Judgment, on_delete=models.CASCADE, related_name="samples", db_index=False
    )
    run = models.ForeignKey(
        JudgeRun,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="samples",
        help_text="the run that asked for it (its tokens count in that run's cost)",
    )
    seed = models.BigIntegerField(help_text="the decoding seed sent with the request")
    has_failure = models.BooleanField(default=False)
    n_failures = models.PositiveIntegerField(default=0)
    parse_failed = models.BooleanField(default=False)
    parse_error = models.CharField(max_length=500, blank=True)
    reasoning = models.TextField(blank=True)
    critical_failures = models.JSONField(default=list, blank=True)
    raw_output = models.TextField(blank=True)
    error = models.TextField(blank=True)
    prompt_tokens = models.PositiveIntegerField(default=0)
    completion_tokens = models.PositiveIntegerField(default=0)
    latency_s = models.FloatField(default=0.0)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judgment_id", "seed"]
        constraints = [
            models.UniqueConstraint(fields=["judgment", "seed"], name="judgmentsample_one_per_seed")
        ]

    def __str__(self) -> str:
        return f"sample seed {self.seed} of judgment {self.judgment_id}"
