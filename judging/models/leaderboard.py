"""The judge leaderboard as last computed, per choice of judges and study: the page shows it at
once and a worker recomputes it when the judgments, runs or the study's labels changed
(:mod:`judging.services.leaderboard`)."""

from __future__ import annotations

from django.db import models


class LeaderboardReport(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    key = models.CharField(max_length=64, unique=True, help_text="hash of the judges and study")
    judges = models.JSONField(null=True, blank=True, help_text="judge names; null: every judge")
    study = models.ForeignKey(
        "annotation.Study", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.QUEUED)
    signature = models.CharField(
        max_length=200, blank=True, help_text="the state of the data the result was computed on"
    )
    wanted = models.CharField(
        max_length=200, blank=True, help_text="the state of the data asked for (queued, running)"
    )
    result = models.JSONField(null=True, blank=True)
    error = models.TextField(blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    asked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"leaderboard {self.key[:8]} ({self.status})"
