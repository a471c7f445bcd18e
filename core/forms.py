"""Forms that speak for the one text gate (:mod:`core.text`): a refused character in a typed
value is a field error at that field, the typed text kept, instead of the bare 400 page the
door (:class:`core.middleware.TextGateMiddleware`) gives a form that does not gate itself.

A view whose every posted field is read through such a form is marked
:func:`core.middleware.text_gate_exempt`; the form then checks every posted value, its own
fields at the field and any other posted key as an error of the whole form, so nothing read
from the request passes ungated. Numbers get bounds a database column can hold, and text
fields keep their ``max_length`` (over-long text is refused with the limit named, never cut).
"""

from __future__ import annotations

from django import forms
from django.core.validators import MaxValueValidator, MinValueValidator
from django.forms.utils import ErrorDict

from core.text import length_error, text_error

# the widest integer a PostgreSQL ``integer`` column holds; a form number without its own
# bounds gets these, so a bad number is a field error, not a database error
INT_MAX = 2_147_483_647
DECIMAL_MAX = 10**12
_SKIPPED = {"csrfmiddlewaretoken"}


def _bound_numbers(field: forms.Field) -> None:
    if isinstance(field, (forms.FloatField, forms.DecimalField)):  # both IntegerFields
        top, bottom = DECIMAL_MAX, -DECIMAL_MAX
    elif isinstance(field, forms.IntegerField):
        top, bottom = INT_MAX, -INT_MAX - 1
    else:
        return
    if field.max_value is None:
        field.max_value = top
        field.validators.append(MaxValueValidator(top))
    if field.min_value is None:
        field.min_value = bottom
        field.validators.append(MinValueValidator(bottom))


class GatedFormMixin:
    """Put before ``forms.Form`` / ``forms.ModelForm``: every posted value through the text
    gate, refusals as field errors; numbers bounded."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        for field in self.fields.values():
            _bound_numbers(field)

    def full_clean(self) -> None:
        """The size check first (:meth:`_over_long`): with a value over its field's limit,
        only each field's own checks run, not the form's (they may query or parse the text);
        then every posted value through the gate."""
        over_long = self._over_long() if self.is_bound else {}
        if over_long:
            self._errors, self.cleaned_data = ErrorDict(), {}
            self._clean_fields()
        else:
            super().full_clean()
        if not self.is_bound:
            return
        for name, message in over_long.items():  # in the app's words, in place of Django's
            self._errors.pop(name, None)
            self.add_error(name, message)
        own = set()
        for name, field in self.fields.items():
            key = self.add_prefix(name)
            own.add(key)
            if name in over_long:
                continue
            label = str(field.label or name.replace("_", " ").capitalize())
            for value in self._posted(key):
                message = text_error(value, label)
                if message:  # the gate's reason, in place of any other error of the field
                    self._errors.pop(name, None)
                    self.add_error(name, message)
                    break
        for key in self.data:
            if key in own or key in _SKIPPED:
                continue
            for checked in (key, *self._posted(key)):
                message = text_error(checked, f"field {key}")
                if message:
                    self.add_error(None, message)
                    break

    def _over_long(self) -> dict[str, str]:
        """Field name → the refusal of a posted value longer than the field's ``max_length``,
        in the app's words (the field and its limit named, :func:`core.text.length_error`)."""
        found = {}
        for name, field in self.fields.items():
            limit = getattr(field, "max_length", None)
            if not limit:
                continue
            label = str(field.label or name.replace("_", " ").capitalize())
            for value in self._posted(self.add_prefix(name)):
                message = length_error(value, label, limit)
                if message:
                    found[name] = message
                    break
        return found

    def _posted(self, key: str) -> list:
        if hasattr(self.data, "getlist"):
            return self.data.getlist(key)
        value = self.data.get(key)
        return list(value) if isinstance(value, (list, tuple)) else [value]


class GatedModelForm(GatedFormMixin, forms.ModelForm):
    """The console's (Django admin's) model forms: ``form = GatedModelForm`` on a ModelAdmin
    makes its add and change pages speak for the gate (:func:`form_gates_itself`)."""


def form_gates_itself(view) -> bool:
    """Whether ``view`` reads every posted field through a gated form: marked
    :func:`core.middleware.text_gate_exempt`, or a console add/change page whose ModelAdmin
    form is a :class:`GatedFormMixin` (its inline rows and buttons are gated as other keys)."""
    if getattr(view, "text_gate_exempt", False):
        return True
    model_admin = getattr(view, "model_admin", None)
    return (
        model_admin is not None
        and getattr(view, "__name__", "") in ("add_view", "change_view")
        and isinstance(model_admin.form, type)
        and issubclass(model_admin.form, GatedFormMixin)
    )
