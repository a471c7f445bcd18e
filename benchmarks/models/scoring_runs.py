"""ScoringRun: one scorer pack (``benchmarks.packs``) applied to every generation of a generator
on a dataset, worked by the run engine (:mod:`core.runs`).

Each generation's result is stored on it (``Generation.pack_scores[pack]``, tagged with this
run's id), so the counters are counted from those rows: ``n_total`` the generations of the
selection, ``n_done`` those scored by this run, ``n_failed`` those whose record did not have the
pack's shape (the error names the field). ``summary`` is the pack's summary over the scored
rows, written when the run ends.
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from core.runs.models import Run


class ScoringRun(Run):
    MAX_ERRORS_KEPT = 50

    generator = models.ForeignKey(
        "benchmarks.Generator", on_delete=models.CASCADE, related_name="scoring_runs"
    )
    dataset = models.ForeignKey(
        "benchmarks.Dataset", on_delete=models.CASCADE, related_name="scoring_runs"
    )
    pack = models.CharField(max_length=64, help_text="Scorer pack name (manage.py score --list).")
    options = models.JSONField(
        default=dict, blank=True, help_text="The pack's named options; empty: the defaults."
    )
    chunk_size = models.PositiveIntegerField(
        default=500, validators=[MinValueValidator(1), MaxValueValidator(10_000)]
    )
    cursor = models.BigIntegerField(
        default=0, help_text="Last generation id handled in this attempt (0 again on resume)."
    )
    errors = models.JSONField(
        default=list, blank=True, help_text="Most recent failures (source_example_id, error)."
    )
    summary = models.JSONField(
        default=dict, blank=True, help_text="The pack's summary over the scored generations."
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return (
            f"scoring {self.pk}: {self.pack} on {self.generator} / {self.dataset} ({self.status})"
        )
