"""Forms of the paid-study pages (pay terms, a Prolific study draft): every posted value goes
through the one text gate as a field error at its field (:class:`core.forms.GatedFormMixin`),
the typed values kept, never the bare 400 page; bad amounts and numbers are field errors too.
The services check the values again (the model's own ``full_clean``, Prolific's rules)."""

from __future__ import annotations

from decimal import Decimal

from django import forms

from annotation.models import StudyPay
from annotation.money import AmountError, amount_help, parse_amount, shown
from annotation.prolific.rules import DEVICES
from core.forms import GatedFormMixin, GatedModelForm

_AMOUNTS = ("reward", "bonus_per_item", "bonus_per_known_correct")


class AmountField(forms.CharField):
    """An amount in the study's currency with exactly two decimals (the one rule:
    :func:`annotation.money.parse_amount`); ``150`` is refused at the field as ambiguous. The
    form sets ``currency`` (and the help text) from the study's pay terms."""

    def __init__(self, *, allow_zero: bool = False, **kwargs) -> None:
        kwargs.setdefault("max_length", 20)
        super().__init__(**kwargs)
        self.allow_zero = allow_zero
        self.currency = "GBP"

    def clean(self, value):
        value = super().clean(value)
        if value in self.empty_values:
            return None
        try:
            return parse_amount(value, currency=self.currency, allow_zero=self.allow_zero)
        except AmountError as exc:
            raise forms.ValidationError(str(exc), code="amount") from None


def _in_currency(form: forms.Form, currency: str) -> None:
    for field in form.fields.values():
        if isinstance(field, AmountField):
            field.currency = currency
            field.help_text = amount_help(currency)


class PayTermsForm(GatedFormMixin, forms.Form):
    """The pay terms box: only the fields posted are changed (an empty amount is 0.00, the
    reward then not set yet)."""

    currency = forms.CharField(required=False, max_length=3)
    reward = AmountField(required=False, allow_zero=True)
    estimated_minutes = forms.IntegerField(required=False, min_value=0, label="Estimated minutes")
    bonus_per_item = AmountField(required=False, allow_zero=True, label="Bonus per item")
    bonus_per_known_correct = AmountField(
        required=False, allow_zero=True, label="Bonus per known item right"
    )
    exclusion_group_id = forms.CharField(
        required=False,
        max_length=StudyPay._meta.get_field("exclusion_group_id").max_length,
        label="Exclusion group id",
    )

    def __init__(self, *args, currency: str = "GBP", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        posted = (self.data.get("currency") or "").strip() if self.is_bound else ""
        _in_currency(self, posted or currency)

    @classmethod
    def for_terms(cls, terms: StudyPay) -> PayTermsForm:
        """The stored terms, amounts with two decimals; a reward not set yet is empty, never
        a prefilled 0."""
        initial = {name: getattr(terms, name) for name in cls.base_fields}
        for name in _AMOUNTS:
            initial[name] = shown(initial[name])
        if not terms.reward:
            initial["reward"] = ""
        return cls(initial=initial, currency=terms.currency)

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


class StudyPayConsoleForm(GatedModelForm):
    """The console's pay terms: the amounts under the same rule as the Pay page."""

    reward = AmountField(allow_zero=True)
    bonus_per_item = AmountField(allow_zero=True)
    bonus_per_known_correct = AmountField(allow_zero=True)

    class Meta:
        model = StudyPay
        fields = "__all__"

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        posted = (self.data.get("currency") or "").strip() if self.is_bound else ""
        _in_currency(self, posted or getattr(self.instance, "currency", "") or "GBP")
        for name in _AMOUNTS:  # shown with two decimals, as they are typed; no reward yet: empty
            value = self.initial.get(name)
            empty = value is None or (name == "reward" and not value)
            self.initial[name] = "" if empty else shown(value)


class ProlificDraftForm(GatedFormMixin, forms.Form):
    """The *Create on Prolific* box: name, description, reward, minutes, places, devices and
    the participant groups and previous studies (space- or comma-separated ids)."""

    name = forms.CharField(max_length=120, label="Title")
    description = forms.CharField(required=False, max_length=2000, widget=forms.Textarea)
    reward = AmountField()
    minutes = forms.IntegerField(min_value=1)
    places = forms.IntegerField(min_value=1)
    devices = forms.MultipleChoiceField(required=False, choices=[(d, d) for d in DEVICES])
    allow_groups = forms.CharField(required=False, max_length=2000)
    block_groups = forms.CharField(required=False, max_length=2000)
    previous_studies = forms.CharField(required=False, max_length=2000)

    def __init__(self, *args, currency: str = "GBP", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _in_currency(self, currency)


class PilotForm(GatedFormMixin, forms.Form):
    """The *After the pilot* box: estimated minutes, the reward, places to add."""

    minutes = forms.IntegerField(min_value=1, max_value=600, label="Estimated minutes")
    reward = AmountField()
    places = forms.IntegerField(min_value=1, max_value=10000, label="Places to add")

    def __init__(self, *args, currency: str = "GBP", **kwargs) -> None:
        super().__init__(*args, **kwargs)
        _in_currency(self, currency)


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
