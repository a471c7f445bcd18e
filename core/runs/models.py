"""The abstract run: what every long job (generation run, judge run, mining batch, analysis
job) has in common. A concrete run model subclasses :class:`Run`, adds its own configuration and
counters; its app registers it with its executor (:class:`core.runs.engine.RunExecutor`) in
``ready()`` (:mod:`core.runs.registry`). A model names no service.

One status vocabulary for every run::

    queued ──► running ──► done | failed
       │          │
       │          └──► cancelling ──► cancelled      (the worker stops at its next check)
       └──► cancelled                                 (nobody held it yet)

A run is worked by at most one execution at a time: the execution holds the lease
(``lease_owner``, a fresh random token per execution, never a task id) and proves it is alive
with ``heartbeat_at``. A lease whose heartbeat is older than ``settings.RUN_LEASE_SECONDS`` is
stale and may be taken over. A run type whose work splits into disjoint parts (a judge run:
items by content hash) may instead be worked in *lanes* (:class:`RunLane`, one lease each), so
that several workers work the same run at once, each on its own lane.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal

from django.conf import settings
from django.db import models
from django.utils import timezone


class RunStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    CANCELLING = "cancelling", "Cancelling"
    CANCELLED = "cancelled", "Cancelled"
    FAILED = "failed", "Failed"
    DONE = "done", "Done"


ACTIVE_STATUSES = (RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.CANCELLING)
FINISHED_STATUSES = (RunStatus.CANCELLED, RunStatus.FAILED, RunStatus.DONE)


# The fields every run has, in the order consoles show them (read-only there).
RUN_STATE_FIELDS = (
    "status",
    "n_total",
    "n_done",
    "n_failed",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "error",
    "lease_owner",
    "heartbeat_at",
    "created_by",
    "created_at",
    "started_at",
    "finished_at",
    "updated_at",
)


def lease_seconds() -> float:
    """How long a heartbeat stays fresh (``settings.RUN_LEASE_SECONDS``, default 60)."""
    return float(getattr(settings, "RUN_LEASE_SECONDS", 60))


def chunk_seconds() -> float:
    """How long one chunk takes new work (``settings.RUN_CHUNK_SECONDS``, default 300): then it
    stores what is in flight and hands over to the next chunk. The broker's visibility timeout
    is set above it (``config.celery.visibility_timeout``), so a chunk still running is never
    redelivered by the broker for being slow."""
    return float(getattr(settings, "RUN_CHUNK_SECONDS", 300))


class Run(models.Model):
    Status = RunStatus
    ACTIVE = ACTIVE_STATUSES
    FINISHED = FINISHED_STATUSES

    status = models.CharField(
        max_length=16, choices=RunStatus.choices, default=RunStatus.QUEUED, db_index=True
    )
    n_total = models.PositiveIntegerField(default=0, help_text="items in the run")
    n_done = models.PositiveIntegerField(default=0, help_text="items finished, counted from rows")
    n_failed = models.PositiveIntegerField(
        default=0, help_text="items that failed for good, counted from rows"
    )
    prompt_tokens = models.BigIntegerField(default=0)
    completion_tokens = models.BigIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=6, default=Decimal(0))
    lease_owner = models.CharField(
        max_length=64, blank=True, help_text="token of the execution working the run"
    )
    heartbeat_at = models.DateTimeField(
        null=True, blank=True, help_text="last sign of life of that execution"
    )
    error = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        abstract = True

    @property
    def is_active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED_STATUSES

    @property
    def progress(self) -> float:
        """Share of items finished (done or failed), 0..1; a finished run is 1."""
        if not self.n_total:
            return 1.0 if self.is_finished else 0.0
        return min(1.0, (self.n_done + self.n_failed) / self.n_total)

    @property
    def progress_percent(self) -> int:
        return int(100 * self.progress)

    def lease_is_fresh(self, now: datetime | None = None) -> bool:
        """True while the run's worker shows signs of life: its last heartbeat is recent. The
        lease itself is released between two chunks of a run, so the heartbeat, not the owner,
        tells whether a worker is on it."""
        if self.heartbeat_at is None:
            return False
        now = now or timezone.now()
        return self.heartbeat_at >= now - timedelta(seconds=lease_seconds())

    @property
    def worker_gone(self) -> bool:
        """A started run that nobody is working (its worker died): offer to take it over."""
        return (
            self.status in (RunStatus.RUNNING, RunStatus.CANCELLING) and not self.lease_is_fresh()
        )


class RunLane(models.Model):
    """One lane of a run worked in lanes (:mod:`core.runs.lanes`): its own lease, so that each
    of several workers works a disjoint part of the same run. The run row keeps the status,
    the counters and a heartbeat that any lane renews."""

    run_label = models.CharField(max_length=100, help_text="app_label.ModelName of the run")
    run_id = models.PositiveBigIntegerField()
    lane = models.PositiveSmallIntegerField()
    n_lanes = models.PositiveSmallIntegerField()
    lease_owner = models.CharField(max_length=64, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    done = models.BooleanField(default=False, help_text="no work left in this lane")
    cursor = models.PositiveBigIntegerField(
        default=0, help_text="the lane's position in its run's ordered work (run types that walk)"
    )

    class Meta:
        app_label = "core"
        constraints = [
            models.UniqueConstraint(fields=["run_label", "run_id", "lane"], name="run_lane_once")
        ]

    def __str__(self) -> str:
        return f"{self.run_label}:{self.run_id} lane {self.lane + 1}/{self.n_lanes}"
