"""The pure rules of a study's life on Prolific and the webhook signature (no Django)."""

from __future__ import annotations

import base64
import hashlib
import hmac
from decimal import Decimal

import pytest

from annotation.prolific import rules, signature

SECRET = "cGNqFPb6y0RT3XO9XVSessBDYIbHQ"
BODY = b'{"resource_id": "sub1", "event_type": "submission.status.change", "status": "RETURNED"}'


def test_signature_is_base64_hmac_sha256_of_timestamp_then_body():
    stamp = "1764256000"
    expected = base64.b64encode(
        hmac.new(SECRET.encode(), (stamp + BODY.decode()).encode(), hashlib.sha256).digest()
    ).decode()  # the documented recipe, written out independently
    assert signature.sign(secret=SECRET, timestamp=stamp, body=BODY) == expected
    ok = signature.refusal(
        secret=SECRET, signature=expected, timestamp=stamp, body=BODY, now=1764256010, tolerance=300
    )
    assert ok == ""


@pytest.mark.parametrize(
    "change,reason",
    [
        ({"signature": ""}, "unsigned"),
        ({"timestamp": ""}, "unsigned"),
        ({"timestamp": "yesterday"}, "not a UNIX time"),
        ({"now": 1764256000 + 301}, "stale"),
        ({"now": 1764256000 - 301}, "stale"),
        ({"secret": "another-secret"}, "bad signature"),
        ({"body": BODY.replace(b"RETURNED", b"APPROVED")}, "bad signature"),
    ],
)
def test_unsigned_stale_and_badly_signed_requests_are_refused(change, reason):
    stamp = "1764256000"
    args = {
        "secret": SECRET,
        "signature": signature.sign(secret=SECRET, timestamp=stamp, body=BODY),
        "timestamp": stamp,
        "body": BODY,
        "now": 1764256000,
        "tolerance": 300,
    }
    args.update(change)
    assert reason in signature.refusal(**args)


def test_a_signature_over_another_timestamp_does_not_hold():
    sig = signature.sign(secret=SECRET, timestamp="1764256000", body=BODY)
    assert (
        signature.refusal(
            secret=SECRET,
            signature=sig,
            timestamp="1764256001",
            body=BODY,
            now=1764256001,
            tolerance=300,
        )
        == "bad signature"
    )


def test_completion_codes_carry_their_actions():
    codes = rules.completion_codes(rules.Codes("C1", "S1", "F1"), exclusion_group="G9")
    by_type = {c["code_type"]: c for c in codes}
    assert by_type["COMPLETED"] == {
        "code": "C1",
        "code_type": "COMPLETED",
        "actions": [{"action": "MANUALLY_REVIEW"}],
    }
    assert by_type["OTHER"]["code"] == "S1"
    assert by_type["FAILED_ATTENTION_CHECK"]["actions"] == [
        {"action": "MANUALLY_REVIEW"},
        {"action": "ADD_TO_PARTICIPANT_GROUP", "participant_group": "G9"},
    ]
    no_group = rules.completion_codes(rules.Codes("C1", "S1", "F1"))
    assert no_group[2]["actions"] == [{"action": "MANUALLY_REVIEW"}]


def test_entry_url_carries_the_three_placeholders():
    url = rules.entry_url("https://h2r.example/study/s/abc/")
    assert url == (
        "https://h2r.example/study/s/abc/?PROLIFIC_PID={{%PROLIFIC_PID%}}"
        "&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
    )
    assert rules.entry_url("https://x/?a=1").startswith("https://x/?a=1&PROLIFIC_PID=")


def test_filters_of_groups_and_earlier_studies():
    assert rules.filters(block_groups=["G1", "", "G1"], previous_studies=["P1"]) == [
        {"filter_id": "participant_group_blocklist", "selected_values": ["G1"]},
        {"filter_id": "previous_studies", "selected_values": ["P1"]},
    ]
    assert rules.filters() == []


@pytest.mark.parametrize(
    "median,floor,reward,minutes,proposed",
    [
        (600.0, Decimal("9.00"), Decimal("1.00"), 10, Decimal("1.50")),  # floor: 9/h x 10 min
        (601.0, Decimal("9.00"), Decimal("1.00"), 11, Decimal("1.65")),  # minutes rounded up
        (300.0, Decimal("9.00"), Decimal("2.00"), 5, Decimal("2.00")),  # never below the reward
        (10.0, None, Decimal("0.50"), 1, Decimal("0.50")),  # no floor, at least a minute
        (1000.0, Decimal("7.00"), Decimal("0"), 17, Decimal("1.99")),  # 1.9833 rounded up
    ],
)
def test_pilot_proposal_from_median_active_time_and_floor(median, floor, reward, minutes, proposed):
    p = rules.pilot_proposal(median_seconds=median, floor=floor, reward=reward)
    assert (p.minutes, p.reward) == (minutes, proposed)
    if floor is not None:
        assert p.hourly >= floor


def test_transitions_from_the_statuses_prolific_allows():
    assert rules.transition_allowed("PUBLISH", "UNPUBLISHED")
    assert not rules.transition_allowed("PUBLISH", "ACTIVE")
    assert rules.transition_allowed("START", "PAUSED") and not rules.transition_allowed(
        "START", "ACTIVE"
    )
    assert rules.transition_allowed("STOP", "PAUSED")
    assert not rules.transition_allowed("DELETE", "ACTIVE")
    # as Prolific counts places taken: a rejected submission keeps its place
    assert {"RETURNED", "TIMED-OUT"} == rules.FREEING and "REJECTED" in rules.RECORDED
