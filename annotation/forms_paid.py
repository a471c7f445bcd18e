"""Forms of the paid-study pages (pay terms, a Prolific study draft): every posted value goes
through the one text gate as a field error at its field (:class:`core.forms.GatedFormMixin`),
the typed values kept, never the bare 400 page; bad amounts and numbers are field errors too.
The services check the values again (the model's own ``full_clean``, Prolific's rules)."""

from __future__ import annotations

from decimal import Decimal

from django import forms

from annotation.models import StudyPay
from annotation.prolific.rules import DEVICES
from core.forms import GatedFormMixin

_AMOUNT = {"required": False, "max_digits": 10, "decimal_places": 2, "min_value": 0}
_AMOUNTS = ("reward", "bonus_per_item", "bonus_per_known_correct")


class PayTermsForm(GatedFormMixin, forms.Form):
    """The pay terms box: only the fields posted are changed (an empty amount is 0)."""

    currency = forms.CharField(required=False, max_length=3)
    reward = forms.DecimalField(**_AMOUNT)
    estimated_minutes = forms.IntegerField(required=False, min_value=0, label="Estimated minutes")
    bonus_per_item = forms.DecimalField(label="Bonus per item", **_AMOUNT)
    bonus_per_known_correct = forms.DecimalField(label="Bonus per known item right", **_AMOUNT)
    exclusion_group_id = forms.CharField(
        required=False,
        max_length=StudyPay._meta.get_field("exclusion_group_id").max_length,
        label="Exclusion group id",
    )

    @classmethod
    def for_terms(cls, terms: StudyPay) -> PayTermsForm:
        return cls(initial={name: getattr(terms, name) for name in cls.base_fields})

    def changes(self) -> dict:
        """The posted fields, cleaned (call after ``is_valid``)."""
        values = {}
        for name, value in self.cleaned_data.items():
            if self.add_prefix(name) not in self.data:
                continue
            if name in _AMOUNTS and value is None:
                value = Decimal("0")
            elif name == "estimated_minutes" and value is None:
                value = 0
            values[name] = value.strip() if isinstance(value, str) else value
        return values


class ProlificDraftForm(GatedFormMixin, forms.Form):
    """The *Create on Prolific* box: name, description, reward, minutes, places, devices and
    the participant groups and previous studies (space- or comma-separated ids)."""

    name = forms.CharField(max_length=120, label="Title")
    description = forms.CharField(required=False, max_length=2000, widget=forms.Textarea)
    reward = forms.DecimalField(max_digits=10, decimal_places=2, min_value=0)
    minutes = forms.IntegerField(min_value=1)
    places = forms.IntegerField(min_value=1)
    devices = forms.MultipleChoiceField(required=False, choices=[(d, d) for d in DEVICES])
    allow_groups = forms.CharField(required=False, max_length=2000)
    block_groups = forms.CharField(required=False, max_length=2000)
    previous_studies = forms.CharField(required=False, max_length=2000)


class BonusesForm(GatedFormMixin, forms.Form):
    """The bonuses box (one ``participant_id,amount`` a line); the service reads the lines."""

    bonuses = forms.CharField(
        required=False, strip=False, max_length=200_000, widget=forms.Textarea, label="Bonuses"
    )


class ExcludeForm(GatedFormMixin, forms.Form):
    """The exclusion box: Prolific ids (space or line separated) and the participant group."""

    participants = forms.CharField(
        required=False, max_length=100_000, widget=forms.Textarea, label="Prolific ids"
    )
    group_id = forms.CharField(
        required=False,
        max_length=StudyPay._meta.get_field("exclusion_group_id").max_length,
        label="Participant group id",
    )


class SubmissionsForm(GatedFormMixin, forms.Form):
    """The box under the listed submissions: the message sent with a rejection or a return
    (the service checks its length rules per action)."""

    message = forms.CharField(
        required=False, strip=False, max_length=5000, widget=forms.Textarea, label="Message"
    )


class PostedNumbersForm(GatedFormMixin, forms.Form):
    """The small number boxes of a Prolific study (publish, pilot, add places): every posted
    value through the text gate as an error of the box; the views read the numbers."""
