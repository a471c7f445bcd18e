"""Money in one unit in a real browser, against the local Prolific server: the reward box is
empty and says its rule, "150" is refused at the box with the text kept, "1.50" creates the
study at 150 pence, the Publish box and its confirmation show the cost, and an empty group id
is refused at its box before any "Yes"."""

from __future__ import annotations

import pytest

from annotation.models import ProlificStudy, StudyPay
from tests.annotation.factories import make_study

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_an_admin_types_the_reward_in_pounds_and_sees_the_cost(
    live_server, page, shots, make_user, prolific_server, settings
):
    settings.PROLIFIC_FEE_RATE = "0.25"
    study = make_study(n_items=4, overlap=2, items_per_participant=2)
    StudyPay.objects.create(study=study, estimated_minutes=5)
    make_user("money-admin", role="admin", password="pw-Test-12345")
    page.goto(f"{live_server.url}/accounts/login/?next=/study/manage/{study.pk}/prolific/study/")
    page.fill("input[name=username]", "money-admin")
    page.fill("input[name=password]", "pw-Test-12345")
    page.locator("form").get_by_role("button").click()

    reward = page.get_by_label("Reward per place (GBP)")
    assert reward.input_value() == ""  # never a prefilled 0
    assert "1.50 is one GBP and 50 pence" in page.locator("#create-reward-help").inner_text()
    reward.fill("150")
    page.locator("#create-prolific").click()
    error = page.locator("#create-reward-error")
    error.wait_for()
    assert "write 150.00 for 150 GBP, or 1.50 for 150 pence" in error.inner_text()
    assert page.get_by_label("Reward per place (GBP)").input_value() == "150"
    assert not prolific_server.calls("POST")
    page.screenshot(path=str(shots / "prolific-reward-ambiguous.png"), full_page=True)

    page.get_by_label("Reward per place (GBP)").fill("1.50")
    page.locator("#create-prolific").click()
    page.locator("#cost-preview").wait_for()
    state = ProlificStudy.objects.get()
    assert prolific_server.studies[state.prolific_id]["reward"] == 150
    assert "Rewards: 4 places × 1.50 GBP = 6.00 GBP." in page.locator("#cost-preview").inner_text()
    page.locator("#publish-next").click()
    lines = page.locator("#confirm-lines").inner_text()
    assert "Prolific's fee (25% of rewards and bonuses, PROLIFIC_FEE_RATE): 1.50 GBP." in lines
    assert "At most 7.50 GBP in all." in lines
    page.screenshot(path=str(shots / "prolific-publish-cost.png"), full_page=True)

    page.goto(f"{live_server.url}/study/manage/{study.pk}/prolific/")
    page.fill("#exclude-ids", "P_C")
    page.fill("#exclude-group", "")
    page.locator("#exclude-next").click()
    page.locator("#exclude-group-error").wait_for()
    assert (
        "Give the Prolific participant group id"
        in page.locator("#exclude-group-error").inner_text()
    )
    assert page.locator("#confirm").count() == 0 and page.input_value("#exclude-ids") == "P_C"
