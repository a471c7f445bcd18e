"""A study's life on Prolific as this app runs it: the Prolific study it created (status,
places, pilot, the codes it registered), each submission's latest status (from signed webhooks
or the poll), and every webhook delivery received, accepted or refused."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.models.study import Participant, Study, new_code


class ProlificStudy(models.Model):
    """The Prolific study created from the app for one study (its id is also the study's
    ``prolific_study_id``, which the entry link checks)."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="prolific")
    prolific_id = models.CharField(max_length=64, unique=True)
    status = models.CharField(
        max_length=24, default="UNPUBLISHED", help_text="Prolific's status of the study."
    )
    status_at = models.DateTimeField(
        null=True, blank=True, help_text="When the status was set (an older event is ignored)."
    )
    total_places = models.PositiveIntegerField(default=0)
    pilot_places = models.PositiveIntegerField(
        default=0, help_text="Places of the pilot (0: published without one)."
    )
    pilot_confirmed_at = models.DateTimeField(null=True, blank=True)
    failed_attention_code = models.CharField(
        max_length=64,
        default=new_code,
        help_text="Completion code of participants ended for failed attention checks.",
    )
    registered = models.JSONField(
        default=dict, blank=True, help_text="What the app sent to create the study."
    )
    counts = models.JSONField(
        default=dict, blank=True, help_text="Prolific's submission counts at the last sync."
    )
    synced_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"Prolific study {self.prolific_id} ({self.status})"


class ProlificSubmission(models.Model):
    """One Prolific submission (its id is the participant's ``SESSION_ID``) and its latest
    status; ``freed_at``: when its participant's assigned items went back to the pool."""

    submission_id = models.CharField(max_length=64, unique=True)
    # indexed by prolificsub_study_status_idx, which leads with it
    study = models.ForeignKey(
        Study, on_delete=models.CASCADE, related_name="prolific_submissions", db_index=False
    )
    participant = models.ForeignKey(
        Participant,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="prolific_submissions",
    )
    prolific_pid = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=24)
    status_at = models.DateTimeField(help_text="When this status was set (Prolific's clock).")
    source = models.CharField(max_length=8, help_text="webhook or poll")
    freed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        indexes = [models.Index(fields=["study", "status"], name="prolificsub_study_status_idx")]

    def __str__(self) -> str:
        return f"{self.submission_id} {self.status}"


class ProlificDelivery(models.Model):
    """A webhook delivery from Prolific. A refused one (unsigned, stale, badly signed, not
    JSON) is kept with its reason and changes nothing; an accepted one is applied once per
    ``X-Event-ID`` (a replay finds this row and changes nothing)."""

    event_id = models.CharField(max_length=64, blank=True)
    event_type = models.CharField(max_length=64, blank=True)
    resource_id = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=32, blank=True)
    sent_at = models.DateTimeField(null=True, blank=True, help_text="The event's X-Timestamp.")
    accepted = models.BooleanField(default=False)
    reason = models.CharField(max_length=200, blank=True, help_text="Why it was refused.")
    outcome = models.CharField(max_length=300, blank=True, help_text="What applying it did.")
    applied_at = models.DateTimeField(null=True, blank=True)
    received_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-received_at", "-id"]
        constraints = [
            models.UniqueConstraint(
                fields=["event_id"], condition=Q(accepted=True), name="prolificdelivery_once"
            )
        ]

    def __str__(self) -> str:
        return f"{self.event_type or 'delivery'} {self.event_id} ({self.reason or 'accepted'})"
