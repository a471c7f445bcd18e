"""The analyses, judge-validation and How2Score-CI pages render from the demo data in chromium:
a researcher logs in, picks the demo judge in the forms and reads tables and plots."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from annotation.models import Study
from benchmarks.models import Generator
from demo.packs import DEMO_PACK_GENERATOR
from judging.models import JudgeRunItem

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

JUDGE = "paper-published"  # the demo's published verdicts (demo/management/commands/load_demo.py)


@pytest.fixture
def demo(live_server, make_user, tmp_path, monkeypatch):
    monkeypatch.setenv("HOW2REVIEW_VAR_DIR", str(tmp_path))
    call_command("load_demo", stdout=io.StringIO())
    # two generators the demo's published verdicts judge, as checkpoints of one family, so the
    # scaling plot has a line (the demo's pack worked examples add generators no judge scored)
    for step, name in enumerate(("claude-opus-4.5", "gemini-2.5-pro")):
        assert Generator.objects.filter(name=name).exists()
        call_command(
            "generator_checkpoint",
            "--generator",
            name,
            "--family",
            "Demo family",
            "--step",
            str(1000 * (step + 1)),
            stdout=io.StringIO(),
        )
    make_user("rese", role="researcher", password="pw-Test-12345")
    return live_server


def login(page, url):
    page.goto(f"{url}/accounts/login/?next=/judging/analyses/")
    page.fill("input[name=username]", "rese")
    page.fill("input[name=password]", "pw-Test-12345")
    page.locator("form").get_by_role("button").click()
    page.get_by_role("heading", name="The paper's analyses on your data").wait_for()


def test_analyses_pages_render_from_the_demo(demo, page, shots):
    login(page, demo.url)
    page.select_option("select[name=judge]", JUDGE)
    page.get_by_role("button", name="Show").click()
    page.get_by_role("link", name="Difficulty regression", exact=True).first.click()
    page.locator("#difficulty-table").wait_for()
    assert "Overall" in page.locator("#difficulty-table").inner_text()
    page.screenshot(path=str(shots / "analyses-difficulty.png"), full_page=True)

    page.get_by_role("link", name="Breakdowns", exact=True).click()
    page.locator("#breakdown-table").wait_for()
    assert page.locator("svg.plot").count() >= 1
    page.select_option("select[name=by]", "steps")
    page.get_by_role("button", name="Show").click()
    page.locator("#breakdown-table").get_by_text("≤ 6").wait_for()
    page.screenshot(path=str(shots / "analyses-breakdowns.png"), full_page=True)

    page.get_by_role("link", name="Checkpoints", exact=True).click()
    page.locator("#checkpoint-table").wait_for()
    assert "Demo family" in page.locator("#checkpoint-table").inner_text()
    assert page.locator("svg.plot polyline").count() >= 1
    page.screenshot(path=str(shots / "analyses-checkpoints.png"), full_page=True)

    page.get_by_role("link", name="Orderings", exact=True).click()
    # every generator of the demo typed in; the table lists those the judge scored (the
    # scorer-pack examples and the simulated sim-gen-* of demo.replace, which another judge
    # scored, are named as left out)
    names = sorted(
        Generator.objects.exclude(name=DEMO_PACK_GENERATOR).values_list("name", flat=True)
    )
    judged = set(
        JudgeRunItem.objects.filter(
            judgment__judge__name=JUDGE, judgment__parse_failed=False
        ).values_list("generation__generator__name", flat=True)
    )
    assert judged and set(names) - judged  # both kinds are in the demo
    page.fill("textarea[name=column]", "\n".join(f"{n},{i + 5}" for i, n in enumerate(names)))
    page.get_by_role("button", name="Show").click()
    page.locator("#spearman").wait_for()
    assert "Spearman's ρ" in page.locator("#spearman").inner_text()
    assert page.locator("#orderings-table tbody tr").count() == len(judged)
    rows = page.locator("#orderings-table tbody").inner_text()
    assert all(n in rows for n in judged)
    left_out = page.locator("#spearman .muted").inner_text()
    assert all(n in left_out and n not in rows for n in set(names) - judged)
    page.screenshot(path=str(shots / "analyses-orderings.png"), full_page=True)

    csv = page.request.get(f"{demo.url}/judging/analyses/breakdowns/?judge={JUDGE}&format=csv")
    assert csv.ok and csv.text().startswith("generator,group,n,")


def test_validation_and_how2score_ci_render_from_the_demo(demo, page, shots):
    login(page, demo.url)
    study = Study.objects.exclude(items__annotations=None).order_by("pk").first()
    study = study or Study.objects.order_by("pk").first()
    page.goto(f"{demo.url}/judging/compare/validation/")
    page.select_option("select[name=study]", str(study.pk))
    page.select_option("select[name=judge]", JUDGE)
    page.get_by_role("button", name="Show").click()
    page.locator("#validation-table").wait_for()
    assert "always no_failure" in page.locator("#validation-table").inner_text()
    page.screenshot(path=str(shots / "judge-validation.png"), full_page=True)
    page.goto(f"{demo.url}/judging/compare/rankings/?judge={JUDGE}")
    page.locator(".how2score-ci-table").first.wait_for()
    assert "95% CI" in page.locator(".how2score-ci-table").first.inner_text()
    page.screenshot(path=str(shots / "how2score-ci.png"), full_page=True)
