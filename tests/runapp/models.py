"""The test run type: :class:`EngineRun` (a :class:`core.runs.models.Run` with nothing added)
and its items (:class:`EngineItem`, one row per unit of work, counted for the counters)."""

from __future__ import annotations

from django.db import models

from core.runs.models import Run


class EngineRun(Run):
    class Meta:
        app_label = "runapp"

    def __str__(self) -> str:
        return f"engine run {self.pk}"


class EngineItem(models.Model):
    run = models.ForeignKey(EngineRun, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveIntegerField()
    lane = models.PositiveSmallIntegerField(default=0, help_text="the lane that owns the item")
    done = models.BooleanField(default=False)
    failed = models.BooleanField(default=False)
    worked_by = models.CharField(max_length=64, blank=True, help_text="lease token")

    class Meta:
        app_label = "runapp"
        ordering = ["position"]

    def __str__(self) -> str:
        return f"item {self.position} of run {self.run_id}"
