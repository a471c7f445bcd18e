"""The upload form of a label set: a name, a file and/or a study's people's labels and a judge's
verdicts, who the annotators are. A refused file is an error at the file field, the other
choices kept."""

from __future__ import annotations

from django import forms
from django.conf import settings

from annotation.label_set_file import COLUMNS
from annotation.models import Study
from core.forms import GatedFormMixin
from judging.models import Judge
from validation.models import LabelSet

PICK_LIMIT = 200


class LabelSetForm(GatedFormMixin, forms.Form):
    name = forms.CharField(max_length=200, help_text="A name to find it by, e.g. pilot-3x60.")
    file = forms.FileField(
        required=False,
        label="Label file (CSV or JSONL)",
        help_text=f"One label a row: {', '.join(COLUMNS[:4])} and optionally "
        f"{', '.join(COLUMNS[4:])}; kind is human or judge.",
    )
    study = forms.ModelChoiceField(
        queryset=Study.objects.none(),
        required=False,
        label="People's labels from a study (optional)",
        help_text="A critical-failure study's has_failure; items are named by generation id.",
    )
    judge = forms.ModelChoiceField(
        queryset=Judge.objects.none(),
        required=False,
        to_field_name="name",
        label="Verdicts of a judge (optional)",
        help_text="Its has_failure on every generation it scored.",
    )
    critical_failures = forms.BooleanField(
        required=False,
        initial=True,
        label="The labels are critical failures (0 or 1)",
        help_text="Needed for the corrected How2Score and the disagreement list: every label "
        "must then be 0 or 1 (1 = a critical failure). Leave unticked for categories or numbers "
        "(the alt-test and agreement only).",
    )
    annotator_kind = forms.ChoiceField(
        choices=LabelSet._meta.get_field("annotator_kind").choices,
        initial="crowd",
        label="The annotators are",
        help_text="Sets the alt-test's ε: crowd workers 0.1, skilled annotators 0.15, experts 0.2.",
    )
    description = forms.CharField(
        required=False, max_length=2_000, widget=forms.Textarea(attrs={"rows": 2})
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["study"].queryset = Study.objects.filter(form_type="critical_failure").order_by(
            "-created_at"
        )
        self.fields["judge"].queryset = Judge.objects.order_by("name")

    def clean_name(self) -> str:
        name = self.cleaned_data["name"].strip()
        if LabelSet.objects.filter(name=name).exists():
            raise forms.ValidationError(f"A label set named {name!r} exists; choose another name.")
        return name

    def clean_file(self):
        upload = self.cleaned_data.get("file")
        limit = settings.LABEL_SET_MAX_BYTES
        if upload is not None and upload.size > limit:
            raise forms.ValidationError(
                f"The file is {upload.size / 2**20:.1f} MiB, over the limit of "
                f"{limit / 2**20:.0f} MiB; nothing was stored."
            )
        return upload

    def clean(self):
        data = super().clean()
        if not self.errors and not (data.get("file") or data.get("study") or data.get("judge")):
            self.add_error("file", "Upload a label file, or choose a study or a judge (or both).")
        return data
