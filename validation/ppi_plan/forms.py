"""The plan form: the two costs and one target (a budget, an effective sample size or a 95%
half-width in points of How2Score); and the form of the study a plan asks for. A refusal is an
error at its field, the text kept."""

from __future__ import annotations

from django import forms

from annotation import money
from annotation.models import Study
from benchmarks.models import Dataset
from core.forms import GatedFormMixin
from judging.models import Judge
from validation.ppi_plan.services import UNCERTAINTY, UNIFORM
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


SAMPLING_CHOICES = [
    (UNIFORM, "Uniformly: a seeded random n of the judge's items"),
    (UNCERTAINTY, "Where the judge is unsure: about n items, more likely where its k samples "
     "disagree (needs a judge run with samples k > 1)"),
]  # fmt: skip
CURRENCIES = [(c, c) for c in money.MINOR_UNIT_NAMES]


class StudyFromPlanForm(GatedFormMixin, forms.Form):
    """The study a plan asks for (admins): prefilled from the plan, every number editable."""

    prefix = "study"
    name = forms.CharField(label="Study name", max_length=200)
    judge = forms.ModelChoiceField(
        queryset=Judge.objects.none(),
        label="Judge whose scored generations the items come from",
        help_text="The study's items are drawn from the generations this judge scored; the "
        "corrected How2Score uses its verdicts on all of them.",
    )
    dataset = forms.ModelChoiceField(
        queryset=Dataset.objects.none(),
        required=False,
        label="Dataset",
        help_text="Empty: every dataset the judge scored.",
    )
    n = forms.IntegerField(
        label="Items for people (n)", min_value=2, max_value=100_000,
        help_text="The plan's number of human labels.",
    )  # fmt: skip
    overlap = forms.IntegerField(
        label="Annotators per item", min_value=1, max_value=50, initial=3,
        help_text="Their majority is the item's human label.",
    )  # fmt: skip
    items_per_participant = forms.IntegerField(
        label="Items per participant", min_value=1, max_value=10_000, initial=20
    )
    currency = forms.ChoiceField(label="Currency", choices=CURRENCIES, initial="GBP")
    reward = forms.CharField(label="Reward per submission", max_length=20)
    target_points = forms.FloatField(
        label="Target interval: ± this many points of How2Score (optional)",
        required=False, min_value=0.01, max_value=49.99,
        help_text="The study stops handing out items once the corrected How2Score's 95% "
        "interval is this narrow. Empty: no target.",
    )  # fmt: skip
    sampling = forms.ChoiceField(
        label="Choose the items", choices=SAMPLING_CHOICES, initial=UNIFORM,
        widget=forms.RadioSelect,
    )  # fmt: skip
    seed = forms.IntegerField(
        label="Seed", min_value=0, max_value=2**31 - 1, initial=0,
        help_text="The same seed draws the same items.",
    )  # fmt: skip

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = Judge.objects.order_by("name")
        self.fields["dataset"].queryset = Dataset.objects.order_by("name", "version")
        currency = self.data.get(self.add_prefix("currency")) or self.initial.get("currency")
        self.fields["reward"].help_text = money.amount_help(
            currency if currency in money.MINOR_UNIT_NAMES else "GBP"
        )

    def clean(self):
        data = super().clean()
        if "reward" in data and data.get("currency"):
            try:
                data["reward"] = money.parse_amount(data["reward"], currency=data["currency"])
            except money.AmountError as exc:
                self.add_error("reward", str(exc))
        return data

    def target_half_width(self) -> float | None:
        """The target in the study's unit: a share of How2Score (3 points → 0.03)."""
        points = self.cleaned_data.get("target_points")
        return None if points is None else points / 100
