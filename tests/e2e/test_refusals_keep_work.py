"""Refusals keep the work, in a real browser: a refused draft is shown at its field and kept (never
"Offline", never lost); a control character on a researcher's form is an error at the field with
the typed text kept; a failure adjudicated without a description or step is refused at the
field; long unbroken text wraps; one account is one participant whichever link it follows."""

from __future__ import annotations

import json
import re

import pytest
from django.urls import reverse

from annotation.models import Adjudication, Draft, Participant, Study
from demo.management.commands.load_demo import DEMO_STUDY
from mining.models import MiningBatch
from tests.annotation.factories import NO, label_study, make_generations, make_study
from tests.mining.factories import doc

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

PASSWORD = "pw-Test-12345"


def login(page, base, make_user, username, role, next_url="/"):
    make_user(username, role=role, password=PASSWORD)
    page.goto(f"{base}/accounts/login/?next={next_url}")
    page.fill("input[name=username]", username)
    page.fill("input[name=password]", PASSWORD)
    page.locator("main form").get_by_role("button").click()
    page.wait_for_load_state()


def to_item_page(page, base, study, pid="PID-E2E"):
    page.goto(f"{base}/study/s/{study.slug}/?PROLIFIC_PID={pid}&STUDY_ID=S1&SESSION_ID=X1")
    page.get_by_role("button", name=re.compile("I agree")).click()
    page.get_by_role("button", name=re.compile("I understand")).click()
    page.wait_for_selector("#item-form")


def local_drafts(page) -> dict:
    return page.evaluate(
        "() => Object.fromEntries(Object.keys(localStorage)"
        ".filter(k => k.startsWith('h2r-draft:')).map(k => [k, localStorage.getItem(k)]))"
    )


def test_a_refused_draft_is_shown_at_the_field_and_kept_until_accepted(live_server, page, shots):
    """Issue item 1: a NUL in a failure description got a 422, the page said "Offline" and
    everything after the last good draft was lost on reopening."""
    base = live_server.url
    study = make_study(n_items=2)
    to_item_page(page, base, study)
    page.locator("input[name=choice][value=failure]").check()
    description = page.locator("#f-0-desc")
    description.fill("L2 skips the soaking\x00 and the beans stay hard")
    error = page.locator("#f-0-desc-error")
    error.wait_for()
    assert "U+0000 NUL" in error.inner_text() and "Failure 1 description" in error.inner_text()
    assert description.get_attribute("aria-invalid") == "true"
    status = page.locator("#save-status").inner_text()
    assert "Draft not saved" in status and "Offline" not in status
    assert description.input_value().endswith("and the beans stay hard")  # still in the field
    kept = local_drafts(page)
    assert len(kept) == 1 and "the beans stay hard" in next(iter(kept.values()))
    assert not Draft.objects.filter(data__icontains="beans").exists()  # refused: not saved
    page.screenshot(path=str(shots / "draft-refused-at-field.png"), full_page=True)

    # reopening the item (a new tab) brings back what the server refused, from this browser
    again = page.context.new_page()
    again.goto(f"{base}/study/s/{study.slug}/item/")
    again.wait_for_selector("#item-form")
    restored = again.locator("#f-0-desc")
    assert restored.input_value().endswith("and the beans stay hard")
    assert again.locator("input[name=choice][value=failure]").is_checked()
    assert (
        "Restored" in again.locator("#save-status").inner_text()
        or again.locator("#f-0-desc-error").count()
    )
    # corrected, the draft is accepted: the error goes, and so does the local copy
    restored.fill("L2 skips the soaking and the beans stay hard")
    again.locator("#save-status").filter(has_text="Draft saved").wait_for()
    assert again.locator("#f-0-desc-error").count() == 0
    assert local_drafts(again) == {}
    draft = Draft.objects.get()
    assert (
        draft.data["failures"][0]["description"] == "L2 skips the soaking and the beans stay hard"
    )
    again.close()


def test_a_control_character_on_the_new_study_form_is_a_field_error(
    live_server, page, make_user, shots
):
    """Issue item 2: a NUL on the new-study form gave a bare 400 page and lost the form."""
    base = live_server.url
    make_generations(3)
    login(page, base, make_user, "e2e-researcher", "researcher", "/study/manage/new/")
    page.wait_for_selector("input[name=name]")
    page.fill("input[name=name]", "Soaking beans study")
    page.fill("textarea[name=description]", "Please read\x00 carefully")
    page.select_option("select[name=dataset]", index=1)
    page.select_option("select[name=generator]", index=1)
    page.get_by_role("button", name="Create study").click()
    page.wait_for_load_state()
    assert "This request was refused" not in page.content()
    field = page.locator(".field", has=page.locator("textarea[name=description]"))
    assert "U+0000 NUL" in field.inner_text()  # the reason, at the field
    assert page.input_value("input[name=name]") == "Soaking beans study"  # the form is kept
    assert page.input_value("textarea[name=description]").endswith("carefully")
    assert not Study.objects.exists()
    page.screenshot(path=str(shots / "study-form-control-character.png"), full_page=True)


def test_adjudicating_a_failure_needs_a_description_and_a_step(live_server, page, make_user):
    """Issue item 4: a "critical failure" without description or step was accepted."""
    base = live_server.url
    study = make_study(n_items=1, overlap=2, items_per_participant=1, attention_rate=0.0)
    label_study(study, {0: {"A": 2, "B": NO}}, ["A", "B"])
    item = study.items.get(kind="regular")
    url = reverse("annotation:adjudicate", args=[study.pk, item.pk])
    login(page, base, make_user, "e2e-adjudicator", "researcher", url)
    page.wait_for_selector("#note")
    page.get_by_label("Critical failure", exact=True).check()
    page.fill("#note", "typed note\x01 kept")
    page.get_by_role("button", name="Save and go to the next item").click()
    page.wait_for_selector("#failures-error")
    assert "add at least one failure" in page.locator("#failures-error").inner_text()
    assert "U+0001" in page.locator("#note-error").inner_text()
    assert page.input_value("#note").startswith("typed note")
    page.get_by_label("Failure 1 description").fill("Step 2 burns the sauce")
    page.fill("#note", "typed note kept")
    page.get_by_role("button", name="Save and go to the next item").click()
    page.wait_for_selector("#f-0-error")
    assert "Failure 1: link at least one L1 or L2 step." in page.locator("#f-0-error").inner_text()
    assert page.input_value("[name=f-0-desc]") == "Step 2 burns the sauce"
    assert not Adjudication.objects.exists()


def test_long_unbroken_text_wraps_instead_of_widening_the_page(live_server, page, make_user):
    """Issue item 3: a huge description made the progress page millions of pixels wide."""
    base = live_server.url
    study = make_study(n_items=1)
    Study.objects.filter(pk=study.pk).update(description="x" * 9_000, name="y" * 200)
    login(page, base, make_user, "e2e-reader", "researcher", f"/study/manage/{study.pk}/")
    page.wait_for_load_state()
    for path in (f"/study/manage/{study.pk}/", f"/study/s/{study.slug}/consent/", "/study/manage/"):
        page.goto(base + path)
        width = page.evaluate("() => document.documentElement.scrollWidth")
        assert width <= page.viewport_size["width"], (path, width)


def test_one_account_is_one_participant_from_either_link(live_server, page, make_user, shots):
    """Issue item 5: the home page's Join button and the account's study link made two
    participants of one account, and the home page showed no study link."""
    base = live_server.url
    study = make_study(n_items=3, entry="both", items_per_participant=2)
    Study.objects.filter(pk=study.pk).update(name=DEMO_STUDY)
    login(page, base, make_user, "e2e-annotator", "annotator")
    page.goto(base + "/")
    assert page.locator("#your-studies").get_by_role("link", name=DEMO_STUDY).count() == 1
    page.click("#try-link")
    assert not Participant.objects.exists()  # the link created nothing; the consent will
    page.get_by_role("button", name=re.compile("I agree")).click()
    page.get_by_role("button", name=re.compile("I understand")).click()
    page.wait_for_selector("#item-form")
    first = Participant.objects.get()
    assert first.user.username == "e2e-annotator" and not first.prolific_pid
    page.goto(base + "/")
    studies = page.locator("#your-studies")
    assert "labelling under way" in studies.inner_text()
    studies.get_by_role("link", name=DEMO_STUDY).click()
    page.wait_for_selector("#item-form")
    # an old visitor link (as the Join button used to give) continues as the account too
    page.goto(f"{base}/study/s/{study.slug}/?PROLIFIC_PID=visitor-abc&STUDY_ID=demo&SESSION_ID=s1")
    page.wait_for_selector("#item-form")
    assert Participant.objects.count() == 1
    page.screenshot(path=str(shots / "one-participant-per-account.png"), full_page=True)


def test_a_refused_mining_upload_keeps_the_chosen_file(
    live_server, page, make_user, settings, tmp_path, shots
):
    """Issue item 10: after a refused mining upload the file had to be chosen again; and the
    replay backend was not offered in the form."""
    settings.MEDIA_ROOT = tmp_path / "media"
    base = live_server.url
    corpus = tmp_path / "beans.jsonl"
    corpus.write_text("".join(json.dumps(doc(i)) + "\n" for i in range(2)), encoding="utf-8")
    login(page, base, make_user, "e2e-admin", "admin", "/mining/new/")
    page.wait_for_selector("input[name=file]")
    page.set_input_files("input[name=file]", str(corpus))
    page.fill("input[name=name]", "beans\x00 batch")
    page.select_option("select[name=backend]", "replay")
    page.fill("input[name=recording]", "demo/fixtures/mining/replies.jsonl")
    page.get_by_role("button", name="Start batch").click()
    page.wait_for_selector("#kept-file")
    assert "beans.jsonl" in page.locator("#kept-file").inner_text()
    name_field = page.locator(".field", has=page.locator("input[name=name]"))
    assert "U+0000 NUL" in name_field.inner_text()
    page.fill("input[name=name]", "beans batch")  # the file is not chosen again
    page.get_by_role("button", name="Start batch").click()
    page.wait_for_url(re.compile(r"/mining/batches/\d+/$"))
    batch = MiningBatch.objects.get()
    assert batch.name == "beans batch" and batch.source_name == "beans.jsonl"
    assert batch.backends["procedures"]["backend"] == "replay"
    page.screenshot(path=str(shots / "mining-kept-upload.png"), full_page=True)
