"""The plan form: the two costs and one target (a budget, an effective sample size or a 95%
half-width in points of How2Score). A refusal is an error at its field, the text kept."""

from __future__ import annotations

from django import forms

from annotation.models import Study
from core.forms import GatedFormMixin
from validation.ppi_plan.stats import BUDGET, EFFECTIVE_N, HALF_WIDTH

TARGET_CHOICES = [
    (HALF_WIDTH, "An interval: ± this many points of How2Score at 95%"),
    (BUDGET, "A budget: the narrowest interval for this total cost"),
    (EFFECTIVE_N, "An effective sample size: as precise as this many people's labels"),
]


class PlanForm(GatedFormMixin, forms.Form):
    judge = forms.ChoiceField(label="Judge", choices=())
    cost_human = forms.FloatField(
        label="Cost of one human label",
        min_value=0.000001,
        required=False,
        help_text="Reward per item plus the platform's fee, in your currency; or leave empty "
        "and choose a study below.",
    )
    study = forms.ModelChoiceField(
        queryset=Study.objects.none(),
        required=False,
        label="Or take it from a study's pay terms",
        help_text="Its annotators per item × (reward / items per participant + bonus per item) "
        "× (1 + the platform fee).",
    )
    cost_judge = forms.FloatField(
        label="Cost of one judge verdict",
        min_value=0.000001,
        help_text="The judge's measured cost per judgment, in the same currency.",
    )
    target = forms.ChoiceField(
        label="Plan for", choices=TARGET_CHOICES, initial=HALF_WIDTH, widget=forms.RadioSelect
    )
    value = forms.FloatField(
        label="Target value",
        min_value=0.0001,
        help_text="Points (3 = ±3 points), a total cost, or a number of labels, as chosen above.",
    )
    currency = forms.CharField(
        label="Currency", max_length=10, required=False, initial="GBP",
        help_text="Shown after amounts, e.g. GBP.",
    )  # fmt: skip

    def __init__(self, *args, judges: list[str], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["judge"].choices = [(j, j) for j in judges]
        if judges:
            self.fields["judge"].initial = judges[0]
        self.fields["study"].queryset = Study.objects.filter(pay__isnull=False).order_by(
            "-created_at"
        )

    def clean(self):
        data = super().clean()
        if (
            data.get("cost_human") is None
            and not data.get("study")
            and "cost_human" not in self.errors
        ):
            self.add_error(
                "cost_human", "Give the cost of one human label, or choose a study to take it from."
            )
        if data.get("target") == HALF_WIDTH and data.get("value", 0) >= 50:
            self.add_error(
                "value",
                "An interval of ±50 points or more says nothing; give fewer points, e.g. 3.",
            )
        return data

    def target_value(self) -> float:
        """The target in the statistics' unit: a half-width as a share (3 points → 0.03)."""
        data = self.cleaned_data
        return data["value"] / 100 if data["target"] == HALF_WIDTH else data["value"]
