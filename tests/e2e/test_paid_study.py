"""Running a paid study end to end in a real browser, against the local Prolific server: an admin
creates the study (balanced sampling, silent gold) and sets its pay terms; a participant fails
the comprehension check once, sees the training again, passes the second try and works through
items with a silent gold item among them; the admin approves the submission, pays the rule
bonus, rejects another participant and adds them to the exclusion group; the quality page
shows the hand-computed figures; the next round refuses the excluded participant at the door."""

from __future__ import annotations

import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from annotation.models import (
    Annotation,
    EntryEvent,
    Participant,
    ProlificCall,
    Study,
    StudyPay,
)
from annotation.services import study as study_services
from tests.annotation.factories import make_generations
from tests.support.prolific_server import ProlificTestServer

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
PASSWORD = "pw-Test-12345"
REASON = (
    "You failed the comprehension check twice and your labels contradict the codebook on most "
    "items, so this submission cannot be accepted."
)


@pytest.fixture
def prolific_server(settings, monkeypatch):
    with ProlificTestServer(token="tok-e2e", page_size=2) as server:
        settings.PROLIFIC_API_BASE_URL = server.base_url
        monkeypatch.setenv("PROLIFIC_API_TOKEN", "tok-e2e")
        yield server


def login(page, live_server, username, next_url):
    page.goto(f"{live_server.url}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.locator("form").get_by_role("button").click()


def add_known_items(study: Study) -> dict:
    """What the researcher adds in the console (Study → items): a training example, one
    qualification item per attempt and one silent gold item, all on other procedures."""
    train, qual1, qual2, gold = make_generations(4, prefix="known")
    spec = [
        (train, "training", True, 1, "L2 step 2 contradicts the goal."),
        (qual1, "qualification", True, 1, "L2 step 2 contradicts the goal: a critical failure."),
        (qual2, "qualification", False, 2, ""),
        (gold, "gold", True, 1, ""),
    ]
    items = {}
    for gen, kind, expected, attempt, explanation in spec:
        (items[f"{kind}{attempt}"],) = study_services.study_items_add(
            study=study,
            generation_ids=[gen.pk],
            kind=kind,
            expected_has_failure=expected,
            explanation=explanation,
            attempt=attempt,
        )
    return items


def read_everything(page):
    page.get_by_label("I've read the goal").check()
    for box in page.locator(".step").all():
        box.click()


def answer_none(page):
    read_everything(page)
    page.get_by_label(re.compile("No critical failures identified")).check()
    expect(page.locator("#submit-btn")).to_be_enabled(timeout=10_000)
    page.get_by_role("button", name="Submit & Continue").click()


def test_paid_study_end_to_end(live_server, page, shots, make_user, prolific_server):
    gens = make_generations(4, prefix="regular")
    make_user("paid-admin", role="admin", password=PASSWORD)
    prolific_server.add_study("PS1")
    prolific_server.groups["EXCL"] = []  # the exclusion group, made on Prolific
    page.route(
        "https://app.prolific.com/**",
        lambda route: route.fulfill(status=200, body="<h1>Prolific</h1>", content_type="text/html"),
    )
    page.route("https://images.google.com/**", lambda route: route.abort())

    # 1. The researcher creates the study in the browser
    login(page, live_server, "paid-admin", "/study/manage/new/")
    page.get_by_role("heading", name="New annotation study").wait_for()
    page.fill("input[name=name]", "Paid study")
    page.fill("input[name=prolific_study_id]", "PS1")
    page.select_option("select[name=dataset]", str(gens[0].procedure.dataset_id))
    page.select_option("select[name=generator]", str(gens[0].generator_id))
    page.fill("input[name=limit]", "4")
    page.fill("input[name=overlap]", "1")
    page.fill("input[name=items_per_participant]", "4")
    page.fill("input[name=min_seconds_per_item]", "0")
    page.fill("input[name=attention_rate]", "0")
    page.fill("input[name=qualification_pass_threshold]", "1")
    page.select_option("select[name=sampling]", "by_generator")
    page.fill("input[name=gold_rate]", "0.5")
    page.get_by_role("button", name="Create study").click()
    page.get_by_text("created with 4 items").wait_for()
    study = Study.objects.get(name="Paid study")
    assert (study.sampling, study.gold_rate, study.prolific_study_id) == (
        "by_generator",
        0.5,
        "PS1",
    )
    add_known_items(study)
    # its pay terms: 0.10 per item, the exclusion group
    page.locator("#prolific-link").click()
    page.get_by_role("link", name="Pay").click()
    page.fill("input[name=reward]", "2.00")
    page.fill("input[name=estimated_minutes]", "15")
    page.fill("input[name=bonus_per_item]", "0.10")
    page.fill("input[name=exclusion_group_id]", "EXCL")
    page.locator("#pay-terms").get_by_role("button", name="Save").click()
    page.get_by_text("Pay terms saved.").wait_for()
    assert StudyPay.objects.get(study=study).bonus_per_item == Decimal("0.10")

    # 2. A participant: comprehension failed once, the training again, passed on the second try
    entry = f"{live_server.url}/study/s/{study.slug}/?PROLIFIC_PID=P_A&STUDY_ID=PS1&SESSION_ID=s1"
    page.goto(entry)
    page.get_by_role("button", name="I agree, start the study").click()
    page.get_by_role("button", name=re.compile("start the short qualification test")).click()
    page.get_by_text("This is a qualification item").wait_for()
    answer_none(page)  # expected: a critical failure
    page.locator("#retry-notice").wait_for()
    assert "One more try" in page.locator("#retry-notice").inner_text()
    assert "a critical failure" in page.locator(".missed-item").inner_text()
    page.screenshot(path=str(shots / "comprehension-retry.png"), full_page=True)
    page.get_by_role("button", name=re.compile("take the second qualification test")).click()
    page.get_by_text("This is a qualification item").wait_for()
    answer_none(page)  # expected: none
    # items, one of them silent gold, all alike: "Item n of 5"
    kinds = []
    for n in range(1, 6):
        page.get_by_text(f"Item {n} of 5").wait_for()
        assert page.get_by_text("qualification item").count() == 0
        kinds.append(
            Participant.objects.get(prolific_pid="P_A").assignments.get(state="active").item.kind
        )
        answer_none(page)
    page.get_by_text("All done").wait_for()
    assert page.locator("#completion-code").inner_text() == study.completion_code
    assert kinds == ["regular", "regular", "gold", "regular", "regular"]
    p_a = Participant.objects.get(prolific_pid="P_A")
    assert (p_a.stage, p_a.qualification_attempt, p_a.attention_failures) == ("done", 2, 0)
    assert Annotation.objects.filter(participant=p_a).count() == 7  # 2 qualification + 5 items

    # 3. The admin: approve, bonus, reject, exclude against the local Prolific server
    subs = {pid: prolific_server.add_submission("PS1", pid) for pid in ("P_A", "P_B")}
    page.goto(f"{live_server.url}/study/manage/{study.pk}/prolific/")
    assert not ProlificCall.objects.filter(study=study).exists()  # a page view asks nothing
    page.locator("#list-submissions").click()
    page.locator("#submissions").wait_for()
    page.get_by_label("choose P_A").check()
    page.locator("#submissions-next").click()
    page.locator("#confirm").click()
    page.get_by_text("Approve: 1 done.").wait_for()
    assert page.locator("#bonus-csv").input_value() == "P_A,0.40"  # 4 items x 0.10
    page.locator("#bonus-preview").click()
    assert page.locator("#bonus-total").inner_text() == "0.40"
    page.locator("#confirm").click()
    page.get_by_text("Bonuses paid: 1 participant, total 0.40").wait_for()
    page.locator("#list-submissions").click()
    page.get_by_label("choose P_B").check()
    page.get_by_role("radio", name="Reject").check()
    page.select_option("select[name=rejection_category]", "FAILED_CHECK")
    page.fill("textarea[name=message]", REASON)
    page.locator("#submissions-next").click()
    page.locator("#confirm").click()
    page.get_by_text("Reject: 1 done.").wait_for()
    page.fill("#exclude-ids", "P_B")
    assert page.locator("input[name=group_id]").input_value() == "EXCL"
    page.locator("#exclude-next").click()
    page.locator("#confirm").click()
    page.get_by_text("1 participant added to group EXCL.").wait_for()
    page.screenshot(path=str(shots / "paid-study-prolific.png"), full_page=True)
    status = {s["participant_id"]: s["status"] for s in prolific_server.submissions.values()}
    assert status == {"P_A": "APPROVED", "P_B": "REJECTED"} and set(subs) == set(status)
    (bulk,) = prolific_server.bulk.values()
    assert bulk == {"rows": [("P_A", "0.40")], "paid": 1}
    assert prolific_server.groups["EXCL"] == ["P_B"]

    # 4. The quality page: figures by hand. P_A answered "none" everywhere: qualification 1
    # (expects a failure) wrong, qualification 2 (expects none) right, the gold item (expects a
    # failure) wrong: known items 1 of 3 = 0.333, silent gold 0 of 1 = 0.0; 4 regular items,
    # nobody else labelled them (no majority); no attention checks.
    page.get_by_role("link", name="Participant quality").click()
    row = page.locator("#quality tr[data-participant=P_A]")
    row.wait_for()  # the click navigates; read the row once the new page shows it
    cells = [c.strip() for c in row.locator("td").all_inner_texts()]
    assert cells[1] == "4"
    assert cells[3] == "0/0"
    assert cells[4].startswith("—")
    assert cells[5] == "0.333 (3)"
    assert cells[6] == "0.0 (1)"
    page.screenshot(path=str(shots / "paid-study-quality.png"), full_page=True)

    # 5. The next round keeps the exclusion group: the rejected participant is refused there
    page.get_by_role("link", name="Rounds").click()
    page.locator("#new-round").click()
    page.get_by_text("created: set its Prolific study id").wait_for()
    new = Study.objects.exclude(pk=study.pk).get()
    assert new.sampling == "by_generator" and new.gold_rate == 0.5
    assert new.items.filter(kind="qualification", attempt=2).count() == 1
    page.goto(f"{live_server.url}/study/s/{new.slug}/?PROLIFIC_PID=P_B&STUDY_ID=X&SESSION_ID=s2")
    expect(page.get_by_role("heading", name="You cannot take part in this study")).to_be_visible()
    page.screenshot(path=str(shots / "entry-excluded.png"))
    event = EntryEvent.objects.get(study=new)
    assert event.kind == "excluded" and "EXCL" in event.detail
    assert not Participant.objects.filter(study=new).exists()
