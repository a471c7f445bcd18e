"""Accessibility: the main pages pass an axe-core audit (WCAG 2.1 A and AA rules)
with no moderate, serious or critical violation, and the whole item flow works with the keyboard alone,
with labelled fields, landmarks and live regions for the countdown and the save state.

axe-core is the copy shipped inside the ``axe-playwright-python`` package (nothing is fetched
at test time), injected into Debian's chromium."""

from __future__ import annotations

import pytest
from axe_playwright_python.sync_playwright import Axe
from django.urls import reverse

from tests.annotation.factories import make_labelled_study, make_study
from tests.support.browser_roles import log_in

pytestmark = pytest.mark.django_db(transaction=True)

WCAG_21_AA = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]}}
AXE = Axe()


FAILING_IMPACTS = ("moderate", "serious", "critical")  # only "minor" findings are let through


def serious_violations(page) -> list[str]:
    results = AXE.run(page, options=WCAG_21_AA).response
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes']][:3]} {v['help']}"
        for v in results["violations"]
        if v["impact"] in FAILING_IMPACTS
    ]


def audit(page, url: str, problems: list[str]) -> None:
    page.goto(url)
    problems += [f"{url}: {v}" for v in serious_violations(page)]


@pytest.fixture
def site(make_user):
    make_user("res", role="researcher")
    make_user("adm", role="admin")
    labelled = make_labelled_study()
    flow = make_study(n_items=2, items_per_participant=1, min_seconds_per_item=0)
    return {"labelled": labelled, "flow": flow}


def enter_url(base: str, study, pid: str) -> str:
    path = reverse("annotation:enter", args=[study.slug])
    return f"{base}{path}?PROLIFIC_PID={pid}&STUDY_ID=S1&SESSION_ID=X-{pid}"


def test_the_main_pages_pass_axe(site, live_server, page):
    base, problems = live_server.url, []
    audit(page, base + "/", problems)
    # the participant's pages: consent, codebook, the item page and its failure form
    audit(page, enter_url(base, site["flow"], "axe-1"), problems)
    page.get_by_role("button", name="I agree").click()
    page.wait_for_load_state()
    problems += [f"codebook: {v}" for v in serious_violations(page)]
    page.get_by_role("button", name="I understand").click()
    page.wait_for_selector("#item-form")
    problems += [f"item page: {v}" for v in serious_violations(page)]
    page.locator("input[name=choice][value=failure]").check()
    problems += [f"item page, failure form: {v}" for v in serious_violations(page)]
    # the researcher's pages
    study = site["labelled"]
    log_in(page, base, "res")
    for path in (
        "/",
        f"/study/report/{study.pk}/",
        f"/study/report/{study.pk}/adjudicate/",
        "/study/manage/",
        "/study/manage/new/",
        "/study/codebook-versions/",
        "/judging/compare/validation/prompt-versions/",
        "/judging/compare/validation/",
        "/data/",
    ):
        audit(page, base + path, problems)
    item = study.items.filter(kind="regular").first()
    audit(page, f"{base}/study/report/{study.pk}/adjudicate/{item.pk}/", problems)
    # the admin's console lists and forms
    page.context.clear_cookies()
    log_in(page, base, "adm")
    for path in (
        "/mining/new/",
        "/admin/",
        "/admin/annotation/study/",
        f"/admin/annotation/study/{study.pk}/change/",
        "/admin/judging/judgerun/",
        "/admin/judging/judgerun/launch/",
        "/admin/mining/miningbatch/",
    ):
        audit(page, base + path, problems)
    assert not problems, "\n".join(problems)


FOCUSED_NAME_JS = """() => { const e = document.activeElement;
  if (!e || e === document.body) return '';
  const label = e.labels && e.labels[0] ? e.labels[0].innerText : '';
  return [e.innerText, e.value, label, e.getAttribute('aria-label')].join(' '); }"""


def tab_to(page, name: str, limit: int = 80) -> None:
    """Press Tab until the focused element's text, label or value contains ``name`` (the
    element focused already counts, e.g. an autofocused button)."""
    for _ in range(limit):
        if name in page.evaluate(FOCUSED_NAME_JS):
            return
        page.keyboard.press("Tab")
    raise AssertionError(f"{name!r} was never reached with the Tab key")


def test_the_item_flow_with_the_keyboard_alone(site, live_server, page):
    study, base = site["flow"], live_server.url
    page.goto(enter_url(base, study, "keys-1"))
    assert page.locator("main").count() == 1  # a main landmark
    tab_to(page, "I agree")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{reverse('annotation:training', args=[study.slug])}")
    tab_to(page, "I understand", limit=200)
    page.keyboard.press("Enter")
    page.wait_for_selector("#item-form")
    # the live regions a screen reader hears: the save state and the countdown's end
    assert page.locator("#save-status[aria-live=polite]").count() == 1
    assert page.locator("#timer-status[aria-live=polite]").count() == 1
    assert page.locator("#timer[role=timer]").count() == 1
    tab_to(page, "read the goal")
    page.keyboard.press("Space")
    assert page.locator("#goal-ack").is_checked()
    steps = page.locator("input.step-check")
    for _ in range(steps.count()):  # every step chip, in order, by Tab and Space
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.classList.contains('step-check')")
        page.keyboard.press("Space")
    assert all(box.is_checked() for box in steps.all())
    tab_to(page, "No critical failures")
    page.keyboard.press("Space")
    assert page.locator("input[name=choice][value=none]").is_checked()
    tab_to(page, "Submit")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{reverse('annotation:done', args=[study.slug])}")
    assert page.locator("#completion-code").inner_text() == study.completion_code


def test_a_failure_is_marked_with_the_keyboard_alone(site, live_server, page):
    """Critical failures chosen with the arrow keys, the failure described by typing and linked
    to an L1 and an L2 step by Tab and Space, then submitted: stored as entered."""
    from annotation.models import Annotation

    study, base = site["flow"], live_server.url
    page.goto(enter_url(base, study, "keys-2"))
    tab_to(page, "I agree")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{reverse('annotation:training', args=[study.slug])}")
    tab_to(page, "I understand", limit=200)
    page.keyboard.press("Enter")
    page.wait_for_selector("#item-form")
    tab_to(page, "read the goal")
    page.keyboard.press("Space")
    for _ in range(page.locator("input.step-check").count()):
        page.keyboard.press("Tab")
        page.keyboard.press("Space")
    tab_to(page, "No critical failures")
    page.keyboard.press("ArrowDown")  # the radio group's next choice
    assert page.locator("input[name=choice][value=failure]").is_checked()
    tab_to(page, "Description of failure 1")
    page.keyboard.type("L2 skips the soaking, so the beans stay hard")
    tab_to(page, "L1.1")
    page.keyboard.press("Space")
    tab_to(page, "L2.2")
    page.keyboard.press("Space")
    tab_to(page, "Submit")
    page.keyboard.press("Enter")
    page.wait_for_url(f"**{reverse('annotation:done', args=[study.slug])}")
    annotation = Annotation.objects.get(participant__prolific_pid="keys-2")
    assert annotation.has_failure
    assert annotation.failures == [
        {
            "description": "L2 skips the soaking, so the beans stay hard",
            "l1_steps": [1],
            "l2_steps": [2],
        }
    ]


def test_the_audit_fails_on_a_moderate_finding(page):
    """A moderate WCAG finding (here ``html-xml-lang-mismatch``, WCAG 2 A) fails the audit, as
    serious and critical ones do; only minor findings pass."""
    page.set_content(
        '<html lang="en" xml:lang="fr"><head><title>t</title></head>'
        "<body><main><h1>A page</h1></main></body></html>"
    )
    found = serious_violations(page)
    assert any(v.startswith("html-xml-lang-mismatch (moderate)") for v in found), found
