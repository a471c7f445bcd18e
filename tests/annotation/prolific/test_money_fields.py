"""Money on the paid-study pages, against the local Prolific server: the reward is typed in the
study's currency with two decimals (never prefilled 0), an ambiguous amount is refused at its
field before any call, the reward reaches Prolific as minor units, publishing shows the cost
(rewards, Prolific's fee at the configured rate, bonuses paid so far), and the exclusion and
bonus steps check their input before asking "Yes"."""

from __future__ import annotations

import html
import re
from decimal import Decimal

import pytest
from django.urls import reverse

from annotation.models import ProlificCall, ProlificStudy, StudyPay
from annotation.services import prolific as ps
from tests.annotation.factories import make_study

pytestmark = pytest.mark.django_db


def text(response) -> str:
    return html.unescape(response.content.decode())


def url(study, name):
    return reverse(f"annotation:{name}", args=[study.pk])


def create_form(**changes):
    return {
        "name": "Beans",
        "description": "Label beans.",
        "reward": "1.50",
        "minutes": "5",
        "places": "4",
        "devices": ["desktop"],
        **changes,
    }


@pytest.fixture
def unpriced(db):
    study = make_study(n_items=4, overlap=2, items_per_participant=2)
    StudyPay.objects.create(study=study, estimated_minutes=5)  # no reward set yet
    return study


def test_the_reward_box_is_empty_and_says_its_rule(unpriced, client, admin):
    client.force_login(admin)
    page = text(client.get(url(unpriced, "prolific_study")))
    box = re.search(r'<input name="reward"[^>]*id="create-reward"[^>]*>', page).group(0)
    assert 'value=""' in box  # never a prefilled 0
    assert "Reward per place (GBP)" in page
    assert "In GBP with exactly two decimals: 1.50 is one GBP and 50 pence" in page


def test_150_is_refused_at_the_field_and_nothing_is_sent(unpriced, client, admin, prolific_server):
    client.force_login(admin)
    r = client.post(url(unpriced, "prolific_create"), create_form(reward="150"))
    page = text(r)
    assert r.status_code == 400
    error = re.search(r'id="create-reward-error">([^<]*)<', page).group(1)
    assert error == (
        "150 has no decimals, so it could be read two ways: write 150.00 for 150 GBP, "
        "or 1.50 for 150 pence."
    )
    assert 'value="150"' in page  # what was typed is kept
    assert not prolific_server.calls("POST") and not ProlificStudy.objects.exists()


def test_a_reward_in_pounds_reaches_prolific_in_pence(unpriced, client, admin, prolific_server):
    client.force_login(admin)
    r = client.post(url(unpriced, "prolific_create"), create_form(reward="1.50"))
    assert r.status_code == 302
    state = ProlificStudy.objects.get()
    assert prolific_server.studies[state.prolific_id]["reward"] == 150
    call = ProlificCall.objects.get(action="study_create")
    assert "reward=1.50 GBP" in call.request_summary


def test_publishing_shows_the_cost_first(unpriced, client, admin, prolific_server, settings):
    settings.PROLIFIC_FEE_RATE = "0.25"
    client.force_login(admin)
    client.post(url(unpriced, "prolific_create"), create_form(reward="1.50", places="4"))
    ProlificCall.objects.create(  # bonuses paid earlier for this study
        study=unpriced, action="bonus_pay", ok=True, status=200, amount=Decimal("2.00")
    )
    page = text(client.get(url(unpriced, "prolific_study")))
    assert "Rewards: 4 places × 1.50 GBP = 6.00 GBP." in page  # before the button, too
    confirm = text(client.post(url(unpriced, "prolific_publish"), {"pilot_places": "0"}))
    for line in (
        "Rewards: 4 places × 1.50 GBP = 6.00 GBP.",
        "Bonuses paid so far: 2.00 GBP.",
        "Prolific's fee (25% of rewards and bonuses, PROLIFIC_FEE_RATE): 2.00 GBP.",
        "At most 10.00 GBP in all.",
    ):
        assert line in confirm, line
    assert "PUBLISH" not in str(prolific_server.calls("POST"))


def test_the_pilot_reward_is_refused_at_its_field(unpriced, client, admin, prolific_server):
    client.force_login(admin)
    client.post(url(unpriced, "prolific_create"), create_form(places="4"))
    client.post(url(unpriced, "prolific_publish"), {"pilot_places": "1", "confirm": "1"})
    r = client.post(url(unpriced, "prolific_pilot"), {"minutes": "6", "reward": "2", "places": "2"})
    page = text(r)
    assert r.status_code == 400 and "Confirm:" not in page
    error = re.search(r'id="pilot-reward-error">([^<]*)<', page).group(1)
    assert "write 2.00 for 2 GBP, or 0.02 for 2 pence" in error
    assert re.search(r'<input name="reward" value="2"', page)


def test_the_exclusion_refuses_an_empty_group_before_yes(
    paid_study, client, admin, prolific_server
):
    StudyPay.objects.create(study=paid_study, exclusion_group_id="")
    client.force_login(admin)
    r = client.post(url(paid_study, "prolific_exclude"), {"participants": "P_C", "group_id": " "})
    page = text(r)
    assert r.status_code == 400 and "Yes, add to the group" not in page
    assert 'id="exclude-group-error">Give the Prolific participant group id (it is empty).' in page
    assert "P_C" in page  # the ids typed are kept
    assert not prolific_server.calls("POST")


def test_a_bonus_line_without_decimals_is_refused_at_the_box(
    paid_study, client, admin, prolific_server
):
    client.force_login(admin)
    r = client.post(url(paid_study, "prolific_bonuses"), {"bonuses": "P_A,1.10\nP_B,2"})
    page = text(r)
    assert r.status_code == 400 and "Yes, pay" not in page
    assert (
        'id="bonus-csv-error">bonus CSV line 2: 2 has no decimals, so it could be read two ways'
        in page
    )
    assert not prolific_server.calls("POST")


def test_bonuses_paid_are_logged_with_their_amount(paid_study, prolific_server, admin):
    preview = ps.bonus_preview(csv_text="P_A,1.25\nP_B,0.50")
    ps.bonus_submit(
        study=paid_study, user=admin, csv_text="P_A,1.25\nP_B,0.50", digest=preview.digest
    )
    paid = ProlificCall.objects.get(action="bonus_pay")
    assert paid.ok and paid.amount == Decimal("1.75")


def test_the_consoles_pay_terms_follow_the_same_amount_rule(unpriced, client, make_user):
    client.force_login(make_user("console-admin", role="admin", staff=True))
    terms = StudyPay.objects.get(study=unpriced)
    change = reverse("admin:annotation_studypay_change", args=[terms.pk])
    form = {
        "study": unpriced.pk,
        "currency": "GBP",
        "reward": "150",
        "estimated_minutes": "5",
        "bonus_per_item": "0.10",
        "bonus_per_known_correct": "0.00",
        "exclusion_group_id": "",
    }
    page = text(client.post(change, form))
    assert "150 has no decimals, so it could be read two ways" in page
    terms.refresh_from_db()
    assert terms.reward == 0
    assert client.post(change, {**form, "reward": "1.50"}).status_code == 302
    terms.refresh_from_db()
    assert terms.reward == Decimal("1.50")


def test_adding_places_after_the_pilot_costs_the_confirmed_reward(
    unpriced, client, admin, prolific_server
):
    client.force_login(admin)
    client.post(url(unpriced, "prolific_create"), create_form(reward="1.50", places="4"))
    client.post(url(unpriced, "prolific_publish"), {"pilot_places": "1", "confirm": "1"})
    pilot = {"minutes": "6", "reward": "2.00", "places": "2", "confirm": "1"}
    assert client.post(url(unpriced, "prolific_pilot"), pilot).status_code == 302
    state = ProlificStudy.objects.get()
    assert prolific_server.studies[state.prolific_id]["reward"] == 200
    confirm = text(client.post(url(unpriced, "prolific_places"), {"places": "3"}))
    assert "Rewards: 3 places × 2.00 GBP = 6.00 GBP." in confirm
