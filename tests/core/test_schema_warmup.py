"""The API schema's machinery loads on the schema's first request, not when a web process
starts (drf-spectacular's extension targets pulled pydantic and more into every
worker, ~6 MiB), and loading it resolves every extension target before a view runs, so two
first schema requests at once cannot race on a lazy import (a 500 seen when the docs page and
a client fetched together)."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model

from core.roles import RESEARCHER, ensure_roles
from tests.support.worker import run_web_probe


@pytest.mark.django_db(transaction=True)  # the probe process signs in as the committed user
def test_a_fresh_process_loads_the_schema_on_its_first_requests_two_at_once():
    ensure_roles()
    from django.contrib.auth.models import Group

    user = get_user_model().objects.create_user("schema-reader", password="pw-schema-1")
    user.groups.add(Group.objects.get(name=RESEARCHER))
    probe = run_web_probe("tests.support.schema_race_probe", "schema-reader")
    assert probe["at_start"] == [], "imported when the process started"
    assert probe["statuses"] == [200, 200], probe
    assert probe["left"] == [], "extension targets still to import on a request"
