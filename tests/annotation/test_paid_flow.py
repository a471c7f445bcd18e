"""A paid study's participant flow through HTTP: the comprehension check's second attempt after
the training, silent gold items (indistinguishable, scored, never blocking), excluded
participants refused at the door, and the console pages of a paid study's models."""

from __future__ import annotations

import re

import pytest
from django.urls import reverse

from annotation import rules
from annotation.models import (
    Annotation,
    AttentionCheckResult,
    EntryEvent,
    Participant,
    ProlificCall,
    StudyItem,
    StudyPay,
    StudyRound,
)
from annotation.selectors.quality import quality_rows
from annotation.services import study as study_services
from tests.annotation.factories import (
    current,
    enter,
    item_page_fields,
    make_generations,
    to_items,
    url,
)

pytestmark = pytest.mark.django_db


def paid_study(*, n_items=6, first=2, second=2, n_gold=0, n_training=1, **settings):
    """Regular items, ``first`` qualification items (attempt 1, expecting a failure),
    ``second`` for the second attempt (expecting none), training and silent gold items."""
    gens = make_generations(n_items + first + second + n_gold + n_training)
    regular, rest = gens[:n_items], gens[n_items:]
    known = []
    for kind, count, attempt, expected in (
        ("qualification", first, 1, True),
        ("qualification", second, 2, False),
        ("gold", n_gold, 1, True),
        ("training", n_training, 1, True),
    ):
        for _ in range(count):
            g = rest.pop(0)
            known.append(
                {
                    "generation_id": g.pk,
                    "kind": kind,
                    "attempt": attempt,
                    "expected_has_failure": expected,
                    "explanation": f"Explained: {kind} {attempt} has "
                    f"{'a' if expected else 'no'} critical failure.",
                }
            )
    settings.setdefault("min_seconds_per_item", 0)
    settings.setdefault("qualification_pass_threshold", 1.0)
    return study_services.study_create(
        name="Paid study",
        generation_ids=[g.pk for g in regular],
        known_items=known,
        **settings,
    )


def answer_current(client, study, choice, pid="PID1"):
    r = client.get(url("item", study))
    assert r.status_code == 200
    kind = current(pid).item.kind
    client.post(url("submit", study, current(pid).pk), item_page_fields(choice=choice))
    return kind


# --- the comprehension check: a second attempt after the training -------------------------------


def test_rule_comprehension_outcome():
    work, retrain, out = (
        rules.COMPREHENSION_WORK,
        rules.COMPREHENSION_RETRAIN,
        rules.COMPREHENSION_SCREEN_OUT,
    )
    assert rules.comprehension_outcome(passed=True, attempt=1, has_second_set=True) == work
    assert rules.comprehension_outcome(passed=True, attempt=2, has_second_set=True) == work
    assert rules.comprehension_outcome(passed=False, attempt=1, has_second_set=True) == retrain
    assert rules.comprehension_outcome(passed=False, attempt=2, has_second_set=True) == out
    assert rules.comprehension_outcome(passed=False, attempt=1, has_second_set=False) == out


def test_fail_once_see_the_training_again_then_pass(client):
    study = paid_study()
    to_items(client, study)
    # attempt 1 expects failures; answering "none" misses both
    assert [answer_current(client, study, "none") for _ in range(2)] == ["qualification"] * 2
    r = client.get(url("item", study))
    assert r.status_code == 302 and r.url == url("training", study)
    p = Participant.objects.get(prolific_pid="PID1")
    assert (p.stage, p.qualification_attempt, p.qualification_score) == ("training", 2, 0.0)
    page = client.get(url("training", study)).content.decode()
    assert 'id="retry-notice"' in page and "One more try" in page
    assert page.count('class="training-example missed-item"') == 2
    assert "Explained: qualification 1 has a critical failure." in page
    assert "take the second qualification test" in page
    client.post(url("training", study))
    # attempt 2: the second set (expects no failure), never the first set again
    seen = []
    for _ in range(2):
        client.get(url("item", study))
        item = current().item
        seen.append((item.kind, item.attempt))
        client.post(url("submit", study, current().pk), item_page_fields(choice="none"))
    assert seen == [("qualification", 2), ("qualification", 2)]
    r = client.get(url("item", study))  # scores the attempt: on to the items
    assert r.status_code == 200
    p.refresh_from_db()
    assert (p.stage, p.qualification_score) == ("working", 1.0)
    assert current().item.kind == "regular"
    results = AttentionCheckResult.objects.filter(participant=p, kind="qualification")
    assert sorted(results.values_list("passed", flat=True)) == [False, False, True, True]


def test_fail_twice_is_screened_out_with_the_screen_out_code(client):
    study = paid_study()
    to_items(client, study)
    for _ in range(2):
        answer_current(client, study, "none")
    assert client.get(url("item", study)).url == url("training", study)
    client.post(url("training", study))
    for _ in range(2):  # attempt 2 expects no failure: answer one
        client.get(url("item", study))
        assert current().item.attempt == 2
        client.post(
            url("submit", study, current().pk),
            item_page_fields(choice="failure", **{"f-0-desc": "Step 2 is wrong.", "f-0-l2": "2"}),
        )
    client.get(url("item", study))
    p = Participant.objects.get(prolific_pid="PID1")
    assert p.stage == "screened_out" and p.qualification_attempt == 2
    r = client.get(url("item", study))
    assert r.url == url("screened_out", study)
    page = client.get(r.url).content.decode()
    assert study.screened_out_code in page and "did not match the codebook" in page


def test_without_a_second_set_one_failure_screens_out_as_before(client):
    study = paid_study(second=0)
    to_items(client, study)
    for _ in range(2):
        answer_current(client, study, "none")
    assert client.get(url("item", study)).url == url("screened_out", study)
    p = Participant.objects.get(prolific_pid="PID1")
    assert p.stage == "screened_out" and p.qualification_attempt == 1


def test_known_items_file_takes_the_attempt():
    from annotation.known_items import KnownItemsError, parse_known_items

    lines = [
        '{"generation_id": 1, "kind": "qualification", "expected_has_failure": true, "attempt": 2}',
        '{"generation_id": 2, "kind": "gold", "expected_has_failure": false}',
    ]
    parsed = parse_known_items(lines)
    assert [(i["kind"], i["attempt"]) for i in parsed] == [("qualification", 2), ("gold", 1)]
    with pytest.raises(KnownItemsError, match="line 1: field attempt 2 is for qualification"):
        parse_known_items(
            ['{"generation_id": 1, "kind": "gold", "expected_has_failure": true, "attempt": 2}']
        )


# --- silent gold ---------------------------------------------------------------------------------


def _status_line(page: str) -> str:
    return re.search(r'<span class="study-progress">(.*?)·', page, re.S).group(1).strip()


def test_silent_gold_looks_like_any_item_and_never_blocks(client):
    study = paid_study(first=0, second=0, n_gold=2, items_per_participant=4, gold_rate=0.5)
    to_items(client, study)
    kinds, lines, pages = [], [], {}
    while True:
        r = client.get(url("item", study))
        if r.status_code != 200:
            break
        page = r.content.decode()
        item = current().item
        kinds.append(item.kind)
        lines.append(_status_line(page))
        pages.setdefault(item.kind, page)
        # answer every gold item wrongly (expected: a failure): nothing may happen
        r = client.post(url("submit", study, current().pk), item_page_fields(choice="none"))
        assert r.status_code == 302 and r.url == url("item", study)  # no notice, no detour
    assert r.status_code == 302 and r.url == url("done", study)
    assert kinds == ["regular", "regular", "gold", "regular", "regular"]
    assert lines == [f"Item {n} of 5" for n in range(1, 6)]
    # the same page: nothing names the kind, no notice, no warning
    for needle in ("gold", "qualification", "attention", "known"):
        assert needle not in pages["gold"].lower().replace("golden", "")
    strip = re.compile(r"(Goal \d+|step \d+ of item-\d+-\d+|item-\d+-\d+|/a/\d+/|Item \d of 5)")
    assert strip.sub("", pages["gold"]).count("<") == strip.sub("", pages["regular"]).count("<")
    p = Participant.objects.get(prolific_pid="PID1")
    assert (p.stage, p.n_done, p.n_gold_served, p.attention_failures) == ("done", 4, 1, 0)
    assert not AttentionCheckResult.objects.filter(participant=p).exists()
    row = next(r for r in quality_rows(study=study) if r["prolific_pid"] == "PID1")
    assert (row["silent_gold_agreement"], row["silent_gold_total"]) == (0.0, 1)
    assert row["gold_total"] == 1 and row["items_done"] == 4


def test_gold_planned_and_position_rules():
    assert rules.gold_planned(rate=0.5, items_per_participant=4, n_gold_items=5) == 1
    assert rules.gold_planned(rate=0.2, items_per_participant=20, n_gold_items=5) == 3
    assert rules.gold_planned(rate=0.2, items_per_participant=20, n_gold_items=2) == 2
    assert rules.gold_planned(rate=0, items_per_participant=20, n_gold_items=2) == 0
    assert rules.item_position(regular_done=2, gold_served=1, current_is_gold=True) == 3
    assert rules.item_position(regular_done=2, gold_served=1, current_is_gold=False) == 4


# --- excluded participants are refused at entry ---------------------------------------------


def _round(study):
    new = paid_study(first=0, second=0)
    StudyRound.objects.create(
        study=new, previous=study, number=1, carried_over=["GOOD"], excluded=["BAD"]
    )
    return new


def test_a_participant_excluded_by_the_previous_round_is_refused(client):
    new = _round(paid_study(first=0, second=0))
    r = enter(client, new, "BAD")
    page = r.content.decode()
    assert r.status_code == 403 and "You cannot take part in this study" in page
    assert "excluded from it because of an earlier round" in page
    assert not Participant.objects.filter(study=new, prolific_pid="BAD").exists()
    event = EntryEvent.objects.get(study=new)
    assert event.kind == "excluded" and "BAD" in event.detail and "round 1" in event.detail
    assert enter(client, new, "GOOD").status_code == 302  # carried over: let in


def test_a_participant_in_the_exclusion_group_is_refused(client):
    study = paid_study(first=0, second=0)
    StudyPay.objects.create(study=study, exclusion_group_id="EXCL")
    other = paid_study(first=0, second=0)
    ProlificCall.objects.create(
        study=other, action="group_add", target="EXCL", ok=True, participant_ids=["P_OUT"]
    )
    ProlificCall.objects.create(  # a failed call excludes nobody
        study=other, action="group_add", target="EXCL", ok=False, participant_ids=["P_TRY"]
    )
    assert enter(client, study, "P_OUT").status_code == 403
    assert EntryEvent.objects.filter(study=study, kind="excluded").count() == 1
    assert enter(client, study, "P_TRY").status_code == 302


# --- the console ---------------------------------------------------------------------------------


def test_console_registers_pay_rounds_and_a_read_only_call_log(client, make_user):
    study = paid_study(first=0, second=0)
    StudyPay.objects.create(study=study, exclusion_group_id="EXCL")
    new = _round(study)
    call = ProlificCall.objects.create(study=study, action="list", target="S1", ok=True)
    client.force_login(make_user("console-admin", role="admin"))
    for model, obj in (
        ("studypay", study.pay),
        ("studyround", new.round_info),
        ("prolificcall", call),
    ):
        assert client.get(reverse(f"admin:annotation_{model}_changelist")).status_code == 200
        r = client.get(reverse(f"admin:annotation_{model}_change", args=[obj.pk]))
        assert r.status_code == 200, model
    assert client.get(reverse("admin:annotation_prolificcall_add")).status_code == 403
    r = client.post(
        reverse("admin:annotation_prolificcall_change", args=[call.pk]),
        {"action": "approve", "target": "changed"},
    )
    assert r.status_code == 403
    call.refresh_from_db()
    assert (call.action, call.target) == ("list", "S1")
    assert (
        client.post(
            reverse("admin:annotation_prolificcall_delete", args=[call.pk]), {"post": "yes"}
        ).status_code
        == 403
    )
    assert ProlificCall.objects.filter(pk=call.pk).exists()


def test_console_seed_change_reorders_the_seeded_order(client, make_user):
    study = paid_study(first=0, second=0, sampling="seeded", sampling_seed=1)
    ranks = dict(study.items.values_list("pk", "sample_rank"))
    from annotation.services.assignment import study_sample_ranks_refresh

    study.sampling_seed = 2
    study.save(update_fields=["sampling_seed"])
    assert study_sample_ranks_refresh(study=study) > 0
    new = dict(StudyItem.objects.filter(study=study).values_list("pk", "sample_rank"))
    assert new != ranks
    assert all(
        new[i.pk] == rules.seeded_rank(seed=2, key=i.generation_id) for i in study.items.all()
    )
    assert Annotation.objects.count() == 0
