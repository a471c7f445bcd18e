"""The pack results pages in Debian's chromium: the demo's worked examples shown with their
tables and plots, an axe-core audit (WCAG 2.1 A/AA) with no serious or critical violation, no
placeholder word, and choosing one scoring run with the keyboard alone."""

from __future__ import annotations

import pytest

from benchmarks.models import ScoringRun
from demo.pack_results import demo_pack_results_ensure
from tests.e2e.test_accessibility import serious_violations
from tests.support.browser_roles import log_in, placeholders

pytestmark = pytest.mark.django_db(transaction=True)


def test_pack_results_pages_pass_axe_and_work_with_the_keyboard(
    live_server, page, make_user, shots
):
    demo_pack_results_ensure()
    make_user("res", role="researcher")
    base = live_server.url
    log_in(page, base, "res")
    problems = []
    for pack in ("procbench", "longproc"):
        page.goto(f"{base}/packs/{pack}/results/")
        assert page.locator("svg.plot").count() >= 2
        assert page.get_by_text("Worked examples").count() >= 1
        problems += [f"{pack}: {v}" for v in serious_violations(page)]
        problems += [f"{pack}: placeholder {t!r}" for t in placeholders(page)]
        page.screenshot(path=str(shots / f"pack-results-{pack}.png"), full_page=True)
    page.goto(f"{base}/packs/")
    problems += [f"index: {v}" for v in serious_violations(page)]
    assert not problems, "\n".join(problems)

    # keyboard: tick the gold-reference ProcBench run, then press Show
    run = ScoringRun.objects.get(pack="procbench", generator__name="gold-reference")
    page.goto(f"{base}/packs/procbench/results/")
    box = page.locator(f"input[name=run][value='{run.pk}']")
    for _ in range(60):
        if box.evaluate("e => e === document.activeElement"):
            break
        page.keyboard.press("Tab")
    else:
        raise AssertionError("the run's checkbox was never reached with Tab")
    page.keyboard.press("Space")
    page.keyboard.press("Tab")  # the next checkbox or the Show button
    while page.evaluate("document.activeElement.type") == "checkbox":
        page.keyboard.press("Tab")
    with page.expect_navigation():
        page.keyboard.press("Enter")
    assert f"run={run.pk}" in page.url
    rows = page.locator("#table-bins-pa tbody tr")
    assert rows.count() == 1 and "gold-reference" in rows.first.inner_text()
