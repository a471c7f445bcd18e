"""Accessibility of the console (Django admin), one home.

A tabular inline (a study's items) prints its labels once, as column headers that are not tied
to the inputs below them, so a screen reader announces every box as unlabelled (axe: WCAG 2.1
"label", "select-name"). :func:`label_row_fields` names each input of a row after its column
("Expected label, row 3"). Call it from a formset's ``add_fields``.

A JSON box with no value shows ``null`` in Django's form; :func:`json_boxes_empty_when_null`
(called once at start-up) makes every console JSON box empty instead (and an empty box is no
value again when saved)."""

from __future__ import annotations

from django import forms


def label_row_fields(form, index: int | None) -> None:
    row = "new row" if index is None else f"row {index + 1}"
    for name, field in form.fields.items():
        label = str(field.label or name.replace("_", " ").capitalize())
        field.widget.attrs.setdefault("aria-label", f"{label}, {row}")


class EmptyWhenNullJSONField(forms.JSONField):
    """A JSON box that is empty, not ``null``, when there is no value."""

    def prepare_value(self, value):
        return "" if value is None else super().prepare_value(value)


def json_boxes_empty_when_null() -> None:
    """Every console form's JSON field: :class:`EmptyWhenNullJSONField` (Django's own
    defaults for model admin form fields, which each admin's ``formfield_overrides`` extends)."""
    from django.contrib.admin import options
    from django.db import models

    defaults = options.FORMFIELD_FOR_DBFIELD_DEFAULTS.setdefault(models.JSONField, {})
    defaults.setdefault("form_class", EmptyWhenNullJSONField)
