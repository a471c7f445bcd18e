"""Accessibility of the console (Django admin), one home.

A tabular inline (a study's items) prints its labels once, as column headers that are not tied
to the inputs below them, so a screen reader announces every box as unlabelled (axe: WCAG 2.1
"label", "select-name"). :func:`label_row_fields` names each input of a row after its column
("Expected label, row 3"). Call it from a formset's ``add_fields``."""

from __future__ import annotations


def label_row_fields(form, index: int | None) -> None:
    row = "new row" if index is None else f"row {index + 1}"
    for name, field in form.fields.items():
        label = str(field.label or name.replace("_", " ").capitalize())
        field.widget.attrs.setdefault("aria-label", f"{label}, {row}")
