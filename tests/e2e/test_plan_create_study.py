"""From a plan to its study, in chromium: an admin plans a study from a label set, finds the
study form prefilled from the plan (the judge named like the label set's, the plan's n and
interval, the reward at which a human label costs what the plan assumed), is refused an
ambiguous reward at its field, creates the study, and lands on its page; the stored study has
the planned items, places and reward, and its report says why there is no corrected How2Score
yet. The form and the report pass the axe audit."""

from __future__ import annotations

import math
import re
from decimal import Decimal

import pytest
from playwright.sync_api import expect

from annotation.models import Study, StudyItem, StudyPay
from annotation.selectors.prolific_study import draft_defaults
from tests.e2e.test_accessibility import serious_violations
from tests.support.browser_roles import PLACEHOLDER, log_in
from tests.validation.label_sets.scenario import csv_text, rows
from tests.validation.ppi_plan.scenario import scored

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def test_plan_then_create_the_study(live_server, make_user, page, shots, tmp_path):
    world = scored(n=120)
    path = tmp_path / "pilot.csv"
    path.write_text(csv_text(rows()))
    make_user("boss", role="admin")
    log_in(page, live_server.url, "boss")
    page.goto(f"{live_server.url}/judging/compare/label-sets/")
    page.get_by_label("Name").fill("pilot")
    page.get_by_label("Label file (CSV or JSONL)").set_input_files(str(path))
    page.get_by_role("button", name="Upload and compute").click()
    page.get_by_role("link", name="Plan a study from these labels").click()
    page.get_by_label("Cost of one human label").fill("0.90")
    page.get_by_label("Cost of one judge verdict").fill("0.01")
    page.get_by_label("Target value").fill("10")
    page.get_by_role("button", name="Plan").click()

    planned = page.locator("#plan-table tbody tr").first.locator("td").first.inner_text()
    n = int(planned.replace(",", ""))
    form = page.locator("#create-study-form")
    expect(form.get_by_label("Items for people (n)")).to_have_value(str(n))
    expect(form.get_by_label("Target interval: ± this many points")).to_have_value("10.0")
    expect(form.get_by_label("Judge whose scored generations")).to_have_value(
        str(world["judge"].pk)
    )
    expect(form.get_by_label("Reward per submission")).to_have_value("4.50")
    assert serious_violations(page) == []

    form.get_by_label("Study name").fill("Planned from pilot")
    form.get_by_label("Reward per submission").fill("4")
    form.get_by_role("button", name="Create the study").click()
    expect(page.locator("#id_study-reward-error")).to_contain_text("4 has no decimals")
    expect(page.locator("#create-study-form").get_by_label("Study name")).to_have_value(
        "Planned from pilot"
    )
    assert not Study.objects.exists()
    assert serious_violations(page) == []
    page.screenshot(path=str(shots / "plan-create-study.png"), full_page=True)

    page.locator("#create-study-form").get_by_label("Reward per submission").fill("4.50")
    page.locator("#create-study-form").get_by_role("button", name="Create the study").click()
    study = Study.objects.get(name="Planned from pilot")
    expect(page).to_have_url(re.compile(rf"/study/manage/{study.pk}/$"))
    places = math.ceil(n * 3 / 20)
    expect(page.locator("body")).to_contain_text(
        f"created from the plan with {n:,} items and {places:,} places"
    )
    text = page.locator("body").inner_text()
    assert not PLACEHOLDER.search(text), PLACEHOLDER.search(text)

    assert study.items.filter(kind=StudyItem.Kind.REGULAR).count() == n == study.items.count()
    assert study.design["places"] == places == draft_defaults(study=study).places
    assert (study.overlap, study.items_per_participant) == (3, 20)
    pay = StudyPay.objects.get(study=study)
    assert (pay.reward, pay.currency) == (Decimal("4.50"), "GBP")
    assert study.target_half_width == pytest.approx(0.10)
    assert study.design["sampling"] == "uniform" and study.design["plan"]["n"] == n

    # its report says why there is no corrected How2Score yet, without a placeholder
    page.goto(f"{live_server.url}/study/report/{study.pk}/")
    panel = page.locator("#study-interval")
    expect(panel).to_contain_text("No corrected How2Score yet: fewer than 2 labelled items.")
    assert not PLACEHOLDER.search(panel.inner_text())
    assert serious_violations(page) == []
