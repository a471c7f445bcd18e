"""From a fresh demo load, in chromium: the home dashboard's figures and the demo's main pages
say what the demo holds (simulated labels, replayed mining replies, the published verdicts);
what an annotator may not open is not offered to them; a visitor joins the running study from
home. Every page each role reaches is checked by the crawl (``test_demo_crawl.py``)."""

from __future__ import annotations

import re

import pytest

from annotation.models import Participant, Study
from demo.mining import DEMO_BATCH
from demo.studies import SIMULATED_STUDY
from mining.models import MiningBatch
from tests.support.browser_roles import demo_data_problems, load_demo, log_in


@pytest.fixture
def demo(transactional_db, monkeypatch, settings, tmp_path):
    load_demo(settings, tmp_path, monkeypatch)
    return {
        "study": Study.objects.get(name=SIMULATED_STUDY),
        "batch": MiningBatch.objects.get(name=DEMO_BATCH),
    }


def test_the_home_page_and_main_pages_show_the_demo_data(demo, live_server, page):
    base = live_server.url
    study, batch = demo["study"], demo["batch"]
    for role in ("researcher", "admin"):
        page.context.clear_cookies()
        log_in(page, base, role)
        cards = page.locator(".stage-card")
        assert cards.count() == 6, role
        for key in ("mine", "benchmark", "generate", "judge", "annotate", "agree"):
            figure = page.locator(f"#stage-{key} .figure b").inner_text()
            assert figure not in ("", "—"), f"{role} home: stage {key} has no figure"
        assert page.locator("#stage-agree .figure b").inner_text() == "0.603"
        assert page.locator("#stage-mine .figure b").inner_text() == "58.3%"
        # The simulated labels say so where they appear.
        page.goto(f"{base}/study/report/{study.pk}/")
        assert "SIMULATED" in page.locator("#study-description").inner_text()
        assert page.locator("#annotator-table").get_by_text("simulated-1").count() == 1
        # The published verdicts against the simulated humans: the leaderboard opens on that
        # study.
        page.goto(f"{base}/judging/compare/leaderboard/")
        agreement = page.locator("table tbody tr td b").first.inner_text()
        assert re.fullmatch(r"\d+\.\d%", agreement), agreement
        # The mining batch says its replies were replayed.
        page.goto(f"{base}/mining/batches/{batch.pk}/")
        assert "replay" in page.locator("#replay-note").inner_text()
        assert page.locator("#usage-table .badge.replayed").count() == 5


def test_annotator_and_visitor_see_only_what_they_may_open(demo, live_server, page):
    base = live_server.url
    page.goto(base + "/")
    assert page.locator(".stage-card").count() == 0
    assert page.locator("#try-link").count() == 1
    log_in(page, base, "annotator")
    assert page.locator(".stage-card").count() == 0
    nav = page.locator("nav.topnav").inner_text()
    for hidden in ("Datasets", "Studies", "Comparisons", "Mining", "Console"):
        assert hidden not in nav
    for path in ("/data/", "/study/manage/", "/mining/", "/judging/compare/"):
        assert page.goto(base + path).status in (302, 403) or "/accounts/login/" in page.url


def test_a_visitor_joins_the_running_study_from_home(demo, live_server, page, shots):
    base = live_server.url
    page.goto(base + "/")
    page.click("#try-link")
    page.get_by_role("button", name=re.compile("I agree")).click()
    page.get_by_role("button", name=re.compile("I understand")).click()
    page.wait_for_selector("#item-form")
    problems = demo_data_problems(page, "item page", empty_allowed=False)
    assert not problems, problems
    # The paper's interface: goal, L1 and L2 only (resources are off by default), and every
    # L1 and L2 step clicked through before the progress bar is full.
    assert page.locator(".resources").count() == 0
    n_l1 = page.locator(".proc.l1 .step").count()
    n_l2 = page.locator(".proc.l2 .step").count()
    assert n_l1 > 0 and n_l2 > 0
    for box in page.locator(".step").all():
        box.click()
    assert page.locator("#read-count").inner_text().startswith(f"{n_l1 + n_l2}/{n_l1 + n_l2}")
    assert Participant.objects.filter(prolific_pid__startswith="visitor-").count() == 1
    page.screenshot(path=str(shots / "demo-item.png"), full_page=True)
