"""The escalation form: a study, a judge and the levels α and δ (and the split's seed). A
refusal is an error at its field, the text kept; the levels are checked by the statistics'
own rule (:func:`validation.escalation.stats.check_levels`)."""

from __future__ import annotations

from django import forms

from annotation.models import Study
from core.forms import GatedFormMixin
from judging.models import Judge
from validation.escalation.reads import DEFAULT_SEED
from validation.escalation.stats import DEFAULT_ALPHA, DEFAULT_DELTA, EscalationError, check_levels


class EscalationForm(GatedFormMixin, forms.Form):
    study = forms.ModelChoiceField(queryset=Study.objects.none(), label="Study")
    judge = forms.ModelChoiceField(
        queryset=Judge.objects.none(), to_field_name="name", label="Judge"
    )
    alpha = forms.FloatField(
        label="α (disagreement allowed)",
        initial=DEFAULT_ALPHA,
        help_text="On the items the judge decides, it may disagree with people at most this "
        "often (0.1: agreement at least 90%).",
    )
    delta = forms.FloatField(
        label="δ (risk the guarantee fails)",
        initial=DEFAULT_DELTA,
        help_text="The guarantee holds with probability at least 1 − δ (0.1: 90%).",
    )
    seed = forms.IntegerField(
        label="Seed",
        initial=DEFAULT_SEED,
        min_value=0,
        help_text="Seed of the split of the labelled items into calibration and held-out halves.",
    )

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.fields["study"].queryset = Study.objects.filter(form_type="critical_failure").order_by(
            "-created_at"
        )
        self.fields["judge"].queryset = Judge.objects.order_by("name")

    def clean(self):
        data = super().clean()
        if "alpha" in data and "delta" in data:
            try:
                check_levels(data["alpha"], data["delta"])
            except EscalationError as exc:
                self.add_error(exc.field, str(exc))
        return data
