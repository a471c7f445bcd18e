"""What happened at a study's door that the researcher should see: a Prolific ID opened with
another session while its first one is in progress (refused, never resumed), and new
participants refused because one client address made too many."""

from __future__ import annotations

from django.db import models

from annotation.models.study import Participant, Study


class EntryEvent(models.Model):
    class Kind(models.TextChoices):
        SESSION_CONFLICT = (
            "session_conflict",
            "Another Prolific session for a participant in progress",
        )
        RATE_LIMITED = "rate_limited", "Too many new participants from one address"
        EXCLUDED = "excluded", "Excluded participant refused (earlier round or group)"

    # indexed by entry_event_idx, which leads with it
    study = models.ForeignKey(
        Study, on_delete=models.CASCADE, related_name="entry_events", db_index=False
    )
    participant = models.ForeignKey(
        Participant, null=True, blank=True, on_delete=models.CASCADE, related_name="entry_events"
    )
    kind = models.CharField(max_length=24, choices=Kind.choices)
    client_ip = models.GenericIPAddressField(null=True, blank=True)
    detail = models.CharField(max_length=255, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["study", "kind", "created_at"], name="entry_event_idx")]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} ({self.study_id})"
