"""Provider batches of a run in batch mode (:mod:`benchmarks.services.batch_runs`): which
batches a run has at the provider, which of its items each carries, and whether its results
are stored. They live here, beside the runs, so a worker that restarts resumes them and an
output file is stored exactly once."""

from __future__ import annotations

from django.db import models


class ProviderBatch(models.Model):
    """One batch (one input file) at a provider, sent for one run (any run type, by label)."""

    run_label = models.CharField(max_length=100)  # e.g. "judging.JudgeRun"
    run_id = models.BigIntegerField()
    batch_id = models.CharField(max_length=200)
    input_file_id = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(max_length=30, default="validating")
    item_keys = models.JSONField(default=list)  # the run's item ids in this batch (custom_ids)
    n_requests = models.PositiveIntegerField(default=0)
    n_completed = models.PositiveIntegerField(default=0)
    n_failed = models.PositiveIntegerField(default=0)
    cancel_sent = models.BooleanField(default=False)
    stored_at = models.DateTimeField(null=True, blank=True)  # results stored (exactly once)
    n_stored = models.PositiveIntegerField(default=0)
    n_returned = models.PositiveIntegerField(default=0)  # not run (expired, cancelled): pending
    # items whose request failed inside the batch (run types without attempts per item skip them
    # until the run is resumed: benchmarks.services.batch_runs.failed_keys)
    failed_keys = models.JSONField(default=list)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["run_label", "run_id", "batch_id"], name="provider_batch_once"
            )
        ]
        indexes = [models.Index(fields=["run_label", "run_id", "stored_at"])]

    def __str__(self) -> str:
        return f"{self.batch_id} ({self.status}) of {self.run_label}:{self.run_id}"
