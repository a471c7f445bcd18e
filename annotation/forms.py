"""The researcher's study form: settings plus the generations to annotate."""

from __future__ import annotations

from django import forms

from annotation.models import Study
from annotation.services.study import STUDY_SETTINGS
from benchmarks.models import Dataset, Generation, Generator


class StudyCreateForm(forms.ModelForm):
    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.all(), help_text="Procedures come from this dataset."
    )
    generator = forms.ModelChoiceField(
        queryset=Generator.objects.all(), help_text="Its generations are the L2 to evaluate."
    )
    limit = forms.IntegerField(
        min_value=1, initial=200, help_text="How many generations (in procedure order)."
    )

    class Meta:
        model = Study
        # every study setting a researcher sets at creation (a new study starts open)
        fields = ["name", *(f for f in STUDY_SETTINGS if f != "status")]
        widgets = {"description": forms.Textarea(attrs={"rows": 3})}

    def clean(self):
        data = super().clean()
        if data.get("dataset") and data.get("generator") and data.get("limit"):
            ids = list(
                Generation.objects.filter(
                    procedure__dataset=data["dataset"], generator=data["generator"]
                )
                .order_by("procedure_id")
                .values_list("pk", flat=True)[: data["limit"]]
            )
            if not ids:
                raise forms.ValidationError("This generator has no generations on this dataset.")
            data["generation_ids"] = ids
        return data

    def settings(self) -> dict:
        return {f: self.cleaned_data[f] for f in self.Meta.fields if f != "name"}
