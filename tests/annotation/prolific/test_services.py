"""Prolific operations through the services: matching, bulk transitions, bonuses, groups, the
call log, roles, and failures that change nothing here."""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied, ValidationError

from annotation.models import Participant, ProlificCall
from annotation.services import prolific as ps

pytestmark = pytest.mark.django_db
REASON = "You answered every attention check wrongly and the labels do not match the codebook. " * 2


def test_list_matches_submissions_to_participants_and_logs_the_call(paid_study, researcher):
    subs = ps.submissions_list(study=paid_study, user=researcher)
    by_pid = {s["participant_id"]: s for s in subs}
    assert set(by_pid) == {"P_A", "P_B", "P_C", "P_X"}  # all 2 pages
    assert by_pid["P_A"]["participant"] == Participant.objects.get(prolific_pid="P_A")
    assert by_pid["P_X"]["participant"] is None
    call = ProlificCall.objects.get()
    assert (call.user, call.action, call.ok, call.target) == (researcher, "list", True, "S1")


def test_bulk_approve_reject_and_return(paid_study, prolific_server, admin):
    subs = paid_study.subs
    r = ps.submissions_transition(
        study=paid_study, user=admin, action="approve", submission_ids=[subs["P_A"], subs["P_B"]]
    )
    assert r.done == [subs["P_A"], subs["P_B"]] and r.failed == []
    r = ps.submissions_transition(
        study=paid_study,
        user=admin,
        action="reject",
        submission_ids=[subs["P_C"]],
        category="FAILED_CHECK",
        message=REASON,
    )
    assert r.done == [subs["P_C"]]
    ps.submissions_transition(
        study=paid_study, user=admin, action="return", submission_ids=[subs["P_X"]], message="Dup"
    )
    states = {pid: prolific_server.submissions[s]["status"] for pid, s in subs.items()}
    assert states == {
        "P_A": "APPROVED",
        "P_B": "APPROVED",
        "P_C": "REJECTED",
        "P_X": "AWAITING REVIEW",
    }
    assert prolific_server.submissions[subs["P_X"]]["return_requested"] == ["Dup"]
    log = list(ProlificCall.objects.order_by("id").values_list("action", "user__username", "ok"))
    assert log == [("approve", "pay-admin", True)] * 2 + [
        ("reject", "pay-admin", True),
        ("return", "pay-admin", True),
    ]


def test_a_refused_call_is_logged_reported_and_does_not_stop_the_others(
    paid_study, prolific_server, admin
):
    subs = paid_study.subs
    prolific_server.fail_next(f"/submissions/{subs['P_A']}/", 500)
    r = ps.submissions_transition(
        study=paid_study, user=admin, action="approve", submission_ids=[subs["P_A"], subs["P_B"]]
    )
    assert r.done == [subs["P_B"]]
    assert r.failed[0][0] == subs["P_A"] and "HTTP 500" in r.failed[0][1]
    failed = ProlificCall.objects.get(ok=False)
    assert failed.status == 500 and failed.target == subs["P_A"] and "HTTP 500" in failed.message
    assert prolific_server.submissions[subs["P_A"]]["status"] == "AWAITING REVIEW"


def test_bad_input_is_refused_before_any_call(paid_study, prolific_server, admin):
    n = len(prolific_server.requests)
    cases = [
        ({"action": "approve", "submission_ids": []}, "submissions"),
        ({"action": "delete", "submission_ids": ["x"]}, "action"),
        (
            {"action": "reject", "submission_ids": ["x"], "category": "NOPE", "message": REASON},
            "rejection_category",
        ),
        (
            {"action": "reject", "submission_ids": ["x"], "category": "OTHER", "message": "short"},
            "message",
        ),
        ({"action": "return", "submission_ids": ["x"], "message": " "}, "message"),
    ]
    for kwargs, field in cases:
        with pytest.raises(ValidationError) as err:
            ps.submissions_transition(study=paid_study, user=admin, **kwargs)
        assert field in err.value.message_dict, kwargs
    assert len(prolific_server.requests) == n and not ProlificCall.objects.exists()


def test_researchers_read_but_may_not_move_money(paid_study, researcher):
    with pytest.raises(PermissionDenied):
        ps.submissions_transition(
            study=paid_study, user=researcher, action="approve", submission_ids=["s"]
        )
    with pytest.raises(PermissionDenied):
        ps.bonus_submit(study=paid_study, user=researcher, csv_text="P_A,1.00", digest="x")
    with pytest.raises(PermissionDenied):
        ps.group_add(study=paid_study, user=researcher, group_id="G", participant_ids=["P_A"])


def test_bonus_preview_then_pay_once(paid_study, prolific_server, admin):
    preview = ps.bonus_preview(csv_text="participant_id,amount\nP_A,1.25\nP_B,0.50\n")
    assert preview.total == Decimal("1.75") and len(preview.bonuses) == 2
    with pytest.raises(ValidationError, match="changed since the preview"):
        ps.bonus_submit(study=paid_study, user=admin, csv_text="P_A,9.99", digest=preview.digest)
    bulk = ps.bonus_submit(
        study=paid_study, user=admin, csv_text="P_A,1.25\nP_B,0.50", digest=preview.digest
    )
    assert prolific_server.bulk[bulk] == {"rows": [("P_A", "1.25"), ("P_B", "0.50")], "paid": 1}
    with pytest.raises(ValidationError, match="already paid"):
        ps.bonus_submit(
            study=paid_study, user=admin, csv_text="P_A,1.25\nP_B,0.50", digest=preview.digest
        )
    assert prolific_server.bulk[bulk]["paid"] == 1
    assert list(ProlificCall.objects.order_by("id").values_list("action", flat=True)) == [
        "bonus_create",
        "bonus_pay",
    ]


def test_a_refused_bonus_set_up_pays_nothing(paid_study, prolific_server, admin):
    preview = ps.bonus_preview(csv_text="P_A,1.00\nNOT_IN_STUDY,2.00")
    with pytest.raises(ps.ProlificError, match="NOT_IN_STUDY"):
        ps.bonus_submit(
            study=paid_study,
            user=admin,
            csv_text="P_A,1.00\nNOT_IN_STUDY,2.00",
            digest=preview.digest,
        )
    assert prolific_server.bulk == {} and not prolific_server.calls("POST", "/pay/")
    assert ProlificCall.objects.get().ok is False


@pytest.mark.parametrize(
    "text,where",
    [
        ("P_A,abc", "line 1"),
        ("P_A,1.00\nP_A,2.00", "line 2"),
        ("P_A,-1", "line 1"),
        ("P_A,0.001", "line 1"),
        ("", "no participant"),
    ],
)
def test_bad_bonus_csv_names_the_line(text, where):
    with pytest.raises(ValidationError, match=where):
        ps.bonus_preview(csv_text=text)


def test_add_to_exclusion_group(paid_study, prolific_server, admin):
    prolific_server.groups["G1"] = []
    assert (
        ps.group_add(
            study=paid_study, user=admin, group_id="G1", participant_ids=["P_C", "P_C", " "]
        )
        == 1
    )
    assert prolific_server.groups["G1"] == ["P_C"]
    with pytest.raises(ps.ProlificError, match="HTTP 404"):
        ps.group_add(study=paid_study, user=admin, group_id="NOPE", participant_ids=["P_C"])
    assert [c.ok for c in ProlificCall.objects.order_by("id")] == [True, False]
