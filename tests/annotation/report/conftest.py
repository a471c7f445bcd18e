"""The report scenario (a small study labelled through the real services) and clients for
each role."""

from __future__ import annotations

import pytest

from tests.annotation.factories import make_labelled_study


@pytest.fixture
def labelled_study(db):
    return make_labelled_study()


@pytest.fixture
def researcher_client(client, make_user):
    client.force_login(make_user("report-researcher", role="researcher"))
    return client


@pytest.fixture
def researcher_user(make_user):
    return make_user("report-adjudicator", role="researcher")
