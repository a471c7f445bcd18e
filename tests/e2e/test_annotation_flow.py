"""A whole Prolific session in a real browser: entry, consent, codebook, qualification, items
(linking failures to steps), an early-submit refusal, and the completion redirect to Prolific."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from annotation.models import Annotation, AttentionCheckResult, Participant, Study
from annotation.services import study as study_services
from benchmarks.models import Dataset, Generation, Generator, Procedure

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

COCONUT_L1 = [
    "Place a spoonful of coconut oil in your mouth.",
    "Swish the oil around your mouth for 10-20 minutes without swallowing it.",
    "Spit the oil into the trash to avoid clogging drains.",
    "Rinse your mouth thoroughly with water after spitting out the oil.",
]
COCONUT_L2 = [
    "Use a spoon to measure 1 tablespoon of coconut oil.",
    "Swish the coconut oil in your mouth for 10-20 minutes.",
    "Spit the coconut oil out in the sink and run hot water.",
    "Rinse your mouth with water.",
]


def build_study(min_seconds: int) -> Study:
    ds = Dataset.objects.create(name="e2e", version="v1")
    gen = Generator.objects.create(name="e2e-model")

    def g(i, goal, l1, l2):
        proc = Procedure.objects.create(
            dataset=ds,
            source_example_id=f"e2e-{i}",
            goal=goal,
            steps=l1,
            resources=["coconut oil", "spoon", "water"],
        )
        return Generation.objects.create(procedure=proc, generator=gen, predicted_steps=l2)

    goal = "To perform coconut oil pulling for improved oral health and whiter teeth using coconut oil."
    regular = [g(i, goal, COCONUT_L1, COCONUT_L2) for i in range(2)]
    training = g(
        10,
        "Brew pour-over coffee.",
        ["Boil water.", "Rinse the filter.", "Pour slowly."],
        ["Boil water.", "Pour slowly.", "Pour slowly again."],
    )
    qual = g(
        11,
        "Make a cup of tea with a tea bag.",
        ["Boil water.", "Steep the bag 3 minutes.", "Remove the bag."],
        ["Boil water.", "Steep the bag for 3 hours.", "Remove the bag."],
    )
    return study_services.study_create(
        name="Critical failures in how-to procedures",
        generation_ids=[x.pk for x in regular],
        known_items=[
            {
                "generation_id": training.pk,
                "kind": "training",
                "expected_has_failure": True,
                "explanation": "L2 step 3 repeats step 2: redundant repetition.",
            },
            {"generation_id": qual.pk, "kind": "qualification", "expected_has_failure": True},
        ],
        min_seconds_per_item=min_seconds,
        items_per_participant=2,
        attention_rate=0,
        prolific_study_id="PSTUDY1",
    )


def read_everything(page):
    page.get_by_label("I've read the goal").check()
    for box in page.locator(".step").all():
        box.click()
    assert page.locator("#read-count").inner_text().startswith(f"{page.locator('.step').count()}/")


# long enough that the early submit of item 1 (read every step, answer, comment) still comes
# before it on a loaded machine (with 4 s the full suite saw the early submit accepted)
MIN_SECONDS = 12
OPEN_TIMEOUT_MS = (MIN_SECONDS + 10) * 1000


def test_prolific_session_end_to_end(live_server, page, shots):
    study = build_study(min_seconds=MIN_SECONDS)
    page.route(
        "https://app.prolific.com/**",
        lambda route: route.fulfill(status=200, body="<h1>Prolific</h1>", content_type="text/html"),
    )
    page.route("https://images.google.com/**", lambda route: route.abort())
    entry = f"{live_server.url}/study/s/{study.slug}/?PROLIFIC_PID=5f0c0ffee&STUDY_ID=PSTUDY1&SESSION_ID=sess42"

    # Entry and consent
    page.goto(entry)
    page.get_by_role("button", name="I agree, start the study").click()
    # Codebook with the worked example
    page.get_by_role("heading", name="What counts as a critical failure").wait_for()
    page.get_by_text("Show the answer").click()
    assert "redundant repetition" in page.locator(".answer").inner_text()
    page.get_by_role("button", name=re.compile("qualification test")).click()

    # Qualification item (known answer: a failure at L2.2)
    page.get_by_text("This is a qualification item").wait_for()
    page.wait_for_load_state()  # its deferred scripts (steps, keys) set up before the first click
    read_everything(page)
    page.keyboard.press("f")  # keyboard shortcut picks "Critical failures identified"
    page.locator("#f-0-desc").fill("Steeping for 3 hours instead of 3 minutes ruins the tea.")
    page.locator(".failure").first.get_by_text("L2.2").click()
    expect(page.locator("#submit-btn")).to_be_enabled(timeout=OPEN_TIMEOUT_MS)  # no eval: CSP
    page.get_by_role("button", name="Submit & Continue").click()

    # Item 1: an early submit is refused by the server, with a message, and nothing is lost
    page.get_by_text("Item 1 of 2").wait_for()
    page.wait_for_load_state()  # the codebook button's handler set up (deferred script) first
    page.get_by_role("button", name="Review common types of critical failures").click()
    page.locator("#codebook-dialog").get_by_text(
        "Severe vagueness"
    ).wait_for()  # loaded by htmx on first open
    page.keyboard.press("Escape")
    assert "until submission becomes open" in page.locator("#timer").inner_text()
    assert page.locator("#submit-btn").is_disabled()
    read_everything(page)
    page.get_by_label(re.compile("No critical failures identified")).check()
    page.locator("#comments").fill("Looks fine to me.")
    page.evaluate("document.getElementById('item-form').submit()")  # bypass the disabled button
    page.locator("#submit-errors").wait_for()
    assert "Too early" in page.locator("#submit-errors").inner_text()
    assert page.locator("#comments").input_value() == "Looks fine to me."
    assert page.get_by_label(re.compile("No critical failures identified")).is_checked()
    assert page.locator("#read-count").inner_text().startswith("8/8")  # L1 + L2
    assert Annotation.objects.filter(item__kind="regular").count() == 0
    page.screenshot(path=str(shots / "item-early-refusal.png"), full_page=False)
    expect(page.locator("#submit-btn")).to_be_enabled(timeout=OPEN_TIMEOUT_MS)  # no eval: CSP
    page.get_by_role("button", name="Submit & Continue").click()

    # Item 2: two failures, each linked to steps (Figures 10-11)
    page.get_by_text("Item 2 of 2").wait_for()
    page.wait_for_load_state()  # its scripts (autosave) set up before the first change
    page.screenshot(path=str(shots / "item-fresh.png"), full_page=True)
    read_everything(page)
    page.locator("input[name=choice][value=failure]").check()
    page.locator("#f-0-desc").fill("L2 spits the oil into the sink; L1 warns that it clogs drains.")
    first = page.locator(".failure").nth(0)
    first.get_by_text("L1.3").click()
    first.get_by_text("L2.3").click()
    page.get_by_role("button", name="+ Add failure").click()
    page.locator("#f-1-desc").fill("Running hot water does not prevent the clog.")
    page.locator(".failure").nth(1).get_by_text("L2.3").click()
    page.locator("#save-status").filter(has_text="Draft saved").wait_for()
    # A refresh (or a dropped tab) loses nothing: the autosaved draft comes back from the server
    page.on("dialog", lambda dialog: dialog.accept())
    page.wait_for_timeout(900)  # let the last autosave (debounced) land
    page.reload()
    assert page.locator("#f-1-desc").input_value() == "Running hot water does not prevent the clog."
    assert page.locator("#read-count").inner_text().startswith("8/8")  # L1 + L2
    assert page.locator(".failure").nth(0).locator("input[value='3'][name='f-0-l1']").is_checked()
    page.screenshot(path=str(shots / "item-failures.png"), full_page=True)
    page.screenshot(path=str(shots / "item-failures-viewport.png"), full_page=False)
    no_hscroll = page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert no_hscroll, "the item page scrolls horizontally on a laptop screen"
    expect(page.locator("#submit-btn")).to_be_enabled(timeout=OPEN_TIMEOUT_MS)  # no eval: CSP
    page.get_by_role("button", name="Submit & Continue").click()

    # Completion page with the code, then Prolific's completion URL
    page.get_by_text("All done").wait_for()
    assert page.locator("#completion-code").inner_text() == study.completion_code
    page.screenshot(path=str(shots / "done.png"))
    page.wait_for_url(
        f"https://app.prolific.com/submissions/complete?cc={study.completion_code}", timeout=15_000
    )

    p = Participant.objects.get(prolific_pid="5f0c0ffee")
    assert p.stage == "done" and p.qualification_score == 1.0
    labels = list(Annotation.objects.filter(item__kind="regular").order_by("submitted_at"))
    assert [a.has_failure for a in labels] == [False, True]
    assert labels[0].comments == "Looks fine to me." and labels[0].wall_ms >= MIN_SECONDS * 1000
    for label in labels:  # idle-aware active time measured in the page, clamped by the server
        assert 0 < label.active_ms <= label.wall_ms
    assert labels[1].failures == [
        {
            "description": "L2 spits the oil into the sink; L1 warns that it clogs drains.",
            "l1_steps": [3],
            "l2_steps": [3],
        },
        {
            "description": "Running hot water does not prevent the clog.",
            "l1_steps": [],
            "l2_steps": [3],
        },
    ]
    assert AttentionCheckResult.objects.filter(kind="qualification", passed=True).count() == 1
