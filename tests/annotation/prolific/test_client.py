"""The Prolific client against the local server: auth, pagination, documented bodies, errors."""

from __future__ import annotations

import pytest

from annotation.prolific.client import Bonus, ProlificClient, ProlificError

pytestmark = pytest.mark.django_db


def test_lists_every_page_of_submissions(prolific_server):
    prolific_server.add_study("S")
    ids = [prolific_server.add_submission("S", f"P{i}") for i in range(5)]
    subs = ProlificClient().list_submissions("S")
    assert [s["id"] for s in subs] == ids
    assert len(prolific_server.calls("GET", "/submissions/")) == 3  # pages of 2, 2, 1


def test_token_is_sent_and_a_wrong_one_is_refused(prolific_server):
    prolific_server.add_study("S")
    with pytest.raises(ProlificError) as err:
        ProlificClient(token="wrong").get_study("S")
    assert err.value.status == 401 and "Invalid token" in str(err.value)
    assert ProlificClient().get_study("S")["id"] == "S"


def test_no_token_is_a_clear_error_without_any_call(prolific_server, monkeypatch):
    monkeypatch.delenv("PROLIFIC_API_TOKEN")
    with pytest.raises(ProlificError, match="PROLIFIC_API_TOKEN"):
        ProlificClient().get_study("S")
    assert prolific_server.requests == []


def test_reject_sends_the_documented_body_and_errors_carry_prolific_detail(prolific_server):
    prolific_server.add_study("S")
    sub = prolific_server.add_submission("S", "P1")
    with pytest.raises(ProlificError) as err:
        ProlificClient().reject(sub, category="NOT_A_CATEGORY", message="x" * 120)
    assert err.value.status == 400 and "rejection_category" in str(err.value)
    ProlificClient().reject(sub, category="FAILED_CHECK", message="m" * 100)
    method, path, body = prolific_server.requests[-1]
    assert (method, path) == ("POST", f"/api/v1/submissions/{sub}/transition/")
    assert body == {"action": "REJECT", "message": "m" * 100, "rejection_category": "FAILED_CHECK"}
    assert prolific_server.submissions[sub]["status"] == "REJECTED"


def test_bonuses_are_set_up_as_csv_then_paid(prolific_server):
    prolific_server.add_study("S")
    prolific_server.add_submission("S", "P1")
    prolific_server.add_submission("S", "P2")
    created = ProlificClient().create_bonuses("S", [Bonus("P1", "1.25"), Bonus("P2", "0.50")])
    assert prolific_server.requests[-1][2] == {"study_id": "S", "csv_bonuses": "P1,1.25\nP2,0.50"}
    assert created["amount"] == 175
    ProlificClient().pay_bonuses(created["id"])
    assert prolific_server.bulk[created["id"]]["paid"] == 1


def test_unreachable_server_is_a_clear_error(settings):
    settings.PROLIFIC_API_BASE_URL = "http://127.0.0.1:9/api/v1"  # discard port: refused
    with pytest.raises(ProlificError, match="could not be reached") as err:
        ProlificClient(token="t").get_study("S")
    assert err.value.status == 0
