"""A label set: the labels of one upload (people's and judges' verdicts, one row a label, as
:mod:`annotation.label_set_file` reads them), kept with who uploaded what and when, and,
when it mixes in labels already in the app, the study and the judge they came from."""

from __future__ import annotations

from django.conf import settings
from django.db import models

from annotation.label_set_file import MAX_ID, MAX_LABEL, MAX_TEXT
from validation.alt_test.stats import ANNOTATORS_SAID, DEFAULT_ANNOTATORS

MAX_NAME = 200


class LabelSet(models.Model):
    name = models.CharField(max_length=MAX_NAME, unique=True)
    description = models.TextField(blank=True, max_length=2_000)
    annotator_kind = models.CharField(
        max_length=10,
        choices=list(ANNOTATORS_SAID.items()),
        default=DEFAULT_ANNOTATORS,
        help_text="Who the annotators are: sets the alt-test's ε (0.1, 0.15, 0.2).",
    )
    uploaded_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
        related_name="label_sets",
    )  # fmt: skip
    uploaded_at = models.DateTimeField(auto_now_add=True)
    filename = models.CharField(max_length=255, blank=True)  # empty: no file, only app data
    file_format = models.CharField(max_length=10, blank=True)  # csv, jsonl
    file_bytes = models.PositiveBigIntegerField(default=0)
    study = models.ForeignKey(
        "annotation.Study", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="label_sets", help_text="The study whose people's labels were mixed in.",
    )  # fmt: skip
    judge = models.ForeignKey(
        "judging.Judge", null=True, blank=True, on_delete=models.SET_NULL,
        related_name="label_sets", help_text="The judge whose verdicts were mixed in.",
    )  # fmt: skip
    counts = models.JSONField(default=dict)  # LabelSet.counts() of the stored rows

    class Meta:
        ordering = ("-uploaded_at", "-id")

    def __str__(self) -> str:
        return self.name


class LabelSetRow(models.Model):
    label_set = models.ForeignKey(LabelSet, on_delete=models.CASCADE, related_name="rows")
    item_id = models.CharField(max_length=MAX_ID)
    source = models.CharField(max_length=MAX_ID)
    kind = models.CharField(max_length=5)  # human, judge
    label = models.CharField(max_length=MAX_LABEL)
    group = models.CharField(max_length=MAX_ID, blank=True)
    text = models.TextField(blank=True, max_length=MAX_TEXT)
    line = models.PositiveIntegerField(default=0)  # 0: from the app's data, not the file

    class Meta:
        ordering = ("label_set", "id")
        constraints = [
            models.UniqueConstraint(
                fields=("label_set", "item_id", "source"), name="label_set_row_one_per_source"
            )
        ]

    def __str__(self) -> str:
        return f"{self.source} on {self.item_id}: {self.label}"
