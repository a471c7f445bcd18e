"""Rounds of a study (seed 000 C.1: pilot, then rounds with iterated training): a new study
copied from the previous one, with the participants it carries over and those it excludes."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.models.study import Study


class StudyRound(models.Model):
    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="round_info")
    previous = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="next_rounds")
    number = models.PositiveSmallIntegerField(help_text="1 = the first study's next round.")
    carried_over = models.JSONField(
        default=list, blank=True, help_text="Prolific ids qualified in the previous round."
    )
    excluded = models.JSONField(
        default=list, blank=True, help_text="Prolific ids rejected or screened out before."
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return f"round {self.number} of {self.previous} ({self.study})"
