"""The judge leaderboard as last computed, per choice of judges and study: the page shows it at
once and a run of the engine recomputes it when the judgments, runs or the study's labels
changed (:mod:`judging.services.leaderboard`)."""

from __future__ import annotations

from django.db import models

from core.runs.models import Run


class LeaderboardReport(Run):
    """One stored leaderboard, a run of the engine (:mod:`core.runs`) that is run again (resumed)
    whenever the data it was computed on changed. One item, the leaderboard itself: ``n_done``
    is 1 once a result is stored."""

    key = models.CharField(max_length=64, unique=True, help_text="hash of the judges and study")
    judges = models.JSONField(null=True, blank=True, help_text="judge names; empty: every judge")
    study = models.ForeignKey(
        "annotation.Study", null=True, blank=True, on_delete=models.CASCADE, related_name="+"
    )
    signature = models.CharField(
        max_length=200, blank=True, help_text="the state of the data the result was computed on"
    )
    wanted = models.CharField(
        max_length=200, blank=True, help_text="the state of the data asked for (queued, running)"
    )
    result = models.JSONField(null=True, blank=True)
    computed_at = models.DateTimeField(null=True, blank=True)
    asked_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"leaderboard {self.key[:8]} ({self.status})"
