"""In a real browser, against the local Prolific server: an admin approves two submissions,
pays a previewed bonus, rejects one submission and excludes its participant."""

from __future__ import annotations

import pytest

from annotation.models import ProlificCall

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]
REASON = (
    "You failed both attention checks and your labels contradict the codebook on most items, "
    "so this submission cannot be accepted."
)


def test_admin_runs_the_paid_study_operations(
    live_server, page, shots, make_user, paid_study, prolific_server
):
    prolific_server.groups["EXCL"] = []
    make_user("browser-admin", role="admin", password="pw-Test-12345")
    page.goto(f"{live_server.url}/accounts/login/?next=/study/manage/{paid_study.pk}/")
    page.fill("input[name=username]", "browser-admin")
    page.fill("input[name=password]", "pw-Test-12345")
    page.locator("form").get_by_role("button").click()
    page.locator("#prolific-link").click()
    assert not ProlificCall.objects.exists()  # opening the page asks Prolific nothing
    page.locator("#list-submissions").click()
    page.locator("#submissions").wait_for()
    assert page.locator("#submissions tbody tr").count() == 4  # two pages from Prolific

    page.get_by_label("choose P_A").check()
    page.get_by_label("choose P_B").check()
    page.locator("#submissions-next").click()
    page.get_by_text("Confirm: approve 2 submissions").wait_for()
    page.locator("#confirm").click()
    page.get_by_text("Approve: 2 done.").wait_for()

    page.fill("#bonus-csv", "P_A,1.00\nP_B,0.55")
    page.locator("#bonus-preview").click()
    assert page.locator("#bonus-total").inner_text() == "1.55"
    assert prolific_server.bulk == {}  # a preview pays nothing
    page.locator("#confirm").click()
    page.get_by_text("Bonuses paid: 2 participants, total 1.55").wait_for()
    page.locator("#list-submissions").click()

    page.get_by_label("choose P_C").check()
    page.get_by_role("radio", name="Reject").check()
    page.select_option("select[name=rejection_category]", "FAILED_CHECK")
    page.fill("textarea[name=message]", REASON)
    page.locator("#submissions-next").click()
    page.get_by_text("Failed attention or comprehension checks").wait_for()
    page.locator("#confirm").click()
    page.get_by_text("Reject: 1 done.").wait_for()

    page.fill("#exclude-ids", "P_C")
    page.fill("input[name=group_id]", "EXCL")
    page.locator("#exclude-next").click()
    page.locator("#confirm").click()
    page.get_by_text("1 participant added to group EXCL.").wait_for()
    page.screenshot(path=str(shots / "prolific-operations.png"), full_page=True)

    status = {s["participant_id"]: s["status"] for s in prolific_server.submissions.values()}
    assert status == {
        "P_A": "APPROVED",
        "P_B": "APPROVED",
        "P_C": "REJECTED",
        "P_X": "AWAITING REVIEW",
    }
    (bulk,) = prolific_server.bulk.values()
    assert bulk == {"rows": [("P_A", "1.00"), ("P_B", "0.55")], "paid": 1}
    assert prolific_server.groups["EXCL"] == ["P_C"]
    assert set(
        ProlificCall.objects.filter(user__username="browser-admin").values_list("action", flat=True)
    ) == {"list", "approve", "bonus_create", "bonus_pay", "reject", "group_add"}
