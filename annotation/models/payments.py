"""Paying a study: its pay terms on Prolific (reward, time estimate, bonus rules, exclusion
group) and the log of every call made to Prolific's API, with who made it."""

from __future__ import annotations

from decimal import Decimal

from django.conf import settings
from django.core.validators import MinValueValidator
from django.db import models

from annotation.models.study import Study

_money = {"max_digits": 8, "decimal_places": 2, "validators": [MinValueValidator(Decimal("0"))]}


class StudyPay(models.Model):
    """Pay terms of one study, in the study's currency on Prolific (e.g. GBP)."""

    study = models.OneToOneField(Study, on_delete=models.CASCADE, related_name="pay")
    currency = models.CharField(max_length=3, default="GBP")
    reward = models.DecimalField(
        default=Decimal("0"), help_text="Base reward per completed submission.", **_money
    )
    estimated_minutes = models.PositiveIntegerField(
        default=0, help_text="Time estimate given on Prolific (minutes)."
    )
    bonus_per_item = models.DecimalField(
        default=Decimal("0"), help_text="Bonus per regular item submitted.", **_money
    )
    bonus_per_known_correct = models.DecimalField(
        default=Decimal("0"),
        help_text="Bonus per known-answer (attention or qualification) item answered correctly.",
        **_money,
    )
    exclusion_group_id = models.CharField(
        max_length=64,
        blank=True,
        help_text="Prolific participant group that later studies exclude (rejected participants).",
    )

    def __str__(self) -> str:
        return f"pay of {self.study}"


class ProlificCall(models.Model):
    """One call to Prolific's API (or a refused attempt), visible to researchers."""

    class Action(models.TextChoices):
        LIST = "list", "List submissions"
        APPROVE = "approve", "Approve"
        REJECT = "reject", "Reject"
        RETURN = "return", "Request return"
        BONUS_CREATE = "bonus_create", "Set up bonuses"
        BONUS_PAY = "bonus_pay", "Pay bonuses"
        GROUP_ADD = "group_add", "Add to participant group"
        # the study's life on Prolific (annotation.services.prolific_study)
        STUDY_CREATE = "study_create", "Create the study (draft)"
        STUDY_UPDATE = "study_update", "Change reward, time or places"
        STUDY_PUBLISH = "study_publish", "Publish"
        STUDY_PAUSE = "study_pause", "Pause"
        STUDY_START = "study_start", "Resume"
        STUDY_STOP = "study_stop", "Stop"
        STUDY_GET = "study_get", "Read the study"
        # webhooks (annotation.services.prolific_hooks); workspace-wide: no study
        HOOK_SECRET = "hook_secret", "Webhook secret"
        HOOK_SUBSCRIBE = "hook_subscribe", "Subscribe"
        HOOK_CONFIRM = "hook_confirm", "Confirm a subscription"
        HOOK_LIST = "hook_list", "List subscriptions"
        HOOK_DELETE = "hook_delete", "Remove a subscription"

    study = models.ForeignKey(
        Study,
        null=True,
        blank=True,
        on_delete=models.CASCADE,
        related_name="prolific_calls",
        help_text="Empty for workspace-wide calls (webhook secrets and subscriptions).",
        db_index=False,  # indexed by prolificcall_study_idx, which leads with it
    )
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+"
    )
    action = models.CharField(max_length=16, choices=Action.choices)
    target = models.CharField(max_length=255, blank=True, help_text="Submission, bulk or group id.")
    request_summary = models.TextField(blank=True)
    status = models.PositiveSmallIntegerField(default=0, help_text="HTTP status; 0: no answer.")
    ok = models.BooleanField(default=False)
    message = models.TextField(blank=True)
    participant_ids = models.JSONField(
        default=list,
        blank=True,
        help_text="Prolific ids a group call added (the entry page refuses those of the "
        "exclusion group).",
    )
    amount = models.DecimalField(
        null=True,
        blank=True,
        max_digits=10,
        decimal_places=2,
        help_text="Money a paying call moved, in the study's currency (bonuses paid); empty "
        "for the others.",
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [models.Index(fields=["study", "-created_at"], name="prolificcall_study_idx")]

    def __str__(self) -> str:
        return f"{self.action} {self.target} ({self.status})"
