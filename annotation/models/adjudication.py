"""A researcher's adjudicated label for a study item where annotators disagree.

One adjudication per item, editable. Last write wins for the current label; every earlier
version is kept in ``history`` (oldest first: ``{has_failure, failures, note, adjudicator,
updated_at}``) so an overruled decision is never lost.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from annotation.labels import MAX_NOTE


class Adjudication(models.Model):
    item = models.OneToOneField(
        "annotation.StudyItem", on_delete=models.CASCADE, related_name="adjudication"
    )
    has_failure = models.BooleanField()
    failures = models.JSONField(
        default=list, blank=True, help_text="[{description, l1_steps: [int], l2_steps: [int]}]"
    )
    note = models.TextField(blank=True, max_length=MAX_NOTE)
    adjudicator = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    history = models.JSONField(
        default=list, blank=True, help_text="Earlier versions, oldest first."
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["item_id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(has_failure=True) | Q(failures=[]),
                name="adjudication_no_failures_when_none",
            ),
        ]

    def __str__(self) -> str:
        return f"adjudication of item {self.item_id}: {'failure' if self.has_failure else 'ok'}"
