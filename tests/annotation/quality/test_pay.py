"""Effective hourly pay and rule bonuses on the hand-computed fixture, and the pure rules.

Active seconds (regular + 10 s per known item): A 300+20=320, B 270+20=290, C 186, D 80+20=100.
Reward 0.80: A 0.80·3600/320 = 9.00, B 2880/290 = 9.931 → 9.93, C 2880/186 = 15.48, D 28.80.
Median active time (290+186)/2 = 238 s → 2880/238 = 12.10/h; estimate 5 min → 9.60/h.
Floor 10.00 → A and B below. Bonuses 0.05/item + 0.20/known right: A 0.30+0.40 = 0.70,
B 0.30+0.20 = 0.50, C 0.30, D 0.20.
"""

from __future__ import annotations

from decimal import Decimal

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse

from annotation import pay
from annotation.models import StudyPay
from annotation.selectors.quality import pay_rows, rule_bonus_csv
from annotation.services.pay import pay_terms_update

pytestmark = pytest.mark.django_db
D = Decimal


@pytest.fixture
def priced(quality_study, make_user, settings):
    settings.ANNOTATION_MIN_HOURLY_PAY = "10.00"
    admin = make_user("pay-admin", role="admin")
    pay_terms_update(
        study=quality_study,
        user=admin,
        reward=D("0.80"),
        estimated_minutes=5,
        bonus_per_item=D("0.05"),
        bonus_per_known_correct=D("0.20"),
    )
    quality_study.admin = admin
    return quality_study


def test_hourly_pay_and_bonuses(priced):
    out = pay_rows(study=priced)
    rows = {r["participant"]: r for r in out["rows"]}
    assert {p: r["hourly"] for p, r in rows.items()} == {
        "PID_A": D("9.00"),
        "PID_B": D("9.93"),
        "PID_C": D("15.48"),
        "PID_D": D("28.80"),
    }
    assert {p: r["bonus"] for p, r in rows.items()} == {
        "PID_A": D("0.70"),
        "PID_B": D("0.50"),
        "PID_C": D("0.30"),
        "PID_D": D("0.20"),
    }
    s = out["summary"]
    assert (s.median_seconds, s.median_hourly, s.estimated_hourly) == (238.0, D("12.10"), D("9.60"))
    assert s.below_floor == ["PID_A", "PID_B"]
    assert rule_bonus_csv(study=priced) == "PID_A,0.70\nPID_B,0.50\nPID_C,0.30\nPID_D,0.20"


def test_pay_page_warns_below_the_floor(priced, client, make_user):
    client.force_login(make_user("pay-reader", role="researcher"))
    page = client.get(reverse("annotation:pay", args=[priced.pk])).content.decode()
    assert "2 participants earned below 10.00/h: PID_A, PID_B." in page
    assert "12.10/h" in page and 'id="pay-terms"' not in page  # researchers read only


def test_only_admins_change_terms_and_bad_values_change_nothing(priced, client, make_user):
    url = reverse("annotation:pay", args=[priced.pk])
    client.force_login(make_user("pay-reader2", role="researcher"))
    assert client.post(url, {"reward": "5.00"}).status_code == 403
    with pytest.raises(PermissionDenied):
        pay_terms_update(study=priced, user=make_user("r3", role="researcher"), reward=D("1"))
    with pytest.raises(ValidationError) as err:
        pay_terms_update(study=priced, user=priced.admin, reward=D("-1"), estimated_minutes=9)
    assert "reward" in err.value.message_dict
    client.force_login(priced.admin)
    r = client.post(url, {"reward": "abc"})  # at the field, typed value kept (PayTermsForm)
    shown = r.content.decode()
    assert (
        r.status_code == 400 and 'id="pay-reward-error">&#x27;abc&#x27; is not an amount' in shown
    )
    assert 'value="abc"' in r.content.decode()
    terms = StudyPay.objects.get(study=priced)
    assert (terms.reward, terms.estimated_minutes) == (D("0.80"), 5)
    client.post(url, {"reward": "1.20", "estimated_minutes": "6", "currency": "USD"})
    terms.refresh_from_db()
    assert (terms.reward, terms.estimated_minutes, terms.currency) == (D("1.20"), 6, "USD")


def test_pure_rules():
    assert pay.hourly(D("1.50"), 600) == D("9.00")
    assert pay.hourly(D("1.50"), 0) is None
    assert pay.bonus(
        n_items=3, n_known_correct=2, per_item=D("0.10"), per_known_correct=D("0.25")
    ) == D("0.80")
    assert pay.bonus_total([D("0.10"), D("0.205")]) == D("0.31")  # half-up to the cent
    s = pay.hourly_summary(reward=D("2"), estimated_minutes=0, active_seconds={"x": 0}, floor=None)
    assert (s.median_hourly, s.per_participant, s.below_floor) == (None, {"x": None}, [])


@pytest.mark.parametrize("value", ["abc", "-1", "NaN"])
def test_a_bad_floor_setting_names_the_setting(settings, value):
    from django.core.exceptions import ImproperlyConfigured

    from annotation.selectors.quality import pay_floor

    settings.ANNOTATION_MIN_HOURLY_PAY = value
    with pytest.raises(ImproperlyConfigured, match="ANNOTATION_MIN_HOURLY_PAY"):
        pay_floor()


def test_pay_and_quality_rules_are_pure():
    from annotation import quality
    from tests.support.purity import django_imports

    assert django_imports(pay) == {} and django_imports(quality) == {}
