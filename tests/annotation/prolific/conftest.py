"""A local Prolific server, a study linked to it with three participants, and users per role."""

from __future__ import annotations

import pytest

from tests.annotation.factories import make_study, working_participant
from tests.support.prolific_server import ProlificTestServer


@pytest.fixture
def prolific_server(settings, monkeypatch):
    with ProlificTestServer(token="tok-123", page_size=2) as server:
        settings.PROLIFIC_API_BASE_URL = server.base_url
        monkeypatch.setenv("PROLIFIC_API_TOKEN", "tok-123")
        yield server


@pytest.fixture
def paid_study(db, prolific_server):
    study = make_study(n_items=4, overlap=3, items_per_participant=2, prolific_study_id="S1")
    prolific_server.add_study("S1")
    study.subs = {}
    for pid in ("P_A", "P_B", "P_C"):
        working_participant(study, pid)
        study.subs[pid] = prolific_server.add_submission("S1", pid)
    # a submission whose participant never reached this app
    study.subs["P_X"] = prolific_server.add_submission("S1", "P_X")
    return study


@pytest.fixture
def admin(make_user):
    return make_user("pay-admin", role="admin")


@pytest.fixture
def researcher(make_user):
    return make_user("pay-researcher", role="researcher")
