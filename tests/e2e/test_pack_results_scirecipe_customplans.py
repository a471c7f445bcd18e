"""The SciRecipe and CustomPlans results pages in Debian's chromium: the demo's worked
examples with their tables and plots (CustomPlans: Table 2's bars and Figures 10–12's), an
axe-core audit (WCAG 2.1 A/AA) with no serious or critical violation, no placeholder word, no
page wider than a 1280 px window, and choosing the CustomPlans study with the keyboard alone."""

from __future__ import annotations

import pytest

from demo.customplans_study import customplans_study_ensure
from demo.pack_results import demo_pack_results_ensure
from tests.e2e.test_accessibility import serious_violations
from tests.support.browser_roles import log_in, placeholders, too_wide

pytestmark = pytest.mark.django_db(transaction=True)


def test_scirecipe_and_customplans_pages_pass_axe_and_the_keyboard(
    live_server, page, make_user, shots
):
    demo_pack_results_ensure()
    study = customplans_study_ensure()
    make_user("res", role="researcher")
    base = live_server.url
    log_in(page, base, "res")
    problems = []
    for name, url, plots in (
        ("scirecipe", "/packs/scirecipe/results/", 1),
        ("customplans", "/packs/customplans/results/", 4),
        ("customplans-study", f"/packs/customplans/results/?study={study.pk}", 4),
    ):
        page.goto(base + url)
        assert page.locator("svg.plot").count() >= plots, name
        assert page.get_by_text("Worked examples").count() >= 1, name
        problems += [f"{name}: {v}" for v in serious_violations(page)]
        problems += [f"{name}: placeholder {t!r}" for t in placeholders(page)]
        page.set_viewport_size({"width": 1280, "height": 900})
        if too_wide(page):
            problems.append(f"{name}: {too_wide(page)} px wide at 1280")
        page.screenshot(path=str(shots / f"pack-results-{name}.png"), full_page=True)
    assert not problems, "\n".join(problems)

    # keyboard: reach the study chooser with Tab, pick the study, Tab to Show, Enter
    page.goto(f"{base}/packs/customplans/results/")
    chooser = page.locator("#pack-study")
    for _ in range(80):
        if chooser.evaluate("e => e === document.activeElement"):
            break
        page.keyboard.press("Tab")
    else:
        raise AssertionError("the study chooser was never reached with Tab")
    page.keyboard.press("ArrowDown")
    assert chooser.input_value() == str(study.pk)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent").strip() == "Show"
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert f"study={study.pk}" in page.url
    assert page.locator("#table-errors-q2").count() == 1
