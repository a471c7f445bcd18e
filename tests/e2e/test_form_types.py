"""One study of each form type completed by a participant in a real browser (rating scale,
CustomPlans, pairwise preference, solve mode; the critical-failure form has its own test,
test_annotation_flow.py), then its agreement report showing that form type's statistics."""

from __future__ import annotations

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from annotation.labels import parse_form
from annotation.models import Annotation
from annotation.selectors.forms import item_view, study_form
from annotation.services import study as study_services
from annotation.services.assignment import participant_current_assignment
from annotation.services.form_items import study_form_items_add
from annotation.services.submission import annotation_submit
from benchmarks.models import Generation, Generator
from tests.annotation.factories import make_generations, working_participant
from tests.annotation.form_types import packs  # noqa: F401  (registers test-exact)

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def form_study(form_type, config, specs):
    study = study_services.study_create(
        name=f"{form_type} in the browser",
        generation_ids=[],
        form_type=form_type,
        form_config=config,
        min_seconds_per_item=0,
        items_per_participant=1,
        attention_rate=0,
        prolific_study_id="S1",
    )
    study_form_items_add(study=study, items=specs)
    return study


def others_answer(study, answers):
    """Two more participants answer through the services, so agreement has pairs."""
    for pid, data in answers:
        p = working_participant(study, pid)
        a = participant_current_assignment(participant=p)
        form = study_form(study=study)
        view = item_view(item=a.item, participant_id=p.pk, form=form)
        annotation_submit(
            assignment=a, label=parse_form({"goal_ack": ["1"], **data}, form=form, item=view)
        )


def enter(page, live_server, study, pid):
    page.route("https://app.prolific.com/**", lambda r: r.fulfill(status=200, body="<h1>P</h1>"))
    page.route("https://images.google.com/**", lambda route: route.abort())
    page.goto(
        f"{live_server.url}/study/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=S1&SESSION_ID=s1"
    )
    page.get_by_role("button", name="I agree, start the study").click()
    page.get_by_role("button", name="I understand — start the study").click()
    page.get_by_label("I've read the goal").check()


def submit_and_finish(page):
    expect(page.locator("#submit-btn")).to_be_enabled(timeout=10_000)
    page.get_by_role("button", name="Submit & Continue").click()
    page.get_by_text("All done").wait_for()


def report_rows(page, live_server, study, make_user, login: bool):
    if login:
        make_user("resb", role="researcher", password="pw-Test-12345")
        page.goto(f"{live_server.url}/accounts/login/")
        page.fill("input[name=username]", "resb")
        page.fill("input[name=password]", "pw-Test-12345")
        page.locator("form").get_by_role("button").click()
        page.wait_for_load_state()
    page.goto(live_server.url + reverse("annotation:report", args=[study.pk]))
    expect(page.locator("#form-report")).to_have_attribute("data-form-type", study.form_type)
    rows = {}
    for tr in page.locator("#form-report tbody tr").all():
        rows.setdefault(tr.locator("th").inner_text(), tr.locator("td.value").inner_text())
    return rows


def test_every_form_type_in_the_browser(live_server, page, shots, make_user):
    # --- rating scale (SciRecipe's four 0–4 dimensions) --------------------------------------
    gens = make_generations(4)
    rating = form_study("rating", {"preset": "scirecipe"}, [{"generation_id": gens[0].pk}])
    others_answer(
        rating,
        [
            ("R2", {f"r-{d}": ["3"] for d in ("granularity", "order", "semantic", "overall")}),
            ("R3", {f"r-{d}": ["4"] for d in ("granularity", "order", "semantic", "overall")}),
        ],
    )
    enter(page, live_server, rating, "R1")
    expect(page.locator("#dim-granularity")).to_contain_text("Step granularity")
    for dim in ("granularity", "order", "semantic"):
        page.locator(f"#dim-{dim}").get_by_text("4", exact=True).click()
    page.get_by_role("button", name="Submit & Continue").click()  # one dimension left
    expect(page.locator("#submit-errors")).to_contain_text(
        "Overall (fluency and executability): choose a rating from 0 to 4."
    )
    # the refused page's scripts (autosave) are set up at its load, not when its errors show
    page.wait_for_load_state()
    page.locator("#dim-overall").get_by_text("3", exact=True).click()
    page.locator("#save-status").filter(has_text="Draft saved").wait_for()  # autosave
    page.on("dialog", lambda dialog: dialog.accept())
    page.wait_for_timeout(900)  # let the last (debounced) autosave land
    page.reload()  # the draft comes back from the server
    expect(page.locator("#dim-overall input[value='3']")).to_be_checked()
    expect(page.locator("#dim-granularity input[value='4']")).to_be_checked()
    page.screenshot(path=str(shots / "form-rating.png"), full_page=True)
    submit_and_finish(page)
    mine = Annotation.objects.get(participant__prolific_pid="R1")
    assert mine.label == {"ratings": {"granularity": 4, "order": 4, "semantic": 4, "overall": 3}}

    # --- CustomPlans: the hint shown, two questions, Yes or error types ----------------------
    cp = form_study(
        "customplans",
        {},
        [{"generation_id": gens[1].pk, "context": {"hint": "I only have a stovetop"}}],
    )
    others_answer(
        cp, [("C2", {"q1": ["yes"], "q2": ["yes"]}), ("C3", {"q1": ["yes"], "q2": ["missing"]})]
    )
    page.context.clear_cookies()
    enter(page, live_server, cp, "C1")
    expect(page.locator("#hint-text")).to_have_text("I only have a stovetop")
    page.locator("#q1-set").get_by_text("Yes, I can follow it exactly").click()
    page.locator("#q2-set").get_by_text("important step(s) is/are missing").click()
    page.locator("#q2-set").get_by_text("some step(s) is/are vague").click()
    page.screenshot(path=str(shots / "form-customplans.png"), full_page=True)
    submit_and_finish(page)
    assert Annotation.objects.get(participant__prolific_pid="C1").label["q2"] == [
        "missing",
        "vague",
    ]

    # --- pairwise: A / B, systems anonymised, order recorded ---------------------------------
    other = Generator.objects.create(name="secret-system-b", model="m-b")
    second = Generation.objects.create(
        procedure=gens[2].procedure, generator=other, predicted_steps=["Only B does this."]
    )
    pw = form_study("pairwise", {}, [{"generation_id": gens[2].pk, "generation_b_id": second.pk}])
    others_answer(pw, [("W2", {"pref": ["tie"]}), ("W3", {"pref": ["A"]})])
    page.context.clear_cookies()
    enter(page, live_server, pw, "W1")
    expect(page.locator("#side-A")).to_be_visible()
    assert "secret-system-b" not in page.content() and gens[2].generator.name not in page.content()
    b_first = "Only B does this." in page.locator("#side-A").inner_text()
    page.get_by_text("A is better").click()
    submit_and_finish(page)
    label = Annotation.objects.get(participant__prolific_pid="W1").label
    assert label["order"] == ("ba" if b_first else "ab")
    assert label["preferred"] == ("second" if b_first else "first")

    # --- solve: the participant answers, the scorer pack scores it ---------------------------
    solve = form_study(
        "solve",
        {"pack": "test-exact", "instructions": "Give just the number."},
        [
            {
                "generation_id": gens[3].pk,
                "context": {"prompt": "What is 6 × 7?", "record": {"id": "q", "target": 42}},
            }
        ],
    )
    page.context.clear_cookies()
    enter(page, live_server, solve, "S1")
    expect(page.locator("#prompt-text")).to_have_text("What is 6 × 7?")
    page.locator("#answer").fill("42")
    page.screenshot(path=str(shots / "form-solve.png"), full_page=True)
    submit_and_finish(page)
    solved = Annotation.objects.get(participant__prolific_pid="S1").label
    assert solved["metrics"] == {"correct": 1} and solved["answer"] == "42"

    # --- each agreement report shows its form type's statistics ------------------------------
    page.context.clear_cookies()
    rows = report_rows(page, live_server, rating, make_user, login=True)
    assert {"Krippendorff α (ordinal)", "Krippendorff α (interval)"} <= set(rows)
    assert "Weighted κ (quadratic, mean over pairs)" in rows
    page.screenshot(path=str(shots / "form-rating-report.png"), full_page=True)
    rows = report_rows(page, live_server, cp, make_user, login=False)
    assert "α error type “missing” (nominal)" in rows and "α Yes vs No (nominal)" in rows
    # Q1: 3 × Yes → executable; Q2: 1 of 3 Yes → not customized → not fully correct
    assert rows["Executable (majority)"] == "100.0%"
    assert rows["Fully Correct (majority)"] == "0.0%"
    rows = report_rows(page, live_server, pw, make_user, login=False)
    assert "Pairwise percent agreement" in rows and "Krippendorff α (nominal)" in rows
    rows = report_rows(page, live_server, solve, make_user, login=False)
    assert rows["Human correct (mean)"] == "1.000"
