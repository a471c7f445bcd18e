"""The text gate speaks through forms (core.forms): a refused character is an error
at its field with the typed text kept, other posted keys are gated as errors of the whole form,
numbers are bounded to what a column holds; on the console's add and change pages too."""

from __future__ import annotations

import pytest
from django import forms
from django.http import QueryDict

from benchmarks.models import Dataset
from core.forms import INT_MAX, GatedFormMixin

pytestmark = pytest.mark.django_db


class Sample(GatedFormMixin, forms.Form):
    title = forms.CharField(max_length=20)
    count = forms.IntegerField(required=False)


def _form(**data):
    q = QueryDict(mutable=True)
    for key, value in data.items():
        q[key] = value
    return Sample(q)


def test_a_refused_character_is_a_field_error_naming_the_field():
    form = _form(title="ab\x00c")
    assert not form.is_valid()
    assert form.errors["title"] == [
        "Title: contains a control character (U+0000 NUL) at character 3; remove it (only tab, "
        "newline and carriage return are allowed)"
    ]
    assert form["title"].value() == "ab\x00c"  # shown again as typed


def test_other_posted_keys_are_gated_and_numbers_bounded():
    form = _form(title="ok", extra="x\x07")
    assert not form.is_valid() and "field extra: contains a control character" in str(
        form.non_field_errors()
    )
    form = _form(title="ok", count=str(INT_MAX + 1))
    assert not form.is_valid()
    assert "less than or equal to 2147483647" in str(form.errors["count"])
    assert _form(title="ok", count=str(INT_MAX)).is_valid()
    assert "Title: 21 characters, over the limit of 20" in str(
        _form(title="x" * 21).errors["title"]
    )


def test_the_consoles_add_page_shows_the_refusal_at_the_field(client, make_user):
    client.force_login(make_user("root", role="admin", staff=True))
    page = client.post(
        "/admin/benchmarks/dataset/add/",
        {"name": "beans", "version": "v1", "description": "soak\x00 overnight"},
    )
    html = page.content.decode()
    assert page.status_code == 200 and "This request was refused" not in html
    assert "Description: contains a control character (U+0000 NUL)" in html
    assert 'value="beans"' in html and not Dataset.objects.exists()
    too_long = client.post(
        "/admin/benchmarks/dataset/add/",
        {"name": "beans", "version": "v1", "description": "d" * 10_001},
    )
    assert "over the limit of 10,000" in too_long.content.decode()
    ok = client.post(
        "/admin/benchmarks/dataset/add/",
        {"name": "beans", "version": "v1", "description": "soak overnight"},
    )
    assert ok.status_code == 302 and Dataset.objects.get().description == "soak overnight"
