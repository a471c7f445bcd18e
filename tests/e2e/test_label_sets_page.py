"""Bring your own labels, in chromium: a researcher goes from the home page to "Your labels"
(two clicks), uploads one file — 3 annotators × 60 items, a judge on 600 items, two models —
and reads on the next page the alt-test sentence, a corrected How2Score per model with its
interval and forest plot, and α / κ / AC1, each equal to what the commands print for the same
file. A refused file comes back as a message at the file field, the name typed kept, nothing
stored. Both pages pass the axe audit."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from playwright.sync_api import expect

from tests.e2e.test_accessibility import serious_violations
from tests.support.browser_roles import PLACEHOLDER, USER_PASSWORD
from tests.validation.label_sets.scenario import csv_text, rows
from validation.models import LabelSet

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]


def _command(*args) -> dict:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return json.loads(out.getvalue())


def test_upload_a_label_file_and_read_the_answers(live_server, make_user, page, shots, tmp_path):
    path = tmp_path / "my-labels.csv"
    path.write_text(csv_text(rows()))
    alt = _command("alt_test", "--labels", str(path), "--format", "json")["my-judge"]
    ppi = _command("how2score_ppi", "--labels", str(path), "--format", "json")
    agreement = _command("agreement_report", "--labels", str(path), "--format", "json")

    make_user("rese", role="researcher")
    page.goto(f"{live_server.url}/accounts/login/")
    page.fill("input[name=username]", "rese")
    page.fill("input[name=password]", USER_PASSWORD)
    page.locator("form").get_by_role("button").click()
    page.goto(f"{live_server.url}/")
    page.get_by_role("link", name="Comparisons").first.click()  # click 1
    page.get_by_role("link", name="Your labels").click()  # click 2
    expect(page.get_by_role("heading", name="Your labels", level=1)).to_be_visible()

    # a refused file: the message at the file field, the name kept, nothing stored
    bad = tmp_path / "bad.csv"
    bad.write_text("item_id,source,kind,label\na,x,robot,1\n")
    page.get_by_label("Name").fill("pilot")
    page.get_by_label("Label file (CSV or JSONL)").set_input_files(str(bad))
    page.get_by_role("button", name="Upload and compute").click()
    expect(page.locator("#id_file-error")).to_contain_text(
        "bad.csv: line 2, column 'kind': unknown kind 'robot'"
    )
    expect(page.get_by_label("Name")).to_have_value("pilot")
    assert not LabelSet.objects.exists()
    assert serious_violations(page) == []

    page.get_by_label("Label file (CSV or JSONL)").set_input_files(str(path))
    page.get_by_role("button", name="Upload and compute").click()  # click 3
    expect(page.get_by_role("heading", name="Label set pilot", level=1)).to_be_visible()
    sentence = page.locator("#alt-test-sentence")
    expect(sentence).to_contain_text(
        f"my-judge may not replace the annotators: it won against 0 of 3 annotators (winning "
        f"rate ω = {alt['winning_rate']:.2f} < 0.5) on {alt['n_items']} items, with an advantage "
        f"probability ρ = {alt['advantage_probability']:.2f}."
    )
    expect(sentence).to_contain_text("ε = 0.1 (the alt-test paper's value for crowd workers)")
    for group in ("model-a", "model-b"):
        g = ppi["groups"][group]
        row = page.locator(f"#ppi-table tr[data-group='{group}']")
        expect(row.locator(".ppi-score")).to_have_text(f"{100 * g['how2score']:.1f}%")
        expect(row.locator(".ppi-ci")).to_have_text(
            f"{100 * g['ci'][0]:.1f}–{100 * g['ci'][1]:.1f}%"
        )
        block = page.locator(f".ppi-group[data-group='{group}']")
        expect(block.locator(".ppi-sentence")).to_contain_text(
            f"{group}'s How2Score judged by my-judge is {100 * g['how2score']:.1f}%"
        )
        expect(block.locator(".ppi-forest svg")).to_be_visible()
    table = page.locator("#agreement-table")
    for key, stat in (
        ("alpha", agreement["alpha"]),
        ("kappa", agreement["cohen_kappa"]["mean"]),
        ("ac1", agreement["gwet_ac1"]),
    ):
        expect(table.locator(f"tr[data-stat='{key}'] .stat-value")).to_have_text(
            f"{stat['value']:.3f}"
        )
    expect(page.locator("#disagreements-table tbody tr").first).to_be_visible()
    text = page.locator("body").inner_text()
    assert not PLACEHOLDER.search(text), PLACEHOLDER.search(text)
    assert "(Ρ)" not in text  # Greek letters keep their case
    assert serious_violations(page) == []
    page.screenshot(path=str(shots / "label-set-page.png"), full_page=True)
    assert LabelSet.objects.get().name == "pilot"
